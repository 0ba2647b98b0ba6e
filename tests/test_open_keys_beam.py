"""The open-key Beam step (issue 33, ``transforms/open_keys.py``): bounded and streaming (TestStream on
the DirectRunner) equal the in-memory core (``OpenKeyRelease``) on the same input and noise key; noise
off and threshold 0 release every key with a live contributor at the period it appears, exactly; a key
first seen after a restore from state; a never-selected key is in no output."""

from __future__ import annotations

import random

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to

from transforms import open_keys
from transforms.core.foundation.accounting import ApproxDP, PureDP
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import decode, encode
from transforms.core.selection import (
    KeyLimit,
    OpenKeyRelease,
    SelectionParams,
    key_state_from_plain,
    key_state_to_plain,
)
from transforms.open_keys import DEAD, MAX_TS, OpenKeysFn, ReleaseOpenKeys, decide_person, run_key
from transforms.spec import StreamSpec

TICK = 10.0
KEY = NoiseSource(bytes(range(32)))
LIMIT = KeyLimit(2, 3, 3)


def _stream(seed: int, periods: int, persons: int = 10, keys: int = 7, per: int = 6) -> list:
    """Random (person, Update) periods with key changes, deletes and invalid updates."""
    rnd = random.Random(seed)
    out = []
    for _ in range(periods):
        ups = []
        for _ in range(rnd.randrange(per)):
            person, e = f"p{rnd.randrange(persons)}", f"e{rnd.randrange(4)}"
            op = rnd.choice(("insert", "insert", "upsert", "delete"))
            ups.append((person, Update(op, e, None if op == "delete" else (f"k{rnd.randrange(keys)}",))))
        out.append(ups)
    return out


def _core(params, noise, stream, max_keys=None) -> tuple[list, list]:
    rel = OpenKeyRelease(params, LIMIT, noise, max_keys=max_keys)
    answers, refused = [], []
    for ups in stream:
        r = rel.step(ups)
        answers += [(r.period, k, a, r.bounds[k]) for k, a in r.answers.items()]
        refused += [r for _, r in r.refused]
    return sorted(answers), sorted(refused)


def _elements(stream, tick: float = TICK) -> list:
    """``(person, (tick, Update))`` timestamped in the middle of their tick."""
    return [
        beam.window.TimestampedValue((person, (t, u)), (t - 0.5) * tick)
        for t, ups in enumerate(stream, 1)
        for person, u in ups
    ]


#: a tick after which only a dozen periods fit before Beam's time range ends (the no-end runs)
NO_END_TICK = 4.6e11


def _last_scheduled(spec) -> int:
    """The last period the no-end step (with a cap) schedules: its cap stage's flush, half a tick after
    ``final_at``, is before ``MAX_TS``."""
    p = 1
    while spec.tick_middle(p + 1 + spec.lateness_ticks + 2) < MAX_TS:
        p += 1
    return p


def _spec(periods: int) -> StreamSpec:
    return StreamSpec(tick_seconds=TICK, end_time=periods * TICK)


def _run(params, noise, stream, streaming: bool, max_keys=None) -> tuple[list, list]:
    """Beam (bounded, or streaming: TestStream) against the core. Without a horizon (a run without an end,
    streaming only) the tick is so long that the periods whose timers fall past Beam's time range
    (``transforms.open_keys.MAX_TS``) come after a few: the step releases up to there, the core as far."""
    tick = TICK if params.horizon is not None else NO_END_TICK
    spec = _spec(len(stream)) if params.horizon is not None else StreamSpec(tick_seconds=tick)
    if params.horizon is None:
        stream = stream + [[]] * (_last_scheduled(spec) - len(stream))
    if params.horizon is None:
        # these ticks lie far past today's wall clock, which would end each key's walk at once
        # (``OpenKeysFn._input_ended``): a clock past Beam's time range lets it walk to the last scheduled period
        clock, open_keys._clock = open_keys._clock, lambda: MAX_TS.micros / 1e6
    try:
        _run_pipeline(params, noise, stream, streaming, max_keys, tick, spec)
    finally:
        if params.horizon is None:
            open_keys._clock = clock
    return _core(params, noise, stream, max_keys)


def _run_pipeline(params, noise, stream, streaming, max_keys, tick, spec) -> None:
    if streaming:
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
        opts.view_as(StandardOptions).streaming = True
        ts, wm = TestStream(), 0.0
        for t, ups in enumerate(stream, 1):
            ts = ts.add_elements(_elements([[]] * (t - 1) + [list(reversed(ups))], tick))
            # the BundleBased runner holds no watermark for pending timers: quarter-tick steps (BEAM_NOTES)
            while wm < t * tick:
                wm += tick / 4
                ts = ts.advance_watermark_to(wm)
        while wm < (len(stream) + 3) * tick:
            wm += tick / 4
            ts = ts.advance_watermark_to(wm)
        ts = ts.advance_watermark_to_infinity()
    else:
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
    with TestPipeline(options=opts) as p:
        src = p | (ts if streaming else beam.Create([tv.value for tv in _elements(stream, tick)]))
        out = src | ReleaseOpenKeys(params, LIMIT, noise, spec, bounded=not streaming, max_keys=max_keys)
        dead = out[DEAD] | beam.Map(lambda d: d["reason"])
        expect_answers, expect_dead = _core(params, noise, stream, max_keys)
        assert_that(out["answers"], equal_to(expect_answers), label="answers")
        assert_that(dead, equal_to(expect_dead), label="dead")


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("budget", [PureDP(2.0), ApproxDP(1.0, 1e-6)])
def test_beam_equals_core(streaming, budget):
    stream = _stream(3, 8)
    params = SelectionParams(budget, 2, horizon=8, threshold=1)
    answers, dead = _run(params, KEY, stream, streaming)
    assert answers and dead  # the input selects keys and refuses updates (the comparison is not empty)


def test_noise_off_threshold_zero_releases_every_live_key_at_once_exactly():
    """Noise off, T = 0: a key is selected at the first period it has a live contributor, its answers
    are its exact live entries; a key nobody keeps is in no output."""
    stream = _stream(7, 6)
    params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=6, threshold=0)
    rel = OpenKeyRelease(params, LIMIT, NoiseSource.disabled())
    first, truth = {}, []
    for ups in stream:
        r = rel.step(ups)
        for k in r.selected:
            first.setdefault(k, r.period)
        live = {k: s["live"] for k, s in rel.candidates.items()}
        assert not any(live.values())  # every key with a live contributor is selected at once
        truth += [(r.period, k, n, 0.0) for k, n in rel.truth().items()]
    assert first
    answers, _ = _run(params, NoiseSource.disabled(), stream, streaming=False)
    assert answers == sorted(truth)
    assert {(k, p) for p, k, *_ in answers if p == first[k]} == {(k, p) for k, p in first.items()}


def test_never_selected_key_is_in_no_output():
    """Noise off, T = 1: the key ``lone`` (one contributor) is never selected: in no answer and no dead
    letter (a refused update's dead letter names no key)."""
    ups = [("a", Update("insert", "e1", ("pair",))), ("b", Update("insert", "e1", ("pair",)))]
    ups += [("c", Update("insert", "e1", ("lone",))), ("c", Update("insert", "e2", ("x",)))]
    ups += [("c", Update("insert", "e3", ("y",)))]  # c's third key: refused (K = 2)
    stream = [ups, [], [("c", Update("delete", "e1"))]]
    params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=3, threshold=1)
    spec = _spec(3)
    with TestPipeline(options=PipelineOptions(runner="BundleBasedDirectRunner")) as p:
        src = p | beam.Create([tv.value for tv in _elements(stream)])
        out = src | ReleaseOpenKeys(params, LIMIT, NoiseSource.disabled(), spec, bounded=True)
        expect = [(1, "pair", 2, 0.0), (2, "pair", 2, 0.0), (3, "pair", 2, 0.0)]
        assert_that(out["answers"], equal_to(expect), label="answers")
        dead = out[DEAD] | beam.Map(lambda d: (d["reason"], "lone" in repr(d) or "'y'" in repr(d)))
        assert_that(dead, equal_to([("contribution_bounded", False)]), label="dead")


def test_restore_from_state_then_a_new_key():
    """The streaming step's cells (persons' and keys') written as bytes at period 4 and read back by a new
    worker (what a restore from a savepoint does); a key first seen after the restore is handled: the
    answers equal the uninterrupted core's."""
    stream = _stream(11, 9)
    stream[6] = [*stream[6], ("p1", Update("insert", "e9", ("knew",))), ("p2", Update("insert", "e9", ("knew",)))]
    params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=9, threshold=1)
    expect, _ = _core(params, KEY, stream)
    assert any(k == "knew" for _, k, *_ in expect)

    def worker():
        fn = OpenKeysFn(params, LIMIT, KEY, _spec(9), 9)
        fn.setup()
        return fn

    fn, persons, cells, got = worker(), {}, {}, []
    for t, ups in enumerate(stream, 1):
        if t == 5:  # restore: every cell through its bytes, a fresh worker
            fn = worker()
            persons, cells = decode(encode(persons)), decode(encode(cells))
        by_person: dict = {}
        for person, u in ups:
            by_person.setdefault(person, []).append((t, u.op, u.entry_id, u.item))
        events: dict = {}
        for person, plain in by_person.items():
            persons[person], out = decide_person(fn.keys, persons.get(person), person, plain)
            for key, ev in (o for o in out if isinstance(o, tuple)):
                events.setdefault(key, []).append(ev)
        for key in sorted(set(cells).union(events)):
            plain, last = cells.get(key, (None, 0))
            state, last, answers, _ = run_key(fn.ctx, key, key_state_from_plain(plain), last, events.get(key, []), t, 9)
            got += [(p, key, a, b) for p, a, b in answers]
            if state is None:
                cells.pop(key, None)
            else:
                cells[key] = (key_state_to_plain(state), last)
    assert sorted(got) == expect


@pytest.mark.parametrize("streaming", [False, True])
def test_max_keys_caps_the_released_keys_beam_equals_core(streaming):
    """``max_keys`` below the number of keys the input selects (the core releases 3 of at least 5): the
    Beam step (bounded: the admitted set as a side input; streaming: the one-key cap stage) releases what
    the capped core releases."""
    stream = _stream(3, 8)
    params = SelectionParams(PureDP(2.0), 2, horizon=8, threshold=1)
    free, _ = _core(params, KEY, stream)
    assert len({k for _, k, *_ in free}) >= 5
    answers, _ = _run(params, KEY, stream, streaming, max_keys=3)
    assert len({k for _, k, *_ in answers}) == 3


@pytest.mark.parametrize("budget", [None, ApproxDP(1.0, 1e-6)])
def test_run_without_an_end_streaming_equals_core(budget):
    """No ``time.end`` (horizon None): streaming TestStream equals the in-memory core, noise off and
    threshold 0 exactly (every key with a live contributor released at once, its true live entries), and
    with noise (unbounded counters: ``blt``); every key with state is woken one period at a time, never
    at a horizon."""
    stream = _stream(5, 5)
    if budget is None:
        params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=None, threshold=0)
        noise = NoiseSource.disabled()
    else:
        params, noise = SelectionParams(budget, 2, horizon=None, threshold=1), KEY
    answers, _ = _run(params, noise, stream, streaming=True, max_keys=4)
    periods = {p for p, *_ in answers}
    assert answers and max(periods) > len(stream)  # answered after the input, to the last scheduled period
    if budget is None:
        rel = OpenKeyRelease(params, LIMIT, NoiseSource.disabled())
        truth = []
        for ups in stream + [[]] * (max(periods) - len(stream)):
            rel.step(ups)
            truth += [(rel.period, k, n, 0.0) for k, n in rel.truth().items()][:4]
        assert sorted(a for a in answers if a[1] in set(list(rel.selected)[:4])) == sorted(truth)
    with pytest.raises(ValueError, match="bounded input need a horizon"):
        ReleaseOpenKeys(params, LIMIT, noise, StreamSpec(tick_seconds=TICK), bounded=True)


def test_a_selected_keys_counter_carries_its_schema_and_later_migrations_reach_it(monkeypatch):
    """A selected key's counter is stored outside a mechanism's envelope, so the state format's schema is
    written beside it (stop 50): a later schema's migration is applied to it on restore (one call, naming
    the part), the restored key continues exactly as the one that wrote it, a state without the field
    (written before) reads as schema 2, and a newer schema than the library's is refused."""
    from transforms.core.foundation import state as fmt
    from transforms.core.foundation.state import StateError

    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=40, threshold=0)
    fn = OpenKeysFn(params, LIMIT, KEY, _spec(40), 40)
    fn.setup()

    def go(state, last, first, upto):
        events = [(p, 2, 3) for p in range(first, min(upto, 4) + 1)]
        state, last, answers, _ = run_key(fn.ctx, "k", state, last, events, upto, 40)
        return state, last, answers

    state, last, _ = go(None, 0, 1, 10)
    plain = key_state_to_plain(state)
    assert "selected" in plain and plain["schema"] == fmt.SCHEMA == 2
    expect = go(key_state_from_plain(plain), last, 11, 20)[2]
    assert len(expect) == 10  # answered every period
    before = {k: v for k, v in plain.items() if k != "schema"}  # a state written before the field
    assert go(key_state_from_plain(before), last, 11, 20)[2] == expect
    calls = []
    monkeypatch.setattr(fmt, "SCHEMA", 3)
    monkeypatch.setitem(fmt.MIGRATIONS, 2, lambda st: calls.append(st["mechanism"]) or {**st, "schema": 3})
    restored = key_state_from_plain(decode(encode(plain)))
    assert calls == ["open_keys.counter"]
    assert go(restored, last, 11, 20)[2] == expect
    newer = key_state_to_plain(restored)
    assert newer["schema"] == 3
    monkeypatch.setattr(fmt, "SCHEMA", 2)
    with pytest.raises(StateError, match="newer"):
        key_state_from_plain(newer)
