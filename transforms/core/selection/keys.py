"""Contribution bounding for open keys: a person contributes to at most ``max_keys_per_person`` keys
(issue 33; ``docs/open_keys.md``).

On top of the person unit (:class:`~transforms.core.contribution.bounding.PersonBounder`: at most
``max_entries`` admitted entries per person, every update of a refused entry refused), one person's
updates of one period, in the person unit's total order (tick, op rank, item, entry id), are decided
here. The rule is first-come, a pure function of the person's own records:

* a key takes one of the person's ``K`` *slots* at the first accepted insertion (or upsert) of an
  entry into it; an insertion or upsert into a new key when the ``K`` slots are taken is refused,
  reason ``contribution_bounded``. A slot is taken for good (a key the person left keeps its slot):
  so the person's keys are at most ``K`` over the whole release. A delete or upsert of an entry whose
  insertion was refused so (and that is not live) is refused with the same reason, not as
  ``unknown_entry``: the input is not wrong, the bound is by design (what is admitted is unchanged);
* an entry makes at most ``max_mutations`` mutations (insert, upsert, delete each count one; a deleted
  entry id keeps counting if it comes back): else ``constraint_exceeded``; ``unknown_entry`` for a
  delete or upsert of an entry that is not live, ``duplicate_insert`` for an insert of a live one;
* the person is a *contributor* of a key once: +1 when their first live entry of the key appears,
  -1 when their last one goes; a later return to that key adds entries (the answers count them) but
  no contributor (the selection counter of a key sees one +1 and one -1 of a person at most).

The outputs are per key ``(key, contributor change, live entry change)`` events (:data:`KeyEvent`),
what a Beam step keyed by candidate key consumes. A reason names the rule, never the key or person.

The person's state is plain data, versioned: ``{"v": 1, "bound": the PersonBounder state,
"entries": {entry id: [key or None when deleted, mutations]}, "keys": {key: live entries},
"left": [keys whose contribution ended], "refused": [entry ids refused contribution_bounded] (only when
some are)}``. Nothing here imports Apache Beam.
"""

from __future__ import annotations

from transforms.core.contribution.bounding import CONTRIBUTION_BOUNDED, PersonBounder, PersonLimit
from transforms.core.foundation.entries import DELETE, INSERT, UPSERT, Update
from transforms.core.foundation.state import StateError

__all__ = [
    "KEYS_STATE_VERSION",
    "KeyLimit",
    "PersonKeys",
    "new_keys_state",
    "key_of",
    "CONTRIBUTION_BOUNDED",
    "UNKNOWN_ENTRY",
    "DUPLICATE_INSERT",
    "CONSTRAINT_EXCEEDED",
]

KEYS_STATE_VERSION = 1
UNKNOWN_ENTRY = "unknown_entry"
DUPLICATE_INSERT = "duplicate_insert"
CONSTRAINT_EXCEEDED = "constraint_exceeded"


class KeyLimit:
    """``max_keys`` per person (``K``), ``max_entries`` (``L``) and ``max_mutations`` (``k``) per entry."""

    __slots__ = ("max_keys", "max_entries", "max_mutations")

    def __init__(self, max_keys: int, max_entries: int, max_mutations: int):
        for name, v in (
            ("max_keys_per_person", max_keys),
            ("max_entries", max_entries),
            ("max_mutations", max_mutations),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.max_keys, self.max_entries, self.max_mutations = max_keys, max_entries, max_mutations

    def __repr__(self) -> str:  # deterministic: it keys the release's noise (noise.config_digest)
        return f"KeyLimit(max_keys={self.max_keys}, max_entries={self.max_entries}, max_mutations={self.max_mutations})"

    def __eq__(self, other) -> bool:
        return isinstance(other, KeyLimit) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    @property
    def group(self) -> int:
        """Updates one person accounts for in the answers: ``L (2k - 1)`` (an upsert is two)."""
        return self.max_entries * (2 * self.max_mutations - 1)


def key_of(u: Update):
    """The open key of an update: the first element of its item (None for a delete)."""
    return None if u.item is None else u.item[0]


def new_keys_state() -> dict:
    return {"v": KEYS_STATE_VERSION, "bound": None, "entries": {}, "keys": {}, "left": []}


def _check(state) -> dict:
    if state is None:
        return new_keys_state()
    if type(state) is not dict or state.get("v") != KEYS_STATE_VERSION:
        raise StateError(f"not a person key state of version {KEYS_STATE_VERSION}: a {type(state).__name__}")
    return state


class PersonKeys:
    """The rule of the module docstring over a dict of person states (in-memory; a Beam step holds one
    state per person and calls :meth:`decide_person`)."""

    def __init__(self, limit: KeyLimit):
        self.limit = limit
        self._bounder = PersonBounder(PersonLimit(limit.max_entries))
        self.persons: dict = {}

    def decide_tick(self, tick: int, updates) -> tuple[list, list, list]:
        """One period's ``(person, Update)`` pairs -> ``(accepted pairs, refused ((person, update), reason),
        key events [(key, d_contributors, d_entries)])``."""
        by_person: dict = {}
        for pair in updates:
            by_person.setdefault(pair[0], []).append(pair)
        accepted, refused, events = [], [], []
        for person, pairs in by_person.items():
            state, acc, ref, ev = self.decide_person(self.persons.get(person), tick, pairs)
            if state["entries"] or state["keys"] or state["left"] or state.get("refused") or state["bound"] is not None:
                self.persons[person] = state
            accepted += acc
            refused += ref
            events += ev
        return accepted, refused, events

    def decide_person(self, state, tick: int, pairs) -> tuple[dict, list, list, list]:
        """One person's updates of one period (pairs ``(person, Update)``) from ``state`` (not modified):
        ``(new state, accepted, refused, events)``."""
        st = _check(state)
        entries = {e: list(v) for e, v in st["entries"].items()}
        keys, left = dict(st["keys"]), list(st["left"])
        bounded = set(st.get("refused", ()))  # entry ids whose insertion was refused contribution_bounded
        bounder = self._bounder
        bounder.persons = {} if st["bound"] is None else {pairs[0][0]: st["bound"]}
        ok, refused = bounder.bound_tick(tick, pairs)
        bound_state = bounder.persons.get(pairs[0][0], st["bound"])
        changes: dict = {}  # key -> [d contributors, d entries]

        def move(key, d):
            n = keys.get(key, 0) + d
            c = changes.setdefault(key, [0, 0])
            c[1] += d
            if key in left:
                keys[key] = n
            elif n == 1 and d == 1:
                c[0] += 1
            elif n == 0:
                c[0] -= 1
                left.append(key)
            if n:
                keys[key] = n
            else:
                keys.pop(key, None)

        accepted = []
        for person, u in sorted(ok, key=lambda pu: _rank(pu[1])):
            reason = self._reason(entries, keys, left, u)
            if reason == UNKNOWN_ENTRY and u.entry_id in bounded:
                reason = CONTRIBUTION_BOUNDED  # its insertion took no slot: the bound, not a wrong input
            elif reason == CONTRIBUTION_BOUNDED and u.op == INSERT:
                bounded.add(u.entry_id)
            elif reason is None and u.op == INSERT:
                bounded.discard(u.entry_id)  # admitted after all (into a key of its slots)
            if reason is not None:
                refused.append(((person, u), reason))
                continue
            old = entries.get(u.entry_id)
            if old is None:
                old = entries[u.entry_id] = [None, 0]
            new_key = key_of(u) if u.op != DELETE else None
            if old[0] != new_key:  # an upsert within its key moves nothing
                if old[0] is not None:
                    move(old[0], -1)
                if new_key is not None:
                    move(new_key, +1)
            old[0], old[1] = new_key, old[1] + 1
            accepted.append((person, u))
        new = {"v": KEYS_STATE_VERSION, "bound": bound_state, "entries": entries, "keys": keys, "left": left}
        if bounded:
            new["refused"] = sorted(bounded, key=repr)
        events = [(k, c[0], c[1]) for k, c in changes.items() if c[0] or c[1]]
        return new, accepted, refused, events

    def _reason(self, entries, keys, left, u: Update) -> str | None:
        e = entries.get(u.entry_id)
        live = e is not None and e[0] is not None
        if e is not None and e[1] >= self.limit.max_mutations:
            return CONSTRAINT_EXCEEDED
        if u.op == INSERT and live:
            return DUPLICATE_INSERT
        if u.op in (DELETE, UPSERT) and not live:
            return UNKNOWN_ENTRY
        if u.op == DELETE:
            return None
        key = key_of(u)
        if key not in keys and key not in left and len(set(keys).union(left)) >= self.limit.max_keys:
            return CONTRIBUTION_BOUNDED
        return None


_OP_RANK = {INSERT: 0, UPSERT: 1, DELETE: 2}


def _rank(u: Update) -> tuple:
    """The person unit's order within one tick: op rank, item, entry id (``order_key`` without the tick)."""
    return (_OP_RANK.get(u.op, 3), repr(u.item), u.entry_id)
