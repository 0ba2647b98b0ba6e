"""Plain state fields (``@state_class(name, plain=...)``) are never shared (brief h46a).

A plain field is copied as a container, its elements (immutable by declaration) not walked. The promise the
state module keeps to an in-memory caller: a state taken (``to_plain`` / ``to_state``) does not follow the object
as it goes on, and an object restored (``restore`` / ``from_plain`` / ``from_state``) from a plain dict does not
write into that dict, so two objects restored from one plain dict are independent. The Beam steps decode fresh
bytes at every wake; the in-memory callers (a local run forked from a state, tests, benchmarks) are the ones
exposed. The classes with plain fields (declared by keyword or positionally): the fully-dynamic mechanism
(``pending_ins`` a Counter updated in place, ``pending_del`` a list appended to, ``_chain`` / ``_chain_his``
replaced at every close, never updated), the entry registry every mechanism's ``process_tick`` keeps (``entries`` and
``tombstones``, dicts updated in place; ``domain_sizes`` a tuple) and the noise profile (``terms``, a dict filled
only while a new profile is built).

Every check has a broken twin that must fail: plain fields stored as they are (no copy on the way out), and the
former restore, which handed the plain dict's lists and dicts to the object.
"""

import copy
from collections import Counter

import pytest

from transforms.core import DynamicConfig, FullyDynamicRelease, NoiseSource, QuerySet
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import PureDP
from transforms.core.foundation.entries import EntryRegistry, Update
from transforms.core.foundation.state import decode, encode, from_plain, restore, state_class, to_plain

CFG = DynamicConfig(
    (QuerySet("active", "count"), QuerySet("cell", "histogram", domain_size=3)), PureDP(2.0), profile="paper"
)
NOISE = NoiseSource(bytes(range(32)))  # noise on: continuations from one state agree draw for draw
T0, T1 = 9, 17  # the state is taken after tick T0 (deletions and insertions pending), the runs go on to T1


def _updates(t: int) -> list:
    """Tick ``t``'s updates, the same whatever the mechanism's state: three insertions, the deletions of entries
    from five and eight ticks before (a (node, item) in ``pending_del`` once their segment closed, else a cancelled
    insertion in ``pending_ins``), and on even ticks the deletion of one of the previous tick's entries."""
    ups = [Update("insert", f"e{t}_{j}", (0, (t + j) % 3)) for j in range(3)]
    if t > 5:
        ups.append(Update("delete", f"e{t - 5}_0"))
    if t > 8:
        ups.append(Update("delete", f"e{t - 8}_2"))
    if t % 2 == 0:
        ups.append(Update("delete", f"e{t - 1}_1"))
    return ups


def _run(mech, ticks) -> list:
    """The answers (tick, query, value) of ``mech`` over ``ticks``."""
    out = []
    for t in ticks:
        res = mech.process_tick(t, _updates(t), NOISE)
        out += [(a.tick, a.segment, a.query, a.estimate.tolist(), a.error_bound) for a in res.answers]
    return out


def _mid_stream():
    mech = FullyDynamicRelease(CFG)
    _run(mech, range(1, T0 + 1))
    # the state is taken with every plain field in use (else the checks below would check nothing)
    assert mech.pending_del and sum(mech.pending_ins.values()) > 0 and mech._chain, mech.state_size()
    return mech


def check_taken_state_does_not_follow_the_mechanism():
    mech = _mid_stream()
    state, body = mech.to_state(), to_plain(mech)
    frozen, frozen_body, raw = copy.deepcopy(state), copy.deepcopy(body), encode(state)
    answers = _run(mech, range(T0 + 1, T1 + 1))
    assert answers  # segments closed in between (pending fields replaced, not only updated)
    assert state == frozen, "the state taken in memory changed as the mechanism went on"
    assert body == frozen_body, "to_plain's output changed as the mechanism went on"
    assert encode(state) == raw


def check_restores_from_one_plain_dict_are_independent():
    mech = _mid_stream()
    state = mech.to_state()
    frozen = copy.deepcopy(state)
    a = FullyDynamicRelease.from_state(CFG, state)
    b = FullyDynamicRelease.from_state(CFG, state)
    want = _run(FullyDynamicRelease.from_state(CFG, decode(encode(frozen))), range(T0 + 1, T1 + 1))  # fresh bytes
    got_a = _run(a, range(T0 + 1, T1 + 1))
    assert state == frozen, "a restored mechanism wrote into the caller's plain dict"
    assert to_plain(b) == frozen["body"], "stepping one restored mechanism changed another"
    got_b = _run(b, range(T0 + 1, T1 + 1))
    assert got_a == want and got_b == want, "continuations from one state differ"
    assert want == _run(mech, range(T0 + 1, T1 + 1))  # and they continue the original


def check_registry_restores_are_independent():
    """The entry registry (plain ``entries`` and ``tombstones``, both updated in place), under a mutation limit
    so that deleted ids leave tombstones: a restored registry must not see another's entries."""
    reg = EntryRegistry((3,), max_mutations=3)
    reg.resolve_tick(1, [Update("insert", f"r{i}", (i % 3,)) for i in range(4)])
    reg.resolve_tick(2, [Update("delete", "r0")])
    plain = to_plain(reg)
    frozen = copy.deepcopy(plain)
    assert frozen["f"]["entries"] and frozen["f"]["tombstones"]
    one, two = restore(plain), restore(plain)
    batch, rejected = one.resolve_tick(
        3, [Update("insert", "r9", (0,)), Update("delete", "r1"), Update("insert", "r0", (1,))]
    )
    assert plain == frozen, "a restored registry wrote into the caller's plain dict"
    assert to_plain(two) == frozen, "two registries restored from one plain dict share their entries"
    # so the other one resolves the same tick the same way (it would reject r9 as a duplicate, r1 as unknown)
    assert two.resolve_tick(
        3, [Update("insert", "r9", (0,)), Update("delete", "r1"), Update("insert", "r0", (1,))]
    ) == (
        batch,
        rejected,
    )


def check_plain_containers_are_copied_both_ways():
    """The state module itself, on a class with a list, a dict and a Counter in plain fields."""
    holder = _Holder()
    plain = to_plain(holder)
    frozen = copy.deepcopy(plain)
    holder.bump()
    assert plain == frozen, "to_plain shares a plain field with the object"
    for rebuild in (restore, from_plain):
        one, two = rebuild(plain), rebuild(plain)
        one.bump()
        assert plain == frozen, f"{rebuild.__name__} hands the plain dict's containers to the object"
        assert to_plain(two) == frozen, f"two objects from one plain dict share a container ({rebuild.__name__})"
        assert type(two.tally) is Counter and two.rows == [(1, 2)] and two.index == {"a": 1}


@state_class("test_h46a.holder", plain=("rows", "index", "tally"))
class _Holder:
    def __init__(self):
        self.rows, self.index, self.tally = [(1, 2)], {"a": 1}, Counter({(0, 1): 2})

    def bump(self):
        self.rows.append((3, 4))
        self.index["b"] = 2
        self.tally[(0, 1)] += 1


CHECKS = [
    check_taken_state_does_not_follow_the_mechanism,
    check_restores_from_one_plain_dict_are_independent,
    check_registry_restores_are_independent,
    check_plain_containers_are_copied_both_ways,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_plain_fields_are_not_shared(check):
    check()


# -- the broken twins ------------------------------------------------------------------------------------------


def _former_plain_in(v):
    """The restore before brief h46a: a Counter rebuilt, every other plain value handed over as stored."""
    return Counter(v["$c"]) if type(v) is dict and len(v) == 1 and "$c" in v else v


def _stored_as_they_are(v):
    """A break: plain fields stored without a copy (what ``state_class``'s docstring once said)."""
    return {"$c": v} if type(v) is Counter else v


@pytest.mark.parametrize(
    "check, patch",
    [
        (check_taken_state_does_not_follow_the_mechanism, ("_plain_out", _stored_as_they_are)),
        (check_restores_from_one_plain_dict_are_independent, ("_plain_in", _former_plain_in)),
        (check_registry_restores_are_independent, ("_plain_in", _former_plain_in)),
        (check_plain_containers_are_copied_both_ways, ("_plain_out", _stored_as_they_are)),
        (check_plain_containers_are_copied_both_ways, ("_plain_in", _former_plain_in)),
    ],
    ids=[
        "taken-state/no-copy-out",
        "two-restores/former-restore",
        "registry/former-restore",
        "holder/no-copy-out",
        "holder/former-restore",
    ],
)
def test_broken_twin_fails(check, patch, monkeypatch):
    monkeypatch.setattr(state_mod, *patch)
    with pytest.raises(AssertionError):
        check()


# -- found on the way, not fixed here (a change of the stored format: the lead's decision) ---------------------
# The tagged forms are recognised by their keys alone, and a dict whose keys are data is stored as it is: a plain
# dict field whose only key is "$c" comes back as a Counter of its value, and a walked dict holding the key "$o",
# "$r", "$nd" or "$c" among others comes back as an object, a reference, an array or a Counter. Entry ids and person
# ids are such keys (the in-memory ``process_tick`` path: its registry and person rule are in the mechanism's state;
# the Beam steps keep neither there). strict: each turns into a failure once the format escapes such keys.


@pytest.mark.xfail(
    strict=True, raises=AssertionError, reason="a plain dict field {'$c': ...} is restored as a Counter (entry id '$c')"
)
def test_entry_id_dollar_c_survives_a_state_round_trip():
    reg = EntryRegistry((3,))
    reg.resolve_tick(1, [Update("insert", "$c", (1,))])
    back = restore(decode(encode(to_plain(reg))))
    assert back.entries == {"$c": ((1,), 1, 1)}, back.entries  # got Counter({1: 2, (1,): 1})


@pytest.mark.xfail(
    strict=True, raises=TypeError, reason="a walked dict with the key '$r' is read as a reference (person id '$r')"
)
def test_person_id_dollar_r_survives_a_state_round_trip():
    from transforms.core.contribution.bounding import PersonBounder, PersonLimit

    bounder = PersonBounder(PersonLimit(2, None))
    bounder.bound_tick(1, [("$r", Update("insert", "a", (0,))), ("bob", Update("insert", "b", (0,)))])
    plain = to_plain(bounder)
    assert to_plain(restore(decode(encode(plain)))) == plain  # TypeError: unhashable type: 'dict'
