"""The k-ary tree counter: a mixed-radix tree (radices chosen for the horizon
and the noise kind) with Honaker's bottom-up inverse-variance estimate, the
best pure-DP counter here (``docs/counters.md``)."""

from __future__ import annotations

import functools
import math

import numpy as np

from transforms.core.counters.base import ContinualCounter
from transforms.core.foundation.accounting import BudgetExceededError, Scope
from transforms.core.foundation.bounds import LAPLACE, NoiseProfile, tail_bounds
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import state_class

__all__ = ["KaryTreeCounter", "kary_radices", "kary_variance_path", "digit_total", "kary_digits", "NEWTON_FROM"]


def digit_total(horizon: int, size: int, radix: int | None) -> int:
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
    most 0.52% (T = 27, 256, 512, 729, 1024, 4096, 2^16; measured 2026-11-23).
    Ties (means within a relative 1e-12, e.g. T = 14, exponent 1: (2, 2) and (2, 3), both 71.0) go to the first
    in the search order (fewer levels, then the smaller radix tuple), so the tree of a configuration does not
    depend on float rounding or on the order of the search's set."""
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
                v[j] * digit_total(horizon, sizes[j], rad[j] if j < levels - 1 else None) for j in range(levels)
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
    # derived from the level profiles, and the last block of bounds used (both rebuilt on first use)
    _STATE_EXCLUDE = ("_bound_key", "_bound_memo")

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        """Budget / (number of levels) per node; the radices are those chosen for
        the horizon and the noise kind."""
        radices = kary_radices(horizon, 2 if noise_kind == LAPLACE else 1)
        return budget.scale(1.0 / (len(radices) + 1))

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
            index = t // self.sizes[j]
            y = self._release(
                self._acc[j],
                self.node_budget,
                self._level_scopes[j],
                noise,
                "node",
                j,
                index,
                ahead=self.horizon // self.sizes[j] - index + 1,  # this level's nodes still to come, this one too
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
        self.estimate = np.add.reduce(self._sums, axis=0)  # what .sum(axis=0) computes, without its wrappers
        nodes = sum(self._digits)
        self._terms = [(self.node_budget, nodes, 1.0)] if nodes else []
        return self.estimate

    def noise_profile(self) -> NoiseProfile:
        if not self.honaker:
            return super().noise_profile()
        return NoiseProfile.sum(self._level_profiles[j].times(a) for j, a in enumerate(self._digits) if a)

    def error_bound(self, beta: float, n: float | None = None) -> float:
        """The tail bound of :meth:`noise_profile`, computed for an aligned block of ``_BLOCK`` periods at once
        (:func:`~transforms.core.foundation.bounds.tail_bounds`, vectorised): with Honaker's estimate the
        profile of period t is a function of t alone (its mixed-radix digits, :func:`kary_digits`) and of the
        counter's public parameters, so a whole block's profiles are known ahead, and the same period gets the
        same bound whichever period a run starts or restores at (blocks are aligned, rows independent). The same
        exact minimiser as :meth:`NoiseProfile.tail_bound` (Newton; within a few ulps of the exact minimum of the
        Chernoff bound: ``tests/test_bound_newton.py``), at every horizon (``NEWTON_FROM`` = 1): a short horizon
        computes one block of ``horizon`` rows."""
        if self.t == 0 or self.noiseless or not any(self._digits):
            return 0.0
        if not self.honaker or self.horizon < NEWTON_FROM:
            return super().error_bound(beta, n)
        t = self.t
        index = (t - 1) // _BLOCK
        # The last block used, kept on the instance: consecutive periods share a block (4096 of them), and the
        # shared cache's key (the nested tuple of the level profiles' terms) is hashed on every look-up. The
        # memo holds what _block_bounds returned for the same beta and block index (the key is fixed for the
        # instance: its level profiles never change), so the bound is the same float.
        memo = self.__dict__.get("_bound_memo")
        if memo is not None and memo[0] == beta and memo[1] == index:
            return float(memo[2][(t - 1) % _BLOCK])
        key = getattr(self, "_bound_key", None)
        if key is None:
            key = self._bound_key = tuple(tuple(sorted(p.terms.items())) for p in self._level_profiles)
        block = _block_bounds(key, self.radices, self.horizon, beta / self.mechanism.num_queries, index)
        self._bound_memo = (beta, index, block)
        return float(block[(t - 1) % _BLOCK])


def kary_digits(t: np.ndarray, radices: tuple[int, ...]) -> np.ndarray:
    """The counter's ``_digits`` after step t, one row per t: the completed nodes of each level since its parent's
    last, i.e. t in the mixed radix (r_0, ..., r_{h-2}), the top level unbounded."""
    t = np.asarray(t, dtype=np.int64)
    cols, size = [], 1
    for r in radices:
        cols.append((t // size) % r)
        size *= r
    cols.append(t // size)
    return np.stack(cols, axis=1)


_BLOCK = 4096  # periods whose bounds are computed at once (a year of one-minute periods: 129 blocks)
NEWTON_FROM = 1  # the horizon (periods) from which the bounds are computed by blocks (error_bound): every horizon


@functools.lru_cache(maxsize=64)
def _block_bounds(levels: tuple, radices: tuple[int, ...], horizon: int, beta: float, block: int) -> np.ndarray:
    """Tail bounds of periods ``block * _BLOCK + 1 ..`` (at most ``_BLOCK``, not past the horizon) of a Honaker
    k-ary tree whose level profiles have the sorted terms ``levels``."""
    terms = sorted({term for level in levels for term, _ in level})
    col = {term: i for i, term in enumerate(terms)}
    m = np.zeros((len(levels), len(terms)), dtype=np.int64)
    for j, level in enumerate(levels):
        for term, c in level:
            m[j, col[term]] = c
    t = np.arange(block * _BLOCK + 1, min((block + 1) * _BLOCK, horizon) + 1)
    return tail_bounds(terms, kary_digits(t, radices) @ m, beta)
