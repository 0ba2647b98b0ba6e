"""The k-ary tree with negative digits (``kary_signed``; Andersson, Pagh, Steiner, Torkamani,
"Count on Your Elders", arXiv 2408.07021), exact integer noise.

Tree: h levels; level j < h-1 has nodes ((i-1) k^j, i k^j] (k odd), the top level nodes of
K = k^(h-1) steps. Each timestamp lies in exactly one node per level, so the vector R x of all
node sums has L1 sensitivity h (times the mechanism's unit sensitivity) and L2^2 sensitivity h:
one discrete Laplace (pure DP) or discrete Gaussian (zCDP) draw per node and answer, scale
h l1 / eps or sigma^2 = h l2^2 / (2 rho), charged once (the whole budget) at the first step.

Prefix: with m = (k-1)/2, C = (K-1)/2 and u = t + C, t = q K + sum_{j<h-1} d_j k^j where
q = u // K and d_j = ((u // k^j) mod k) - m in [-m, m] (balanced digits). From q K the prefix
moves by d_j k^j per level, adding nodes (d_j > 0) or subtracting nodes (d_j < 0): the indicator
of [1, t] is exactly sum_n s_n 1_{I_n}, s_n = +-1, over q + sum |d_j| nodes. A subtracted node
(and the last top node) may end after t: its noise is drawn at its first use, and the output
estimate_t = prefix_t + sum_n s_n z_n equals sum_n s_n (R x + z)_n because the nodes' parts after
t cancel. So every output is a post-processing of the one release R x + z of the whole stream
(neighbouring streams: one item more in one batch; inputs not chosen after seeing outputs, as
for the factorization counters). Variance at t: (q + sum |d_j|) times the node variance.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from transforms.core.counters.base import ContinualCounter
from transforms.core.counters.factorization.lattice import unit_sensitivities
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

__all__ = ["KarySignedCounter", "signed_shape", "signed_node_counts", "signed_nodes", "signed_variance_path"]


def signed_node_counts(horizon: int, k: int, h: int, start: int = 1) -> np.ndarray:
    """Number of nodes (q + sum |d_j|) in the prefix of every t = start..horizon."""
    t = np.arange(start, horizon + 1, dtype=np.int64)
    if h == 1:
        return t.copy()
    K, m = k ** (h - 1), (k - 1) // 2
    u = t + (K - 1) // 2
    out = u // K
    s = 1
    for _ in range(h - 1):
        out = out + np.abs((u // s) % k - m)
        s *= k
    return out


def _digit_abs_total(n_hi: int, n_lo: int, size: int, k: int, m: int) -> int:
    """sum_{u=n_lo}^{n_hi-1} |((u // size) mod k) - m| (closed form)."""

    def f(n: int) -> int:  # sum over u in [0, n)
        period = size * k
        full, rem = divmod(n, period)
        total = full * size * m * (m + 1)
        a, r = divmod(rem, size)
        total += size * sum(abs(i - m) for i in range(a)) + r * abs(a - m)
        return total

    return f(n_hi) - f(n_lo)


def _mean_cost(horizon: int, k: int, h: int) -> float:
    """Mean over t = 1..T of (nodes per prefix) h^2 (pure DP: node variance ~ h^2), exact."""
    if h == 1:
        return (horizon + 1) / 2.0
    K, m = k ** (h - 1), (k - 1) // 2
    C = (K - 1) // 2
    lo, hi = 1 + C, horizon + C + 1  # u = t + C over [lo, hi)

    def g(n: int) -> int:  # sum_{u<n} u // K, n = a K + r
        a, r = divmod(n, K)
        return K * a * (a - 1) // 2 + a * r

    q_total = g(hi) - g(lo)
    total = q_total
    s = 1
    for _ in range(h - 1):
        total += _digit_abs_total(hi, lo, s, k, m)
        s *= k
    return total / horizon * h * h


@functools.lru_cache(maxsize=64)
def signed_shape(horizon: int, exponent: int = 2) -> tuple[int, int]:
    """(k, h): odd k >= 3 and h levels with the least exact mean variance over t = 1..T
    (node variance ~ h^exponent; 2: Laplace, 1: Gaussian), k^(h-1) <= 4 T, k <= 1001."""
    if horizon < 1:
        raise ValueError("horizon must be >= 1")
    best, shape = (horizon + 1) / 2.0, (3, 1)
    for h in range(2, max(2, horizon.bit_length()) + 2):
        k = 3
        while k ** (h - 1) <= 4 * horizon and k <= 1001:  # the optimum is near k = 19 (e^3)
            v = _mean_cost(horizon, k, h) / h**2 * h**exponent
            if v < best * (1 - 1e-12):
                best, shape = v, (k, h)
            k += 2
    return shape


def signed_nodes(t: int, k: int, h: int) -> list[tuple[int, int, int]]:
    """The (level, index, sign) nodes of the prefix [1, t] (module docstring)."""
    if h == 1:
        return [(0, i, 1) for i in range(1, t + 1)]
    K, m = k ** (h - 1), (k - 1) // 2
    u = t + (K - 1) // 2
    q = u // K
    out = [(h - 1, i, 1) for i in range(1, q + 1)]
    pos = q * K
    for j in range(h - 2, -1, -1):
        size = k**j
        d = (u // size) % k - m
        if d > 0:
            out += [(j, pos // size + i, 1) for i in range(1, d + 1)]
        elif d < 0:
            out += [(j, pos // size - i, -1) for i in range(0, -d)]
        pos += d * size
    return out


@state_class("counter.kary_signed")
class KarySignedCounter(ContinualCounter):
    """k-ary tree with balanced (negative) digits over a horizon T (module docstring)."""

    name = "kary_signed"
    needs_horizon = True
    _STATE_VERSION = 1

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        """The whole budget, once, for the whole tree (at its first step)."""
        if coords[-1] != cls.name:
            raise ValueError(f"{cls.name} charges once, at (..., {cls.name!r}); got {coords}")
        return budget

    def __init__(self, mechanism, budget, *, horizon: int, coords=(), scope=None, shape: tuple | None = None):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if not mechanism.additive or not hasattr(mechanism, "_answers_units"):
            raise ValueError(f"kary_signed needs an additive (Laplace/Gaussian) black box, not {mechanism.name}")
        if not horizon or int(horizon) < 1:
            raise ValueError("kary_signed needs a horizon >= 1")
        self.horizon = int(horizon)
        self.noise_kind = mechanism.noise_kind
        exponent = 2 if self.noise_kind == LAPLACE else 1
        k, h = shape if shape is not None else signed_shape(self.horizon, exponent)
        if k < 3 or k % 2 == 0 or h < 1:
            raise ValueError(f"kary_signed needs an odd k >= 3 and h >= 1, got {(k, h)}")
        self.k, self.h = int(k), int(h)
        self.m = int(mechanism.num_queries)
        self.unit = float(mechanism.unit)
        l1, l2sq = unit_sensitivities(mechanism)
        if self.noise_kind == LAPLACE:
            if not budget.epsilon > 0:
                raise ValueError("epsilon must be > 0 to release")
            p = as_ratio_up(Fraction(self.h) * l1 / Fraction(budget.epsilon))
        else:
            rho, tau2 = budget.gaussian_calibration("zcdp")
            if not rho > 0:
                raise ValueError("rho must be > 0 to release")
            p = as_ratio_up(Fraction(self.h) * l2sq / (2 * Fraction(rho)) + Fraction(tau2))
        self._param_num, self._param_den = p.numerator, p.denominator
        self._scope = self.scope.child(self.name, Scope.SEQUENTIAL)
        self._prefix = np.zeros(self.m, dtype=np.int64)  # exact prefix, mechanism units
        self._z: dict[str, np.ndarray] = {}  # drawn node noise "j:i" -> int64 (m,), live nodes only
        self._logged: dict[str, np.ndarray] = {}  # node -> its release-log values (harness)
        self._nodes = 0
        self._history: list = []  # prefixes t = 0.. (only with a release log: tests)

    @property
    def noise_param(self) -> float:
        return self._param_num / self._param_den

    def _node_noise(self, j: int, i: int, noise: NoiseSource) -> np.ndarray:
        key = f"{j}:{i}"
        z = self._z.get(key)
        if z is None:
            stream = noise.stream(*self.coords, self.name, "node", j, i)
            p = Fraction(self._param_num, self._param_den)
            sampler = discrete_laplace if self.noise_kind == LAPLACE else discrete_gaussian
            z = np.asarray(sampler(stream, p, self.m), dtype=np.int64).reshape(self.m)
            self._z[key] = z
            if self.release_log is not None:
                # the node's release (R x + z)_n, kept up to date as its items arrive (step)
                size = self.k**j
                lo, hi = (i - 1) * size, min(i * size, self.t)
                part = self._history[hi] - self._history[lo] if hi > lo else 0
                vals = (np.asarray(z, dtype=np.float64) + part) * self.unit
                # the counter's one charge goes with its first logged node: the first in its own record of them
                # (not "the log is empty": a consumer that empties the log would be told of the charge again)
                cost = self.budget if not self._logged else self.budget.scale(0.0)
                self._logged[key] = vals
                self.release_log.append((self.coords + (self.name, "node", j, i), cost, vals))
        return z

    def _prune(self) -> None:
        """Forget the noise of nodes no later prefix uses (below the top level, a node ending
        more than k^(j+1) steps ago)."""
        keep = {}
        for key, z in self._z.items():
            j, i = (int(v) for v in key.split(":"))
            if j == self.h - 1 or i * self.k**j >= self.t - self.k ** (j + 1):
                keep[key] = z
        self._z = keep

    def step(self, batch, noise: NoiseSource) -> np.ndarray:
        """Consume the batch of timestamp t+1 and return the estimate at t+1."""
        if self.t >= self.horizon:
            raise BudgetExceededError(f"{self.name} counter reached its horizon {self.horizon}")
        if self.t == 0:
            self._scope.charge(self.budget, self.coords + (self.name,))
        self.t += 1
        t = self.t
        self.noiseless = noise.is_disabled
        d = np.asarray(self.mechanism._answers_units(self._batch(batch)), dtype=np.int64)
        self._prefix += d
        if self.release_log is not None:  # the harness's view: prefixes kept to seed node logs
            if not self._history:
                self._history = [np.zeros(self.m, dtype=np.int64)] * t
            self._history.append(self._prefix.copy())
        if self._logged:  # the logged nodes holding t gain the batch
            for j in range(self.h):
                vals = self._logged.get(f"{j}:{-(-t // self.k**j)}")
                if vals is not None:
                    vals += d * self.unit
        total = self._prefix.copy()
        nodes = signed_nodes(t, self.k, self.h)
        for j, i, s in nodes:
            total += s * self._node_noise(j, i, noise)
        self._nodes = len(nodes)
        if t % 64 == 0:
            self._prune()
        self.estimate = total.astype(np.float64) * self.unit
        return self.estimate

    def noise_profile(self) -> NoiseProfile:
        if self.t == 0 or not self._nodes:
            return NoiseProfile.zero()
        return NoiseProfile({(self.noise_kind, self.noise_param, self.unit): self._nodes})

    def variance(self) -> float:
        if self.t == 0:
            return 0.0
        p = self.noise_param
        per = p if self.noise_kind == GAUSSIAN else discrete_laplace_variance(p)
        return self.unit * self.unit * per * self._nodes

    def error_bound(self, beta: float, n: float | None = None) -> float:
        if self.t == 0 or self.noiseless:
            return 0.0
        return self.noise_profile().tail_bound(beta / self.m)


def signed_variance_path(horizon: int, eps: float = 1.0) -> np.ndarray:
    """Per-step variance, t = 1..T, of a count under pure DP (discrete Laplace, eps)."""
    k, h = signed_shape(horizon, 2)
    p = float(as_ratio_up(Fraction(h) / Fraction(eps)))
    return signed_node_counts(horizon, k, h) * discrete_laplace_variance(p)
