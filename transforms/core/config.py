"""Configuration of a continual release: the query sets, the budget, the
privacy unit and the budget profiles (shared by every mechanism of the
Qiu-Yi family and by the counters; mechanism-specific options live in the
mechanism registry, ``mechanisms.py``).

Validated at construction (``__post_init__`` raises ``ValueError`` naming the
setting), so a bad configuration fails before any pipeline starts.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from transforms.core.foundation.accounting import ZCDP, Budget, PrivacyUnit, SeriesSplit
from transforms.core.foundation.bounds import LAPLACE
from transforms.core.static.linear import CountMechanism, HistogramMechanism, LinearQueryMechanism, StaticMechanism

__all__ = ["PROFILES", "QUERY_KINDS", "QuerySet", "BudgetProfile", "DynamicConfig"]

# budget profiles of the segmented mechanisms (docs/fully_dynamic.md)
PROFILES = ("paper", "tuned", "tight")

QUERY_KINDS = ("count", "histogram", "linear", "pmw")


@dataclass(frozen=True, repr=False)
class QuerySet:
    """A named set of linear queries over one finite domain.

    Kinds: ``count`` (one query, domain of any size), ``histogram`` (every cell),
    ``linear`` (a matrix with entries in [0, 1], rows = queries), ``pmw``
    (private multiplicative weights for a matrix or all ranges of the domain).
    """

    name: str
    kind: str = "count"
    domain_size: int = 1
    matrix: tuple | None = None  # rows of the query matrix (linear / pmw)
    ranges: bool = False  # pmw over all ranges [a, b] of the domain
    pmw_iterations: int = 0  # 0: chosen per release from the public noisy size
    weight: float = 1.0  # its weight in the budget split over query sets (``auto``, ``net_change``)

    def __post_init__(self):
        if not self.name or not isinstance(self.name, str):
            raise ValueError("every query set needs a non-empty name")
        w = self.weight
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
            raise ValueError(f"query {self.name!r}: weight must be a positive finite number; got {w!r}")
        if self.kind not in QUERY_KINDS:
            raise ValueError(f"query {self.name!r}: kind must be one of {', '.join(QUERY_KINDS)}; got {self.kind!r}")
        if self.domain_size < 1:
            raise ValueError(f"query {self.name!r}: domain_size must be >= 1")
        if self.kind == "linear" and self.matrix is None:
            raise ValueError(f"query {self.name!r}: a linear query set needs a matrix")
        if self.matrix is not None:
            m = np.asarray(self.matrix, dtype=float)
            if m.ndim != 2 or m.shape[1] != self.domain_size:
                raise ValueError(f"query {self.name!r}: matrix must have domain_size = {self.domain_size} columns")

    def __repr__(self) -> str:
        """The dataclass's repr (part of the digests that key the noise): ``weight`` shows only when it is not
        the default, so the repr of every query set without a weight is unchanged."""
        text = (
            f"QuerySet(name={self.name!r}, kind={self.kind!r}, domain_size={self.domain_size!r}, "
            f"matrix={self.matrix!r}, ranges={self.ranges!r}, pmw_iterations={self.pmw_iterations!r}"
        )
        return text + ("" if self.weight == 1.0 else f", weight={self.weight!r}") + ")"

    def mechanism(self, noise: str) -> StaticMechanism:
        if self.kind == "count":
            return CountMechanism(self.domain_size, noise)
        if self.kind == "histogram":
            return HistogramMechanism(self.domain_size, noise)
        if self.kind == "linear":
            return LinearQueryMechanism(np.asarray(self.matrix, dtype=float), noise)
        from transforms.core.static.pmw import PMWMechanism  # local: PMW is heavier

        return PMWMechanism(
            self.domain_size,
            matrix=None if self.matrix is None else np.asarray(self.matrix, dtype=float),
            ranges=self.ranges,
            iterations=self.pmw_iterations,
            noise=noise,
        )


@dataclass(frozen=True)
class BudgetProfile:
    """How the budget is split (see ``docs/fully_dynamic.md`` for validity).

    Attributes:
      partition_fraction: share of the budget for the private partitioning.
      level_split: weights of tree levels (sum <= 1 over all levels).
      round_split: weights of a node's rounds (restarts).
      round_weights: the four-way split of a round: (n_hat, static, query
        counter, deletion-count counter), summing to 1.
      delta_weights: the same split for delta under (eps, delta) budgets.
      counter: ``infinite`` (Chan-Shi-Song over later segments, as in the
        paper) or ``node_horizon`` (a tree over exactly the node's remaining
        queried segments, with Honaker's estimator for additive black boxes).
      leaf_static_only: level-1 nodes are never queried after they are built,
        so they release only ``M_Q`` with the whole node budget.
      reuse_count: a count query set is answered from the node's own ``n_hat``
        release and its deletion-count counter (the same quantities, already
        released: post-processing) instead of a static release and a query
        counter of its own; ``n_hat`` and the deletion-count counter take the
        shares those would have had.
      counter ``best`` (with ``node_horizon``'s known lifetime): the
        square-root factorization under Gaussian noise, the k-ary tree with
        Honaker's estimator under Laplace noise (``docs/counters.md``).
    """

    name: str
    partition_fraction: float
    level_split: SeriesSplit
    round_split: SeriesSplit
    round_weights: tuple[float, float, float, float]
    delta_weights: tuple[float, float, float, float]
    counter: str
    leaf_static_only: bool
    reuse_count: bool = False

    def __post_init__(self):
        if not 0 < self.partition_fraction < 1:
            raise ValueError("partition_fraction must be in (0, 1)")
        for name, w in (("round_weights", self.round_weights), ("delta_weights", self.delta_weights)):
            if len(w) != 4 or any(x < 0 for x in w) or sum(w) > 1 + 1e-12:
                raise ValueError(f"{name} must be 4 non-negative weights summing to <= 1")
        if self.counter not in ("infinite", "node_horizon", "best"):
            raise ValueError("counter must be 'infinite', 'node_horizon' or 'best'")

    @classmethod
    def paper(cls) -> BudgetProfile:
        """Exactly the seed: 1/l^2 levels, 1/r^2 rounds, four equal eps shares
        (delta in thirds, n_hat is pure), Chan-Shi-Song counters; partition/tree
        split 1/2 - 1/2 (the paper leaves this split open)."""
        return cls(
            "paper",
            0.5,
            SeriesSplit("pi2"),
            SeriesSplit("pi2"),
            (0.25,) * 4,
            (0.0, 1 / 3, 1 / 3, 1 / 3),
            "infinite",
            False,
        )

    @classmethod
    def tuned(cls, max_segments: int | None = None, eta: float = 0.5) -> BudgetProfile:
        """A tighter valid allocation: uniform over the levels of a declared
        horizon of segments (else 1/l^(1+eta)), rounds 1/r^3 (restarts are
        rare: round 1 gets 83%), most of a round for the released answers,
        counters sized to each node's known lifetime, leaves release only M_Q,
        10% for partitioning. With a zCDP or (eps, delta>0) budget all noise is
        Gaussian and composes in zCDP."""
        levels = SeriesSplit("finite", horizon=max_segments.bit_length()) if max_segments else SeriesSplit("zeta", eta)
        return cls(
            "tuned",
            0.1,
            levels,
            SeriesSplit("zeta", 2.0),
            (0.1, 0.4, 0.4, 0.1),
            (0.0, 0.4, 0.4, 0.2),
            "node_horizon",
            True,
        )

    @classmethod
    def tight(cls, max_segments: int | None = None, eta: float = 0.5) -> BudgetProfile:
        """``tuned``, tightened (still valid: ``docs/fully_dynamic.md``): count
        query sets reuse each round's ``n_hat`` and deletion-count counter
        instead of paying for their own, and node counters are the best
        counter for their known lifetime (square-root factorization under
        Gaussian noise, k-ary tree under Laplace noise)."""
        base = cls.tuned(max_segments, eta)
        return dataclasses.replace(base, name="tight", counter="best", reuse_count=True)


@dataclass(frozen=True)
class DynamicConfig:
    """Validated configuration of one continual release.

    Args:
      queries: the query sets (each answered by its own static black box).
      budget: the total budget of one stream (PureDP, ApproxDP or ZCDP), as a
        guarantee for ``unit``.
      profile: ``paper`` or ``tuned``.
      beta: failure probability of the reported error bounds and partitioning.
      max_segments: tuned only: a declared horizon on the number of segments
        (levels are then budgeted uniformly; releases stop after it).
      unit: the privacy unit ``budget`` is stated for. ``PrivacyUnit.update()``
        (the seeds' relation) spends ``budget`` at update level;
        ``PrivacyUnit.entry(k)`` spends the update-level budget whose group
        guarantee over ``2k - 1`` updates is ``budget``, and the registry
        rejects an entry's mutations past ``k`` (``constraint_exceeded``).
    """

    queries: tuple[QuerySet, ...]
    budget: Budget
    profile: str = "tuned"
    beta: float = 0.05
    max_segments: int | None = None
    eta: float = 0.5
    unit: PrivacyUnit = PrivacyUnit()

    def __post_init__(self):
        if not self.queries:
            raise ValueError("at least one query set is needed")
        names = [q.name for q in self.queries]
        if len(set(names)) != len(names):
            raise ValueError(f"query names must be unique, got {names}")
        if self.profile not in PROFILES:
            raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {self.profile!r}")
        if not 0 < self.beta < 1:
            raise ValueError(f"beta must be in (0, 1), got {self.beta}")
        if self.max_segments is not None and (not self.tuned_family or self.max_segments < 1):
            raise ValueError("max_segments is a tuned- or tight-profile horizon and must be >= 1")
        if not isinstance(self.budget, Budget):
            raise ValueError("budget must be PureDP, ApproxDP or ZCDP")
        if not isinstance(self.unit, PrivacyUnit):
            raise ValueError("unit must be a PrivacyUnit (PrivacyUnit.update(), .entry(k) or .person(L, k))")
        if self.profile == "paper" and LAPLACE not in self.budget.noise_families:
            raise ValueError(
                "the paper profile uses Laplace noise: give a PureDP or ApproxDP budget, or use profile tuned"
            )
        if self.budget.primary <= 0:
            raise ValueError("the budget must be positive")

    @property
    def tuned_family(self) -> bool:
        """``tuned`` or ``tight``: Gaussian noise under zCDP / (eps, delta > 0)
        budgets, Honaker estimators, histogram deletion counters for PMW."""
        return self.profile in ("tuned", "tight")

    @property
    def budget_profile(self) -> BudgetProfile:
        if self.profile == "paper":
            return BudgetProfile.paper()
        if self.profile == "tight":
            return BudgetProfile.tight(self.max_segments, self.eta)
        return BudgetProfile.tuned(self.max_segments, self.eta)

    @property
    def gaussian(self) -> bool:
        """Gaussian noise with zCDP composition (tuned or tight, with zCDP or delta > 0)."""
        return self.tuned_family and self.budget.gaussian_calibrated

    @property
    def noise_kind(self) -> str:
        return "gaussian" if self.gaussian else "laplace"

    @property
    def update_budget(self) -> Budget:
        """The update-level budget whose guarantee for ``unit`` is ``budget``."""
        return self.unit.update_level_budget(self.budget)

    @property
    def max_mutations(self):
        """The per-entry limit the registry enforces (entry- and person-level units):
        the integer k, or a :class:`~transforms.core.foundation.entries.MutationLimit`
        when the unit also bounds the time after the first insertion or the
        insertions of one entry id."""
        unit = self.unit
        if unit.kind == "update":
            return None
        if unit.mutation_window is None and unit.insertion_limit == 1:
            return unit.max_mutations  # an int k: k mutations, one insertion (the registry's reading)
        from transforms.core.foundation.entries import MutationLimit

        return MutationLimit(unit.max_mutations, unit.mutation_window, unit.insertion_limit)

    @property
    def ledger_budget(self) -> Budget:
        """The update-level budget in the ledger's currency."""
        b = self.update_budget
        if self.gaussian:
            return ZCDP(b.gaussian_rho())
        return b

    def split(self) -> tuple[float, Budget]:
        """(partitioning epsilon, tree budget)."""
        f = self.budget_profile.partition_fraction
        b = self.ledger_budget
        return b.pure_step(f)[0], b.part(1 - f, 1.0)
