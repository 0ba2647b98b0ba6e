"""The person step (issue 28, item 2): contribution bounding in the pipeline, ahead of the entry registry.

A person over the limit gets exactly the expected entries admitted whatever the order of lines; the refused
entries' updates are dead letters ``contribution_bounded`` carrying the record as received; Beam (batch on the
FnApiRunner, streaming with TestStream on the DirectRunner) equals the in-memory reference, the pure rule
``bound_person`` plus the core's ``process_tick`` with the entries keyed per person (written here: the
core's in-memory person path is engineer i28core's, not on main when this was written); the step's state is
versioned plain data and its DoFns pickle.
"""

from __future__ import annotations

import dataclasses
import pickle
import random

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.coders import Coder, FastPrimitivesCoder
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER

from transforms.core import DynamicConfig, FullyDynamicRelease, NoiseSource, PureDP, QuerySet, ReleaseIdentity, Update
from transforms.core import mechanisms as mechanism_registry
from transforms.core.contribution.bounding import PersonBounder, PersonLimit, bound_person, new_person_state
from transforms.core.foundation.accounting import PrivacyUnit
from transforms.core.foundation.entries import update_order
from transforms.core.foundation.state import StateError
from transforms.person import (
    PERSON_CELL_VERSION,
    BoundPersonsBoundedFn,
    BoundPersonsFn,
    PersonUpdateCheck,
    bound_persons,
    person_cell,
    person_entry_key,
    read_person_cell,
)
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, ReleaseFullyDynamic, StreamSpec

KEY_HEX = bytes(range(7, 39)).hex()
QUERIES = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4))
LIMIT = PersonLimit(2)
CFG = DynamicConfig(QUERIES, PureDP(2.0), unit=PrivacyUnit.person(2, 3))
REL = ReleaseIdentity("person-test-0001")


def streaming_options():
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


def person_workload(streams=("a", "b"), persons=5, n=260, seed=0, ids=10):
    """Updates of a few persons, each bringing several entries; entry ids shared between persons (the registry
    must keep them apart), half-second event times (ties broken by seq), deletes of entries a person never
    inserted, duplicate insertions, re-insertions of deleted ids."""
    rng = np.random.default_rng(seed)
    recs, live = [], {}
    for i in range(n):
        s = streams[int(rng.integers(len(streams)))]
        p = f"p{int(rng.integers(persons))}"
        t = float(np.floor((i * 0.45 + rng.random()) * 2) / 2)
        mine = live.setdefault((s, p), [])
        r = rng.random()
        if mine and r < 0.25:
            recs.append(UpdateRecord(t, "delete", mine.pop(int(rng.integers(len(mine)))), None, s, i, person=p))
        elif mine and r < 0.45:
            eid = mine[int(rng.integers(len(mine)))]
            recs.append(UpdateRecord(t, "upsert", eid, (0, int(rng.integers(4))), s, i, person=p))
        elif r < 0.5:
            recs.append(UpdateRecord(t, "delete", f"e{int(rng.integers(ids))}", None, s, i, person=p))
        else:
            eid = f"e{int(rng.integers(ids))}"
            if eid not in mine:
                mine.append(eid)
            recs.append(UpdateRecord(t, "insert", eid, (0, int(rng.integers(4))), s, i, person=p))
    return recs


def travelling(r: UpdateRecord, spec: StreamSpec) -> tuple:
    """The update as the person step sees it (``PersonUpdateCheck``'s value)."""
    item = tuple(r.item) if r.item is not None else None
    return (spec.tick_of(r.event_time), r.seq, r.op, item, float(r.event_time), r.raw, r.entry_id, r.person)


def reference(records, spec, cfg, noise, limit=LIMIT, core_cls=FullyDynamicRelease):
    """The in-memory reference: per stream and tick, each person's updates decided by ``bound_person`` (its
    state carried over), the admitted ones given to the core's ``process_tick`` in the registry's order
    (``update_order``); then the core run to the first close at or after the end. Returns ``(answers, dead
    letters as (reason, entry id, person, stage))``.

    The core's own person path (engineer i28core: ``process_tick`` takes ``(person, Update)`` pairs under a
    person unit, its registry keyed by (person, entry id)) is used where the core has it: it re-applies the
    rule to the admitted updates only (which admits them all: at most L entries per person and window, each
    inserted before its other updates) and resolves them keyed by person. A core without it gets plain updates
    with the entry ids keyed per person (``person_entry_key``)."""
    answers, dead = [], []
    for s in spec.streams:
        core = core_cls(cfg, stream=s)
        keyed_core = hasattr(core, "person_bounder")
        by_tick: dict = {}
        for r in records:
            if r.stream == s:
                by_tick.setdefault(spec.tick_of(r.event_time), []).append(r)
        states: dict = {}
        origin: dict = {}
        results = []
        for tick in sorted(by_tick):
            by_person: dict = {}
            for r in by_tick[tick]:
                by_person.setdefault(r.person, []).append((r.entry_id, travelling(r, spec)))
            admitted = []
            for person, values in by_person.items():
                states[person], decisions = bound_person(states.get(person), values, limit)
                for eid, v, reason in decisions:
                    if reason:
                        dead.append((reason, eid, person, "person"))
                    elif keyed_core:
                        admitted.append((v, (person, Update(v[2], eid, v[3]))))
                    else:
                        key = person_entry_key(person, eid)
                        origin[key] = (eid, person)
                        admitted.append((v, Update(v[2], key, v[3])))
            if admitted:
                admitted.sort(key=lambda a: update_order(a[0]))
                res = core.process_tick(tick, [u for _, u in admitted], noise)
                for rej in res.rejections:
                    who = (rej.update[1].entry_id, rej.update[0]) if keyed_core else origin[rej.update.entry_id]
                    assert rej.reason != "contribution_bounded", rej  # the core re-admits every admitted entry
                    dead.append((rej.reason, *who, "registry"))
                results.append(res)
        while not (core.closed and core.last_close_tick >= spec.end_tick):
            results.append(core.advance(core.next_close, noise))
        for res in results:
            answers += [_answer_key(a) for a in res.answers]
    return sorted(answers), sorted(dead)


def _answer_key(a):
    return (a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate))


def _dead_key(d):
    return (d.reason, d.record.entry_id, d.record.person, d.stage)


def stream_of(records, spec, steps_per_tick=4, shuffle_seed=None, after=40):
    """A TestStream of ``records`` tick by tick (within a tick in a shuffled order), the watermark advanced in
    quarter ticks (the BundleBased runner holds no watermark for timers: chained timer steps fire in order
    only with small steps, ``BEAM_NOTES``), then on to tick ``after`` (past the last close: a jump to
    infinity there can lose timer output)."""
    stream = TestStream()
    by_tick: dict = {}
    for r in records:
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(r)
    rng = random.Random(shuffle_seed)
    wm = spec.origin
    for tick in sorted(by_tick):
        batch = list(by_tick[tick])
        rng.shuffle(batch)
        stream = stream.add_elements([beam.window.TimestampedValue(r, r.event_time) for r in batch])
        while wm < spec.origin + tick * spec.tick_seconds:
            wm += spec.tick_seconds / steps_per_tick
            stream = stream.advance_watermark_to(wm)
    while wm < spec.origin + after * spec.tick_seconds:
        wm += spec.tick_seconds / steps_per_tick
        stream = stream.advance_watermark_to(wm)
    return stream.advance_watermark_to_infinity()


def run_release(records, spec, cfg, key, streaming, shuffle_seed=0, **kwargs):
    """Runs the release; asserts nothing, returns (transform, pipeline, outputs) for the caller's checks."""
    t = ReleaseFullyDynamic(cfg, spec, key, release=REL, **kwargs)
    recs = list(records)
    random.Random(shuffle_seed).shuffle(recs)  # the order of lines
    if streaming:
        p = TestPipeline(options=streaming_options())
        src = p | stream_of(recs, spec, shuffle_seed=shuffle_seed)
    else:
        p = TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER))
        src = p | beam.Create(recs) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
    return t, p, src | t


# ---------------------------------------------------------------------------
# A person over the limit: exactly the expected entries, whatever the order
# ---------------------------------------------------------------------------

SPEC_SMALL = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=60.0)
# person P, limit 2: e3 (event time 3) and e1 (7) are admitted in tick 1; e2 (tick 2) and e4 (tick 3) are
# refused with every update; e9 was never inserted by P (unknown_entry); person Q's own "e2" is admitted (the
# same entry id, another person); Q inserts e5 twice (the registry's duplicate_insert).
SMALL = [
    UpdateRecord(7.0, "insert", "e1", (0, 1), "a", 2, person="P"),
    UpdateRecord(3.0, "insert", "e3", (0, 2), "a", 9, person="P"),
    UpdateRecord(15.0, "insert", "e2", (0, 3), "a", 3, person="P"),
    UpdateRecord(18.0, "upsert", "e1", (0, 3), "a", 4, person="P"),
    UpdateRecord(21.0, "delete", "e2", None, "a", 5, person="P"),
    UpdateRecord(22.0, "insert", "e4", (0, 0), "a", 6, person="P"),
    UpdateRecord(23.0, "delete", "e9", None, "a", 7, person="P"),
    UpdateRecord(16.0, "insert", "e2", (0, 0), "a", 1, person="Q"),
    UpdateRecord(17.0, "insert", "e5", (0, 0), "a", 2, person="Q"),
    UpdateRecord(19.0, "insert", "e5", (0, 1), "a", 3, person="Q"),
    UpdateRecord(31.0, "delete", "e3", None, "a", 8, person="P"),
]
SMALL_DEAD = [
    ("contribution_bounded", SMALL[2]),
    ("contribution_bounded", SMALL[4]),
    ("contribution_bounded", SMALL[5]),
    ("unknown_entry", SMALL[6]),
    ("duplicate_insert", SMALL[9]),
]
# the truth over the admitted entries: P's e1 (item 1, then 3 from tick 2) and e3 (item 2, deleted at tick
# 4), Q's e2 and e5 (item 0 each, from tick 2)
SMALL_TRUTH = {1: (2, (0, 1, 1, 0)), 2: (4, (2, 0, 1, 1)), 3: (4, (2, 0, 1, 1)), 4: (3, (2, 0, 0, 1))}


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "streaming"])
@pytest.mark.parametrize("shuffle_seed", [0, 1, 2])
def test_a_person_over_the_limit_gets_exactly_the_expected_entries_whatever_the_order(streaming, shuffle_seed):
    """Noise off: the releases equal the truth over the admitted entries at every close, and the dead letters
    are exactly the refused entries' updates (``contribution_bounded``, stage ``person``), the update of an
    entry the person never inserted, and the registry's own refusal, each with the record as received."""
    cfg = DynamicConfig(QUERIES, PureDP(1.0), unit=PrivacyUnit.person(2, 3))
    expect, _ = reference(SMALL, SPEC_SMALL, cfg, NoiseSource.disabled())
    for a in expect:  # the reference itself is the truth over the admitted entries
        n, h = SMALL_TRUTH[min(a[1], 4)]
        assert a[4] == ((float(n),) if a[3] == "n" else tuple(float(x) for x in h))
    assert {a[1] for a in expect} == {2, 4, 16}  # the closes (tick 16: the first at or after the end)
    _, p, out = run_release(SMALL, SPEC_SMALL, cfg, NoiseKey.disabled(), streaming, shuffle_seed)
    assert_that(out["answers"] | beam.Map(_answer_key), equal_to(expect), label="ExactOverAdmitted")
    assert_that(out["dead_letters"] | beam.Map(lambda d: (d.reason, d.record)), equal_to(SMALL_DEAD), label="Dead")
    stages = {"contribution_bounded": "person", "unknown_entry": "person", "duplicate_insert": "registry"}
    assert_that(
        out["dead_letters"] | beam.Filter(lambda d, s=stages: d.stage != s[d.reason]), equal_to([]), label="Stages"
    )
    p.run().wait_until_finish()


def test_line_order_never_changes_the_bounded_decisions():
    """The bounded DoFn on every order of one person's updates (random permutations): the same admissions."""
    spec = SPEC_SMALL
    mine = [travelling(r, spec) for r in SMALL if r.person == "P"]
    fn = BoundPersonsBoundedFn(spec, LIMIT)
    results = set()
    for seed in range(40):
        random.Random(seed).shuffle(mine)
        fn.start_bundle()
        out = list(fn.process((("a", "P"), list(mine))))
        tagged = [o for o in out if isinstance(o, beam.pvalue.TaggedOutput)]
        admitted = tuple(sorted(o[1][1] for o in out if not isinstance(o, beam.pvalue.TaggedOutput)))
        refused = tuple(sorted(o.value.record.seq for o in tagged))
        results.add((admitted, refused))
        assert fn.counts == [1, 2, 2]  # one person, e3 and e1 admitted, e2 and e4 refused
    assert results == {((2, 4, 8, 9), (3, 5, 6, 7))}


# ---------------------------------------------------------------------------
# Beam equals the in-memory reference
# ---------------------------------------------------------------------------


def _check_against_reference(records, spec, streaming, seed):
    t = ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL)
    expect, dead = reference(records, spec, CFG, NoiseSource.from_hex(KEY_HEX).for_release(t.release))
    assert any(d[0] == "contribution_bounded" for d in dead) and any(d[3] == "registry" for d in dead)
    assert len(expect) > 10
    _, p, out = run_release(records, spec, CFG, NoiseKey.fixed(KEY_HEX), streaming, seed)
    assert_that(out["answers"] | beam.Map(_answer_key), equal_to(expect), label="Answers")
    assert_that(out["dead_letters"] | beam.Map(_dead_key), equal_to(dead), label="Dead")
    return p.run()


def test_batch_equals_the_in_memory_reference():
    recs = person_workload(seed=1)
    spec = StreamSpec(streams=("a", "b", "idle"), tick_seconds=5.0, end_time=150.0)
    result = _check_against_reference(recs, spec, streaming=False, seed=3)
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    _, dead = reference(recs, spec, CFG, NoiseSource.disabled())
    assert counters["dead_letter_contribution_bounded"] == sum(d[0] == "contribution_bounded" for d in dead)
    assert counters["persons_seen"] == len({(r.stream, r.person) for r in recs})
    assert counters["entries_admitted"] >= 10 and counters["entries_refused"] >= 5


def test_streaming_teststream_equals_the_in_memory_reference():
    recs = person_workload(n=160, seed=2)
    spec = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=80.0)  # its last close: tick 16
    _check_against_reference(recs, spec, streaming=True, seed=4).wait_until_finish()


def test_person_bounder_takes_the_same_decisions_when_a_tick_has_no_finer_order():
    """``PersonBounder`` (the in-memory core's rule: no event time or seq in the core's ``Update``) decides as
    the person step when every update of a tick has the same event time and seq (then both orders are op rank,
    item, entry id)."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=80.0)
    recs = [r._replace(event_time=float(int(r.event_time)), seq=0) for r in person_workload(("a",), seed=5)]
    bounder = PersonBounder(LIMIT)
    states, beam_side, memory_side = {}, [], []
    by_tick: dict = {}
    for r in recs:
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(r)
    for tick in sorted(by_tick):
        rs = by_tick[tick]
        for person in sorted({r.person for r in rs}):
            values = [(r.entry_id, travelling(r, spec)) for r in rs if r.person == person]
            states[person], decisions = bound_person(states.get(person), values, LIMIT)
            beam_side += [(tick, person, eid, v[2], v[3], reason) for eid, v, reason in decisions]
        accepted, refused = bounder.filter_tick(tick, [(r.person, Update(r.op, r.entry_id, r.item)) for r in rs])
        memory_side += [(tick, None, u.entry_id, u.op, u.item, None) for u in accepted]
        memory_side += [(tick, None, u.entry_id, u.op, u.item, reason) for reason, _, u in refused]
    assert any(d[5] == "contribution_bounded" for d in beam_side)
    assert sorted(repr(d[2:]) for d in beam_side) == sorted(repr(d[2:]) for d in memory_side)


@pytest.mark.parametrize("streaming", [False, True], ids=["batch", "streaming"])
@pytest.mark.parametrize(
    "unit", [PrivacyUnit.entry(5, max_insertions=1), PrivacyUnit.person(2, 5)], ids=["entry", "person"]
)
def test_the_registry_enforces_the_units_mutation_and_insertion_limits(unit, streaming):
    """Under the entry and person units the registry receives the unit's limit (``DynamicConfig.max_mutations``,
    k and the insertions of one entry id): a deleted entry inserted again past its insertion limit, and
    a mutation past ``k``, are ``constraint_exceeded`` at the registry, on both paths."""
    x = [(1.0, "insert", (0, 1)), (2.0, "upsert", (0, 2)), (11.0, "delete", None), (21.0, "insert", (0, 3))]
    y = [(3.0, "insert", (0, 1))] + [(t, "upsert", (0, int(t) % 4)) for t in (4.0, 5.0, 12.0, 13.0, 14.0)]
    recs = [UpdateRecord(t, op, "x", item, "a", i, person="P") for i, (t, op, item) in enumerate(x)]
    recs += [UpdateRecord(t, op, "y", item, "a", 10 + i, person="P") for i, (t, op, item) in enumerate(y)]
    cfg = DynamicConfig(QUERIES, PureDP(1.0), unit=unit)
    _, p, out = run_release(recs, SPEC_SMALL, cfg, NoiseKey.disabled(), streaming)
    dead = out["dead_letters"] | beam.Map(lambda d: (d.reason, d.stage, d.record.entry_id, d.record.seq))
    assert_that(
        dead, equal_to([("constraint_exceeded", "registry", "x", 3), ("constraint_exceeded", "registry", "y", 15)])
    )
    p.run().wait_until_finish()


# ---------------------------------------------------------------------------
# The step alone: windows, late data, validation
# ---------------------------------------------------------------------------


def test_the_step_alone_streaming_equals_bounded_with_a_window():
    """``per_window``: at most L entries first inserted in each window of ticks; the streaming step (one tick
    at a time) and the bounded one (everything at once) take the rule's decisions."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=120.0)
    limit = PersonLimit(1, window=20)
    recs = person_workload(("a",), persons=3, n=200, seed=6)
    expect_admitted, expect_dead, states = [], [], {}
    by_tick: dict = {}
    for r in recs:
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(r)
    for tick in sorted(by_tick):
        for person in {r.person for r in by_tick[tick]}:
            values = [(r.entry_id, travelling(r, spec)) for r in by_tick[tick] if r.person == person]
            states[person], decisions = bound_person(states.get(person), values, limit)
            for eid, v, reason in decisions:
                if reason:
                    expect_dead.append((reason, v[1]))
                else:
                    expect_admitted.append((person_entry_key(person, eid), v[1]))
    assert sum(1 for d in expect_dead if d[0] == "contribution_bounded") > 10
    check = PersonUpdateCheck(spec, (1, 4))
    for streaming in (False, True):
        opts = streaming_options() if streaming else PipelineOptions(runner=FNAPI_RUNNER)
        with TestPipeline(options=opts) as p:
            if streaming:
                src = p | stream_of(recs, spec, after=100)
            else:
                src = p | beam.Create(recs)
            valid = src | beam.Map(lambda r, c=check: c(r)[1])
            admitted, dead = bound_persons(valid, spec, limit, bounded=not streaming)
            assert_that(admitted | beam.Map(lambda kv: (kv[0][1], kv[1][1])), equal_to(expect_admitted))
            assert_that(dead | beam.Map(lambda d: (d.reason, d.record.seq)), equal_to(expect_dead), label="Dead")


def _late_stream(early, late):
    """A TestStream of ``early`` records, the watermark moved on to event time 40, then ``late`` (stamped 2.0, long
    behind it), then the watermark in steps of 5 past the last close (the BundleBased runner fires chained timer
    steps in order only with small steps) and to infinity."""
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in early])
    for t in (2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 30.0, 40.0):
        stream = stream.advance_watermark_to(t)
    stream = stream.add_elements([beam.window.TimestampedValue(late, 2.0)])
    for t in range(45, 3000, 5):
        stream = stream.advance_watermark_to(float(t))
    return stream.advance_watermark_to_infinity()


@pytest.mark.parametrize("across", [False, True], ids=["per_stream", "across_streams"])
def test_late_updates_follow_the_policy_at_the_person_step(across):
    """An update older than its person's last decided tick: ``late`` (stage ``person``) under ``dead_letter``;
    decided at the person's next tick under ``current`` (nothing is lost; the registry resolves it there). Across
    streams (``max_streams``: the step keyed by person alone) the same, with a second stream the person never
    reaches."""
    early = [UpdateRecord(1.0 + i, "insert", f"x{i}", (0, 1), "a", i, person="P") for i in range(3)]  # x2 refused
    late = UpdateRecord(2.0, "delete", "x0", None, "a", 99, person="P")  # its tick (1) is long over
    cfg = DynamicConfig(QUERIES, PureDP(2.0), unit=PrivacyUnit.person(2, 3, max_streams=1)) if across else CFG
    for policy, final, expect_dead in (
        ("dead_letter", 2.0, [("contribution_bounded", "person"), ("late", "person")]),
        ("current", 1.0, [("contribution_bounded", "person")]),
    ):
        streams = ("a", "b") if across else ("a",)
        spec = StreamSpec(streams=streams, tick_seconds=10.0, late_policy=policy, end_time=300.0)
        stream = _late_stream(early, late)
        with TestPipeline(options=streaming_options()) as p:
            out = p | stream | ReleaseFullyDynamic(cfg, spec, NoiseKey.disabled())
            last_counts = (
                out["answers"]
                | beam.Filter(lambda a: a.stream == "a" and a.query == "n" and a.tick >= 16)
                | beam.Map(lambda a: a.estimate)
            )
            assert_that(last_counts, equal_to([(final,), (final,)]))  # closes at ticks 16 and 256
            assert_that(out["dead_letters"] | beam.Map(lambda d: (d.reason, d.stage)), equal_to(expect_dead), label="D")


def test_late_updates_across_streams_are_late_for_the_person():
    """Across streams (``max_streams``: the step keyed by person alone) lateness is the person's: P's first update
    in stream ``b``, of tick 1, arrives after P's ticks in stream ``a`` were decided up to tick 4; keyed per stream
    it would be on time for its new key, here it is ``late`` (dead_letter) or decided at P's next tick, where it
    counts in ``b`` (current)."""
    early = [UpdateRecord(1.0 + 10 * i, "insert", f"x{i}", (0, 1), "a", i, person="P") for i in range(2)]
    late = UpdateRecord(2.0, "insert", "y0", (0, 2), "b", 99, person="P")  # tick 1, long over for P
    cfg = DynamicConfig(QUERIES, PureDP(2.0), unit=PrivacyUnit.person(2, 3, max_streams=2))
    for policy, final_b, expect_dead in (("dead_letter", 0.0, [("late", "person", "b")]), ("current", 1.0, [])):
        spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, late_policy=policy, end_time=300.0)
        stream = _late_stream(early, late)
        with TestPipeline(options=streaming_options()) as p:
            out = p | stream | ReleaseFullyDynamic(cfg, spec, NoiseKey.disabled())
            last = out["answers"] | beam.Filter(lambda a: a.query == "n" and a.tick >= 16)
            assert_that(
                last | beam.Map(lambda a: (a.stream, a.estimate)),
                equal_to([("a", (2.0,)), ("a", (2.0,)), ("b", (final_b,)), ("b", (final_b,))]),
            )
            dead = out["dead_letters"] | beam.Map(lambda d: (d.reason, d.stage, d.stream))
            assert_that(dead, equal_to(expect_dead), label="D")


def test_a_person_is_required_and_a_string():
    """Under the person unit a validated update without a person is ``missing_field`` (the parse step found no
    ``privacy.person_field``), a person that is not a non-empty string ``malformed``; both at the validation
    stage, as received; the other checks come first."""
    check = PersonUpdateCheck(SPEC_SMALL, (1, 4))
    ok = UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0, person="P")
    assert check(ok) == (None, (("a", "P"), (1, 0, "insert", (0, 1), 1.0, None, "x", "P")))
    assert check(ok._replace(person=None))[0] == "missing_field"
    assert check(ok._replace(person=""))[0] == "malformed"
    assert check(ok._replace(person=7))[0] == "malformed"
    assert check(ok._replace(person=None, stream="mars"))[0] == "undeclared_stream"
    recs = [ok._replace(person=None), ok._replace(person=3, seq=1), ok._replace(entry_id="y", seq=2)]
    with TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER)) as p:
        out = p | beam.Create(recs) | ReleaseFullyDynamic(CFG, SPEC_SMALL, NoiseKey.disabled())
        assert_that(
            out["dead_letters"] | beam.Map(lambda d: (d.reason, d.stage, d.record)),
            equal_to([("missing_field", "validate", recs[0]), ("malformed", "validate", recs[1])]),
        )


def test_construction_refuses_a_unit_the_mechanism_does_not_serve(monkeypatch):
    """``ReleaseContinually`` (and ``AnswerQueries``, through it) refuses a person unit for a mechanism whose
    registry entry does not list it; the local-DP collector refuses any unit but update."""
    from transforms.core.families.local_dp import RROptions
    from transforms.local_dp import CollectRandomizedResponses
    from transforms.queries import AnswerQueries

    spec = StreamSpec(streams=("a",), end_time=100.0)
    for name in ("fully_dynamic", "pmwg"):
        entry = mechanism_registry.MECHANISMS[name]
        monkeypatch.setitem(
            mechanism_registry.MECHANISMS,
            name,
            dataclasses.replace(entry, units=tuple(u for u in entry.units if u != "person")),
        )
    with pytest.raises(ValueError, match="privacy.unit: mechanism 'fully_dynamic' states no guarantee for the person"):
        ReleaseContinually("fully_dynamic", CFG, spec, NoiseKey.disabled())
    hist = DynamicConfig((QuerySet("h", "histogram", domain_size=4),), PureDP(1.0), unit=PrivacyUnit.person(2, 1))
    with pytest.raises(ValueError, match="privacy.unit: mechanism 'pmwg'"):
        AnswerQueries(hist, spec, NoiseKey.disabled())
    with pytest.raises(ValueError, match="not privacy.unit"):
        CollectRandomizedResponses(hist, spec, RROptions())


def test_answer_queries_bounds_persons_when_pmwg_serves_the_unit(monkeypatch):
    """With a registry entry that lists the person unit, the query answering takes the same person step."""
    from transforms.queries import AnswerQueries, QueryRecord

    hist = DynamicConfig((QuerySet("h", "histogram", domain_size=4),), PureDP(1.0), unit=PrivacyUnit.person(1, 1))
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=50.0)
    recs = [
        UpdateRecord(1.0, "insert", "x", (1,), "a", 0, person="P"),
        UpdateRecord(2.0, "insert", "y", (2,), "a", 1, person="P"),
    ]
    with TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER)) as p:
        u = p | "U" >> beam.Create(recs)
        q = p | "Q" >> beam.Create([QueryRecord("q", 12.0, (1.0, 0.0, 0.0, 0.0), "a")])
        out = (u, q) | AnswerQueries(hist, spec, NoiseKey.disabled(), release=REL)
        assert_that(
            out["dead_letters"] | beam.Map(lambda d: (d.reason, d.record.entry_id)),
            equal_to([("contribution_bounded", "y")]),
        )
    names = {t.unique_name for t in p.to_runner_api().components.transforms.values()}
    assert "AnswerQueries/BoundPersons" in names and "AnswerQueries/GroupByPerson" in names


# ---------------------------------------------------------------------------
# State and pickling
# ---------------------------------------------------------------------------


class _NoPickle(Coder):
    def encode(self, value):
        raise AssertionError(f"the person cell needed the pickle fallback for {type(value).__name__}")

    def decode(self, encoded):
        raise AssertionError("never called")

    def is_deterministic(self):
        return True


def test_the_person_cell_is_versioned_plain_data_and_round_trips():
    """What the streaming step stores: Beam's primitive encoding without the pickle fallback (so another
    version of the library reads it), restored equal, and pickled equal; a cell of another version is
    refused."""
    spec = SPEC_SMALL
    values = [(r.entry_id, travelling(r, spec)) for r in SMALL if r.person == "P"]
    state, _ = bound_person(None, values[:4], LIMIT)
    cell = person_cell(state, 2, 3, tuple(v for _, v in values[4:]))
    assert cell[0] == PERSON_CELL_VERSION and state[0] == new_person_state()[0]
    coder = FastPrimitivesCoder(fallback_coder=_NoPickle())
    back = coder.decode(coder.encode(cell))
    assert back == cell and read_person_cell(back) == (state, 2, 3, cell[4])
    assert pickle.loads(pickle.dumps(cell)) == cell
    # a restored state continues exactly as the original
    rest = [(v[6], v) for v in cell[4]]
    assert bound_person(read_person_cell(back)[0], rest, LIMIT) == bound_person(state, rest, LIMIT)
    assert read_person_cell(None) == (new_person_state(), 0, None, ())
    with pytest.raises(StateError):
        read_person_cell((PERSON_CELL_VERSION + 1, *cell[1:]))


@pytest.mark.parametrize(
    "fn",
    [BoundPersonsFn(SPEC_SMALL, LIMIT), BoundPersonsBoundedFn(SPEC_SMALL, PersonLimit(3, window=7))],
    ids=["streaming", "bounded"],
)
def test_person_dofns_pickle(fn):
    back = pickle.loads(pickle.dumps(fn))
    assert type(back) is type(fn) and back.spec == fn.spec and back.limit == fn.limit


def test_person_entry_key_is_injective():
    pairs = [("a", "b:c"), ("a:b", "c"), ("ab", "c"), ("a", "bc"), ("", "abc"), ("1:a", "b"), ("1", "a:b")]
    keys = [person_entry_key(p, e) for p, e in pairs]
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("tick_merge", ["auto", "stateful"])
def test_on_the_directrunner_no_two_stateful_steps_share_a_timer_name(tick_merge):
    """Stop 55: the DirectRunner runs a followed file on the FnApiRunner, which fuses the person step with the
    registry and keeps a stage's timers in one buffer per timer family id, whatever the transform
    (``fn_api_runner/execution.py``, ``get_buffer``; apache/beam#21995): with both timers named ``tick_end`` the
    registry's timers fired in the person step, the registry never resolved an update, and the counts gate held
    every later release (``tests/test_follow_source.py``, the followed person-unit run). So on the DirectRunner's
    gated graph no timer family id belongs to two transforms; on Flink the person step keeps ``tick_end`` (a
    savepoint's name: ``tests/test_beam_releases.py``)."""
    from apache_beam.portability.api import beam_runner_api_pb2

    spec = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=150.0, every_ticks=2)
    opts = PipelineOptions(runner="DirectRunner")
    opts.view_as(StandardOptions).streaming = True
    p = beam.Pipeline(options=opts)
    rec = UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0, person="P")
    p | beam.Create([rec]) | ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL, tick_merge=tick_merge)
    owners = {}
    for t in p.to_runner_api().components.transforms.values():
        if t.spec.urn == "beam:transform:pardo:v1":
            for family in beam_runner_api_pb2.ParDoPayload.FromString(t.spec.payload).timer_family_specs:
                owners.setdefault(family, []).append(t.unique_name)
    assert owners["ts-person_tick_end"] == ["ReleaseFullyDynamic/BoundPersons/ParDo(GatedBoundPersonsFn)"]
    assert {f: names for f, names in owners.items() if len(names) > 1} == {}
