"""``anytime_sqrt`` profiles 3 and 4 (new counters): the merged start
(``transforms/core/counters/factorization/anytime.py``, ``docs/counters.md``, "Merged start"). Phase 1 (the square
root for horizon MERGE_T1, its column scaled to squared norm <= 2^40 = K_0^2) releases the first MERGE_T1 steps;
then the first phase's batches are one merged item of the damped Toeplitz, whose estimate is phase 1's (the hand-
over). Checked here: noise off equals the prefix sums across the hand-over (float and int64 encoders, the switch at
the hand-over); every neighbour's released shift against the calibrated sensitivity (and a phase 1 scaled 10% too
high fails); the reported variance against a dense solve of the whole encoder (a decoder forgetting the merged
item's variance fails) and measured; the state round trip before, at and after the hand-over; restored profile-2
states stay profile 2; the tail bound of the knot damping; the ratio to the square root at 2^10..2^16."""

import math
import pickle

import numpy as np
import pytest
from scipy import stats

from transforms.core.counters import make_counter
from transforms.core.counters.factorization import LATTICE_BITS, sqrt_coefficients
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization.anytime import (
    MERGE_T1,
    AnytimeSqrtCounter,
    PhaseTables,
    anytime_coefficients,
    anytime_sensitivity_sq,
    anytime_tables,
    anytime_variance_path,
    merge_tables,
)
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import ZCDP, PureDP
from transforms.core.foundation.noise import NoiseSource, as_ratio_up
from transforms.core.static import CountMechanism, HistogramMechanism

G = 2.0**-LATTICE_BITS
T1 = MERGE_T1


def key(tag: str) -> NoiseSource:
    return NoiseSource(tag.encode().ljust(32, b"\0"))


def test_new_counters_are_profile_4_with_a_merged_start_gaussian_only():
    c = make_counter("anytime_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0))
    assert (c.profile, c.merge_t1, c.base_t) == (4, T1, 0) and anytime_mod.PROFILE == 4
    lap = make_counter("anytime_sqrt", CountMechanism(1, "laplace"), PureDP(1.0))
    assert lap.merge_t1 == 0  # under pure DP the counter is blt (no merged start)
    assert AnytimeSqrtCounter(CountMechanism(1, "gaussian"), ZCDP(1.0), profile=2).merge_t1 == 0
    assert AnytimeSqrtCounter(CountMechanism(1, "gaussian"), ZCDP(1.0), profile=3).merge_t1 == T1
    with pytest.raises(ValueError, match="profiles 1, 2, 3, 4"):
        AnytimeSqrtCounter(CountMechanism(1, "gaussian"), ZCDP(1.0), profile=5)


def test_phase_tables_fill_exactly_the_merged_items_missing_diagonal():
    """sum_k P_k^2 <= 2^40 = K_0^2 exactly (the merged item's phase-2 column lacks K_0), and wastes under
    1e-4 of it; P is the square root for horizon T1 scaled by 1 / sqrt(s(T1)) (floored); the decoder
    divides by P_0 < 2^20."""
    tab = merge_tables(T1)
    assert tab.size == T1 and tab.column_sq <= 1 << 40 and tab.column_sq > (1 - 1e-4) * 2.0**40
    c = sqrt_coefficients(T1)
    want = np.floor(c * 2.0**LATTICE_BITS / math.sqrt(float(np.sum(c * c))))
    assert np.all(np.abs(tab.cint - want) <= 1) and tab.cint[0] < 1 << LATTICE_BITS
    assert np.all(np.diff(tab.cint) <= 0) and tab.n2 == anytime_sensitivity_sq()


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_noise_off_exact_across_the_hand_over(kind, no_noise):
    """Signed batches over 3 cells for 2500 steps (hand-over after 896, doublings at positions 256..1024)."""
    budget = PureDP(1.0) if kind == "laplace" else ZCDP(0.5)
    c = make_counter("anytime_sqrt", HistogramMechanism(3, kind), budget)
    rng = np.random.default_rng(7)
    prefix = np.zeros(3)
    for t in range(2500):
        b = None if t % 7 == 3 else rng.integers(-4, 9, 3)
        prefix += 0 if b is None else b
        np.testing.assert_array_equal(c.step(b, no_noise), prefix, err_msg=str(t))
    if kind == "gaussian":
        assert c.base_t == T1 - 1 and c.cap == 2048 and c._float_mode


def test_noise_off_exact_when_the_merged_item_needs_the_int64_encoder(no_noise):
    """First-phase batches of 2^28 each: phase 1's float encoder holds them (its coefficient sum times 2^28 is
    below 2^53), their sum (896 x 2^28) times phase 2's coefficient sum is not: the hand-over switches to the
    exact int64 limbs."""
    c = make_counter("anytime_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0))
    prefix = 0
    for t in range(T1 + 300):
        b = np.array([1 << 28]) if t < T1 else np.array([3 - t % 5])
        prefix += int(b[0])
        out = c.step(b, no_noise)[0]
        assert abs(out - prefix) <= 1e-12 * abs(prefix), t
        if t == T1 - 1:
            assert c._float_mode and merge_tables(T1).s1 << 28 < 1 << 53
    assert not c._float_mode


def test_a_merged_item_of_2_62_or_more_is_refused():
    c = make_counter("anytime_sqrt", CountMechanism(1, "gaussian"), ZCDP(1.0))
    off = NoiseSource.disabled()
    for _ in range(T1):
        c.step(np.array([1 << 53]), off)
    plain = state_mod.to_plain(c)
    with pytest.raises(ValueError, match="merged item"):
        c.step(np.array([1]), off)
    # nothing changed: a retried step refuses again, and the state is the one before the refusal
    assert c._first_phase and c.t == T1 and state_mod.to_plain(c) == plain
    with pytest.raises(ValueError, match="merged item"):
        c.step(np.array([1]), off)


def _released(item_at: int | None, T: int, column: float | None = None, profile: int = 4) -> np.ndarray:
    c = AnytimeSqrtCounter(CountMechanism(1, "gaussian"), ZCDP(0.5), profile=profile)
    if column is not None:  # the mis-scaled twin: phase 1's column at `column` x 2^40
        twin = PhaseTables(T1)
        cint = np.floor(twin.cint.astype(np.float64) * math.sqrt(column)).astype(np.int64)
        twin.cint, twin.crev_i = cint, cint[::-1].copy()
        twin.crev_f = twin.crev_i.astype(np.float64)
        twin.n2 = anytime_sensitivity_sq(profile)
        c._tab = twin
        c.window = twin.size
    c.release_log = []
    off = NoiseSource.disabled()
    for t in range(1, T + 1):
        c.step(np.array([1]) if t == item_at else None, off)
    return np.array([int(round(v[0] / G)) for _, _, v in c.release_log], dtype=object)


@pytest.mark.parametrize("profile", [3, 4])
def test_neighbours_move_the_release_by_at_most_the_toeplitz_column(profile):
    """An extra item at step s of a 1000-step run: the integer releases move by its phase-1 column plus
    (K_1, ..., K_(T - T1)) for s <= T1, by (K_0, ..., K_(T - s)) after; every shift is at most the Toeplitz
    column of the same length past the hand-over, sum_{k <= T - T1} K_k^2, below n2 (sigma^2 = n2 / (2 rho)).
    A phase 1 scaled to 1.1 x 2^40 exceeds that column (the twin)."""
    T = 1000
    base = _released(None, T, profile=profile)
    pos = [1, 2, 5, 100, 450, T1 - 1, T1, T1 + 1, T1 + 2, 950, T]
    shifts = {s: sum(int(v) ** 2 for v in _released(s, T, profile=profile) - base) for s in pos}
    k = anytime_coefficients(T - T1 + 1, profile)
    p = merge_tables(T1, profile).cint
    col = sum(int(v) ** 2 for v in k)  # sum_{k <= T - T1} K_k^2
    for s in pos:
        if s <= T1:
            want = sum(int(v) ** 2 for v in p[: T1 - s + 1]) + col - int(k[0]) ** 2
        else:
            want = sum(int(v) ** 2 for v in k[: T - s + 1])
        assert shifts[s] == want, s
        assert shifts[s] <= col < anytime_sensitivity_sq(profile)
    made = AnytimeSqrtCounter(CountMechanism(1, "gaussian"), ZCDP(0.5), profile=profile)
    assert made.noise_param == as_ratio_up(anytime_sensitivity_sq(profile))
    twin = sum(int(v) ** 2 for v in _released(1, T, 1.1, profile) - _released(None, T, 1.1, profile))
    assert twin > col


def _dense_rows(T: int, profile: int = 4) -> np.ndarray:
    """A (prefix sums) times the inverse of the counter's whole encoder E / 2^20 (releases x items): phase-1
    rows the Toeplitz P, row T1 - 1 + tau (tau >= 1) K_tau on every first-phase item and K_(tau - i) on item
    T1 - 1 + i."""
    p = merge_tables(T1, profile).cint.astype(np.float64)
    k = anytime_coefficients(T, profile).astype(np.float64)
    E = np.zeros((T, T))
    for r in range(T1):
        E[r, : r + 1] = p[: r + 1][::-1]
    for tau in range(1, T - T1 + 1):
        E[T1 - 1 + tau, :T1] = k[tau]
        E[T1 - 1 + tau, T1 : T1 + tau] = k[:tau][::-1]
    return np.tril(np.ones((T, T))) @ np.linalg.inv(E * G)


@pytest.mark.parametrize("profile", [3, 4])
def test_variance_is_the_dense_decoder_row_norm_across_the_hand_over(profile):
    """Reported variance = sigma^2 g^2 ||row_t of A E~^-1||^2 at every step of a 1200-step run; the closed
    form's twin without the merged item's variance (merge_v0 b_tau^2 read as b_tau^2) is off after the
    hand-over."""
    T = 1200
    W = _dense_rows(T, profile)
    c = AnytimeSqrtCounter(CountMechanism(1, "gaussian"), ZCDP(1.0), profile=profile)
    noise = key("merged/rows")
    sigma2 = float(c.noise_param) * G * G
    got = []
    for t in range(T):
        c.step(None, noise)
        got.append(c.variance())
        assert got[-1] == pytest.approx(sigma2 * np.sum(W[t] ** 2), rel=1e-8), t
    np.testing.assert_allclose(anytime_variance_path(T, 1.0, profile), [sigma2 * np.sum(w**2) for w in W], rtol=1e-8)
    tab = anytime_tables(512, profile)
    for tau in (1, 2, 3):
        forgot = sigma2 * (tab.bsq[tau - 1] + tab.b[tau] ** 2)
        assert abs(forgot / got[T1 - 1 + tau] - 1) > 0.1, tau


@pytest.mark.statistical
def test_variance_formula_measured_across_the_hand_over():
    """2000 independent cells for 1100 steps: the reported variance equals the empirical mean square at
    t = 10, 500, 896, 897, 900, 1100 (|z| below the two-sided 1e-6 / 6 quantile): false failure < 1e-6."""
    cells = 2000
    c = make_counter("anytime_sqrt", HistogramMechanism(cells, "gaussian"), ZCDP(0.5))
    noise = key("merged/var")
    z_crit = stats.norm.isf(1e-6 / 12)
    checked = 0
    for t in range(1, 1101):
        x2 = c.step(None, noise) ** 2
        if t in (10, 500, T1, T1 + 1, T1 + 4, 1100):
            se = math.sqrt(np.var(x2) / cells)
            assert abs(x2.mean() - c.variance()) < z_crit * se, (t, x2.mean(), c.variance(), se)
            checked += 1
    assert checked == 6


@pytest.mark.parametrize("profile", [3, 4])
@pytest.mark.parametrize("at", [500, T1 - 1, T1, T1 + 1, 1200])
def test_state_round_trip_before_at_and_after_the_hand_over(at, profile):
    noise = key("merged/state")
    c = AnytimeSqrtCounter(HistogramMechanism(3, "gaussian"), ZCDP(1.0), coords=("st",), profile=profile)
    for t in range(at):
        c.step(np.array([t % 3, 1, 0]), noise)
    plain = state_mod.to_plain(c)
    assert "_tab" not in plain["f"]
    c2 = state_mod.restore(state_mod.decode(state_mod.encode(plain)))
    c3 = pickle.loads(pickle.dumps(c))
    for t in range(1400 - at):
        b = np.array([1, t % 2, 2])
        out = c.step(b, noise)
        np.testing.assert_array_equal(out, c2.step(b, noise))
        np.testing.assert_array_equal(out, c3.step(b, noise))
    assert c.base_t == c2.base_t == c3.base_t == T1 - 1 and c.cap == c2.cap == c3.cap
    assert c.profile == c2.profile == c3.profile == profile
    assert c.variance() == c2.variance() == c3.variance()


def test_a_profile_2_state_without_the_merge_fields_continues_as_profile_2():
    """A state stored before profile 3 (no merge_t1, base_t, merge_v0) restores with no merged start and
    releases what the profile-2 counter releases, across position 896 and a doubling."""
    noise = key("merged/p2")
    c = AnytimeSqrtCounter(HistogramMechanism(2, "gaussian"), ZCDP(1.0), coords=("p2",), profile=2)
    for t in range(800):
        c.step(np.array([1, t % 2]), noise)
    plain = state_mod.to_plain(c)
    for f in ("merge_t1", "base_t", "merge_v0"):
        plain["f"].pop(f, None)
    old = state_mod.restore(plain)
    assert (old.profile, old.merge_t1, old.base_t) == (2, 0, 0)
    for t in range(400):
        b = np.array([2, t % 3])
        np.testing.assert_array_equal(c.step(b, noise), old.step(b, noise))
    assert old.cap == 2048 and old.variance() == c.variance()


@pytest.mark.parametrize("profile", [3, 4])
def test_the_ratio_to_the_square_root_is_below_1_25_from_2_10_to_2_16(profile):
    """The lattice counter's own variance (its n2, floored coefficients, the hand-over) over the square root
    designed for t, s(t)^2 / 2 (rho = 1), at every t of [2^10, 2^16] (the rest of [2^10, 2^24] is in
    ``python benchmarks/bench_counters.py --anytime``: tables of 2^24 steps); profile 2 is above 1.25 at
    2^10 (1.38), so the check is not empty."""
    n = 1 << 16
    c = sqrt_coefficients(n)
    s = np.cumsum(c * c)
    ratio = anytime_variance_path(n, profile=profile) / (s * s / 2)
    assert ratio[(1 << 10) - 1 :].max() < 1.25
    assert anytime_variance_path(1 << 10, profile=2)[-1] / (s[1023] ** 2 / 2) > 1.3


# per profile: (worst over [2^10, 2^24] within, the t of the worst, the least within, the ratio at 2^24 within)
RATIO_PINS = {
    3: ((1.2443, 1.2445), 1901, (1.139, 1.141), (1.2443, 1.2445)),
    4: ((1.2496, 1.2498), 1901, (1.1444, 1.1446), (1.2496, 1.2498)),
}


@pytest.mark.slow  # the tables of 2^24 steps (a series inverse of that length): about 18 s and 3 GB a profile
@pytest.mark.parametrize("profile", [3, 4])
def test_the_ratio_to_the_square_root_is_below_1_25_at_every_t_from_2_10_to_2_24(profile):
    """Issue 31's target on the whole span, the lattice counter's own variance: at every t of [2^10, 2^24] below
    1.25 (profile 3: at most 1.2445, the design's 1.2444, ``docs/counters.md``: 1.24438 at t = 1,901; profile 4:
    RATIO_PINS), and the figures pinned from below too (the worst, the least, the ratio at 2^24): a counter with
    less noise than it states, or another profile, moves them (profile 2 is at 1.377 at 2^24; that table, another
    18 s of CPU, is no longer built here: the pins are a stricter check)."""
    (w_lo, w_hi), at, (l_lo, l_hi), (e_lo, e_hi) = RATIO_PINS[profile]
    n = 1 << 24
    c = sqrt_coefficients(n)
    s = np.cumsum(c * c)
    ratio = anytime_variance_path(n, profile=profile) / (s * s / 2)
    span = ratio[(1 << 10) - 1 :]
    worst = float(span.max())
    assert w_lo < worst < w_hi <= 1.25
    assert int(span.argmax()) + (1 << 10) == at
    assert l_lo < float(span.min()) < l_hi
    assert e_lo < float(ratio[n - 1]) < e_hi
