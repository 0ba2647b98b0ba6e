"""Tree counters (naive, binary tree, Honaker, Chan-Shi-Song infinite) over batched timestamps."""

from __future__ import annotations

import numpy as np

from transforms.core.counters.base import ContinualCounter, ctz
from transforms.core.foundation.accounting import BudgetExceededError, Scope
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.state import state_class

__all__ = ["NaivePrefixCounter", "NaiveIncrementsCounter", "BinaryTreeCounter", "InfiniteCounter"]


@state_class("counter.naive_prefix")
class NaivePrefixCounter(ContinualCounter):
    """002 Alg. 1: a fresh release of the whole prefix at every timestamp."""

    name = "naive_prefix"
    needs_horizon = True

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        return budget.scale(1.0 / horizon)  # budget / T per prefix release

    def __init__(self, mechanism, budget, *, horizon: int, coords=(), scope=None):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if horizon < 1:
            raise ValueError("naive_prefix needs a horizon >= 1")
        self.horizon = int(horizon)
        self.node_budget = budget.scale(1.0 / self.horizon)
        self._scope = self.scope.child("naive_prefix", Scope.SEQUENTIAL)
        self._prefix = np.zeros(mechanism.domain_size, dtype=np.int64)

    def step(self, batch, noise):
        if self.t >= self.horizon:
            raise BudgetExceededError(f"naive_prefix counter reached its horizon {self.horizon}")
        self.t += 1
        self._prefix = self._prefix + self._batch(batch)
        self.estimate = self._release(self._prefix, self.node_budget, self._scope, noise, "prefix", self.t)
        self._terms = [(self.node_budget, 1, 1.0)]
        return self.estimate


@state_class("counter.naive_increments")
class NaiveIncrementsCounter(ContinualCounter):
    """002 Alg. 2: release every batch with the full budget and sum."""

    name = "naive_increments"

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        return budget  # the whole budget per batch (parallel over disjoint batches)

    def __init__(self, mechanism, budget, *, horizon=None, coords=(), scope=None):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        self._scope = self.scope.child("naive_increments", Scope.PARALLEL)
        self.estimate = np.zeros(mechanism.num_queries)

    def step(self, batch, noise):
        self.t += 1
        rel = self._release(self._batch(batch), self.budget, self._scope, noise, "batch", self.t)
        self.estimate = self.estimate + rel
        self._terms = [(self.budget, self.t, 1.0)]
        return self.estimate


@state_class("counter.binary_tree")
class BinaryTreeCounter(ContinualCounter):
    """BinaryCount over a finite horizon, optionally with Honaker's estimator.

    State: for each level, the exact dataset of the current (incomplete) node
    and the latest released / estimated node: O(L d) numbers.
    """

    name = "binary_tree"
    needs_horizon = True

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        return budget.scale(1.0 / horizon.bit_length())  # budget / (floor(log2 T) + 1) per node

    def __init__(self, mechanism, budget, *, horizon: int, honaker: bool = False, coords=(), scope=None):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if horizon < 1:
            raise ValueError("binary_tree needs a horizon >= 1")
        if honaker and not mechanism.additive:
            raise ValueError("Honaker's estimator needs an additive (Laplace/Gaussian) black box")
        self.horizon = int(horizon)
        self.honaker = honaker
        self.name = "honaker" if honaker else "binary_tree"
        self.levels = self.horizon.bit_length()  # floor(log2 T) + 1
        self.node_budget = budget.scale(1.0 / self.levels)
        self._scope = self.scope.child(self.name, Scope.SEQUENTIAL)
        self._level_scopes = [self._scope.child(f"level{j}", Scope.PARALLEL) for j in range(self.levels)]
        d = mechanism.domain_size
        self._acc = np.zeros((self.levels, d), dtype=np.int64)  # exact open node per level
        self._last = np.zeros((self.levels, mechanism.num_queries))  # latest node estimate per level
        if honaker:
            self._weights = self._honaker_weights()

    def _honaker_weights(self):
        """(w_own, w_children) per level and the node-estimate noise profiles."""
        base = self.mechanism.noise_profile(self.node_budget)
        s2 = base.variance()
        weights, profiles, v_prev = [], [], None
        for j in range(self.levels):
            if j == 0:
                weights.append((1.0, 0.0))
                profiles.append(base)
                v_prev = s2
                continue
            v = 1.0 / (1.0 / s2 + 1.0 / (2 * v_prev))
            wy, ws = v / s2, v / (2 * v_prev)
            weights.append((wy, ws))
            profiles.append(base.scaled(wy) + profiles[-1].times(2).scaled(ws))
            v_prev = v
        self._level_profiles = profiles
        return weights

    def step(self, batch, noise):
        if self.t >= self.horizon:
            raise BudgetExceededError(f"{self.name} counter reached its horizon {self.horizon}")
        self.t += 1
        t = self.t
        b = self._batch(batch)
        i = ctz(t)
        if self.honaker:
            self._acc += b
            prev_left = self._last.copy()  # latest completed node per level (left children)
            for j in range(min(i, self.levels - 1) + 1):
                y = self._release(self._acc[j], self.node_budget, self._level_scopes[j], noise, "node", j, t >> j)
                if j == 0:
                    z = y
                else:
                    wy, ws = self._weights[j]
                    z = wy * y + ws * (prev_left[j - 1] + self._last[j - 1])
                self._last[j] = z
                self._acc[j] = 0
        else:
            node = b + self._acc[:i].sum(axis=0)
            self._acc[:i] = 0
            self._acc[i] = node
            self._last[i] = self._release(node, self.node_budget, self._level_scopes[i], noise, "node", i, t >> i)
            self._last[:i] = 0
        bits = [j for j in range(self.levels) if (t >> j) & 1]
        self.estimate = self._last[bits].sum(axis=0)
        self._terms = self._bit_terms(bits)
        return self.estimate

    def _bit_terms(self, bits):
        return [(self.node_budget, 1, 1.0) for _ in bits]

    def noise_profile(self) -> NoiseProfile:
        if not self.honaker:
            return super().noise_profile()
        bits = [j for j in range(self.levels) if (self.t >> j) & 1]
        return NoiseProfile.sum(self._level_profiles[j] for j in bits)


@state_class("counter.infinite")
class InfiniteCounter(ContinualCounter):
    """Chan-Shi-Song: unbounded stream, ranges [2^i, 2^(i+1)), budget split in halves."""

    name = "infinite"

    @classmethod
    def planned_cost(cls, budget, coords, *, horizon, noise_kind):
        """Chan-Shi-Song: budget/2 per finished range, budget/2 / (i + 1) per node
        of range i's tree (T = 2^i: i + 1 levels)."""
        r = coords[coords.index("range") + 1]
        return budget.scale(0.5 / (r + 1) if "node" in coords else 0.5)

    def __init__(self, mechanism, budget, *, horizon=None, honaker: bool = False, coords=(), scope=None):
        super().__init__(mechanism, budget, coords=coords, scope=scope)
        if honaker and not mechanism.additive:
            raise ValueError("Honaker's estimator needs an additive (Laplace/Gaussian) black box")
        self.honaker = honaker
        self.name = "infinite_honaker" if honaker else "infinite"
        self.half = budget.scale(0.5)
        self._scope = self.scope.child(self.name, Scope.SEQUENTIAL)
        self._ranges_scope = self._scope.child("ranges", Scope.PARALLEL)
        self._trees_scope = self._scope.child("trees", Scope.PARALLEL)
        d = mechanism.domain_size
        self._range_hist = np.zeros(d, dtype=np.int64)  # exact items of the current range
        self._closed = np.zeros(mechanism.num_queries)  # sum of finished ranges' releases
        self._closed_count = 0
        self._range = 0
        self._tree: BinaryTreeCounter | None = None
        self._tree_scope: Scope | None = None
        self._closed_in_estimate = 0
        self._tree_profile: NoiseProfile | None = None

    def _new_tree(self):
        self._tree_scope = self._trees_scope.child(f"range{self._range}", Scope.SEQUENTIAL)
        self._tree = BinaryTreeCounter(
            self.mechanism,
            self.half,
            horizon=1 << self._range,
            honaker=self.honaker,
            coords=self.coords + ("range", self._range),
            scope=self._tree_scope,
        )
        self._tree.release_log = self.release_log

    def step(self, batch, noise):
        self.t += 1
        b = self._batch(batch)
        if self._tree is None:
            self._new_tree()
        self._range_hist += b
        tree_est = self._tree.step(b, noise)
        self.noiseless = noise.is_disabled
        self.estimate = self._closed + tree_est
        self._closed_in_estimate = self._closed_count
        self._terms = ([(self.half, self._closed_count, 1.0)] if self._closed_count else []) + list(self._tree._terms)
        self._tree_profile = self._tree.noise_profile() if self.honaker else None
        if self.t == (1 << (self._range + 1)) - 1:  # range [2^i, 2^(i+1)) is finished
            rel = self._release(self._range_hist, self.half, self._ranges_scope, noise, "range", self._range)
            self._closed = self._closed + rel
            self._closed_count += 1
            self._range_hist[:] = 0
            self._tree_scope.close()
            self._tree = None
            self._range += 1
        return self.estimate

    def noise_profile(self) -> NoiseProfile:
        if not self.honaker:
            return super().noise_profile()
        closed = self.mechanism.noise_profile(self.half).times(self._closed_in_estimate)
        if self._tree_profile is None:  # before the first step: no release in the estimate (0)
            return closed
        return closed + self._tree_profile
