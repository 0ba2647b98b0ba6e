"""The streaming path when the watermark jumps several ticks at once (a starved process, a backlog, a
restart): every update is applied at its own tick, on the DirectRunner too.

The DirectRunner holds no watermark for a stateful stage's pending timers
(``apache_beam/runners/direct/direct_userstate.py``: "TODO(ccy): add corresponding watermark holds after the
DirectRunner allows for keyed watermark holds"; ``transform_evaluator._ParDoEvaluator`` returns no holds):
when the watermark passes the close of tick t and the release time of tick t in one step, the registry
step's close of t and the per-stream release of t fire in the same round, and the release missed the
updates still being resolved (one to four ticks late under a CPU hog in the Pub/Sub test). The registry step
now sends per-tick update counts, and the per-stream step waits until a tick's count is back to 0
(``transforms.streaming.counts_gate``). A TestStream makes the jump deterministic; the twin turns the counts
off and must fail the same way the old code did."""

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import BeamAssertException, assert_that, equal_to
from test_beam_releases import CFG, KEY_HEX, REL, in_memory, noise_of, streaming_options, workload

import transforms.releases as releases_module
import transforms.streaming as streaming_module
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseFullyDynamic, StreamSpec
from transforms.streaming import counts_gate

SPEC = StreamSpec(streams=("a", "b"), tick_seconds=10.0, end_time=400.0)


def _jumping(recs, jump: float) -> TestStream:
    """Every update on time (added before the watermark moves), then the watermark in steps of ``jump``
    seconds (a tick is 10 s; the release of tick t is due one tick after its close)."""
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in recs])
    wm = 0.0
    while wm < 3000.0:
        wm += jump
        stream = stream.advance_watermark_to(wm)
    return stream.advance_watermark_to_infinity()


def _run(recs, jump: float, tick_merge: str = "auto") -> None:
    t = ReleaseFullyDynamic(CFG, SPEC, NoiseKey.fixed(KEY_HEX), release=REL, tick_merge=tick_merge)
    expect = in_memory(recs, SPEC, CFG, noise_of(t))
    with TestPipeline(options=streaming_options()) as p:
        out = p | _jumping(recs, jump) | t
        answers = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.segment, a.query, a.estimate))
        assert_that(answers, equal_to(expect))


RECS = [r for r in workload(streams=("a", "b"), n=120, seed=5) if r.event_time < 80.0]


@pytest.mark.parametrize("jump", [35.0, 1000.0])
def test_watermark_jumps_of_several_ticks_release_every_update_at_its_tick(jump):
    """Jumps of 3.5 ticks and of 100 ticks: the releases equal the core's, update for update (the old code
    released ticks 2 and 4 without their last updates here)."""
    _run(RECS, jump)


def test_watermark_jump_twin_without_the_counts_fails(monkeypatch):
    """The twin: the registry step and the per-stream step built without the counts (the old wiring) give
    releases that miss updates at a jump of 3.5 ticks, so the test above can fail."""
    monkeypatch.setattr(releases_module, "counts_gate", lambda choice, pipeline: False)  # the registry step's
    monkeypatch.setattr(streaming_module, "counts_gate", lambda choice, pipeline: False)  # the per-stream step's
    with pytest.raises(BeamAssertException, match="unexpected elements"):
        _run(RECS, 35.0)


def test_stateful_tick_merge_on_the_direct_runner_releases_every_update_at_its_tick():
    """``tick_merge: stateful`` on the DirectRunner: the merge step's flush timers hold no watermark either;
    the counts now go through it (the resolved ones with their aggregates), and a jump of 3.5 ticks gives
    the core's releases (main at 734db70 missed updates here)."""
    _run(RECS, 35.0, tick_merge="stateful")


def test_stateful_tick_merge_twin_without_the_counts_fails(monkeypatch):
    """The twin: the stateful merge without the counts (the wiring before) misses updates at the same jump."""
    monkeypatch.setattr(releases_module, "counts_gate", lambda choice, pipeline: False)
    monkeypatch.setattr(streaming_module, "counts_gate", lambda choice, pipeline: False)
    with pytest.raises(BeamAssertException, match="unexpected elements"):
        _run(RECS, 35.0, tick_merge="stateful")


def test_late_update_under_the_counts_still_applied_at_the_current_tick():
    """An update that arrives after its tick was resolved (truly late: the watermark passed it) is
    counted and resolved at the entry's next tick like before; the counts never hold a release
    forever (the run ends, the later releases include it)."""
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="current", end_time=300.0)
    early = [UpdateRecord(1.0 + i, "insert", f"x{i}", (0, 1), "a", i) for i in range(5)]
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in early])
    stream = stream.advance_watermark_to(40.0)
    late = UpdateRecord(2.0, "delete", "x0", None, "a", 99)  # its tick (1) is long over
    stream = stream.add_elements([beam.window.TimestampedValue(late, 2.0)]).advance_watermark_to(5000.0)
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | ReleaseFullyDynamic(CFG, spec, NoiseKey.disabled())
        last = out["answers"] | beam.Filter(lambda a: a.query == "n" and a.tick >= 16) | beam.Map(lambda a: a.estimate)
        assert_that(last, equal_to([(4.0,), (4.0,)]))  # closes at ticks 16 and 256


def test_counts_only_where_the_runner_holds_no_watermark_for_timers():
    """The counts are the DirectRunner's (whatever the tick merge); Flink, Dataflow and the portable runners hold
    the watermark for the registry step's timers and keep their graph and state names unchanged."""

    class FakePipeline:
        def __init__(self, runner):
            self.runner = runner

    direct = type("BundleBasedDirectRunner", (), {})()
    portable = type("FlinkRunner", (), {})()
    assert all(counts_gate(c, FakePipeline(direct)) for c in ("auto", "stateful", "bundle"))
    assert not any(counts_gate(c, FakePipeline(portable)) for c in ("auto", "stateful", "bundle"))


# ---------------------------------------------------------------------------
# The person unit: the person step emits from a timer, ahead of the registry
# ---------------------------------------------------------------------------

PERSON_SPEC = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=80.0)


def _run_person(jump: float, tick_merge: str = "auto") -> None:
    from test_person_beam import CFG as PCFG
    from test_person_beam import REL as PREL
    from test_person_beam import _answer_key, person_workload, reference

    from transforms.core import NoiseSource

    recs = person_workload(n=160, seed=2)
    t = ReleaseFullyDynamic(PCFG, PERSON_SPEC, NoiseKey.fixed(KEY_HEX), release=PREL, tick_merge=tick_merge)
    expect, _ = reference(recs, PERSON_SPEC, PCFG, NoiseSource.from_hex(KEY_HEX).for_release(t.release))
    with TestPipeline(options=streaming_options()) as p:
        out = p | _jumping(recs, jump) | t
        assert_that(out["answers"] | beam.Map(_answer_key), equal_to(expect))


@pytest.mark.parametrize("jump", [17.5, 500.0])
@pytest.mark.parametrize("tick_merge", ["auto", "stateful"])
def test_person_unit_watermark_jumps_release_every_update_at_its_tick(tick_merge, jump):
    """The person unit, watermark jumps of 3.5 and of 100 ticks (a tick is 5 s here): the releases equal the
    in-memory reference's, update for update. The person step emits from a timer, so the per-stream step
    could release tick t before the person step had decided t's updates (main at 734db70 missed some at
    ticks 2 and 4 of both streams); the person step now counts its updates into the gate
    (``BoundPersonsFn(counts=True)``, the registry taking each admitted update's count over; with the
    stateful merge they go through it). At a jump of 100 ticks the DirectRunner also hands the person step's
    firings to the registry out of tick order (main at f21f38e: ``b`` ticks 4 and 16 and ``a`` tick 16
    released without updates the registry took as late, both merges); the person step now numbers each
    entry's updates and the registry holds one that comes ahead of an earlier one of its entry
    (``GatedBoundPersonsFn``, ``ResolveEntriesFn.in_order``)."""
    _run_person(jump, tick_merge)


@pytest.mark.parametrize("tick_merge", ["auto", "stateful"])
def test_person_unit_twin_without_the_entry_order_fails_at_a_jump_of_100_ticks(monkeypatch, tick_merge):
    """The twin: the registry resolving the person step's updates in the order they arrive (the numbers
    ignored, as on f21f38e) takes earlier updates as late at a jump of 100 ticks, so the test above can fail
    (6 of 6 runs failed here, 3 per merge)."""
    monkeypatch.setattr(streaming_module.ResolveEntriesFn, "in_order", False)
    with pytest.raises(BeamAssertException, match="unexpected elements"):
        _run_person(500.0, tick_merge)


class _RegistryWithoutUpstream(streaming_module.ResolveEntriesFn):
    """The registry as before the person step counted (the twin below)."""

    def __init__(self, *args, upstream_counts=False, **kwargs):
        super().__init__(*args, **kwargs)


def test_person_unit_twin_without_the_person_counts_fails(monkeypatch):
    """The twin: the person step without its counts (the registry keeping its own, as before) misses updates
    at the same jumps."""
    bound = releases_module.bound_persons
    monkeypatch.setattr(releases_module, "bound_persons", lambda v, s, lim, b, fn=None: bound(v, s, lim, b))
    monkeypatch.setattr(releases_module, "ResolveEntriesFn", _RegistryWithoutUpstream)
    with pytest.raises(BeamAssertException, match="unexpected elements"):
        _run_person(17.5)


def test_person_counts_pass_through_the_registry_and_are_taken_over():
    """The registry under ``upstream_counts``: the person step's count element touches no state and is
    summed into the bundle's counts; an update takes its count over (-1 at its tick, +1 where it is
    buffered: nothing leaves for it until it is resolved); a late one moved to the entry's next tick moves
    its count; a late one dead-lettered ends its count."""
    from transforms.per_stream import COUNTS

    class Cell:
        def __init__(self, v=None):
            self.v = v

        def read(self):
            return self.v

        def write(self, v):
            self.v = v

        def clear(self):
            self.v = None

    class Timer:
        def set(self, ts):
            self.ts = ts

    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="current")
    fn = streaming_module.ResolveEntriesFn(spec, (2,), True, counts=True, upstream_counts=True)
    fn.start_bundle()
    assert not list(fn.process((("a", COUNTS), (COUNTS, ((3, 2), (4, 1)))), Cell(), Timer()))
    up = (3, 1, "insert", (1,), 25.0, None, "e", "P", 1)  # the ninth field: its number in its entry's order
    assert not list(fn.process((("a", "1:P:e"), up), Cell(), Timer()))
    assert fn.deltas == {"a": {3: 2, 4: 1}}  # the update's count taken over, not added
    late = Cell((None, 5, None, ()))  # the entry resolved tick 5: tick 3 is late, applied at 6
    assert not list(fn.process((("a", "1:P:f"), up), late, Timer()))
    assert fn.deltas == {"a": {3: 1, 4: 1, 6: 1}}
    dead = streaming_module.ResolveEntriesFn(
        StreamSpec(streams=("a",), late_policy="dead_letter"), (2,), True, counts=True, upstream_counts=True
    )
    dead.start_bundle()
    assert [o.value.reason for o in dead.process((("a", "1:P:f"), up), Cell((None, 5, None, ())), Timer())] == ["late"]
    assert dead.deltas == {"a": {3: -1}}
    with pytest.raises(ValueError, match="counts=True"):
        streaming_module.ResolveEntriesFn(spec, (2,), True, upstream_counts=True)


def test_late_policy_dead_letter_a_new_entry_is_applied_at_the_next_tick_never_to_a_released_one():
    """``late_policy: dead_letter`` (``StreamSpec``'s docstring): a late update of an entry that has resolved
    its tick is dead-lettered ``late``; the late first insert of a NEW entry (its tick released long ago, the
    element behind the watermark) is not (its key has resolved nothing), and it is applied at the stream's
    next tick: the releases made before it arrived never include it, every release after it does. The
    released ticks before the late elements hold 5 entries, every later one 6 (x0's late delete dropped)."""
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="dead_letter", end_time=300.0)
    early = [UpdateRecord(1.0 + i, "insert", f"x{i}", (0, 1), "a", i) for i in range(5)]
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in early])
    stream = stream.advance_watermark_to(65.0)  # ticks up to 5 released
    late = [
        UpdateRecord(2.0, "delete", "x0", None, "a", 99),  # x0 resolved tick 1: late
        UpdateRecord(3.0, "insert", "y", (0, 1), "a", 100),  # a new entry of tick 1
    ]
    stream = stream.add_elements([beam.window.TimestampedValue(r, r.event_time) for r in late])
    stream = stream.advance_watermark_to(5000.0).advance_watermark_to_infinity()
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | ReleaseFullyDynamic(CFG, spec, NoiseKey.disabled())
        n = out["answers"] | beam.Filter(lambda a: a.query == "n") | beam.Map(lambda a: (a.tick, a.estimate[0]))
        assert_that(n, equal_to([(2, 5.0), (4, 5.0), (16, 6.0), (256, 6.0)]))  # the closes
        dead = out["dead_letters"] | beam.Map(lambda d: (d.reason, d.record.entry_id, d.stage))
        assert_that(dead, equal_to([("late", "x0", "registry")]), label="Dead")


def test_merge_step_passes_buffered_counts_on_and_flushes_resolved_ones_with_their_aggregates():
    """``MergeTickFn(counts=True)`` alone: a count of buffered updates goes on at once, with its timestamp
    (it holds the release); resolved counts wait in the bag with the aggregates and leave with them, in one
    element, so a tick's count reaches 0 downstream only with its aggregates there."""
    from test_beam_releases import _Bag, _Timer, _Value

    from transforms.per_stream import COUNTS
    from transforms.streaming import MergeTickFn

    spec = StreamSpec(tick_seconds=10.0)
    fn = MergeTickFn(spec, counts=True)
    bag, flush_tick, timer = _Bag(), _Value(), _Timer()
    ((on,),) = [fn.process((("a", 2), (COUNTS, 3)), buffer=bag, flush_tick=flush_tick, flush=timer, ts=20)]
    assert on.value == ("a", (COUNTS, (), ((2, 3),))) and on.timestamp == 20 and timer.at is None
    agg = (2, {(0,): 1}, {}, 1)
    assert fn.process((("a", 2), (COUNTS, agg, -2)), buffer=bag, flush_tick=flush_tick, flush=timer, ts=20) is None
    fn.process((("a", 2), (COUNTS, None, -1)), buffer=bag, flush_tick=flush_tick, flush=timer, ts=20)
    assert timer.at == fn._flush_time(2)
    out = [o.value for o in fn.on_flush(key=("a", 2), ts=timer.at, buffer=bag, flush_tick=flush_tick, flush=timer)]
    assert out == [("a", (COUNTS, (agg,), ((2, -3),)))]


class _Cell:
    def __init__(self, v=None):
        self.v = v

    def read(self):
        return self.v

    def write(self, v):
        self.v = v

    def clear(self):
        self.v = None


class _At:
    at = None

    def set(self, ts):
        self.at = ts


def test_registry_holds_an_update_that_comes_ahead_of_an_earlier_one_of_its_entry():
    """``GatedBoundPersonsFn`` numbers an entry's updates in the order it decides them (one firing per tick,
    as the DirectRunner fires them); the registry given them in reverse (as the DirectRunner's
    last-in-first-out queue can) holds the later one, counted at its tick, sets no timer, and takes both in
    order when the earlier one comes: neither is late. Without the order (the twin's registry) the earlier
    one is late once the entry has resolved the later one."""
    from transforms.core.contribution.bounding import PersonLimit
    from transforms.person import read_person_cell

    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="dead_letter")
    person = streaming_module.GatedBoundPersonsFn(spec, PersonLimit(2))
    person.start_bundle()
    cell, emitted, timer = _Cell(), _Cell(), _At()
    ins = (2, 1, "insert", (1,), 15.0, None, "e", "P")
    ups = (5, 2, "upsert", (0,), 45.0, None, "e", "P")
    for u in (ups, ins):
        list(person.process((("a", "P"), u), cell, timer))
    firings = []
    while read_person_cell(cell.read())[3]:
        ts, timer.at = timer.at, None
        firings.append(list(person.on_tick_end(("a", "P"), ts, cell, timer, emitted)))
    assert firings == [[(("a", "1:P:e"), (*ins, 1))], [(("a", "1:P:e"), (*ups, 2))]]
    reg = streaming_module.ResolveEntriesFn(spec, (2,), True, counts=True, upstream_counts=True)
    reg.start_bundle()
    meta, at = _Cell(), _At()
    assert not list(reg.process(firings[1][0], meta, at))  # number 2 first: held, no timer
    assert at.at is None and meta.read()[3:] == ((), 0, ((2, ups),)) and reg.deltas == {"a": {5: 0}}
    assert not list(reg.process(firings[0][0], meta, at))  # number 1: both buffered, in order, not late
    assert meta.read()[2:] == (2, ((2, *ins[1:]), (5, *ups[1:])), 2, ())
    assert at.at == spec.closes_at(2) and reg.deltas == {"a": {2: 0, 5: 0}}
    twin = streaming_module.ResolveEntriesFn(spec, (2,), True, counts=True, upstream_counts=True)
    twin.in_order = False
    twin.start_bundle()
    resolved_5 = _Cell((None, 5, None, (), 0, ()))  # the entry has resolved tick 5 (its upsert came first)
    assert [d.value.reason for d in twin.process(firings[0][0], resolved_5, _At())] == ["late"]
