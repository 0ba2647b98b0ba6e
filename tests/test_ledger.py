"""The budget ledger across releases (``pipelines.ledger``, ``privacy.ledger``; ``docs/accounting.md``): the
configuration key, composition per budget kind with exact cap arithmetic, the statuses that count, continuing a
release, two launches racing for the last of a cap (exactly one wins), the ``list`` CLI and the demo run twice
with a cap of 1.5 times its budget (the second refused before any data is read). Every store test runs on
SQLite and on PostgreSQL: the server ``.ci/run`` starts (``DP_DYNAMIC_POSTGRES_URL``), else one this module starts
(``pipelines.ledger.server``), else those tests skip naming the package."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import uuid
from decimal import Decimal as D
from pathlib import Path

import pytest
import yaml

from pipelines.config import ConfigError, parse_config
from pipelines.config.schema import json_schema
from pipelines.ledger import (
    LaunchEntry,
    LedgerRefused,
    NewRelease,
    check_no_ledger,
    new_release,
    open_store,
    redact,
    register_release,
    status_for,
)
from pipelines.ledger import server as pg_server
from pipelines.ledger.compose import compose, exceeds
from pipelines.manifest import release_identity

ROOT = Path(__file__).resolve().parent.parent
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
LEDGER = {"url": "sqlite:///ledger.db", "dataset": "flights", "cap": {"epsilon": 3.0}}


def _with_ledger(ledger=LEDGER, **privacy):
    raw = copy.deepcopy(DEMO)
    raw["privacy"] = {**raw["privacy"], **privacy, "ledger": copy.deepcopy(ledger)}
    if "rho" in privacy:
        raw["privacy"].pop("epsilon")
        raw["privacy"].pop("delta")
    return raw


# -- the configuration key ------------------------------------------------------------------------------------


def test_ledger_key_is_checked_like_every_key():
    cfg = parse_config(_with_ledger())
    assert cfg.privacy.ledger.dataset == "flights" and cfg.privacy.ledger.cap.epsilon == 3.0
    bad = [
        (
            {**LEDGER, "datset": "x"},
            "privacy.ledger: unknown key(s) datset; allowed: cap, dataset, url (did you mean dataset?)",
        ),
        ({**LEDGER, "url": "sqlte:///x.db"}, "privacy.ledger.url: must start with one of sqlite:///"),
        ({**LEDGER, "dataset": "a b"}, "privacy.ledger.dataset: must be 1 to 128 letters"),
        ({k: v for k, v in LEDGER.items() if k != "cap"}, "privacy.ledger.cap: missing (required)"),
        (
            {**LEDGER, "cap": {"rho": 0.5}},
            "privacy.ledger.cap: must be {epsilon}, in the terms of the configured budget",
        ),
        ({**LEDGER, "cap": {"epsilon": -1}}, "privacy.ledger.cap.epsilon: must be > 0"),
    ]
    for ledger, message in bad:
        with pytest.raises(ConfigError) as e:
            parse_config(_with_ledger(ledger))
        assert str(e.value).startswith(message), str(e.value)
    with pytest.raises(ConfigError, match=r"privacy.ledger.cap: must be \{epsilon, delta\}"):
        parse_config(_with_ledger(delta=1e-6))
    with pytest.raises(ConfigError, match=r"privacy.ledger.cap: must be \{rho\}"):
        parse_config(_with_ledger(rho=0.5))
    assert parse_config(_with_ledger({**LEDGER, "cap": {"rho": 2.0}}, rho=0.5)).privacy.ledger.cap.rho == 2.0
    raw = copy.deepcopy(DEMO)
    raw["privacy"]["ledgr"] = LEDGER
    with pytest.raises(ConfigError, match=r"privacy: unknown key\(s\) ledgr; .* \(did you mean ledger\?\)"):
        parse_config(raw)
    # the schema an editor validates with knows the key
    privacy = json_schema()["$defs"]["PrivacyConfig"]["properties"]
    assert "ledger" in privacy


def test_the_ledger_changes_no_release_digest():
    """A ledger records a release; it does not define it: the digest (which keys the noise) is unchanged."""
    assert parse_config(_with_ledger()).release_digest() == parse_config(copy.deepcopy(DEMO)).release_digest()


def test_the_budget_charged_is_the_per_stream_budget():
    """Streams are disjoint partitions of the data (parallel composition): a release spends the configured
    per-stream budget on the dataset, not the sum over its streams."""
    cfg = parse_config(_with_ledger(delta=1e-6, ledger={**LEDGER, "cap": {"epsilon": 3.0, "delta": 1e-5}}))
    assert len(cfg.streams) == 2
    new = new_release(cfg, release_identity(cfg))
    assert (new.kind, new.budget, new.cap) == (
        "approx",
        {"epsilon": D("1.0"), "delta": D("1e-06")},
        {"epsilon": D("3.0"), "delta": D("0.00001")},
    )
    assert new.atomic and new.unit == "update"


def test_local_dp_refuses_a_ledger():
    raw = yaml.safe_load((ROOT / "configs" / "local_dp.yaml").read_text())
    raw["source"]["path"] = str(ROOT / "configs" / raw["source"]["path"])
    cfg = parse_config(raw)
    check_no_ledger(cfg)  # no ledger: nothing to say
    raw["privacy"]["ledger"] = LEDGER
    with pytest.raises(ConfigError, match="privacy.ledger: not applicable to a local-DP collector"):
        check_no_ledger(parse_config(raw))


# -- composition and statuses, without a store ---------------------------------------------------------------


def test_composition_is_exact_per_kind():
    assert compose("pure", [{"epsilon": D("0.1")}] * 3) == {"epsilon": D("0.3")}
    assert not exceeds(compose("pure", [{"epsilon": D("0.1")}] * 3), {"epsilon": D("0.3")})
    assert 0.1 + 0.1 + 0.1 > 0.3  # what float arithmetic would have refused
    total = compose("approx", [{"epsilon": D("0.5"), "delta": D("1e-7")}] * 2)
    assert total == {"epsilon": D("1.0"), "delta": D("2e-7")}
    assert exceeds(total, {"epsilon": D("5"), "delta": D("1e-7")})  # delta alone over
    assert compose("zcdp", [{"rho": D("0.125")}, {"rho": D("0.375")}]) == {"rho": D("0.5")}


def test_status_of_an_exit():
    bounded = dict(streaming=False, local=True)
    assert [status_for(c, **bounded) for c in (0, 3, 1, 2, 130)] == [
        "completed",
        "completed",
        "failed",
        "failed",
        "cancelled",
    ]
    assert status_for(0, streaming=True, local=True) == "stopped"
    assert status_for(0, streaming=True, local=False) == "submitted"
    assert status_for(1, streaming=True, local=True) == "failed"
    entry = LaunchEntry()
    with pytest.raises(KeyboardInterrupt), entry:
        raise KeyboardInterrupt
    assert entry.status == "cancelled"


def test_redact():
    assert redact("postgresql://ann:s3cret@db.example:5433/ledger") == "postgresql://ann:***@db.example:5433/ledger"
    assert redact("postgresql://ann@db/ledger") == "postgresql://ann@db/ledger"
    assert redact("sqlite:////tmp/x.db") == "sqlite:////tmp/x.db"


# -- the stores -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def postgres_url():
    """The PostgreSQL server of ``.ci/run`` (``DP_DYNAMIC_POSTGRES_URL``), or one started here."""
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'dp-dynamic[postgres]')")
    url = os.environ.get("DP_DYNAMIC_POSTGRES_URL")
    if url:
        yield url
        return
    try:
        folder, url = pg_server.start()
    except RuntimeError as e:
        pytest.skip(f"no PostgreSQL server: {e}")
    try:
        yield url
    finally:
        pg_server.stop(folder)


# the PostgreSQL variants start a server (a subprocess): the full tier; the SQLite ones stay in the fast tier
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.pipeline)])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.db"
    return request.getfixturevalue("postgres_url")


def _new(dataset, rid, budget, cap, kind="pure", digest="d1", atomic=True, unit="update"):
    fields = {"pure": ("epsilon",), "approx": ("epsilon", "delta"), "zcdp": ("rho",)}[kind]
    amount = lambda v: dict(zip(fields, (D(str(x)) for x in (v if isinstance(v, tuple) else (v,))), strict=True))  # noqa: E731
    return NewRelease(dataset, rid, digest, unit, kind, amount(budget), amount(cap), atomic)


def _dataset() -> str:
    return f"ds-{uuid.uuid4().hex[:12]}"  # a dataset of its own on a shared server


def test_register_refuse_complete(url):
    store, ds = open_store(url), _dataset()
    first = store.register(_new(ds, "release-1", 1.0, 1.5))
    assert first.charged == {"epsilon": D("1.0")} and first.spent == {"epsilon": D(0)}
    with pytest.raises(LedgerRefused) as e:
        store.register(_new(ds, "release-2", 1.0, 1.5))
    message = str(e.value)
    assert "\n" not in message
    for part in ("has spent epsilon=1", "asks epsilon=1", "the cap is epsilon=1.5", f"(ledger {redact(url)})"):
        assert part in message, message
    (only,) = store.releases(ds)  # the refusal changed nothing
    assert (only.release_id, only.status, only.counted, only.runs, only.ended) == (
        "release-1",
        "running",
        True,
        1,
        None,
    )
    store.finish(first, "completed")
    (only,) = store.releases(ds)
    assert (only.status, only.counted) == ("completed", True) and only.ended is not None
    assert store.register(_new(ds, "release-3", 0.5, 1.5)).charged == {"epsilon": D("0.5")}  # exactly the cap


@pytest.mark.parametrize(
    "kind, budget, cap, fits",
    [
        ("pure", 0.1, 0.3, 3),  # 0.1 + 0.1 + 0.1 is 0.3 exactly, not 0.30000000000000004
        ("zcdp", 0.1, 0.3, 3),
        ("approx", (0.5, 1e-7), (2.0, 3e-7), 3),  # delta runs out first
        ("approx", (0.7, 1e-9), (2.1, 1e-6), 3),  # epsilon runs out first
    ],
)
def test_cap_arithmetic_per_kind(url, kind, budget, cap, fits):
    store, ds = open_store(url), _dataset()
    for i in range(fits):
        store.register(_new(ds, f"release-{i}", budget, cap, kind))
    with pytest.raises(LedgerRefused, match="would exceed the cap"):
        store.register(_new(ds, "one-too-many", budget, cap, kind))
    assert len(store.releases(ds)) == fits


def test_what_counts(url):
    """A bounded run with atomic outputs that failed or was cancelled published nothing: uncounted. A run whose
    outputs are published as they go (a topic sink, a streaming run) counts whatever its end."""
    store, ds = open_store(url), _dataset()
    for status in ("failed", "cancelled"):
        store.finish(store.register(_new(ds, f"atomic-{status}", 1.0, 1.0)), status)
    assert [r.counted for r in store.releases(ds)] == [False, False]
    held = store.register(_new(ds, "not-atomic", 1.0, 1.0, atomic=False))
    store.finish(held, "failed")
    assert {r.release_id: r.counted for r in store.releases(ds)}["not-atomic"]
    with pytest.raises(LedgerRefused):  # the failed run that could have published holds the cap
        store.register(_new(ds, "next", 0.5, 1.0))
    for status in ("stopped", "submitted", "completed"):
        other = _dataset()
        store.finish(store.register(_new(other, "r-00000001", 1.0, 1.0)), status)
        assert store.releases(other)[0].counted and store.releases(other)[0].status == status


def test_continuing_a_release(url):
    store, ds = open_store(url), _dataset()
    first = store.register(_new(ds, "release-a", 1.0, 1.0))
    store.finish(first, "completed")
    again = store.register(_new(ds, "release-a", 1.0, 1.0))  # the cap is full: continuing charges nothing
    assert again.continued and again.prior_counted and again.charged == {"epsilon": D(0)}
    store.finish(again, "failed")  # a failed continuation does not uncount what the first run published
    (r,) = store.releases(ds)
    assert (r.status, r.counted, r.runs) == ("failed", True, 2)
    with pytest.raises(LedgerRefused, match="privacy.release_id: release release-a .* another configuration"):
        store.register(_new(ds, "release-a", 1.0, 1.0, digest="d2"))
    # a release that published nothing charges its budget when it runs again
    ds2 = _dataset()
    store.finish(store.register(_new(ds2, "release-b", 1.0, 1.0)), "cancelled")
    rerun = store.register(_new(ds2, "release-b", 1.0, 1.0))
    assert rerun.continued and not rerun.prior_counted and rerun.charged == {"epsilon": D("1.0")}
    # a release the ledger has not seen (an --update of a job it never registered, say) meets the cap
    with pytest.raises(LedgerRefused, match="privacy.ledger.cap: refused"):
        store.register(_new(ds2, "release-c", 1.0, 1.0))
    assert len(store.releases(ds2)) == 1


def test_a_dataset_keeps_one_unit_and_kind(url):
    store, ds = open_store(url), _dataset()
    store.register(_new(ds, "release-1", 0.1, 3.0))
    with pytest.raises(LedgerRefused, match="budget kind pure; this release has unit 'update' and kind zcdp"):
        store.register(_new(ds, "release-2", 0.1, 3.0, kind="zcdp"))
    with pytest.raises(LedgerRefused, match="privacy unit 'update' .* do not add up"):
        store.register(_new(ds, "release-3", 0.1, 3.0, unit="entry, at most 2 mutations"))


def test_two_launches_racing_for_the_last_of_the_cap(url):
    """Both launches wait at a barrier once they have read the spend, inside their transactions: without the
    lock both would read 1.0 of 1.5 and both register 0.5 + 0.5. With it the second cannot read until the first
    commits (the barrier then times out, as it must: only one can be there), and reads 1.5: exactly one wins,
    the other is refused over the cap."""
    store, ds = open_store(url), _dataset()
    store.register(_new(ds, "release-0", 1.0, 1.5))
    barrier = threading.Barrier(2, timeout=3)
    outcomes = {}

    def checked(spent):
        try:
            barrier.wait()
        except threading.BrokenBarrierError:
            pass

    def launch(name):
        try:
            open_store(url).register(_new(ds, name, 0.5, 1.5), checked=checked)
            outcomes[name] = "registered"
        except LedgerRefused as e:
            outcomes[name] = "refused" if "would exceed the cap" in str(e) else repr(e)
        except Exception as e:  # noqa: BLE001 - any other end is a failure of the test, said below
            outcomes[name] = repr(e)

    threads = [threading.Thread(target=launch, args=(f"racer-{i}",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes.values()) == ["refused", "registered"], outcomes
    assert len(store.releases(ds)) == 2


def test_the_schema_is_created_once_and_versioned(url, tmp_path):
    store = open_store(url)
    store.register(_new(_dataset(), "release-1", 0.1, 1.0))
    assert open_store(url).datasets()  # a second store finds the schema there
    if url.startswith("sqlite"):  # a ledger written by a newer schema is refused, not misread
        import sqlite3

        with sqlite3.connect(url[len("sqlite:///") :]) as db:
            db.execute("UPDATE dp_ledger_meta SET value = '2' WHERE key = 'schema_version'")
        with pytest.raises(LedgerRefused, match="has schema version 2; this version of dp-dynamic reads version 1"):
            open_store(url).datasets()


def test_list_cli(url):
    store, ds = open_store(url), _dataset()
    store.finish(store.register(_new(ds, "release-done", 1.0, 2.5)), "completed")
    store.finish(store.register(_new(ds, "release-lost", 1.0, 2.5)), "cancelled")
    store.register(_new(ds, "release-live", 0.25, 2.5))
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "pipelines.ledger", "list", "--url", url, "--dataset", ds],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    lines = {line.split()[0]: line.split() for line in out.stdout.splitlines() if line.startswith("release-")}
    assert lines["release-done"][1:3] == ["completed", "yes"]
    assert lines["release-lost"][1:3] == ["cancelled", "no"]
    assert lines["release-live"][1:4] == ["running", "yes", "epsilon=0.25"]
    assert out.stdout.splitlines()[-1] == "spent epsilon=1.25 of cap epsilon=2.5; left epsilon=1.25"
    show = subprocess.run(
        [
            sys.executable,
            "-W",
            "ignore",
            "-m",
            "pipelines.ledger",
            "show",
            "--url",
            url,
            "--dataset",
            ds,
            "release-lost",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert show.returncode == 0, show.stderr
    assert "status:         cancelled" in show.stdout and "counted:        no" in show.stdout
    assert "outputs:        atomic (published at completion)" in show.stdout
    missing = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "pipelines.ledger", "list", "--url", "sqlite:////nonexistent/l.db"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert missing.returncode == 2 and "no ledger at sqlite:////nonexistent/l.db" in missing.stderr


def test_the_launch_registers_through_the_configuration(url, tmp_path):
    """``register_release`` as the CLI calls it: the configured budget, refused past the cap with a ConfigError
    (exit 2), the status recorded from the exit."""
    dataset = _dataset()
    raw = _with_ledger({"url": url, "dataset": dataset, "cap": {"epsilon": 1.5}})
    cfg = parse_config(raw)
    with register_release(cfg, release_identity(cfg), local=True) as entry:
        assert entry.finish(0) == 0
    with pytest.raises(ConfigError, match="has spent epsilon=1, this release asks epsilon=1"):
        register_release(cfg, release_identity(cfg), local=True)
    (r,) = open_store(url).releases(dataset)
    assert (r.status, r.counted, r.budget) == ("completed", True, {"epsilon": D("1.0")})


# -- the "done when": the demo, twice ---------------------------------------------------------------


def test_a_second_demo_run_over_the_cap_is_refused_before_reading_data(tmp_path):
    raw = copy.deepcopy(DEMO)
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    raw["sinks"] = [{**raw["sinks"][0], "path": f"{tmp_path}/out/"}]
    url = f"sqlite:///{tmp_path}/ledger.db"
    raw["privacy"]["ledger"] = {"url": url, "dataset": "demo", "cap": {"epsilon": 1.5 * raw["privacy"]["epsilon"]}}
    config = tmp_path / "demo.yaml"
    config.write_text(yaml.safe_dump(raw))
    command = [sys.executable, "-W", "ignore", "-m", "pipelines.release", "--config", str(config)]
    env = {**os.environ, "DP_NOISE_KEY": "ab" * 32}
    first = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert first.returncode == 0, first.stderr[-2000:]
    written = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".db"}
    manifest = json.loads((tmp_path / "out-confidential" / "release_manifest.json").read_text())

    # --overwrite: the folder check (another release's outputs) would refuse it first; the ledger must refuse it
    second = subprocess.run([*command, "--overwrite"], capture_output=True, text=True, cwd=ROOT, env=env, check=False)
    assert second.returncode == 2
    (line,) = second.stderr.splitlines()
    assert line == (
        "configuration error: privacy.ledger.cap: refused: the dataset 'demo' has spent epsilon=1, this release "
        f"asks epsilon=1 and the cap is epsilon=1.5: together epsilon=2 would exceed the cap (ledger {url})"
    )
    assert "release id:" not in second.stderr and not second.stdout  # refused before the pipeline was built
    assert {p: p.stat().st_mtime_ns for p in written} == written  # nothing written, the earlier outputs intact
    (release,) = open_store(url).releases("demo")
    assert (release.release_id, release.status, release.counted) == (manifest["release_id"], "completed", True)
