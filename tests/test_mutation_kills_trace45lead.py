"""Properties of the open-key release that the differential trace found unasserted (issue 27; the lead's part of
round 45, group d's mutants traced after its helper stopped): a release's selected keys, answers and bounds
agree at every period, and a key's sparse-vector test at period p is decided by its query noise at p.

Kills ``OpenKeyRelease.step__mutmut_105`` (a period's bounds None: answers without their stated bound) by an
assertion (confirmed: passes unmutated, fails mutated by an AssertionError). Two more mutants the trace flagged fail
these tests only by raising, before anything is released, so they are judged loud
(``benchmarks/mutation_trace_45lead.py``): ``advance_key__mutmut_47`` (a candidate that failed its test reported
as selected: AttributeError when its answer is built) and ``step__mutmut_53`` (each test at period None: TypeError
at the first test). The second test asserts the property such a mutant would break if it did not raise: fresh
query noise every period, one threshold per key."""

from __future__ import annotations

import math
import random

import pytest

from transforms.core.foundation.accounting import ApproxDP, PureDP
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.selection import KeyLimit, OpenKeyRelease, SelectionParams
from transforms.core.selection.candidate import svt_coords


class _Recorder(NoiseSource):
    """A noise source that notes the coordinates of every stream it gives (and gives the same streams)."""

    def __init__(self, key: bytes):
        super().__init__(key)
        self.seen: list[tuple] = []

    def stream(self, *coords):
        self.seen.append(coords)
        return super().stream(*coords)


def _stream(seed: int, periods: int, keys: int = 4, persons: int = 1000):
    """Random (person, Update) periods, dense enough (100-200 updates a period over 1,000 persons) for keys to
    cross thresholds of 40-100 contributors within 12 periods, with upserts and deletes."""
    rnd = random.Random(seed)
    out = []
    for _ in range(periods):
        ups = []
        for _ in range(rnd.randrange(100, 200)):
            person, e = f"p{rnd.randrange(persons)}", f"e{rnd.randrange(3)}"
            op = rnd.choice(("insert", "insert", "insert", "upsert", "delete"))
            ups.append((person, Update(op, e, None if op == "delete" else (f"k{rnd.randrange(keys)}",))))
        out.append(ups)
    return out


CASES = [(PureDP(8.0), "svt"), (ApproxDP(8.0, 1e-6), "tree"), (ApproxDP(8.0, 1e-6), "svt"), (PureDP(8.0), "tree")]


@pytest.mark.parametrize("budget, test", CASES)
@pytest.mark.parametrize("seed", range(3))
def test_selected_keys_answers_and_bounds_agree_at_every_period(budget, test, seed):
    """At every period (noise on): the keys selected at p are new, have an answer and a bound; the answers are
    exactly the keys selected so far; every answer has its stated bound (finite, positive)."""
    params = SelectionParams(budget, 3, horizon=12, failure=0.05, test=test)
    rel = OpenKeyRelease(params, KeyLimit(3, 2, 3), NoiseSource(bytes(range(32))))
    so_far: set = set()
    selected_any = False
    for ups in _stream(seed, 12):
        out = rel.step(ups)
        new = set(out.selected)
        assert len(new) == len(out.selected) and not new & so_far, (out.selected, so_far)
        so_far |= new
        selected_any |= bool(new)
        assert set(out.answers) == so_far
        assert isinstance(out.bounds, dict) and set(out.bounds) == so_far
        assert all(math.isfinite(b) and b > 0 for b in out.bounds.values())
    assert selected_any  # the stream is dense enough for the property to be exercised


@pytest.mark.parametrize("budget", [PureDP(8.0), ApproxDP(8.0, 1e-6)])
@pytest.mark.parametrize("seed", range(3))
def test_a_sparse_vector_selection_at_p_is_decided_by_the_query_noise_of_p(budget, seed):
    """Under the sparse-vector test, a key selected at period p was tested with its query noise at p (coordinates
    ``svt_coords(key, p)``), and its threshold noise was drawn once: fresh query noise every period, one threshold
    per key (docs/open_keys.md)."""
    params = SelectionParams(budget, 3, horizon=12, failure=0.05, test="svt")
    noise = _Recorder(bytes(range(32)))
    rel = OpenKeyRelease(params, KeyLimit(3, 2, 3), noise)
    chosen = []
    for ups in _stream(seed, 12):
        out = rel.step(ups)
        chosen += [(k, out.period) for k in out.selected]
    assert chosen
    for key, p in chosen:
        assert svt_coords(key, p) in noise.seen, (key, p)
        thresholds = [c for c in noise.seen if c == svt_coords(key)]
        assert len(thresholds) <= 1
