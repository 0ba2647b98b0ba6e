"""Open key domains in the configuration, the plan and the CLI (issue 33): ``streams: {field, keys: open,
max_keys, max_keys_per_person, selection_share, failure}`` is checked (one line naming the key, before any
pipeline runs) and runs end to end (``configs/open_keys.yaml``); a histogram's ``domain: open`` without its
settings is refused with one line; the declared keys' configurations are unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipelines.config import ConfigError, load_config, parse_config
from pipelines.config.load import read_raw
from pipelines.config.open_keys import selection_params
from pipelines.ledger import new_release
from pipelines.manifest import release_identity
from pipelines.plan import main as plan_main

ROOT = Path(__file__).resolve().parents[1]
OPEN = {"field": "region", "keys": "open", "max_keys": 1000, "max_keys_per_person": 2, "selection_share": 0.5}


def _raw(**changes):
    raw = read_raw("configs/demo_person.yaml")
    # open keys bound a person's keys with streams.max_keys_per_person, not max_streams_per_person (refused)
    raw["privacy"] = {k: v for k, v in raw["privacy"].items() if k != "max_streams_per_person"}
    raw["queries"] = [{"name": "active", "type": "count"}]
    raw.update(changes)
    return raw


def _error(raw) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    return str(e.value)


def test_open_stream_keys_are_accepted():
    cfg = parse_config(_raw(streams=OPEN))
    assert cfg.open_keys and cfg.streams == () and cfg.streams_config.max_keys_per_person == 2
    assert cfg.streams_config.failure == 1e-9
    other = parse_config(_raw(streams={**OPEN, "selection_share": 0.25}))
    assert other.release_digest() != cfg.release_digest()  # the settings key the noise


def test_open_stream_keys_bad_values_name_the_key():
    assert "max_keys_per_person" in _error(_raw(streams={**OPEN, "max_keys_per_person": 0}))
    assert "streams.max_keys" in _error(_raw(streams={k: v for k, v in OPEN.items() if k != "max_keys"}))
    assert "selection_share" in _error(_raw(streams={**OPEN, "selection_share": 1.5}))
    assert "streams.failure" in _error(_raw(streams={**OPEN, "failure": 2}))
    assert "streams.field" in _error(_raw(streams={k: v for k, v in OPEN.items() if k != "field"}))
    assert "only with keys: open" in _error(_raw(streams={"field": "region", "keys": ["eu"], "max_keys": 3}))
    assert "open_keys" in _error(_raw(streams={"field": "region", "keys": ["eu"], "open_keys": True}))


def test_open_stream_keys_need_what_they_rely_on():
    raw = _raw(streams=OPEN)
    raw["time"] = {k: v for k, v in raw["time"].items() if k != "end"}
    assert "time.end" in _error(raw)  # a bounded source needs its end
    assert "queries" in _error(
        _raw(
            streams=OPEN,
            queries=[{"name": "n", "type": "count"}] * 1
            + [{"name": "by", "type": "histogram", "field": "carrier", "domain": ["AA"]}],
        )
    )
    assert "release.every_ticks" in _error(_raw(streams=OPEN, release={"every_ticks": 2}))
    raw = _raw(streams=OPEN)
    raw["privacy"] = {"epsilon": 1.0, "unit": "update"}
    assert "privacy.unit" in _error(raw)


@pytest.mark.parametrize("budget", [{"epsilon": 1.0, "delta": 1e-6}, {"epsilon": 1.0}])
def test_open_keys_without_an_end_on_a_streaming_source_are_accepted(budget, capsys):
    """A Pub/Sub (or Kafka, followed file) deployment runs for ever: open keys without ``time.end`` are
    accepted there, with the unbounded counters (calibrated by contribution); the plan says so."""
    raw = yaml.safe_load((ROOT / "configs" / "open_keys.yaml").read_text())
    raw["time"] = {k: v for k, v in raw["time"].items() if k != "end"}
    raw["privacy"] = {**{k: v for k, v in raw["privacy"].items() if k not in ("epsilon", "delta")}, **budget}
    raw["source"] = {"type": "pubsub", "subscription": "projects/p/subscriptions/updates", "timestamp_attribute": "ts"}
    cfg = parse_config(raw)
    assert cfg.open_keys and cfg.end_tick is None and cfg.streaming
    from pipelines.open_keys import open_keys_plan

    text = "\n".join(open_keys_plan(cfg))
    assert "no time.end" in text and "however long it runs" in text
    assert ("through blt" if "delta" in budget else "through infinite_honaker") in text
    # what the ledger charges for a run without an end: the launch registers the whole stated budget once
    # (the release's core ledger charges exactly its guarantee, tests/test_open_keys_bounds.py), as with an end
    if "delta" in budget:
        raw["privacy"]["ledger"] = {
            "url": "sqlite:///ledger.db",
            "dataset": "visits",
            "cap": {"epsilon": 3.0, "delta": 1e-5},
        }
        cfg = parse_config(raw)
        new = new_release(cfg, release_identity(cfg))
        stated = selection_params(cfg, None).guarantee()
        assert new.kind == "approx" and [float(v) for v in new.budget.values()] == list(stated.vector())


def test_a_pure_epsilon_open_key_release_with_a_ledger_is_refused(monkeypatch):
    """Under pure epsilon an open-key release is an (epsilon, delta = failure) release: a ledger whose cap is in
    pure epsilon terms could not record it, so the configuration is refused naming ``privacy.ledger``. Without the
    refusal the launch registers the stated (epsilon, failure), never the pure budget (checked with the check
    switched off: the ledger must never record less than what the release states)."""
    import pipelines.config.open_keys as open_keys_config

    raw = yaml.safe_load((ROOT / "configs" / "open_keys.yaml").read_text())
    raw["privacy"] = {**{k: v for k, v in raw["privacy"].items() if k not in ("epsilon", "delta")}, "epsilon": 1.0}
    raw["privacy"]["ledger"] = {"url": "sqlite:///ledger.db", "dataset": "visits", "cap": {"epsilon": 3.0}}
    message = _error(raw)
    assert "privacy.ledger" in message and "delta" in message, message
    real = open_keys_config.check_open_keys_config

    def without_the_ledger_check(cfg):
        ledger = cfg.privacy.ledger
        object.__setattr__(cfg.privacy, "ledger", None)
        try:
            real(cfg)
        finally:
            object.__setattr__(cfg.privacy, "ledger", ledger)

    import pipelines.config.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "check_open_keys_config", without_the_ledger_check)
    cfg = parse_config(raw)
    new = new_release(cfg, release_identity(cfg))
    stated = selection_params(cfg, cfg.end_tick).guarantee()
    assert new.kind == "approx" and [float(v) for v in new.budget.values()] == list(stated.vector())
    assert float(new.budget["delta"]) > 0


def test_open_keys_without_an_end_refuse_a_counter_without_a_person_level_bound(monkeypatch):
    """Should ``auto`` pick, for a run without an end, a counter that ``transforms/core/contribution`` cannot
    bound at person level, the configuration is refused in one line naming ``time.end`` (not run on group
    privacy unnoticed)."""
    import transforms.core.selection.answers as answers

    raw = yaml.safe_load((ROOT / "configs" / "open_keys.yaml").read_text())
    raw["time"] = {k: v for k, v in raw["time"].items() if k != "end"}
    raw["privacy"] = {**{k: v for k, v in raw["privacy"].items() if k not in ("epsilon", "delta")}, "epsilon": 1.0}
    raw["source"] = {"type": "pubsub", "subscription": "projects/p/subscriptions/updates", "timestamp_attribute": "ts"}
    assert parse_config(raw).open_keys
    monkeypatch.setattr(answers, "answer_counter", lambda kind, horizon: "anytime_sqrt")
    msg = _error(raw)
    assert "time.end" in msg and "not supported at person level" in msg and "\n" not in msg


def test_open_keys_need_a_budget_that_states_the_selections_delta():
    """No open-key release is rho-zCDP or (eps, 0)-DP (transforms/core/selection/params.py): refused before the
    pipeline, naming the budget key; a pure epsilon budget is accepted (stated as (epsilon, failure))."""
    raw = _raw(streams=OPEN)
    privacy = {k: v for k, v in raw["privacy"].items() if k not in ("epsilon", "delta", "rho")}
    err = _error({**raw, "privacy": {**privacy, "rho": 0.5}})
    assert "open keys need a delta" in err and "privacy.rho" in err and err.count("\n") == 0
    for pure in ({"epsilon": 1.0}, {"epsilon": 1.0, "delta": 0.0}):  # delta 0 is the pure epsilon budget
        assert parse_config({**raw, "privacy": {**privacy, **pure}}).open_keys


def test_open_histogram_domain_needs_its_settings_in_one_line():
    """A histogram's ``domain: open`` (accepted since round 8: ``tests/test_open_histogram.py``) without its
    settings is one line naming the missing key."""
    raw = read_raw("configs/demo_person.yaml")
    raw["queries"] = [dict(q) for q in raw["queries"]]
    raw["queries"][1]["domain"] = "open"
    msg = _error(raw)
    assert "max_cells" in msg and "domain: open" in msg and "\n" not in msg


def test_declared_keys_unchanged():
    cfg = load_config("configs/demo_person.yaml")
    assert cfg.stream_keys == ("eu", "us") and not cfg.open_keys
    assert cfg.release_digest() == "ee3d0823eca03a69ec7cf0b8bb52e0e3"  # tests/test_configs.py's pin


def test_plan_states_the_selection(capsys):
    assert plan_main(["--config", "configs/open_keys.yaml"]) == 0
    out = capsys.readouterr().out
    for word in ("keys of 'city' are not declared", "threshold", "50% of the budget", "delta", "guarantee"):
        assert word in out


@pytest.mark.slow
def test_the_cli_on_open_keys_never_shows_an_unselected_key(tmp_path):
    """``python -m pipelines.release --config`` (a copy of configs/open_keys.yaml writing under tmp_path): the
    selected cities' records start at their selection period and run every period to the end; a city never
    selected is in no file (public or confidential), no file name and no line the CLI prints."""
    raw = yaml.safe_load((ROOT / "configs" / "open_keys.yaml").read_text())
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out") + "/", "format": "jsonl"}]
    cfg = tmp_path / "open_keys.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "DP_NOISE_KEY": bytes(range(32)).hex()}
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.release", "--config", str(cfg)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    by_key: dict = {}
    for r in recs:
        by_key.setdefault(r["stream"], []).append(r["tick"])
    assert by_key and all(sorted(t) == list(range(min(t), 25)) for t in by_key.values())
    cities = {json.loads(x)["city"] for x in (ROOT / raw["source"]["path"]).read_text().splitlines()}
    never = cities - set(by_key)
    assert never  # the long tail is never selected
    texts = [proc.stdout, proc.stderr]
    for f in tmp_path.rglob("*"):
        texts.append(f.name)
        if f.is_file() and f.suffix in (".jsonl", ".json", ".txt", ".csv"):
            texts.append(f.read_text())
    blob = "\n".join(texts)
    assert not [c for c in never if c in blob]  # names of equal width: no city is part of another's
    assert (tmp_path / "out-confidential").is_dir()
