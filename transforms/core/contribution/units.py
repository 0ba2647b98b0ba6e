"""Privacy units by what they contribute: one update, one entry, one person (issue 28).

A :class:`ContributionUnit` states what one protected unit can do to the stream, the numbers the
sensitivity functions of this package read:

* ``update``: one insertion or deletion (the seeds' relation): multiplier 1.
* ``entry(k)``: every update of one entry (record id), at most ``k`` mutations (insert, upsert and
  delete each count one, as the registry enforces: ``max_mutations_per_entry``), at most
  ``max_insertions`` of them insertions (``None``: as many as ``k`` allows, ``ceil(k / 2)``: the
  registry today lets a deleted entry id come back and keeps counting its mutations).
* ``person(L, k)``: every update of one person, who brings at most ``L`` entries
  (``max_entries_per_person``, enforced by :mod:`.bounding`), each like an entry above; with
  ``entries_window`` the limit is ``L`` per window of that many ticks, so a bounded release of
  ``end_tick`` ticks holds at most ``L * ceil(end_tick / entries_window)`` of a person's entries.

Group privacy, for comparison: an entry accounts for ``g = 2k - 1`` updates (an upsert is two),
a person for ``L (2k - 1)``.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ContributionUnit", "UNIT_KINDS"]

UNIT_KINDS = ("update", "entry", "person")


@dataclass(frozen=True)
class ContributionUnit:
    """What one protected unit contributes (module docstring)."""

    kind: str = "update"
    max_mutations: int | None = None
    max_entries: int = 1
    max_insertions: int | None = None
    entries_window: int | None = None

    def __post_init__(self):
        if self.kind not in UNIT_KINDS:
            raise ValueError(f"unit must be one of {', '.join(UNIT_KINDS)}, got {self.kind!r}")
        for name in ("max_mutations", "max_entries", "max_insertions", "entries_window"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.kind == "update":
            return
        if self.max_mutations is None:
            raise ValueError(f"a{'n' if self.kind == 'entry' else ''} {self.kind} unit needs max_mutations_per_entry")
        if self.kind == "entry" and (self.max_entries != 1 or self.entries_window is not None):
            raise ValueError("max_entries and entries_window belong to the person unit")

    @classmethod
    def update(cls) -> ContributionUnit:
        return cls("update")

    @classmethod
    def of(cls, unit) -> ContributionUnit:
        """What a configured ``PrivacyUnit`` (accounting) contributes: its kind, ``k``, its insertion
        limit and, for a person, ``L`` and the window (an entry's ``mutation_window`` only removes
        patterns: the bounds hold without it)."""
        if unit.kind == "update":
            return cls.update()
        if unit.max_mutations is None:
            raise ValueError(
                "privacy.max_mutations_per_entry: required for sensitivity by contribution (a mutation window "
                "alone bounds an entry only for the changelog mechanisms dcr, hdcr and swcr)"
            )
        if unit.kind == "entry":
            return cls.entry(unit.max_mutations, unit.insertion_limit)
        return cls.person(unit.max_entries, unit.max_mutations, unit.insertion_limit, unit.per_window)

    @classmethod
    def entry(cls, max_mutations: int, max_insertions: int | None = None) -> ContributionUnit:
        return cls("entry", max_mutations, 1, max_insertions)

    @classmethod
    def person(
        cls,
        max_entries: int,
        max_mutations: int,
        max_insertions: int | None = None,
        entries_window: int | None = None,
    ) -> ContributionUnit:
        return cls("person", max_mutations, max_entries, max_insertions, entries_window)

    # -- what one entry can do ------------------------------------------------------
    @property
    def mutations(self) -> int:
        """``k``: an update is one mutation."""
        return 1 if self.kind == "update" else int(self.max_mutations)

    @property
    def lifetimes(self) -> int:
        """The most insertions one entry makes (each starts a lifetime)."""
        k = self.mutations
        most = (k + 1) // 2
        return most if self.max_insertions is None else min(most, self.max_insertions)

    @property
    def alive_toggles(self) -> int:
        """The most changes of an entry's alive indicator (insertions and deletions alternate):
        what the entry does to a count."""
        return min(self.mutations, 2 * self.lifetimes)

    # -- how many entries -------------------------------------------------------------
    def entries(self, end_tick: int | None = None) -> int:
        """The most entries one unit brings over the release (``end_tick``: the last tick of a
        bounded release; needed with ``entries_window``)."""
        if self.kind != "person":
            return 1
        if self.entries_window is None:
            return self.max_entries
        if end_tick is None:
            raise ValueError("a per-window person limit bounds a person only over a bounded release (time.end)")
        return self.max_entries * math.ceil(int(end_tick) / self.entries_window)

    def group_size(self, end_tick: int | None = None) -> int:
        """Updates one unit accounts for under group privacy (an upsert is two updates)."""
        if self.kind == "update":
            return 1
        return self.entries(end_tick) * (2 * self.mutations - 1)

    def describe(self) -> str:
        if self.kind == "update":
            return "one update"
        ins = "" if self.max_insertions is None else f", <= {self.max_insertions} insertion(s)"
        entry = f"<= {self.mutations} mutations{ins}"
        if self.kind == "entry":
            return f"one entry ({entry})"
        per = "" if self.entries_window is None else f" per {self.entries_window} ticks"
        return f"one person (<= {self.max_entries} entries{per}, each {entry})"
