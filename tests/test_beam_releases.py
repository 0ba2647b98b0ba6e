"""Beam transforms: equivalence with the in-memory core on named runners,
streaming with TestStream, dead letters, metrics, DoFn pickling."""

import json
import pickle

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER

from transforms.bounded import ResolveEntriesBoundedFn
from transforms.common import ReleaseStep, apply_in_order
from transforms.core import (
    MECHANISMS,
    DynamicConfig,
    FullyDynamicRelease,
    NoiseSource,
    PureDP,
    QuerySet,
    ReleaseIdentity,
    TwoStreamBaseline,
    Update,
)
from transforms.core.foundation.accounting import PrivacyUnit, as_vector
from transforms.core.foundation.aggregates import fold
from transforms.per_stream import CATCH_UP_TICKS, START, BoundedStreamFn, PerStreamStepFn, set_catch_up
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseFullyDynamic, ReleaseTwoStreamBaseline, StreamSpec
from transforms.streaming import MergeTickFn, ResolveEntriesFn
from transforms.validate import UpdateCheck, ValidateFn

KEY_HEX = bytes(range(32)).hex()
CFG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(2.0))
REL = ReleaseIdentity("test-release-0001")


def noise_of(transform, key_hex=KEY_HEX):
    """The in-memory noise source of a transform's release (same key, same release)."""
    return NoiseSource.from_hex(key_hex).for_release(transform.release)


def workload(streams=("a", "b"), n=300, seed=0):
    rng = np.random.default_rng(seed)
    recs, live = [], {s: [] for s in streams}
    for i in range(n):
        s = streams[int(rng.integers(len(streams)))]
        t = float(i) * 0.7 + float(rng.random())
        if live[s] and rng.random() < 0.35:
            eid = live[s].pop(int(rng.integers(len(live[s]))))
            recs.append(UpdateRecord(t, "delete", eid, None, s, i))
        elif live[s] and rng.random() < 0.15:
            eid = live[s][int(rng.integers(len(live[s])))]
            recs.append(UpdateRecord(t, "upsert", eid, (0, int(rng.integers(4))), s, i))
        else:
            eid = f"{s}{i}"
            live[s].append(eid)
            recs.append(UpdateRecord(t, "insert", eid, (0, int(rng.integers(4))), s, i))
    return recs


def in_memory(records, spec, cfg, noise, core_cls=FullyDynamicRelease):
    """The reference: the core driven tick by tick, then to the first close at or
    after the configured end tick."""
    out = []
    end = spec.end_tick
    for s in spec.streams:
        core = core_cls(cfg, stream=s)
        mine = sorted((r for r in records if r.stream == s), key=lambda r: (spec.tick_of(r.event_time), r.seq))
        by_tick = {}
        for r in mine:
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
        results = [core.process_tick(t, ups, noise) for t, ups in sorted(by_tick.items())]
        while not (core.closed and core.last_close_tick >= end):
            results.append(core.advance(core.next_close, noise))
        for res in results:
            out += [(a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate)) for a in res.answers]
    return sorted(out)


def run_batch(records, spec, options, expect_answers, expect_dead, transform=ReleaseFullyDynamic, key=None):
    """``expect_answers``: a list, or a function of the transform (its release)."""
    key = key or NoiseKey.fixed(KEY_HEX)
    t = transform(CFG, spec, key, release=REL)
    if callable(expect_answers):
        expect_answers = expect_answers(t)
    with TestPipeline(options=options) as p:
        out = (
            p
            | beam.Create(records)
            | beam.Map(lambda r: beam.window.TimestampedValue(r, getattr(r, "event_time", 0.0)))
            | t
        )
        answers = out["answers"] | "Key" >> beam.Map(lambda a: (a.stream, a.tick, a.segment, a.query, a.estimate))
        assert_that(answers, equal_to(expect_answers), label="CheckAnswers")
        assert_that(out["dead_letters"] | beam.Map(lambda d: d.reason), equal_to(expect_dead), label="CheckDead")


RUNNERS = {
    "fnapi": PipelineOptions(runner=FNAPI_RUNNER),
    "fnapi_multiprocess": PipelineOptions(
        runner=FNAPI_RUNNER, direct_num_workers=2, direct_running_mode="multi_processing"
    ),
    "portable_embed": PipelineOptions(runner="PortableRunner", job_endpoint="embed", environment_type="LOOPBACK"),
}


@pytest.mark.parametrize("runner", ["fnapi", "fnapi_multiprocess", "portable_embed"])
def test_batch_equals_in_memory_core(runner):
    """Same updates, same key: the transform's releases are exactly the core's."""
    recs = workload()
    spec = StreamSpec(streams=("a", "b", "idle"), tick_seconds=5.0, end_time=250.0)

    def expect(t):
        out = in_memory(recs, spec, CFG, noise_of(t))
        assert any(a[0] == "idle" for a in out)  # a stream with no data still releases on schedule
        return out

    run_batch(recs, spec, RUNNERS[runner], expect, [])


def test_batch_noise_off_exact_and_dead_letters():
    recs = [UpdateRecord(float(i), "insert", f"e{i}", (0, i % 4), "a", i) for i in range(60)]
    recs += [UpdateRecord(100.0 + i, "delete", f"e{i}", None, "a", 100 + i) for i in range(20)]
    bad = [
        UpdateRecord(3.0, "delete", "ghost", None, "a", 0),
        UpdateRecord(4.0, "insert", "e1", (0, 1), "a", 1),
        UpdateRecord(5.0, "insert", "z", (0, 9), "a", 0),
        UpdateRecord(6.0, "insert", "z", (0, 1), "nowhere", 0),
        UpdateRecord(7.0, "truncate", "z", (0, 1), "a", 0),
        UpdateRecord(-1.0, "insert", "early", (0, 1), "a", 0),  # before tick 1 starts (origin 0)
        "not a record",
        UpdateRecord(8.0, "delete", "e2", 7, "a", 0),  # a delete's item, if any, is a sequence
        UpdateRecord(9.0, "insert", "y", (0, 1), "a", None),  # seq orders updates: an int
        UpdateRecord(500.0, "insert", "after", (0, 1), "a", 0),  # after the configured end
    ]
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=200.0)
    expect = in_memory(recs, spec, CFG, NoiseSource.disabled())
    events = sorted(recs, key=lambda r: (spec.tick_of(r.event_time), r.seq))
    for _, tick, _, q, est in expect:  # the reference itself is exact with noise off
        live = {}
        for r in events:
            if spec.tick_of(r.event_time) > tick:
                break
            if r.op == "insert":
                live[r.entry_id] = r.item
            else:
                live.pop(r.entry_id, None)
        cells = np.bincount([v[1] for v in live.values()], minlength=4) if live else np.zeros(4)
        assert est == ((float(len(live)),) if q == "n" else tuple(float(x) for x in cells))
    dead = ["unknown_entry", "duplicate_insert", "item_out_of_range", "undeclared_stream", "unknown_op"]
    dead += ["before_origin", "malformed", "malformed", "malformed", "after_end"]
    run_batch(recs + bad, spec, RUNNERS["fnapi"], expect, dead, key=NoiseKey.disabled())


def test_bounded_end_is_the_configured_end_and_required():
    """The end of a bounded release is configuration: a late update on another
    stream (or a rejected one) changes no stream's releases; without an end the
    transform refuses to build."""
    recs = workload(n=120, seed=4)
    spec = StreamSpec(streams=("a", "b", "idle"), tick_seconds=1.0, end_time=200.0)
    late = UpdateRecord(190.0, "delete", "ghost", None, "b", 0)
    run_batch(
        recs + [late], spec, RUNNERS["fnapi"], lambda t: in_memory(recs, spec, CFG, noise_of(t)), ["unknown_entry"]
    )
    with pytest.raises(ValueError, match="bounded input needs a configured end"):
        with TestPipeline(options=RUNNERS["fnapi"]) as p:
            _ = p | beam.Create(recs) | ReleaseFullyDynamic(CFG, StreamSpec(streams=("a",)), NoiseKey.disabled())


def test_two_stream_baseline_transform_equals_core():
    recs = workload(streams=("a",), n=150, seed=3)
    spec = StreamSpec(streams=("a",), tick_seconds=4.0, end_time=200.0)
    expect = lambda t: in_memory(recs, spec, CFG, noise_of(t), TwoStreamBaseline)  # noqa: E731
    run_batch(recs, spec, RUNNERS["fnapi"], expect, [], transform=ReleaseTwoStreamBaseline)


def streaming_options():
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


@pytest.mark.parametrize("tick_merge", ["auto", "stateful"])
def test_streaming_teststream_matches_core_with_disorder_and_gaps(tick_merge):
    """Watermark advanced in steps; updates out of order within a tick; a long
    stretch of empty ticks after the data; two streams; with the DirectRunner's
    per-bundle tick merge (auto) and with the stateful one other runners use.
    (Late data: the two tests below.)"""
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, end_time=400.0)
    recs = workload(streams=("a", "b"), n=120, seed=5)
    recs = [r for r in recs if r.event_time < 80.0]  # then a long empty gap
    stream = TestStream()
    by_tick = {}
    for r in recs:
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(r)
    # The BundleBased runner does not hold a stateful stage's output watermark for
    # its pending timers, so chained timer stages only fire in order when the
    # watermark moves in small steps (BEAM_NOTES): quarter-tick steps here.
    wm = 0.0
    for tick in sorted(by_tick):
        batch = list(reversed(by_tick[tick]))  # out of order within the tick
        stream = stream.add_elements([beam.window.TimestampedValue(r, r.event_time) for r in batch])
        while wm < spec.origin + tick * spec.tick_seconds:
            wm += spec.tick_seconds / 4
            stream = stream.advance_watermark_to(wm)
    while wm < 3000:  # empty ticks: closes still happen on schedule
        wm += spec.tick_seconds / 4
        stream = stream.advance_watermark_to(wm)
    stream = stream.advance_watermark_to_infinity()
    t = ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), tick_merge=tick_merge, release=REL)
    expect = in_memory(recs, spec, CFG, noise_of(t))
    assert any(a[1] * spec.tick_seconds > 100 for a in expect)  # closes after the data, on schedule
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | t
        answers = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.segment, a.query, a.estimate))
        assert_that(answers, equal_to(expect))
    names = {t.unique_name for t in p.to_runner_api().components.transforms.values()}
    assert any(n.endswith("/MergePerTick") for n in names) == (tick_merge == "stateful")


def test_streaming_late_update_dead_lettered_under_policy():
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="dead_letter", end_time=100.0)
    stream = (
        TestStream()
        .add_elements([beam.window.TimestampedValue(UpdateRecord(12.0, "insert", "x", (0, 1), "a", 0), 12.0)])
        .advance_watermark_to(40.0)
        .add_elements([beam.window.TimestampedValue(UpdateRecord(11.0, "delete", "x", None, "a", 1), 11.0)])
        .advance_watermark_to_infinity()
    )
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | ReleaseFullyDynamic(CFG, spec, NoiseKey.disabled())
        assert_that(out["dead_letters"] | beam.Map(lambda d: d.reason), equal_to(["late"]))


def _dofns():
    from transforms.core.families.local_dp import RROptions, design_for
    from transforms.local_dp import CollectStep, ReportCheck
    from transforms.queries import AnswerStep, QueryCheck

    ended = StreamSpec(end_time=100.0)
    release = ReleaseStep(ended, CFG, MECHANISMS["fully_dynamic"], NoiseKey.fixed(KEY_HEX), True, release=REL)
    answer = AnswerStep(ended, CFG, MECHANISMS["pmwg"], NoiseKey.fixed(KEY_HEX), False, release=REL)
    rr = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(1.0))
    collect = CollectStep(rr, RROptions(), ended)
    return [
        ("validate_updates", ValidateFn(UpdateCheck(StreamSpec(), (1, 4)))),
        ("validate_queries", ValidateFn(QueryCheck(StreamSpec(), 4))),
        ("validate_reports", ValidateFn(ReportCheck(StreamSpec(), design_for(rr, RROptions())))),
        ("registry", ResolveEntriesFn(StreamSpec(), (1, 4), True)),
        ("merge", MergeTickFn(StreamSpec())),
        ("registry_bounded", ResolveEntriesBoundedFn(StreamSpec(), (1, 4), True)),
        *(
            (f"stream_{n}", PerStreamStepFn(step))
            for n, step in (("release", release), ("answer", answer), ("rr", collect))
        ),
        *(
            (f"bounded_{n}", BoundedStreamFn(step))
            for n, step in (("release", release), ("answer", answer), ("rr", collect))
        ),
    ]


@pytest.mark.parametrize("name, fn", _dofns(), ids=lambda v: v if isinstance(v, str) else "")
def test_dofns_pickle(name, fn):
    back = pickle.loads(pickle.dumps(fn))
    assert type(back) is type(fn) and sorted(vars(back)) == sorted(vars(fn))
    step = getattr(fn, "step", getattr(fn, "check", None))
    if step is not None:  # the step or check is the DoFn's parameter: it travels with it
        copy = getattr(back, "step", getattr(back, "check", None))
        assert type(copy) is type(step) and sorted(vars(copy)) == sorted(vars(step)) and copy.spec == step.spec


def test_aggregate_merge_is_split_invariant():
    """Tick aggregates summed in any split (bundles of the registry step, then
    the per-stream step) give the multisets of adding up every input by hand,
    and the bounded per-stream step releases the same records whatever the
    split of its input into per-bundle parts."""
    from collections import Counter

    rng = np.random.default_rng(5)
    aggs = [
        (int(t), {(0, int(v)): 1 + int(v)}, {((0, int(v)), int(t) - 1): 1} if t > 1 else {}, 2 + int(v))
        for t, v in zip(rng.integers(1, 20, 200), rng.integers(0, 3, 200))
    ]

    def fold_parts(parts):
        accs = []
        for part in parts:
            acc = {}
            for a in part:
                fold(acc, *a)
            accs.append(acc)
        out = {}
        for acc in accs:
            for tick, (ins, dele, n) in acc.items():
                fold(out, tick, ins, dele, n)
        return out

    whole = fold_parts([aggs])
    assert whole == fold_parts([aggs[:7], aggs[7:150], [], aggs[150:]])
    assert sorted(whole) == sorted({a[0] for a in aggs})
    for tick, (ins, dele, n) in whole.items():
        mine = [a for a in aggs if a[0] == tick]
        assert ins == sum((Counter(a[1]) for a in mine), Counter())
        assert dele == sum((Counter(a[2]) for a in mine), Counter())
        assert n == sum(a[3] for a in mine)

    fn = BoundedStreamFn(
        ReleaseStep(
            StreamSpec(tick_seconds=1.0, end_time=30.0),
            CFG,
            MECHANISMS["fully_dynamic"],
            NoiseKey.fixed(KEY_HEX),
            True,
            release=REL,
        )
    )
    fn.setup()

    def release(parts):
        return [getattr(o, "value", o) for o in fn.process(("s", parts), ["s"])]

    inserts = [(t, i, {}, n) for t, i, _, n in aggs]  # (the deletes above name no real insertions)
    one = release([tuple((t, i, {}, n) for t, (i, _, n) in sorted(whole.items()))])
    assert one and one == release([tuple(inserts[:90]), (), tuple(inserts[90:])])


def test_transform_validates_early():
    with pytest.raises(ValueError, match="noise key source is required"):
        ReleaseFullyDynamic(CFG, StreamSpec(), None)
    with pytest.raises(ValueError, match="late_policy"):
        StreamSpec(late_policy="drop")
    with pytest.raises(ValueError, match="tick_seconds"):
        StreamSpec(tick_seconds=0)
    with pytest.raises(ValueError, match="tick_merge must be one of auto, stateful, bundle"):
        ReleaseFullyDynamic(CFG, StreamSpec(), NoiseKey.fixed(KEY_HEX), tick_merge="windowed")
    assert "fixed" in repr(NoiseKey.fixed(KEY_HEX)) and KEY_HEX not in repr(NoiseKey.fixed(KEY_HEX))


def test_metrics_are_reported():
    recs = workload(streams=("a",), n=80, seed=1) + [UpdateRecord(1.0, "delete", "ghost", None, "a", 0)]
    p = TestPipeline(options=RUNNERS["fnapi"])
    _ = (
        p
        | beam.Create(recs)
        | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        | ReleaseFullyDynamic(
            CFG, StreamSpec(streams=("a",), tick_seconds=5.0, end_time=250.0), NoiseKey.fixed(KEY_HEX)
        )
    )
    result = p.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    assert counters["updates_validated"] == len(recs)
    assert counters["dead_letter_unknown_entry"] == 1
    assert counters["updates_accepted"] >= 70
    assert counters["segments_closed"] >= 3
    assert counters["releases_emitted"] == 2 * counters["segments_closed"]


def test_count_continually_equals_core_every_tick():
    from transforms.core import ContinualCountRelease
    from transforms.releases import CountContinually

    recs = [UpdateRecord(float(3 * i), "insert", f"e{i}", (0, i % 4), "a", i) for i in range(40)]
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=120.0)
    core = ContinualCountRelease(CFG, stream="a", counter="honaker", horizon=64)
    tr = CountContinually(CFG, spec, NoiseKey.fixed(KEY_HEX), counter="honaker", horizon=64, release=REL)
    noise = noise_of(tr)
    by_tick = {}
    for r in recs:
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
    expect = []
    for t, ups in sorted(by_tick.items()):
        res = core.process_tick(t, ups, noise)
        expect += [(a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate)) for a in res.answers]
    with TestPipeline(options=RUNNERS["fnapi"]) as p:
        out = p | beam.Create(recs) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time)) | tr
        got = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.segment, a.query, a.estimate))
        assert_that(got, equal_to(expect))
    with pytest.raises(ValueError, match="needs horizon"):
        CountContinually(CFG, spec, NoiseKey.disabled(), counter="binary_tree")


def test_streaming_late_update_applied_at_current_tick():
    """late_policy=current: a delete that arrives after its entry's tick was
    resolved is applied at the entry's next tick (nothing is lost)."""
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="current", end_time=300.0)
    early = [UpdateRecord(1.0 + i, "insert", f"x{i}", (0, 1), "a", i) for i in range(5)]
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in early])
    for t in (2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 30.0, 40.0):
        stream = stream.advance_watermark_to(t)
    late = UpdateRecord(2.0, "delete", "x0", None, "a", 99)  # its tick (1) is long over
    stream = stream.add_elements([beam.window.TimestampedValue(late, 2.0)])
    for t in range(45, 3000, 5):
        stream = stream.advance_watermark_to(float(t))
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | ReleaseFullyDynamic(CFG, spec, NoiseKey.disabled())
        last_counts = (
            out["answers"] | beam.Filter(lambda a: a.query == "n" and a.tick >= 16) | beam.Map(lambda a: a.estimate)
        )
        assert_that(last_counts, equal_to([(4.0,), (4.0,)]))  # closes at ticks 16 and 256
        assert_that(out["dead_letters"], equal_to([]), label="NoDead")


def test_streaming_out_of_order_within_allowed_lateness_changes_nothing():
    """allowed_lateness = 20 s (2 ticks): an update arriving after the watermark
    passed its tick, but within the allowed lateness, gives the in-order releases."""
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=200.0, allowed_lateness=20.0)
    recs = [UpdateRecord(1.0 + 2 * i, "insert", f"e{i}", (0, i % 4), "a", i) for i in range(30)]
    late_one = recs[5]  # event time 11 (tick 2), delivered when the watermark is at 35
    on_time = [r for r in recs if r is not late_one]
    stream = TestStream()
    wm = 0.0
    for r in on_time:
        stream = stream.add_elements([beam.window.TimestampedValue(r, r.event_time)])
        while wm + 2.5 <= r.event_time:
            wm += 2.5
            stream = stream.advance_watermark_to(wm)
            if wm == 35.0:
                stream = stream.add_elements([beam.window.TimestampedValue(late_one, late_one.event_time)])
    while wm < 3000:
        wm += 2.5
        stream = stream.advance_watermark_to(wm)
    stream = stream.advance_watermark_to_infinity()
    t = ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL)
    expect = in_memory(recs, spec, CFG, noise_of(t))
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | t
        answers = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.segment, a.query, a.estimate))
        assert_that(answers, equal_to(expect))
        assert_that(out["dead_letters"], equal_to([]), label="NoDead")


def test_streaming_survives_deadlines_beyond_64_bits():
    """Deadlines square (T_j = t_{j-1}^2): with 1 ms ticks, after the close at
    tick ~4.3e9 the next deadline (~1.8e19) exceeds 64 bits; the stream keeps
    going without overflowing its state."""
    spec = StreamSpec(streams=("a",), tick_seconds=0.001)
    recs = [UpdateRecord(0.0001 * (i + 1), "insert", f"e{i}", (0, 1), "a", i) for i in range(5)]
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in recs])
    for wm in (0.01, 0.1, 1.0, 100.0, 1e4, 1e6, 5e6, 1e7):
        stream = stream.advance_watermark_to(wm)
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | ReleaseFullyDynamic(CFG, spec, NoiseKey.disabled())
        ticks = out["answers"] | beam.Filter(lambda a: a.query == "n") | beam.Map(lambda a: a.tick > 4 * 10**9)
        assert_that(ticks | beam.Filter(bool), equal_to([True]))


class _Bag:
    def __init__(self):
        self.items = []

    def add(self, x):
        self.items.append(x)

    def read(self):
        return list(self.items)

    def clear(self):
        self.items = []


class _Value:
    def __init__(self):
        self.value = None

    def read(self):
        return self.value

    def write(self, v):
        self.value = v

    def clear(self):
        self.value = None


class _Timer:
    def __init__(self):
        self.at = None

    def set(self, ts):
        self.at = ts


def test_merge_tick_flushes_due_ticks_and_keeps_the_rest():
    """The flush logic on its own: due ticks are emitted, each merged, and
    aggregates not yet due stay with the timer at the earliest (keys are per
    tick in the pipeline, so this generality is defensive)."""
    spec = StreamSpec(tick_seconds=10.0)
    fn = MergeTickFn(spec)
    bag, flush_tick, timer = _Bag(), _Value(), _Timer()
    for agg in ((4, {(1,): 1}, {}, 1), (2, {(0,): 1}, {}, 1), (2, {(0,): 2}, {((0,), 1): 1}, 3)):
        fn.process((("a", 0), agg), buffer=bag, flush_tick=flush_tick, flush=timer)
    assert flush_tick.read() == 2 and timer.at == fn._flush_time(2)
    out = list(fn.on_flush(key=("a", 0), ts=timer.at, buffer=bag, flush_tick=flush_tick, flush=timer))
    ((stream, (merged,)),) = [o.value for o in out]
    assert stream == "a" and merged == (2, {(0,): 3}, {((0,), 1): 1}, 4)
    assert [a[0] for a in bag.read()] == [4] and flush_tick.read() == 4 and timer.at == fn._flush_time(4)
    out = list(fn.on_flush(key=("a", 0), ts=timer.at, buffer=bag, flush_tick=flush_tick, flush=timer))
    assert [o.value[1][0][0] for o in out] == [4] and bag.read() == [] and flush_tick.read() is None


def test_catch_up_grid_is_public_and_capped_at_the_end():
    """The catch-up timer's tick is the first multiple of CATCH_UP_TICKS at or after the next wake (never
    past the configured end), at that tick's wake time: a function of public values only."""
    assert CATCH_UP_TICKS == 1024
    spec = StreamSpec(streams=("a",), tick_seconds=2.0, allowed_lateness=4.0)
    for tick, grid in ((1, 1024), (5, 1024), (1024, 1024), (1025, 2048), (4096, 4096), (4097, 5120)):
        t = _Timer()
        set_catch_up(spec, tick, t)
        assert t.at == spec.tick_end(grid + 1 + 2), (tick, grid)
    ended = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=1500.0)
    for tick, grid in ((3, 1024), (1100, 1500), (1500, 1500)):
        t = _Timer()
        set_catch_up(ended, tick, t)
        assert t.at == ended.tick_end(grid + 1), (tick, grid)
    t = _Timer()
    set_catch_up(ended, 1501, t)
    assert t.at is None  # past the end: only the wake timer is left


class _CountedFirings(PerStreamStepFn):
    """The per-stream step, writing a line per timer firing to ``self.log`` (the DirectRunner runs it in
    this process)."""

    log = None

    def _fire(self, *args):
        with open(self.log, "a") as fh:
            fh.write("fire\n")
        yield from super()._fire(*args)


class _Collect(beam.DoFn):
    def __init__(self, path):
        self.path = path

    def process(self, a, ts=beam.DoFn.TimestampParam):  # noqa: B008 (Beam idiom)
        with open(self.path, "a") as fh:
            fh.write(json.dumps([a.tick, a.query, list(a.estimate), a.error_bound, list(a.spent), float(ts)]) + "\n")


def _answers(res):
    return [
        (a.tick, a.query, tuple(float(x) for x in a.estimate), a.error_bound, as_vector(a.spent)) for a in res.answers
    ]


def _one_wake_per_firing(core, aggs, noise):
    """The reference: the per-stream step as it ran before the catch-up timer, one firing per wake. A firing
    for tick w applies the pending aggregates up to w, advances the mechanism to w, and sets the next wake:
    the earliest pending aggregate or the mechanism's next wake, after its last tick."""
    results, pending, w = [], list(aggs), 1
    while w is not None:
        now = [a for a in pending if a[0] <= w]
        pending = [a for a in pending if a[0] > w]
        results += apply_in_order(core, now, noise)
        if w > core.last_tick:
            results.append(core.advance(w, noise))
        candidates = [a[0] for a in pending] + ([] if core.next_wake is None else [core.next_wake])
        w = None if core.finished or not candidates else max(min(candidates), core.last_tick + 1)
    return results


@pytest.mark.parametrize(
    "name, every, options",
    [
        ("continual_count", None, {"counter": "honaker", "horizon": 4096}),
        ("fully_dynamic", 10, {}),
        ("auto", None, {}),
        ("insertion_only", 10, {}),
    ],
)
def test_per_stream_step_catches_up_a_backlog_exactly_with_public_timestamps(tmp_path, name, every, options):
    """The per-stream step with 2,600 one-second ticks of input waiting and the watermark jumping past them
    all (a replay, a job restarted after downtime): it catches up through its grid timer, a few firings
    instead of one per tick, and every record equals, field by field (estimate, error bound, spend), what one
    firing per wake gives, and carries its own tick's time (the end of tick + 1 + lateness), not the time
    of whichever firing computed it. Mechanisms whose error bound or spend is stamped per call (auto, periodic
    releases) are included: a firing that covered many ticks in one call would change those fields.

    (The step is fed its tick aggregates directly: the BundleBased DirectRunner holds no watermark for a
    stateful stage's timers, so behind the registry step a jump would outrun the aggregates, and the
    transforms keep the catch-up timer off there; Flink holds it, and ``tests/test_flink.py`` runs the whole
    pipeline there.)"""
    n_ticks, lateness = 2600, 1
    spec = StreamSpec(
        streams=("a",), tick_seconds=1.0, end_time=float(n_ticks), allowed_lateness=1.0, every_ticks=every
    )
    mech = MECHANISMS[name]
    opts = mech.options_cls(**options)
    fn = _CountedFirings(ReleaseStep(spec, CFG, mech, NoiseKey.fixed(KEY_HEX), False, options=opts, release=REL))
    assert fn.catch_up  # on by default (the transforms turn it off on the DirectRunner)
    fn.log = str(tmp_path / "firings")
    out_path = str(tmp_path / "releases.jsonl")
    aggs = [(t, {(0, t % 4): 1 + t % 3}, {}, 1 + t % 3) for t in range(1, n_ticks + 1) if t % 5 != 2]
    core = mech.core_cls(CFG, stream="a", emit_nodes=False, end_tick=spec.end_tick, every_ticks=every, options=opts)
    noise = NoiseSource.from_hex(KEY_HEX).for_release(REL)
    expect = [a for res in _one_wake_per_firing(core, aggs, noise) for a in _answers(res)]
    assert len({e[0] for e in expect}) >= n_ticks // (every or 1)  # releases all the way
    stream = TestStream().add_elements([beam.window.TimestampedValue(("a", START), spec.origin)])
    stream = stream.add_elements(
        [beam.window.TimestampedValue(("a", (agg,)), float(spec.tick_end(agg[0] + lateness))) for agg in aggs]
    )
    stream = stream.advance_watermark_to(float(n_ticks) + 10.0)  # the whole backlog is final at once
    for wm in range(n_ticks + 11, n_ticks + 30):
        stream = stream.advance_watermark_to(float(wm))
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=streaming_options()) as p:
        p | stream | beam.ParDo(fn) | beam.ParDo(_Collect(out_path))
    with open(out_path) as fh:
        got = [json.loads(line) for line in fh]
    norm = lambda rows: sorted(repr(r) for r in rows)  # noqa: E731 (None bounds do not sort against floats)
    assert norm((g[0], g[1], tuple(g[2]), g[3], tuple(g[4])) for g in got) == norm(expect)
    assert [g for g in got if g[5] != float(spec.tick_end(g[0] + 1 + lateness))] == []
    with open(fn.log) as fh:
        firings = len(fh.read().split())
    assert firings <= 20, f"{firings} firings for {n_ticks} ticks: the catch-up timer did not batch them"


def test_tick_end_and_tick_at_agree_for_any_tick_length_and_origin():
    """``tick_at(tick_end(k)) == k`` for tick lengths that are not binary fractions and epoch origins: with
    ``Timestamp.of`` truncating and the arithmetic in float seconds, every 0.1 s tick after an epoch origin
    came out one short, and a per-stream step re-armed its wake at the same time for ever."""
    for seconds in (0.1, 0.3, 0.7, 1 / 3, 0.001, 0.5, 1.0, 10.0, 86400.0):
        for origin in (0.0, 1_700_000_000.0, 1234.5, -50.0):
            spec = StreamSpec(tick_seconds=seconds, origin=origin)
            for k in (*range(1, 2001), 10**6, 10**9 // max(1, int(seconds * 1000))):
                end = spec.tick_end(k)
                assert spec.tick_at(end) == k, (seconds, origin, k)
                assert abs(float(end) - (origin + k * seconds)) <= 1.5e-6, (seconds, origin, k)


def test_tick_of_agrees_with_the_timestamp_beam_gives_the_element():
    """A record's tick is the first tick not over at the timestamp Beam gives it (``Timestamp.of``: whole
    microseconds): ``tick_of(t) == tick_at(Timestamp.of(t)) + 1`` at and around every tick boundary, for
    tick lengths that are not binary fractions and epoch origins. ``tick_of`` divided floats before: with
    0.1 s ticks from 1700000000, ``tick_of(1700000000.3)`` was 3 (``0.29999995 / 0.1``) while the element's
    timestamp is the end of tick 3, the start of tick 4 (19,059 disagreements over this grid)."""
    from apache_beam.utils.timestamp import Timestamp

    assert StreamSpec(tick_seconds=0.1, origin=1_700_000_000.0).tick_of(1_700_000_000.3) == 4
    for seconds in (0.1, 0.3, 0.7, 1 / 3, 0.001, 0.5, 1.0, 10.0, 60, 86400.0):
        for origin in (0.0, 1_700_000_000.0, 1234.5, -50.0):
            spec = StreamSpec(tick_seconds=seconds, origin=origin)
            for k in range(0, 3000):
                for t in (origin + k * seconds, origin + k * seconds + 1e-6, origin + (k + 0.5) * seconds):
                    assert spec.tick_of(t) == spec.tick_at(Timestamp.of(t)) + 1, (seconds, origin, t)


def test_stream_spec_owns_the_tick_arithmetic_in_integers():
    """Every tick computation of the transforms and the pipelines, exact: the end tick, a span in ticks,
    the periods to the end, when a tick closes and when its input is final, the middle of a tick; the
    configured numbers read as the decimals they were written as; the repr (it keys the noise) holds the
    fields only."""
    from apache_beam.utils.timestamp import Timestamp

    spec = StreamSpec(tick_seconds=0.1, origin=0.0, end_time=0.3, allowed_lateness=0.3, every_ticks=2)
    assert repr(spec) == (
        "StreamSpec(streams=('default',), tick_seconds=0.1, origin=0.0, late_policy='current', end_time=0.3, "
        "allowed_lateness=0.3, every_ticks=2)"
    )
    assert spec.end_tick == 3 and spec.lateness_ticks == 3  # 0.3 / 0.1 is 2.9999999999999996 in floats
    assert spec.end_periods == 2 and StreamSpec(end_time=600.0, every_ticks=None).end_periods is None
    assert StreamSpec(end_time=60.000001).end_tick == 2 and StreamSpec(end_time=60.0).end_tick == 1
    assert [spec.ticks_in(s) for s in (0, 0.05, 0.1, 0.1000001, 0.7)] == [0, 1, 1, 2, 7]
    for k in range(1, 50):
        assert spec.closes_at(k) == spec.tick_end(k + 3) and spec.closed_tick(spec.closes_at(k)) == k
        assert spec.final_at(k) == spec.tick_end(k + 4) and spec.final_tick(spec.final_at(k)) == k
        assert spec.final_tick(Timestamp(micros=spec.final_at(k).micros - 1)) == k - 1
        assert spec.tick_end(k - 1) < spec.tick_middle(k) < spec.tick_end(k)
    third = StreamSpec(tick_seconds=1 / 3, origin=1_700_000_000.0)
    assert [third.tick_end(k).micros - 1_700_000_000_000_000 for k in (1, 2, 3)] == [333334, 666667, 1000000]
    assert third.as_of(3) == "2023-11-14T22:13:21Z" and third.as_of(1) == "2023-11-14T22:13:20.333333Z"
    assert StreamSpec(tick_seconds=86400.0).as_of(10**9) == "86400000000000.000000"  # beyond the calendar
    assert pickle.loads(pickle.dumps(spec)) == spec and pickle.loads(pickle.dumps(spec)).end_tick == 3
    with pytest.raises(ValueError, match="finite"):
        StreamSpec(origin=float("nan"))


def flink_graph_options():
    """Streaming options for a graph built for Flink (never run): the names a Flink savepoint holds. (On the
    DirectRunner the per-stream step is the gated one, with a state of its own: ``counts_gate``.)"""
    opts = PipelineOptions(runner="FlinkRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


def _stateful_transforms(pipeline) -> dict:
    """Each stateful transform of ``pipeline``'s graph: unique name -> (state names, timer names)."""
    from apache_beam.portability.api import beam_runner_api_pb2

    out = {}
    for t in pipeline.to_runner_api().components.transforms.values():
        if t.spec.urn == "beam:transform:pardo:v1":
            payload = beam_runner_api_pb2.ParDoPayload.FromString(t.spec.payload)
            if payload.state_specs or payload.timer_family_specs:
                out[t.unique_name] = (sorted(payload.state_specs), sorted(payload.timer_family_specs))
    return out


def test_stateful_transforms_keep_the_names_a_savepoint_holds():
    """A Flink savepoint (and a Dataflow update) matches state by transform name and state or timer name, and
    the transform name holds the DoFn's label (``ParDo(<label>)``): the streaming graphs of the release, the
    query answering and the collector keep the names of the version whose savepoints must restore
    (``tests/test_flink.py::test_savepoint_of_the_previous_version_restores_in_the_current_one``, which
    times out when ``ReleaseStream/ParDo(ReleaseStreamFn)`` is named after the shared DoFn class instead).
    The per-stream steps share one declaration: ``queries`` is the query step's, the others never touch it;
    the collector gained the catch-up timer, and every per-stream step the ``chunks`` bag (stop 50: a large
    state's chunks, ``transforms.core.foundation.state_chunks``; a name added, none changed: a savepoint
    without it restores with the bag empty), then ``input_end`` (the last tick of a release without an end whose
    input ended: ``transforms.streaming.with_input_end``; empty in an older savepoint, as in a running job)."""
    from transforms.core.families.local_dp import RROptions
    from transforms.local_dp import CollectRandomizedResponses, ReportRecord
    from transforms.queries import AnswerQueries, QueryRecord

    step = (["chunks", "core", "input_end", "pending", "queries", "wake_tick"], ["ts-catch_up", "ts-wake"])
    registry, merge = (["meta"], ["ts-tick_end"]), (["buffer", "flush_tick"], ["ts-flush"])
    spec = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=150.0, every_ticks=2)
    p = beam.Pipeline(options=flink_graph_options())
    (
        p
        | beam.Create([UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0)])
        | ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), tick_merge="stateful", release=REL, registry_shards=0)
    )
    assert _stateful_transforms(p) == {
        "ReleaseFullyDynamic/ResolveEntries/ParDo(ResolveEntriesFn)": registry,
        "ReleaseFullyDynamic/MergePerTick": merge,
        "ReleaseFullyDynamic/ReleaseStream/ParDo(ReleaseStreamFn)": step,
    }
    p = beam.Pipeline(options=flink_graph_options())
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=4),), PureDP(2.0))
    u = p | "U" >> beam.Create([UpdateRecord(1.0, "insert", "x", (1,), "a", 0)])
    q = p | "Q" >> beam.Create([QueryRecord("q", 2.0, (1.0, 0.0, 0.0, 0.0), "a")])
    (u, q) | AnswerQueries(cfg, spec, NoiseKey.fixed(KEY_HEX), release=REL, tick_merge="stateful", registry_shards=0)
    assert _stateful_transforms(p) == {
        "AnswerQueries/ResolveEntries/ParDo(ResolveEntriesFn)": registry,
        "AnswerQueries/MergePerTick": merge,
        "AnswerQueries/AnswerStream/ParDo(AnswerStreamFn)": step,
    }
    # the default since issue 30's shards (transforms/sharded.py): its own names, which savepoints hold from then on
    shards = (["shard"], ["ts-tick_end"])
    for cls, stream_step in ((ReleaseFullyDynamic, "ReleaseStream/ParDo(ReleaseStreamFn)"), (AnswerQueries, None)):
        p = beam.Pipeline(options=flink_graph_options())
        u = p | "U" >> beam.Create([UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0)])
        if cls is AnswerQueries:
            q = p | "Q" >> beam.Create([QueryRecord("q", 2.0, (1.0, 0.0, 0.0, 0.0), "a")])
            (u, q) | AnswerQueries(cfg, spec, NoiseKey.fixed(KEY_HEX), release=REL)
            stream_step = "AnswerStream/ParDo(AnswerStreamFn)"
        else:
            u | ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL)
        name = cls.__name__
        assert _stateful_transforms(p) == {
            f"{name}/ResolveShards/ParDo(ResolveShardsFn)": shards,
            f"{name}/{stream_step}": step,
        }
    p = beam.Pipeline(options=streaming_options())
    rr = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(8.0))
    p | beam.Create([ReportRecord(1.0, "e", 0, 0, 1)]) | CollectRandomizedResponses(rr, spec, RROptions())
    assert _stateful_transforms(p) == {
        "CollectRandomizedResponses/Deduplicate/ParDo(_DedupReportFn)": (["seen"], ["ts-expire"]),
        "CollectRandomizedResponses/Collect/ParDo(_CollectStreamFn)": step,
    }


def test_the_person_unit_adds_the_person_step_and_keeps_every_other_name():
    """Under the person unit the streaming graph gains the person step (``BoundPersons``: state ``person``,
    timer ``tick_end``), ahead of the registry, and keeps every other stateful transform's name, state and
    timers (a savepoint of the person step matches them from now on); the batch graph gains ``GroupByPerson``
    and a stateless ``BoundPersons``."""
    cfg = DynamicConfig(CFG.queries, PureDP(2.0), unit=PrivacyUnit.person(2, 3))
    spec = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=150.0, every_ticks=2)
    rec = UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0, person="P")
    p = beam.Pipeline(options=flink_graph_options())
    (
        p
        | beam.Create([rec])
        | ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed(KEY_HEX), tick_merge="stateful", release=REL, registry_shards=0)
    )
    assert _stateful_transforms(p) == {
        "ReleaseFullyDynamic/BoundPersons/ParDo(BoundPersonsFn)": (["person"], ["ts-tick_end"]),
        "ReleaseFullyDynamic/ResolveEntries/ParDo(ResolveEntriesFn)": (["meta"], ["ts-tick_end"]),
        "ReleaseFullyDynamic/MergePerTick": (["buffer", "flush_tick"], ["ts-flush"]),
        "ReleaseFullyDynamic/ReleaseStream/ParDo(ReleaseStreamFn)": (
            ["chunks", "core", "input_end", "pending", "queries", "wake_tick"],
            ["ts-catch_up", "ts-wake"],
        ),
    }
    p = beam.Pipeline(options=PipelineOptions(runner=FNAPI_RUNNER))
    p | beam.Create([rec]) | ReleaseFullyDynamic(cfg, spec, NoiseKey.fixed(KEY_HEX), release=REL)
    names = {t.unique_name for t in p.to_runner_api().components.transforms.values()}
    assert {"ReleaseFullyDynamic/GroupByPerson", "ReleaseFullyDynamic/BoundPersons"} <= names
    assert not _stateful_transforms(p)


@pytest.mark.parametrize(
    "tick_seconds, origin", [(5e-7, 0.0), (1.5e-6, -2.0000005), (1 / 3, 1_700_000_000.0), (0.1, 0.3), (60, 0)]
)
def test_as_of_rounds_half_to_even_as_the_fraction_did(tick_seconds, origin):
    """``as_of`` in integers: the nearest microsecond of each tick's end, halves to even, as
    ``round(Fraction(...))`` gave (the first two grids end half the ticks on half a microsecond)."""
    from datetime import UTC, datetime, timedelta
    from fractions import Fraction

    spec = StreamSpec(tick_seconds=tick_seconds, origin=origin)
    o, length, den = spec._grid
    halves = 0
    for k in range(-5, 400):
        end = round(Fraction(o + k * length, den))
        halves += (o + k * length) % den * 2 == den
        want = (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=end)).isoformat()
        assert spec.as_of(k) == want.replace("+00:00", "Z")
    assert halves > 100 or tick_seconds not in (5e-7, 1.5e-6)
