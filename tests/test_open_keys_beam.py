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
from transforms.open_keys import DEAD, OpenKeysFn, ReleaseOpenKeys, decide_person, run_key
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


def _elements(stream) -> list:
    """``(person, (tick, Update))`` timestamped in the middle of their tick."""
    return [
        beam.window.TimestampedValue((person, (t, u)), (t - 0.5) * TICK)
        for t, ups in enumerate(stream, 1)
        for person, u in ups
    ]


def _spec(periods: int) -> StreamSpec:
    return StreamSpec(tick_seconds=TICK, end_time=periods * TICK)


def _run(params, noise, stream, streaming: bool, max_keys=None, periods=None) -> tuple[list, list]:
    spec = _spec(len(stream))
    results = {}
    if streaming:
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
        opts.view_as(StandardOptions).streaming = True
        ts, wm = TestStream(), 0.0
        for t, ups in enumerate(stream, 1):
            ts = ts.add_elements(_elements([[]] * (t - 1) + [list(reversed(ups))]))
            # the BundleBased runner holds no watermark for pending timers: quarter-tick steps (BEAM_NOTES)
            while wm < t * TICK:
                wm += TICK / 4
                ts = ts.advance_watermark_to(wm)
        while wm < (len(stream) + 3) * TICK:
            wm += TICK / 4
            ts = ts.advance_watermark_to(wm)
        ts = ts.advance_watermark_to_infinity()
    else:
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
    with TestPipeline(options=opts) as p:
        src = p | (ts if streaming else beam.Create([tv.value for tv in _elements(stream)]))
        out = src | ReleaseOpenKeys(params, LIMIT, noise, spec, bounded=not streaming, max_keys=max_keys)
        results["answers"] = out["answers"]
        results["dead"] = out[DEAD] | beam.Map(lambda d: d["reason"])
        expect_answers, expect_dead = _core(params, noise, stream, max_keys)
        assert_that(results["answers"], equal_to(expect_answers), label="answers")
        assert_that(results["dead"], equal_to(expect_dead), label="dead")
    return expect_answers, expect_dead


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
