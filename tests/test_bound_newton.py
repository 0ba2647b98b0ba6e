"""Every stated error bound is the exact minimum of its Chernoff bound (issue 30): ``NoiseProfile.tail_bound``
and the vectorised ``tail_bounds`` (``transforms/core/foundation/bounds.py``) minimise it by one safeguarded Newton
iteration, never below the exact minimum by more than rounding (checked against mpmath at 40 digits on lattice
profiles, a sum's counter in units of 2^-20, where the former golden section stated bounds up to 1.15e-6 below it,
and on ordinary ones; the golden section, kept here as the broken twin, fails that check); a single discrete
Laplace term states its exact quantile. A row's value does not depend on the other rows; the k-ary counter
computes the bounds of an aligned block of periods at once from the digits of t alone, at every horizon."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from transforms.core import ZCDP, PureDP
from transforms.core.counters import KaryTreeCounter
from transforms.core.counters.factorization import kary as kary_mod
from transforms.core.counters.factorization.kary import kary_digits, kary_radices
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile, tail_bounds
from transforms.core.static import CountMechanism, HistogramMechanism


def _profiles(horizon: int, ts, scale: float = 8.0):
    """The Honaker k-ary tree's profiles at periods ``ts`` (as the counter builds them), and its terms."""
    c = KaryTreeCounter(CountMechanism(1, "laplace"), PureDP(1.0), horizon=horizon)
    levels = c._level_profiles
    digits = kary_digits(np.asarray(ts), c.radices)
    return [NoiseProfile.sum(levels[j].times(int(a)) for j, a in enumerate(row) if a) for row in digits]


def _matrix(profiles):
    terms = sorted({k for p in profiles for k in p.terms})
    col = {k: i for i, k in enumerate(terms)}
    m = np.zeros((len(profiles), len(terms)), dtype=np.int64)
    for i, p in enumerate(profiles):
        for k, n in p.terms.items():
            m[i, col[k]] = n
    return terms, m


def _golden_section(profile: NoiseProfile, beta: float) -> float:
    """The broken twin: the former minimiser of ``NoiseProfile.tail_bound`` (main at 21ac0a9), a golden section
    on log lambda of the Chernoff exponent written as ``2 log1p(-q) - log1p(-q e^l) - log1p(-q e^-l)``, which loses
    ~7 digits where ``q = exp(-1/b)`` is within 1e-7 of 1 (a lattice's scale). Multi-term profiles only."""
    items = sorted(profile.terms.items())
    log2b = math.log(2 / beta)
    lap = [(p, abs(w), c) for (kind, p, w), c in items if kind == LAPLACE and w != 0]
    gvar = math.fsum(c * w * w * p for (kind, p, w), c in items if kind == GAUSSIAN)
    terms = [(float(c), 2 * math.log1p(-math.exp(-1 / p)), -1 / p) for p, _, c in lap]
    weights = [w for _, w, _ in lap]
    lam_max = min(1.0 / (p * w) for p, w, _ in lap)

    def bound(lam: float) -> float:
        g = sum(
            c * (b_ - math.log1p(-math.exp(q + lam * w)) - math.log1p(-math.exp(q - lam * w)))
            for (c, b_, q), w in zip(terms, weights)
        )
        return (g + lam * lam * gvar / 2 + log2b) / lam

    lo, hi = math.log(lam_max) - 30, math.log(lam_max * (1 - 1e-9))
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = bound(math.exp(a)), bound(math.exp(b))
    best = min(fa, fb)
    for _ in range(70):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = bound(math.exp(a))
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = bound(math.exp(b))
        best = min(best, fa, fb)
    return best


RECORDED = [(200, range(1, 201)), (20_000, range(1, 20_001, 97)), (525_600, range(1, 525_601, 4999))]


@pytest.mark.parametrize("horizon,ts", RECORDED)
@pytest.mark.parametrize("beta", [0.05, 0.05 / 16, 1e-6])
def test_one_minimiser_and_the_golden_sections_bounds_within_1e9(horizon, ts, beta):
    """``tail_bounds`` row by row is ``NoiseProfile.tail_bound`` (one minimiser: equal to float rounding; the matrix
    pads a profile's absent terms with zeros), and on the counters' ordinary (non-lattice) profiles both move from
    the former golden section's bounds by less than 1e-9 relative (the size of the change in every release)."""
    profiles = _profiles(horizon, list(ts))
    terms, m = _matrix(profiles)
    got = tail_bounds(terms, m, beta)
    np.testing.assert_allclose(got, [p.tail_bound(beta) for p in profiles], rtol=1e-14, atol=0)
    multi = [i for i, p in enumerate(profiles) if sum(p.terms.values()) > 1]
    np.testing.assert_allclose(got[multi], [_golden_section(profiles[i], beta) for i in multi], rtol=1e-9, atol=0)


def _exact_minimum(profile: NoiseProfile, beta: float) -> mpmath.mpf:
    """min over lambda of the Chernoff bound, at 40 digits (a golden section on log lambda, 200 steps), over the
    minimisers' range ``[lam_max e^-30, lam_max (1 - 1e-9)]``; discrete Gaussian terms by their sub-Gaussian
    bound; without a Laplace term, the closed form's exact value."""
    mpmath.mp.dps = 40
    log2b = mpmath.log(2 / mpmath.mpf(beta))
    gvar = sum(c * mpmath.mpf(w) ** 2 * mpmath.mpf(p) for (k, p, w), c in profile.terms.items() if k == GAUSSIAN)
    terms = [
        (mpmath.exp(-1 / mpmath.mpf(p)), abs(mpmath.mpf(w)), c)
        for (k, p, w), c in profile.terms.items()
        if k == LAPLACE and w != 0
    ]
    if not terms:
        return mpmath.sqrt(2 * gvar * log2b)

    def h(lam):
        g = sum(
            c
            * (
                2 * mpmath.log(1 - q)
                - mpmath.log(1 - q * mpmath.e ** (lam * w))
                - mpmath.log(1 - q * mpmath.e ** (-lam * w))
            )
            for q, w, c in terms
        )
        return (g + lam * lam * gvar / 2 + log2b) / lam

    lam_max = min(-mpmath.log(q) / w for q, w, _ in terms)
    a, b = mpmath.log(lam_max) - 30, mpmath.log(lam_max * (1 - mpmath.mpf("1e-9")))
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(200):
        c1, c2 = b - g * (b - a), a + g * (b - a)
        if h(mpmath.e**c1) < h(mpmath.e**c2):
            b = c2
        else:
            a = c1
    return h(mpmath.e ** ((a + b) / 2))


def _lattice_profiles() -> list[NoiseProfile]:
    """A sum's noise in lattice units (``LinearQueryMechanism``: unit 2^-20, Laplace scale ~1e7 units): the k-ary
    tree's profiles at periods 100, 4,097 and 7,183 of 7,200 (pubsub_local's ``total_amount``: the golden section
    was 1.15e-6 below the exact minimum at 7,183), a binary tree's and a BLT counter's after 37 periods."""
    from transforms.core.counters import BinaryTreeCounter, BLTCounter
    from transforms.core.foundation.noise import NoiseSource
    from transforms.core.static import LinearQueryMechanism

    mech = LinearQueryMechanism(np.array([[k / 100 for k in range(101)]]))
    c = KaryTreeCounter(mech, PureDP(1 / 3), horizon=7200)
    digits = kary_digits(np.array([100, 4097, 7183]), c.radices)
    out = [NoiseProfile.sum(c._level_profiles[j].times(int(a)) for j, a in enumerate(row) if a) for row in digits]
    noise = NoiseSource(bytes(range(32)))
    for counter in (BinaryTreeCounter(mech, PureDP(1 / 3), horizon=200), BLTCounter(mech, PureDP(1 / 3), horizon=200)):
        for _ in range(37):
            counter.step(np.zeros(101, dtype=np.int64), noise)
        out.append(counter.noise_profile())
    return out


def _ordinary_profiles() -> list[NoiseProfile]:
    """A count's k-ary profiles over a year at periods where the digits change most, several copies of one term,
    Laplace and Gaussian terms together, and Gaussian terms alone (the closed form)."""
    ts = [2, 5, 13, 14, 100, 181, 182, 2548, 9999, 35671, 35672, 200_001, 525_599]
    out = _profiles(525_600, ts)
    out.append(NoiseProfile({(LAPLACE, 3.0, 1.0): 7}))
    out.append(NoiseProfile({(LAPLACE, 9.0, 0.5): 3, (GAUSSIAN, 4.0, 1.0): 2, (LAPLACE, 2.0, 2.0): 1}))
    out.append(NoiseProfile({(GAUSSIAN, 4.0, 1.0): 2, (GAUSSIAN, 0.5, 3.0): 5}))
    return out


def _row_bound(profile: NoiseProfile, beta: float) -> float:
    terms, m = _matrix([profile])
    return float(tail_bounds(terms, m, beta)[0])


def _assert_exact(minimiser, profiles: list[NoiseProfile], beta: float) -> None:
    """Never below the exact minimum by more than rounding (a few ulps), and above it by at most 1e-12."""
    for i, p in enumerate(profiles):
        exact = _exact_minimum(p, beta)
        rel = float((mpmath.mpf(float(minimiser(p, beta))) - exact) / exact)
        assert -1e-14 <= rel <= 1e-12, (i, beta, rel)


@pytest.mark.parametrize("kind", ["lattice", "ordinary"])
@pytest.mark.parametrize("minimiser", [NoiseProfile.tail_bound, _row_bound], ids=["tail_bound", "tail_bounds"])
def test_every_bound_is_the_exact_minimum(kind, minimiser):
    profiles = _lattice_profiles() if kind == "lattice" else _ordinary_profiles()
    for beta in (0.05, 0.05 / 16):
        _assert_exact(minimiser, profiles, beta)


def test_the_golden_section_fails_the_exactness_check():
    """The broken twin: on a sum's lattice profiles the golden section states bounds ~1e-6 below the exact
    minimum, which the check above rejects."""
    with pytest.raises(AssertionError):
        _assert_exact(_golden_section, _lattice_profiles(), 0.05)


def _many_copies() -> list[NoiseProfile]:
    """Profiles of many copies of few discrete Laplace terms (a count's noise summed over 10^9 to 10^15 node
    releases: a counter of years of seconds, a sum over many cells): the minimum lies at a tiny lambda, where
    the two log1p of each term's log-MGF cancel to first order."""
    return [
        NoiseProfile({(LAPLACE, 3.0, 1.0): 10**9}),
        NoiseProfile({(LAPLACE, 3.0, 1.0): 10**12}),
        NoiseProfile({(LAPLACE, 3.0, 1.0): 10**15}),
        NoiseProfile({(LAPLACE, 0.3, 1.0): 10**10}),
        NoiseProfile({(LAPLACE, 9.4e6, 1.0): 10**6, (LAPLACE, 2.0, 1.0): 3}),
        NoiseProfile({(LAPLACE, 3.0, 1.0): 10**12, (GAUSSIAN, 4.0, 1.0): 10**6}),
    ]


def _log_mgf_cancelling(lx, c, eq, om):
    """The broken twin of ``bounds._log_mgf`` (main before stop 57): ``-log1p(-r expm1(l)) - log1p(-r
    expm1(-l))``, two terms of opposite signs whose sum is second order in l: at 10^12 copies of a scale-3
    term the bound came out 1.6e-11 relative below the exact minimum, 1.1e-9 at 10^15."""
    r = eq / om
    return (c * -(np.log1p(-r * np.expm1(lx)) + np.log1p(-r * np.expm1(-lx)))).sum(axis=1)


@pytest.mark.parametrize("minimiser", [NoiseProfile.tail_bound, _row_bound], ids=["tail_bound", "tail_bounds"])
def test_many_copies_of_a_term_state_the_exact_minimum(minimiser):
    """The log-MGF as ``-log1p(-4 r (1 + r) sinh(l / 2)^2)``, one term without cancellation: within a few ulps
    of the exact minimum however many copies (mpmath at 40 digits)."""
    for beta in (0.05, 1e-6):
        _assert_exact(minimiser, _many_copies(), beta)


def test_the_cancelling_log_mgf_fails_the_check_on_many_copies(monkeypatch):
    from transforms.core.foundation import bounds as bounds_mod

    monkeypatch.setattr(bounds_mod, "_log_mgf", _log_mgf_cancelling)
    with pytest.raises(AssertionError):
        _assert_exact(_row_bound, _many_copies(), 0.05)  # tail_bounds: not cached, the twin computes


@pytest.mark.parametrize("scale", [0.7, 3.0, 1e3, 9.4e6, 2e7, 3.3e7])
@pytest.mark.parametrize("beta", [0.05, 0.05 / 3, 0.05 / 16, 1e-6, 0.3])
def test_a_single_laplace_term_states_its_exact_quantile(scale, beta):
    """One discrete Laplace term: the least a with P(|X| > a) <= beta, exactly (mpmath), also at a lattice's
    scales, where ``log(q)`` of the rounded ``q = exp(-1/b)`` put k off by one in ~3% of (scale, beta): here
    (2e7, 0.05) one unit above, (3.3e7, 0.05/3) one unit below the exact quantile."""
    mpmath.mp.dps = 40
    q = mpmath.exp(-1 / mpmath.mpf(scale))
    k = int(mpmath.ceil(mpmath.log(beta * (1 + q) / 2) / mpmath.log(q)))  # least k with P(|X| >= k) <= beta
    assert 2 * q**k / (1 + q) <= beta < 2 * q ** (k - 1) / (1 + q)
    w = 2.0**-20
    assert NoiseProfile.single(LAPLACE, scale, w).tail_bound(beta) == w * max(k - 1, 0)


def test_a_rows_value_does_not_depend_on_the_other_rows():
    profiles = _profiles(20_000, range(1, 3001))
    terms, m = _matrix(profiles)
    full = tail_bounds(terms, m, 0.05)
    for lo, hi in [(0, 1), (17, 18), (1234, 1240), (2999, 3000)]:
        assert tail_bounds(terms, m[lo:hi], 0.05).tolist() == full[lo:hi].tolist()
    assert tail_bounds(terms, m[::-1], 0.05).tolist() == full[::-1].tolist()


def test_the_loop_in_place_gives_the_bits_of_the_loop_on_copies(monkeypatch):
    """While every row iterates, the Newton loop works on its arrays themselves (``_IN_PLACE``): the bits of the
    loop that copies the rows at every iteration, also where the Laplace columns are a selection (Gaussian terms
    among many: numpy lays the selection out in Fortran order, where a row sum rounds otherwise)."""
    from transforms.core.foundation import bounds as bounds_mod

    profiles = _ordinary_profiles() + _lattice_profiles() + _profiles(525_600, range(1, 525_601, 9_999))
    for terms, m in (_matrix(profiles), _matrix(_profiles(20_000, range(1, 3001)))):
        for beta in (0.05, 1e-6):
            fast = tail_bounds(terms, m, beta).tolist()
            monkeypatch.setattr(bounds_mod, "_IN_PLACE", False)
            assert tail_bounds(terms, m, beta).tolist() == fast
            monkeypatch.setattr(bounds_mod, "_IN_PLACE", True)


def test_special_rows_take_the_scalar_path():
    """A single discrete Laplace term (its exact tail), no Laplace term (the closed form), no term (0): the
    scalar path's own bits."""
    terms = [(GAUSSIAN, 4.0, 1.0), (LAPLACE, 9.0, 0.5), (LAPLACE, 9.0, 1.0)]
    m = np.array([[0, 0, 1], [0, 1, 0], [3, 0, 0], [0, 0, 0], [0, 0, 2], [1, 1, 0]])
    got = tail_bounds(terms, m, 0.05)
    for row, v in zip(m, got):
        p = NoiseProfile({terms[j]: int(n) for j, n in enumerate(row) if n})
        if sum(1 for n in row if n) <= 1 and (row.sum() <= 1 or row[0]):
            assert v == p.tail_bound(0.05)
        else:  # several Laplace terms, or Laplace and Gaussian terms: Newton
            assert v == pytest.approx(p.tail_bound(0.05), rel=1e-9)
    assert got[3] == 0.0


def test_kary_digits_are_the_counters_digits(no_noise):
    c = KaryTreeCounter(CountMechanism(1, "laplace"), PureDP(1.0), horizon=3000)
    want = kary_digits(np.arange(1, 3001), c.radices)
    for t in range(3000):
        c.step(np.array([1]), no_noise)
        assert c._digits == want[t].tolist(), t + 1


@pytest.mark.parametrize("mech", [CountMechanism(1, "laplace"), HistogramMechanism(16, "laplace")])
def test_the_counters_bound_is_its_profiles_bound(mech, noise):
    """At every period (several blocks; the horizon ends inside a block) the counter states its noise profile's
    tail bound (to 1e-9), from the cached block or recomputed; Gaussian noise keeps the scalar path (bit for
    bit)."""
    horizon = 2 * kary_mod._BLOCK + 300
    c = KaryTreeCounter(mech, PureDP(1.0), horizon=horizon)
    got, want = [], []
    for t in range(horizon):
        c.step(np.zeros(mech.domain_size, dtype=np.int64), noise)
        if t % 37 == 0 or t > horizon - 5:
            got.append(c.error_bound(0.05))
            want.append(c.noise_profile().tail_bound(0.05 / mech.num_queries))
            if t % 370 == 0:
                kary_mod._block_bounds.cache_clear()  # a restored run recomputes the block: the same value
                assert c.error_bound(0.05) == got[-1]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    g = KaryTreeCounter(CountMechanism(1, "gaussian"), ZCDP(0.5), horizon=100)
    for _ in range(50):
        g.step(np.array([0]), noise)
    assert g.error_bound(0.05) == g.noise_profile().tail_bound(0.05)


def test_short_horizons_take_the_blocks_too(noise):
    """At every horizon the Honaker k-ary counter states its block's bound (``NEWTON_FROM`` = 1): a horizon of a
    few hundred periods is one block, its bounds the profiles' bounds to float rounding."""
    assert kary_mod.NEWTON_FROM == 1
    horizon = 600
    c = KaryTreeCounter(HistogramMechanism(4, "laplace"), PureDP(1.0), horizon=horizon)
    kary_mod._block_bounds.cache_clear()
    for t in range(horizon):
        c.step(np.zeros(4, dtype=np.int64), noise)
        assert c.error_bound(0.05) == pytest.approx(c.noise_profile().tail_bound(0.05 / 4), rel=1e-14, abs=0), t
    assert kary_mod._block_bounds.cache_info().misses == 1


def test_radices_of_a_year():
    assert kary_radices(525_600) == (13, 14, 14, 14)
    assert math.prod(kary_radices(525_600)) <= 525_600


def test_a_restored_counter_states_the_same_bounds(noise):
    """Through the stored state (encode / decode / restore, the memo of the level profiles' key excluded): the
    same bound at every later period, bit for bit."""
    from transforms.core.foundation import state as state_mod

    horizon = kary_mod._BLOCK + 500
    c = KaryTreeCounter(CountMechanism(1, "laplace"), PureDP(1.0), horizon=horizon)
    for _ in range(kary_mod._BLOCK - 3):
        c.step(np.array([1]), noise)
    c.error_bound(0.05)  # the memo is set
    plain = state_mod.to_plain(c)
    assert "_bound_key" not in repr(plain)
    c2 = state_mod.restore(state_mod.decode(state_mod.encode(plain)))
    kary_mod._block_bounds.cache_clear()
    for _ in range(10):  # into the next block
        c.step(np.array([1]), noise)
        c2.step(np.array([1]), noise)
        assert c2.error_bound(0.05) == c.error_bound(0.05)
