"""Updates by record, their validation, and the entry registry.

An update names an *entry* (a record id) and, for insert / upsert, the new
*item*: a tuple of domain indices, one per query set (the pipelines encode a
record's fields into it). The registry remembers, for every live entry, its
item and the segment it was inserted in, so that a delete or an upsert can be
routed exactly to the tree node holding the old item (000 §4.1 with entry
ids). An upsert is a delete of the old item plus an insert of the new one.

Invalid updates are *returned* as :class:`Rejection` records with a reason
(never raised mid-stream) and change nothing. Reasons are stable strings (they
become dead-letter reasons and metric names):
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "Update",
    "Rejection",
    "EntryRegistry",
    "REASONS",
    "INSERT",
    "DELETE",
    "UPSERT",
]

INSERT, DELETE, UPSERT = "insert", "delete", "upsert"
OPS = (INSERT, DELETE, UPSERT)

REASONS = {
    "unknown_op": "op is not one of insert, delete, upsert",
    "malformed": "missing or mistyped entry id or item",
    "item_out_of_range": "an item index lies outside its query set's declared domain",
    "unknown_entry": "delete or upsert of an entry that is not live",
    "duplicate_insert": "insert of an entry id that is already live",
    "deletion_not_allowed": "a delete or upsert reached an insertion-only release",
}


@dataclass(frozen=True)
class Update:
    """One update: ``op`` on entry ``entry_id``; ``item`` for insert / upsert."""

    op: str
    entry_id: str
    item: tuple[int, ...] | None = None


class Rejection(NamedTuple):
    update: Update
    reason: str


class EntryRegistry:
    """Live entries: id -> (item, insertion segment). O(live entries) memory."""

    __slots__ = ("entries", "domain_sizes")

    def __init__(self, domain_sizes: tuple[int, ...]):
        self.entries: dict[str, tuple[tuple[int, ...], int]] = {}
        self.domain_sizes = tuple(int(d) for d in domain_sizes)

    def __len__(self) -> int:
        return len(self.entries)

    def validate(self, u: Update) -> str | None:
        """The rejection reason of ``u`` against the current state, or None."""
        if type(u) is not Update:
            return "malformed"
        op, eid = u.op, u.entry_id
        if type(eid) is not str or not eid:
            return "unknown_op" if op not in OPS else "malformed"
        if op == DELETE:
            return None if eid in self.entries else "unknown_entry"
        if op not in OPS:
            return "unknown_op"
        item = u.item
        if type(item) is not tuple or len(item) != len(self.domain_sizes):
            return "malformed"
        for v, d in zip(item, self.domain_sizes):
            if type(v) is not int:
                return "malformed"
            if not 0 <= v < d:
                return "item_out_of_range"
        live = eid in self.entries
        if op == INSERT:
            return "duplicate_insert" if live else None
        return None if live else "unknown_entry"

    def get(self, entry_id: str) -> tuple[tuple[int, ...], int]:
        return self.entries[entry_id]

    def put(self, entry_id: str, item: tuple[int, ...], segment: int) -> None:
        self.entries[entry_id] = (item, segment)

    def pop(self, entry_id: str) -> tuple[tuple[int, ...], int]:
        return self.entries.pop(entry_id)
