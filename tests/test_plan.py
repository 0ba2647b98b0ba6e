"""``python -m pipelines.plan``: the accuracy of a release before it runs (``pipelines/plan.py``,
``transforms/core/forecast.py``).

The property: the bound the plan states for (stream, query, tick) is the ``error_bound`` the run's release record
carries there, exactly (the same float), for the demo and for every registry mechanism whose bound does not
depend on the data (``DATA_INDEPENDENT``), on small configurations covering the noise kinds and budget kinds
(pure, zCDP, (eps, delta)), the counters, periods with a partial last one, weights, the consistency
post-processing and the entry and person units. The other mechanisms say what their bound depends on."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from pipelines.config import load_config
from pipelines.plan import UNBOUNDED_PERIODS, main, plan_report, plan_rows, plan_ticks, render
from transforms.core.forecast import DATA_DEPENDENT, DATA_INDEPENDENT, release_ticks
from transforms.core.mechanisms import MECHANISMS

ROOT = Path(__file__).resolve().parent.parent
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
KEY = bytes(range(32)).hex()


def _records(inserts_only: bool = False) -> list[str]:
    """About 90 updates over 100 ten-minute ticks in two regions (deletions of earlier bookings unless
    ``inserts_only``), each with a customer (the person unit's field)."""
    out, alive = [], []
    for i in range(90):
        t = 600.0 * (i * 100 // 90) + 7.0
        if not inserts_only and i % 4 == 3 and alive:
            bid, region, customer = alive.pop(0)
            out.append({"time": t, "op": "delete", "id": bid, "region": region, "customer": customer})
            continue
        bid, region, customer = f"b{i}", "eu" if i % 3 else "us", 1000 + i % 7
        item = {"carrier": ("AA", "B6", "DL")[i % 3], "amount": float(10 + 7 * i % 140)}
        out.append({"time": t, "op": "insert", "id": bid, "item": item, "region": region, "customer": customer})
        alive.append((bid, region, customer))
    return [json.dumps(r) for r in out]


def _run_and_plan(tmp_path, raw, lines=None):
    """Run the release CLI on ``raw`` (with ``lines`` as its input), then the plan of the same file: the plan's
    rows and the records' error_bound by (stream, query, tick)."""
    from pipelines.release import main as release

    raw = copy.deepcopy(raw)
    if lines is not None:
        (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
        raw["source"] = {"type": "file", "path": str(tmp_path / "in.jsonl"), "format": "jsonl"}
    else:
        raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert release(["--config", str(path)]) == 0
    records = {}
    for f in (tmp_path / "out").glob("releases*.jsonl"):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            records[(r["stream"], r["query"], r["tick"])] = r["error_bound"]
    return plan_rows(load_config(path)), records


def _assert_equal(rows, records, n_queries, n_streams=2):
    assert len(rows) == n_queries * n_streams * 3
    assert all(r["error_bound"] is not None and r["error_bound"] > 0 for r in rows)
    for r in rows:
        if r.get("plus_tau"):
            # a projected histogram (the default post-processing): the record states B_h + |tau|, tau from the
            # released values; B_h itself is checked exactly by the cases with release.consistent: false
            assert records[(r["stream"], r["query"], r["tick"])] >= r["error_bound"], r
        else:
            assert records[(r["stream"], r["query"], r["tick"])] == r["error_bound"], r  # the same float


def test_the_plan_of_the_demo_states_the_bounds_its_records_carry(tmp_path, monkeypatch):
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    rows, records = _run_and_plan(tmp_path, DEMO)
    _assert_equal(rows, records, 3)
    assert sorted({r["tick"] for r in rows}) == [1, 576, 1152]
    assert {r["query"] for r in rows if r.get("plus_tau")} == {"by_carrier"}  # the default projection


SMALL = {
    "privacy": {"epsilon": 1.0, "delta": 0.0, "unit": "update"},
    "time": {"field": "time", "tick_seconds": 600, "origin": 0, "end": 60000},  # 100 ticks
    "streams": {"field": "region", "keys": ["eu", "us"]},
    "mechanism": {"kind": "auto"},
    "release": {"every_ticks": 1},
    "queries": copy.deepcopy(DEMO["queries"])
    + [{"name": "net", "type": "sum", "field": "amount", "lower": -50, "upper": 150}],  # a signed sum
}


def _small(**changes):
    raw = copy.deepcopy(SMALL)
    for section, value in changes.items():
        if isinstance(value, dict) and isinstance(raw.get(section), dict):
            raw[section].update(value)
        else:
            raw[section] = value
    return raw


CASES = {
    # Gaussian noise under (eps, delta): sqrt_factorization; periods of 3 ticks, the last one partial (tick 100)
    "net_change_gaussian_periods": _small(
        privacy={"delta": 1e-6}, mechanism={"kind": "net_change"}, release={"every_ticks": 3}
    ),
    # zCDP, the BLT counter, weights
    "net_change_blt_zcdp_weights": dict(
        _small(
            mechanism={"kind": "net_change", "counter": "blt"},
            queries=[dict(q, weight=w) for q, w in zip(SMALL["queries"], (3, 1, 1, 2))],
        ),
        privacy={"rho": 0.5, "unit": "update"},
    ),
    # auto with the consistency post-processing (the histogram's bound is the consistent one)
    "auto_consistent": _small(release={"every_ticks": 1, "consistent": True}),
    # auto without the default projection: the histogram's own bound B_h, exactly
    "auto_clamp_only": _small(release={"every_ticks": 1, "consistent": False}),
    # the entry unit: each counter calibrated to its sensitivity by contribution
    "auto_entry_unit": _small(privacy={"unit": "entry", "max_mutations_per_entry": 3}),
    # the person unit
    "auto_person_unit": _small(
        privacy={
            "unit": "person",
            "person_field": "customer",
            "max_entries_per_person": 4,
            "max_mutations_per_entry": 2,
            "max_streams_per_person": 1,
        }
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_plan_states_the_records_bounds_for_every_data_independent_mechanism(tmp_path, monkeypatch, case):
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    rows, records = _run_and_plan(tmp_path, CASES[case], _records())
    _assert_equal(rows, records, 4)
    if "periods" in case:
        assert sorted({r["tick"] for r in rows}) == [3, 51, 100]  # the last period is partial: it ends at the end


def test_the_plan_of_continual_count_states_its_records_bounds(tmp_path, monkeypatch):
    """The plain counter over ticks (insertions only), a finite counter with its horizon in ticks."""
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    raw = _small(mechanism={"kind": "continual_count", "counter": "binary_tree", "horizon": 100})
    raw["queries"] = raw["queries"][:3]
    rows, records = _run_and_plan(tmp_path, raw, _records(inserts_only=True))
    _assert_equal(rows, records, 3)
    assert {r["counter"] for r in rows} == {"binary_tree"}  # (its options', in ticks)


def test_every_registered_mechanism_is_either_forecast_or_says_what_its_bound_depends_on():
    assert set(DATA_INDEPENDENT).isdisjoint(DATA_DEPENDENT)
    assert set(DATA_INDEPENDENT) | set(DATA_DEPENDENT) == set(MECHANISMS)


def test_a_mechanism_whose_bound_depends_on_the_data_says_on_what(tmp_path):
    raw = _small(mechanism={"kind": "fully_dynamic"})
    raw["source"] = {"type": "file", "path": str(ROOT / "data" / "demo.jsonl"), "format": "jsonl"}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(raw))
    rows = plan_rows(load_config(tmp_path / "c.yaml"))
    assert rows and all(r["error_bound"] is None and r["depends_on"] == DATA_DEPENDENT["fully_dynamic"] for r in rows)
    assert "depends on data" in render(plan_report(load_config(tmp_path / "c.yaml"), "c.yaml"))


def test_an_unbounded_release_is_planned_at_stated_periods():
    cfg = load_config(ROOT / "configs" / "pubsub_local.yaml")
    ticks, which = plan_ticks(cfg)
    assert ticks == list(UNBOUNDED_PERIODS) and "no time.end" in which
    rows = plan_rows(cfg)
    active = [r["error_bound"] for r in rows if r["stream"] == "eu" and r["query"] == "active"]
    assert len(active) == 3 and active == sorted(active)  # the bound grows with the periods


def test_the_forecast_minimises_bounds_only_at_the_ticks_it_reads(monkeypatch):
    """An unbounded plan steps 10,000 periods: the bound (a minimisation) is computed at the 3 stated periods
    only, and equals the bound of a forecast that computes it at every period (the records' bounds)."""
    from transforms.core.continual.baselines import ContinualCountRelease
    from transforms.core.counters.base import ContinualCounter

    cfg = load_config(ROOT / "configs" / "pubsub_local.yaml")
    calls = []
    real = ContinualCounter.error_bound
    monkeypatch.setattr(ContinualCounter, "error_bound", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    rows = plan_rows(cfg)
    lazy = [(r["stream"], r["query"], r["error_bound"]) for r in rows]
    # one minimisation per stated (query, period): the streams share one configuration, hence one forecast
    assert len(calls) == len({(r["query"], r["tick"]) for r in rows}) == 9
    # the same numbers when every period's answer carries its bound (as in a release); 100 periods to keep it short
    monkeypatch.setattr("pipelines.plan.UNBOUNDED_PERIODS", (1, 100))
    lazy100 = [(r["stream"], r["query"], r["error_bound"]) for r in plan_rows(cfg)]
    assert lazy100 == [x for x, r in zip(lazy, rows) if r["tick"] in (1, 100)]
    monkeypatch.setattr(ContinualCountRelease, "bound_ticks", property(lambda self: None, lambda self, v: None))
    calls.clear()
    eager = [(r["stream"], r["query"], r["error_bound"]) for r in plan_rows(cfg)]
    assert eager == lazy100 and len(calls) == 3 * 100  # every period of the 3 query sets


def test_release_ticks_end_with_the_end():
    assert release_ticks(10, 3) == [3, 6, 9, 10]
    assert release_ticks(9, 3) == [3, 6, 9]
    assert release_ticks(2, 5) == [2]


def test_the_cli_prints_a_table_or_json_and_refuses_a_bad_configuration_in_one_line(tmp_path, capsys):
    assert main(["--config", str(ROOT / "configs" / "demo.yaml"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ticks"] == [1, 576, 1152] and len(report["rows"]) == 18
    assert report["rows"][0]["share"] == pytest.approx(1 / 3) and report["rows"][0]["budget"] == {"epsilon": 1 / 3}
    assert main(["--config", str(ROOT / "configs" / "demo.yaml")]) == 0
    out = capsys.readouterr().out
    assert "active        net_change  kary_tree  33.3%  epsilon 0.3333  1     27" in out
    raw = copy.deepcopy(DEMO)
    raw["time"]["end"] = 7_637_000_000  # 2213
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(raw))
    assert main(["--config", str(tmp_path / "c.yaml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("configuration error: time.end: ") and err.count("\n") == 1


def test_the_planned_sd_is_the_counters_stated_variance_path():
    """The sd column against the counters' closed-form variance paths (a second derivation, not the code that
    steps): the kary tree's (``kary_variance_path``, Laplace) and the square root's (``toeplitz_variance_path``,
    zCDP)."""
    from transforms.core.config import DynamicConfig, QuerySet
    from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
    from transforms.core.counters.factorization.kary import kary_radices, kary_variance_path
    from transforms.core.counters.factorization.lattice import toeplitz_variance_path
    from transforms.core.forecast import forecast
    from transforms.core.foundation.accounting import ZCDP, PureDP
    from transforms.core.static.linear import CountMechanism

    queries = (QuerySet("n"), QuerySet("h", "histogram", domain_size=3), QuerySet("m"))
    ticks, horizon = [1, 7, 576, 1000, 1152], 1152
    fs = forecast(NetChangeRelease, DynamicConfig(queries, PureDP(1.0)), NetChangeOptions(), ticks, end_tick=horizon)
    radices = kary_radices(horizon, 2)
    s2 = CountMechanism(1, "laplace").noise_profile(PureDP(1.0 / 3 / (len(radices) + 1))).variance()
    path = kary_variance_path(horizon, radices, s2)
    got = {f.tick: f.sd for f in fs if f.query == "n"}
    assert [got[t] ** 2 for t in ticks] == pytest.approx([path[t - 1] for t in ticks], rel=1e-9)
    fs = forecast(NetChangeRelease, DynamicConfig(queries, ZCDP(0.6)), NetChangeOptions(), ticks, end_tick=horizon)
    path = toeplitz_variance_path("sqrt_factorization", horizon, rho=0.2)
    got = {f.tick: f.sd for f in fs if f.query == "n"}
    assert [got[t] ** 2 for t in ticks] == pytest.approx([path[t - 1] for t in ticks], rel=1e-9)


def test_the_plan_command_as_a_user_runs_it_prints_the_bounds_and_no_warning():
    """``python -m pipelines.plan --config configs/demo.yaml`` as a subprocess (the README's command): exit 0,
    the demo's planned bounds equal the in-process plan's, and stderr is empty (the third-party FutureWarnings
    that importing Beam's Google clients prints are filtered, ``pipelines/quiet.py``; ours would show)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop("PYTHONWARNINGS", None)
    command = [sys.executable, "-m", "pipelines.plan", "--config", "configs/demo.yaml", "--json"]
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == "", proc.stderr[-2000:]
    got = json.loads(proc.stdout)
    got.pop("seconds")  # the time it took: measured, never asserted
    want = plan_report(load_config(ROOT / "configs" / "demo.yaml"), "configs/demo.yaml")
    assert got == json.loads(json.dumps(want))


def test_the_plan_states_a_tight_accounts_share_in_rho():
    """Under (eps, delta) with Gaussian noise the whole release is one tight Gaussian account
    (``docs/accounting.md``): a query set's budget in the plan is its share of that rho, not (eps/3, delta/3),
    which would misstate it (the analytic curve is not linear)."""
    from pipelines.config import parse_config
    from transforms.core.foundation.accounting import gaussian_rho_for_approx_tight

    raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    raw["privacy"] = {"epsilon": 1.0, "delta": 1e-6, "unit": "update"}
    cfg = parse_config(raw, base_dir=ROOT)
    rows = plan_rows(cfg)
    rho = gaussian_rho_for_approx_tight(1.0, 1e-6)
    assert rows[0]["share"] == pytest.approx(1 / 3)
    assert rows[0]["budget"] == {"rho": pytest.approx(rho / 3, rel=1e-12)}
