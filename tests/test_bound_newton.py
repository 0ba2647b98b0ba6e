"""The k-ary tree's stated error bound through the vectorised Newton minimiser (issue 30: a year of one-minute
periods): ``tail_bounds`` (``transforms/core/foundation/bounds.py``) returns the golden section's bound to within
1e-9 relative on the counters' profiles, is never below the exact minimum of the Chernoff bound by more than
rounding (checked against mpmath at 40 digits), and a row's value does not depend on the other rows; the
counter computes the bounds of an aligned block of periods at once from the digits of t alone."""

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


RECORDED = [(200, range(1, 201)), (20_000, range(1, 20_001, 97)), (525_600, range(1, 525_601, 4999))]


@pytest.mark.parametrize("horizon,ts", RECORDED)
@pytest.mark.parametrize("beta", [0.05, 0.05 / 16, 1e-6])
def test_newton_equals_the_golden_section_within_1e9(horizon, ts, beta):
    profiles = _profiles(horizon, list(ts))
    terms, m = _matrix(profiles)
    got = tail_bounds(terms, m, beta)
    want = np.array([p.tail_bound(beta) for p in profiles])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


def _exact_minimum(profile: NoiseProfile, beta: float) -> mpmath.mpf:
    """min over lambda of the Chernoff bound, at 40 digits (a golden section on log lambda, 200 steps)."""
    mpmath.mp.dps = 40
    log2b = mpmath.log(2 / mpmath.mpf(beta))
    terms = [(mpmath.exp(-1 / mpmath.mpf(p)), abs(mpmath.mpf(w)), c) for (_, p, w), c in profile.terms.items()]

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
        return (g + log2b) / lam

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


def test_newton_is_never_below_the_exact_minimum_by_more_than_rounding():
    """The stated bound never claims more confidence than the Chernoff bound's exact minimum: at most a few ulps
    below it (the golden section itself is off by up to ~3e-12 either way, its evaluation's rounding)."""
    ts = [2, 5, 13, 14, 100, 181, 182, 2548, 9999, 35671, 35672, 200_001, 525_599]
    profiles = _profiles(525_600, ts)
    terms, m = _matrix(profiles)
    for beta in (0.05, 0.05 / 16):
        got = tail_bounds(terms, m, beta)
        for t, p, v in zip(ts, profiles, got):
            exact = _exact_minimum(p, beta)
            rel = float((mpmath.mpf(float(v)) - exact) / exact)
            assert -1e-14 <= rel <= 1e-12, (t, beta, rel)


def test_a_rows_value_does_not_depend_on_the_other_rows():
    profiles = _profiles(20_000, range(1, 3001))
    terms, m = _matrix(profiles)
    full = tail_bounds(terms, m, 0.05)
    for lo, hi in [(0, 1), (17, 18), (1234, 1240), (2999, 3000)]:
        assert tail_bounds(terms, m[lo:hi], 0.05).tolist() == full[lo:hi].tolist()
    assert tail_bounds(terms, m[::-1], 0.05).tolist() == full[::-1].tolist()


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


def test_short_horizons_keep_the_golden_sections_bits(noise):
    """Under ``NEWTON_FROM`` periods the counter states the golden section's bound itself, bit for bit."""
    horizon = kary_mod.NEWTON_FROM - 1
    c = KaryTreeCounter(HistogramMechanism(4, "laplace"), PureDP(1.0), horizon=horizon)
    for t in range(600):
        c.step(np.zeros(4, dtype=np.int64), noise)
        assert c.error_bound(0.05) == c.noise_profile().tail_bound(0.05 / 4), t


def test_radices_of_a_year():
    assert kary_radices(525_600) == (13, 14, 14, 14)
    assert math.prod(kary_radices(525_600)) <= 525_600


def test_a_restored_counter_states_the_same_bounds(noise):
    """Through the stored state (encode / decode / restore, the memo of the level profiles' key excluded): the
    same bound at every later period, bit for bit."""
    from transforms.core.foundation import state as state_mod

    horizon = kary_mod.NEWTON_FROM + 500
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


def test_lattice_profiles_newton_is_exact_where_the_golden_section_is_not():
    """A sum's counter releases in lattice units (``LinearQueryMechanism``: unit 2^-20, Laplace scale ~1e7 units):
    ``q = exp(-1/b)`` is within 1e-7 of 1 and the golden section's ``2 log(1-q) - log(1 - q e^l) - ...`` loses
    ~7 digits, so its value is off by up to ~1e-6 relative, BELOW the exact minimum (pubsub_local's
    ``total_amount``, period 7,183 of 7,200: -1.15e-6). Newton's ``log1p(-q expm1(l) / (1-q))`` form stays within
    1e-14 of it (mpmath): the one place where the two differ by more than 1e-9."""
    from transforms.core.static import LinearQueryMechanism

    mech = LinearQueryMechanism(np.array([[k / 100 for k in range(101)]]))
    c = KaryTreeCounter(mech, PureDP(1 / 3), horizon=7200)
    digits = kary_digits(np.array([100, 4097, 7183]), c.radices)
    profiles = [NoiseProfile.sum(c._level_profiles[j].times(int(a)) for j, a in enumerate(row) if a) for row in digits]
    terms, m = _matrix(profiles)
    got = tail_bounds(terms, m, 0.05)
    worst_golden = 0.0
    for p, v in zip(profiles, got):
        exact = _exact_minimum(p, 0.05)
        assert abs(float((mpmath.mpf(float(v)) - exact) / exact)) <= 1e-14
        worst_golden = max(worst_golden, abs(float((mpmath.mpf(p.tail_bound(0.05)) - exact) / exact)))
    assert worst_golden > 1e-9  # the golden section's evaluation is the inexact one here
