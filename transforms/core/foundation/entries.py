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
    "static_reason",
    "Rejection",
    "EntryRegistry",
    "valid_owner",
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
    "than privacy.mutation_window after the entry's first insertion, or it inserts a deleted entry id again past "
    "its insertion limit (entry- and person-level privacy units)",
    "contribution_bounded": "the person already has max_entries_per_person admitted entries (per window): every "
    "update of this entry is refused (person-level privacy unit)",
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
        "contribution_bounded",
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
    mutations; None: no window), and at most ``max_insertions`` insertions of
    one entry id (default 1: a deleted id never comes back, so an entry changes
    a count at most twice, ``docs/contribution.md``; None: no limit of its
    own; a plain integer ``k`` reads as ``MutationLimit(k)``). The insertion
    limit goes with a mutation limit: a window alone (Pan's time-bounded
    constraint, ``max_mutations`` None) lets an id come back within its window.
    With a window an entry's state carries its first insertion tick as a
    fourth element, and a deleted entry keeps a tombstone ``(mutations, first
    tick)``. An insertion limit of 1 needs no state of its own: an id with a
    state (live, or a tombstone) has been inserted. A limit above 1 adds the
    insertions as a fifth element (the fourth None without a window), the
    tombstone ``(mutations, first tick or None, insertions)``; a state without
    it counts one insertion (states stored before the limit restore as they
    were)."""

    max_mutations: int | None = None
    window: int | None = None
    max_insertions: int | None = 1

    def __post_init__(self):
        if self.max_mutations is None and self.window is None:
            raise ValueError("a MutationLimit needs max_mutations or window")
        for name in ("max_mutations", "window", "max_insertions"):
            v = getattr(self, name)
            lo = 0 if name == "window" else 1
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
                raise ValueError(f"{name} must be an integer >= {lo} or None, got {v!r}")


def _limits(max_mutations) -> tuple[int | None, int | None, int | None]:
    """(k, window, insertions) of a ``max_mutations`` argument: None (no limit), an int ``k`` (the same as
    ``MutationLimit(k)``: ``k`` mutations, one insertion) or a MutationLimit."""
    if max_mutations is None:
        return None, None, None
    if type(max_mutations) is int:
        return max_mutations, None, 1
    k = max_mutations.max_mutations
    return k, max_mutations.window, (None if k is None else getattr(max_mutations, "max_insertions", 1))


def valid_owner(owner) -> bool:
    """Whether ``owner`` can own entries (a person id: a non-empty string, or an integer)."""
    return (type(owner) is str and bool(owner)) or type(owner) is int


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


def static_reason(u, domain_sizes: tuple[int, ...], deletions_allowed=True) -> str | None:
    """The reason ``u`` is refused whatever its entry's state (its form, its item, a release that refuses
    deletions), or None."""
    if type(u) is not Update:
        return "malformed"
    op, eid = u.op, u.entry_id
    if type(eid) is not str or not eid:
        return "unknown_op" if op not in OPS else "malformed"
    if op not in OPS:
        return "unknown_op"
    if op != INSERT and not deletions_allowed:
        return getattr(deletions_allowed, "reason", "deletion_not_allowed")
    if op != DELETE:
        item = u.item
        if type(item) is not tuple or len(item) != len(domain_sizes):
            return "malformed"
        for v, d in zip(item, domain_sizes):
            if type(v) is not int:
                return "malformed"
            if not 0 <= v < d:
                return "item_out_of_range"
    return None


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
    reason = static_reason(u, domain_sizes, deletions_allowed)
    if reason is not None:
        return state, None, None, 0, reason
    op = u.op
    live = state is not None and state[0] is not None
    mutations = 0 if state is None else state[2]
    if op == INSERT:
        if live:
            return state, None, None, 0, "duplicate_insert"
    elif not live:
        return state, None, None, 0, "unknown_entry"
    k, window, max_ins = _limits(max_mutations)
    if k is not None and mutations >= k:
        return state, None, None, 0, "constraint_exceeded"
    tail = ()
    if window is not None:  # the first insertion's tick (a 3-tuple state: made by the first insert)
        first = state[3] if state is not None and len(state) > 3 else None
        if first is None:
            first = tick if state is None or not live else state[1]
        if tick - first > window:
            return state, None, None, 0, "constraint_exceeded"
        tail = (first,)
    if max_ins is not None:  # insertions so far (a state without the count: one, if it exists)
        used = 0 if state is None else (state[4] if len(state) > 4 else 1)
        if op == INSERT and used >= max_ins:
            return state, None, None, 0, "constraint_exceeded"
        if max_ins > 1:  # the count is kept only where it is more than "the state exists"
            tail = (tail[0] if tail else None, used + (op == INSERT))
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
        # counted in Python lists, made arrays once (an element update of a numpy array per item and query
        # set was most of this step's time: ~20 items a tick, a year of periods)
        counts = [[0] * d for d in domain_sizes]
        for item in self.inserts:
            for q, v in enumerate(item):
                counts[q][v] += 1
        if signed:
            for item, _ in self.deletes:
                for q, v in enumerate(item):
                    counts[q][v] -= 1
        return [np.array(c, dtype=np.int64) for c in counts]

    @staticmethod
    def block_histograms(aggregates, first_tick: int, n: int, domain_sizes, signed: bool = True, cols=None):
        """Per query set, an ``n x domain_size`` int64 array whose row ``tick - first_tick`` is
        ``from_counts(*aggregate).histograms(domain_sizes, signed)`` of that tick's aggregate (``aggregates``:
        ``(tick, inserts, deletes, n_updates)`` multisets, of distinct ticks in ``[first_tick, first_tick + n)``;
        other rows zero); ``cols``: the item position of each query set (a part of the query sets: the histograms
        of the batch projected on them). The same integers, counted at once (``np.bincount``, each distinct item
        weighted by its count); None where an item is not a tuple of in-range ints of one width or a count is not
        a positive int (``histograms`` decides then, batch by batch)."""
        cols = tuple(range(len(domain_sizes))) if cols is None else tuple(cols)
        sides = (([], [], []), ([], [], []))  # rows, items, counts: inserts, then deletes
        for tick, inserts, deletes, _ in aggregates:
            r = tick - first_tick
            for (rows, items, counts), multiset, dead in zip(sides, (inserts, deletes if signed else {}), (0, 1)):
                if multiset:
                    rows += [r] * len(multiset)
                    items += multiset if not dead else [item for item, _ in multiset]
                    counts += multiset.values()
        parts = []
        for rows, items, counts in sides:
            if not items:
                parts.append(None)
                continue
            try:
                a, w = np.array(items), np.array(counts)
            except (TypeError, ValueError, OverflowError):
                return None
            if a.ndim != 2 or a.dtype.kind not in "iu" or a.shape[1] <= max(cols, default=-1):
                return None  # items of other widths, or values that are not ints (histograms decides)
            if w.dtype.kind not in "iu" or w.min() < 1 or sum(counts) >= 2**53:
                return None  # the weights' float sums are exact below 2^53
            parts.append((np.array(rows, dtype=np.int64), a.astype(np.int64), w.astype(np.float64)))
        out = []
        for c, d in zip(cols, domain_sizes):
            total = np.zeros(n * d, dtype=np.int64)
            for sign, part in zip((1, -1), parts):
                if part is None:
                    continue
                r, a, w = part
                v = a[:, c]
                if v.min() < 0 or v.max() >= d:
                    return None
                total += sign * np.bincount(r * d + v, weights=w, minlength=n * d).astype(np.int64)
            out.append(total.reshape(n, d))
        return out

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
        if eid is None:
            return None
        state = self.entries.get(eid)
        if state is None and eid in self.tombstones:
            t = self.tombstones[eid]
            return (None, 0, *t) if type(t) is tuple else (None, 0, t)
        return state

    def _resolve_one(self, key, u, tick: int, batch: TickBatch, rejected: list, reject_as=None) -> int:
        """Resolve one update against the state of ``key`` (its entry id, or (person, entry id)); returns the
        number of updates accepted (a rejection goes to ``rejected``, as ``reject_as`` if given)."""
        new, ins, dele, n, reason = resolve(
            self._state(key), u, tick, self.domain_sizes, self.deletions_allowed, self.max_mutations
        )
        if reason:
            rejected.append(Rejection(u if reject_as is None else reject_as, reason))
            return 0
        if new is None or new[0] is None:
            self.entries.pop(key, None)
            if new is not None:
                self.tombstones[key] = new[2] if len(new) < 4 else tuple(new[2:])
        else:
            self.entries[key] = new
            self.tombstones.pop(key, None)
        if ins is not None:
            batch.inserts.append(ins)
        if dele is not None:
            batch.deletes.append(dele)
        return n

    def resolve_keyed(self, tick: int, keyed) -> tuple[TickBatch, list[Rejection]]:
        """Apply one tick's ``(owner, Update)`` pairs in the given order, each entry keyed by
        ``(owner, entry id)`` (the person unit: two persons' entry ids never meet). A rejection carries the
        pair as given."""
        batch, rejected = TickBatch(tick), []
        n_acc = 0
        for pair in keyed:
            if type(pair) is not tuple or len(pair) != 2 or not valid_owner(pair[0]):
                rejected.append(Rejection(pair, "malformed"))
                continue
            owner, u = pair
            eid = getattr(u, "entry_id", None)
            key = (owner, eid) if type(eid) is str else None
            n_acc += self._resolve_one(key, u, tick, batch, rejected, reject_as=pair)
        batch.n_updates = n_acc
        return batch, rejected

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
            n_acc += self._resolve_one(eid if type(eid) is str else None, u, tick, batch, rejected)
        batch.n_updates = n_acc
        return batch, rejected

    def validate(self, u: Update) -> str | None:
        """The rejection reason of ``u`` against the current state, or None."""
        eid = getattr(u, "entry_id", None)
        state = self._state(eid if type(eid) is str else None)
        return resolve(state, u, 0, self.domain_sizes, self.deletions_allowed, self.max_mutations)[4]
