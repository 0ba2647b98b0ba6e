"""Outputs that name their release (issue 29, item 4): every record carries ``release_id``; a folder holding
another release's outputs is refused unless ``--overwrite``; a bounded run's file outputs appear only when it
completes (hidden staging folders moved in at the end), so a failed or cancelled run (Ctrl-C: exit 130, one line)
leaves the folders exactly as they were; the demo run's stderr has no warning."""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import fastavro
import pytest
import yaml

from pipelines.io.files import schema
from pipelines.io.staging import Staging, outputs_in, staging_folder
from pipelines.manifest import check_folders, release_identity
from pipelines.model import ConfigError
from pipelines.runner import STATUSES, Run

ROOT = Path(__file__).resolve().parent.parent
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
KEY = "11" * 32


def _snapshot(*folders: Path) -> dict:
    """Every file under the folders (and whether each exists), with its bytes: what 'as it was' means."""
    out = {}
    for folder in folders:
        out[str(folder)] = folder.exists()
        for f in sorted(folder.rglob("*")) if folder.exists() else ():
            out[str(f)] = f.read_bytes() if f.is_file() else "dir"
    return out


def _hidden(parent: Path) -> list[str]:
    return sorted(n for n in os.listdir(parent) if n.startswith("."))


# --- the staging folders, without a pipeline ---------------------------------------------------------------------


def test_staging_commit_replaces_outputs_and_keeps_other_files(tmp_path):
    final = tmp_path / "out"
    final.mkdir()
    (final / "releases-00000-of-00002.jsonl").write_text("old\n")
    (final / "releases-00001-of-00002.jsonl").write_text("old\n")
    (final / "README.txt").write_text("the operator's own file\n")
    staged = Path(staging_folder(str(final) + "/", "t1"))
    assert staged.parent == tmp_path and staged.name.startswith(".out.partial-")
    staged.mkdir()
    (staged / "releases-00000-of-00001.jsonl").write_text("new\n")
    Staging([(str(staged), str(final) + "/")]).commit()
    assert sorted(os.listdir(final)) == ["README.txt", "releases-00000-of-00001.jsonl"]
    assert (final / "releases-00000-of-00001.jsonl").read_text() == "new\n"
    assert _hidden(tmp_path) == []


def test_staging_commit_into_a_missing_or_empty_folder_and_discard(tmp_path):
    for name, make in (("missing", False), ("empty", True)):
        final = tmp_path / name
        if make:
            final.mkdir()
        staged = Path(staging_folder(str(final), "t"))
        staged.mkdir()
        (staged / "nodes-00000-of-00001.jsonl").write_text("x\n")
        Staging([(str(staged), str(final))]).commit()
        assert os.listdir(final) == ["nodes-00000-of-00001.jsonl"]
    final = tmp_path / "kept"
    final.mkdir()
    (final / "releases.jsonl").write_text("before\n")
    before = _snapshot(final)
    staged = Path(staging_folder(str(final), "t"))
    (staged / "beam-temp-releases-1").mkdir(parents=True)
    (staged / "releases-00000-of-00001.jsonl").write_text("partial\n")
    st = Staging([(str(staged), str(final))])
    assert st.final_name(str(staged / "releases*.jsonl")) == str(final / "releases*.jsonl")
    st.discard()
    assert _snapshot(final) == before and _hidden(tmp_path) == []


def test_run_status_values():
    """The statuses a caller records (the budget ledger: completed / failed / cancelled)."""
    assert set(STATUSES) == {"done", "failed", "cancelled", "stopped", "submitted"}
    assert Run(object()).status == "done" and not Run(object()).cancelled
    assert Run(exit=1).status == "failed" and Run(submitted=True).status == "submitted"
    assert Run(status="cancelled").cancelled and Run(status="stopped").status == "stopped"


# --- the folder check --------------------------------------------------------------------------------------------


def _cfg(tmp_path, **sink):
    from pipelines.config import parse_config

    raw = copy.deepcopy(DEMO)
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl", **sink}]
    return parse_config(raw)


def test_a_folder_of_another_release_is_refused_unless_overwrite(tmp_path):
    cfg = _cfg(tmp_path)
    release = release_identity(cfg)
    check_folders(cfg, release)  # nothing there yet
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("not an output\n")
    check_folders(cfg, release)  # other files do not count
    (tmp_path / "out" / "releases-00000-of-00001.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"sinks\[0\]\.path: .* another run \(no release manifest\)"):
        check_folders(cfg, release)
    conf = tmp_path / "out-confidential"
    conf.mkdir()
    (conf / "release_manifest.json").write_text(json.dumps({"release_id": "earlier-release"}))
    with pytest.raises(ConfigError, match="release earlier-release .*--overwrite.*--release-id earlier-release"):
        check_folders(cfg, release)
    check_folders(cfg, release, overwrite=True)
    assert outputs_in(str(tmp_path / "out")) == ["releases-00000-of-00001.jsonl"]  # the check removes nothing
    # the same release (a replay or a continuation) is allowed, with the same configuration and input only
    (conf / "release_manifest.json").write_text(
        json.dumps(
            {
                "release_id": release.release_id,
                "config_digest": release.config_digest,
                "input_fingerprint": cfg.source.fingerprint(),
            }
        )
    )
    check_folders(cfg, release)
    (conf / "release_manifest.json").write_text(
        json.dumps({"release_id": release.release_id, "config_digest": "other", "input_fingerprint": "x"})
    )
    with pytest.raises(ConfigError, match="already made with another configuration"):
        check_folders(cfg, release, overwrite=True)


def test_which_sinks_publish_atomically(tmp_path):
    """A local file sink is staged (the budget ledger counts a failed or cancelled bounded run there as
    unpublished); a remote folder is written in place, a topic sink as it goes."""
    local = _cfg(tmp_path).sinks[0]
    staged, pairs = local.staged("t")
    assert local.publishes_atomically and len(pairs) == 2
    assert staged.path == staging_folder(local.path, "t") and staged.confidential_path == pairs[1][0]
    remote = _cfg(tmp_path, path="gs://bucket/out/").sinks[0]
    assert not remote.publishes_atomically and remote.staged("t") == (remote, [])


def test_every_output_schema_has_release_id_with_a_default():
    """A new field with a default: files written with the earlier schemas read with the new one (release_id
    None), and the new records validate."""
    for name in ("release", "node", "dead_letter", "query_answer"):
        new = schema(name)
        field = new["fields"][-1]
        assert field["name"] == "release_id" and field["default"] is None and field["type"] == ["null", "string"]
        old = {**new, "fields": new["fields"][:-1]}
        record = {f["name"]: _example(f["type"]) for f in old["fields"]}
        import io

        buf = io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(old), [record])
        buf.seek(0)
        (back,) = list(fastavro.reader(buf, reader_schema=fastavro.parse_schema(new)))
        assert back["release_id"] is None
        assert fastavro.validation.validate({**record, "release_id": "r1"}, fastavro.parse_schema(new))


def _example(t):
    if isinstance(t, list):
        return None if "null" in t else _example(t[0])
    if isinstance(t, dict):
        return [] if t["type"] == "array" else {}
    return {"string": "s", "long": 1, "double": 1.0, "boolean": True}[t]


# --- whole runs --------------------------------------------------------------------------------------------------


def _demo_config(tmp_path, **change) -> Path:
    raw = copy.deepcopy(DEMO)
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    raw.update(change)
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def _cli(config: Path, *args: str, **kwargs) -> subprocess.Popen:
    env = dict(os.environ, DP_NOISE_KEY=KEY)
    cmd = [sys.executable, "-m", "pipelines.release", "--config", str(config), *args]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _records(folder: Path, prefix: str) -> list[dict]:
    return [json.loads(x) for f in sorted(folder.glob(f"{prefix}*.jsonl")) for x in f.read_text().splitlines()]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The demo, as the README runs it (a subprocess), into a fresh folder."""
    tmp = tmp_path_factory.mktemp("demo")
    config = _demo_config(tmp)
    proc = _cli(config)
    out, err = proc.communicate(timeout=600)
    return tmp, config, proc.returncode, out, err


def test_demo_records_name_their_release_and_stderr_has_no_warning(demo_run):
    tmp, _, rc, out, err = demo_run
    assert rc == 0, err
    assert "warning" not in err.lower(), err  # no library FutureWarning, no Beam warning from our own steps
    rid = next(line.split()[-1] for line in err.splitlines() if line.startswith("release id:"))
    releases, dead = _records(tmp / "out", "releases"), _records(tmp / "out-confidential", "dead_letters")
    assert releases and dead
    assert {r["release_id"] for r in releases + dead} == {rid}
    assert all(list(r)[-1] == "release_id" for r in releases)
    manifest = json.loads((tmp / "out-confidential" / "release_manifest.json").read_text())
    assert manifest["release_id"] == rid
    assert (tmp / "out" / "releases.png").is_file() and f"picture:             {tmp / 'out'}" in out
    assert str(tmp / "out" / "releases*.jsonl") in out  # the summary names the folders, not the staging ones
    assert _hidden(tmp) == []


def test_a_second_run_into_the_folder_is_refused_then_replaced_with_overwrite(demo_run):
    tmp, config, rc, _, err = demo_run
    assert rc == 0
    rid = next(line.split()[-1] for line in err.splitlines() if line.startswith("release id:"))
    before = _snapshot(tmp / "out", tmp / "out-confidential")
    proc = _cli(config)
    _, err2 = proc.communicate(timeout=600)
    assert proc.returncode == 2
    assert err2.strip().splitlines() == [err2.strip()] and "--overwrite" in err2 and rid in err2, err2
    assert _snapshot(tmp / "out", tmp / "out-confidential") == before
    # the same release id is a replay: allowed, and it writes the same releases
    proc = _cli(config, "--release-id", rid)
    _, err3 = proc.communicate(timeout=600)
    assert proc.returncode == 0, err3
    assert _snapshot(tmp / "out") == before_releases(before, tmp)
    proc = _cli(config, "--overwrite")
    _, err4 = proc.communicate(timeout=600)
    assert proc.returncode == 0, err4
    rid4 = next(line.split()[-1] for line in err4.splitlines() if line.startswith("release id:"))
    assert rid4 != rid
    assert {r["release_id"] for r in _records(tmp / "out", "releases")} == {rid4}
    assert {r["release_id"] for r in _records(tmp / "out-confidential", "dead_letters")} == {rid4}
    assert json.loads((tmp / "out-confidential" / "release_manifest.json").read_text())["release_id"] == rid4
    assert _hidden(tmp) == []


def before_releases(before: dict, tmp: Path) -> dict:
    """The part of a snapshot under the releases folder, but the picture (drawn again: matplotlib's PNG bytes are
    not promised equal)."""
    out = {k: v for k, v in before.items() if k == str(tmp / "out") or k.startswith(str(tmp / "out") + "/")}
    out[str(tmp / "out" / "releases.png")] = (tmp / "out" / "releases.png").read_bytes()
    return out


@pytest.mark.parametrize("existing", [False, True], ids=["new-folder", "another-release"])
def test_sigint_part_way_leaves_the_folders_as_they_were(tmp_path, existing):
    """Ctrl-C (SIGINT) once the pipeline runs (its staging folder exists): exit 130, one line on stderr (no
    traceback), no staging folder left, the folders as before: absent, or holding the earlier release."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    ledger = {"url": url, "dataset": "demo", "cap": {"epsilon": 10.0}}
    config = _demo_config(tmp_path, privacy={**DEMO["privacy"], "ledger": ledger})
    folders = (tmp_path / "out", tmp_path / "out-confidential")
    if existing:
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "releases-00000-of-00001.jsonl").write_text('{"release_id": "earlier"}\n')
        (tmp_path / "out-confidential").mkdir()
        (tmp_path / "out-confidential" / "release_manifest.json").write_text('{"release_id": "earlier"}\n')
    before = _snapshot(*folders)
    proc = _cli(config, *(["--overwrite"] if existing else []))
    t0 = time.monotonic()
    while not any(n.startswith(".out.partial-") for n in os.listdir(tmp_path)):  # Beam has started writing
        assert proc.poll() is None and time.monotonic() - t0 < 300, proc.communicate()
        time.sleep(0.02)
    time.sleep(1.0 if existing else 0.0)  # at two moments of the run
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    if lines[-1].startswith("note: the runner's threads did not stop within"):  # the guard ended the process
        lines = lines[:-1]  # (pipelines.runner.CANCEL_EXIT_GRACE_SECONDS; CI, stop 43)
    assert lines[-1].startswith("cancelled: the run was interrupted before it completed"), err
    # one line: no traceback, no log of the runner's about the step it stopped
    assert all(line.startswith(("release id:", "progress:", "ledger:")) for line in lines[:-1]), err
    assert _snapshot(*folders) == before
    assert _hidden(tmp_path) == []
    # the budget ledger records the cancellation (from the exit status), and counts nothing: nothing was published
    from pipelines.ledger import open_store

    (release,) = open_store(url).releases("demo")
    assert (release.status, release.counted) == ("cancelled", False)


BOUNDED_SCRIPT = """
import os, signal, sys, time
from pipelines.runner import run

class Result:
    cancelled = False

    def cancel(self):
        Result.cancelled = True

    def wait_until_finish(self):
        try:
            # Ctrl-C at this point of the run (not after a guessed delay: under load the run's set-up alone can
            # take longer than that): in p.run() for in_run, in the wait for in_wait
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)
        except KeyboardInterrupt:  # as the DirectRunner may: the interruption comes out as another exception
            raise RuntimeError("KeyboardInterrupt [while running 'Parse']") from None

class Pipeline:
    def run(self):
        if sys.argv[1] == "in_run":  # the DirectRunner runs a bounded pipeline here
            Result().wait_until_finish()
        # a portable runner: its job server's broken handler (it takes no arguments), installed at job start
        signal.signal(signal.SIGINT, lambda: None)
        return Result()

done = run(Pipeline(), streaming=False, local=True, duration=None)
print(done.status, done.exit, Result.cancelled, signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


@pytest.mark.parametrize("where", ["in_run", "in_wait"])
def test_sigint_cancels_a_bounded_run_whatever_the_runner_turns_it_into(where):
    """SIGINT during a bounded run's ``p.run()`` (the DirectRunner runs there) or its wait (a portable runner,
    after its job server replaced the handler), even when the runner turns the KeyboardInterrupt into another
    exception: ``cancelled``, the job asked to cancel, Python's handler back afterwards, no traceback."""
    # the child starts with SIGINT at its default, so that Python installs its own handler at start-up: a test
    # run launched in the background of a non-interactive shell (`cmd &`) inherits SIGINT ignored, and Python then
    # leaves it ignored (the handler put back afterwards would be SIG_IGN, not Python's)
    proc = subprocess.run(
        [sys.executable, "-c", BOUNDED_SCRIPT, where],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "Error" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stdout.split() == ["cancelled", "None", str(where == "in_wait"), "True"], proc.stdout


def test_the_local_dp_collector_names_its_release_and_checks_its_folder(tmp_path, capsys):
    """The collector of ``configs/local_dp.yaml``: its estimates and dead letters carry the release id its
    manifest records; a second run into the folder is refused, one with ``--overwrite`` replaces it."""
    from pipelines.release import main

    raw = yaml.safe_load((ROOT / "configs" / "local_dp.yaml").read_text())
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    config = tmp_path / "local_dp.yaml"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    ids = []
    for args, status in (((), 0), ((), 2), (("--overwrite",), 0)):
        assert main(["--config", str(config), *args]) == status
        err = capsys.readouterr().err
        if status == 2:
            assert "already holds the outputs of release" in err and "--overwrite" in err
            continue
        rid = next(line.split()[-1] for line in err.splitlines() if line.startswith("release id:"))
        records = _records(tmp_path / "out", "releases")
        assert records and {r["release_id"] for r in records} == {rid}
        manifest = json.loads((tmp_path / "out-confidential" / "release_manifest.json").read_text())
        assert manifest["release_id"] == rid and manifest["mechanism"] == "randomized_response"
        ids.append(rid)
    assert ids[0] != ids[1] and _hidden(tmp_path) == []
