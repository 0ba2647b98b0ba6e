"""Tick aggregates: the accepted updates of one (stream, tick) as multisets.

After the entry registry, a tick's accepted updates travel as a plain tuple
``(tick, inserts, deletes, n_updates)``: ``inserts`` ``{item: count}``,
``deletes`` ``{(item, insertion tick): count}``. A tick is order-free (the
mechanisms histogram its items), so the multisets are all it needs. Dicts,
tuples and ints are encoded by Beam's FastPrimitivesCoder without pickling,
and counting instead of listing keeps merges and shuffles small when items
repeat (a count query has one item).

Also here: :func:`resolve_entry`, one entry's updates resolved in (tick, seq)
order against its registry state, shared by the streaming and the bounded
registry steps so that both resolve exactly like the in-memory registry.

Pure Python; nothing here imports Apache Beam.
"""

from __future__ import annotations

import operator

from transforms.core.foundation.entries import DELETE, INSERT, TickBatch, Update, resolve

__all__ = [
    "fold",
    "in_tick_order",
    "to_batch",
    "valid_item",
    "resolve_entry",
    "TICK_SEQ",
]

TICK_SEQ = operator.itemgetter(0, 1)  # the order of an entry's updates: (tick, seq)


def fold(acc: dict, tick: int, inserts: dict, deletes: dict, n: int) -> None:
    """``acc[tick]``: ``[inserts, deletes, n_updates]``, summed in place (merging
    k aggregates stays linear in their sizes)."""
    cur = acc.get(tick)
    if cur is None:
        acc[tick] = [dict(inserts), dict(deletes), n]
        return
    for into, add in ((cur[0], inserts), (cur[1], deletes)):
        for k, c in add.items():
            into[k] = into.get(k, 0) + c
    cur[2] += n


def in_tick_order(acc: dict) -> tuple:
    """The aggregates of ``acc`` (tick -> [inserts, deletes, n]), in tick order."""
    return tuple((t, ins, dele, n) for t, (ins, dele, n) in sorted(acc.items()))


def to_batch(tick: int, inserts: dict, deletes: dict, n: int) -> TickBatch:
    """The :class:`TickBatch` a mechanism's ``apply`` takes."""
    return TickBatch.from_counts(tick, inserts, deletes, n)


def valid_item(item, domain_sizes) -> bool:
    """``item`` is a tuple of in-range ints, one per query set (what ``resolve``
    accepts)."""
    if type(item) is not tuple or len(item) != len(domain_sizes):
        return False
    for v, d in zip(item, domain_sizes):
        if type(v) is not int or not 0 <= v < d:
            return False
    return True


def resolve_entry(state, entry_id, updates, domain_sizes, deletions_allowed, max_mutations=None, into=None):
    """Resolve one entry's updates, given in (tick, seq) order, from ``state``.

    ``updates``: tuples ``(tick, seq, op, item, event_time, ...)`` (fields after the fifth are carried, not
    read: the pipelines' tuples hold the record as received there). Returns the new
    state, the accepted updates summed per tick (``into`` if given: tick ->
    ``[inserts, deletes, n]``, see :func:`fold`), the rejections as
    ``(reason, update)`` pairs (the update tuple as given) and the number of accepted updates. The common
    cases (insert of a new entry, delete of a live one without a mutation
    limit) take a shortcut that decides them as ``resolve`` does; everything
    else goes through ``resolve``.
    """
    batches: dict[int, list] = {} if into is None else into
    dead = []
    plain_id = type(entry_id) is str and bool(entry_id)
    unlimited = max_mutations is None
    accepted = 0
    for value in updates:
        tick, op, item = value[0], value[2], value[3]  # (tick, seq, op, item, event_time, ...)
        if plain_id and op == INSERT and state is None and valid_item(item, domain_sizes):
            state, ins, dele, n = (item, tick, 1), item, None, 1
        elif plain_id and unlimited and op == DELETE and state is not None and deletions_allowed:
            state, ins, dele, n = None, None, (state[0], state[1]), 1
        else:
            new, ins, dele, n, reason = resolve(
                state, Update(op, entry_id, item), tick, domain_sizes, deletions_allowed, max_mutations
            )
            if reason:
                dead.append((reason, value))
                continue
            state = new
        cur = batches.get(tick)
        if cur is None:
            cur = batches[tick] = [{}, {}, 0]
        if ins is not None:
            cur[0][ins] = cur[0].get(ins, 0) + 1
        if dele is not None:
            cur[1][dele] = cur[1].get(dele, 0) + 1
        cur[2] += n
        accepted += n
    return state, batches, dead, accepted
