"""The memos and shortcuts of issue 30 change no value: the tail bound's cache is keyed by the exact terms
and counts of a profile (``transforms/core/foundation/bounds.py``), a release record's spend fields, computed
once per distinct spend (``pipelines/outputs.py``), are those of its own spend, in a record of its own, and
small noise draws with scalar math are the vectorised draws, word for word."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from pipelines.config import load_config
from pipelines.outputs import release_dict
from transforms.core.foundation import samplers
from transforms.core.foundation.bounds import LAPLACE, NoiseProfile
from transforms.core.foundation.random_stream import RandomStream
from transforms.core.foundation.samplers import geometric_inversion


def _kary_like(counts, w=0.0588235294117647):
    return NoiseProfile(
        {(LAPLACE, 9.0, 0.0034602076124567475): counts[0], (LAPLACE, 9.0, w): counts[1], (LAPLACE, 9.0, 1.0): 3}
    )


def test_cached_bound_is_keyed_by_every_count_and_weight():
    a = _kary_like((517, 24)).tail_bound(0.05)
    more = _kary_like((518, 24)).tail_bound(0.05)  # one more term of one kind
    heavier = _kary_like((517, 24), w=0.0588235294117647 * (1 + 1e-6)).tail_bound(0.05)
    other_beta = _kary_like((517, 24)).tail_bound(0.05 / 3)
    assert more > a and heavier > a and other_beta > a
    assert _kary_like((517, 24)).tail_bound(0.05) == a  # the cached value is the value


def test_cached_bound_equals_the_uncached_computation():
    """Integer parameters take the uncompressed path (a profile keyed by its terms as given); the same numbers
    as floats take the compact key: the same bits either way, over kary- and lattice-like profiles."""
    for j in range(1, 40):  # 3 to 11 terms, counts up to 5,000: the order of the terms shows in the last bits
        terms = {(9.0, 1.7**-k): (j * 131 + k * 977) % 5000 + 1 for k in range(3 + j % 9)}
        as_float = NoiseProfile({(LAPLACE, p, w): c for (p, w), c in terms.items()})
        as_int_param = NoiseProfile({(LAPLACE, int(p), w): c for (p, w), c in terms.items()})
        for beta in (0.05, 0.05 / 16):
            x, y = as_float.tail_bound(beta), as_int_param.tail_bound(beta)
            assert x == y and math.isfinite(x), (j, beta)


def test_spend_fields_are_each_records_own():
    cfg = load_config("configs/demo.yaml")

    def record(spent):
        rel = SimpleNamespace(
            stream="eu",
            tick=1,
            segment=1,
            query="active",
            estimate=[3.0],
            error_bound=1.0,
            beta=0.05,
            spent=spent,
            as_of="t",
        )
        return release_dict(cfg, rel)

    a, b, a2 = record((0.25,)), record((0.5,)), record((0.25,))
    assert a["epsilon_spent"] == 0.25 and b["epsilon_spent"] == 0.5 and a2 == a
    a["update_level_spent"]["epsilon"] = -1.0  # a sink that changed a record changes no other record
    assert record((0.25,))["update_level_spent"] == {"epsilon": 0.25}


class _Words:
    """A stream of given words first (then a RandomStream's): to put U on a boundary q^k."""

    def __init__(self, first, seed):
        self.first, self.rest = list(first), RandomStream(seed)

    def words(self, n):
        take, self.first = self.first[:n], self.first[n:]
        more = self.rest.words(n - len(take)) if n > len(take) else np.empty(0, dtype=np.uint64)
        return np.concatenate([np.array(take, dtype=np.uint64), more])


def test_small_draws_equal_the_vectorised_form_draw_for_draw(monkeypatch):
    """Scalar math for small draws (``samplers.SMALL_DRAW``): the same values and the same words consumed as the
    vectorised form, at several scales, and with U on or next to a boundary q^k (the exact refinement)."""
    cases = [(9, 1), (1, 1), (7, 3), (1, 50), (1000, 1), (2**40, 3)]

    def draws(seed, first=()):
        out = []
        for t, s in cases:
            for size in (1, 2, 6, 12, 32):
                stream = _Words(first, seed + f"{t}/{s}/{size}".encode())
                out.append((geometric_inversion(stream, t, s, size).tolist(), stream.words(3).tolist()))
        return out

    near = [int(math.exp(-k) * 2.0**64) + d for k in (1, 2, 5) for d in (-1, 0, 1)]  # q = e^-1 (t = s = 1)
    ends = [2**64 - 1, 2**64 - 2, 2**63, 2**62]  # U at 1 (the float of 2^64 - 1 is 2^64: mid = 1)
    small = [draws(b"seed-%d" % i) for i in range(60)] + [draws(b"edge", near), draws(b"ends", ends * 6)]
    monkeypatch.setattr(samplers, "SMALL_DRAW", 0)
    vectorised = [draws(b"seed-%d" % i) for i in range(60)] + [draws(b"edge", near), draws(b"ends", ends * 6)]
    assert small == vectorised


def test_auto_spent_memo_is_the_composition_of_the_parts_spends(noise):
    """``AutoRelease.spent`` composes again only when a part's spend changed: at every tick it is the composition
    of the parts' current spends (its repr: the values and their types), whatever the memo held."""
    from transforms.core import DynamicConfig, PureDP, QuerySet, Update
    from transforms.core.continual.auto import AutoRelease
    from transforms.core.foundation.accounting.budgets import compose_sequential

    config = DynamicConfig(
        (
            QuerySet("n", "count"),
            QuerySet("h", "histogram", domain_size=3),
            QuerySet("r", "pmw", domain_size=8, ranges=True),
        ),
        PureDP(3.0),
    )
    core = AutoRelease(config, stream="s", every_ticks=1, end_tick=40)
    rng = np.random.default_rng(3)
    seen, k = set(), 0
    for t in range(1, 41):
        ups = [Update("insert", f"e{k + i}", (int(rng.integers(3)), int(rng.integers(8)))) for i in range(2)]
        k += 2
        res = core.process_tick(t, ups, noise)
        want = compose_sequential(type(p).group_unit(p.config).guarantee(p.spent) for p in core.parts)
        assert repr(core.spent) == repr(want), t
        assert all(repr(a.spent) == repr(want) for a in res.answers), t
        seen.add(repr(want))
    assert len(seen) >= 2  # the spends change during the run: a stale memo would show


def _histograms_numpy(batch, domain_sizes, signed=True):
    """``TickBatch.histograms`` as it was: numpy element updates."""
    hists = [np.zeros(d, dtype=np.int64) for d in domain_sizes]
    for item in batch.inserts:
        for q, v in enumerate(item):
            hists[q][v] += 1
    if signed:
        for item, _ in batch.deletes:
            for q, v in enumerate(item):
                hists[q][v] -= 1
    return hists


def test_tick_histograms_equal_the_numpy_form():
    """``TickBatch.histograms`` (counted in lists): the former numpy form's arrays, dtype included, signed and not,
    over random batches (empty ones, repeated items, one-cell domains); twin: deletions not subtracted."""
    from transforms.core.foundation.entries import TickBatch

    rng = np.random.default_rng(31)
    for n in range(400):
        sizes = tuple(int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 4))))
        item = lambda sizes=sizes: tuple(int(rng.integers(0, d)) for d in sizes)  # noqa: E731
        batch = TickBatch(
            n, [item() for _ in range(int(rng.integers(0, 30)))], [(item(), 1) for _ in range(int(rng.integers(0, 30)))]
        )
        for signed in (True, False):
            got, want = batch.histograms(sizes, signed), _histograms_numpy(batch, sizes, signed)
            assert [h.dtype for h in got] == [np.dtype(np.int64)] * len(sizes)
            assert [h.tolist() for h in got] == [h.tolist() for h in want]
    twin = _histograms_numpy(batch, sizes, signed=False)
    assert batch.deletes and [h.tolist() for h in twin] != [h.tolist() for h in batch.histograms(sizes)]


def test_auto_passes_a_part_of_every_query_set_the_batch_unprojected(noise, monkeypatch):
    """``AutoRelease._apply``: a part whose query sets are all of them, in order, gets the batch's items as they are
    (no per-item projection); the answers are those of the projecting path (forced by making the part's
    columns a list, which never equals the tuple of every position), with deletions and upserts."""
    from transforms.core import DynamicConfig, PureDP, QuerySet, Update
    from transforms.core.continual.auto import AutoRelease

    config = DynamicConfig(
        (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3), QuerySet("g", "histogram", domain_size=2)),
        PureDP(3.0),
    )

    def run(project: bool):
        core = AutoRelease(config, stream="s", every_ticks=1, end_tick=30)
        if project:
            core.columns = [list(c) for c in core.columns]
        assert len(core.parts) == 1 and tuple(core.columns[0]) == (0, 1, 2)
        rng = np.random.default_rng(5)
        out, alive = [], []
        for t in range(1, 31):
            ups = [Update("insert", f"e{t}_{j}", (0, int(rng.integers(3)), int(rng.integers(2)))) for j in range(4)]
            if alive:
                ups.append(Update("delete", alive.pop(0)))
            if len(alive) > 2:
                ups.append(Update("upsert", alive[-1], (0, 2, 1)))
            alive += [u.entry_id for u in ups if u.op == "insert"]
            res = core.process_tick(t, ups, noise)
            out += [(a.tick, a.query, a.estimate.tolist(), a.error_bound) for a in res.answers]
        return out

    fast, projected = run(False), run(True)
    assert fast and fast == projected


class _Recording(_Words):
    """``_Words`` that keeps every word it handed out."""

    def __init__(self, first, seed):
        super().__init__(first, seed)
        self.given = []

    def words(self, n):
        out = super().words(n)
        self.given += [int(x) for x in out]
        return out


def _is_x(words: list, t: int, s: int, x: int) -> bool:
    """Whether ``x`` is max{k: U <= q^k} for every U in the interval the ``words`` read (q = exp(-s/t)), decided
    at 300 digits: U's upper end <= q^x and its lower end > q^(x+1)."""
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 300
        w = 0
        for word in words:
            w = (w << 64) | word
        scale = decimal.Decimal(2) ** (64 * len(words))
        lo, hi = decimal.Decimal(w) / scale, decimal.Decimal(w + 1) / scale
        lnq = -decimal.Decimal(s) / decimal.Decimal(t)
        return hi <= (lnq * x).exp() and lo > (lnq * (x + 1)).exp()


@pytest.mark.parametrize("first", [0, 1, 2**20, 2**30])
def test_a_guess_far_from_x_is_found_exactly(first):
    """A first word near 0 at a scale of 2^40 / 3: U's interval spans ~10^13 values of k past the float guess (the
    walk of single steps gave up after 100,000 with "did not converge"); the search now gallops and bisects, and
    the value is the exact X of U as read (the words the draw consumed, checked at 300 digits)."""
    t, s = 2**40, 3
    stream = _Recording([first], b"far")
    x = int(geometric_inversion(stream, t, s, 1)[0])
    assert len(stream.given) >= 2 and _is_x(stream.given, t, s, x)
    assert not _is_x(stream.given, t, s, x + 1) and not _is_x(stream.given, t, s, x - 1)


def test_the_walk_before_the_gallop_reads_the_words_it_always_read(monkeypatch):
    """Up to ``WALK_BEFORE_GALLOP`` steps the search is the former walk: at ordinary scales, with U on and next to
    boundaries q^k (the refinements), the values and the words consumed equal those of a search that never
    gallops (the walk of single steps as it was)."""
    cases = [(9, 1), (1, 1), (7, 3), (1000, 1), (2**20, 3)]
    near = [int(math.exp(-k) * 2.0**64) + d for k in (1, 2, 5) for d in (-1, 0, 1)]

    def draws():
        out = []
        for t, s in cases:
            for i in range(40):
                stream = _Recording(near if i == 0 else (), b"walk-%d-%d" % (t, i))
                out.append((geometric_inversion(stream, t, s, 6).tolist(), stream.given))
        return out

    now = draws()
    monkeypatch.setattr(samplers, "WALK_BEFORE_GALLOP", 10**6)
    assert now == draws()
