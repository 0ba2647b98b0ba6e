"""Contribution bounding for the person unit (issue 28, item 2): whole entries admitted in the
total order on updates, never half an entry, whatever the order of lines; against a brute-force
(declarative) reference, with hypothesis."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transforms.core import ZCDP, DynamicConfig, NoiseSource, QuerySet, Update
from transforms.core.continual.net_change import NetChangeRelease
from transforms.core.contribution import (
    CONTRIBUTION_BOUNDED,
    PERSON_STATE_VERSION,
    PersonBounder,
    PersonLimit,
    bound_person,
    new_person_state,
    order_key,
)
from transforms.core.foundation.state import StateError, decode, encode, from_plain, to_plain

OPS = ("insert", "upsert", "delete")


def reference(updates, limit: PersonLimit) -> list:
    """The rule, stated declaratively: in the total order, an entry's first insertion admits it
    if it is among the first ``max_entries`` first insertions of its window; its updates from
    there on share that verdict; an update before it (or of an entry never inserted) is refused
    as unknown."""
    ordered = sorted(updates, key=lambda u: order_key(u[0], u[1]))
    first: dict = {}
    for i, (eid, v) in enumerate(ordered):
        if v[2] == "insert" and eid not in first:
            first[eid] = i
    windows = defaultdict(list)
    for eid, i in first.items():
        windows[limit.window_of(ordered[i][1][0])].append((i, eid))
    admitted = {eid for lst in windows.values() for _, eid in sorted(lst)[: limit.max_entries]}
    out = []
    for i, (eid, v) in enumerate(ordered):
        if eid not in first or i < first[eid]:
            out.append((eid, v, "unknown_entry"))
        else:
            out.append((eid, v, None if eid in admitted else CONTRIBUTION_BOUNDED))
    return out


def value(tick, op, item=(0,), seq=0, event=None, raw=None):
    return (tick, seq, op, item, float(tick) if event is None else event, raw)


update_st = st.tuples(
    st.sampled_from([f"e{i}" for i in range(6)]),
    st.integers(1, 12),
    st.sampled_from(OPS),
    st.integers(0, 2),
    st.integers(0, 3),
    st.floats(0, 0.99),
)


def to_updates(raw):
    return [(eid, value(t, op, (x,), seq, t + frac, f"{eid}-{t}-{op}-{x}-{seq}")) for eid, t, op, x, seq, frac in raw]


@settings(max_examples=300, deadline=None)
@given(st.lists(update_st, max_size=40), st.integers(1, 3), st.sampled_from([None, 4]), st.randoms())
def test_rule_equals_the_reference_whatever_the_order_and_the_batching(raw, cap, window, rnd):
    limit = PersonLimit(cap, window)
    ups = to_updates(raw)
    want = reference(ups, limit)
    shuffled = list(ups)
    rnd.shuffle(shuffled)
    assert bound_person(None, shuffled, limit)[1] == want
    # tick by tick (each tick's updates in any order), the state carried between batches
    state, got = None, []
    for _, grp in itertools.groupby(sorted(ups, key=lambda u: u[1][0]), key=lambda u: u[1][0]):
        grp = list(grp)
        rnd.shuffle(grp)
        state, dec = bound_person(state, grp, limit)
        got += dec
    assert got == want


@settings(max_examples=200, deadline=None)
@given(st.lists(update_st, max_size=40), st.integers(1, 3))
def test_never_half_an_entry_and_never_over_the_limit(raw, cap):
    limit = PersonLimit(cap)
    state, dec = bound_person(None, to_updates(raw), limit)
    verdicts = defaultdict(set)
    seen_insert = set()
    for eid, v, reason in dec:
        if v[2] == "insert":
            seen_insert.add(eid)
        if eid in seen_insert:
            verdicts[eid].add(reason)
    assert all(len(r) == 1 for r in verdicts.values())  # one verdict per entry, from its insertion on
    admitted = [e for e, r in verdicts.items() if r == {None}]
    assert len(admitted) == min(cap, len(verdicts)) and len(state[1]) == len(admitted)


def test_a_person_over_the_limit_gets_exactly_the_first_entries_in_the_total_order():
    limit = PersonLimit(3)
    ups = []
    for i, eid in enumerate(["e4", "e1", "e3", "e0", "e2"]):  # first insertions at ticks 1..5
        ups += [(eid, value(i + 1, "insert")), (eid, value(i + 7, "upsert", (1,))), (eid, value(i + 20, "delete"))]
    ups.append(("e9", value(2, "insert", seq=1)))  # same tick as e1, later seq
    ups.append(("e8", value(2, "insert", seq=0, raw="z")))  # same tick and seq as e1: raw breaks the tie
    ups[3] = ("e1", value(2, "insert", seq=0, raw="a"))
    for seed in range(20):
        random.Random(seed).shuffle(ups)
        _, dec = bound_person(None, ups, limit)
        admitted = {e for e, _, r in dec if r is None}
        refused = {e for e, _, r in dec if r == CONTRIBUTION_BOUNDED}
        assert admitted == {"e4", "e1", "e8"} and refused == {"e3", "e0", "e2", "e9"}


def test_windows_admit_per_window_and_unknown_updates_are_refused():
    limit = PersonLimit(1, window=10)
    ups = [
        ("a", value(1, "insert")),
        ("b", value(5, "insert")),  # same window as a: refused
        ("c", value(11, "insert")),  # next window: admitted
        ("a", value(12, "delete")),  # a stays admitted past its window
        ("b", value(13, "delete")),  # refused with its entry
        ("z", value(3, "upsert")),  # never inserted by this person
    ]
    _, dec = bound_person(None, ups, limit)
    got = {(e, v[0]): r for e, v, r in dec}
    assert got == {
        ("a", 1): None,
        ("b", 5): CONTRIBUTION_BOUNDED,
        ("c", 11): None,
        ("a", 12): None,
        ("b", 13): CONTRIBUTION_BOUNDED,
        ("z", 3): "unknown_entry",
    }


def test_state_is_versioned_plain_data_and_the_input_state_is_not_modified():
    limit = PersonLimit(2)
    s0 = new_person_state()
    s1, _ = bound_person(s0, [("a", value(1, "insert")), ("b", value(1, "insert")), ("c", value(1, "insert"))], limit)
    assert s0 == (PERSON_STATE_VERSION, {}, {}, {})
    assert decode(encode(s1)) == s1
    assert s1 == (PERSON_STATE_VERSION, {"a": 0, "b": 0}, {"c": 0}, {0: 2})
    with pytest.raises(StateError):
        bound_person((0, {}, {}, {}), [], limit)
    b = PersonBounder(limit)
    b.filter_tick(1, [("p", Update("insert", "a", (0,)))])
    back = from_plain(to_plain(b))
    assert back.persons == b.persons and back.limit == limit


def test_order_key_is_the_pipelines_update_order():
    from transforms.common import update_order

    rng = np.random.default_rng(0)
    vals = []
    for _ in range(300):
        op = OPS[int(rng.integers(3))]
        raw = [None, "x", b"y", "a"][int(rng.integers(4))]
        vals.append(
            (int(rng.integers(1, 4)), int(rng.integers(3)), op, (int(rng.integers(2)),), float(rng.integers(2)), raw)
        )
    for v, w in itertools.product(vals[:60], vals[:60]):
        if update_order(v) != update_order(w):
            assert (update_order(v) < update_order(w)) == (order_key("e", v) < order_key("e", w))


def test_in_memory_person_unit_releases_the_truth_over_admitted_entries_with_noise_off():
    """Noise off: a release under the person unit is the truth over the admitted entries (as the
    registry resolves them); no person gets more than the limit."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = NetChangeRelease(DynamicConfig(q, ZCDP(1.0)), end_tick=20)
    bounder = PersonBounder(PersonLimit(2))
    rng = np.random.default_rng(5)
    live: dict = {}
    admitted: dict = defaultdict(set)
    for t in range(1, 21):
        ups = []
        for _ in range(3):
            p = f"p{int(rng.integers(3))}"
            eid = f"{p}-e{int(rng.integers(4))}"
            r = rng.random()
            if r < 0.4:
                ups.append((p, Update("insert", eid, (0, int(rng.integers(3))))))
            elif r < 0.7:
                ups.append((p, Update("upsert", eid, (0, int(rng.integers(3))))))
            else:
                ups.append((p, Update("delete", eid)))
        accepted, refused = bounder.filter_tick(t, ups)
        assert all(reason in (CONTRIBUTION_BOUNDED, "unknown_entry") for reason, _, _ in refused)
        res = core.process_tick(t, accepted, NoiseSource.disabled())
        rejected = [rej.update for rej in res.rejections]
        for u in accepted:
            if u in rejected:
                rejected.remove(u)
                continue
            if u.op == "insert":
                admitted[u.entry_id.split("-")[0]].add(u.entry_id)
            if u.op == "delete":
                live.pop(u.entry_id)
            else:
                live[u.entry_id] = u.item[1]
        n, h = [a for a in res.answers if a.tick == t]
        assert n.estimate[0] == len(live)
        assert list(h.estimate) == list(np.bincount(list(live.values()), minlength=3))
    assert all(len(v) <= 2 for v in admitted.values()) and sum(len(v) for v in admitted.values()) > 3
