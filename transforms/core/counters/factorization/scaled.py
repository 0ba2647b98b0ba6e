"""``scaled_sqrt``: the square-root factorization with an optimised diagonal between
its factors, exact on the lattice (``docs/counters.md``, "Scaled square root").

The prefix-sum matrix is S = C C with C = S^(1/2) lower-triangular Toeplitz. For
any positive diagonal D, S = (C D^-1)(D C) too. The encoder E = D C is no longer
Toeplitz: its rows are scaled, so its column norms (the sensitivity) and the row
norms of the decoder C D^-1 (the variance) move against each other. With D = I
(the square root) the first column and the last row are the largest; a D that
grows slowly along the stream equalises them, and the max variance drops by
11% at T = 2^10 to 8% at 2^20 (the table in ``docs/counters.md``). The
diagonal is log d(u) = sum_i a_i cos(i pi u), u = k / (T - 1), with the 16
coefficients a_i optimised offline per T = 2^L (:func:`optimize_scaled`,
data in ``scaled_table.json``; between table entries linearly interpolated in
log2 T: any diagonal is private, the table only makes it good).

Exactness (as ``sqrt_factorization``): the Toeplitz part is the same snapped
integer matrix K (K_0 = 2^20); the diagonal is snapped to integers
s_k = round(d_k 2^SCALE_BITS) (max 2^SCALE_BITS), so the encoder is the integer
matrix diag(s) K and y_t = s_t (K d)_t is computed exactly. Its sensitivity is
the exact max column norm max_j sum_{m} s_{j+m}^2 K_m^2 (:func:`max_column_norm_sq`,
integer arithmetic). Discrete Gaussian noise in the lattice units of
diag(s) K; the answers are the post-processing S (diag(s) K)^-1 (y + z): divide
by s_t, then the square root's forward substitution. The variance of answer t is
sigma^2 g^2 sum_{k<t} b_{t-1-k}^2 / s_k^2 (b: the square root's decoder
coefficients, g = 2^-20): the decoder's row norm.

The diagonal is optimised for Gaussian noise (zCDP or (eps, delta)). Under pure DP
(Laplace noise) the diagonal is 1: the counter is ``sqrt_factorization`` itself
(the L1 column norms of a square-root factorization grow like sqrt(T) and
``kary_tree`` wins there; ``auto`` never picks this counter for pure DP).
Memory and work per step as ``sqrt_factorization``: O(T m) and O(t m); tables
O(T) (built once per horizon, cached: about 30 FFTs of length 2T).

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np

from transforms.core.counters.factorization.coefficients import LATTICE_BITS, snap_coefficients, sqrt_coefficients
from transforms.core.counters.factorization.lattice import LatticeTables, SqrtFactorizationCounter
from transforms.core.foundation.bounds import GAUSSIAN
from transforms.core.foundation.state import state_class

__all__ = [
    "SCALE_BITS",
    "scale_bits",
    "SCALED_TABLE",
    "SCALED_TABLE_FILE",
    "ScaledSqrtCounter",
    "ScaledTables",
    "scaled_diagonal",
    "scaled_tables",
    "max_column_norm_sq",
    "scaled_objective",
    "optimize_scaled",
    "polish_scaled",
    "lattice_max_variance",
    "scaled_variance_path",
]

SCALE_BITS = 10  # the most bits of the diagonal (scale_bits)


def scale_bits(horizon: int) -> int:
    """Bits of the diagonal s_k <= 2^b; the Toeplitz part gets the other 20 - b bits of the
    2^-20 lattice: 10 up to T = 2^12, 9 up to 2^16, 8 beyond (a finer diagonal against a finer
    square root; measured best of 7..10 at 2^10, 2^15, 2^20, docs/counters.md)."""
    return SCALE_BITS if horizon <= 1 << 12 else 9 if horizon <= 1 << 16 else 8


BASIS = 16  # cosine terms of log d
SCALED_TABLE_FILE = Path(__file__).resolve().parent / "scaled_table.json"


def _load_table() -> dict[int, tuple[float, ...]]:
    data = json.loads(SCALED_TABLE_FILE.read_text())["tables"]
    return {int(k): tuple(v["coef"]) for k, v in sorted(data.items(), key=lambda kv: int(kv[0]))}


# log2(T) -> the cosine coefficients a_1..a_16 of log d (optimize_scaled, offline)
SCALED_TABLE: dict[int, tuple[float, ...]] = _load_table()


def _basis(n: int) -> np.ndarray:
    u = np.arange(n, dtype=np.float64) / float(max(n - 1, 1))
    return np.stack([np.cos(i * np.pi * u) for i in range(1, BASIS + 1)], axis=1)


def _coefficients(horizon: int) -> np.ndarray:
    """The table's coefficients for ``horizon``: linear in log2 T between entries, clamped."""
    lo, hi = min(SCALED_TABLE), max(SCALED_TABLE)
    x = min(max(math.log2(max(horizon, 2)), lo), hi)
    a, b = math.floor(x), math.ceil(x)
    ca, cb = np.array(SCALED_TABLE[a]), np.array(SCALED_TABLE[b])
    return ca + (x - a) * (cb - ca) if b != a else ca


@functools.lru_cache(maxsize=8)
def scaled_diagonal(horizon: int) -> np.ndarray:
    """s_k = round(d_k 2^b), b = scale_bits(T), k < T, int64, with d normalised to max 1 (max s = 2^b).
    Fixed-order IEEE arithmetic (the same on every IEEE-754 platform)."""
    s = _diagonal(horizon, _coefficients(horizon))
    s.setflags(write=False)
    return s


def _diagonal(horizon: int, coef) -> np.ndarray:
    """s_k = round(d_k 2^b) for the cosine coefficients ``coef`` of log d (normalised to max 1)."""
    logd = _basis(horizon) @ np.asarray(coef, dtype=np.float64)
    logd = logd - logd.max()
    return np.rint(np.exp(logd) * float(1 << scale_bits(horizon))).astype(np.int64)


def _conv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    size = len(a) + len(b) - 1
    nfft = 1 << max(size - 1, 1).bit_length()
    return np.fft.irfft(np.fft.rfft(a, nfft) * np.fft.rfft(b, nfft), nfft)[:size]


_LIMB_BITS = 9


def _limbs(v: np.ndarray, count: int) -> list[np.ndarray]:
    mask = (1 << _LIMB_BITS) - 1
    return [((v >> (_LIMB_BITS * i)) & mask).astype(np.float64) for i in range(count)]


def max_column_norm_sq(s: np.ndarray, cint: np.ndarray) -> int:
    """max_j sum_{m < T-j} s_{j+m}^2 cint_m^2 (T = len(s)), exact (a Python int).

    s^2 < 2^27 and cint^2 < 2^45 are split into 9-bit limbs; each limb pair's
    correlation is an FFT convolution of non-negative integers below 2^9 whose exact
    result is below T 2^18 (< 2^40 for T < 2^22); the FFT's rounding error is then
    below 2^-5 (|err| <= ||x||_2 ||y||_2 * 3 log2(N) * 4u, u = 2^-53), so rounding
    recovers it exactly (checked: every value is within 1/4 of an integer). The
    limb sums give every column to a relative 2^-50 in float, the columns within
    2^-40 of the largest are recomputed in Python integers, and their max is returned.
    """
    T = len(s)
    s2 = np.asarray(s, dtype=np.int64) ** 2
    c2 = np.zeros(T, dtype=np.int64)
    c2[: min(T, len(cint))] = np.asarray(cint[:T], dtype=np.int64) ** 2
    if T >= 1 << 22 or s2.max() >= 1 << 27 or c2.max() >= 1 << 45:
        raise ValueError("max_column_norm_sq: out of its exact range")
    sl, cl = _limbs(s2[::-1].copy(), 3), _limbs(c2, 5)
    w = [np.zeros(T, dtype=np.int64) for _ in range(7)]
    for i, a in enumerate(sl):
        for j, b in enumerate(cl):
            r = _conv(a, b)[:T][::-1]  # r[j] = sum_m s2[j+m] c2[m] (limbs)
            ri = np.rint(r)
            if np.max(np.abs(r - ri)) > 0.25:
                raise AssertionError("FFT limb convolution not within 1/4 of an integer")
            w[i + j] += ri.astype(np.int64)
    approx = sum(w[e].astype(np.float64) * float(1 << (_LIMB_BITS * e)) for e in range(7))
    cand = np.flatnonzero(approx >= approx.max() * (1.0 - 2.0**-40))
    return max(sum(int(w[e][j]) << (_LIMB_BITS * e) for e in range(7)) for j in cand)


class ScaledTables(LatticeTables):
    """The lattice tables of diag(s) K' for horizon T.

    K' is the square root snapped to the coarser lattice 2^-(20 - shift), handed to the shared
    Toeplitz machinery as K = 2^shift K' (so K_0 = 2^20, as it requires); the encoder releases
    y_t = s_t (K d)_t / 2^shift, on the lattice 2^-20 of the whole product (s_k <= 2^shift):
    the noise keeps the square root's scale (the exact sampler's fast range). ``n2``: the exact
    max column norm^2 of diag(s) K'; ``rowsq[t-1]`` = 4^shift sum_{k<t} b_{t-1-k}^2 / s_k^2
    (the decoder's row norm^2 in the lattice units of the release, b: K's decoder weights).
    ``scaled=False`` (pure DP): shift 0, s = 1, the square root itself."""

    def __init__(self, horizon: int, scaled: bool = True):
        self.shift = scale_bits(horizon) if scaled else 0
        coarse = snap_coefficients(sqrt_coefficients(horizon), LATTICE_BITS - self.shift)
        super().__init__(coarse << self.shift, horizon)
        self.s = scaled_diagonal(horizon) if scaled else np.ones(horizon, dtype=np.int64)
        self.n2 = max_column_norm_sq(self.s, coarse) if scaled else self.n2
        self.s_f = self.s.astype(np.float64)
        self.smax = int(self.s.max())
        self.rowsq = _rowsq(self.b, self.s_f, self.shift, horizon)
        for arr in (self.s_f, self.rowsq):
            arr.setflags(write=False)


def _rowsq(b: np.ndarray, s_f: np.ndarray, shift: int, horizon: int) -> np.ndarray:
    """rowsq[t-1] = 4^shift sum_{k<t} b_{t-1-k}^2 / s_k^2 (one FFT), rounded up by 1e-9 (FFT slack)."""
    w = float(1 << (2 * shift)) / (s_f * s_f)
    row = _conv(np.asarray(b[:horizon]) ** 2, w)[:horizon]
    return np.maximum(row, 0.0) * (1.0 + 1e-9)


@functools.lru_cache(maxsize=8)
def scaled_tables(horizon: int, scaled: bool = True) -> ScaledTables:
    return ScaledTables(horizon, scaled)


def lattice_max_variance(horizon: int, coef=None, rho: float = 1.0) -> float:
    """The exact lattice figure of a diagonal: the max over t of the per-step variance (count, zCDP
    ``rho``) of ``scaled_sqrt`` at ``horizon`` whose log d has the cosine coefficients ``coef``
    (default: the table's for ``horizon``, when it equals ``scaled_variance_path(horizon, rho).max()``):
    the exact max column norm, sigma^2 rounded up, the decoder's row norms. What
    :func:`polish_scaled` minimises."""
    from fractions import Fraction

    from transforms.core.foundation.noise import as_ratio_up

    tab = scaled_tables(horizon)
    s = tab.s if coef is None else _diagonal(horizon, coef)
    n2 = max_column_norm_sq(s, tab.cint >> tab.shift)
    sigma2 = float(as_ratio_up(Fraction(n2) / (2 * Fraction(rho))))
    return sigma2 * 2.0 ** (-2 * LATTICE_BITS) * float(_rowsq(tab.b, s.astype(np.float64), tab.shift, horizon).max())


@state_class("counter.scaled_sqrt")
class ScaledSqrtCounter(SqrtFactorizationCounter):
    """The scaled square root over a declared horizon T, exact lattice noise (module docstring).

    Privacy (update level): one Gaussian mechanism over the whole stream, the integer
    query diag(s) K d with exact L2 sensitivity sqrt(n2) l2, charged once before the first
    noise is drawn. Max per-step variance under rho = 1 (count): 4.75 at T = 2^10,
    8.72 at 2^15 (docs/counters.md). Memory O(T m), work per step O(t m).
    """

    name = "scaled_sqrt"
    needs_horizon = True

    def _tables(self) -> ScaledTables:
        return scaled_tables(self.horizon, self.mechanism.noise_kind == GAUSSIAN)

    def _encode(self, d: np.ndarray):
        """y_t = s_t (K' d)_t, exact: the square root's exact encoder of K = 2^shift K', divided by
        2^shift and times the integer s_t <= 2^shift (no larger than K d: the encoder's float64 /
        int64 switch covers it)."""
        tab = self._tab
        y = super()._encode(d)  # K d = 2^shift K' d
        st = int(tab.s[self.t - 1])
        if self._float_mode:
            return y * (st / float(1 << tab.shift))  # exact: an integer below 2^53
        return [(int(v) >> tab.shift) * st for v in y]

    def _decode(self, yhat: np.ndarray) -> None:
        """Divide by s_t (post-processing), then the square root's forward substitution."""
        tab = self._tab
        # yhat / s_t then times 2^shift: with noise off both exact (y_t = s_t (K' d)_t)
        super()._decode(np.asarray(yhat, dtype=np.float64) / tab.s_f[self.t - 1] * float(1 << tab.shift))

    def _advance_weights(self) -> None:
        if self.noise_kind == GAUSSIAN:
            self._bsq = float(self._tab.rowsq[self.t - 1])
        else:  # the square root itself: its weights and Laplace buckets
            super()._advance_weights()


def scaled_variance_path(horizon: int, rho: float = 1.0) -> np.ndarray:
    """Analytic per-step variance of ``scaled_sqrt`` (count, zCDP rho, the exact lattice
    sensitivity and rounded-up sigma^2), t = 1..T."""
    from fractions import Fraction

    from transforms.core.foundation.noise import as_ratio_up

    tab = scaled_tables(horizon)
    sigma2 = float(as_ratio_up(Fraction(tab.n2) / (2 * Fraction(rho))))
    return sigma2 * 2.0 ** (-2 * LATTICE_BITS) * np.asarray(tab.rowsq)


# ---------------------------------------------------------------------------
# Offline: the optimiser that produced scaled_table.json (needs scipy)
# ---------------------------------------------------------------------------


def scaled_objective(logd: np.ndarray, c2: np.ndarray, p: float, r2: np.ndarray | None = None):
    """Smoothed log(max column norm^2 of D C) + log(max row norm^2 of C D^-1) (p-norms
    of the normalised norms, -> the max as p grows) and its gradient in log d. ``r2``: the
    squared decoder weights when the encoder's Toeplitz part is not C itself (default ``c2``:
    the decoder of C is C); ``c2`` may be shorter than ``logd`` (a snapped factor)."""
    n = len(logd)
    r2 = c2 if r2 is None else r2
    d2 = np.exp(2 * logd)
    col = _conv(d2[::-1], c2)[:n][::-1]
    row = _conv(1.0 / d2, r2)[:n]
    wc, wr = (col / col.max()) ** p, (row / row.max()) ** p
    val = math.log(col.max()) + math.log(wc.sum()) / p + math.log(row.max()) + math.log(wr.sum()) / p
    gc, gr = wc / wc.sum() / col, wr / wr.sum() / row
    gd2 = _conv(gc, c2)[:n]
    gi = _conv(gr[::-1], r2)[:n][::-1]
    return val, gd2 * 2 * d2 - gi * 2 / d2


def optimize_scaled(log2n: int, start=None) -> tuple[tuple[float, ...], float]:
    """Offline: the 16 cosine coefficients of log d minimising the max variance at
    T = 2^log2n (float factors, rho = 1), by L-BFGS on :func:`scaled_objective` with
    p = 20, 100, 1000, 10000 in turn. Returns (coefficients, max variance)."""
    from scipy.optimize import minimize

    n = 1 << log2n
    c2 = sqrt_coefficients(n) ** 2
    phi = _basis(n)
    a = np.zeros(BASIS) if start is None else np.asarray(start, dtype=np.float64)

    def f(a, p):
        v, g = scaled_objective(phi @ a, c2, p)
        return v, phi.T @ g

    for p in (20, 100, 1000, 10000):
        opts = dict(maxiter=5000, ftol=1e-15, gtol=1e-12, maxcor=30)
        a = minimize(f, a, args=(p,), jac=True, method="L-BFGS-B", options=opts).x
    d2 = np.exp(2 * (phi @ a))
    col, row = _conv(d2[::-1], c2)[:n], _conv(1.0 / d2, c2)[:n]
    return tuple(map(float, a)), float(col.max() * row.max() / 2)


def polish_scaled(log2n: int, start, evaluations: int = 15000, seed: int = 5) -> tuple[tuple[float, ...], float]:
    """Offline: the coefficients ``start`` (a table entry) re-optimised for the lattice the counter
    really runs at T = 2^log2n: L-BFGS on :func:`scaled_objective` with the snapped Toeplitz factor
    and its own decoder (p = 20, 100, 1000, 10000, 30000 in turn), then Nelder-Mead (initial
    simplices of 3e-3 .. 1e-4) and ``evaluations`` random sparse perturbations on the exact figure
    :func:`lattice_max_variance` (the rounding of s and the exact n2 make it piecewise constant: no
    gradient). Deterministic for a seed. Returns (coefficients, lattice max variance at rho = 1): ``start`` itself
    when nothing found is lower on the lattice.
    Row 10 of the table (issue 31)."""
    from scipy.optimize import minimize

    n = 1 << log2n
    tab = scaled_tables(n)
    k2 = ((tab.cint >> tab.shift).astype(np.float64) / float(1 << (LATTICE_BITS - tab.shift))) ** 2
    b2 = np.asarray(tab.b[:n], dtype=np.float64) ** 2  # the decoder of K / 2^20 (K_0 = 1)
    phi = _basis(n)

    def f(a, p):
        v, g = scaled_objective(phi @ a, k2, p, b2)
        return v, phi.T @ g

    a = np.asarray(start, dtype=np.float64)
    at_start = lattice_max_variance(n, a)
    for p in (20, 100, 1000, 10000, 30000):
        opts = dict(maxiter=5000, ftol=1e-15, gtol=1e-12, maxcor=30)
        a = minimize(f, a, args=(p,), jac=True, method="L-BFGS-B", options=opts).x
    rng = np.random.default_rng(seed)
    best = lattice_max_variance(n, a)
    for scale in (3e-3, 1e-3, 3e-4, 1e-4):
        simplex = np.vstack([a] + [a + scale * rng.standard_normal(BASIS) for _ in range(BASIS)])
        opts = dict(initial_simplex=simplex, maxfev=3000, xatol=1e-8, fatol=1e-8)
        r = minimize(lambda x: lattice_max_variance(n, x), a, method="Nelder-Mead", options=opts)
        if r.fun < best:
            best, a = float(r.fun), r.x.copy()
    for _ in range(evaluations):
        cand = a + 10 ** rng.uniform(-5, -2.5) * rng.standard_normal(BASIS) * (rng.random(BASIS) < 0.3)
        v = lattice_max_variance(n, cand)
        if v < best:
            best, a = v, cand
    if not best < at_start:  # the float model's optimum can sit on a worse lattice point (or on no counter at all:
        # a figure of NaN): never end above the start
        return tuple(map(float, start)), float(at_start)
    return tuple(map(float, a)), best
