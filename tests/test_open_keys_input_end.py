"""An open-key release without an end when its input ends (``transforms.open_keys.OpenKeysFn._input_ended``).

A drain or a followed file's ``#END`` moves the watermark to the end of time and fires every timer. Each selected
key (and each candidate with state) has a timer at its next period: before this rule it walked one period a firing
towards Beam's largest timestamp and the job never finished (``docs/open_keys.md``, "The end of the input"). Now a
timer that fires past the wall clock plus the slack (the larger of a tick and ``CLOCK_SLACK_SECONDS``) releases the
periods final by then and sets no timer; every source here caps its watermark at the wall clock, so in a live run
no timer fires there. The clock is ``open_keys._clock`` (tests replace it)."""

from __future__ import annotations

import signal

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_stream import TestStream
from apache_beam.utils.timestamp import Timestamp
from test_open_keys_beam import KEY, LIMIT, _core, _elements, _stream

from transforms import open_keys
from transforms.core import ApproxDP
from transforms.core.foundation.noise import NoiseSource
from transforms.core.selection import OpenKeyRelease, SelectionParams
from transforms.open_keys import MAX_TS, OpenKeysFn, ReleaseOpenKeys, clock_slack, run_key
from transforms.spec import StreamSpec

#: a tick so long that about a hundred periods fit before Beam's time range ends (``MAX_TS``): a step that
#: ignored the clock would walk there and stop (so the broken twin fails the comparison rather than hang)
TICK = 4.6e10


def _stop(spec, clock: float) -> int:
    return spec.final_tick(Timestamp.of(clock + clock_slack(spec)))


#: what the pipeline answered (the BundleBased runner runs in this process). Not ``assert_that``: the answers of
#: the firings at the end of time come after its window has fired, and it would never see them
_GOT: list = []


def _collect(answer) -> None:
    _GOT.append(answer)


def _answers(ts, params, noise, spec, max_keys=None) -> list:
    """Runs the streaming step on the TestStream ``ts``; its answers, failing instead of hanging."""
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    _GOT.clear()
    p = beam.Pipeline(options=opts)
    out = p | ts | ReleaseOpenKeys(params, LIMIT, noise, spec, bounded=False, max_keys=max_keys)
    out["answers"] | beam.Map(_collect)
    old = signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("the pipeline did not finish")))
    signal.alarm(120)
    try:
        p.run().wait_until_finish()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return list(_GOT)


@pytest.mark.parametrize("max_keys", [None, 3])
@pytest.mark.parametrize("clock_ticks", [9.3, 14.6])
def test_a_run_without_an_end_stops_at_the_wall_clock_when_its_input_ends(monkeypatch, clock_ticks, max_keys):
    """Updates in periods 1-6, then the input ends (the watermark to infinity): every key is answered up to the
    last period final by the clock plus the slack, exactly as the in-memory core answers those periods, and the
    job finishes. Two clocks: the stop follows the clock, not the data (the same input ends later with a later
    clock). Without the rule the keys walk to Beam's time range (about 100 periods here) and the answers
    differ."""
    clock = clock_ticks * TICK
    monkeypatch.setattr(open_keys, "_clock", lambda: clock)
    spec = StreamSpec(tick_seconds=TICK)
    stop = _stop(spec, clock)
    assert 7 < stop < 20 and spec.tick_middle(60) < MAX_TS  # the walk without the rule would go far past stop
    stream = _stream(7, 6)
    params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=None, threshold=1)
    expect, _ = _core(params, KEY, stream + [[]] * (stop - len(stream)), max_keys)
    assert expect and max(p for p, *_ in expect) == stop  # keys answered to the stop (the comparison is not empty)
    ts, wm = TestStream(), 0.0
    for t, ups in enumerate(stream, 1):
        ts = ts.add_elements(_elements([[]] * (t - 1) + [list(reversed(ups))], TICK))
        while wm < t * TICK:  # quarter-tick steps: the BundleBased runner holds no watermark for pending timers
            wm += TICK / 4
            ts = ts.advance_watermark_to(wm)
    got = _answers(ts.advance_watermark_to_infinity(), params, KEY, spec, max_keys)  # the input ends
    assert sorted(got) == sorted(expect)


class _Cell:
    def __init__(self):
        self.value = None

    def read(self):
        return self.value

    def write(self, v):
        self.value = v

    def clear(self):
        self.value = None


class _Bag(_Cell):
    def read(self):
        return list(self.value or ())

    def add(self, v):
        self.value = [*(self.value or ()), v]


class _Timer:
    def __init__(self):
        self.at = None

    def set(self, ts):
        self.at = ts


def _fire_all(fn, cell, timer, chunks, limit: int = 1000) -> list:
    """Fires the key's timer at its time until none is set (what the end of time does), at most ``limit`` times."""
    out = []
    for _ in range(limit):
        if timer.at is None:
            return out
        ts, timer.at = timer.at, None
        out += list(fn.on_period_end(key="k", ts=ts, cell=cell, timer=timer, chunks=chunks))
    raise AssertionError("the key's timer kept firing")


def test_a_parked_key_releases_nothing_past_the_clock_and_its_next_event_wakes_it(monkeypatch):
    """One key, events at periods 1-3 and one at period 9 arriving after the input seemed to end (a source whose
    watermark ran ahead of this worker's clock): the firings up to the clock answer as usual; the first past
    it answers nothing and sets no timer (the cell says no timer is set); the later event sets one again, and
    with the clock moved on the key answers the periods it missed, to the new clock, each as the uninterrupted
    walk answers it. With a configured end the clock plays no part."""
    spec = StreamSpec(tick_seconds=60.0, origin=0.0)
    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=None, threshold=0)
    fn = OpenKeysFn(params, LIMIT, KEY, spec, None)
    fn.setup()
    cell, chunks, timer = _Cell(), _Bag(), _Timer()
    now = {"t": spec.final_at(5).micros / 1e6 - clock_slack(spec) + 1.0}  # periods 1-5 final by clock + slack
    monkeypatch.setattr(open_keys, "_clock", lambda: now["t"])
    for p in (1, 2, 3):
        fn.process(("k", (p, 2, 3)), cell=cell, timer=timer)
    first = _fire_all(fn, cell, timer, chunks)
    periods = [a[0] for a in first]
    assert periods == list(range(periods[0], 6)) and periods[0] <= 3  # selected by period 3, answered to 5
    assert timer.at is None and cell.read()[3] is None  # no timer, and the cell says so
    fn.process(("k", (9, 1, 1)), cell=cell, timer=timer)  # a later event: a timer again, at its period
    assert timer.at == spec.final_at(9)
    assert _fire_all(fn, cell, timer, chunks) == []  # the clock has not moved: nothing past it
    fn.process(("k", (10, 0, 1)), cell=cell, timer=timer)
    now["t"] = spec.final_at(12).micros / 1e6 - clock_slack(spec) + 1.0
    second = _fire_all(fn, cell, timer, chunks)
    assert [a[0] for a in second] == list(range(6, 13))
    # the uninterrupted walk: the same events, every period to 12
    ref = OpenKeysFn(params, LIMIT, KEY, spec, None)
    ref.setup()
    events = [(1, 2, 3), (2, 2, 3), (3, 2, 3), (9, 1, 1), (10, 0, 1)]
    _, _, answers, _ = run_key(ref.ctx, "k", None, 0, events, 12, None)
    assert [(p, "k", a, b) for p, a, b in answers] == first + second
    # a configured end: a firing past the clock answers as usual
    ended = OpenKeysFn(SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=8, threshold=0), LIMIT, KEY, spec, 8)
    ended.setup()
    cell, chunks, timer = _Cell(), _Bag(), _Timer()
    now["t"] = 0.0
    for p in (1, 2, 3):
        ended.process(("k", (p, 2, 3)), cell=cell, timer=timer)
    periods = [a[0] for a in _fire_all(ended, cell, timer, chunks)]
    assert periods == list(range(periods[0], 9)) and periods[0] <= 3  # to the end, the clock at 0


def test_without_noise_the_stopped_answers_are_the_true_live_counts(monkeypatch):
    """Noise off, threshold 0: the answers are each released key's true live entries at every period up to the
    stop, and none is past it."""
    clock = 11.2 * TICK
    monkeypatch.setattr(open_keys, "_clock", lambda: clock)
    spec = StreamSpec(tick_seconds=TICK)
    stop = _stop(spec, clock)
    stream = _stream(3, 5)
    params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=None, threshold=0)
    expect, _ = _core(params, NoiseSource.disabled(), stream + [[]] * (stop - len(stream)))
    rel, truth = OpenKeyRelease(params, LIMIT, NoiseSource.disabled()), []
    for ups in stream + [[]] * (stop - len(stream)):
        rel.step(ups)
        truth += [(rel.period, k, n, 0.0) for k, n in rel.truth().items()]
    assert sorted(expect) == sorted(truth) and max(p for p, *_ in expect) == stop
    ts = TestStream().add_elements(_elements(stream, TICK))
    for t in range(1, 4 * len(stream) + 1):
        ts = ts.advance_watermark_to(t * TICK / 4)
    got = _answers(ts.advance_watermark_to_infinity(), params, NoiseSource.disabled(), spec)
    assert sorted(got) == sorted(expect)
