"""Contract tests over every registered mechanism (river's ``check_estimator``
style): whatever is in ``transforms.core.MECHANISMS`` must pass all of them.

* the registry entry is complete (docstring, proof note, options, query kinds);
* noise switched off gives exact answers on a random stream;
* versioned state (``to_state`` -> bytes -> ``from_state``) and pickling,
  taken mid-stream, continue exactly like the uninterrupted run;
* the ledger's charges equal the planned allocation exactly (each mechanism
  states it, ``planned_cost``: its docs page's formulas written apart from the
  code that charges), and every released piece of the data structure was
  charged;
* no noise coordinate is ever drawn twice (a spy NoiseSource), in memory and
  through Beam, bounded and streaming;
* the Beam transform releases exactly what the in-memory mechanism releases.

Each registry entry supplies its own parameters (``MechanismSpec.checks``:
options, budgets, golden state; river's per-estimator test parameters), so no
mechanism is named here: a new mechanism adds no line to this file. Broken
twins of one mechanism (noise coordinates without the round or the level, a
skipped charge, restarts paid at round 1's share, the partitioning charged
twice its share) fail these checks: ``tests/test_dynamic.py``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
from collections import Counter
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER

from transforms.core import (
    MECHANISMS,
    QUERY_KINDS,
    ContinualRelease,
    DynamicConfig,
    NoiseSource,
    PureDP,
    QuerySet,
    ReleaseIdentity,
    Update,
)
from transforms.core.foundation.accounting import PrivacyUnit, TightGaussian, as_vector
from transforms.core.foundation.state import decode, encode
from transforms.core.protocol import CONTRACT_BUDGETS, ContractParams
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, StreamSpec

ROOT = Path(__file__).resolve().parents[1]
KEY = bytes(range(32))
REL = ReleaseIdentity("contract-release")
# the update-stream checks below run over the mechanisms that take updates; a
# report collector (input_kind "reports", trust "local") gets the analogous
# checks at the end of this file. What each entry runs with (options, budgets,
# golden state) is its registry entry's ContractParams: no mechanism is named here.
NAMES = sorted(n for n, spec in MECHANISMS.items() if spec.input_kind == "updates")
REPORT_NAMES = sorted(n for n, spec in MECHANISMS.items() if spec.input_kind == "reports")
QUERIES = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("lin", "linear", domain_size=3, matrix=((0.5, 0.25, 1.0), (1.0, 0.0, 0.75))),
)
BUDGETS = CONTRACT_BUDGETS


def checks(name) -> ContractParams:
    params = MECHANISMS[name].checks
    assert isinstance(params, ContractParams), f"registry entry {name!r} has no contract parameters (checks=)"
    return params


def options_for(name, **over):
    return MECHANISMS[name].options(**{**checks(name).options, **over})


def config_for(budget_name, queries=QUERIES, **kw):
    budget, profile = BUDGETS[budget_name]
    return DynamicConfig(queries, budget, profile=profile, **kw)


CASES = [(n, b) for n in NAMES if MECHANISMS[n].checks for b in MECHANISMS[n].checks.budgets]
STRESS = [(n, b) for n in NAMES if MECHANISMS[n].checks for b in MECHANISMS[n].checks.stress_budgets]


def settle_tick(name, ticks):
    """Where the plan checks advance to after a workload of ``ticks`` ticks."""
    tick = checks(name).settle_tick
    return ticks + 40 if tick is None else tick


def workload(name, ticks=80, seed=0, per_tick=(0, 4), churn=0.45):
    """Random updates by tick, valid for the mechanism (inserts only when it
    takes no deletions); items are (count cell, histogram cell, linear cell)."""
    rng = np.random.default_rng(seed)
    deletions = MECHANISMS[name].deletions_allowed
    live, out, k = [], [], 0
    for tick in range(1, ticks + 1):
        ups = []
        for _ in range(int(rng.integers(per_tick[0], per_tick[1] + 1))):
            item = (0, int(rng.integers(4)), int(rng.integers(3)))
            if deletions and live and rng.random() < churn:
                eid = live[int(rng.integers(len(live)))]
                if rng.random() < 0.3:
                    ups.append(Update("upsert", eid, item))
                else:
                    live.remove(eid)
                    ups.append(Update("delete", eid))
            else:
                eid = f"e{k}"
                k += 1
                live.append(eid)
                ups.append(Update("insert", eid, item))
        out.append((tick, ups))
    return out


def grow_then_shrink(name, ticks=120, seed=0):
    """Many insertions, then most of the data deleted: nodes of the fully-dynamic
    tree restart and halt (insertions only for insertion-only mechanisms)."""
    rng = np.random.default_rng(seed)
    deletions = MECHANISMS[name].deletions_allowed
    live, out, k = [], [], 0
    for tick in range(1, ticks + 1):
        ups = []
        if tick <= ticks // 3 or not deletions:
            for _ in range(40):
                ups.append(Update("insert", f"e{k}", (0, int(rng.integers(4)), int(rng.integers(3)))))
                live.append(f"e{k}")
                k += 1
        else:
            for _ in range(min(len(live), 25)):
                ups.append(Update("delete", live.pop(int(rng.integers(len(live))))))
        out.append((tick, ups))
    return out


def run(core, batches, noise):
    results = [core.process_tick(t, ups, noise) for t, ups in batches]
    return results


def answers(results):
    return [
        (a.stream, a.tick, a.segment, a.query, a.estimate.tolist(), a.error_bound, as_vector(a.spent))
        for r in results
        for a in r.answers
    ]


# ---------------------------------------------------------------------------
# the registry entry
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_registry_entry_is_complete(name):
    spec = MECHANISMS[name]
    cls = spec.core_cls
    assert issubclass(cls, ContinualRelease) and cls.name == name
    doc = cls.__doc__ or ""
    assert len(doc.split()) >= 20 and ("neighbour" in doc.lower() or "privacy" in doc.lower()), doc
    assert spec.neighbours and spec.summary and set(spec.query_kinds) <= set(QUERY_KINDS)
    proof = ROOT / spec.proof
    assert proof.is_file() and (name in proof.read_text() or cls.__name__ in proof.read_text()), spec.proof
    spec.options_cls()  # defaults are valid (or raise only for settings that need a value)
    with pytest.raises((TypeError, ValueError)):
        spec.options(no_such_option=1)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_registry_entry_is_covered_by_every_contract_check(name):
    """Each registry entry brings its own contract parameters (options that
    validate, budgets that exist, a golden state); the update-stream checks
    below are parametrised by them and so cover every entry, a report
    collector's by its option variants. An entry without parameters fails here."""
    params = checks(name)
    options_for(name)
    if MECHANISMS[name].input_kind == "reports":
        assert params.variants, f"{name}: a report collector needs option variants"
        for v in params.variants:
            MECHANISMS[name].options(**v)
        return
    assert params.budgets and params.golden
    covered = {n for n, _ in CASES}
    assert name in covered
    golden = json.loads((ROOT / "tests" / "golden" / "state_v1.json").read_text())["mechanisms"]
    keys = [name] + [f"{name}@{b}" for b in params.golden[1:]]
    assert all(k in golden for k in keys), f"no golden state for {keys}: run tests/golden/make_golden.py"


UNITS = {"update": PrivacyUnit.update(), "entry": PrivacyUnit.entry(2), "person": PrivacyUnit.person(3, 2)}


@pytest.mark.parametrize("name,budget", CASES)
@pytest.mark.parametrize("unit", ["update", "entry", "person"])
def test_spending_the_whole_ledger_states_the_configured_budget(name, budget, unit):
    """What a mechanism states about its spend (``stated_spend``: the ledger's
    spend as the guarantee for the configured unit, in the configured currency)
    is, for the ledger's whole cap, the configured budget: group privacy (or the
    mechanism's own accounting, ``ledger_unit``) and the currency conversion
    undo the split exactly (an (eps, delta) target under Gaussian noise: the
    largest rho whose conversion fits, so eps to the bisection's precision);
    under an entry unit with Gaussian noise group privacy in zCDP states less
    than the target, never more."""
    spec = MECHANISMS[name]
    if unit not in spec.units:
        pytest.skip(f"{name} does not serve the {unit} unit (refused: the test below)")
    config = config_for(budget, unit=UNITS[unit])
    cap = spec.ledger_budget(config)
    assert cap == spec.core_cls(config, options=options_for(name)).ledger.budget
    configured, charged = spec.stated_spend(config, as_vector(cap))
    target = dataclasses.asdict(config.budget)
    assert all(configured[k] <= v * (1 + 1e-12) for k, v in target.items())
    if unit == "update" or not config.gaussian or spec.core_cls.ledger_unit == "configured":
        assert {k: configured[k] for k in target} == pytest.approx(target, rel=1e-6)
    assert tuple(charged.values()) == as_vector(cap)
    fields = spec.spend_fields(config, as_vector(cap))
    assert {k[: -len("_spent")] for k in fields if k != "update_level_spent"} == set(configured)
    assert fields["update_level_spent"] in (charged, None)
    assert spec.stated_total(config).keys() == configured.keys()


@pytest.mark.parametrize("name", NAMES)
def test_the_entry_checks_its_settings_and_plans_every_query_set_once(name):
    """An entry's contract settings pass its own check (the one a pipeline runs
    before it starts), and its plan answers every query set exactly once with
    shares that add up to the whole budget."""
    spec = MECHANISMS[name]
    config = config_for(checks(name).budgets[0])
    spec.check(config, options_for(name), end_tick=120, every_ticks=1)
    plan = spec.plan(config, options_for(name), end_tick=120, every_ticks=1)
    assert sorted(q for p in plan for q in p.queries) == sorted(q.name for q in QUERIES)
    assert math.fsum(p.share for p in plan) == pytest.approx(1.0)
    assert all(p.text().startswith(", ".join(p.queries) + " -> " + p.mechanism) for p in plan)


@pytest.mark.parametrize("name", NAMES)
def test_the_entry_serves_its_units_and_refuses_the_others_naming_the_key(name):
    """Every privacy unit an entry lists (``MechanismSpec.units``) passes its check and gets a plan
    that states, under an entry or a person unit, how each query set's noise is calibrated for it
    (sensitivity by contribution or group privacy, with its multiplier; none where the ledger
    charges the unit by the mechanism's own accounting, the changelog releases); every other unit
    is refused before the run, in one line naming ``privacy.unit``."""
    spec = MECHANISMS[name]
    assert set(spec.units) <= set(UNITS) and "update" in spec.units
    for kind, unit in UNITS.items():
        config = config_for(checks(name).budgets[0], unit=unit)
        if kind not in spec.units:
            with pytest.raises(ValueError, match=rf"^privacy\.unit: {kind} is not served by mechanism\.kind {name}"):
                spec.check(config, options_for(name), end_tick=120, every_ticks=1)
            continue
        spec.check(config, options_for(name), end_tick=120, every_ticks=1)
        plan = spec.plan(config, options_for(name), end_tick=120, every_ticks=1)
        for p in plan:
            stated = [c.query for c in p.calibrations]
            own = MECHANISMS[p.mechanism].core_cls.ledger_unit == "configured" and p.mechanism != "net_change"
            if kind == "update" or own:
                assert stated == [], (kind, p)
            else:
                assert stated == list(p.queries), (kind, p)
                assert all(c.method in ("contribution", "group") and c.multiplier >= 1 for c in p.calibrations)
    net = MECHANISMS["net_change"]
    assert "person" in net.units and "person" in MECHANISMS["auto"].units


# ---------------------------------------------------------------------------
# noise off: exact
# ---------------------------------------------------------------------------


def truth(batches, upto):
    live = {}
    for tick, ups in batches:
        if tick > upto:
            break
        for u in ups:
            if u.op == "delete":
                live.pop(u.entry_id, None)
            else:
                live[u.entry_id] = u.item
    items = list(live.values())
    hist = np.bincount([i[1] for i in items], minlength=4)
    lin_hist = np.bincount([i[2] for i in items], minlength=3)
    lin = np.asarray(QUERIES[2].matrix) @ lin_hist
    return {"n": [float(len(items))], "h": hist.astype(float).tolist(), "lin": lin.tolist()}


@pytest.mark.parametrize("name,budget", CASES)
def test_noise_off_answers_are_exact(name, budget):
    batches = workload(name, seed=1)
    core = MECHANISMS[name].core_cls(config_for(budget), stream="s", options=options_for(name))
    released = answers(run(core, batches, NoiseSource.disabled()))
    released += answers([core.advance(2000, NoiseSource.disabled())])
    assert len({r[1] for r in released}) >= 3
    window = core.window_ticks  # a sliding-window release: each answer is the change over the last window
    for _, tick, _, q, est, bound, _ in released:
        expect = truth(batches, tick)[q]
        if window:
            expect = (np.asarray(expect) - np.asarray(truth(batches, tick - window)[q])).tolist()
        assert est == pytest.approx(expect, abs=1e-6), (tick, q)
        assert bound == 0


# ---------------------------------------------------------------------------
# state: versioned round trips and pickling
# ---------------------------------------------------------------------------


def _through_state(core, name, config, options, end_tick=None):
    data = encode(core.to_state())
    assert isinstance(data, bytes)
    return MECHANISMS[name].core_cls.from_state(config, decode(data), options=options, end_tick=end_tick)


@pytest.mark.parametrize("name,budget", CASES)
@pytest.mark.parametrize("how", ["state", "pickle"])
def test_interrupted_run_continues_identically(name, budget, how):
    """Interrupt the run at three points, restore, continue: the releases,
    the node outputs, the spend and the schedule are those of the
    uninterrupted run."""
    config, options = config_for(budget), options_for(name)
    cls = MECHANISMS[name].core_cls
    noise = NoiseSource(KEY).for_release(REL)
    batches = workload(name, ticks=90, seed=2)
    whole = cls(config, stream="s", emit_nodes=True, options=options, end_tick=400)
    pieces = cls(config, stream="s", emit_nodes=True, options=options, end_tick=400)
    got_whole, got_pieces = [], []
    for i, (t, ups) in enumerate(batches):
        got_whole += answers([whole.process_tick(t, ups, noise)])
        got_pieces += answers([pieces.process_tick(t, ups, noise)])
        if i in (5, 30, 70):
            if how == "state":
                registry = pieces.registry  # the in-memory registry is part of the state too
                pieces = _through_state(pieces, name, config, options, end_tick=400)
                assert pieces.registry.entries == registry.entries
            else:
                pieces = pickle.loads(pickle.dumps(pieces))
        assert pieces.next_wake == whole.next_wake and pieces.finished == whole.finished
        assert as_vector(pieces.spent) == as_vector(whole.spent)
        assert [vars(n) | {"values": n.values.tolist()} for n in pieces.drain_node_outputs()] == [
            vars(n) | {"values": n.values.tolist()} for n in whole.drain_node_outputs()
        ]
    got_whole += answers(whole.run_to_end(noise))
    got_pieces += answers(_through_state(pieces, name, config, options, end_tick=400).run_to_end(noise))
    assert got_pieces == got_whole and got_whole


@pytest.mark.parametrize("name", NAMES)
def test_state_refuses_another_configuration_or_mechanism(name):
    from transforms.core.foundation.state import StateError

    cls = MECHANISMS[name].core_cls
    first, second = checks(name).budgets[:2]
    options = options_for(name)
    state = cls(config_for(first), stream="s", options=options).to_state()
    with pytest.raises(StateError, match="another configuration"):
        cls.from_state(config_for(second), state, options=options)
    other = NAMES[(NAMES.index(name) + 1) % len(NAMES)]
    with pytest.raises(StateError, match="cannot restore"):
        MECHANISMS[other].core_cls.from_state(config_for(checks(other).budgets[0]), state, options=options_for(other))
    with pytest.raises(StateError, match="newer than this library"):
        cls.from_state(config_for(first), {**state, "schema": 99}, options=options)


# ---------------------------------------------------------------------------
# the ledger follows the plan
# ---------------------------------------------------------------------------


def _close(a, b):
    va, vb = as_vector(a), as_vector(b)
    return len(va) == len(vb) and all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300) for x, y in zip(va, vb))


def check_ledger_plan(name, budget, ticks=120, seed=3):
    """Every ledger record costs what the mechanism's stated plan
    (``planned_cost``: its docs page's formulas) says at its coordinates; every
    released piece of the data structure was charged; the spend is within the
    cap."""
    config, options = config_for(budget), options_for(name)
    top = MECHANISMS[name].core_cls(config, stream="s", emit_nodes=True, options=options)
    parts = top.ledger_parts()  # a composite mechanism: every part keeps its own ledger
    for core in parts:
        core.ledger.keep_records = True
    noise = NoiseSource(KEY).for_release(REL)
    batches = grow_then_shrink(name, ticks=ticks, seed=seed)
    run(top, batches, noise)
    top.advance(settle_tick(name, ticks), noise)
    nodes = top.drain_node_outputs()
    records = []
    for core in parts:
        # each part's share of the configured budget is its share of the query sets
        k = len(core.config.queries) / len(config.queries)
        assert _close(core.config.budget, config.budget.scale(k)), (core.name, core.config.budget)
        assert core.ledger.records
        for rec in core.ledger.records:
            expect = core.planned_cost(rec.coordinates, nodes)
            assert _close(rec.cost, expect), (rec.coordinates, rec.cost, expect)
        records += core.ledger.records
    # every released piece of the data structure was charged, at its coordinates
    charged = Counter(tuple(r.coordinates) for r in records)
    for n in nodes:
        if n.kind in ("static", "n_hat", "deletion_counter"):
            coords = tuple(n.coordinates)
            if "step" in coords:  # a factorization counter: one charge, at its first step, for the stream
                coords = coords[: coords.index("step")]
            assert charged[coords] >= 1, ("released without a charge", n.coordinates)
    # the cap: the configuration's ledger budget, or the release's own tight Gaussian account (issue 31)
    tight = isinstance(top.ledger.budget, TightGaussian)
    spent, cap = as_vector(top.spent), as_vector(top.ledger.budget if tight else top.config.ledger_budget)
    assert all(s <= c * (1 + 1e-12) for s, c in zip(spent, cap))
    return records, nodes


@pytest.mark.parametrize("name,budget", CASES + STRESS)
def test_ledger_charges_equal_the_plan(name, budget):
    check_ledger_plan(name, budget)


# ---------------------------------------------------------------------------
# no noise coordinate is ever drawn twice
# ---------------------------------------------------------------------------

DRAWN: list = []


class SpyNoise(NoiseSource):
    """Records every coordinate a stream is requested at (and the release)."""

    def stream(self, *coords):
        DRAWN.append((getattr(self.release, "release_id", None),) + tuple(coords))
        return super().stream(*coords)

    def for_release(self, release):
        out = super().for_release(release)
        spy = SpyNoise(out._key)
        spy.release = release
        return spy


def check_no_repeated_coordinates(name, budget="pure-paper", ticks=120):
    DRAWN.clear()
    noise = SpyNoise(KEY).for_release(REL)
    config, options = config_for(budget), options_for(name)
    for stream in ("a", "b"):
        core = MECHANISMS[name].core_cls(config, stream=stream, options=options)
        run(core, grow_then_shrink(name, ticks=ticks, seed=4), noise)
        core.advance(settle_tick(name, ticks), noise)
    repeated = [c for c, n in Counter(DRAWN).items() if n > 1]
    assert DRAWN and not repeated, f"noise drawn twice at {repeated[:3]}"


@pytest.mark.parametrize("name,budget", CASES + STRESS)
def test_noise_coordinates_never_repeat_in_memory(name, budget):
    check_no_repeated_coordinates(name, budget)


# ---------------------------------------------------------------------------
# Beam releases exactly what the mechanism releases
# ---------------------------------------------------------------------------


def _records(name, ticks=40, seed=5):
    recs = []
    for tick, ups in workload(name, ticks=ticks, seed=seed):
        for j, u in enumerate(ups):
            recs.append(UpdateRecord(tick - 0.5, u.op, u.entry_id, u.item, "a", j))
    return recs


def _in_memory(name, config, options, spec, records, transform):
    noise = NoiseSource(KEY).for_release(transform.release)
    out = []
    for stream in spec.streams:
        core = MECHANISMS[name].core_cls(config, stream=stream, options=options, end_tick=spec.end_tick)
        by_tick = {}
        for r in sorted((r for r in records if r.stream == stream), key=lambda r: (spec.tick_of(r.event_time), r.seq)):
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
        results = [core.process_tick(t, ups, noise) for t, ups in sorted(by_tick.items())]
        results += core.run_to_end(noise)
        out += [(a.stream, a.tick, a.query, tuple(float(x) for x in a.estimate)) for r in results for a in r.answers]
    return sorted(out)


def streaming_options():
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("path", ["bounded", "streaming"])
def test_beam_transform_equals_the_mechanism(name, path):
    config, options = config_for("pure-tuned"), options_for(name)
    spec = StreamSpec(streams=("a", "idle"), tick_seconds=1.0, end_time=60.0)
    records = _records(name)
    t = ReleaseContinually(name, config, spec, NoiseKey.fixed(KEY.hex()), options=options, release=REL)
    expect = _in_memory(name, config, options, spec, records, t)
    assert any(e[0] == "idle" for e in expect) and any(e[0] == "a" for e in expect)
    opts = streaming_options() if path == "streaming" else PipelineOptions(runner=FNAPI_RUNNER)
    with TestPipeline(options=opts) as p:
        if path == "streaming":
            ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in records])
            wm = 0.0
            while wm < 300:
                wm += 0.5 if wm < 70 else 20.0
                ts = ts.advance_watermark_to(wm)
            src = p | ts.advance_watermark_to_infinity()
        else:
            src = p | beam.Create(records) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        out = src | t
        got = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.query, a.estimate))
        assert_that(got, equal_to(expect))


# ---------------------------------------------------------------------------
# report collectors (input_kind "reports", trust "local"): the analogous checks
# ---------------------------------------------------------------------------


def _report_config(name, budget=None):
    return DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), budget or PureDP(8.0))


@pytest.mark.parametrize("name", REPORT_NAMES)
def test_report_collector_entry_is_complete(name):
    """Docstring with the privacy statement, proof note naming it, options
    that validate, local trust, and no ledger of its own (it adds no noise)."""
    spec = MECHANISMS[name]
    cls = spec.core_cls
    assert spec.trust == "local" and cls.name == name and cls.options_cls is spec.options_cls
    doc = cls.__doc__ or ""
    assert len(doc.split()) >= 20 and "privacy" in doc.lower() and "no noise" in doc.lower(), doc
    proof = ROOT / spec.proof
    assert proof.is_file() and (name in proof.read_text() or cls.__name__ in proof.read_text())
    spec.options_cls()
    with pytest.raises((TypeError, ValueError)):
        spec.options(no_such_option=1)
    assert set(spec.query_kinds) <= set(QUERY_KINDS)


@pytest.mark.parametrize("name,variant", [(n, i) for n in REPORT_NAMES for i in range(len(checks(n).variants))])
@pytest.mark.parametrize("how", ["state", "pickle"])
def test_report_collector_interrupted_run_continues_identically(name, variant, how):
    """State (to_state -> bytes -> from_state) and pickling, taken at three
    points, continue exactly like the uninterrupted run; another
    configuration is refused."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.foundation.state import StateError

    config = _report_config(name)
    options = MECHANISMS[name].options(**checks(name).variants[variant])
    cls = MECHANISMS[name].core_cls
    whole = cls(config, stream="s", options=options, end_tick=30)
    pieces = cls(config, stream="s", options=options, end_tick=30)
    sim = simulate(whole.design, 300, 24, seed=3)
    by_tick = {}
    for _, rep in sim.reports:
        counts = by_tick.setdefault(rep.period, {}).setdefault(rep.layer, [0] * whole.design.num_symbols)
        counts[(0 if rep.old is None else rep.old + 1) * 4 + (0 if rep.new is None else rep.new + 1)] += 1
    got_whole, got_pieces = [], []
    for i, tick in enumerate(sorted(by_tick)):
        got_whole += whole.apply(tick, by_tick[tick])
        got_pieces += pieces.apply(tick, by_tick[tick])
        if i in (2, 9, 17):
            if how == "state":
                pieces = cls.from_state(config, decode(encode(pieces.to_state())), options=options, end_tick=30)
            else:
                pieces = pickle.loads(pickle.dumps(pieces))
        assert pieces.next_wake == whole.next_wake and pieces.last_tick == whole.last_tick
    got_whole += whole.run_to_end()
    got_pieces += cls.from_state(config, decode(encode(pieces.to_state())), options=options, end_tick=30).run_to_end()
    assert got_pieces == got_whole and len(got_whole) == 30
    with pytest.raises(StateError, match="another configuration"):
        cls.from_state(_report_config(name, PureDP(4.0)), pieces.to_state(), options=options, end_tick=30)
