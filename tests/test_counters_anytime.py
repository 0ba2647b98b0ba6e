"""``anytime_sqrt``: the infinite square root damped by a slowly decreasing factor, no horizon, exact on
the lattice (``transforms/core/counters/factorization/anytime.py``, ``docs/counters.md``): noise off
equals the prefix sums across the table doublings, the sensitivity bound against every neighbour's
released shift (a twin calibrated to a truncated column fails), the tail bound against the sums,
the variance against the decoder's rows and measured, the state round trip across a doubling."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from transforms.core.counters import COUNTER_NAMES, UNBOUNDED_COUNTERS, make_counter
from transforms.core.counters.factorization import LATTICE_BITS, sqrt_coefficients
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization.anytime import (
    A2,
    B2,
    B3,
    B4,
    EPS,
    EXACT_TERMS,
    K0,
    K02,
    KNOTS3,
    KNOTS4,
    LOGH2_3,
    LOGH2_4,
    N2,
    P2,
    Q2,
    Q3,
    Q4,
    A,
    AnytimeSqrtCounter,
    anytime_coefficients,
    anytime_sensitivity_sq,
    anytime_tail_bound,
    anytime_variance_path,
)
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import ZCDP, PureDP
from transforms.core.foundation.noise import NoiseSource, as_ratio_up
from transforms.core.static import CountMechanism, HistogramMechanism

G = 2.0**-LATTICE_BITS


def key(tag: str) -> NoiseSource:
    return NoiseSource(tag.encode().ljust(32, b"\0"))


def test_registered_without_horizon():
    assert "anytime_sqrt" in COUNTER_NAMES and "anytime_sqrt" in UNBOUNDED_COUNTERS
    c = make_counter("anytime_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0))
    assert c.horizon is None


def p2(mech, budget, **kw) -> AnytimeSqrtCounter:
    """A profile-2 counter (new counters are profile 3: tests/test_counters_anytime_merged.py)."""
    return AnytimeSqrtCounter(mech, budget, profile=2, **kw)


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_noise_off_exact_across_doublings(kind, no_noise):
    """Signed batches over 3 cells for 1100 steps: the tables double at 256, 512 and 1024."""
    c = p2(HistogramMechanism(3, kind), PureDP(1.0) if kind == "laplace" else ZCDP(0.5))
    rng = np.random.default_rng(5)
    prefix = np.zeros(3)
    for t in range(1100):
        b = None if t % 5 == 2 else rng.integers(-3, 6, 3)
        prefix += 0 if b is None else b
        np.testing.assert_array_equal(c.step(b, no_noise), prefix)
    if kind == "gaussian":
        assert c.cap == 2048


@pytest.mark.parametrize("profile", [2, 3, 4])
def test_noise_off_exact_huge_batches(profile, no_noise):
    c = AnytimeSqrtCounter(CountMechanism(2, "gaussian"), ZCDP(1.0), profile=profile)
    prefix = 0
    for t in range(300):
        b = np.array([1, 2]) if t != 20 else np.array([2**44, -5])
        prefix += int(b.sum())
        assert abs(c.step(b, no_noise)[0] - prefix) <= 1e-12 * abs(prefix)
    assert not c._float_mode


def _h2(k, profile: int):
    """h(k)^2 of each profile, written out again from docs/counters.md."""
    k = np.asarray(k, dtype=np.float64)
    if profile == 1:
        return (1 + A * np.log1p(k / K0)) ** (-(1 + EPS))
    if profile in (3, 4):  # ln h^2 linear between the knots in log2(1 + k), then the tail past N2
        knots, values, b, q = (KNOTS3, LOGH2_3, B3, Q3) if profile == 3 else (KNOTS4, LOGH2_4, B4, Q4)
        first = np.exp(np.interp(np.log2(1 + np.minimum(k, N2)), knots, values))
        return first * (1 + b * np.log(np.maximum(k, N2) / N2)) ** (-q)
    first = (1 + A2 * np.log1p(np.minimum(k, N2) / K02)) ** (-P2)
    return first * (1 + B2 * np.log(np.maximum(k, N2) / N2)) ** (-Q2)


@pytest.mark.parametrize("profile", [1, 2, 3, 4])
def test_coefficients_are_prefix_stable_non_increasing_and_below_the_damped_root(profile):
    a, b = anytime_coefficients(5000, profile), anytime_coefficients(9000, profile)
    assert np.array_equal(a, b[:5000]) and np.all(np.diff(b) <= 0) and b[0] == 1 << LATTICE_BITS
    h = np.sqrt(_h2(np.arange(9000), profile))
    assert np.all(b <= sqrt_coefficients(9000) * h * 2.0**LATTICE_BITS)
    # past N2 (profile 2's second regime) the damping is below the first regime's continued
    k = np.array([N2, 2 * N2, 2**30])
    assert np.all(np.diff(_h2(k, 2)) < 0) and _h2(2 * N2, 2) < _h2(N2, 2)


def _tail_estimate(n: int, profile: int, m: int = 1 << 22) -> float:
    """sum_{k >= n} c_k^2 h(k)^2: the float sum to m, then the integral of h(x)^2 / (pi x) beyond m
    (c_k^2 = (1 - O(1/k)) / (pi k): relative error below 1e-6 there)."""
    from scipy.integrate import quad

    part = float(np.sum(_h2(np.arange(n, m), profile) * sqrt_coefficients(m)[n:] ** 2))

    def f(u):  # x = e^u, h(x)^2 / pi (ln(1 + x / K0) = logaddexp(0, u - ln K0): no overflow)
        if profile == 1:
            return (1 + A * np.logaddexp(0.0, u - math.log(K0))) ** (-(1 + EPS)) / np.pi
        if profile in (3, 4):
            knots, values, b, q = (KNOTS3, LOGH2_3, B3, Q3) if profile == 3 else (KNOTS4, LOGH2_4, B4, Q4)
            x = math.exp(min(u, math.log(N2)))
            first = math.exp(np.interp(math.log2(1 + x), knots, values))
            return first * (1 + b * max(0.0, u - math.log(N2))) ** (-q) / np.pi
        first = (1 + A2 * np.logaddexp(0.0, min(u, math.log(N2)) - math.log(K02))) ** (-P2)
        return first * (1 + B2 * max(0.0, u - math.log(N2))) ** (-Q2) / np.pi

    brk = [math.log(N2)] if profile >= 2 and m < N2 else []
    edges = [math.log(m), *brk, np.inf]
    rest = sum(quad(f, a, b, limit=200)[0] for a, b in zip(edges, edges[1:]))
    return part + rest


@pytest.mark.parametrize("profile", [1, 2, 3, 4])
def test_tail_bound_covers_the_tail_and_the_sensitivity_covers_the_column(profile):
    """The tail bound is above the tail (float sum plus the integral beyond 2^22) at N = 2, 2^10, 2^21
    and within 10% of it where it is used (N = 2^21); the sensitivity n2 is at least the exact head
    plus 95% of the tail (the floor snap loses well under 5% of it): a bound halved, or a head
    without its tail, fails."""
    for n in (2, 1 << 10, EXACT_TERMS):
        est = _tail_estimate(n, profile)
        assert est < anytime_tail_bound(n, profile), n
        if n == EXACT_TERMS:
            assert anytime_tail_bound(n, profile) < 1.1 * est
    head = int(np.sum(anytime_coefficients(EXACT_TERMS, profile) ** 2))
    tail = _tail_estimate(EXACT_TERMS, profile) * 2.0 ** (2 * LATTICE_BITS)
    assert head + 0.95 * tail <= anytime_sensitivity_sq(profile) <= head + 1.1 * tail


def _released(item_at: int | None, T: int) -> np.ndarray:
    c = p2(CountMechanism(1, "gaussian"), ZCDP(0.5))
    c.release_log = []
    off = NoiseSource.disabled()
    for t in range(1, T + 1):
        c.step(np.array([1]) if t == item_at else None, off)
    return np.array([int(round(v[0] / G)) for _, _, v in c.release_log], dtype=object)


def test_neighbours_move_the_release_by_less_than_the_calibrated_sensitivity():
    """For every position s of the extra item in a 300-step run (past the first doubling) the release
    moves by an integer vector of squared norm below n2 (sigma^2 = n2 / (2 rho)); the first item moves
    it most (column 0 is the largest), by exactly its column's first 300 terms. A twin calibrated to
    column 0 cut after 100 terms under-states it."""
    T = 300
    base = _released(None, T)
    shifts = [sum(int(v) ** 2 for v in _released(s, T) - base) for s in range(1, T + 1)]
    n2 = anytime_sensitivity_sq(2)
    col0 = [int(v) ** 2 for v in anytime_coefficients(T, 2)]
    assert shifts[0] == sum(col0) == max(shifts) < n2
    assert p2(CountMechanism(1, "gaussian"), ZCDP(0.5)).noise_param == as_ratio_up(n2)
    assert max(shifts) > sum(col0[:100])  # the truncated twin


def test_variance_is_the_decoder_row_norm():
    """Reported variance = sigma^2 g^2 ||row_t of S K^-1||^2 (dense solve, 300 steps)."""
    T = 300
    c = p2(CountMechanism(1, "gaussian"), ZCDP(1.0))
    k = anytime_coefficients(T, 2).astype(np.float64)
    E = np.zeros((T, T))
    for i in range(T):
        E[i, : i + 1] = k[: i + 1][::-1]
    W = np.tril(np.ones((T, T))) @ np.linalg.inv(E)
    noise = key("rows")
    for t in range(T):
        c.step(None, noise)
        want = float(c.noise_param) * np.sum(W[t] ** 2)
        assert c.variance() == pytest.approx(want, rel=1e-9), t
    np.testing.assert_allclose(anytime_variance_path(T, rho=1.0, profile=2)[-1], c.variance(), rtol=1e-12)


@pytest.mark.statistical
def test_variance_formula_measured():
    """2000 independent cells, 300 steps (a doubling at 256): the reported variance equals the
    empirical mean square at t = 10, 100, 256, 257, 300 (|z| below the two-sided 1e-6 / 5 quantile):
    false failure < 1e-6."""
    cells = 2000
    c = p2(HistogramMechanism(cells, "gaussian"), ZCDP(0.5))
    noise = key("anytime/var")
    z_crit = stats.norm.isf(1e-6 / 10)
    for t in range(1, 301):
        x2 = c.step(None, noise) ** 2
        if t in (10, 100, 256, 257, 300):
            se = math.sqrt(np.var(x2) / cells)
            assert abs(x2.mean() - c.variance()) < z_crit * se, (t, x2.mean(), c.variance(), se)


def test_state_round_trip_across_a_doubling():
    noise = key("state")
    c = p2(HistogramMechanism(3, "gaussian"), ZCDP(1.0), coords=("st",))
    for t in range(200):
        c.step(np.array([t % 3, 1, 0]), noise)
    plain = state_mod.to_plain(c)
    assert "_tab" not in plain["f"]
    c2 = state_mod.restore(state_mod.decode(state_mod.encode(plain)))
    c3 = pickle.loads(pickle.dumps(c))
    for t in range(400):
        b = np.array([1, t % 2, 2])
        out = c.step(b, noise)
        np.testing.assert_array_equal(out, c2.step(b, noise))
        np.testing.assert_array_equal(out, c3.step(b, noise))
    assert c.cap == c2.cap == c3.cap == 1024
    assert c.variance() == c2.variance() == c3.variance()


def test_first_version_state_restores_and_continues_identically():
    """A stored state of main b046a8c's counter (profile 1, no ``profile`` field; tests/golden/
    anytime_sqrt_v1.json) restores as profile 1 and releases exactly what that code released next,
    across the doubling at 256; a counter of the current profile differs (the golden file is not
    trivially satisfied)."""
    import base64
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "golden" / "anytime_sqrt_v1.json").read_text())
    plain = state_mod.decode(base64.b64decode(doc["state_b64"]))
    assert "profile" not in plain["f"]
    c = state_mod.restore(plain)
    assert c.profile == 1
    noise = key(doc["key"])
    outs = [c.step(np.array([1, t % 2]), noise).tolist() for t in range(150)]
    # The integer lattice state and the noise are exact; the decoded float release is a dot product with
    # decoder weights from an FFT series inverse, whose last bits depend on the processor's SIMD paths
    # (1 ulp at step 16 on an AMD EPYC against the file made elsewhere). So: equal to 1e-12 relative
    # (~150 terms x 2^-52 plus the FFT's log2(512) x 2^-52 per weight, with a wide margin), which a wrong
    # profile, key, doubling or lattice value misses by many orders (the profile-2 twin below differs by O(1)).
    np.testing.assert_allclose(outs, doc["releases"], rtol=1e-12, atol=0)
    assert c.variance() == pytest.approx(doc["variance"], rel=1e-12) and c.cap == doc["cap"]
    # twin of the tolerance: the same state continued with another key's noise is far outside it
    twin = state_mod.restore(plain)
    other = key(doc["key"] + "-other")
    outs_twin = [twin.step(np.array([1, t % 2]), other).tolist() for t in range(150)]
    assert not np.allclose(outs_twin, doc["releases"], rtol=1e-12, atol=0)
    assert anytime_mod.PROFILE != 1 and not np.array_equal(anytime_coefficients(300, 1), anytime_coefficients(300))


@pytest.mark.parametrize("b, q", [(0.0, 3.0), (-1.0, 3.0), (32.0, 1.0)])
def test_the_knot_check_refuses_a_tail_that_does_not_decay(monkeypatch, b, q):
    """The tail bound integrates ``h(N2)^2 (1 + B ln(k / N2))^-Q`` past N2 in closed form, which needs B > 0 and
    Q > 1 (else the integral diverges or the closed form is another's): profile 4's own (B4 = 32, Q4 = 3: a tail
    share of 1 / 64, a sixteenth of profile 3's 1 / 4) pass, each broken tail is refused at the check."""
    assert (B4 * (Q4 - 1.0), B3 * (Q3 - 1.0)) == (64.0, 4.0)
    anytime_mod._check_knots()
    monkeypatch.setattr(anytime_mod, "B4", b)
    monkeypatch.setattr(anytime_mod, "Q4", q)
    with pytest.raises(AssertionError, match="profile 4's knots"):
        anytime_mod._check_knots()


# the SHA-256 of anytime_coefficients(2^16, profile) and n2 (anytime_sensitivity_sq): profile 3's as main
# computed them before profile 4 existed (cf6ad84), profile 4's as built at stop 62
COEFFICIENT_PINS = {
    3: ("5965f3d67b6d4f3598a2d136f275d5bd6019e5b1a24988d950cedc8c10f0c48a", 5_113_998_077_988),
    4: ("4ba6147affaf032e167576144e7cd08ba61432c9034c13eb6ea91d2f2565cc8b", 5_031_965_592_825),
}


@pytest.mark.parametrize("profile", [3, 4])
def test_a_profiles_coefficients_and_bound_never_change(profile):
    """A stored counter continues with its profile's coefficients and its noise calibrated to that profile's n2:
    changing either for an existing profile would change what a restored run releases (and its privacy proof's
    constants). Profile 3's are those of the code before profile 4 was added; a new design is a new profile."""
    import hashlib

    digest, n2 = COEFFICIENT_PINS[profile]
    assert hashlib.sha256(anytime_coefficients(1 << 16, profile).tobytes()).hexdigest() == digest
    assert anytime_sensitivity_sq(profile) == n2
