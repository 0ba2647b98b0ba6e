"""Contribution bounding for the person unit: admit whole entries, in the total order on updates
(issue 28, item 2; the argument: ``docs/contribution.md``, "Contribution bounding").

One person's updates (every stream record carries the person id; the id is never released) go
through :func:`bound_person` in the project's total order (``update_order`` of
``transforms/core/foundation/entries.py``: tick, event time, seq, op rank, item, raw; then the entry id). The
rule, a pure function of the person's own records:

* an entry is *admitted* at its first insertion if the person has fewer than ``max_entries``
  admitted entries (in the insertion's window, with ``window``: tumbling windows of that many
  ticks from tick 1); else it is *refused*, for good;
* every update of an admitted entry passes (the entry registry then applies its own checks);
* every update of a refused entry is refused, reason ``contribution_bounded``;
* an update (upsert, delete) of an entry the person has not inserted is refused, reason
  ``unknown_entry`` (the registry would refuse it for that reason; refusing it here keeps every
  accepted update inside an entry admitted by this person's own insertion).

So an entry is never half admitted (an admitted insertion whose deletion is dropped would keep
the entry alive for ever), the decisions do not depend on the order of lines (the updates are
sorted first; a person's batches must come in tick order, as the per-tick steps give them), and
the admission of one person's entries reads nothing but that person's records: adding or
removing a person changes no other person's admissions, so the neighbouring releases differ
only in that person's admitted entries, at most ``max_entries`` (per window) of them.

The state of one person is plain data, versioned by its first element:
``(PERSON_STATE_VERSION, admitted {entry id: window}, refused {entry id: window},
counts {window: admitted entries})``. Under the person unit the entry registry must key entries
by (stream, person, entry id): two people's entries never meet.

**Across streams** (``max_streams``, ``privacy.max_streams_per_person``; :func:`bound_person_streams`):
one person's updates of every stream are decided together, in the same total order with the stream
as the last tie-break. A stream is *admitted* for the person at the person's first insertion into it
while fewer than ``max_streams`` streams are admitted; once ``max_streams`` are, every update of any
other stream is refused, ``contribution_bounded``, for good (before that, an upsert or delete in a
stream the person has not inserted into is ``unknown_entry``, as above). Within an admitted stream the
rule above applies unchanged, with its own state. Again a pure function of the person's own records,
so a person's updates reach at most ``max_streams`` streams, each with at most ``max_entries`` (per
window) of that person's entries. State: ``(STREAMS_STATE_TAG, STREAMS_STATE_VERSION, {stream: the
person state above}, admitted streams in order of admission)``.

Nothing here imports Apache Beam.
"""

from __future__ import annotations

from dataclasses import dataclass

from transforms.core.foundation.entries import INSERT, Update, update_order
from transforms.core.foundation.state import StateError, state_class

__all__ = [
    "STREAMS_STATE_TAG",
    "STREAMS_STATE_VERSION",
    "new_streams_state",
    "bound_person_streams",
    "CONTRIBUTION_BOUNDED",
    "UNKNOWN_ENTRY",
    "PERSON_STATE_VERSION",
    "PersonLimit",
    "new_person_state",
    "order_key",
    "bound_person",
    "PersonBounder",
    "PersonStreamsBounder",
]

CONTRIBUTION_BOUNDED = "contribution_bounded"
UNKNOWN_ENTRY = "unknown_entry"
PERSON_STATE_VERSION = 1
STREAMS_STATE_TAG = "streams"  # the first element of a person's state across streams (max_streams)
STREAMS_STATE_VERSION = 1


@dataclass(frozen=True)
class PersonLimit:
    """``max_entries`` per person, over the whole release or per ``window`` ticks (per stream); with
    ``max_streams``, in at most that many streams (:func:`bound_person_streams`)."""

    max_entries: int
    window: int | None = None
    max_streams: int | None = None

    def __post_init__(self):
        for name in ("max_entries", "window", "max_streams"):
            v = getattr(self, name)
            if v is None and name != "max_entries":
                continue
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")

    def window_of(self, tick: int) -> int:
        """The window of an entry first inserted at ``tick`` (0 without a window)."""
        return 0 if self.window is None else (int(tick) - 1) // self.window


def new_person_state() -> tuple:
    """The state of a person with no records yet."""
    return (PERSON_STATE_VERSION, {}, {}, {})


def _check(state) -> tuple:
    if state is None:
        return new_person_state()
    if type(state) is not tuple or len(state) != 4 or state[0] != PERSON_STATE_VERSION:
        # the state holds entry ids (record data): the message names its shape, never its contents
        if type(state) is tuple and state:
            what = f"a tuple of {len(state)} whose first element is a {type(state[0]).__name__}"
            what += f" ({state[0]})" if type(state[0]) is int else ""
        else:
            what = f"a {type(state).__name__}"
        raise StateError(f"not a person state of version {PERSON_STATE_VERSION}: {what}")
    return state


def _id_key(entry_id):
    return (0, entry_id) if isinstance(entry_id, str) else (1, repr(entry_id))


def order_key(entry_id, value) -> tuple:
    """The total order on one person's updates: ``update_order(value)`` (tick, event time, seq,
    op rank, item, raw) then the entry id. ``value`` is the registry's update tuple
    ``(tick, seq, op, item, event_time[, raw])``."""
    return (*update_order(value), _id_key(entry_id))


def bound_person(state, updates, limit: PersonLimit) -> tuple[tuple, list]:
    """Decide one person's ``updates`` (pairs ``(entry_id, value)``, any order) from ``state``.

    Returns ``(new state, decisions)``: ``decisions`` lists ``(entry_id, value, reason)`` in the
    total order, ``reason`` None for an accepted update, else ``contribution_bounded`` or
    ``unknown_entry``. ``state`` is not modified (None: a new person)."""
    version, admitted, refused, counts = _check(state)
    admitted, refused, counts = dict(admitted), dict(refused), dict(counts)
    decisions = []
    for entry_id, value in sorted(updates, key=lambda u: order_key(u[0], u[1])):
        if entry_id in admitted:
            decisions.append((entry_id, value, None))
            continue
        if entry_id in refused:
            decisions.append((entry_id, value, CONTRIBUTION_BOUNDED))
            continue
        if value[2] != INSERT:
            decisions.append((entry_id, value, UNKNOWN_ENTRY))
            continue
        w = limit.window_of(value[0])
        if counts.get(w, 0) < limit.max_entries:
            counts[w] = counts.get(w, 0) + 1
            admitted[entry_id] = w
            decisions.append((entry_id, value, None))
        else:
            refused[entry_id] = w
            decisions.append((entry_id, value, CONTRIBUTION_BOUNDED))
    return (version, admitted, refused, counts), decisions


def new_streams_state() -> tuple:
    """The state across streams of a person with no records yet."""
    return (STREAMS_STATE_TAG, STREAMS_STATE_VERSION, {}, ())


def _check_streams(state) -> tuple:
    if state is None:
        return new_streams_state()
    if type(state) is not tuple or len(state) != 4 or state[:2] != (STREAMS_STATE_TAG, STREAMS_STATE_VERSION):
        what = f"a tuple of {len(state)}" if type(state) is tuple else f"a {type(state).__name__}"
        raise StateError(f"not a person state across streams of version {STREAMS_STATE_VERSION}: {what}")
    return state


def _stream_key(stream):
    return (0, stream) if isinstance(stream, str) else (1, repr(stream))


def bound_person_streams(state, updates, limit: PersonLimit) -> tuple[tuple, list]:
    """Decide one person's ``updates`` of every stream (triples ``(stream, entry_id, value)``, any order)
    from ``state`` under ``limit.max_streams`` (module docstring, "Across streams").

    Returns ``(new state, decisions)``: ``decisions`` lists ``(stream, entry_id, value, reason)`` in the
    total order (``order_key``, then the stream), ``reason`` None for an accepted update, else
    ``contribution_bounded`` or ``unknown_entry``. ``state`` is not modified (None: a new person)."""
    if limit.max_streams is None:
        raise ValueError("bound_person_streams needs a limit with max_streams")
    _, version, per_stream, admitted = _check_streams(state)
    per_stream, admitted = dict(per_stream), list(admitted)
    ordered = sorted(updates, key=lambda u: (order_key(u[1], u[2]), _stream_key(u[0])))
    verdicts: list = [None] * len(ordered)
    buckets: dict = {}  # stream -> positions in ``ordered`` (already in the stream's own total order)
    for i, (stream, _, value) in enumerate(ordered):
        if stream not in admitted:
            if value[2] == INSERT and len(admitted) < limit.max_streams:
                admitted.append(stream)
            else:
                verdicts[i] = CONTRIBUTION_BOUNDED if len(admitted) >= limit.max_streams else UNKNOWN_ENTRY
                continue
        buckets.setdefault(stream, []).append(i)
    for stream, positions in buckets.items():
        # bound_person sorts by order_key, a stable sort of a list already in that order: its decisions come
        # back in the order of ``positions`` (updates tied on the key are the same content, interchangeable)
        new, decisions = bound_person(per_stream.get(stream), [ordered[i][1:] for i in positions], limit)
        if new[1] or new[2]:  # a stream with only unknown-entry updates keeps no state
            per_stream[stream] = new
        for i, (_, _, reason) in zip(positions, decisions):
            verdicts[i] = reason
    decisions = [(stream, eid, value, verdicts[i]) for i, (stream, eid, value) in enumerate(ordered)]
    return (STREAMS_STATE_TAG, version, per_stream, tuple(admitted)), decisions


def _split(items, verdict: dict) -> tuple[list, list]:
    """``(accepted, refused)``: the items whose verdict (by position) is None, in order, and ``(item, reason)``
    for the others."""
    accepted, refused = [], []
    for i, item in enumerate(items):
        if verdict[i] is None:
            accepted.append(item)
        else:
            refused.append((item, verdict[i]))
    return accepted, refused


@state_class("contribution.person_bounder")
class PersonBounder:
    """The rule for the in-memory core: one state per person, updates as
    ``(person, Update)`` pairs of one tick (the core's ``Update`` has no seq, event time or raw
    record: the order is tick, op rank, item, entry id)."""

    def __init__(self, limit: PersonLimit):
        self.max_entries = int(limit.max_entries)
        self.window = limit.window
        self.persons: dict = {}

    @property
    def limit(self) -> PersonLimit:
        return PersonLimit(self.max_entries, self.window)

    def filter_tick(self, tick: int, updates) -> tuple[list[Update], list[tuple[str, object, Update]]]:
        """``(accepted, refused)``: the accepted updates in their given order (the registry's
        canonical order) and ``(reason, person, update)`` for the refused ones."""
        accepted, refused = self.bound_tick(tick, updates)
        return [u for _, u in accepted], [(reason, p, u) for (p, u), reason in refused]

    def bound_tick(self, tick: int, updates) -> tuple[list[tuple], list[tuple[tuple, str]]]:
        """``(accepted, refused)`` of one tick's ``(person, Update)`` pairs: the accepted pairs in their
        given order, and ``((person, update), reason)`` for the refused ones (in the given order). The
        updates must be well formed (an ``Update`` with a string entry id and a known op:
        ``static_reason`` of the registry is None)."""
        by_person: dict = {}
        for i, (person, u) in enumerate(updates):
            # a 7th element (ignored by order_key) carries the update's position
            by_person.setdefault(person, []).append((u.entry_id, (int(tick), 0, u.op, u.item, float(tick), None, i)))
        verdict: dict[int, str | None] = {}
        limit = self.limit
        for person, keyed in by_person.items():
            state, decisions = bound_person(self.persons.get(person), keyed, limit)
            if state[1] or state[2]:  # a person with only unknown-entry updates keeps no state
                self.persons[person] = state
            for _, value, reason in decisions:
                verdict[value[6]] = reason
        return _split(updates, verdict)


@state_class("contribution.person_streams_bounder")
class PersonStreamsBounder:
    """The rule across streams for the in-memory core (``max_streams``): one state per person whatever the stream,
    updates as ``(stream, person, Update)`` triples of one tick. It decides what reaches each stream's core; each
    stream's core (``ContinualRelease.process_tick`` under the person unit) then applies the per-stream rule to the
    admitted updates, which re-admits them all. The order within a tick is op rank, item, entry id, then the
    stream (the core's ``Update`` has no seq, event time or raw record), as ``PersonBounder``'s."""

    def __init__(self, limit: PersonLimit):
        if limit.max_streams is None:
            raise ValueError("PersonStreamsBounder needs a limit with max_streams")
        self.max_entries = int(limit.max_entries)
        self.window = limit.window
        self.max_streams = int(limit.max_streams)
        self.persons: dict = {}

    @property
    def limit(self) -> PersonLimit:
        return PersonLimit(self.max_entries, self.window, self.max_streams)

    def bound_tick(self, tick: int, items) -> tuple[list[tuple], list[tuple[tuple, str]]]:
        """``(accepted, refused)`` of one tick's ``(stream, person, Update)`` triples: the accepted ones in their
        given order, and ``((stream, person, update), reason)`` for the refused ones (in the given order)."""
        by_person: dict = {}
        for i, (stream, person, u) in enumerate(items):
            value = (int(tick), 0, u.op, u.item, float(tick), None, i)  # a 7th element carries the position
            by_person.setdefault(person, []).append((stream, u.entry_id, value))
        verdict: dict[int, str | None] = {}
        limit = self.limit
        for person, triples in by_person.items():
            state, decisions = bound_person_streams(self.persons.get(person), triples, limit)
            if state[2] or state[3]:
                self.persons[person] = state
            for _, _, value, reason in decisions:
                verdict[value[6]] = reason
        return _split(items, verdict)
