"""The open-key Beam step (``transforms/open_keys.py``) on a histogram's open cells (issue 33): the keys are
``(stream, cell)`` pairs, each its own Beam key; bounded and streaming (TestStream) equal the in-memory core
(``OpenKeyRelease``) on the same input and noise key, and a cell first seen after a restore from state is handled."""

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


def _cells(seed: int, periods: int, persons: int = 10, cells: int = 5, per: int = 6) -> list:
    """Random (person, Update) periods over (stream, cell) keys with cell and stream changes, deletes and
    invalid updates."""
    rnd = random.Random(seed)
    out = []
    for _ in range(periods):
        ups = []
        for _ in range(rnd.randrange(per)):
            person, e = f"p{rnd.randrange(persons)}", f"e{rnd.randrange(4)}"
            op = rnd.choice(("insert", "insert", "upsert", "delete"))
            cell = (rnd.choice(("app", "web")), f"c{rnd.randrange(cells)}")
            ups.append((person, Update(op, e, None if op == "delete" else (cell,))))
        out.append(ups)
    return out


def _core(params, stream) -> tuple[list, list]:
    rel = OpenKeyRelease(params, LIMIT, KEY)
    answers, refused = [], []
    for ups in stream:
        r = rel.step(ups)
        answers += [(r.period, key, a, r.bounds[key]) for key, a in r.answers.items()]
        refused += [reason for _, reason in r.refused]
    return sorted(answers), sorted(refused)


def _elements(stream) -> list:
    return [
        beam.window.TimestampedValue((person, (t, u)), (t - 0.5) * TICK)
        for t, ups in enumerate(stream, 1)
        for person, u in ups
    ]


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("budget", [PureDP(2.0), ApproxDP(1.0, 1e-6)])
def test_beam_equals_core_on_cells(streaming, budget):
    stream = _cells(5, 7)
    params = SelectionParams(budget, 2, horizon=7, threshold=1)
    expect_answers, expect_dead = _core(params, stream)
    assert expect_answers and expect_dead  # cells are selected and updates refused (the comparison is not empty)
    assert all(isinstance(key, tuple) for _, key, *_ in expect_answers)
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    if streaming:
        opts.view_as(StandardOptions).streaming = True
        ts, wm = TestStream(), 0.0
        for t, ups in enumerate(stream, 1):
            ts = ts.add_elements(_elements([[]] * (t - 1) + [list(reversed(ups))]))
            while wm < t * TICK:  # quarter-tick watermark steps (the BundleBased runner's timers)
                wm += TICK / 4
                ts = ts.advance_watermark_to(wm)
        while wm < (len(stream) + 3) * TICK:
            wm += TICK / 4
            ts = ts.advance_watermark_to(wm)
        ts = ts.advance_watermark_to_infinity()
    spec = StreamSpec(tick_seconds=TICK, end_time=len(stream) * TICK)
    with TestPipeline(options=opts) as p:
        src = p | (ts if streaming else beam.Create([tv.value for tv in _elements(stream)]))
        out = src | ReleaseOpenKeys(params, LIMIT, KEY, spec, bounded=not streaming)
        assert_that(out["answers"], equal_to(expect_answers), label="answers")
        assert_that(out[DEAD] | beam.Map(lambda d: d["reason"]), equal_to(expect_dead), label="dead")


def test_restore_from_state_then_a_new_cell():
    """The streaming step's cells (persons' and (stream, cell) keys') written as bytes at period 4 and read back
    by a new worker; a cell first seen after the restore is selected and answered as the uninterrupted core's."""
    stream = _cells(11, 8)
    new = ("web", "new cell")
    stream[5] = [*stream[5], ("p1", Update("insert", "e9", (new,))), ("p2", Update("insert", "e9", (new,)))]
    params = SelectionParams(ApproxDP(2.0, 1e-6), 2, horizon=8, threshold=1)
    expect, _ = _core(params, stream)
    assert any(key == new for _, key, *_ in expect)

    def worker():
        fn = OpenKeysFn(params, LIMIT, KEY, StreamSpec(tick_seconds=TICK, end_time=8 * TICK), 8)
        fn.setup()
        return fn

    fn, persons, cells, got = worker(), {}, {}, []
    for t, ups in enumerate(stream, 1):
        if t == 5:  # restore: every stored cell through its bytes (Beam stores each key's cell apart), a new worker
            fn = worker()
            persons = {k: decode(encode(v)) for k, v in persons.items()}
            cells = {k: decode(encode(v)) for k, v in cells.items()}
        by_person: dict = {}
        for person, u in ups:
            by_person.setdefault(person, []).append((t, u.op, u.entry_id, u.item))
        events: dict = {}
        for person, plain in by_person.items():
            persons[person], out = decide_person(fn.keys, persons.get(person), person, plain)
            for key, ev in (o for o in out if isinstance(o, tuple)):
                events.setdefault(key, []).append(ev)
        for key in sorted(set(cells).union(events), key=repr):
            plain, last = cells.get(key, (None, 0))
            state, last, answers, _ = run_key(fn.ctx, key, key_state_from_plain(plain), last, events.get(key, []), t, 8)
            got += [(p, key, a, b) for p, a, b in answers]
            if state is None:
                cells.pop(key, None)
            else:
                cells[key] = (key_state_to_plain(state), last)
    assert sorted(got) == expect
