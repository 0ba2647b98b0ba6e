"""Updates by record, their validation, and the entry registry.

An update names an *entry* (a record id) and, for insert / upsert, the new
*item*: a tuple of domain indices, one per query set (the pipelines encode a
record's fields into it). The registry remembers, for every live entry, its
item and the segment it was inserted in, so that a delete or an upsert can be
routed exactly to the tree node holding the old item (000 §4.1 with entry
ids). An upsert is a delete of the old item plus an insert of the new one.

Invalid updates are *returned* as :class:`Rejection` records with a reason
(never raised mid-stream) and change nothing. Reasons are stable strings (they
become dead-letter reasons and metric names), listed with their meaning in
:data:`REASONS`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from transforms.core.foundation.state import state_class

__all__ = [
    "Update",
    "TickBatch",
    "resolve",
    "Rejection",
    "EntryRegistry",
    "MutationLimit",
    "DeletionsRefused",
    "REASONS",
    "NOT_REPLAYABLE",
    "INSERT",
    "DELETE",
    "UPSERT",
]

INSERT, DELETE, UPSERT = "insert", "delete", "upsert"
OPS = (INSERT, DELETE, UPSERT)

REASONS = {
    "unparseable": "the input could not be decoded (not UTF-8, not JSON, not an object, a CSV row of the wrong width)",
    "missing_field": "a required field is absent: the time (field or attribute), op, id, the stream field, the item "
    "of an insert or upsert, or an item field a query reads",
    "bad_time": "the event time is not a number (or, for an attribute, a time), not finite, or outside the years "
    "1 to 9999",
    "too_far_in_future": "the event time is more than source.max_future_seconds past the message's publish time",
    "unknown_op": "op is not one of insert, delete, upsert",
    "malformed": "a mistyped field: the entry id (a non-empty string or integer), the item (an object), seq (a "
    "64-bit integer)",
    "not_in_domain": "a histogram query's field holds a value outside its declared domain",
    "bad_value": "a sum query's field is not a finite number",
    "item_out_of_range": "an item index lies outside its query set's declared domain",
    "undeclared_stream": "the stream key is not one of the declared (public) streams",
    "before_origin": "the event time lies before the configured origin (tick < 1)",
    "after_end": "the event time lies after the configured end of a bounded release",
    "late": "older than its entry's last resolved tick (late_policy dead_letter)",
    "unknown_entry": "delete or upsert of an entry that is not live",
    "duplicate_insert": "insert of an entry id that is already live",
    "deletion_not_allowed": "a delete or upsert reached an insertion-only release",
    "deletion_not_supported": "a delete or upsert reached a growing-database mechanism (bb_scheduler, bb_improver, "
    "pmwg: Cummings et al.'s model has insertions only)",
    "constraint_exceeded": "the entry already made max_mutations_per_entry mutations, or the mutation comes more "
    "than privacy.mutation_window after the entry's first insertion (entry-level privacy unit)",
}

# reasons whose records may be corrected and submitted again (``pipelines.replay``);
# the others are final for their release: outside its public time span, refused
# by the mechanism, or past the privacy unit's mutation limit (replaying those
# would defeat the limit)
NOT_REPLAYABLE = frozenset(
    {
        "before_origin",
        "after_end",
        "deletion_not_allowed",
        "deletion_not_supported",
        "constraint_exceeded",
    }
)

_OP_RANK = {INSERT: 0, UPSERT: 1, DELETE: 2}


def _raw_key(raw):
    if isinstance(raw, str):
        return (0, raw, b"")
    if isinstance(raw, bytes):
        return (1, "", raw)
    return (2, repr(raw), b"")


def update_order(value) -> tuple:
    """The order in which one entry's updates are resolved, for an update tuple ``(tick, seq, op, item,
    event_time[, raw])``: tick, then event time, then ``seq``, then the update itself (op in lifecycle order
    insert, upsert, delete; the item; the record as received). A total order on the updates' content, so the
    order of lines in a file or of messages in a subscription never changes which updates are accepted, hence
    never a release (the pipelines' registry and the person unit's contribution bounding both use it)."""
    item = value[3]
    return (
        value[0],
        value[4],
        value[1],
        _OP_RANK.get(value[2], 3),
        item if isinstance(item, tuple) else (),
        _raw_key(value[5] if len(value) > 5 else None),
    )


class DeletionsRefused:
    """A false ``deletions_allowed`` that names the reason its refusals get
    (``deletion_not_allowed`` is the reason of a plain ``False``)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        if reason not in REASONS:
            raise ValueError(f"unknown rejection reason {reason!r}")
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other) -> bool:
        return other is False or (type(other) is DeletionsRefused and other.reason == self.reason)

    def __hash__(self) -> int:
        return hash(False)

    def __repr__(self) -> str:
        return f"DeletionsRefused({self.reason!r})"

    def __reduce__(self):
        return (DeletionsRefused, (self.reason,))


@state_class("registry.update")
@dataclass(frozen=True)
class Update:
    """One update: ``op`` on entry ``entry_id``; ``item`` for insert / upsert."""

    op: str
    entry_id: str
    item: tuple[int, ...] | None = None


@state_class("registry.limit")
@dataclass(frozen=True)
class MutationLimit:
    """The entry-level constraints the registry enforces, where a plain
    ``max_mutations`` integer is accepted: at most ``max_mutations`` mutations
    (None: no limit on the number) and/or every mutation at most ``window``
    ticks after the tick of the entry's first insertion (Pan's B-time-bounded
    mutations; None: no window). With a window an entry's state carries its
    first insertion tick as a fourth element, and a deleted entry keeps a
    tombstone ``(mutations, first tick)``."""

    max_mutations: int | None = None
    window: int | None = None

    def __post_init__(self):
        if self.max_mutations is None and self.window is None:
            raise ValueError("a MutationLimit needs max_mutations or window")
        for name in ("max_mutations", "window"):
            v = getattr(self, name)
            lo = 1 if name == "max_mutations" else 0
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
                raise ValueError(f"{name} must be an integer >= {lo} or None, got {v!r}")


def _limits(max_mutations) -> tuple[int | None, int | None]:
    """(k, window) of a ``max_mutations`` argument: an int, a MutationLimit or None."""
    if max_mutations is None or type(max_mutations) is int:
        return max_mutations, None
    return max_mutations.max_mutations, max_mutations.window


class Rejection(NamedTuple):
    """An update the registry refused, and why (a key of :data:`REASONS`)."""

    update: Update
    reason: str


# The state of one entry id: ``(item, insertion tick, mutations)``, and the tick
# of its first insertion as a fourth element under a mutation window. ``item`` is
# None once the entry is deleted: a *tombstone*, kept only when a mutation limit
# is enforced (an entry id that is deleted and inserted again is the same entry,
# so its mutations keep counting); without a limit a deleted entry has no state.
EntryState = tuple


def resolve(
    state: EntryState | None,
    u: Update,
    tick: int,
    domain_sizes: tuple[int, ...],
    deletions_allowed=True,
    max_mutations: int | None = None,
):
    """Apply one update to one entry's state (a pure function, shared by the
    in-memory registry and the Beam registry DoFn).

    ``max_mutations``: the entry-level privacy unit's limit (insert, upsert and
    delete each count as one mutation). An update past it is rejected
    (``constraint_exceeded``), so the group-privacy accounting of
    ``PrivacyUnit.entry(k)`` (at most ``2k - 1`` updates per entry) holds for
    every input, not only for inputs that respect the limit. A
    :class:`MutationLimit` also rejects a mutation more than ``window`` ticks
    after the entry's first insertion (the changelog releases' time-bounded
    constraint, ``docs/changelog.md``).

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
        return state, None, None, 0, getattr(deletions_allowed, "reason", "deletion_not_allowed")
    if op != DELETE:
        item = u.item
        if type(item) is not tuple or len(item) != len(domain_sizes):
            return state, None, None, 0, "malformed"
        for v, d in zip(item, domain_sizes):
            if type(v) is not int:
                return state, None, None, 0, "malformed"
            if not 0 <= v < d:
                return state, None, None, 0, "item_out_of_range"
    live = state is not None and state[0] is not None
    mutations = 0 if state is None else state[2]
    if op == INSERT:
        if live:
            return state, None, None, 0, "duplicate_insert"
    elif not live:
        return state, None, None, 0, "unknown_entry"
    k, window = _limits(max_mutations)
    if k is not None and mutations >= k:
        return state, None, None, 0, "constraint_exceeded"
    tail = ()
    if window is not None:  # the first insertion's tick (a 3-tuple state: made by the first insert)
        first = tick if state is None else (state[3] if len(state) > 3 else (state[1] if live else tick))
        if tick - first > window:
            return state, None, None, 0, "constraint_exceeded"
        tail = (first,)
    mutations += 1
    if op == INSERT:
        return (u.item, tick, mutations, *tail), u.item, None, 1, None
    old = (state[0], state[1])
    if op == DELETE:
        return ((None, 0, mutations, *tail) if max_mutations is not None else None), None, old, 1, None
    return (u.item, tick, mutations, *tail), u.item, old, 2, None


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

    def histograms(self, domain_sizes, signed: bool = True) -> list[np.ndarray]:
        """Per query set (item position), the batch as a histogram over its
        domain: +1 per insertion, and -1 per deletion when ``signed``."""
        hists = [np.zeros(d, dtype=np.int64) for d in domain_sizes]
        for item in self.inserts:
            for q, v in enumerate(item):
                hists[q][v] += 1
        if signed:
            for item, _ in self.deletes:
                for q, v in enumerate(item):
                    hists[q][v] -= 1
        return hists

    def merge(self, other: TickBatch) -> TickBatch:
        if other.tick != self.tick:
            raise ValueError("only batches of the same tick merge")
        return TickBatch(
            self.tick, self.inserts + other.inserts, self.deletes + other.deletes, self.n_updates + other.n_updates
        )


@state_class("registry.entries", ("entries", "tombstones", "domain_sizes"))
class EntryRegistry:
    """Live entries: id -> (item, insertion tick, mutations). O(live entries)
    memory, plus one integer per deleted entry id when a mutation limit is
    enforced (its tombstone: the id's mutations keep counting if it returns)."""

    __slots__ = ("entries", "tombstones", "domain_sizes", "deletions_allowed", "max_mutations")

    def __init__(self, domain_sizes: tuple[int, ...], deletions_allowed: bool = True, max_mutations: int | None = None):
        limit = isinstance(max_mutations, MutationLimit)
        if max_mutations is not None and not limit and (isinstance(max_mutations, bool) or int(max_mutations) < 1):
            raise ValueError(f"max_mutations must be an integer >= 1 or None, got {max_mutations!r}")
        self.entries: dict[str, EntryState] = {}
        self.tombstones: dict[str, int] = {}  # mutations, or (mutations, first tick) under a window
        self.domain_sizes = tuple(int(d) for d in domain_sizes)
        self.deletions_allowed = deletions_allowed
        self.max_mutations = max_mutations if limit or max_mutations is None else int(max_mutations)

    def __len__(self) -> int:
        return len(self.entries)

    def _state(self, eid) -> EntryState | None:
        if type(eid) is not str:
            return None
        state = self.entries.get(eid)
        if state is None and eid in self.tombstones:
            t = self.tombstones[eid]
            return (None, 0, *t) if type(t) is tuple else (None, 0, t)
        return state

    def resolve_tick(self, tick: int, updates) -> tuple[TickBatch, list[Rejection]]:
        """Apply one tick's updates in the given (canonical) order."""
        batch, rejected = TickBatch(tick), []
        entries, sizes, allowed = self.entries, self.domain_sizes, self.deletions_allowed
        limit = self.max_mutations
        fast = limit is None
        nq = len(sizes)
        inserts, deletes = batch.inserts, batch.deletes
        n_acc = 0
        for u in updates:
            # fast path for the common well-formed cases without a mutation limit;
            # anything else goes through resolve(), which gives the reason
            if fast and type(u) is Update and type(u.entry_id) is str and u.entry_id:
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
                        entries[eid] = (item, tick, 1)
                        inserts.append(item)
                        n_acc += 1
                        continue
                elif op == "delete" and allowed:
                    state = entries.pop(eid, None)
                    if state is not None:
                        deletes.append((state[0], state[1]))
                        n_acc += 1
                        continue
            eid = getattr(u, "entry_id", None)
            state = self._state(eid)
            new, ins, dele, n, reason = resolve(state, u, tick, sizes, allowed, limit)
            if reason:
                rejected.append(Rejection(u, reason))
                continue
            if new is None or new[0] is None:
                entries.pop(eid, None)
                if new is not None:
                    self.tombstones[eid] = new[2] if len(new) < 4 else (new[2], new[3])
            else:
                entries[eid] = new
                self.tombstones.pop(eid, None)
            if ins is not None:
                inserts.append(ins)
            if dele is not None:
                deletes.append(dele)
            n_acc += n
        batch.n_updates = n_acc
        return batch, rejected

    def validate(self, u: Update) -> str | None:
        """The rejection reason of ``u`` against the current state, or None."""
        state = self._state(getattr(u, "entry_id", None))
        return resolve(state, u, 0, self.domain_sizes, self.deletions_allowed, self.max_mutations)[4]
