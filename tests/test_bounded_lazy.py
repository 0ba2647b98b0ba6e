"""The bounded release step computes a stream's records as they leave (``ReleaseStep.bounded``): the same
records, in the same order, as feeding the whole input, running to the end and emitting the list
(``StreamStep.bounded``), for every registry entry, budget kind and unit the privacy harness runs; and it
holds no run's worth of releases (a year of one-minute periods held ~1.3 GB of them before).

In memory, noise on (a fixed key): the two paths must agree draw for draw. The step through ticks without
data is made small (1 and 7 ticks) so that every gap and the run to the end go through
``advance_in_steps``."""

from __future__ import annotations

import pytest
from apache_beam.pvalue import TaggedOutput

import transforms.common as common
from tests import privacy_harness as H
from transforms.common import BOUNDED_STEP_TICKS, ReleaseStep
from transforms.core import DynamicConfig, PureDP, QuerySet
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.core.mechanisms import MECHANISMS
from transforms.per_stream import StreamStep
from transforms.records import NoiseKey
from transforms.spec import StreamSpec

KEY_HEX = bytes(range(32)).hex()
REL = ReleaseIdentity("test-release-lazy")
END = 40
# data in ticks 1..12 and 27..31 only: a gap of 14 ticks, and 9 ticks without data before the end
DATA_TICKS = set(range(1, 13)) | set(range(27, 32))

STREAM_MECHANISMS = [n for n, s in MECHANISMS.items() if s.input_kind != "reports" and n != "pmwg"]


def _settings(names=STREAM_MECHANISMS):
    out = []
    for s in H.settings(names, unit_kinds=("update", "entry")):
        if s.unit not in (H.PrivacyUnit.update(), H.PrivacyUnit.entry(2)):  # one unit of each kind
            continue
        for every in (None, 4):
            s2 = H.Setting(s.name, s.budget, s.unit, end_tick=END, every_ticks=every)
            try:
                s2.check()
            except ValueError:
                continue
            out.append(s2)
    return out


SETTINGS = _settings()
# the core-level comparison also takes the entry that answers queries (its core, without queries)
GROUPING_SETTINGS = SETTINGS + _settings(["pmwg"])


def _aggregates(setting) -> list:
    """The tick aggregates the registry step would give for the harness's background stream, with the
    ticks outside ``DATA_TICKS`` left out (deletes of a left-out entry are refused there too)."""
    reg = _step(setting).new_core("s").registry
    out = []
    deletions = setting.spec.deletions_allowed
    for t, updates in H.merge(H.background(END, deletions=deletions, seed=3)):
        if t not in DATA_TICKS:
            continue
        batch, _ = reg.resolve_tick(t, updates)
        ins, dele = {}, {}
        for item in batch.inserts:
            ins[item] = ins.get(item, 0) + 1
        for item_tick in batch.deletes:
            dele[item_tick] = dele.get(item_tick, 0) + 1
        if ins or dele:
            out.append((t, ins, dele, batch.n_updates))
    return out


def _step(setting) -> ReleaseStep:
    spec = StreamSpec(streams=("s",), tick_seconds=1.0, end_time=float(END), every_ticks=setting.every_ticks)
    mech = setting.spec
    opts = mech.options(**{**mech.checks.options, **setting.options})
    step = ReleaseStep(spec, setting.config(), mech, NoiseKey.fixed(KEY_HEX), True, options=opts, release=REL)
    step.setup()
    return step


def _split(records) -> tuple[list, list]:
    """(answers, node records), each in the order emitted, as comparable values."""
    answers, nodes = [], []
    for r in records:
        if isinstance(r, TaggedOutput):
            nodes.append((r.tag, repr(r.value.value), r.value.timestamp))
        else:
            answers.append((repr(r.value), r.timestamp))
    return answers, nodes


def _run(setting, lazy: bool) -> tuple[list, list]:
    step = _step(setting)
    core = step.new_core("s")
    aggs = _aggregates(setting)
    run = step.bounded if lazy else (lambda *a: StreamStep.bounded(step, *a))
    return _split(run(core, [aggs], [], step.spec.final_at))


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s.name}-{s.budget}-{H.unit_id(s.unit)}-{s.every_ticks}")
def test_the_lazy_bounded_path_gives_the_list_paths_records_in_order(setting, monkeypatch):
    expect = _run(setting, lazy=False)
    assert expect[0], "the setting released nothing: the comparison would be empty"
    for step, block in ((1, 1), (7, 3)):  # every gap (14 ticks) and the run to the end (9) in steps
        monkeypatch.setattr(common, "BOUNDED_STEP_TICKS", step)
        monkeypatch.setattr(common, "BOUNDED_BLOCK_RESULTS", block)
        got = _run(setting, lazy=True)
        assert got[0] == expect[0], (setting, step)
        assert got[1] == expect[1], (setting, step)


def test_every_stream_mechanism_is_compared():
    """The settings above cover every registry entry a ``ReleaseStep`` runs (the local-DP collector has its
    own step; ``pmwg`` answers queries through ``AnswerStep``, which keeps the list path)."""
    assert {s.name for s in SETTINGS} == set(STREAM_MECHANISMS)
    assert {s.every_ticks for s in SETTINGS} == {None, 4}


def test_the_lazy_path_computes_as_it_emits_and_advances_in_steps(monkeypatch):
    """A long run whose data stops early, computed two results at a time: the first record leaves when the
    core has applied the first two ticks, and no call advances more than ``BOUNDED_STEP_TICKS`` ticks at
    once. The list path (the twin) has run to the end before its first record. (Blocks of periods computed at
    once, ``BLOCK_TICKS``, are off here: with them the first record leaves after the first block, below.)"""
    monkeypatch.setattr(common, "BOUNDED_BLOCK_RESULTS", 2)
    monkeypatch.setattr(common, "BLOCK_TICKS", 1)
    end = 3 * BOUNDED_STEP_TICKS + 100
    spec = StreamSpec(streams=("s",), tick_seconds=1.0, end_time=float(end))
    mech = MECHANISMS["auto"]
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(1.0))

    def fresh():
        step = ReleaseStep(spec, cfg, mech, NoiseKey.fixed(KEY_HEX), False, release=REL)
        step.setup()
        core = step.new_core("s")
        spans = []
        advance = core.advance

        def counted(tick, noise):
            spans.append(tick - core.last_tick)
            return advance(tick, noise)

        core.advance = counted
        return step, core, spans

    aggs = [(t, {(0, t % 4): 1}, {}, 1) for t in range(1, 6)]
    step, core, spans = fresh()
    records = step.bounded(core, [aggs], [], spec.final_at)
    next(records)
    assert core.last_tick == 2
    n = 1 + sum(1 for _ in records)
    assert core.last_tick == end and core.finished
    assert max(spans) <= BOUNDED_STEP_TICKS
    assert n == end * len(cfg.queries)  # an answer per query set per tick
    monkeypatch.setattr(common, "BLOCK_TICKS", 3)  # blocks of at most 3 ticks: tick 1 alone, then ticks 2 .. 4
    step, core, spans = fresh()
    records = step.bounded(core, [aggs], [], spec.final_at)
    next(records)
    assert core.last_tick == 4
    assert 1 + sum(1 for _ in records) == end * len(cfg.queries) and core.finished
    step, core, spans = fresh()
    twin = StreamStep.bounded(step, core, [aggs], [], spec.final_at)
    next(twin)
    assert core.last_tick == end  # the list path computed the whole run first
    assert max(spans) > BOUNDED_STEP_TICKS


def test_advance_in_steps_refuses_a_step_below_one():
    step = _step(SETTINGS[0])
    core = step.new_core("s")
    with pytest.raises(ValueError, match="step must be >= 1"):
        list(core.advance_in_steps(10, step.noise, 0))


@pytest.mark.parametrize(
    "setting", GROUPING_SETTINGS, ids=lambda s: f"{s.name}-{s.budget}-{H.unit_id(s.unit)}-{s.every_ticks}"
)
def test_the_records_do_not_depend_on_how_calls_group_the_ticks(setting):
    """One ``apply`` per tick with data and one ``advance`` to the end (the bounded run, an in-memory caller)
    against one call per wake (the streaming step: ``_one_wake_per_firing``), estimates, bounds and spends.
    A segmented mechanism with periods gave a period between closes, released in a call that also crossed a
    later close, the drift bound of the later segment (stop 58; a gap of 14 ticks here)."""
    from tests.test_beam_releases import _one_wake_per_firing

    def answers(results):
        return [(a.tick, a.query, repr(a.estimate), a.error_bound, repr(a.spent)) for r in results for a in r.answers]

    step = _step(setting)
    core, aggs = step.new_core("s"), _aggregates(setting)
    grouped = answers(common.apply_in_order(core, aggs, step.noise) + core.run_to_end(step.noise))
    step = _step(setting)
    core = step.new_core("s")
    assert grouped == answers(_one_wake_per_firing(core, aggs, step.noise))


def _collector_parts(design, end: int, gap: range) -> list:
    """The local-DP collector's input (``(tick, layer, symbol counts)``) of a simulated run, no report in ``gap``."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.families.rr_client import symbol_of

    counts: dict[tuple[int, int], list[int]] = {}
    for _, rep in simulate(design, 150, end, seed=21).reports:
        if rep.period not in gap:
            c = counts.setdefault((rep.period, rep.layer), [0] * design.num_symbols)
            c[symbol_of(rep.old, rep.new, design.domain_size)] += 1
    return [[(t, layer, c) for (t, layer), c in sorted(counts.items())]]


@pytest.mark.parametrize("aggregation", ["direct", "hdcr"])
def test_the_local_dp_collectors_lazy_bounded_path_gives_the_list_paths_records(aggregation, monkeypatch):
    """The collector's step (``CollectStep.bounded``): the same releases in the same order as the list path, in
    steps of 1 and 7 ticks and blocks of 1 and 3; with blocks of 2 the first release leaves after two ticks."""
    from transforms.core.families.local_dp import RROptions
    from transforms.local_dp import CollectStep

    end = 40
    spec = StreamSpec(streams=("s",), tick_seconds=1.0, end_time=float(end))
    cfg = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(8.0))
    opts = RROptions(max_mutations=2, aggregation=aggregation)
    step = CollectStep(cfg, opts, spec)
    parts = _collector_parts(step.new_core("s").design, end, range(13, 27))
    assert {t for t, _, _ in parts[0]} & set(range(27, 41))  # reports after the gap too

    def run(lazy):
        core = step.new_core("s")
        records = step.bounded if lazy else (lambda *a: StreamStep.bounded(step, *a))
        return [(repr(r.value), r.timestamp) for r in records(core, parts, [], spec.final_at)]

    expect = run(lazy=False)
    assert len(expect) == end
    for n_step, block in ((1, 1), (7, 3)):
        monkeypatch.setattr(common, "BOUNDED_STEP_TICKS", n_step)
        monkeypatch.setattr(common, "BOUNDED_BLOCK_RESULTS", block)
        assert run(lazy=True) == expect, (n_step, block)
    monkeypatch.setattr(common, "BOUNDED_BLOCK_RESULTS", 2)
    core = step.new_core("s")
    records = step.bounded(core, parts, [], spec.final_at)
    next(records)
    assert core.last_tick == 2


def test_the_bounded_path_draws_node_noise_ahead_and_drops_it_at_the_end(monkeypatch):
    """``ReleaseStep.bounded`` marks its source for drawing ahead (``NoiseSource.drawing_ahead``): a long k-ary
    run draws its nodes' noise in blocks (the records are the list path's, above), and when the stream's run
    ends no block is left in memory. The list path (a streaming step's) draws none."""
    from transforms.core.counters import base as counter_base
    from transforms.core.static import linear

    rows = []
    real = linear.discrete_laplace_rows
    monkeypatch.setattr(linear, "discrete_laplace_rows", lambda *a: rows.append(len(a[0])) or real(*a))
    spec = StreamSpec(streams=("s",), tick_seconds=1.0, end_time=3000.0)
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(1.0))
    step = ReleaseStep(spec, cfg, MECHANISMS["auto"], NoiseKey.fixed(KEY_HEX), False, release=REL)
    step.setup()
    aggs = [(t, {(0, t % 4): 1}, {}, 1) for t in range(1, 60)]
    counter_base.forget_noise_ahead()
    lazy = [repr(r.value) for r in step.bounded(step.new_core("s"), [aggs], [], spec.final_at)]
    assert max(rows) == counter_base.AHEAD_MAX and sum(rows) > 4000  # blocks, up to 1,024 nodes
    assert not counter_base._AHEAD  # dropped at the end of the run
    rows.clear()
    listed = StreamStep.bounded(step, step.new_core("s"), [aggs], [], spec.final_at)
    assert [repr(r.value) for r in listed] == lazy and not rows and not counter_base._AHEAD
