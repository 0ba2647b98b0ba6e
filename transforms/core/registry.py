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

from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "Update",
    "TickBatch",
    "resolve",
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


EntryState = tuple  # (item, insertion tick) of a live entry


def resolve(state: EntryState | None, u: Update, tick: int, domain_sizes: tuple[int, ...], deletions_allowed=True):
    """Apply one update to one entry's state (a pure function, shared by the
    in-memory registry and the Beam registry DoFn).

    Returns ``(new_state, inserted_item, deleted, n_updates, reason)``:
    ``deleted`` is ``(old_item, old_insertion_tick)`` or None; ``reason`` is a
    rejection reason (then nothing else changes) or None.
    """
    if type(u) is not Update:
        return state, None, None, 0, "malformed"
    op, eid = u.op, u.entry_id
    if type(eid) is not str or not eid:
        return state, None, None, 0, ("unknown_op" if op not in OPS else "malformed")
    if op not in OPS:
        return state, None, None, 0, "unknown_op"
    if op != INSERT and not deletions_allowed:
        return state, None, None, 0, "deletion_not_allowed"
    if op != DELETE:
        item = u.item
        if type(item) is not tuple or len(item) != len(domain_sizes):
            return state, None, None, 0, "malformed"
        for v, d in zip(item, domain_sizes):
            if type(v) is not int:
                return state, None, None, 0, "malformed"
            if not 0 <= v < d:
                return state, None, None, 0, "item_out_of_range"
    if op == INSERT:
        if state is not None:
            return state, None, None, 0, "duplicate_insert"
        return (u.item, tick), u.item, None, 1, None
    if state is None:
        return state, None, None, 0, "unknown_entry"
    if op == DELETE:
        return None, None, state, 1, None
    return (u.item, tick), u.item, state, 2, None


@dataclass
class TickBatch:
    """The accepted, resolved updates of one tick of one stream. Order-free:
    batches of the same tick merge by concatenation (a Beam CombineFn does).

    inserts: new items (inserts and the new side of upserts);
    deletes: (old item, its insertion tick) (deletes and the old side of upserts);
    n_updates: the update count the private partitioning sees (upsert = 2).
    """

    tick: int
    inserts: list = field(default_factory=list)
    deletes: list = field(default_factory=list)
    n_updates: int = 0

    @classmethod
    def from_counts(cls, tick: int, inserts: dict, deletes: dict, n_updates: int) -> TickBatch:
        """The batch of multisets ``inserts`` {item: count} and ``deletes``
        {(item, insertion tick): count} (the form the Beam steps merge and ship:
        a batch is order-free, so the multisets are all it holds)."""
        return cls(
            tick,
            [item for item, c in inserts.items() for _ in range(c)],
            [d for d, c in deletes.items() for _ in range(c)],
            n_updates,
        )

    def merge(self, other: TickBatch) -> TickBatch:
        if other.tick != self.tick:
            raise ValueError("only batches of the same tick merge")
        return TickBatch(
            self.tick, self.inserts + other.inserts, self.deletes + other.deletes, self.n_updates + other.n_updates
        )


class EntryRegistry:
    """Live entries: id -> (item, insertion tick). O(live entries) memory."""

    __slots__ = ("entries", "domain_sizes", "deletions_allowed")

    def __init__(self, domain_sizes: tuple[int, ...], deletions_allowed: bool = True):
        self.entries: dict[str, EntryState] = {}
        self.domain_sizes = tuple(int(d) for d in domain_sizes)
        self.deletions_allowed = deletions_allowed

    def __len__(self) -> int:
        return len(self.entries)

    def resolve_tick(self, tick: int, updates) -> tuple[TickBatch, list[Rejection]]:
        """Apply one tick's updates in the given (canonical) order."""
        batch, rejected = TickBatch(tick), []
        entries, sizes, allowed = self.entries, self.domain_sizes, self.deletions_allowed
        nq = len(sizes)
        inserts, deletes = batch.inserts, batch.deletes
        n_acc = 0
        for u in updates:
            # fast path for the common well-formed cases; anything else goes
            # through resolve(), which gives the reason
            if type(u) is Update and type(u.entry_id) is str and u.entry_id:
                op, eid = u.op, u.entry_id
                if op == "insert" and eid not in entries:
                    item = u.item
                    ok = type(item) is tuple and len(item) == nq
                    if ok:
                        for v, d in zip(item, sizes):
                            if type(v) is not int or not 0 <= v < d:
                                ok = False
                                break
                    if ok:
                        entries[eid] = (item, tick)
                        inserts.append(item)
                        n_acc += 1
                        continue
                elif op == "delete" and allowed:
                    state = entries.pop(eid, None)
                    if state is not None:
                        deletes.append(state)
                        n_acc += 1
                        continue
            eid = getattr(u, "entry_id", None)
            state = entries.get(eid) if type(eid) is str else None
            new, ins, dele, n, reason = resolve(state, u, tick, sizes, allowed)
            if reason:
                rejected.append(Rejection(u, reason))
                continue
            if new is None:
                del entries[eid]
            else:
                entries[eid] = new
            if ins is not None:
                inserts.append(ins)
            if dele is not None:
                deletes.append(dele)
            n_acc += n
        batch.n_updates = n_acc
        return batch, rejected

    def validate(self, u: Update) -> str | None:
        """The rejection reason of ``u`` against the current state, or None."""
        eid = getattr(u, "entry_id", None)
        state = self.entries.get(eid) if type(eid) is str else None
        return resolve(state, u, 0, self.domain_sizes, self.deletions_allowed)[4]
