"""``anytime_sqrt``: a counter with no horizon whose variance stays near the square root's
designed for the current length, with exact lattice noise (``docs/counters.md``,
"Anytime square root").

The infinite square root S = C C (c_k = binom(2k, k) / 4^k) is not private for ever: its
column norm^2 sum_k c_k^2 ~ ln(t) / pi grows without bound. Damping its coefficients by a
slowly decreasing factor,

    e_k = c_k h(k),   h(k)^2 = (1 + A ln(1 + k / K0))^-(1 + EPS),

gives a lower-triangular Toeplitz encoder E whose (infinite) column is square-summable: its
tail is at most sum_{k >= N} h(k)^2 / (pi k) <= (1 + A ln((N - 1) / K0))^-EPS / (pi A EPS) for
N - 1 >= K0 (c_k^2 <= 1 / (pi k); a decreasing function's sum below its integral from N - 1;
ln(1 + x/K0) >= ln(x/K0); substitute v = ln(x / K0)); :func:`anytime_tail_bound`. The decoder
S E^-1 is post-processing; its row norms grow a little faster than the square root's. With the
constants below the variance at t = 2^10 .. 2^24 is within 1.57x of the square root designed for
horizon t (``docs/counters.md``; no horizon is declared: the counter is the same at every t).

Exactness: K_k = floor(e_k 2^20) (floor, not round: then K_k <= e_k 2^20 everywhere and the tail
bound holds for the integers), made non-increasing; K_0 = 2^20. The encoder, noise and decoder
are the lattice Toeplitz counters' (``lattice.py``) with a window that doubles with t (every
past step stays in it: the coefficients vanish only near k = 2^40). Every column of the
infinite Toeplitz matrix has the same norm; a finite run's columns are its prefixes. The
sensitivity n2 is the exact integer sum of K_k^2 over k < EXACT_TERMS plus the tail bound
times 2^40, rounded up (:func:`anytime_sensitivity_sq`): fixed before the first step, the same
for ever.

Memory and work: O(t m) numbers and O(t m) work per step (as ``sqrt_factorization`` at
horizon t), plus an FFT of length 2t at each doubling (the decoder weights). The exact int64
encoder needs sum_k K_k < 2^31: at most MAX_STEPS = 2^21 steps (4 years of one-minute periods),
then it refuses, like a horizon.

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
from transforms.core.foundation.accounting import BudgetExceededError
from transforms.core.foundation.bounds import GAUSSIAN
from transforms.core.foundation.noise import as_ratio_up
from transforms.core.foundation.state import state_class

__all__ = [
    "A",
    "K0",
    "EPS",
    "EXACT_TERMS",
    "MAX_STEPS",
    "AnytimeSqrtCounter",
    "anytime_coefficients",
    "anytime_sensitivity_sq",
    "anytime_tables",
    "anytime_tail_bound",
    "anytime_variance_path",
]

# the damping h(k)^2 = (1 + A ln(1 + k / K0))^-(1 + EPS): balanced by Nelder-Mead over the ratio to
# the square root at t = 2^10, 2^14, 2^18, 2^22, then checked at 2^24 (docs/counters.md)
A, K0, EPS = 0.9, 250_000.0, 0.72
EXACT_TERMS = 1 << 21  # the column summed exactly below this, bounded above it
MAX_STEPS = 1 << 21  # sum_{k < 2^21} K_k < 2^31 (the exact int64 encoder)
_FIRST_CAP = 256
_BLOCK = 4096  # the damping is evaluated in aligned blocks (the same floats for any table size)


@functools.lru_cache(maxsize=1024)
def _damping_block(i: int) -> np.ndarray:
    k = np.arange(i * _BLOCK, (i + 1) * _BLOCK, dtype=np.float64)
    return (1.0 + A * np.log1p(k / K0)) ** (-(1.0 + EPS) / 2)


def anytime_coefficients(n: int) -> np.ndarray:
    """K_k = floor(c_k h(k) 2^20), k < n (int64), made non-increasing; every prefix is the same
    whatever n (aligned blocks, a running minimum)."""
    h = np.concatenate([_damping_block(i) for i in range(-(-n // _BLOCK))])[:n]
    k = np.floor(sqrt_coefficients(n) * h * float(1 << LATTICE_BITS)).astype(np.int64)
    return np.minimum.accumulate(k)


def anytime_tail_bound(n: int) -> float:
    """An upper bound on sum_{k >= n} c_k^2 h(k)^2 (module docstring; ``docs/counters.md`` has the
    proof), n >= 2: the smaller of two integral bounds."""
    x = n - 1
    out = (1.0 + K0 / x) * (1.0 + A * math.log1p(x / K0)) ** (-EPS) / (math.pi * A * EPS)
    if x >= K0:  # h(x)^2 <= (1 + A ln(x / K0))^-(1+EPS) there: substitute v = ln(x / K0)
        out = min(out, (1.0 + A * math.log(x / K0)) ** (-EPS) / (math.pi * A * EPS))
    return out


@functools.lru_cache(maxsize=1)
def anytime_sensitivity_sq() -> int:
    """An integer upper bound on the squared norm of every column of the infinite encoder
    (lattice units): sum_{k < EXACT_TERMS} K_k^2 exactly, plus the tail bound times 2^40
    (K_k <= c_k h(k) 2^20), rounded up with a relative margin of 1e-9 for the floating-point
    evaluation of h (a few ulps)."""
    k = anytime_coefficients(EXACT_TERMS)
    assert int(k[0]) ** 2 * EXACT_TERMS < 1 << 63  # every partial sum of K_k^2 fits int64: exact (2^61)
    head = int(np.sum(k * k))
    tail = anytime_tail_bound(EXACT_TERMS) * (1.0 + 1e-9)
    return head + math.ceil(tail * float(1 << (2 * LATTICE_BITS)))


@functools.lru_cache(maxsize=4)
def anytime_tables(cap: int) -> LatticeTables:
    """The lattice tables of the first ``cap`` steps, with ``n2`` the infinite column's bound."""
    tab = LatticeTables(anytime_coefficients(cap), cap)
    tab.n2 = anytime_sensitivity_sq()
    return tab


@state_class("counter.anytime_sqrt")
class AnytimeSqrtCounter(BLTCounter):
    """No horizon, variance near the square root designed for the current length (module
    docstring), exact lattice noise, private for ever. Gaussian noise; under pure DP it is
    ``blt``. Memory O(t m), work per step O(t m), at most MAX_STEPS steps."""

    name = "anytime_sqrt"
    needs_horizon = False

    def __init__(self, mechanism, budget, *, horizon: int | None = None, coords=(), scope=None, **kw):
        self.cap = _FIRST_CAP
        super().__init__(mechanism, budget, horizon=horizon, coords=coords, scope=scope, **kw)

    @property
    def _gaussian(self) -> bool:
        return self.mechanism.noise_kind == GAUSSIAN

    def _tables(self):
        return anytime_tables(self.cap) if self._gaussian else super()._tables()

    def _grow(self) -> None:
        """Double the tables (and the row windows) before step cap + 1: every past row is kept."""
        if self.cap >= MAX_STEPS:
            raise BudgetExceededError(f"anytime_sqrt reached its exact-encoding limit of {MAX_STEPS} steps")
        self.cap *= 2
        self._tab = self._tables()
        self.window = self._tab.size
        for w in (self._d, self._x):
            w.keep, w.limit = self.window, 2 * self.window

    def step(self, batch, noise):
        if self._gaussian and self.t >= self.cap:
            self._grow()
        return super().step(batch, noise)


def anytime_variance_path(steps: int, rho: float = 1.0) -> np.ndarray:
    """Analytic per-step variance of ``anytime_sqrt`` (count, zCDP rho), t = 1..steps (<= MAX_STEPS)."""
    cap = max(_FIRST_CAP, 1 << (steps - 1).bit_length())
    tab = anytime_tables(cap)
    sigma2 = float(as_ratio_up(Fraction(tab.n2) / (2 * Fraction(rho))))
    return sigma2 * 2.0 ** (-2 * LATTICE_BITS) * np.asarray(tab.bsq[:steps])
