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
    """The Riemann zeta function at real s > 1, rounded up: never below it, within 1e-12 relative above.

    Euler-Maclaurin for the tail ``sum_{k>=20} k^-s`` with the corrections up to ``B_6``: the remainder
    after the ``B_6`` term has the sign of ``B_8`` (negative) for real s > 1, so the exact value of the
    formula is above ``zeta(s)``, by less than 2e-13 relative (the ``B_8`` term at s -> 1). Its float
    evaluation (a correctly rounded ``fsum`` of 19 terms, six more operations and powers within an ulp each)
    is within 16 ulps of the formula; the result is raised by ``2^-48`` relative (16 ulps) so that it stays
    above ``zeta(s)`` whatever the rounding. A series split's weights ``1 / (zeta(s) j^s)`` then sum to at
    most 1 over all j (each computed weight within 2 ulps of its exact value, 16 ulps below the true
    weight's); before stop 57 the value was not rounded to a side (below the true value at about 46% of
    points, by up to ~1e-15 relative)."""
    if s <= 1:
        raise ValueError("zeta(s) needs s > 1")
    n = 20
    total = math.fsum(k ** (-s) for k in range(1, n))
    # tail sum_{k>=n} k^-s by Euler-Maclaurin with three correction terms
    total += n ** (1 - s) / (s - 1) + 0.5 * n ** (-s)
    total += s * n ** (-s - 1) / 12
    total -= s * (s + 1) * (s + 2) * n ** (-s - 3) / 720
    total += s * (s + 1) * (s + 2) * (s + 3) * (s + 4) * n ** (-s - 5) / 30240
    return total + total * 2.0**-48


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

    ``person`` (``max_entries`` = L): two streams are neighbours if they differ
    in all updates of one person, who brings at most L entries (admitted whole,
    in the total order of the person's own records, by the pipeline's
    contribution bounding; ``per_window``: at most L whose first insertion
    falls in each tumbling window of that many ticks), each mutated at most
    ``max_mutations`` times. ``max_insertions`` (entry and person units): how
    many times one entry id may be inserted (a deleted entry coming back is a
    new insertion; the registry refuses one past the limit,
    ``constraint_exceeded``); None: the default, one (:attr:`insertion_limit`:
    a deleted id never comes back, so an entry changes a count at most twice).
    ``max_insertions >= ceil(k / 2)`` lifts the limit (``k`` mutations cannot
    insert more often); it is then shown in the repr (noise keys).

    ``max_streams`` (person unit only, ``privacy.max_streams_per_person``): a person's updates are
    admitted in at most this many streams (the first ones the person inserts into, in the same total
    order; ``transforms.core.contribution.bounding.bound_person_streams``, applied by the pipeline's
    person step across streams), so that a guarantee stated per stream composes over at most
    ``max_streams`` streams for one person. The budget a core is given is always its stream's: the
    pipeline's configuration gives each stream its share of the configured budget
    (``stream_share``: ``1 / max_streams`` of it, in rho for Gaussian noise under (eps, delta)), and the
    configured budget then protects a person across the whole release (``docs/contribution.md``, "A
    person in several streams"); a caller of the transforms passes that share itself. The in-memory
    core of one stream bounds a person within its stream only. None: not bounded across streams, the
    guarantee is per stream (as before).
    """

    kind: str = "update"
    max_mutations: int | None = 1
    mutation_window: int | None = None
    max_entries: int | None = None
    max_insertions: int | None = None
    per_window: int | None = None
    max_streams: int | None = None

    def __post_init__(self):
        if self.kind not in ("update", "entry", "person"):
            raise ValueError(f"privacy unit must be 'update', 'entry' or 'person', got {self.kind!r}")
        for name in ("mutation_window", "max_entries", "max_insertions", "per_window", "max_streams"):
            v = getattr(self, name)
            low = 0 if name == "mutation_window" else 1
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < low):
                raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
        if self.kind == "update" and (self.mutation_window, self.max_insertions) != (None, None):
            raise ValueError("mutation_window and max_insertions are entry-level constraints (unit entry or person)")
        if (self.kind == "person") != (self.max_entries is not None):
            raise ValueError("a person unit needs max_entries (max_entries_per_person), and only a person unit has it")
        if self.per_window is not None and self.kind != "person":
            raise ValueError("per_window bounds a person's entries (unit person)")
        if self.max_streams is not None and self.kind != "person":
            raise ValueError("max_streams bounds the streams of a person (unit person)")
        if self.max_mutations is None:
            if self.mutation_window is None or self.kind == "person":
                raise ValueError(
                    "an entry unit needs max_mutations_per_entry or mutation_window; a person unit needs "
                    "max_mutations_per_entry"
                )
        elif self.max_mutations < 1:
            raise ValueError(f"max_mutations_per_entry must be >= 1, got {self.max_mutations}")

    def __repr__(self) -> str:  # the repr (digests) of today's units is unchanged: new fields show only when set
        tail = "".join(
            f", {name}={getattr(self, name)!r}"
            for name in ("mutation_window", "max_entries", "max_insertions", "per_window", "max_streams")
            if getattr(self, name) is not None
        )
        return f"PrivacyUnit(kind={self.kind!r}, max_mutations={self.max_mutations!r}{tail})"

    @classmethod
    def update(cls) -> PrivacyUnit:
        return cls("update", 1)

    @classmethod
    def entry(
        cls, max_mutations: int | None, mutation_window: int | None = None, *, max_insertions: int | None = None
    ) -> PrivacyUnit:
        return cls("entry", max_mutations, mutation_window, max_insertions=max_insertions)

    @classmethod
    def person(
        cls,
        max_entries: int,
        max_mutations: int,
        *,
        max_insertions: int | None = 1,
        per_window: int | None = None,
        mutation_window: int | None = None,
        max_streams: int | None = None,
    ) -> PrivacyUnit:
        return cls("person", max_mutations, mutation_window, max_entries, max_insertions, per_window, max_streams)

    @property
    def group_size(self) -> int:
        """How many updates one privacy unit can account for (an entry: ``2k - 1``; a person: L entries of
        them; with ``per_window``, group privacy is not defined without the number of windows: see
        :meth:`group_size_until`)."""
        if self.kind == "update":
            return 1
        if self.max_mutations is None:
            raise ValueError(
                "group privacy needs max_mutations_per_entry; a time-bounded unit alone (mutation_window) is "
                "accounted only by the changelog mechanisms (dcr, hdcr, swcr)"
            )
        g = 2 * self.max_mutations - 1
        if self.kind == "person":
            if self.per_window is not None:
                raise ValueError("a person unit per window has no group size without the release's end tick")
            return self.max_entries * g
        return g

    @property
    def insertion_limit(self) -> int | None:
        """How many times the registry lets one entry id be inserted: ``max_insertions``, by default 1
        under the entry and person units with a mutation limit (None: no limit; at update level, and for
        an entry unit bounded by ``mutation_window`` alone, whose id may come back within the window)."""
        if self.kind == "update" or (self.max_mutations is None and self.max_insertions is None):
            return None  # a window alone (Pan's constraint, the changelog releases): an id may come back
        return 1 if self.max_insertions is None else self.max_insertions

    def group_size_until(self, end_tick: int | None) -> int:
        """The group size over a release of ``end_tick`` ticks (a person per window brings L entries per
        window: ``L * ceil(end_tick / window)`` entries in all)."""
        if self.kind == "person" and self.per_window is not None:
            if end_tick is None:
                raise ValueError("a person unit per window needs a configured end (time.end) for group privacy")
            windows = -(-int(end_tick) // self.per_window)
            return self.max_entries * windows * (2 * self.max_mutations - 1)
        return self.group_size

    def describe(
        self, person_field: str | None = None, streams: int | None = None, open_bound: str | None = None
    ) -> str:
        """One line a reviewer can read: whom the guarantee protects (the run summary and the manifest
        print it; ``person_field``: the record field holding the person id, named, never its values).
        ``streams``: the number of declared streams, when known; a person unit without ``max_streams`` over
        more than one is then said to be the configuration's choice (``privacy.max_streams_per_person:
        per_stream``), with what it protects a person in all of them by. ``open_bound``: an open-key release's bound
        on a person's keys or cells, which holds across the whole release (not per stream)."""
        if self.kind == "update":
            return (
                "privacy unit update: protects one update (one insertion or deletion of one item; an upsert is "
                "both), not a record's whole history nor a person"
            )
        limits = []
        if self.max_mutations is not None:
            limits.append(f"at most {self.max_mutations} mutation{'s' if self.max_mutations != 1 else ''}")
        if self.mutation_window is not None:
            limits.append(f"all within {self.mutation_window} ticks of its first insertion")
        if self.insertion_limit is not None:
            n = self.insertion_limit
            limits.append("inserted once (a deleted id never comes back)" if n == 1 else f"inserted at most {n} times")
        each = ", ".join(limits)
        if self.kind == "entry":
            return f"privacy unit entry: protects every update of one entry (record id): {each}; not a person"
        whose = f"one person (the records sharing one value of '{person_field}')" if person_field else "one person"
        per = f" whose first insertion falls in any one window of {self.per_window} ticks" if self.per_window else ""
        entries = f"at most {self.max_entries} entries{per}"
        if self.max_streams is not None:
            n = self.max_streams
            return (
                f"privacy unit person: protects every update of {whose} across all streams: admitted in at most "
                f"{n} stream{'s' if n != 1 else ''} (the first the person inserts into; each stream runs at "
                f"{'the whole budget' if n == 1 else f'a 1/{n} share of the budget'}), in each {entries}, each {each}"
            )
        # the bound is per stream (each stream is its own release with its own budget): said here, where a
        # reviewer reads whom the guarantee protects (stop 51's audit: only docs/privacy.md said it)
        if open_bound is not None:  # one release over every key: the person's keys are bounded, not per stream
            return (
                f"privacy unit person: protects every update of {whose} across the whole release: {entries}, each "
                f"{each}, in at most the {'cells' if 'cells' in open_bound else 'keys'} {open_bound} allows"
            )
        if streams is not None and streams > 1:  # refused unless chosen (PipelineConfig._check_max_streams)
            return (
                f"privacy unit person: protects every update of {whose}: {entries}, each {each}; per stream, as "
                f"chosen (privacy.max_streams_per_person: per_stream): a person in all {streams} streams is "
                f"protected by {streams} times the budget"
            )
        return (
            f"privacy unit person: protects every update of {whose}: {entries}, each {each}; per stream (a "
            "person in several streams spends each stream's budget; privacy.max_streams_per_person bounds it)"
        )

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
      states ``{"epsilon", "delta", "rho"}``, converted at the target's delta (CKS; a
      tight Gaussian account by the analytic curve, ``TightGaussian.to_approx``).
      ``charged``: the ledger's charge with its field names.
    """
    charged = type(ledger).from_vector(tuple(spent))
    stated = unit.guarantee(charged)
    configured = asdict(stated)
    if stated.rank > target.rank:  # Gaussian noise (zCDP) under an (epsilon, delta) target
        eps = (
            stated.to_approx(target.delta).epsilon if stated.rank > 2 else _approx_epsilon(stated.primary, target.delta)
        )
        configured = {"epsilon": eps, "delta": target.delta, **configured}
    return configured, asdict(charged)
