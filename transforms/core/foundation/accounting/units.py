"""Privacy units (neighbouring relations), series splits, and the guarantee a spend states.

Privacy units:

* ``PrivacyUnit.update()``: the seeds' relation. Two update streams are
  neighbours if one has one more update (insertion or deletion of one item).
* ``PrivacyUnit.entry(k)``: two streams are neighbours if they differ in all
  updates of one entry (record id) that is mutated at most ``k`` times
  (insert, upsert/modify and delete each count as one mutation). A modify is a
  delete of the old item plus an insert of the new one, so one entry accounts
  for at most ``g = 2k - 1`` updates; group privacy turns an update-level
  guarantee into an entry-level one: pure ``g*eps``; approximate
  ``(g*eps, g*exp((g-1)*eps)*delta)``; zCDP ``g**2 * rho``.

:func:`stated_spend` turns a ledger's spend vector into the guarantee it
states for a unit, in the configured currency (what a release record says).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass

from .budgets import Budget, BudgetExceededError, zcdp_to_approx

__all__ = ["zeta", "SeriesSplit", "PrivacyUnit", "stated_spend"]


# ---------------------------------------------------------------------------
# Infinite series splits
# ---------------------------------------------------------------------------


def zeta(s: float) -> float:
    """The Riemann zeta function at real s > 1 (Euler-Maclaurin, |error| < 1e-12)."""
    if s <= 1:
        raise ValueError("zeta(s) needs s > 1")
    n = 20
    total = math.fsum(k ** (-s) for k in range(1, n))
    # tail sum_{k>=n} k^-s by Euler-Maclaurin with three correction terms
    total += n ** (1 - s) / (s - 1) + 0.5 * n ** (-s)
    total += s * n ** (-s - 1) / 12
    total -= s * (s + 1) * (s + 2) * n ** (-s - 3) / 720
    total += s * (s + 1) * (s + 2) * (s + 3) * (s + 4) * n ** (-s - 5) / 30240
    return total


@dataclass(frozen=True)
class SeriesSplit:
    """A split of one budget over infinitely many uses j = 1, 2, ...

    * ``kind="pi2"``: weight 6 / (pi^2 j^2) (the seeds' split).
    * ``kind="zeta"``: weight 1 / (zeta(1+eta) j^(1+eta)), tighter for small eta
      at large j, looser at small j.
    * ``kind="finite"``: weight 1/horizon for j <= horizon, and a request
      for j > horizon raises (a declared horizon).

    The weights sum to at most 1 over all j, so charging ``w(j) * budget`` to use
    j is within ``budget`` however many uses there are.
    """

    kind: str = "pi2"
    eta: float = 1.0
    horizon: int = 0

    def __post_init__(self):
        if self.kind not in ("pi2", "zeta", "finite"):
            raise ValueError(f"series split kind must be one of pi2, zeta, finite; got {self.kind!r}")
        if self.kind == "zeta" and not self.eta > 0:
            raise ValueError(f"zeta split needs eta > 0, got {self.eta}")
        if self.kind == "finite" and self.horizon < 1:
            raise ValueError(f"finite split needs horizon >= 1, got {self.horizon}")

    def weight(self, j: int) -> float:
        if j < 1:
            raise ValueError(f"series index starts at 1, got {j}")
        if self.kind == "pi2":
            return 6.0 / (math.pi**2 * j * j)
        if self.kind == "zeta":
            return 1.0 / (zeta(1 + self.eta) * j ** (1 + self.eta))
        if j > self.horizon:
            raise BudgetExceededError(f"use {j} is beyond the declared horizon {self.horizon}; raise the horizon")
        return 1.0 / self.horizon

    def partial_sum(self, n: int) -> float:
        return math.fsum(self.weight(j) for j in range(1, n + 1))


# ---------------------------------------------------------------------------
# Privacy unit
# ---------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class PrivacyUnit:
    """The neighbouring relation a guarantee is stated for (see module docstring).

    ``mutation_window`` (entry unit only): every mutation of an entry lies
    within this many ticks after the tick of its first insertion (Pan's
    B-time-bounded constraint, enforced by the registry); with it,
    ``max_mutations`` may be None (no limit on the number). Group privacy needs
    ``max_mutations``; the changelog mechanisms (``dcr``, ``hdcr``, ``swcr``)
    account for either constraint (``docs/changelog.md``).
    """

    kind: str = "update"
    max_mutations: int | None = 1
    mutation_window: int | None = None

    def __post_init__(self):
        if self.kind not in ("update", "entry"):
            raise ValueError(f"privacy unit must be 'update' or 'entry', got {self.kind!r}")
        if self.mutation_window is not None:
            w = self.mutation_window
            if self.kind != "entry":
                raise ValueError("mutation_window is an entry-level constraint (unit entry)")
            if isinstance(w, bool) or not isinstance(w, int) or w < 0:
                raise ValueError(f"mutation_window must be an integer >= 0 (ticks), got {w!r}")
        if self.max_mutations is None:
            if self.mutation_window is None:
                raise ValueError("an entry unit needs max_mutations_per_entry or mutation_window")
        elif self.max_mutations < 1:
            raise ValueError(f"max_mutations_per_entry must be >= 1, got {self.max_mutations}")

    def __repr__(self) -> str:  # the repr (digests) of a unit without a window is unchanged
        tail = "" if self.mutation_window is None else f", mutation_window={self.mutation_window!r}"
        return f"PrivacyUnit(kind={self.kind!r}, max_mutations={self.max_mutations!r}{tail})"

    @classmethod
    def update(cls) -> PrivacyUnit:
        return cls("update", 1)

    @classmethod
    def entry(cls, max_mutations: int | None, mutation_window: int | None = None) -> PrivacyUnit:
        return cls("entry", max_mutations, mutation_window)

    @property
    def group_size(self) -> int:
        """How many updates one privacy unit can account for."""
        if self.kind == "update":
            return 1
        if self.max_mutations is None:
            raise ValueError(
                "group privacy needs max_mutations_per_entry; a time-bounded unit alone (mutation_window) is "
                "accounted only by the changelog mechanisms (dcr, hdcr, swcr)"
            )
        return 2 * self.max_mutations - 1

    def guarantee(self, update_level: Budget) -> Budget:
        """The guarantee for this unit given the update-level guarantee."""
        g = self.group_size
        if g == 1:
            return update_level
        return update_level.group(g)

    def update_level_budget(self, target: Budget) -> Budget:
        """The update-level budget whose group guarantee is within ``target``."""
        g = self.group_size
        if g == 1:
            return target
        return target.ungroup(g)


@functools.lru_cache(maxsize=4096)
def _approx_epsilon(rho: float, delta: float) -> float:
    """Cached: a release record converts the same spend many times."""
    return zcdp_to_approx(rho, delta).epsilon


def stated_spend(spent: tuple[float, ...], *, ledger: Budget, unit: PrivacyUnit, target: Budget) -> tuple[dict, dict]:
    """``(configured, charged)``: a ledger's spend vector as the guarantee it
    states, and as the ledger charged it.

    Args:
      spent: the ledger's spend, in its currency (:func:`~.budgets.as_vector`
        of ``Ledger.spent``).
      ledger: the ledger's total (its type is the currency of ``spent``).
      unit: the unit whose group privacy turns the ledger's charge into the
        configured guarantee (the update unit, the identity, for a ledger
        that charges the configured guarantee itself).
      target: the configured budget (its currency is the one stated).

    Returns:
      ``configured``: ``{"epsilon"}``, ``{"epsilon", "delta"}`` or ``{"rho"}``
      for the configured unit; a zCDP ledger under an (epsilon, delta) target
      states ``{"epsilon", "delta", "rho"}``, converted at the target's delta.
      ``charged``: the ledger's charge with its field names.
    """
    charged = type(ledger).from_vector(tuple(spent))
    stated = unit.guarantee(charged)
    configured = asdict(stated)
    if stated.rank > target.rank:  # Gaussian noise (zCDP) under an (epsilon, delta) target
        configured = {"epsilon": _approx_epsilon(stated.primary, target.delta), "delta": target.delta, **configured}
    return configured, asdict(charged)
