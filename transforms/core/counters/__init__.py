"""Continual counters over batched timestamps, each on any static black box.

A counter consumes one *batch* (a histogram over the mechanism's domain, the
items inserted at that timestamp; ``None`` for an empty timestamp) per step
and outputs an estimate of ``Q(D_1 + ... + D_t)``, the query answers on all
items seen so far. Several items per timestamp are allowed.

Neighbouring relation: two batch streams that differ by one item in one batch
(update-level, as in the seeds). Every release is charged to a ledger
:class:`~transforms.core.foundation.accounting.Scope` *before* its noise is drawn, and
its noise comes from ``noise.stream(*coords, ...)`` so that a recomputation is
byte-identical.

Counters (``make_counter`` names):

* ``naive_prefix`` (002, Alg. 1): release M on the whole prefix at every t
  with budget/T (finite horizon T, sequential composition).
* ``naive_increments`` (002, Alg. 2): release M on every batch with the full
  budget (parallel composition over disjoint batches) and sum.
* ``binary_tree`` (002 BinaryCount; 000 §2.2): dyadic p-sums over horizon T,
  L = floor(log2 T) + 1 levels, budget/L per node (one node per level holds an
  item); the prefix is the sum of <= L p-sums.
* ``honaker``: the same tree releasing every node, with Honaker's bottom-up
  inverse-variance estimator (post-processing; same privacy, lower variance).
  Needs an additive (Laplace/Gaussian) black box.
* ``infinite`` / ``infinite_honaker`` (Chan-Shi-Song; 000 §2.3): time ranges
  [2^i, 2^(i+1)); M on each finished range with budget/2 (parallel over
  ranges) plus a tree with T = 2^i inside the current range with budget/2.
  No horizon.
* ``sqrt_factorization`` / ``blt`` / ``kary_tree`` (``factorization.py``): the
  square-root factorization over horizon T and BLT coefficients for a design
  horizon (unbounded), both with exact lattice noise; a mixed-radix k-ary tree
  with Honaker's estimate (horizon T).
* ``scaled_sqrt`` (``factorization/scaled.py``): the square root with an
  optimised diagonal between its factors, S = (C D^-1)(D C), exact lattice
  noise (Gaussian only, horizon T): 8-11% below ``sqrt_factorization``.
* ``anytime_sqrt`` (``factorization/anytime.py``): the infinite square root with
  a slowly decreasing diagonal (summable columns: private for ever) run after a
  merged start of 896 steps, exact lattice noise, no horizon: within 1.245x of
  the square root designed for t at every t from 2^10 to 2^24 (4.7-15x before 896).
* ``kary_signed`` (``factorization/kary_signed.py``): the k-ary tree with negative
  digits (arXiv 2408.07021), exact integer noise, horizon T: under pure DP 25-35%
  below ``kary_tree`` (Honaker) in mean and max variance at T = 2^10..2^20.

``error_bound(beta)`` is a valid public (1-beta) bound on the error of the
latest estimate, simultaneously over all queries: a Chernoff bound on the
summed noise profile for additive mechanisms, otherwise the union bound over
the releases summed (000, App. A.2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transforms.core.counters.base import ContinualCounter
from transforms.core.counters.factorization import BLTCounter, KaryTreeCounter, SqrtFactorizationCounter
from transforms.core.counters.factorization.anytime import AnytimeSqrtCounter
from transforms.core.counters.factorization.kary_signed import KarySignedCounter
from transforms.core.counters.factorization.scaled import ScaledSqrtCounter
from transforms.core.counters.trees import (
    BinaryTreeCounter,
    InfiniteCounter,
    NaiveIncrementsCounter,
    NaivePrefixCounter,
)
from transforms.core.foundation.accounting import Budget, Scope
from transforms.core.static.linear import StaticMechanism

__all__ = [
    "ContinualCounter",
    "NaivePrefixCounter",
    "NaiveIncrementsCounter",
    "BinaryTreeCounter",
    "InfiniteCounter",
    "SqrtFactorizationCounter",
    "BLTCounter",
    "KaryTreeCounter",
    "ScaledSqrtCounter",
    "AnytimeSqrtCounter",
    "KarySignedCounter",
    "CounterSpec",
    "COUNTERS",
    "COUNTER_NAMES",
    "FINITE_COUNTERS",
    "UNBOUNDED_COUNTERS",
    "make_counter",
]


@dataclass(frozen=True)
class CounterSpec:
    """One registered counter: its class and the arguments its name fixes.

    ``needs_horizon`` (the class's declaration): the counter is planned for a
    finite number of timestamps and needs ``horizon``; it refuses to step past
    it. The others run on unbounded streams (``blt``'s horizon is a design
    horizon, optional)."""

    name: str
    cls: type
    fixed: dict = field(default_factory=dict)

    @property
    def needs_horizon(self) -> bool:
        return self.cls.needs_horizon

    def planned_cost(self, budget, coords, *, horizon=None, noise_kind="laplace"):
        """The charge of this counter's raw release at ``coords`` (its class's plan)."""
        return self.cls.planned_cost(budget, coords, horizon=horizon, noise_kind=noise_kind)

    def make(self, mechanism, budget, *, horizon=None, coords=(), scope=None) -> ContinualCounter:
        if self.needs_horizon and not horizon:
            raise ValueError(f"counter {self.name!r} needs a horizon (number of timestamps)")
        return self.cls(mechanism, budget, horizon=horizon, coords=coords, scope=scope, **self.fixed)


COUNTERS: dict[str, CounterSpec] = {
    spec.name: spec
    for spec in (
        CounterSpec("naive_prefix", NaivePrefixCounter),
        CounterSpec("naive_increments", NaiveIncrementsCounter),
        CounterSpec("binary_tree", BinaryTreeCounter, {"honaker": False}),
        CounterSpec("honaker", BinaryTreeCounter, {"honaker": True}),
        CounterSpec("infinite", InfiniteCounter, {"honaker": False}),
        CounterSpec("infinite_honaker", InfiniteCounter, {"honaker": True}),
        CounterSpec("sqrt_factorization", SqrtFactorizationCounter),
        CounterSpec("blt", BLTCounter),  # horizon: the design horizon (None: the default)
        CounterSpec("kary_tree", KaryTreeCounter),
        CounterSpec("scaled_sqrt", ScaledSqrtCounter),  # Gaussian only; factorization/scaled.py
        CounterSpec("anytime_sqrt", AnytimeSqrtCounter),  # no horizon; factorization/anytime.py
        CounterSpec("kary_signed", KarySignedCounter),  # negative digits; factorization/kary_signed.py
    )
}
COUNTER_NAMES = tuple(COUNTERS)
FINITE_COUNTERS = tuple(n for n, c in COUNTERS.items() if c.needs_horizon)
UNBOUNDED_COUNTERS = tuple(n for n, c in COUNTERS.items() if not c.needs_horizon)


def make_counter(
    name: str,
    mechanism: StaticMechanism,
    budget: Budget,
    *,
    horizon: int | None = None,
    coords: tuple = (),
    scope: Scope | None = None,
) -> ContinualCounter:
    """Build a counter by name (see module docstring)."""
    spec = COUNTERS.get(name)
    if spec is None:
        raise ValueError(f"unknown counter {name!r}; choose one of {', '.join(COUNTER_NAMES)}")
    return spec.make(mechanism, budget, horizon=horizon, coords=coords, scope=scope)
