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


# -- data keys that look like tags (schema 2) ----------------------------------------------------------------------
# Schema 1 recognised the tagged forms by their keys alone and stored a dict whose keys are data as it was: a plain
# dict field whose only key was "$c" came back as a Counter of its value, and a walked dict holding "$o", "$r", "$nd"
# or "$c" among others as an object, a reference, an array or a Counter. Entry ids and person ids are such keys (the
# in-memory ``process_tick`` path keeps its registry and person rule in the mechanism's state). Schema 2 escapes such
# dicts as ``{"$d": [(key, value), ...]}`` and migrates schema 1 bodies (a data key "$d", the one schema 1 read back).

TAGS = ("$o", "$r", "$nd", "$c", "$d", "$i", "f")


def test_entry_id_dollar_c_survives_a_state_round_trip():
    reg = EntryRegistry((3,))
    reg.resolve_tick(1, [Update("insert", "$c", (1,))])
    back = restore(decode(encode(to_plain(reg))))
    assert back.entries == {"$c": ((1,), 1, 1)}, back.entries  # schema 1: Counter({1: 2, (1,): 1})
    assert type(back.entries) is dict


def test_person_id_dollar_r_survives_a_state_round_trip():
    from transforms.core.contribution.bounding import PersonBounder, PersonLimit

    bounder = PersonBounder(PersonLimit(2, None))
    bounder.bound_tick(1, [("$r", Update("insert", "a", (0,))), ("bob", Update("insert", "b", (0,)))])
    plain = to_plain(bounder)
    assert to_plain(restore(decode(encode(plain)))) == plain  # schema 1: TypeError: unhashable type: 'dict'


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("others", [0, 1, 3])
def test_every_tag_as_an_entry_id_survives_in_a_plain_field_and_a_walked_dict(tag, others):
    """A registry's plain ``entries`` dict, and the same dict walked (inside a list and as a tuple's member, where
    ``_to_plain`` walks it), with the tag as one key among ``others``: equal after a round trip, of type dict."""
    reg = EntryRegistry((3,))
    ids = [tag] + [f"e{i}" for i in range(others)]
    reg.resolve_tick(1, [Update("insert", e, (i % 3,)) for i, e in enumerate(ids)])
    back = restore(decode(encode(to_plain(reg))))
    assert back.entries == reg.entries and type(back.entries) is dict
    walked = {
        "$c" if tag == "$d" else tag: {e: (i, [e]) for i, e in enumerate(ids)},
        **{e: i for i, e in enumerate(ids)},
    }
    for data in ([walked], (1, walked), [Counter({tag: 2, "x": 1})]):
        assert restore(decode(encode(to_plain(data)))) == data


def test_dicts_without_tag_keys_are_stored_as_before():
    """The escape costs nothing where it is not needed: the bytes of a state without such keys are schema 1's."""
    reg = EntryRegistry((3,))
    reg.resolve_tick(1, [Update("insert", "a$c", (1,)), Update("insert", "$x", (2,))])
    plain = to_plain(reg)
    assert "$d" not in repr(plain)
    assert to_plain({"a": {"b": 1}, "$x": [1]}) == {"a": {"b": 1}, "$x": [1]}


def _unescaped(monkeypatch):
    """Broken twin: schema 1's writer (dicts stored as they are) and reader (no escaped form)."""
    orig = state_mod._to_plain

    def to_plain_v1(obj, memo):
        if type(obj) is dict:
            return {orig(k, memo): orig(v, memo) for k, v in obj.items()}
        return orig(obj, memo)

    monkeypatch.setattr(state_mod, "_to_plain", to_plain_v1)
    monkeypatch.setattr(
        state_mod,
        "_plain_out",
        lambda v: {"$c": dict(v)} if type(v) is Counter else (type(v)(v) if type(v) in (dict, list) else v),
    )


def test_broken_twin_without_the_escape_fails(monkeypatch):
    _unescaped(monkeypatch)
    with pytest.raises((AssertionError, TypeError, KeyError, ValueError, state_mod.StateError)):
        test_entry_id_dollar_c_survives_a_state_round_trip()
    with pytest.raises((AssertionError, TypeError, KeyError, ValueError, state_mod.StateError)):
        test_person_id_dollar_r_survives_a_state_round_trip()


def test_a_schema_1_state_with_a_dollar_d_entry_id_migrates():
    """Schema 1 wrote an entry id "$d" as a plain key (it read back then); the migration escapes it, and a Counter's
    "$d" key (its dict is data under either schema) is left as it is; the body is otherwise unchanged."""
    reg = EntryRegistry((3,))
    reg.resolve_tick(1, [Update("insert", "$d", (1,))])
    body_v2 = to_plain([reg, Counter({"$d": 3}), {"k": "$d"}])
    # the schema 1 body: the escaped forms as schema 1 wrote them (plain dicts as they were)
    entries_v2 = body_v2[0]["f"]["entries"]
    assert entries_v2 == {"$d": [("$d", ((1,), 1, 1))]}
    body_v1 = [
        {**body_v2[0], "f": {**body_v2[0]["f"], "entries": {"$d": ((1,), 1, 1)}}},
        body_v2[1],
        body_v2[2],
    ]
    old = {"schema": 1, "mechanism": "m", "config": "c", "body": body_v1}
    migrated = state_mod.open_envelope(old, "m", "c")
    assert migrated == body_v2
    back = restore(migrated)
    assert back[0].entries == {"$d": ((1,), 1, 1)} and back[1] == Counter({"$d": 3}) and back[2] == {"k": "$d"}
    # twin: schema 1's body read without the migration does not give the entry back
    with pytest.raises(ValueError):
        restore(body_v1)


@state_class("test.migrate_box", plain=("data",))
class _Box:
    """A registered class whose plain field holds nested data (the migration must not walk into it)."""

    def __init__(self, data):
        self.data = data


NESTED_PLAIN = [{"x": {"$d": 1}}, [{"$d": 1}], {"$d": {"$d": 1}}, {"$d": 1}, {"$d": 1, "y": {"$d": 2}}, {"a": 1}]


@pytest.mark.parametrize("value", NESTED_PLAIN, ids=range(len(NESTED_PLAIN)))
def test_the_migration_reads_a_plain_field_as_schema_1_read_it(value, monkeypatch):
    """A schema 1 object whose plain field holds ``value`` (schema 1 read it back as it was, ``_plain_in``)
    restores to the same value after the migration, and a state taken again is schema 2's own form; twin: a
    migration that walks into the plain field (as into any dict) changes the nested ``"$d"`` dicts."""
    monkeypatch.setitem(state_mod._PLAIN_V1, "test.migrate_box", frozenset({"data"}))  # as if a schema 1 class
    v1 = {
        "schema": 1,
        "mechanism": "m",
        "config": "c",
        "body": {"$o": "test.migrate_box", "$i": 0, "f": {"data": value}},
    }
    body = state_mod.open_envelope(copy.deepcopy(v1), "m", "c")
    assert restore(body).data == value
    assert body == to_plain(_Box(copy.deepcopy(value)))
    monkeypatch.setattr(state_mod, "_escape_plain_v1", state_mod._escape_v1)
    walked = restore(state_mod.open_envelope(copy.deepcopy(v1), "m", "c")).data
    assert (walked == value) == (value in ({"$d": 1}, {"a": 1})), walked


def test_a_counter_with_tag_keys_survives_a_reference_before_its_definition():
    """A reference read before its object's definition makes the restore index every definition
    (``_instances``): a Counter's keys are data there, even "$o" and "$i" (it failed with a KeyError)."""
    reg = EntryRegistry((3,))
    reg.resolve_tick(1, [Update("insert", "a", (1,))])
    for counts in ({"$o": 2}, {"$o": 1, "$i": 0}, {"$r": 5, "$nd": 1}):
        data = [{"$r": 0}, to_plain(Counter(counts)), to_plain(reg)]
        back = restore(decode(encode(data)))
        assert back[0] is back[2] and back[2].entries == reg.entries and back[1] == Counter(counts)


def test_a_malformed_escaped_dict_is_a_state_error():
    with pytest.raises(state_mod.StateError, match="malformed escaped dict"):
        restore([{"$d": 5}])


@pytest.mark.parametrize(
    "counts",
    [{"$c": {"$d": 1}}, {"$o": "registry.entries", "f": {"entries": [{"$d": 1}]}}, {"k": {"$d": 2, "x": 1}}],
    ids=["counter-key-$c", "object-like-key", "plain-key"],
)
def test_a_counter_of_dicts_migrates_as_schema_1_read_it(counts):
    """A Counter whose values are dicts holding "$d" (schema 1 walked them as data): its body is data under either
    schema, never read as a Counter or an object form itself; after the migration it restores equal."""
    counter = Counter(counts)
    v1 = {"schema": 1, "mechanism": "m", "config": "c", "body": [{"$c": dict(counts)}]}
    body = state_mod.open_envelope(copy.deepcopy(v1), "m", "c")
    assert restore(body) == [counter]
    assert body == to_plain([counter])


def test_the_migration_reads_schema_1s_plain_fields_not_the_registry(monkeypatch):
    """``_PLAIN_V1`` is schema 1's table (the registry's plain fields today, per state name), and the migration reads
    it, not the live registry: with the registry's plain fields gone (a later rename), a registry's plain field of
    nested dicts migrates the same."""
    import transforms.core.continual.fully_dynamic  # noqa: F401 - registers its state class
    from transforms.core.foundation import bounds  # noqa: F401 - the noise profile's

    live = {
        state_mod._NAMES[c]: p
        for c, p in state_mod._PLAIN.items()
        if p and c in state_mod._NAMES and c.__module__.startswith("transforms.")  # the library's, not the tests'
    }
    assert live == state_mod._PLAIN_V1
    v1 = {
        "schema": 1,
        "mechanism": "m",
        "config": "c",
        "body": {"$o": "registry.entries", "$i": 0, "f": {"entries": {"a": ({"$d": 1},)}, "tombstones": {}}},
    }
    want = state_mod.open_envelope(copy.deepcopy(v1), "m", "c")
    monkeypatch.setattr(state_mod, "_PLAIN", {})
    monkeypatch.setattr(state_mod, "_CLASSES", {})
    assert state_mod.open_envelope(copy.deepcopy(v1), "m", "c") == want
    assert want["f"]["entries"] == {"a": ({"$d": 1},)}  # a plain field's elements are not walked
