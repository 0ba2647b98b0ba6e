"""Validation before the run (issue 29, item 5): every horizon or encoding limit of a mechanism is checked at load
with the limit in the message (``transforms/core/limits.py``, ``pipelines/config/mechanism.py::check_limits``); an
explicitly configured noise-key variable that is unset is an error (only the implicit default falls back to a
one-off key); a run whose dead-letter share is high says so on stderr with its top reasons, whatever
``source.max_dead_letter_fraction`` is (``pipelines/summary.py``)."""

import copy
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipelines.config import ConfigError, check_environment, check_mechanism, parse_config
from pipelines.manifest import noise_key_for
from transforms.core.counters.factorization.blt import blt_params
from transforms.core.counters.factorization.coefficients import snap_coefficients, sqrt_coefficients
from transforms.core.limits import BLT_MAX_HORIZON, MAX_PERIODS, SQRT_MAX_HORIZON, counter_limit, periods_limit

ROOT = Path(__file__).resolve().parent.parent
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
YEAR_2213 = 7_637_000_000  # epoch seconds in 2212-2213


def _load(raw):
    cfg = parse_config(copy.deepcopy(raw), base_dir=ROOT)
    check_mechanism(cfg)  # load_config's checks
    return cfg


def test_the_demo_ending_in_2213_is_refused_naming_time_end_and_the_largest_end():
    raw = copy.deepcopy(DEMO)
    raw["time"]["end"] = YEAR_2213
    with pytest.raises(ConfigError) as e:
        _load(raw)
    msg = str(e.value)
    largest = MAX_PERIODS * 600
    assert msg.startswith("time.end: ") and "\n" not in msg
    assert f"the largest time.end allowed is {largest} (2049-09-30T02:40:00Z)" in msg
    assert f"({MAX_PERIODS} periods)" in msg
    raw["time"]["end"] = largest  # the largest end itself is accepted, one tick more is not
    assert _load(raw).end_tick == MAX_PERIODS
    raw["time"]["end"] = largest + 1
    with pytest.raises(ConfigError, match="time.end: "):
        _load(raw)
    raw["release"] = {"every_ticks": 2}  # periods, not ticks: twice the end with periods of two ticks
    raw["time"]["end"] = 2 * largest
    assert _load(raw).end_tick == 2 * MAX_PERIODS


def test_the_sqrt_factorization_lattice_limit_is_checked_before_the_run():
    """Gaussian noise with an end: auto picks scaled_sqrt (sqrt_factorization under the entry and person units),
    whose int64 lattice encoding, as the square root's, allows at most
    SQRT_MAX_HORIZON periods (the lattice tables used to raise at the first step, mid-run)."""
    raw = copy.deepcopy(DEMO)
    raw["privacy"]["delta"] = 1e-6
    raw["time"]["end"] = SQRT_MAX_HORIZON * 600
    assert _load(raw).end_tick == SQRT_MAX_HORIZON
    raw["time"]["end"] = SQRT_MAX_HORIZON * 600 + 1
    with pytest.raises(ConfigError, match=r"time.end: .*scaled_sqrt counter's int64 lattice encoding") as e:
        _load(raw)
    assert f"the largest time.end allowed is {SQRT_MAX_HORIZON * 600} (2032-" in str(e.value)
    # an explicit horizon past a counter's limit names mechanism.horizon
    raw = copy.deepcopy(DEMO)
    raw["mechanism"] = {"kind": "net_change", "counter": "blt", "horizon": BLT_MAX_HORIZON + 1}
    with pytest.raises(ConfigError, match=rf"mechanism.horizon: {BLT_MAX_HORIZON + 1} is more than the blt counter"):
        _load(raw)
    raw["mechanism"]["horizon"] = BLT_MAX_HORIZON
    _load(raw)


def test_the_counter_limits_are_the_code_s_own():
    """SQRT_MAX_HORIZON: the snapped square-root coefficients (they do not depend on the horizon) sum to less
    than 2^31 over exactly that many steps (``LatticeTables`` refuses s1 >= 2^31); BLT_MAX_HORIZON: the largest
    design horizon the BLT table has."""
    k = np.asarray(snap_coefficients(sqrt_coefficients(SQRT_MAX_HORIZON + 1)), dtype=np.int64)
    s1 = np.cumsum(k)
    assert s1[SQRT_MAX_HORIZON - 1] < 1 << 31 <= s1[SQRT_MAX_HORIZON]
    blt_params(BLT_MAX_HORIZON.bit_length() - 1)
    with pytest.raises(ValueError, match="no BLT parameters"):
        blt_params(BLT_MAX_HORIZON.bit_length())
    # anytime_sqrt has no step limit (wide int64 limbs past 2^31, tests/test_counters_anytime_wide.py): a bounded
    # release on it is limited by MAX_PERIODS only
    assert counter_limit("anytime_sqrt") is None
    assert periods_limit(["anytime_sqrt"])[0] == MAX_PERIODS


def _keyed(raw, **privacy):
    raw = copy.deepcopy(raw)
    raw["privacy"].update(privacy)
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    return parse_config(raw)


def test_an_explicit_noise_key_variable_that_is_unset_is_an_error(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("DP_TEST_UNSET_KEY", raising=False)
    monkeypatch.delenv("DP_NOISE_KEY", raising=False)
    explicit = _keyed(DEMO, noise_key={"env": "DP_TEST_UNSET_KEY"})
    assert explicit.privacy.noise_key_explicit
    msg = "privacy.noise_key.env: the variable DP_TEST_UNSET_KEY is not set, and the configuration names it"
    with pytest.raises(ConfigError, match=msg):
        check_environment(explicit, local=True)
    with pytest.raises(ConfigError, match=msg):
        noise_key_for(explicit, local=True)
    # written explicitly with the default's own name: still explicit
    with pytest.raises(ConfigError, match="the variable DP_NOISE_KEY is not set"):
        noise_key_for(_keyed(DEMO, noise_key={"env": "DP_NOISE_KEY"}), local=True)
    # the implicit default: a one-off key with its warning
    implicit = _keyed(DEMO)
    assert not implicit.privacy.noise_key_explicit
    check_environment(implicit, local=True)
    noise_key_for(implicit, local=True).load()
    assert "using a fresh one-off noise key" in capsys.readouterr().err
    # the explicit variable set: fine
    monkeypatch.setenv("DP_TEST_UNSET_KEY", bytes(range(32)).hex())
    check_environment(explicit, local=True)
    noise_key_for(explicit, local=True).load()


def _dead_share(tmp_path, bad: int) -> Path:
    """100 records: insertions, ``bad`` of them with a time that is not a number (dead letters ``bad_time``)."""
    out = []
    for i in range(100):
        rec = {"time": 600.0 * i + 1.0, "op": "insert", "id": f"b{i}", "region": "eu" if i % 2 else "us"}
        rec["item"] = {"carrier": "AA", "amount": 10.0}
        if i < bad:
            rec["time"] = "soon"
        out.append(json.dumps(rec))
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize(
    "bad, fraction, status, said",
    [(20, None, 0, "warning"), (20, 0.5, 0, "warning"), (20, 0.1, 3, "error"), (4, None, 0, None)],
)
def test_a_twenty_percent_dead_letter_run_says_so_on_stderr(tmp_path, monkeypatch, capsys, bad, fraction, status, said):
    """Whatever max_dead_letter_fraction is (the default 1.0, or 0.5): exit 0, and a warning on stderr with the
    share and the top reasons and their counts (counts only, never a record); over the fraction, the run's error
    says it once (exit 3); under 5% (4 of 100), nothing."""
    from pipelines.release import main

    raw = copy.deepcopy(DEMO)
    raw["source"] = {"type": "file", "path": str(_dead_share(tmp_path, bad)), "format": "jsonl"}
    if fraction is not None:
        raw["source"]["max_dead_letter_fraction"] = fraction
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.setenv("DP_NOISE_KEY", bytes(range(32)).hex())
    assert main(["--config", str(tmp_path / "c.yaml")]) == status
    err = capsys.readouterr().err
    said_lines = [line for line in err.splitlines() if "dead letters: " in line]
    assert [line.split(":")[0] for line in said_lines] == ([said] if said else []), err[-2000:]
    if said == "warning":
        assert "20 of the 100 records read (20.0%) were rejected; top reasons: bad_time 20 (" in said_lines[0]
    if said == "error":
        assert "top reasons: bad_time 20" in said_lines[0]
    assert "soon" not in err  # no record payload
