"""A release without a configured end whose input ends (a drain, a followed file's ``#END``, a bounded read in a
streaming job): the watermark reaches the end of time, which fires every event-time timer. Before the input-end
marker (``transforms.streaming.with_input_end``) the per-stream step then walked every tick up to Beam's largest
timestamp, releasing periods that had not happened, and the job never finished (found on the embedded Flink:
266,000 one-minute ticks released in ten minutes after a 200-tick input, 4 s a firing and growing). Now the
step stops at the last tick whose input is final at the wall clock when the input ended (public: when the input
was stopped, not what it held), discards later updates, and the job ends.
"""

from __future__ import annotations

import signal
from contextlib import contextmanager

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that
from apache_beam.utils.timestamp import Timestamp

import transforms.per_stream as per_stream
from transforms.core import ApproxDP, DynamicConfig, PureDP, QuerySet, ReleaseIdentity, Update
from transforms.core.continual.auto import AutoRelease
from transforms.core.foundation.noise import NoiseSource
from transforms.per_stream import GATED_CATCH_UP_TICKS, INPUT_END, PerStreamStepFn
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, StreamSpec

KEY = bytes(range(32))
REL = ReleaseIdentity("input-end-test")


@contextmanager
def _deadline(seconds: int):
    """Fail instead of hanging (a step that walks to the end of Beam's time never returns)."""

    def _raise(*_):
        raise TimeoutError(f"the pipeline did not finish in {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _records():
    ups = [UpdateRecord(i + 0.5, "insert", f"e{i}", (i % 3,), "a", i) for i in range(0, 60, 2)]
    ups += [UpdateRecord(i + 0.7, "delete", f"e{i - 7}", None, "a", 1000 + i) for i in range(9, 60, 6)]
    # well after the wall clock's stop (below): applied by no release, discarded as after an end
    ups += [UpdateRecord(150.5 + i, "insert", f"late{i}", (0,), "a", 5000 + i) for i in range(3)]
    return ups


#: On the DirectRunner the marker can reach the step a firing after the runner fired its timers for the end of
#: time (measured: one catch-up firing, to tick 88 with the stop at 79): those firings release up to their grid
#: point. Flink delivers the marker first (``tests/test_flink.py``: the stop exactly).
DIRECT_SLACK = 2 * GATED_CATCH_UP_TICKS


@pytest.mark.pipeline
@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 1e-6)], ids=["pure", "gaussian"])
def test_a_release_without_an_end_stops_at_the_wall_clock_when_its_input_ends(monkeypatch, budget):
    """Streaming DirectRunner, no end: the updates of ticks 1..60 (one-second ticks), then the watermark to
    infinity with the wall clock at 80 s (``final_tick(80) = 79``: the input of tick t is final at the end of
    tick t + 1). The job finishes (before the marker it walked to the end of Beam's time); it releases ticks
    1..k, k from 79 to 79 + DIRECT_SLACK, each equal to the core's in memory; the updates dated after them are
    in no release."""
    monkeypatch.setattr(per_stream, "_clock", lambda: 80.0)
    spec = StreamSpec(streams=("a",), tick_seconds=1.0)
    stop = spec.final_tick(Timestamp.of(80.0))
    assert stop == 79
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), budget)
    t = ReleaseContinually("auto", cfg, spec, NoiseKey.fixed(KEY.hex()), release=REL)
    records = _records()
    noise = NoiseSource(KEY).for_release(t.release)
    core = AutoRelease(cfg, stream="a", options=t.options, end_tick=None)
    by_tick: dict[int, list] = {}
    for r in sorted(records, key=lambda r: (spec.tick_of(r.event_time), r.seq)):
        if spec.tick_of(r.event_time) <= stop + DIRECT_SLACK:
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
    results = [core.process_tick(k, ups, noise) for k, ups in sorted(by_tick.items())]
    results.append(core.process_tick(stop + DIRECT_SLACK, [], noise))  # the empty ticks after the data
    expect = {(a.tick, a.query): tuple(float(x) for x in a.estimate) for r in results for a in r.answers}

    def check(got):
        ticks = sorted({tick for tick, _, _ in got})
        assert stop <= ticks[-1] <= stop + DIRECT_SLACK and ticks == list(range(1, ticks[-1] + 1)), ticks[-3:]
        assert len(got) == 2 * len(ticks) and all(expect[(k, q)] == v for k, q, v in got)

    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    p = beam.Pipeline(options=opts)
    ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in records])
    for wm in range(5, 61, 5):
        ts = ts.advance_watermark_to(float(wm))
    out = p | ts.advance_watermark_to_infinity() | t
    got = out["answers"] | beam.Map(lambda a: (a.tick, a.query, tuple(float(x) for x in a.estimate)))
    assert_that(got, check)
    with _deadline(120):
        p.run().wait_until_finish()
    # (the discarded aggregates' counter is incremented in a timer callback, which this runner's metrics lose:
    # docs/beam.md; the discard itself is checked on the step below)


def test_with_an_end_the_graph_has_no_input_end_marker():
    """A release with a configured end is unchanged: its core finishes there (no marker, the same graph and
    state names as before); without one the marker steps are there."""

    def labels(spec):
        p = beam.Pipeline(options=PipelineOptions(streaming=True))
        ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in _records()[:2]])
        cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
        _ = p | ts | ReleaseContinually("auto", cfg, spec, NoiseKey.fixed(KEY.hex()), release=REL)
        return {t.full_label.rsplit("/", 1)[-1] for t in p.transforms_stack[0].parts[-1].parts}

    with_end = labels(StreamSpec(streams=("a",), tick_seconds=1.0, end_time=100.0))
    without = labels(StreamSpec(streams=("a",), tick_seconds=1.0))
    assert "WithInputEnd" in without and "GroupAtInputEnd" in without
    assert not {"WithInputEnd", "GroupAtInputEnd", "InputEndMarker"} & with_end


class _Cell:
    def __init__(self, v=None):
        self.v = v

    def read(self):
        return self.v

    def write(self, v):
        self.v = v

    def clear(self):
        self.v = None


class _Bag(_Cell):
    def __init__(self):
        super().__init__([])

    def add(self, x):
        self.v.append(x)

    def read(self):
        return list(self.v)

    def clear(self):
        self.v = []


class _Timer:
    def __init__(self):
        self.sets = []

    def set(self, ts):
        self.sets.append(ts)


def _fn(end_time=None):
    spec = StreamSpec(streams=("a",), tick_seconds=60.0, end_time=end_time)
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    step = ReleaseContinually("auto", cfg, spec, NoiseKey.fixed(KEY.hex()), release=REL)._step()
    fn = PerStreamStepFn(step, catch_up=True)
    fn.setup()
    return fn, spec


def test_the_input_end_is_the_wall_clocks_final_tick_once_and_only_without_an_end(monkeypatch):
    monkeypatch.setattr(per_stream, "_clock", lambda: 60.0 * 500 + 30)
    fn, spec = _fn()
    cells = [_Cell(), _Bag(), _Bag(), _Cell(), _Timer(), _Cell()]
    list(fn.process(("a", INPUT_END), *cells) or ())
    assert cells[5].v == spec.final_tick(Timestamp.of(60.0 * 500 + 30)) == 499
    monkeypatch.setattr(per_stream, "_clock", lambda: 60.0 * 900)
    list(fn.process(("a", INPUT_END), *cells) or ())  # a second marker (a retried bundle) keeps the first stop
    assert cells[5].v == 499 and cells[0].v is None and not cells[4].sets  # nothing else touched
    fn_end, _ = _fn(end_time=60.0 * 1000)
    ended = [_Cell(), _Bag(), _Bag(), _Cell(), _Timer(), _Cell()]
    list(fn_end.process(("a", INPUT_END), *ended) or ())
    assert ended[5].v is None  # a configured end: the core finishes there


def test_a_firing_after_the_input_end_walks_to_the_stop_discards_later_input_and_sets_no_timer():
    """The firing at the end of time (the watermark at infinity: any timestamp past the stop) releases every
    tick up to the stop and none after, drops the aggregates after it (``batches_after_finish``) and sets
    neither timer: the job can finish. A twin without the stop walks to its catch-up grid point and sets
    both timers again (what never ended)."""
    fn, spec = _fn()
    far = spec.final_at(1000)

    def fire(stop):
        core, chunks, pending, queries, wake_tick = _Cell(), _Bag(), _Bag(), _Bag(), _Cell()
        pending.add((3, {(0,): 2}, {}, 2))
        pending.add((400, {(0,): 1}, {}, 1))  # after the stop
        wake, catch_up = _Timer(), _Timer()
        out = list(fn._fire("a", far, (core, chunks), pending, queries, wake_tick, wake, catch_up, stop=stop))
        ticks = sorted({r.value.tick for r in out if hasattr(r, "value") and hasattr(r.value, "tick")})
        return ticks, pending.read(), wake.sets + catch_up.sets, wake_tick.v

    ticks, left, timers, parked = fire(stop=120)
    assert ticks == list(range(1, 121)) and left == [] and timers == [] and parked is None
    ticks, left, timers, _ = fire(stop=None)
    assert ticks[-1] == 1000 and timers  # walks on and arms the next firing
