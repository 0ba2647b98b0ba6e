"""Matrix-factorization counters with exact lattice noise, and the k-ary tree.

Three continual counters (``make_counter`` names), proofs in ``docs/counters.md``:

* ``sqrt_factorization``: the square-root Toeplitz factorization S = C C for a
  declared horizon T (c_0 = 1, c_k = c_{k-1} (2k-1)/(2k)), snapped to the
  dyadic lattice g Z (g = 2^-LATTICE_BITS). The encoder computes
  y = K d with K = C~ / g an *integer* Toeplitz matrix, exactly; discrete
  Gaussian (or discrete Laplace) noise is added in lattice units with its scale
  calibrated to the exact column L2 (L1) norm of K, computed in integer
  arithmetic; answers are the post-processing S K^{-1} (y + z), decoded by
  forward substitution. Refuses past T.
* ``blt``: the coefficients of a buffered linear Toeplitz (BLT) matrix optimised
  for a design horizon n (Dvijotham, McMahan, Pillutla, Steinke, Thakurta
  2024), snapped to the lattice and cut to a finite window of
  ``window`` x n coefficients. Valid on unbounded streams: every column of a
  Toeplitz matrix with finite support has the same (exact) norm. The window is
  the price of exact noise: an integer-valued square-summable impulse response
  has finite support K, and a time-invariant encoder of such a response needs
  K numbers of state (the Hankel rank), so the O(buffers) state of the float
  BLT is out of reach (``docs/counters.md`` has the argument and the cost).
* ``kary_tree``: a mixed-radix k-ary tree (radices chosen for the horizon and
  the noise kind) with Honaker's bottom-up inverse-variance estimate: the best
  pure-DP counter here.

Neighbouring relation: as in :mod:`.counters` (one item more in one batch).
Noise: :func:`~transforms.core.foundation.noise.discrete_gaussian` /
:func:`~transforms.core.foundation.noise.discrete_laplace` only, from
``noise.stream(*coords, name, "noise", block)``; no floating-point noise.

Also here: the closed forms of the BLT (coefficients, sensitivity, max error),
the offline BLT optimiser that produced :data:`BLT_TABLE`, and a tight
(eps, delta) calibration of the (multivariate, discrete) Gaussian
(:func:`gaussian_rho_for_approx_tight`, proof in the docs).

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from transforms.core.counters.base import ContinualCounter
from transforms.core.foundation.accounting import BudgetExceededError, Scope
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile
from transforms.core.foundation.noise import (
    NoiseSource,
    as_ratio_up,
    discrete_gaussian,
    discrete_laplace,
    discrete_laplace_variance,
)
from transforms.core.foundation.state import state_class
from transforms.core.static.linear import CountMechanism, HistogramMechanism, StaticMechanism

__all__ = [
    "SqrtFactorizationCounter",
    "BLTCounter",
    "KaryTreeCounter",
    "LATTICE_BITS",
    "BLT_TABLE",
    "sqrt_coefficients",
    "snap_coefficients",
    "series_inverse",
    "blt_omega",
    "blt_coefficients",
    "blt_sensitivity_squared",
    "blt_max_error",
    "optimize_blt",
    "toeplitz_variance_path",
    "kary_radices",
    "kary_variance_path",
]

LATTICE_BITS = 20  # coefficients live on 2^-20 Z: y = K d with K integer
_FLOAT_EXACT = 1 << 53  # integers below this are exact in float64, and so are their sums
_LIMB = 31  # int64 encoding splits |d| < 2^62 into two 31-bit limbs
DEFAULT_BLT_HORIZON = 1 << 12
DEFAULT_BLT_WINDOW = 2  # BLT window = 2 x the design horizon (docs/counters.md: the cost table)

# ---------------------------------------------------------------------------
# Coefficients
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def sqrt_coefficients(n: int) -> np.ndarray:
    """c_k, k < n, of C = S^(1/2): c_0 = 1, c_k = c_{k-1} (2k-1)/(2k) = binom(2k, k) / 4^k.

    Computed as a sequential product of correctly rounded IEEE quotients, so the
    result is the same on every IEEE-754 platform (the snapped lattice
    coefficients, hence the releases, do not depend on the machine).
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    k = np.arange(1, n, dtype=np.float64)
    out = np.concatenate([[1.0], np.cumprod((2 * k - 1) / (2 * k))])
    out.setflags(write=False)
    return out


def snap_coefficients(c: np.ndarray, bits: int = LATTICE_BITS) -> np.ndarray:
    """round(c_k 2^bits) as int64 (round half to even), cut after the last non-zero."""
    ci = np.rint(np.asarray(c, dtype=np.float64) * float(1 << bits)).astype(np.int64)
    nz = np.flatnonzero(ci)
    return ci[: nz[-1] + 1] if len(nz) else ci[:1]


def _conv(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    size = len(a) + len(b) - 1
    nfft = 1 << max(size - 1, 1).bit_length()
    return np.fft.irfft(np.fft.rfft(a, nfft) * np.fft.rfft(b, nfft), nfft)[:n]


def series_inverse(c: np.ndarray, n: int) -> np.ndarray:
    """The first n coefficients of 1 / c(x) (float64, Newton iteration with FFT
    products: h <- h (2 - c h) mod x^2m). Used only for post-processing weights."""
    c = np.asarray(c, dtype=np.float64)
    h = np.array([1.0 / c[0]])
    m = 1
    while m < n:
        m = min(2 * m, n)
        e = -_conv(c[:m], h, m)
        e[0] += 2.0
        h = _conv(h, e, m)
    return h[:n]


# ---------------------------------------------------------------------------
# BLT closed forms (Dvijotham et al. 2024, Lemmas 5.2-5.4; our derivation)
# ---------------------------------------------------------------------------


def blt_omega(theta, theta_hat) -> np.ndarray:
    """Output scales of the BLT C(x) = prod(1 - theta_hat_i x) / prod(1 - theta_i x)
    = 1 + sum_i omega_i x / (1 - theta_i x) (partial fractions); swap the arguments
    for C^-1."""
    theta = np.asarray(theta, dtype=np.float64)
    theta_hat = np.asarray(theta_hat, dtype=np.float64)
    num = np.prod(theta[:, None] - theta_hat[None, :], axis=1)
    diff = theta[:, None] - theta[None, :]
    np.fill_diagonal(diff, 1.0)
    return num / np.prod(diff, axis=1)


def blt_coefficients(theta, omega, n: int) -> np.ndarray:
    """c_0 = 1, c_k = sum_i omega_i theta_i^(k-1): sequential IEEE products and a
    fixed summation order, so the same on every IEEE-754 platform."""
    theta = np.asarray(theta, dtype=np.float64)
    omega = np.asarray(omega, dtype=np.float64)
    out = np.zeros(n, dtype=np.float64)
    out[0] = 1.0
    if n > 1:
        for th, om in zip(theta, omega):
            pw = np.cumprod(np.concatenate([[1.0], np.full(n - 2, th)]))
            out[1:] = out[1:] + om * pw
    return out


def _geo(x, n: int):
    """sum_{k<n} x^k for 0 < x < 1 (array)."""
    x = np.asarray(x, dtype=np.float64)
    return -np.expm1(n * np.log(x)) / (1.0 - x)


def blt_sensitivity_squared(theta, theta_hat) -> float:
    """sum_k c_k^2 over the whole (infinite) column: 1 + sum_ij w_i w_j / (1 - t_i t_j)."""
    theta = np.asarray(theta, dtype=np.float64)
    w = blt_omega(theta, theta_hat)
    return float(1.0 + np.sum(np.outer(w, w) / (1.0 - np.outer(theta, theta))))


def blt_max_error(theta, theta_hat, n: int) -> float:
    """max_{t <= n} ||row_t(S C^-1)||^2 = sum_{k<n} r_k^2 (rows grow with t), with
    r_k = A - sum_i a_i theta_hat_i^k, a_i = w^_i / (1 - theta_hat_i), A = 1 + sum a_i."""
    th = np.asarray(theta_hat, dtype=np.float64)
    a = blt_omega(th, theta) / (1.0 - th)
    big_a = 1.0 + a.sum()
    return float(
        n * big_a * big_a - 2 * big_a * np.sum(a * _geo(th, n)) + np.sum(np.outer(a, a) * _geo(np.outer(th, th), n))
    )


def _blt_log_loss(p: np.ndarray, n: int) -> float:
    b = len(p) // 2
    theta, theta_hat = np.exp(-np.exp(p[:b])), np.exp(-np.exp(p[b:]))
    if not (np.all((theta > 0) & (theta < 1)) and np.all((theta_hat > 0) & (theta_hat < 1))):
        return 1e30
    gaps = np.abs(np.subtract.outer(theta, theta)) + np.eye(b)
    if gaps.min() < 1e-12:
        return 1e30
    w = blt_omega(theta, theta_hat)
    if np.any(w <= 0) or w.sum() >= 1:  # decreasing positive coefficients with c_1 < 1
        return 1e30
    v = blt_sensitivity_squared(theta, theta_hat) * blt_max_error(theta, theta_hat, n)
    return math.log(v) if np.isfinite(v) and v > 0 else 1e30


def optimize_blt(n: int, buffers: int, restarts: int = 8) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """Offline: BLT poles (theta, theta_hat) minimising sens^2(inf) x max error(n).

    Needs scipy (a test/bench dependency, imported here only). Nelder-Mead then
    Powell from ``restarts`` interlaced starting points, parameters
    log(-log theta). Returns (theta, theta_hat, loss / s(n)^2): the ratio of the
    max variance to the square-root factorization's. :data:`BLT_TABLE` holds its
    output, so the counters never run it.
    """
    from scipy.optimize import minimize

    best = None
    for trial in range(restarts):
        om = np.logspace(np.log10(0.3 / n) + 0.2 * trial, np.log10(0.6), buffers)
        omh = np.minimum(om * (1.5 + 0.3 * trial), 0.999)
        p0 = np.concatenate([np.log(-np.log1p(-om)), np.log(-np.log1p(-omh))])
        if _blt_log_loss(p0, n) >= 1e29:
            continue
        opts = dict(maxiter=3000 * buffers, xatol=1e-9, fatol=1e-13, adaptive=True)
        r = minimize(_blt_log_loss, p0, args=(n,), method="Nelder-Mead", options=opts)
        r = minimize(
            _blt_log_loss, r.x, args=(n,), method="Powell", options=dict(maxiter=20000, xtol=1e-10, ftol=1e-14)
        )
        if best is None or r.fun < best.fun:
            best = r
    b = buffers
    theta, theta_hat = np.exp(-np.exp(best.x[:b])), np.exp(-np.exp(best.x[b:]))
    s = float(np.sum(sqrt_coefficients(n) ** 2))
    return tuple(map(float, theta)), tuple(map(float, theta_hat)), math.exp(best.fun) / (s * s)


# log2(n) -> (theta, theta_hat): optimize_blt(n, b) for b in 2..5, the fewest buffers
# within 0.2% of the best (produced offline; see docs/counters.md)
BLT_TABLE: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = {
    3: (  # 2 buffers, max variance 1.0307 x the square-root factorization's
        (0.7915251241352294, 0.00428014491820352),
        (0.28898982305419535, 1.29988131914467e-52),
    ),
    4: (  # 2 buffers, max variance 1.0274 x the square-root factorization's
        (0.8923652506900926, 0.1801377340558146),
        (0.5656024269046889, 1.3334227827357676e-37),
    ),
    5: (  # 2 buffers, max variance 1.0247 x the square-root factorization's
        (0.9450550011217845, 0.44391729111600775),
        (0.7542084796392461, 0.12739583102079094),
    ),
    6: (  # 3 buffers, max variance 1.0224 x the square-root factorization's
        (0.9722381690326639, 0.6670136476712011, 0.10513519417955565),
        (0.8687331561558752, 0.37150868284701594, 2.336828944394175e-53),
    ),
    7: (  # 3 buffers, max variance 1.0205 x the square-root factorization's
        (0.9860470466812237, 0.8166841962659159, 0.3390261086263655),
        (0.9321419491178392, 0.6098894388648322, 0.09692552665412442),
    ),
    8: (  # 3 buffers, max variance 1.0189 x the square-root factorization's
        (0.9929913977566619, 0.8995440894942318, 0.4999508478513396),
        (0.9650943562095557, 0.7566089251258115, 0.1704441478174889),
    ),
    9: (  # 3 buffers, max variance 1.0178 x the square-root factorization's
        (0.9964647040329082, 0.9429089784472592, 0.6076951926736672),
        (0.9817710858023412, 0.8405568342827869, 0.22942647441090708),
    ),
    10: (  # 3 buffers, max variance 1.0174 x the square-root factorization's
        (0.9982045687276079, 0.9664694053438633, 0.6878364618649535),
        (0.9902936456123441, 0.8923347128135646, 0.2829636739933769),
    ),
    11: (  # 4 buffers, max variance 1.0154 x the square-root factorization's
        (0.9991205341686984, 0.9865083912705152, 0.9089295348684064, 0.5354354066493712),
        (0.9955351635502983, 0.9636990101735698, 0.7834427366666852, 0.18930296356982795),
    ),
    12: (  # 4 buffers, max variance 1.0147 x the square-root factorization's
        (0.9995576242618913, 0.9926885764145691, 0.9401095814978567, 0.6064931854238333),
        (0.9977047133428698, 0.9785797372672709, 0.8389923987349419, 0.2290079411511487),
    ),
    13: (  # 4 buffers, max variance 1.0144 x the square-root factorization's
        (0.999776643228026, 0.995948473654715, 0.9597386956892839, 0.6656523151683242),
        (0.998805960291929, 0.9870230805742497, 0.8787894538507017, 0.267232353563346),
    ),
    14: (  # 4 buffers, max variance 1.0147 x the square-root factorization's
        (0.999886736866069, 0.997712403663528, 0.9725158225917664, 0.7155337825875016),
        (0.9993716050526944, 0.9919817663982202, 0.9079925310002268, 0.30432339738657416),
    ),
    15: (  # 5 buffers, max variance 1.0126 x the square-root factorization's
        (0.9999446975853369, 0.9990836350356039, 0.9923222940115003, 0.9398617952046034, 0.6061156791338825),
        (0.9997128676223067, 0.9972997707481226, 0.9783535971196049, 0.838718747801223, 0.22879954839683297),
    ),
    16: (  # 5 buffers, max variance 1.0124 x the square-root factorization's
        (0.9999721521645327, 0.9995054935530575, 0.9952171192124092, 0.9558389859533013, 0.6526878574014314),
        (0.9998521941636311, 0.9984421713999234, 0.9853842879433907, 0.8705648671451729, 0.25838900286115035),
    ),
    17: (  # 5 buffers, max variance 1.0125 x the square-root factorization's
        (0.9999859399410976, 0.9997296752883765, 0.9969788888268974, 0.9673250307261044, 0.6938178236947901),
        (0.9999233423812315, 0.9990877219218894, 0.9900206753447556, 0.8957671736732238, 0.2875496431286579),
    ),
    18: (  # 5 buffers, max variance 1.0131 x the square-root factorization's
        (0.9999928809049491, 0.9998505533234988, 0.9980708283664214, 0.9756786507618324, 0.7301720285826289),
        (0.9999599549370486, 0.9994592435360159, 0.993126574898753, 0.91583508313777, 0.3162655629128483),
    ),
    19: (  # 5 buffers, max variance 1.0141 x the square-root factorization's
        (0.9999963845796666, 0.9999165693509603, 0.9987572358248563, 0.9818076752576009, 0.762300966376259),
        (0.9999789383078366, 0.999676249197859, 0.9952322903871444, 0.9318857982084559, 0.34449776013034467),
    ),
    20: (  # 5 buffers, max variance 1.0156 x the square-root factorization's
        (0.9999981582975729, 0.999953025429459, 0.9991935733257465, 0.9863357585522735, 0.79067914979069),
        (0.9999888519076534, 0.9998045409280856, 0.9966734468896001, 0.9447674217262407, 0.3721972821743033),
    ),
}


# ---------------------------------------------------------------------------
# Lattice Toeplitz tables (cached, recomputable from configuration)
# ---------------------------------------------------------------------------


class _Tables:
    """Config-derived arrays of one lattice Toeplitz matrix K (read-only, shared).

    cint: K's coefficients (int64, K_0 = 2^bits, non-increasing, > 0);
    crev_f / crev_i: reversed, float64 / int64; s1 = sum cint (column L1 norm);
    n2 = sum cint^2 (column L2 norm^2, exact Python int); b: coefficients of
    S K~^-1 (K~ = g K, float) for k < len(b); bsq[t-1] = sum_{k<t} b_k^2.
    """

    def __init__(self, cint: np.ndarray, precompute: int):
        cint = np.asarray(cint, dtype=np.int64)
        if cint[0] != 1 << LATTICE_BITS or np.any(cint <= 0) or np.any(np.diff(cint) > 0):
            raise AssertionError("lattice coefficients must be positive, non-increasing, with c_0 = 1")
        if len(cint) > 1 and not cint[1] < cint[0]:
            raise AssertionError("c_1 < c_0 is needed for a stable decoder (Enestrom-Kakeya)")
        self.cint = cint
        self.crev_i = cint[::-1].copy()
        self.crev_f = self.crev_i.astype(np.float64)
        self.s1 = int(sum(int(v) for v in cint))
        self.n2 = int(sum(int(v) * int(v) for v in cint))
        if self.s1 >= 1 << _LIMB:
            raise ValueError("the lattice coefficients sum to 2^31 or more: horizon too large for exact int64 encoding")
        h = series_inverse(cint.astype(np.float64) / float(1 << LATTICE_BITS), precompute)
        self.b = np.cumsum(h)
        self.bsq = np.cumsum(self.b * self.b)
        for a in (self.cint, self.crev_i, self.crev_f, self.b, self.bsq):
            a.setflags(write=False)

    @property
    def size(self) -> int:
        return len(self.cint)


@functools.lru_cache(maxsize=8)
def _sqrt_tables(horizon: int) -> _Tables:
    return _Tables(snap_coefficients(sqrt_coefficients(horizon)), horizon)


def _blt_params(log2n: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if log2n in BLT_TABLE:
        return BLT_TABLE[log2n]
    raise ValueError(
        f"no BLT parameters for design horizon 2^{log2n}; BLT_TABLE covers 2^{min(BLT_TABLE)}..2^{max(BLT_TABLE)}"
    )


@functools.lru_cache(maxsize=8)
def _blt_tables(log2n: int, window: int) -> _Tables:
    theta, theta_hat = _blt_params(log2n)
    n = 1 << log2n
    c = blt_coefficients(theta, blt_omega(theta, theta_hat), window * n)
    return _Tables(snap_coefficients(c), 2 * window * n)


# ---------------------------------------------------------------------------
# Exact sensitivities of a black box (in its own integer units)
# ---------------------------------------------------------------------------


def _unit_sensitivities(mech: StaticMechanism) -> tuple[Fraction, Fraction]:
    """(L1, L2^2) of one item's change of ``mech._answers_units``, exact (or
    rounded up)."""
    aq = getattr(mech, "_aq", None)
    if aq is not None:
        a = np.asarray(aq, dtype=object)
        l1 = max(sum(abs(int(v)) for v in a[:, j]) for j in range(a.shape[1]))
        l2sq = max(sum(int(v) * int(v) for v in a[:, j]) for j in range(a.shape[1]))
        return Fraction(l1), Fraction(l2sq)
    if type(mech) in (CountMechanism, HistogramMechanism):
        return Fraction(1), Fraction(1)
    return Fraction(mech.l1), Fraction(mech.l2) ** 2 * (1 + Fraction(1, 1 << 40))


def _grid_index(w: float) -> int:
    """The least j with 2^(j/16) >= w > 0."""
    j = math.ceil(16 * math.log2(w))
    while 2.0 ** (j / 16) < w:
        j += 1
    return j


def _dot(c: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The product c @ w, c (L,) and w (L, m), in row chunks of about 8192 numbers: each
    chunk stays below the size at which OpenBLAS goes multi-threaded (measured
    100x slower for (65536,) @ (65536, 1) on a busy 2-core machine). Integer
    inputs keep integer partial sums, so the chunking never changes an exact
    result; the chunk boundaries are fixed, so floats are reproducible."""
    rows = max(64, 8192 // max(1, w.shape[1]))
    if len(c) <= rows:
        return c @ w
    out = c[:rows] @ w[:rows]
    for a in range(rows, len(c), rows):
        out = out + c[a : a + rows] @ w[a : a + rows]
    return out


# ---------------------------------------------------------------------------
# A growing row window (most recent rows last)
# ---------------------------------------------------------------------------


@state_class("counter.lattice_window")
class _RowWindow:
    """The last ``keep`` rows pushed: a (capacity, m) array that grows by doubling up
    to ``limit`` rows (``keep`` for a finite horizon, 2 keep for an unbounded
    stream, which then shifts the last keep - 1 rows to the front when full)."""

    def __init__(self, keep: int, m: int, dtype, limit: int):
        self.keep = int(keep)
        self.limit = max(int(limit), self.keep)
        self.arr = np.zeros((min(16, self.limit), m), dtype=dtype)
        self.n = 0

    def push(self, row) -> None:
        if self.n == len(self.arr):
            if len(self.arr) < self.limit:
                grown = np.zeros((min(2 * len(self.arr), self.limit), self.arr.shape[1]), dtype=self.arr.dtype)
                grown[: self.n] = self.arr[: self.n]
                self.arr = grown
            else:
                k = self.keep - 1
                self.arr[:k] = self.arr[self.n - k : self.n]
                self.n = k
        self.arr[self.n] = row
        self.n += 1

    def last(self, count: int) -> np.ndarray:
        return self.arr[self.n - count : self.n]

    def astype(self, dtype) -> None:
        self.arr = self.arr.astype(dtype)


# ---------------------------------------------------------------------------
# Lattice Toeplitz counters
# ---------------------------------------------------------------------------


class _LatticeToeplitzCounter(ContinualCounter):
    """y_t = sum_k K_k d_{t-k} computed exactly, noise in lattice units, answers
    decoded as S K^-1 (y + z) (see the module docstring and docs/counters.md).

    Subclasses set ``name``, ``horizon`` (None: unbounded) and ``_tables()``.
    """

    _STATE_EXCLUDE = ("_tab",)
    approx_calibrations = ("zcdp", "tight")

    def __init__(self, mechanism, budget, *, coords=(), scope=None, approx_calibration: str = "zcdp"):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if not mechanism.additive or not hasattr(mechanism, "_answers_units"):
            raise ValueError(f"{self.name} needs an additive (Laplace/Gaussian) black box, not {mechanism.name}")
        if approx_calibration not in self.approx_calibrations:
            raise ValueError(
                f"approx_calibration must be one of {self.approx_calibrations}, got {approx_calibration!r}"
            )
        self.approx_calibration = approx_calibration
        self.noise_kind = mechanism.noise_kind
        self.m = int(mechanism.num_queries)
        self.unit = float(mechanism.unit)
        self._tab = self._tables()
        self.window = self._tab.size
        # steps of noise drawn at once (public configuration: the horizon and the
        # query count); never more than the horizon, so that a short-lived counter
        # (a fully-dynamic node's) draws only the noise it can use
        self.block = max(1, min(256, 4096 // self.m, self.horizon or 256))
        self._param_num, self._param_den = self._calibrate()
        self._scope = self.scope.child(self.name, Scope.SEQUENTIAL)
        self._float_mode = True  # window in float64 while s1 * max|d| < 2^53, else int64 limbs
        self._dmax = 0
        limit = self.window if self.horizon is not None else 2 * self.window
        self._d = _RowWindow(self.window, self.m, np.float64, limit)
        self._x = _RowWindow(self.window, self.m, np.float64, limit)  # decoded K^-1 (y + z), mechanism units
        self._acc = np.zeros(self.m)  # running sum of the decoded increments
        self._noise = np.zeros((0, self.m), dtype=np.int64)  # drawn, not yet used (current block)
        self._bsq = 0.0  # sum_{k<t} b_k^2 (kept past the precomputed table)
        self._bwin: _RowWindow | None = None  # last b_k past the table (unbounded counters)
        self._lap_buckets: dict[int, int] = {}  # Laplace: count of |b_k|, k < t, per grid point 2^(j/16)

    # -- configuration ---------------------------------------------------------
    def _tables(self) -> _Tables:
        raise NotImplementedError

    def _after_restore(self) -> None:
        self._tab = self._tables()

    def __getstate__(self):
        state = dict(self.__dict__)
        for name in self._STATE_EXCLUDE:
            state.pop(name, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._after_restore()

    def _calibrate(self) -> tuple[int, int]:
        """The noise parameter (discrete Gaussian sigma^2 or discrete Laplace scale,
        lattice units), exact, rounded up: sigma^2 = Delta_2^2 / (2 rho) with
        Delta_2^2 = n2 * l2^2 the exact squared column norm; scale = s1 * l1 / eps."""
        l1, l2sq = _unit_sensitivities(self.mechanism)
        b = self.budget
        if self.noise_kind == LAPLACE:
            eps = b.epsilon
            if not eps > 0:
                raise ValueError("epsilon must be > 0 to release")
            p = as_ratio_up(Fraction(self._tab.s1) * l1 / Fraction(eps))
        else:
            rho, tau2 = b.gaussian_calibration(self.approx_calibration)
            extra = Fraction(tau2)
            if not rho > 0:
                raise ValueError("rho must be > 0 to release")
            p = as_ratio_up(Fraction(self._tab.n2) * l2sq / (2 * Fraction(rho)) + extra)
        return p.numerator, p.denominator

    @property
    def noise_param(self) -> Fraction:
        """sigma^2 (Gaussian) or scale (Laplace) of the noise, lattice units."""
        return Fraction(self._param_num, self._param_den)

    # -- stepping ---------------------------------------------------------------
    def _check_horizon(self) -> None:
        if self.horizon is not None and self.t >= self.horizon:
            raise BudgetExceededError(f"{self.name} counter reached its horizon {self.horizon}")

    def _draw(self, noise: NoiseSource) -> np.ndarray:
        if not len(self._noise):
            j = (self.t - 1) // self.block
            stream = noise.stream(*self.coords, self.name, "noise", j)
            size = self.block * self.m
            if self.noise_kind == LAPLACE:
                z = discrete_laplace(stream, self.noise_param, size)
            else:
                z = discrete_gaussian(stream, self.noise_param, size)
            self._noise = z.reshape(self.block, self.m)
        z, self._noise = self._noise[0], self._noise[1:]
        return z

    def _encode(self, d: np.ndarray) -> list[int] | np.ndarray:
        """y_t = sum_{k<L} K_k d_{t-k}, exact (float64 while every partial sum is an
        integer below 2^53, else two int64 limbs recombined as Python ints)."""
        tab, L = self._tab, min(self.t, self.window)
        dmax = int(np.max(np.abs(d))) if len(d) else 0
        if dmax >= 1 << 62:
            raise ValueError("a batch answer of 2^62 or more cannot be encoded exactly")
        self._dmax = max(self._dmax, dmax)
        if self._float_mode and tab.s1 * self._dmax >= _FLOAT_EXACT:
            self._float_mode = False
            self._d.astype(np.int64)
        self._d.push(d)
        win = self._d.last(L)
        if self._float_mode:
            return _dot(tab.crev_f[self.window - L :], win)  # exact: every partial sum < 2^53
        c = tab.crev_i[self.window - L :]
        hi = win >> _LIMB  # floor division: d = hi 2^31 + lo, 0 <= lo < 2^31, |hi| < 2^31
        lo = win - (hi << _LIMB)
        yh, yl = _dot(c, hi), _dot(c, lo)  # each |.| < s1 2^31 < 2^62: no int64 overflow
        return [(int(a) << _LIMB) + int(b) for a, b in zip(yh, yl)]

    def step(self, batch, noise: NoiseSource) -> np.ndarray:
        """Consume the batch of timestamp t+1 and return the estimate at t+1."""
        self._check_horizon()
        if self.t == 0:
            self._scope.charge(self.budget, self.coords + (self.name,))
        self.t += 1
        self.noiseless = noise.is_disabled
        d = np.asarray(self.mechanism._answers_units(self._batch(batch)), dtype=np.int64)
        y = self._encode(d)
        z = self._draw(noise)
        if self._float_mode:
            yhat = y + z.astype(np.float64)  # post-processing from here on: floats are harmless
        else:
            yhat = np.array([float(a + int(b)) for a, b in zip(y, z)])
        if self.release_log is not None:
            cost = self.budget if self.t == 1 else self.budget.scale(0.0)
            g = self.unit / float(1 << LATTICE_BITS)
            self.release_log.append((self.coords + (self.name, "step", self.t), cost, yhat * g))
        self._decode(yhat)
        self._advance_weights()
        self.estimate = self._acc * self.unit
        return self.estimate

    def _decode(self, yhat: np.ndarray) -> None:
        """x_t = (yhat_t - sum_{k>=1} K_k x_{t-k}) / K_0: forward substitution.
        Noise off, x_t = d_t exactly (the same integer bound as the encoder)."""
        tab, L = self._tab, min(self.t, self.window)
        s = _dot(tab.crev_f[self.window - L : self.window - 1], self._x.last(L - 1)) if L > 1 else 0.0
        x = (yhat - s) / float(1 << LATTICE_BITS)
        self._x.push(x)
        self._acc = self._acc + x

    def _advance_weights(self) -> None:
        """b_{t-1}, the newest weight of row t of S K~^-1: from the table, or
        (unbounded counters past it) by the recurrence b_k = 1 - sum_{j>=1} K~_j b_{k-j};
        keeps sum_{k<t} b_k^2 and, for Laplace noise, the bucket counts."""
        tab, k = self._tab, self.t - 1
        if k < len(tab.b):
            bk = float(tab.b[k])
            self._bsq = float(tab.bsq[k])
        else:
            if self._bwin is None:
                self._bwin = _RowWindow(self.window, 1, np.float64, 2 * self.window)
                for v in tab.b[len(tab.b) - self.window :]:
                    self._bwin.push([v])
            L = self.window
            s = float(_dot(tab.crev_f[: L - 1], self._bwin.last(L - 1))[0]) / float(1 << LATTICE_BITS)
            bk = 1.0 - s
            self._bwin.push([bk])
            self._bsq += bk * bk
        if self.noise_kind == LAPLACE and bk != 0:
            j = _grid_index(abs(bk))
            self._lap_buckets[j] = self._lap_buckets.get(j, 0) + 1

    # -- error -------------------------------------------------------------------
    def _row_norm_sq(self) -> float:
        """||row_t(S K~^-1)||^2 = sum_{k<t} b_k^2."""
        return self._bsq

    def noise_profile(self) -> NoiseProfile:
        """Law of each answer's noise: g unit sum_k b_k z_{t-k} (Gaussian terms
        collapsed into one term of weight g unit ||b||)."""
        if self.t == 0:
            return NoiseProfile.zero()
        g = self.unit / float(1 << LATTICE_BITS)
        p = float(self.noise_param)
        if self.noise_kind == GAUSSIAN:
            return NoiseProfile.single(GAUSSIAN, p, g * math.sqrt(self._row_norm_sq()))
        # |w| rounded UP to the grid 2^(j/16): the MGF of a symmetric variable grows
        # with |w|, so every Chernoff bound of the rounded sum bounds the true sum
        return NoiseProfile({(LAPLACE, p, g * 2.0 ** (j / 16)): c for j, c in self._lap_buckets.items()})

    def variance(self) -> float:
        """Exact variance of each answer (discrete Gaussian: its upper bound sigma^2)."""
        if self.t == 0:
            return 0.0
        g = self.unit / float(1 << LATTICE_BITS)
        p = float(self.noise_param)
        per = p if self.noise_kind == GAUSSIAN else discrete_laplace_variance(p)
        return g * g * per * self._row_norm_sq()

    def error_bound(self, beta: float, n: float | None = None) -> float:
        """gamma(t, beta), simultaneously over the m answers (union bound); 0 with noise off."""
        if self.t == 0 or self.noiseless:
            return 0.0
        return self.noise_profile().tail_bound(beta / self.m)


@state_class("counter.sqrt_factorization")
class SqrtFactorizationCounter(_LatticeToeplitzCounter):
    """The square-root factorization over a declared horizon T, exact lattice noise.

    Privacy (update level): one Gaussian (Laplace) mechanism over the whole
    stream, charged once, before the first noise is drawn. Max per-step variance
    under rho = 1 (count): 5.355 at T = 2^10, 10.56 at 2^16 (docs/counters.md).
    Memory and work per step O(t m).
    """

    name = "sqrt_factorization"
    needs_horizon = True

    def __init__(self, mechanism, budget, *, horizon: int, coords=(), scope=None, approx_calibration: str = "zcdp"):
        if not horizon or int(horizon) < 1:
            raise ValueError("sqrt_factorization needs a horizon >= 1")
        self.horizon = int(horizon)
        super().__init__(mechanism, budget, coords=coords, scope=scope, approx_calibration=approx_calibration)

    def _tables(self) -> _Tables:
        return _sqrt_tables(self.horizon)


@state_class("counter.blt")
class BLTCounter(_LatticeToeplitzCounter):
    """BLT coefficients for a design horizon, exact lattice noise, unbounded stream.

    The design horizon is ``horizon`` rounded up to a power of two (at least 8;
    default 2^12); the coefficients are those of the optimised BLT in
    :data:`BLT_TABLE`, snapped to the lattice and cut after ``window`` x n
    terms. Privacy holds for ever (finite-support Toeplitz: every column has the
    same exact norm); the variance grows past the design horizon. Memory and
    work per step O(window n m).
    """

    name = "blt"
    needs_horizon = False

    def __init__(
        self,
        mechanism,
        budget,
        *,
        horizon: int | None = None,
        window: int = DEFAULT_BLT_WINDOW,
        coords=(),
        scope=None,
        approx_calibration: str = "zcdp",
    ):
        n = int(horizon) if horizon else DEFAULT_BLT_HORIZON
        self.log2n = max(3, (n - 1).bit_length())
        self.design_horizon = 1 << self.log2n
        if int(window) < 1:
            raise ValueError("the BLT window is a positive multiple of the design horizon")
        self.window_factor = int(window)
        self.horizon = None
        super().__init__(mechanism, budget, coords=coords, scope=scope, approx_calibration=approx_calibration)

    def _tables(self) -> _Tables:
        return _blt_tables(self.log2n, self.window_factor)


def toeplitz_variance_path(name: str, horizon: int, steps: int | None = None, rho: float = 1.0) -> np.ndarray:
    """Analytic per-step variance of ``sqrt_factorization`` / ``blt`` (count, zCDP
    rho, exact lattice coefficients and the rounded-up sigma^2), t = 1..steps."""
    tab = _sqrt_tables(horizon) if name == "sqrt_factorization" else _blt_tables(max(3, (horizon - 1).bit_length()), 2)
    steps = steps or horizon
    sigma2 = float(as_ratio_up(Fraction(tab.n2) / (2 * Fraction(rho))))
    g2 = 2.0 ** (-2 * LATTICE_BITS)
    if steps <= len(tab.bsq):
        return sigma2 * g2 * np.asarray(tab.bsq[:steps])
    h = series_inverse(tab.cint.astype(np.float64) / float(1 << LATTICE_BITS), steps)
    b = np.cumsum(h)
    return sigma2 * g2 * np.cumsum(b * b)


# ---------------------------------------------------------------------------
# k-ary tree (pure DP)
# ---------------------------------------------------------------------------


def _digit_total(horizon: int, size: int, radix: int | None) -> int:
    """sum_{t=1}^{T} ((t // size) mod radix) (radix None: no mod, the top level)."""
    q, rem = divmod(horizon, size)
    if radix is None:
        return size * q * (q - 1) // 2 + (rem + 1) * q
    full, part = divmod(q, radix)
    inner = full * radix * (radix - 1) // 2 + part * (part - 1) // 2
    return size * inner + (rem + 1) * (q % radix)


def _kary_level_variances(radices: tuple[int, ...], s2: float) -> list[float]:
    v = [s2]
    for r in radices:
        v.append(1.0 / (1.0 / s2 + 1.0 / (r * v[-1])))
    return v


@functools.lru_cache(maxsize=64)
def kary_radices(horizon: int, exponent: int = 2) -> tuple[int, ...]:
    """Radices (r_0, ..., r_{h-2}) of the tree with the least mean per-step variance
    over t = 1..T under Honaker's estimate; level j nodes cover prod_{i<j} r_i
    timestamps, the top level has T // prod r_i nodes. ``exponent``: a node's
    variance grows as levels^exponent (2: Laplace, eps / levels per node;
    1: Gaussian, rho / levels). Searched over the radix sequences of values k
    and k + 1 (both orders), T^(1/levels) - 1 <= k <= T^(1/(levels-1)) + 1, for
    every number of levels; the mean is exact (closed-form digit sums). The least
    over that family, not over every radix sequence: a search over all sequences
    of values within [T^(1/levels) - 2, T^(1/levels) + 3] found lower means, by at
    most 0.52% (T = 27, 256, 512, 729, 1024, 4096, 2^16; measured 2026-11-23)."""
    if horizon < 1:
        raise ValueError("horizon must be >= 1")
    best, best_radices = float("inf"), ()
    for levels in range(1, max(2, horizon.bit_length()) + 1):
        if levels == 1:
            cands = {()}
        else:
            # the top level's node count T // prod(r) acts as a last radix: balanced
            # trees have radices near T^(1/levels)
            k_lo = max(2, int(horizon ** (1.0 / levels)) - 1)
            k_hi = max(k_lo, int(horizon ** (1.0 / (levels - 1)) + 1e-9) + 1)
            cands = set()
            for k in range(k_lo, min(k_hi, 4 * k_lo + 4) + 1):
                for n_up in range(levels):
                    seq = [k + 1] * n_up + [k] * (levels - 1 - n_up)
                    if math.prod(seq) <= horizon:
                        cands.update({tuple(seq), tuple(reversed(seq))})
        for rad in sorted(cands):
            v = _kary_level_variances(rad, float(levels**exponent))
            sizes = [math.prod(rad[:j]) for j in range(levels)]
            total = sum(
                v[j] * _digit_total(horizon, sizes[j], rad[j] if j < levels - 1 else None) for j in range(levels)
            )
            if total < best * (1 - 1e-12):
                best, best_radices = total, rad
    return best_radices


def kary_variance_path(horizon: int, radices: tuple[int, ...], s2: float) -> np.ndarray:
    """Per-step variance of the Honaker k-ary tree, t = 1..T, node variance s2."""
    levels = len(radices) + 1
    v = _kary_level_variances(radices, s2)
    t = np.arange(1, horizon + 1)
    out = np.zeros(horizon)
    size = 1
    for j in range(levels):
        digits = t // size if j == levels - 1 else (t // size) % radices[j]
        out += digits * v[j]
        if j < levels - 1:
            size *= radices[j]
    return out


@state_class("counter.kary_tree")
class KaryTreeCounter(ContinualCounter):
    """Mixed-radix k-ary tree over a horizon T with Honaker's bottom-up estimate.

    Each timestamp lies in exactly one node per level (h levels), so every node
    is released with budget / h (parallel within a level, sequential across
    levels), like the binary tree; a prefix is the sum of the completed nodes
    since the last completed parent, sum_j digit_j(t) nodes. Honaker's
    estimate of a node combines its release y and its children's estimates,
    z = w_y y + w_c sum(children), inverse-variance weights: the best linear
    unbiased estimate of the node from its subtree, hence of every prefix from
    the releases so far. Needs an additive black box for Honaker (else plain
    sums).
    """

    name = "kary_tree"
    needs_horizon = True

    def __init__(
        self, mechanism, budget, *, horizon: int, coords=(), scope=None, radices: tuple[int, ...] | None = None
    ):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if not horizon or int(horizon) < 1:
            raise ValueError("kary_tree needs a horizon >= 1")
        self.horizon = int(horizon)
        exponent = 2 if mechanism.noise_kind == LAPLACE else 1
        self.radices = tuple(int(r) for r in (radices if radices is not None else kary_radices(self.horizon, exponent)))
        if any(r < 2 for r in self.radices) or math.prod(self.radices) > self.horizon:
            raise ValueError(f"radices must be >= 2 with a product <= the horizon, got {self.radices}")
        self.levels = len(self.radices) + 1
        self.sizes = [math.prod(self.radices[:j]) for j in range(self.levels)]
        self.honaker = bool(mechanism.additive)
        self.node_budget = budget.scale(1.0 / self.levels)
        self._scope = self.scope.child(self.name, Scope.SEQUENTIAL)
        self._level_scopes = [self._scope.child(f"level{j}", Scope.PARALLEL) for j in range(self.levels)]
        d = mechanism.domain_size
        self._acc = np.zeros((self.levels, d), dtype=np.int64)  # exact open node per level
        self._sums = np.zeros((self.levels, mechanism.num_queries))  # completed nodes since the parent's last
        self._digits = [0] * self.levels
        self._weights, self._level_profiles = self._honaker_weights() if self.honaker else ([], [])

    def _honaker_weights(self):
        base = self.mechanism.noise_profile(self.node_budget)
        s2 = base.variance()
        v = _kary_level_variances(self.radices, s2)
        weights, profiles = [(1.0, 0.0)], [base]
        for j in range(1, self.levels):
            r = self.radices[j - 1]
            wy, wc = v[j] / s2, v[j] / (r * v[j - 1])
            weights.append((wy, wc))
            profiles.append(base.scaled(wy) + profiles[-1].times(r).scaled(wc))
        return weights, profiles

    def step(self, batch, noise: NoiseSource) -> np.ndarray:
        """Consume the batch of timestamp t+1 and return the estimate at t+1."""
        if self.t >= self.horizon:
            raise BudgetExceededError(f"{self.name} counter reached its horizon {self.horizon}")
        self.t += 1
        t = self.t
        self._acc += self._batch(batch)
        for j in range(self.levels):
            if t % self.sizes[j]:
                break
            y = self._release(
                self._acc[j], self.node_budget, self._level_scopes[j], noise, "node", j, t // self.sizes[j]
            )
            self._acc[j] = 0
            if j and self.honaker:
                wy, wc = self._weights[j]
                z = wy * y + wc * self._sums[j - 1]
            else:
                z = y
            if j:
                self._sums[j - 1] = 0
                self._digits[j - 1] = 0
            self._sums[j] = self._sums[j] + z
            self._digits[j] += 1
        self.noiseless = noise.is_disabled
        self.estimate = self._sums.sum(axis=0)
        self._terms = [(self.node_budget, sum(self._digits), 1.0)] if sum(self._digits) else []
        return self.estimate

    def noise_profile(self) -> NoiseProfile:
        if not self.honaker:
            return super().noise_profile()
        return NoiseProfile.sum(self._level_profiles[j].times(a) for j, a in enumerate(self._digits) if a)

    def error_bound(self, beta: float, n: float | None = None) -> float:
        if self.t == 0 or self.noiseless or not any(self._digits):
            return 0.0
        return super().error_bound(beta, n)
