"""The lattice Toeplitz counters: the square-root factorization and the BLT
with exact lattice noise (``docs/counters.md``).

* ``sqrt_factorization``: the square-root Toeplitz factorization S = C C for a
  declared horizon T, snapped to the dyadic lattice g Z (g = 2^-LATTICE_BITS).
  The encoder computes y = K d with K = C~ / g an *integer* Toeplitz matrix,
  exactly; discrete Gaussian (or discrete Laplace) noise is added in lattice
  units with its scale calibrated to the exact column L2 (L1) norm of K,
  computed in integer arithmetic; answers are the post-processing
  S K^{-1} (y + z), decoded by forward substitution. Refuses past T.
* ``blt``: the BLT coefficients of :data:`~.blt.BLT_TABLE` for a design
  horizon n, snapped to the lattice and cut to a window of ``window`` x n
  coefficients. Valid on unbounded streams: every column of a Toeplitz matrix
  with finite support has the same (exact) norm.

Neighbouring relation: as in :mod:`transforms.core.counters` (one item more in
one batch). Noise: discrete Gaussian / discrete Laplace only, from
``noise.stream(*coords, name, "noise", block)``; calibration (zCDP, or an
(eps, delta) budget by CKS or the tight analytic curve) in
:mod:`transforms.core.foundation.accounting`.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from transforms.core.counters.base import ContinualCounter
from transforms.core.counters.factorization.blt import blt_params
from transforms.core.counters.factorization.coefficients import (
    LATTICE_BITS,
    blt_coefficients,
    blt_omega,
    series_inverse,
    snap_coefficients,
    sqrt_coefficients,
)
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
    "LatticeTables",
    "sqrt_tables",
    "blt_tables",
    "unit_sensitivities",
    "grid_index",
    "toeplitz_variance_path",
    "DEFAULT_BLT_HORIZON",
    "DEFAULT_BLT_WINDOW",
]

_FLOAT_EXACT = 1 << 53  # integers below this are exact in float64, and so are their sums
_LIMB = 31  # int64 encoding splits |d| < 2^62 into two 31-bit limbs
DEFAULT_BLT_HORIZON = 1 << 12
DEFAULT_BLT_WINDOW = 2  # BLT window = 2 x the design horizon (docs/counters.md: the cost table)

# ---------------------------------------------------------------------------
# Lattice Toeplitz tables (cached, recomputable from configuration)
# ---------------------------------------------------------------------------


class LatticeTables:
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
        self.s1 = int(sum(int(v) for v in cint))
        self.n2 = int(sum(int(v) * int(v) for v in cint))
        if self.s1 >= 1 << _LIMB:
            raise ValueError("the lattice coefficients sum to 2^31 or more: horizon too large for exact int64 encoding")
        self.derive(cint, precompute)

    def derive(self, cint: np.ndarray, precompute: int) -> None:
        """The arrays every lattice table holds, from its int64 coefficients (checked by the caller): cint, its
        reversals, the decoder weights b of cint / 2^20 for k < precompute and their running squares; read-only."""
        self.cint = cint
        self.crev_i = cint[::-1].copy()
        self.crev_f = self.crev_i.astype(np.float64)
        self.b = np.cumsum(series_inverse(cint.astype(np.float64) / float(1 << LATTICE_BITS), precompute))
        self.bsq = np.cumsum(self.b * self.b)
        for a in (self.cint, self.crev_i, self.crev_f, self.b, self.bsq):
            a.setflags(write=False)

    @property
    def size(self) -> int:
        return len(self.cint)


@functools.lru_cache(maxsize=8)
def sqrt_tables(horizon: int) -> LatticeTables:
    return LatticeTables(snap_coefficients(sqrt_coefficients(horizon)), horizon)


@functools.lru_cache(maxsize=8)
def blt_tables(log2n: int, window: int) -> LatticeTables:
    theta, theta_hat = blt_params(log2n)
    n = 1 << log2n
    c = blt_coefficients(theta, blt_omega(theta, theta_hat), window * n)
    return LatticeTables(snap_coefficients(c), 2 * window * n)


def unit_sensitivities(mech: StaticMechanism) -> tuple[Fraction, Fraction]:
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


def grid_index(w: float) -> int:
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

    def restart(self, keep: int, limit: int) -> None:
        """Forget every row; keep the last ``keep`` rows from now on (a counter starting a new phase)."""
        self.keep = int(keep)
        self.limit = max(int(limit), self.keep)
        self.n = 0

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
    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        """The whole budget, once, for the whole stream (at its first step)."""
        if coords[-1] != cls.name:
            raise ValueError(f"{cls.name} charges once, at (..., {cls.name!r}); got {coords}")
        return budget

    def _tables(self) -> LatticeTables:
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
        l1, l2sq = unit_sensitivities(self.mechanism)
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
        tab, L = self._tab, min(self._pos(), self.window)
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

    def _pos(self) -> int:
        """The current step's position in the Toeplitz matrix: t (``anytime_sqrt``'s merged start counts
        its second phase from the merged item, ``anytime.py``)."""
        return self.t

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
        tab, L = self._tab, min(self._pos(), self.window)
        s = _dot(tab.crev_f[self.window - L : self.window - 1], self._x.last(L - 1)) if L > 1 else 0.0
        x = (yhat - s) / float(tab.cint[0])  # K_0 = 2^20 (a merged start's phase 1: its own K_0, anytime.py)
        self._x.push(x)
        self._acc = self._acc + x

    def _advance_weights(self) -> None:
        """b_{t-1}, the newest weight of row t of S K~^-1: from the table, or
        (unbounded counters past it) by the recurrence b_k = 1 - sum_{j>=1} K~_j b_{k-j};
        keeps sum_{k<t} b_k^2 and, for Laplace noise, the bucket counts."""
        tab, k = self._tab, self._pos() - 1
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
            j = grid_index(abs(bk))
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

    def _tables(self) -> LatticeTables:
        return sqrt_tables(self.horizon)


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

    def _tables(self) -> LatticeTables:
        return blt_tables(self.log2n, self.window_factor)


def toeplitz_variance_path(name: str, horizon: int, steps: int | None = None, rho: float = 1.0) -> np.ndarray:
    """Analytic per-step variance of ``sqrt_factorization`` / ``blt`` (count, zCDP
    rho, exact lattice coefficients and the rounded-up sigma^2), t = 1..steps."""
    tab = sqrt_tables(horizon) if name == "sqrt_factorization" else blt_tables(max(3, (horizon - 1).bit_length()), 2)
    steps = steps or horizon
    sigma2 = float(as_ratio_up(Fraction(tab.n2) / (2 * Fraction(rho))))
    g2 = 2.0 ** (-2 * LATTICE_BITS)
    if steps <= len(tab.bsq):
        return sigma2 * g2 * np.asarray(tab.bsq[:steps])
    h = series_inverse(tab.cint.astype(np.float64) / float(1 << LATTICE_BITS), steps)
    b = np.cumsum(h)
    return sigma2 * g2 * np.cumsum(b * b)
