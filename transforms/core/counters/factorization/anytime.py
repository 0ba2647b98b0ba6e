"""``anytime_sqrt``: a counter with no horizon whose variance stays near the square root's
designed for the current length, with exact lattice noise (``docs/counters.md``,
"Anytime square root").

The infinite square root S = C C (c_k = binom(2k, k) / 4^k) is not private for ever: its
column norm^2 sum_k c_k^2 ~ ln(t) / pi grows without bound. Damping its coefficients by a
slowly decreasing factor, e_k = c_k h(k), gives a lower-triangular Toeplitz encoder E whose
(infinite) column is square-summable. Two damping profiles (the counter's versioned ``profile``;
a stored state without it is profile 1 and continues as it did):

* profile 1: h(k)^2 = (1 + A ln(1 + k / K0))^-(1 + EPS) (worst ratio to the square root designed
  for t, over t = 2^10 .. 2^24: 1.57x);
* profile 2: h(k)^2 = (1 + A2 ln(1 + k / K02))^-P2 for k < N2 = 2^24 (P2 < 1),
  then h(N2)^2 (1 + B2 ln(k / N2))^-Q2 (Q2 > 1): the ratio is lower at 2^10 and 2^24
  (``docs/counters.md`` has the table);
* profile 3 (new counters): a **merged start** and a knot damping. ln h(k)^2 is piecewise linear in
  log2(1 + k) through (KNOTS3, LOGH2_3) up to N2, then h(N2)^2 (1 + B3 ln(k / N2))^-Q3. The first
  MERGE_T1 steps are a separate phase: the square root for horizon MERGE_T1 with its column scaled to
  squared norm <= 1 = e_0^2 (integer coefficients P_k, P_0 < 2^20), releasing the estimates up to
  MERGE_T1; from step MERGE_T1 + 1 the damped Toeplitz runs on the merged stream (x_0 = the sum of the
  first MERGE_T1 batches, then one batch a step) with no release for x_0 alone: its estimate is
  phase 1's at MERGE_T1 (the hand-over). An item of the first phase moves phase 1's releases by at
  most e_0^2 and phase 2's by (e_1, e_2, ...); any later item by the Toeplitz column: the sensitivity
  is the infinite column's, n2, as for the other profiles. Worst ratio to the square root designed for
  t over every t of [2^10, 2^24]: 1.2444 (lattice; profile 2: 1.382; ``docs/counters.md``, "Profile 3");
  the price is phase 1 (ratio 4.65 to 15 before MERGE_T1, where profile 2 has 1.4 to 4.4).
* profile 4 (new counters): profile 3's construction (the same merged start) with 30 knots (KNOTS4,
  LOGH2_4) and a tail a sixteenth of profile 3's (B4 (Q4 - 1) = 64 against B3 (Q3 - 1) = 4), designed with
  the dense stream's mean error as a constraint (``benchmarks/anytime_front.py``): worst ratio to the square
  root designed for t over every t of [2^10, 2^24] at most 1.25 and the dense stream's run without an end
  within 1.1x of the run with it (``docs/counters.md``, "Profile 4"); the price is past 2^24 steps, where the
  cheaper tail lets the ratio grow faster than profile 3's.

Tail: sum_{k >= N} c_k^2 h(k)^2 <= int_{N-1}^inf h(x)^2 / (pi x) dx (c_k^2 <= 1 / (pi k); h^2 / x
decreasing), in closed form per regime (:func:`anytime_tail_bound`; the proof in
``docs/counters.md``). The decoder S E^-1 is post-processing; its row norms grow a little faster
than the square root's. No horizon is declared: the counter is the same at every t.

Exactness: K_k = floor(e_k 2^20) (floor, not round: then K_k <= e_k 2^20 everywhere and the tail
bound holds for the integers), made non-increasing; K_0 = 2^20. The encoder, noise and decoder
are the lattice Toeplitz counters' (``lattice.py``) with a window that doubles with t (every
past step stays in it). K_k reaches 0 where c_k h(k) 2^20 < 1, and stays 0 after (non-increasing): near
k = 2^32.6 for profile 1, 2^30.9 for 2, 2^27.8 for 3 and 2^24.57 (24.8 million steps) for 4; from there
the column has finite support (:class:`WideTables` takes the zeros; privacy is unaffected: the column
only loses terms) and the variance grows faster than the square root's. Every column of the
infinite Toeplitz matrix has the same norm; a finite run's columns are its prefixes. The
sensitivity n2 is the exact integer sum of K_k^2 over k < EXACT_TERMS plus the tail bound
times 2^40, rounded up (:func:`anytime_sensitivity_sq`): fixed before the first step, the same
for ever.

Memory and work: O(t m) numbers and O(t m) work per step (as ``sqrt_factorization`` at
horizon t), plus an FFT of length 2t at each doubling (the decoder weights). No step limit: the
lattice counters' exact int64 encoder splits a batch into two 31-bit limbs, which needs
sum_k K_k < 2^31 (every profile: up to the table of NARROW_STEPS = 2^23 steps); past it the
tables are :class:`WideTables` and the encoder splits into as many narrower limbs as
``s1 2^w < 2^61`` requires (:func:`limb_dot`): still exact, int64 products, Python-int sums.

Under pure DP (Laplace noise) the L1 norm of such a column diverges (e_k ~ k^-1/2); the counter
is then ``blt`` itself (finite support, private for ever); ``auto`` keeps ``infinite_honaker``.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from transforms.core.counters.factorization.coefficients import LATTICE_BITS, sqrt_coefficients
from transforms.core.counters.factorization.lattice import BLTCounter, LatticeTables
from transforms.core.foundation.bounds import GAUSSIAN
from transforms.core.foundation.noise import as_ratio_up
from transforms.core.foundation.state import state_class

__all__ = [
    "A",
    "K0",
    "EPS",
    "A2",
    "K02",
    "P2",
    "N2",
    "B2",
    "Q2",
    "KNOTS3",
    "LOGH2_3",
    "B3",
    "Q3",
    "KNOTS4",
    "LOGH2_4",
    "B4",
    "Q4",
    "PROFILES",
    "knot_profile",
    "MERGE_T1",
    "PROFILE",
    "EXACT_TERMS",
    "NARROW_STEPS",
    "AnytimeSqrtCounter",
    "WideTables",
    "chunked_dot",
    "limb_dot",
    "limb_width",
    "anytime_coefficients",
    "anytime_sensitivity_sq",
    "anytime_tables",
    "anytime_tail_bound",
    "anytime_variance_path",
    "merge_tables",
    "PhaseTables",
]

# profile 1 (the counter's first version; a restored counter without ``profile`` in its state): the
# damping h(k)^2 = (1 + A ln(1 + k / K0))^-(1 + EPS), balanced by Nelder-Mead over the ratio to the
# square root at t = 2^10, 2^14, 2^18, 2^22, then checked at 2^24 (docs/counters.md)
A, K0, EPS = 0.9, 250_000.0, 0.72
# profile 2 (new counters): h(k)^2 = (1 + A2 ln(1 + k / K02))^-P2 for k < N2, then
# h(N2)^2 (1 + B2 ln(k / N2))^-Q2: an exponent below 1 up to 2^24 steps (32 years of one-minute periods;
# not summable alone), a summable tail after it; (A2, K02, P2) by Nelder-Mead on the exact float model
# over the ratio at t = 2^10, 2^14, 2^18, 2^22, 2^24 (docs/counters.md, "Anytime square root")
A2, K02, P2 = 0.933, 1640.0, 0.711
N2, B2, Q2 = float(1 << 24), 1.0, 2.0
# profile 3 (new counters): ln h(k)^2 piecewise linear in log2(1 + k) through these knots for k <= N2 (constant
# past the last knot, as np.interp), then h(N2)^2 (1 + B3 ln(k / N2))^-Q3; a merged start of MERGE_T1 steps.
# The knot values minimise the worst ratio to the square root designed for t over every t of [2^10, 2^24]
# on the lattice model (floored coefficients, the merged start; benchmarks/anytime_merge.py --knots);
# public constants of the design, like every profile's: they decide which noise is drawn, not when.
KNOTS3 = (0.0, 2.0, 4.0, 6.0, 8.0, 9.0, 10.0, 11.0, 12.0, 14.0, 16.0, 18.0, 20.0, 21.0, 22.0, 23.0, 24.0)
LOGH2_3 = (
    0.000000,
    0.007364,
    0.010649,
    -0.001695,
    0.040820,
    0.124171,
    0.009496,
    -0.371032,
    -0.661091,
    -0.831017,
    -0.923297,
    -1.009208,
    -1.086119,
    -1.039407,
    -1.005466,
    -1.158048,
    -1.811534,
)
B3, Q3 = 2.0, 3.0
# profile 4 (new counters): profile 3's form with more knots and a tail a sixteenth of profile 3's share of the
# column (h(N2)^2 / (pi B4 (Q4 - 1)), B4 (Q4 - 1) = 64); the knot values minimise the worst ratio to the square
# root designed for t over every t of [2^10, 2^24] with the dense stream's mean error (a run without an end
# against the run with one, 43,200 ticks) held at most 1.0999 (benchmarks/anytime_front.py, docs/counters.md,
# "Profile 4"); public constants of the design, like every profile's: they decide which noise is drawn, not when.
KNOTS4 = (
    *(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5, 13.0),
    *(14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0),
)
LOGH2_4 = (
    0.000000,
    -0.032478,
    -0.026445,
    -0.034175,
    -0.029457,
    -0.027972,
    -0.012623,
    -0.003392,
    0.034476,
    0.048777,
    0.045725,
    0.087659,
    -0.011573,
    -0.198337,
    -0.390540,
    -0.503945,
    -0.515412,
    -0.481719,
    -0.513001,
    -0.559261,
    -1.088125,
    -1.232799,
    -1.121213,
    -1.025914,
    -1.060094,
    -1.104554,
    -1.115541,
    -1.155357,
    -1.021553,
    -1.736244,
)
B4, Q4 = 32.0, 3.0
MERGE_T1 = 896
PROFILE = 4  # the profile of a new counter
PROFILES = (1, 2, 3, 4)
EXACT_TERMS = 1 << 21  # the column summed exactly below this, bounded above it
NARROW_STEPS = 1 << 23  # the largest table (a power of 2) of every profile whose K_k sum below 2^31 (3: 0.96; 4: 0.94)
_NARROW_S1 = 1 << 31  # LatticeTables' limit on s1 (two 31-bit limbs)
_CHUNK = 8192  # numbers per partial product (below OpenBLAS's multi-threading size, as lattice.py's)
_FIRST_CAP = 256
_FLOAT_EXACT = 1 << 53  # integers below this are exact in float64 (the lattice encoder's float mode)
_BLOCK = 4096  # the damping is evaluated in aligned blocks (the same floats for any table size)


def knot_profile(profile: int) -> tuple[tuple, tuple, float, float]:
    """(knots, ln h^2 at the knots, B, Q) of a knot profile (3 or 4): read when called, so the tests' changes of
    the module's constants reach every use."""
    if profile == 3:
        return KNOTS3, LOGH2_3, B3, Q3
    if profile == 4:
        return KNOTS4, LOGH2_4, B4, Q4
    raise ValueError(f"profile {profile!r} has no knots")


@functools.lru_cache(maxsize=1024)
def _damping_block(i: int, profile: int = 1) -> np.ndarray:
    k = np.arange(i * _BLOCK, (i + 1) * _BLOCK, dtype=np.float64)
    if profile == 1:
        return (1.0 + A * np.log1p(k / K0)) ** (-(1.0 + EPS) / 2)
    if profile == 2:
        h1 = (1.0 + A2 * np.log1p(np.minimum(k, N2) / K02)) ** (-P2 / 2)  # h(min(k, N2))
        return h1 * (1.0 + B2 * np.log(np.maximum(k, N2) / N2)) ** (-Q2 / 2)
    knots, values, b, q = knot_profile(profile)
    h1 = np.exp(0.5 * np.interp(np.log2(1.0 + np.minimum(k, N2)), knots, values))
    return h1 * (1.0 + b * np.log(np.maximum(k, N2) / N2)) ** (-q / 2)


def anytime_coefficients(n: int, profile: int = PROFILE) -> np.ndarray:
    """K_k = floor(c_k h(k) 2^20), k < n (int64), made non-increasing; every prefix is the same
    whatever n (aligned blocks, a running minimum)."""
    h = np.concatenate([_damping_block(i, profile) for i in range(-(-n // _BLOCK))])[:n]
    k = np.floor(sqrt_coefficients(n) * h * float(1 << LATTICE_BITS)).astype(np.int64)
    return np.minimum.accumulate(k)


def anytime_tail_bound(n: int, profile: int = PROFILE) -> float:
    """An upper bound on sum_{k >= n} c_k^2 h(k)^2 (module docstring; ``docs/counters.md`` has the
    proof), n >= 2. Profile 1: the smaller of two integral bounds. Profile 2: the integral of
    h(x)^2 / (pi x) from n - 1, in closed form piece by piece (``docs/counters.md``)."""
    x = n - 1
    if profile == 1:
        out = (1.0 + K0 / x) * (1.0 + A * math.log1p(x / K0)) ** (-EPS) / (math.pi * A * EPS)
        if x >= K0:  # h(x)^2 <= (1 + A ln(x / K0))^-(1+EPS) there: substitute v = ln(x / K0)
            out = min(out, (1.0 + A * math.log(x / K0)) ** (-EPS) / (math.pi * A * EPS))
        return out
    if profile in (3, 4):
        knots, values, b, q = knot_profile(profile)
        out = math.exp(values[-1]) * (1.0 + b * math.log(max(x, N2) / N2)) ** (1.0 - q) / (math.pi * b * (q - 1.0))
        if x < N2:  # 1/u <= (1 + 1/x) / (1 + u) for u >= x; w = ln(1 + u): ln h^2 linear in w on each piece
            out += (1.0 + 1.0 / x) * knot_integral(x, knots, values) / math.pi
        return out
    h2n = (1.0 + A2 * math.log1p(N2 / K02)) ** (-P2)  # h(N2)^2
    # past max(x, N2): v = ln(x / N2), int (1 + B2 v)^-Q2 dv from v0
    out = h2n * (1.0 + B2 * math.log(max(x, N2) / N2)) ** (1.0 - Q2) / (math.pi * B2 * (Q2 - 1.0))
    if x < N2:  # from x to N2: 1/x <= (1 + K02/x) / (x + K02), u = ln(1 + x / K02), int (1 + A2 u)^-P2 du
        ua, ub = math.log1p(x / K02), math.log1p(N2 / K02)
        part = ((1.0 + A2 * ub) ** (1.0 - P2) - (1.0 + A2 * ua) ** (1.0 - P2)) / (A2 * (1.0 - P2))
        out += (1.0 + K02 / x) * part / math.pi
    return out


def knot_integral(x: float, knots, values) -> float:
    """int_x^N2 h(u)^2 / (1 + u) du (x < N2) for the knot damping through ``knots``, ``values`` (a knot profile's,
    :func:`knot_profile`, or a design's of ``benchmarks/anytime_front.py``): with w = ln(1 + u) = X ln 2, ln h^2
    is linear in X on each piece between knots (slope s), so each piece is ln 2 (h_b^2 - h_a^2) / s (or ln 2 h^2
    (X_b - X_a) where s = 0); past the last knot ln h^2 is constant up to N2 (np.interp's clamp)."""
    lo, top = math.log2(1.0 + x), math.log2(1.0 + N2)
    pts = list(zip(knots, values)) + [(max(top, knots[-1]), values[-1])]
    total = 0.0
    for (x0, v0), (x1, v1) in zip(pts, pts[1:]):
        a, b = max(lo, x0), min(top, x1)
        if b <= a:
            continue
        slope = (v1 - v0) / (x1 - x0)
        va, vb = v0 + slope * (a - x0), v0 + slope * (b - x0)
        total += math.log(2.0) * (math.exp(va) * (b - a) if slope == 0 else (math.exp(vb) - math.exp(va)) / slope)
    return total


def _check_knots() -> None:
    """The tail bound's sum-to-integral step needs h(u)^2 / u non-increasing past EXACT_TERMS: on a piece,
    h^2 ~ (1 + u)^(s / ln 2), which holds when every slope s <= ln 2; the knots increase and start at 0; the
    tail's B and Q make it decrease (B > 0, Q > 1). Every knot profile (3 and 4)."""
    for profile in (3, 4):
        knots, values, b, q = knot_profile(profile)
        message = f"profile {profile}'s knots must start at (0, 0), increase, and rise by at most ln 2 an octave"
        if len(knots) != len(values) or knots[0] != 0.0 or values[0] != 0.0 or min(np.diff(knots)) <= 0:
            raise AssertionError(message)  # before the slopes: no division by 0
        if knots[-1] > math.log2(1.0 + N2):  # the tail's closed form takes h(N2)^2 = exp(values[-1])
            raise AssertionError(message + ", the last knot at most log2(1 + N2)")
        slopes = [(v1 - v0) / (x1 - x0) for x0, x1, v0, v1 in zip(knots, knots[1:], values, values[1:])]
        if max(slopes) > math.log(2.0) or not (b > 0 and q > 1):
            raise AssertionError(message + f" (and a tail with B > 0, Q > 1: {b}, {q})")


_check_knots()


@functools.lru_cache(maxsize=len(PROFILES))
def anytime_sensitivity_sq(profile: int = PROFILE) -> int:
    """An integer upper bound on the squared norm of every column of the infinite encoder
    (lattice units): sum_{k < EXACT_TERMS} K_k^2 exactly, plus the tail bound times 2^40
    (K_k <= c_k h(k) 2^20), rounded up with a relative margin of 1e-9 for the floating-point
    evaluation of h (a few ulps)."""
    k = anytime_coefficients(EXACT_TERMS, profile)
    assert int(k[0]) ** 2 * EXACT_TERMS < 1 << 63  # every partial sum of K_k^2 fits int64: exact (2^61)
    head = int(np.sum(k * k))
    tail = anytime_tail_bound(EXACT_TERMS, profile) * (1.0 + 1e-9)
    return head + math.ceil(tail * float(1 << (2 * LATTICE_BITS)))


class WideTables(LatticeTables):
    """:class:`LatticeTables` whose coefficients may sum to 2^31 or more (the tables past NARROW_STEPS) or
    reach 0 (the tables past the first k with ``c_k h(k) 2^20 < 1``): the same arrays; the counter encodes
    them with :func:`limb_dot`. A coefficient of 0 is the floor of ``c_k h(k) 2^20 < 1``; the coefficients are
    non-increasing, so from the first 0 on every one is 0: the encoder's column has finite support there
    (its norm only loses terms: n2 still bounds it), and the decoder stays stable (the polynomial of the
    positive coefficients is decreasing: Enestrom-Kakeya, as for every lattice table)."""

    def __init__(self, cint: np.ndarray, precompute: int):  # noqa: D107 (LatticeTables' arrays, no s1 limit)
        cint = np.asarray(cint, dtype=np.int64)
        if cint[0] != 1 << LATTICE_BITS or not cint[1] < cint[0] or np.any(cint < 0) or np.any(np.diff(cint) > 0):
            raise AssertionError("lattice coefficients must be non-negative, decreasing from c_0 = 1, non-increasing")
        self.s1 = int(np.sum(cint))  # exact: len(cint) 2^20 < 2^63
        sq = cint * cint  # each < 2^40; chunks of 2^22 sum below 2^62: exact
        self.n2 = sum(int(np.sum(sq[a : a + (1 << 22)])) for a in range(0, len(sq), 1 << 22))
        self.derive(cint, precompute)


def chunked_dot(c: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The product c @ w in fixed row chunks of about _CHUNK numbers (single-threaded BLAS sizes; integer
    inputs keep exact integer partial sums, fixed boundaries keep floats reproducible)."""
    rows = max(64, _CHUNK // max(1, w.shape[1]))
    out = c[:rows] @ w[:rows]
    for a in range(rows, len(c), rows):
        out = out + c[a : a + rows] @ w[a : a + rows]
    return out


def limb_width(s1: int) -> int:
    """The limb width w of :func:`limb_dot` for coefficients summing to s1: s1 2^w < 2^61."""
    return 61 - int(s1).bit_length()


def limb_dot(c: np.ndarray, win: np.ndarray, s1: int) -> list[int]:
    """sum_k c_k win_k (c int64 >= 0 summing to s1, win int64 (L, m), |win| < 2^62) exactly, as
    Python ints: win = sum_j l_j 2^(w j) with l_j in [0, 2^w) below the top limb and the top
    limb signed, |top| <= 2^w; every int64 partial sum is below s1 2^w < 2^61."""
    w = limb_width(s1)
    if w < 2:
        raise ValueError("the lattice coefficients sum to 2^59 or more: no exact int64 limbs left")
    out = [0] * win.shape[1]
    rest, shift, mask = win, 0, (1 << w) - 1
    while True:
        top = bool(np.all(np.abs(rest) <= 1 << w))
        part = chunked_dot(c, rest if top else rest & mask)
        out = [o + (int(p) << shift) for o, p in zip(out, part)]
        if top:
            return out
        rest, shift = rest >> w, shift + w


class PhaseTables(LatticeTables):
    """Phase 1 of profile 3's merged start: P_k = floor(c_k 2^20 / sqrt(s(t1))), k < t1 (c the square root's
    coefficients, s(t1) = sum_{k<t1} c_k^2), made non-increasing, so that sum_k P_k^2 <= 2^40 = K_0^2
    (checked exactly: the merged item's column in phase 2 lacks exactly K_0^2). Its leading coefficient is
    P_0 < 2^20 (the decoder divides by it); b: the decoder weights of P / 2^20, so that the variance is
    sigma^2 g^2 bsq as for every lattice table."""

    def __init__(self, t1: int):  # noqa: D107 (LatticeTables' arrays with P_0 < 2^20)
        c = sqrt_coefficients(t1)
        scale = float(1 << LATTICE_BITS) / math.sqrt(float(np.sum(c * c)) * (1.0 + 1e-12))
        cint = np.minimum.accumulate(np.floor(c * scale).astype(np.int64))
        self.s1 = int(sum(int(v) for v in cint))
        self.column_sq = int(sum(int(v) * int(v) for v in cint))
        if not (0 < cint[-1] and cint[1] < cint[0] and self.column_sq <= 1 << (2 * LATTICE_BITS)):
            raise AssertionError("phase 1's column must be positive, decreasing, of squared norm at most 2^40")
        self.derive(cint, t1)


@functools.lru_cache(maxsize=2)
def merge_tables(t1: int, profile: int = PROFILE) -> PhaseTables:
    """Phase 1's tables, with ``n2`` the infinite column's bound (the one sigma of the whole counter)."""
    tab = PhaseTables(t1)
    tab.n2 = anytime_sensitivity_sq(profile)
    return tab


@functools.lru_cache(maxsize=4)
def anytime_tables(cap: int, profile: int = PROFILE) -> LatticeTables:
    """The lattice tables of the first ``cap`` steps, with ``n2`` the infinite column's bound."""
    cint = anytime_coefficients(cap, profile)
    narrow = int(np.sum(cint)) < _NARROW_S1 and cint[-1] > 0  # LatticeTables' coefficients are positive
    tab = LatticeTables(cint, cap) if narrow else WideTables(cint, cap)
    tab.n2 = anytime_sensitivity_sq(profile)
    return tab


@state_class("counter.anytime_sqrt")
class AnytimeSqrtCounter(BLTCounter):
    """No horizon, variance near the square root designed for the current length (module
    docstring), exact lattice noise, private for ever. Gaussian noise; under pure DP it is
    ``blt``. Memory O(t m), work per step O(t m), no step limit (wide limbs past NARROW_STEPS)."""

    name = "anytime_sqrt"
    needs_horizon = False
    narrow_s1 = _NARROW_S1  # the two-limb encoder below this s1, wide limbs from it (tests lower it)

    profile = 1  # a stored state without ``profile`` (the first version) restores and continues as profile 1
    merge_t1 = 0  # the merged start's first phase, in steps (profiles 3, 4, Gaussian); 0: none (profiles 1, 2)
    base_t = 0  # after the hand-over: the step before the merged item's position 1 (merge_t1 - 1); 0 before
    merge_v0 = 1.0  # phase 1's squared decoder row at merge_t1: the merged item's estimate's variance / (sigma g)^2

    def __init__(
        self, mechanism, budget, *, horizon: int | None = None, coords=(), scope=None, profile: int | None = None, **kw
    ):
        self.cap = _FIRST_CAP
        self.profile = PROFILE if profile is None else int(profile)
        if self.profile not in PROFILES:
            raise ValueError(f"anytime_sqrt has profiles {', '.join(map(str, PROFILES))}, not {profile!r}")
        # the merged start's length is a constant of the profile (public, like the damping): it decides which
        # noise is drawn and how the releases are decoded, never when a release happens
        self.merge_t1 = MERGE_T1 if self.profile >= 3 and mechanism.noise_kind == GAUSSIAN else 0
        super().__init__(mechanism, budget, horizon=horizon, coords=coords, scope=scope, **kw)

    @property
    def _first_phase(self) -> bool:
        return bool(self.merge_t1) and not self.base_t

    def _pos(self) -> int:
        return self.t - self.base_t

    @property
    def _gaussian(self) -> bool:
        return self.mechanism.noise_kind == GAUSSIAN

    def _tables(self):
        if not self._gaussian:
            return super()._tables()
        if self._first_phase:
            return merge_tables(self.merge_t1, self.profile)
        return anytime_tables(self.cap, self.profile)

    def _hand_over(self) -> None:
        """After step merge_t1: the first phase's batches become the merged item x_0 at position 1 of the damped
        Toeplitz (encoded exactly: their integer sum), its estimate phase 1's (the running sum); no release
        for x_0 alone. The next step is position 2."""
        x0 = [sum(int(v) for v in col) for col in self._d.last(self.t).T]  # every first-phase row is kept
        dmax = max([self._dmax, *(abs(v) for v in x0)])
        if dmax >= 1 << 62:  # refused before any field changes: a retried step refuses again
            raise ValueError("the first phase's batches sum to 2^62 or more: the merged item cannot be encoded exactly")
        self.merge_v0 = float(self._tab.bsq[self.t - 1])
        self.base_t = self.t - 1
        self.cap = _FIRST_CAP
        self._tab = self._tables()
        self.window = self._tab.size
        self._dmax = dmax
        if self._float_mode and self._tab.s1 * dmax >= _FLOAT_EXACT:
            self._float_mode = False
            self._d.astype(np.int64)
        for w in (self._d, self._x):
            w.restart(self.window, 2 * self.window)
        self._d.push(np.array(x0, dtype=self._d.arr.dtype))
        self._x.push(self._acc.copy())

    def _grow(self) -> None:
        """Double the tables (and the row windows) before step cap + 1: every past row is kept."""
        self.cap *= 2
        self._tab = self._tables()
        self.window = self._tab.size
        for w in (self._d, self._x):
            w.keep, w.limit = self.window, 2 * self.window

    def _encode(self, d):
        """The lattice counters' exact encoder while the coefficients sum below 2^31 (two 31-bit
        limbs), else the same steps with :func:`limb_dot`'s narrower limbs."""
        tab = self._tab
        if tab.s1 < self.narrow_s1:
            return super()._encode(d)
        L = min(self._pos(), self.window)
        dmax = int(np.max(np.abs(d))) if len(d) else 0
        if dmax >= 1 << 62:
            raise ValueError("a batch answer of 2^62 or more cannot be encoded exactly")
        self._dmax = max(self._dmax, dmax)
        if self._float_mode and tab.s1 * self._dmax >= 1 << 53:
            self._float_mode = False
            self._d.astype(np.int64)
        self._d.push(d)
        win = self._d.last(L)
        c = tab.crev_i[self.window - L :]
        if self._float_mode:  # every partial sum an integer below 2^53: exact in float64
            return chunked_dot(tab.crev_f[self.window - L :], win)
        return limb_dot(c, win, tab.s1)

    def step(self, batch, noise):
        if self._first_phase and self.t == self.merge_t1:
            self._hand_over()
        if self._gaussian and not self._first_phase and self._pos() >= self.cap:
            self._grow()
        return super().step(batch, noise)

    def _advance_weights(self) -> None:
        """After the hand-over the merged item's estimate (variance merge_v0 in units of (sigma g)^2) enters the
        prefix at position tau + 1 with weight b_tau, every release j with b_(tau - j): the row norm^2 is
        merge_v0 b_tau^2 + sum_{j < tau} b_j^2 (docs/counters.md, "Merged start")."""
        if not self.base_t:
            return super()._advance_weights()
        tau = self._pos() - 1
        bk = float(self._tab.b[tau])
        self._bsq = float(self._tab.bsq[tau - 1]) + self.merge_v0 * bk * bk


def anytime_variance_path(steps: int, rho: float = 1.0, profile: int = PROFILE) -> np.ndarray:
    """Analytic per-step variance of ``anytime_sqrt`` (count, zCDP rho), t = 1..steps."""
    g2 = 2.0 ** (-2 * LATTICE_BITS)
    sigma2 = float(as_ratio_up(Fraction(anytime_sensitivity_sq(profile)) / (2 * Fraction(rho))))
    if profile < 3:
        cap = max(_FIRST_CAP, 1 << (steps - 1).bit_length())
        return sigma2 * g2 * np.asarray(anytime_tables(cap, profile).bsq[:steps])
    p1 = merge_tables(MERGE_T1, profile)
    head = np.asarray(p1.bsq[: min(steps, MERGE_T1)])
    late = steps - MERGE_T1  # tau = 1..late after the hand-over
    if late <= 0:
        return sigma2 * g2 * head
    tab = anytime_tables(max(_FIRST_CAP, 1 << late.bit_length()), profile)
    tau = np.arange(1, late + 1)
    return sigma2 * g2 * np.concatenate([head, tab.bsq[tau - 1] + float(p1.bsq[-1]) * tab.b[tau] ** 2])
