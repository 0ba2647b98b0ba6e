"""Tests written for the survivors of the second sample of mutation round 56 (``benchmarks/mutation_runs/s56/
names2.txt``: the next 322 mutants, in the same seeded order, of the functions of ``transforms/core/`` changed since
9ad19d7; the first sample's are in ``test_mutation_kills_sample56.py``). Each asserts a property the code states and
names in a comment the mutant(s) it kills (``python -m benchmarks.mutation_fast confirm``: passes without the mutant,
fails with it). In memory, no Beam, deterministic: no false-failure rate."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.integrate import quad

from transforms.core.contribution.toeplitz import chain_bound, toeplitz_model
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization.anytime import MERGE_T1, N2
from transforms.core.foundation import samplers
from transforms.core.foundation.random_stream import RandomStream


# kills transforms.core.foundation.samplers.x__as_ratio_up__mutmut_6 (a zero noise parameter accepted: a Fraction 0
# returned as the scale by the fast path, a float or int 0 failing in log2 with another error)
@pytest.mark.parametrize("x", [0, 0.0, Fraction(0), -1e-300, Fraction(-1, 10**30), -2])
def test_as_ratio_up_refuses_every_parameter_that_is_not_positive(x):
    """``_as_ratio_up`` turns a noise parameter into an exact ratio never below it; a parameter of 0 or below is
    refused (``noise parameter must be positive``) whatever its type, before the Fraction fast path."""
    with pytest.raises(ValueError, match="must be positive"):
        samplers._as_ratio_up(x)


# kills transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_165 (a point whose lattice figure only
# equals the start's returned instead of the start: "start itself when nothing found is lower")
def test_polish_scaled_returns_its_start_when_what_it_found_is_only_as_low(monkeypatch):
    """The lattice figure is piecewise constant: stages that move the coefficients by 1e-13 end on the start's
    figure, not below it, and ``polish_scaled`` then returns ``start`` itself."""
    import scipy.optimize

    from transforms.core.counters.factorization import scaled as scaled_mod

    class Nudge:
        def __init__(self, x0):
            self.x = np.asarray(x0, dtype=np.float64) + 1e-13
            self.fun = float("inf")

    monkeypatch.setattr(scipy.optimize, "minimize", lambda f, x0, **k: Nudge(x0))
    start = scaled_mod.SCALED_TABLE[3]
    nudged = tuple(float(v) + 5e-13 for v in start)  # where the five L-BFGS stages end
    assert scaled_mod.lattice_max_variance(8, nudged) == scaled_mod.lattice_max_variance(8, start)
    coef, best = scaled_mod.polish_scaled(3, start, evaluations=0)
    assert coef == tuple(map(float, start)) and best == scaled_mod.lattice_max_variance(8, start)


# kills transforms.core.foundation.state_chunks.xǁChunkStoreǁ_chunks__mutmut_47 (every chunk hashed again at every
# write: the same digests, but the work the store exists to save, O(state) a firing instead of O(changed chunks))
def test_a_write_hashes_only_the_chunks_that_changed(monkeypatch):
    """``ChunkStore``: a chunk whose bytes equal the same array's chunk at the same place last time keeps that
    chunk's digest without hashing it again (the invariant of ``write``). A 16-chunk array whose last chunk changes
    is hashed once at the second write; the digests are those of a store that hashes everything."""
    from transforms.core.foundation.state import to_plain
    from transforms.core.foundation.state_chunks import ChunkStore

    hashed = []
    real = ChunkStore._hash

    def spy(self, raw, j, new):
        hashed.append(j)
        return real(self, raw, j, new)

    monkeypatch.setattr(ChunkStore, "_hash", spy)
    store = ChunkStore(chunk_bytes=64, floor=0)
    arr = np.arange(128, dtype=np.int64)  # 1 KiB: 16 chunks
    store.write(lambda: to_plain({"a": arr}))
    assert sorted(hashed) == list(range(16))
    hashed.clear()
    arr2 = arr.copy()
    arr2[-1] += 1
    w = store.write(lambda: to_plain({"a": arr2}))
    assert hashed == [15] and len(w.adds) == 1
    fresh = ChunkStore(chunk_bytes=64, floor=0).write_plain(lambda: to_plain({"a": arr2}))
    assert fresh.head["state"] == store.write_plain(lambda: to_plain({"a": arr2})).head["state"]


# kills transforms.core.foundation.samplers.x__geometric_exact__mutmut_65 (a refinement reading two words and using
# one: the same X, but every later draw of the stream moved by a word)
def test_an_undecided_geometric_reads_exactly_one_more_word_a_refinement():
    """``_geometric_exact``: a comparison it cannot decide refines U by one more word (and the precision). With U's
    first 64 bits straddling q^1 (t = s: q = 1/e), X needs one refinement; it is max{k: U <= q^k} for the refined
    U, and the stream's next word is the one after exactly one word read."""
    import decimal

    key = bytes(range(32))
    with decimal.localcontext() as ctx:
        ctx.prec = 120
        q = decimal.Decimal(-1).exp()  # 1/e to 120 digits
        w = int(q * 2**64)  # U in [w, w + 1) / 2^64 contains q: the first comparison at k = 1 is undecided
        stream = RandomStream(key)
        x = samplers._geometric_exact(stream, w, 1000, 1000, 1)
        ref = RandomStream(key)
        u = decimal.Decimal((w << 64) | int(ref.words(1)[0])) / decimal.Decimal(2) ** 128  # U's next 64 bits
        assert x == (1 if u <= q else 0)  # X for the refined U (1e-38 wide: decided, q far from its ends)
    assert int(stream.words(1)[0]) == int(ref.words(1)[0])


# kills transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ__init____mutmut_8 (profile 1 refused:
# "anytime_sqrt has profiles 1, 2 and 3")
def test_every_profile_of_anytime_sqrt_can_be_built():
    """``AnytimeSqrtCounter(..., profile=p)`` for p = 1, 2, 3, 4 (the first three for comparisons and for states of
    earlier versions); a merged start only for profiles 3 and 4 under Gaussian noise; any other profile refused."""
    from transforms.core.foundation.accounting import ZCDP
    from transforms.core.static.linear import CountMechanism

    for p in (1, 2, 3, 4):
        c = anytime_mod.AnytimeSqrtCounter(CountMechanism(noise="gaussian"), ZCDP(0.5), profile=p)
        assert c.profile == p and c.merge_t1 == (MERGE_T1 if p >= 3 else 0)
    for p in (0, 5):
        with pytest.raises(ValueError, match="profiles"):
            anytime_mod.AnytimeSqrtCounter(CountMechanism(noise="gaussian"), ZCDP(0.5), profile=p)


# kills transforms.core.counters.factorization.anytime.x_anytime_tail_bound__mutmut_46, _60 (profile 3's tail past N2
# integrated with (1 - B3 v) or divided by Q3 - 2: a bound other than the integral the proof takes)
@pytest.mark.parametrize("profile", [3, 4])
@pytest.mark.parametrize("factor", [1.0, 1.5, 4.0, 1e3])
def test_profile_3_tail_bound_past_n2_is_the_integral_of_its_damping(factor, profile):
    """Past N2, ``anytime_tail_bound(n)`` = int_{n-1}^inf h(u)^2 / (pi u) du with h(u)^2 = h(N2)^2 (1 + B
    ln(u / N2))^-Q (the module docstring; B3, Q3 for profile 3, B4, Q4 for profile 4): with v = ln(u / N2),
    h(N2)^2 / pi int_v0^inf (1 + B v)^-Q dv, checked against quadrature to 1e-10."""
    n = int(N2 * factor) + 1
    v0 = math.log((n - 1) / N2)
    values, b, q = (
        (anytime_mod.LOGH2_3, anytime_mod.B3, anytime_mod.Q3)
        if profile == 3
        else (anytime_mod.LOGH2_4, anytime_mod.B4, anytime_mod.Q4)
    )
    ref = math.exp(values[-1]) / math.pi * quad(lambda v: (1.0 + b * v) ** -q, v0, math.inf)[0]
    assert anytime_mod.anytime_tail_bound(n, profile) == pytest.approx(ref, rel=1e-10)


# kills transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_hand_over__mutmut_8 (a merged item of
# exactly 2^62 accepted: "the first phase's batches sum to 2^62 or more" are refused, as a batch of 2^62 is)
def test_a_merged_item_of_exactly_2_62_is_refused():
    """The first phase's batches summing to exactly 2^62 (two of 2^61) are refused at the hand-over, before any
    field changes; one less is accepted and encoded exactly (noise off: the running sum)."""
    from transforms.core.counters import make_counter
    from transforms.core.foundation.accounting import ZCDP
    from transforms.core.foundation.noise import NoiseSource
    from transforms.core.static.linear import CountMechanism

    off = NoiseSource.disabled()
    for total, ok in ((1 << 62, False), ((1 << 62) - 1, True)):
        c = make_counter("anytime_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0))
        for t in range(MERGE_T1):
            c.step(np.array([1 << 61 if t == 0 else (total - (1 << 61) if t == 1 else 0)]), off)
        if ok:
            c.step(np.array([0]), off)
            assert not c._first_phase and float(c.estimate[0]) == float(total)
        else:
            with pytest.raises(ValueError, match="merged item"):
                c.step(np.array([0]), off)
            assert c._first_phase and c.t == MERGE_T1


# kills transforms.core.contribution.toeplitz.x_chain_bound__mutmut_18, _25, _27, _28 (an unbounded model's pattern
# positions None, fractions of the window, or one change too few or too many: no witness of the exact BLT bound)
@pytest.mark.parametrize("closed", [0, 1, 2, 3])
@pytest.mark.parametrize("open_", [False, True])
def test_an_unbounded_chain_bounds_positions_are_its_changes_a_window_apart(closed, open_):
    """``ChainBound.positions``: the changes ``0 = s_0, s_1, ..., s_c`` of the pattern whose value is ``lower``: c + 1
    integer positions, as the finite model gives; unbounded (the BLT), ``W`` apart so that no two changes share a
    row (what makes ``(2 closed + open) n2`` exact)."""
    blt = toeplitz_model("blt")
    cb = chain_bound(blt, closed, open_)
    finite = chain_bound(toeplitz_model("sqrt_factorization", 64), closed, open_)
    assert type(cb.positions) is tuple and len(cb.positions) == len(finite.positions) == closed + 1
    assert all(type(p) is int for p in cb.positions) and cb.positions[0] == 0
    assert all(b - a >= blt.window for a, b in zip(cb.positions, cb.positions[1:]))
    assert cb.lower == cb.upper == (2 * closed + int(open_)) * blt.n2


# kills transforms.core.foundation.state.x__escape_v1__mutmut_34 (every field of a schema 1 object migrated as a
# plain field, its elements not walked: a dict with the data key "$d" inside a walked field left unescaped, then read
# by schema 2 as an escaped dict: here a silently different value)
def test_the_migration_walks_an_objects_walked_fields_and_escapes_a_dollar_d_inside():
    """Schema 1 -> 2: an object's plain fields (schema 1's, ``_PLAIN_V1``) are migrated as ``_plain_in`` reads them,
    its other fields are walked: a dict of data with the key ``"$d"`` nested in one is escaped, so it reads back as
    it was written (``{"$d": [("a", 1)]}`` stays that dict, not ``{"a": 1}``)."""
    from transforms.core.foundation import state as state_mod
    from transforms.core.foundation.entries import Update

    nested = {"x": {"$d": [("a", 1)]}}
    body_v1 = {"$o": "registry.update", "$i": 1, "f": {"op": "insert", "entry_id": "e", "item": nested}}
    old = {"schema": 1, "mechanism": "m", "config": "c", "body": body_v1}
    back = state_mod.restore(state_mod.open_envelope(old, "m", "c"))
    assert isinstance(back, Update) and back.entry_id == "e" and back.item == {"x": {"$d": [("a", 1)]}}
