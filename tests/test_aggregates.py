"""``transforms/core/foundation/aggregates.py``: the tick aggregates the Beam registry steps ship, checked against
the in-memory reference (``entries.resolve`` applied one update at a time) without Beam (issue 27: the core
module's mutants had no test in the fast tier)."""

from __future__ import annotations

import random

import pytest

from transforms.core.foundation.aggregates import TICK_SEQ, fold, in_tick_order, resolve_entry, to_batch, valid_item
from transforms.core.foundation.entries import DELETE, INSERT, UPSERT, MutationLimit, TickBatch, Update, resolve

DOMAINS = (3, 2)


def _reference(state, entry_id, updates, domain_sizes, deletions_allowed, max_mutations):
    """One update at a time through ``resolve``: the state, tick -> [inserts, deletes, n], rejections, count."""
    batches, dead, accepted = {}, [], 0
    for value in updates:
        tick, _, op, item, _ = value
        state, ins, dele, n, reason = resolve(
            state, Update(op, entry_id, item), tick, domain_sizes, deletions_allowed, max_mutations
        )
        if reason:
            dead.append((reason, value))
            continue
        cur = batches.setdefault(tick, [{}, {}, 0])
        if ins is not None:
            cur[0][ins] = cur[0].get(ins, 0) + 1
        if dele is not None:
            cur[1][dele] = cur[1].get(dele, 0) + 1
        cur[2] += n
        accepted += n
    return state, batches, dead, accepted


def _random_updates(rng, n):
    items = [(a, b) for a in range(DOMAINS[0]) for b in range(DOMAINS[1])] + [(3, 0), (0,), [0, 1], (0, True)]
    out, tick = [], 1
    for seq in range(n):
        tick += rng.choice((0, 0, 1, 2))
        op = rng.choice((INSERT, INSERT, DELETE, UPSERT, "bogus"))
        item = None if op == DELETE else rng.choice(items)
        out.append((tick, seq, op, item, None))
    return out


@pytest.mark.parametrize("entry_id", ["e1", "", 7])
@pytest.mark.parametrize("deletions_allowed", [True, False])
@pytest.mark.parametrize("max_mutations", [None, 1, 3, MutationLimit(None, 2), MutationLimit(3, 4)])
def test_resolve_entry_equals_resolving_one_update_at_a_time(entry_id, deletions_allowed, max_mutations):
    """The shortcuts (a new entry's insert, a live entry's delete without a limit) decide exactly as
    ``resolve``: same final state, same per-tick multisets and counts, same rejections in the same order."""
    rng = random.Random(f"{entry_id}{deletions_allowed}{max_mutations}")
    for _ in range(60):
        updates = _random_updates(rng, rng.randint(1, 9))
        for state in (None, ((1, 0), 0, 1)):
            got = resolve_entry(state, entry_id, updates, DOMAINS, deletions_allowed, max_mutations)
            ref = _reference(state, entry_id, updates, DOMAINS, deletions_allowed, max_mutations)
            assert got[1:] == ref[1:]
            assert _same_state(got[0], ref[0])


def _same_state(got, ref) -> bool:
    """Equal, or the shortcut's 3-tuple (item, tick, mutations) of a first insertion where ``resolve`` also
    keeps the first insertion's tick (then that tick) and the insertion count (then 1): ``resolve`` reads a
    3-tuple state exactly so (``entries.resolve``)."""
    if got is None or ref is None or len(got) == len(ref):
        return got == ref
    return len(got) == 3 and got == ref[:3] and ref[3] in (None, got[1]) and ref[4:] in ((), (1,))


def test_resolve_entry_adds_into_the_given_aggregates():
    into = {5: [{(0, 0): 2}, {}, 2]}
    state, batches, dead, accepted = resolve_entry(
        None, "e", [(5, 0, INSERT, (0, 0), None), (6, 1, DELETE, None, None)], DOMAINS, True, into=into
    )
    assert batches is into
    assert into == {5: [{(0, 0): 3}, {}, 3], 6: [{}, {((0, 0), 5): 1}, 1]}
    assert (state, dead, accepted) == (None, [], 2)


def test_fold_sums_aggregates_of_a_tick_and_keeps_the_input_unchanged():
    acc: dict = {}
    ins, dele = {(1, 0): 1}, {((0, 0), 2): 1}
    fold(acc, 4, ins, dele, 2)
    fold(acc, 4, {(1, 0): 2, (2, 1): 1}, {}, 3)
    fold(acc, 3, {}, {((0, 0), 2): 4}, 4)
    assert acc == {4: [{(1, 0): 3, (2, 1): 1}, {((0, 0), 2): 1}, 5], 3: [{}, {((0, 0), 2): 4}, 4]}
    assert ins == {(1, 0): 1} and dele == {((0, 0), 2): 1}  # copied, not aliased
    assert in_tick_order(acc) == (
        (3, {}, {((0, 0), 2): 4}, 4),
        (4, {(1, 0): 3, (2, 1): 1}, {((0, 0), 2): 1}, 5),
    )


def test_to_batch_is_the_batch_of_the_multisets():
    b = to_batch(7, {(1, 0): 2}, {((0, 1), 3): 1}, 3)
    assert b == TickBatch(7, [(1, 0), (1, 0)], [((0, 1), 3)], 3)
    assert TICK_SEQ((4, 9, "x")) == (4, 9)


@pytest.mark.parametrize(
    ("item", "ok"),
    [
        ((0, 0), True),
        ((2, 1), True),
        ((3, 0), False),
        ((0, 2), False),
        ((-1, 0), False),
        ((0,), False),
        ((0, 0, 0), False),
        ([0, 0], False),
        ((0, True), False),
        ((0.0, 0), False),
    ],
)
def test_valid_item_is_a_tuple_of_in_range_ints(item, ok):
    assert valid_item(item, DOMAINS) is ok
