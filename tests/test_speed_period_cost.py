"""Round 9 of issue 30 (the per-period cost outside the release step): each shortcut against the computation it
replaces. Cheap (well under a second each); each fails with its shortcut broken by hand (``docs/performance.md``,
"Round 9")."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from pipelines.io.files import json_line
from transforms.core import ZCDP, PureDP
from transforms.core.counters import KaryTreeCounter
from transforms.core.counters.factorization import kary as kary_mod
from transforms.core.foundation import state as state_mod
from transforms.core.static import CountMechanism, HistogramMechanism

# --- the JSON lines step: json_line is json.dumps ---------------------------------------------------------------


def _random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.randint(-(2**70), 2**70)
    if kind == 2:
        return rng.choice([rng.uniform(-1e6, 1e6), rng.random() * 1e-300, -0.0, 0.1 + 0.2, 1e22, 5e-324])
    if kind == 3:
        return rng.choice([math.nan, math.inf, -math.inf])
    if kind == 4:
        return "".join(rng.choice('ab"\\/\n\t\x00\x1fé€😀 z') for _ in range(rng.randrange(8)))
    if kind == 5:
        return float(np.float64(rng.gauss(0, 10)))
    if kind == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if kind == 7:
        return tuple(_random_value(rng, depth + 1) for _ in range(rng.randrange(4)))
    return {
        _random_value(rng, 3) if rng.random() < 0.8 else rng.randrange(9): _random_value(rng, depth + 1)
        for _ in range(rng.randrange(5))
    }


def test_json_line_writes_what_json_dumps_writes():
    """Over release-like records and 2,000 random documents (NaN, infinities, -0.0, big ints, escapes, non-ASCII,
    tuples, non-str keys, numpy floats): the same text as ``json.dumps``."""
    record = {
        "release_id": "r1",
        "stream": "global",
        "tick": 7,
        "time": "1970-01-01T00:07:00Z",
        "query": "by_cat",
        "value": [1.5, -0.0, math.nan, 3.0],
        "keys": ["a", "b", "c", "d"],
        "bound": None,
        "epsilon": 1,
    }
    assert json_line(record) == json.dumps(record)
    rng = random.Random(9)
    for _ in range(2000):
        doc = {"k": _random_value(rng)} if rng.random() < 0.5 else _random_value(rng)
        assert json_line(doc) == json.dumps(doc), doc


def test_json_line_refuses_what_json_dumps_refuses():
    for bad in ({"x": object()}, {"x": {1, 2}}, {(1, 2): 3}, np.float32(1.0)):
        with pytest.raises(TypeError):
            json.dumps(bad)
        with pytest.raises(TypeError):
            json_line(bad)
    json_line({"after": "an error"})  # no state left behind by the failures
    assert json_line({"x": [1, 2]}) == '{"x": [1, 2]}'


# --- the k-ary counter's bound: the last block kept on the instance ---------------------------------------------


@pytest.mark.parametrize(
    "mechanism, budget", [(CountMechanism(1, "laplace"), PureDP(1.0)), (HistogramMechanism(3, "gaussian"), ZCDP(0.5))]
)
def test_kary_bound_memo_gives_the_bounds_of_the_shared_cache(noise, mechanism, budget):
    """Across a block boundary, with beta switching now and then: every bound equals the one computed with the
    memo cleared before the call (the shared cache's look-up), bit for bit; the memo is not stored state."""
    horizon = kary_mod._BLOCK + 300
    c = KaryTreeCounter(mechanism, budget, horizon=horizon)
    d = mechanism.domain_size
    for t in range(1, horizon + 1):
        c.step(np.ones(d, dtype=np.int64), noise)
        if t % 37 and kary_mod._BLOCK - 20 < t % kary_mod._BLOCK < kary_mod._BLOCK - 5:
            continue  # some periods without a look-up, so a block is entered without its first period
        for beta in (0.05, 0.05, 0.01) if t % 5 == 0 else (0.05,):
            fast = c.error_bound(beta)
            c.__dict__.pop("_bound_memo", None)
            assert fast == c.error_bound(beta), (t, beta)
    assert "_bound_memo" in c.__dict__
    plain = repr(state_mod.to_plain(c))
    assert "_bound_memo" not in plain and "_bound_key" not in plain
