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

``error_bound(beta)`` is a valid public (1-beta) bound on the error of the
latest estimate, simultaneously over all queries: a Chernoff bound on the
summed noise profile for additive mechanisms, otherwise the union bound over
the releases summed (000, App. A.2).
"""

from __future__ import annotations

from transforms.core.counters.base import ContinualCounter
from transforms.core.counters.factorization import BLTCounter, KaryTreeCounter, SqrtFactorizationCounter
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
    "make_counter",
    "COUNTER_NAMES",
]


COUNTER_NAMES = (
    "naive_prefix",
    "naive_increments",
    "binary_tree",
    "honaker",
    "infinite",
    "infinite_honaker",
    "sqrt_factorization",
    "blt",
    "kary_tree",
)


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
    if name not in COUNTER_NAMES:
        raise ValueError(f"unknown counter {name!r}; choose one of {', '.join(COUNTER_NAMES)}")
    if name in ("naive_prefix", "binary_tree", "honaker", "sqrt_factorization", "kary_tree") and not horizon:
        raise ValueError(f"counter {name!r} needs a horizon (number of timestamps)")
    kw = dict(coords=coords, scope=scope)
    if name == "naive_prefix":
        return NaivePrefixCounter(mechanism, budget, horizon=horizon, **kw)
    if name == "naive_increments":
        return NaiveIncrementsCounter(mechanism, budget, **kw)
    if name in ("binary_tree", "honaker"):
        return BinaryTreeCounter(mechanism, budget, horizon=horizon, honaker=name == "honaker", **kw)
    if name == "sqrt_factorization":
        return SqrtFactorizationCounter(mechanism, budget, horizon=horizon, **kw)
    if name == "blt":  # horizon: the design horizon (None: the default)
        return BLTCounter(mechanism, budget, horizon=horizon, **kw)
    if name == "kary_tree":
        return KaryTreeCounter(mechanism, budget, horizon=horizon, **kw)
    return InfiniteCounter(mechanism, budget, honaker=name == "infinite_honaker", **kw)
