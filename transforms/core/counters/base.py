"""The continual counter's contract: one batch in per step, a prefix estimate and a valid error bound out
(the counters and their privacy: ``transforms/core/counters/__init__.py``)."""

from __future__ import annotations

import math

import numpy as np

from transforms.core.foundation.accounting import Budget, Ledger, Scope
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import NoiseSource
from transforms.core.static.linear import StaticMechanism

__all__ = ["ContinualCounter"]


def ctz(t: int) -> int:
    """The number of trailing zero bits of ``t`` (t >= 1): the level of dyadic node ``t``, minus one."""
    return (t & -t).bit_length() - 1


class ContinualCounter:
    """Base class: state, accounting and error bounds shared by all counters.

    Args:
      mechanism: the static black box.
      budget: total budget of the counter (update-level).
      coords: release-coordinate prefix (stream, mechanism, node, ...).
      scope: ledger scope to charge; a private ledger with ``budget`` if None.
    """

    name = "counter"
    needs_horizon = False

    def __init__(
        self,
        mechanism: StaticMechanism,
        budget: Budget,
        *,
        coords: tuple = (),
        scope: Scope | None = None,
    ):
        mechanism.check_budget(budget)
        self.mechanism = mechanism
        self.budget = budget
        self.coords = tuple(coords)
        self.scope = scope if scope is not None else Ledger(budget, keep_records=False).root
        self.t = 0
        self.estimate = np.zeros(mechanism.num_queries)
        # optional list collecting (coords, cost, values) of every raw release
        self.release_log: list | None = None
        self.noiseless = False  # stepped with noise switched off: error bounds are 0
        # (budget, count, weight) of releases summed into the latest estimate
        self._terms: list[tuple[Budget, int, float]] = []

    @classmethod
    def planned_cost(cls, budget: Budget, coords: tuple, *, horizon: int | None, noise_kind: str) -> Budget:
        """The charge of the raw release at ``coords`` of a counter with total
        ``budget`` (``docs/counters.md``, written from its formulas, not from
        the code that charges): the contract tests hold the ledger to it."""
        raise NotImplementedError

    # -- helpers ---------------------------------------------------------------
    def _batch(self, batch) -> np.ndarray:
        if batch is None:
            return np.zeros(self.mechanism.domain_size, dtype=np.int64)
        return self.mechanism.validate_hist(batch).astype(np.int64)

    def _release(self, hist, budget: Budget, scope: Scope, noise: NoiseSource, *coord) -> np.ndarray:
        coords = self.coords + coord
        self.noiseless = noise.is_disabled
        scope.charge(self.mechanism.cost(budget), coords)
        # noise.stream(*coords), with the hash state of every coordinate but the last (the node's index) kept
        stream = noise.stream_at(coords[:-1], coords[-1]) if coords else noise.stream()
        rel = self.mechanism.release(hist, budget, stream)
        values = self.mechanism.answer(rel)
        if self.release_log is not None:
            self.release_log.append((coords, rel.cost, values))
        return values

    def step(self, batch, noise: NoiseSource) -> np.ndarray:
        """Consume the batch of timestamp t+1 and return the estimate at t+1."""
        raise NotImplementedError

    # -- error -------------------------------------------------------------------
    def noise_profile(self) -> NoiseProfile:
        """Law of the noise of each answer of the latest estimate (additive only)."""
        if not self.mechanism.additive:
            raise ValueError(f"{self.mechanism.name} is not additive: no noise profile")
        return NoiseProfile.sum(self.mechanism.noise_profile(b).scaled(w).times(c) for b, c, w in self._terms)

    def variance(self) -> float:
        """Variance of each answer of the latest estimate."""
        return self.noise_profile().variance()

    def error_bound(self, beta: float, n: float | None = None) -> float:
        """gamma(t, beta): P(max_q |estimate_q - exact_q| > gamma) <= beta.

        ``n`` bounds the size of every released batch (needed by black boxes
        whose error depends on it, such as PMW). 0 when the noise was switched
        off (no noise was added)."""
        if self.t == 0 or not self._terms or self.noiseless:
            return 0.0
        if self.mechanism.additive:
            return self.noise_profile().tail_bound(beta / self.mechanism.num_queries)
        k = sum(c for _, c, _ in self._terms)
        return math.fsum(c * abs(w) * self.mechanism.alpha(b, beta / k, n=n) for b, c, w in self._terms)
