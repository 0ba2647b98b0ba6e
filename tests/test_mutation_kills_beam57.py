"""Tests that kill survivors of mutation round 57 (stop 57): the Beam layer's enforcement code,
``transforms/person.py``, ``transforms/bounded.py``, ``transforms/sharded.py``, ``transforms/validate.py``,
``transforms/common.py`` and the registry of ``transforms/streaming.py`` (``benchmarks/mutation_runs/s57/``; each
test names the mutants it kills).

The stateful DoFns are driven in memory, as a runner drives them: ``process`` with a key's cell and timer, and the
key's timer fired at its set time once the watermark passes it (a timer set in the past fires at once). No
pipeline: each test takes milliseconds, and each assertion is on the property the mutant breaks.
"""

from __future__ import annotations

import apache_beam as beam
import numpy as np
import pytest

import transforms.common
import transforms.streaming
from transforms.bounded import ResolveEntriesBoundedFn
from transforms.common import ReleaseStep, apply_in_order, dead_letter, floats, in_update_order, update_record
from transforms.core import DynamicConfig, FullyDynamicRelease, NoiseSource, PureDP, QuerySet, ReleaseIdentity
from transforms.core.contribution.bounding import PersonLimit, new_person_state
from transforms.core.foundation.accounting import PrivacyUnit, as_vector
from transforms.core.foundation.state import StateError
from transforms.core.mechanisms import MECHANISMS
from transforms.per_stream import COUNTS
from transforms.person import BoundPersonsFn, person_cell, person_entry_key, person_limit, read_person_cell
from transforms.records import DeadLetter, NoiseKey, ReleaseRecord, UpdateRecord
from transforms.sharded import ResolveShardsFn
from transforms.spec import NAMESPACE, StreamSpec
from transforms.streaming import ResolveEntriesFn
from transforms.validate import UpdateCheck, ValidateFn


class _Cell:
    def __init__(self):
        self.value = None

    def read(self):
        return self.value

    def write(self, v):
        self.value = v

    def clear(self):
        self.value = None


class _Timer:
    def __init__(self):
        self.at = None

    def set(self, ts, dynamic_timer_tag=""):
        self.at = ts


class _Persons:
    """A ``BoundPersonsFn`` with one cell and one timer per key, its outputs split into admitted ``(entry key,
    seq)`` and dead ``(reason, seq, stage)``."""

    def __init__(self, fn):
        self.fn = fn
        self.keys: dict = {}
        self.admitted: list = []
        self.dead: list = []
        fn.start_bundle()

    def _take(self, outs):
        for o in outs:
            if isinstance(o, beam.pvalue.TaggedOutput):
                d = o.value
                self.dead.append((d.reason, d.record.seq, d.stage))
            else:
                self.admitted.append((o[0][1], o[1][1]))

    def cell(self, key):
        return self.keys.setdefault(key, (_Cell(), _Timer()))

    def arrive(self, person: str, value: tuple):
        key = ("a", person)
        cell, timer = self.cell(key)
        self._take(self.fn.process((key, (*value, person)), cell=cell, timer=timer))

    def advance(self, wm):
        """The watermark to ``wm``: every key's timer due by then fires (again if it sets itself at a due time)."""
        while True:
            due = sorted((t.at, k) for k, (_, t) in self.keys.items() if t.at is not None and t.at <= wm)
            if not due:
                return
            ts, key = due[0]
            cell, timer = self.keys[key]
            timer.at = None
            self._take(self.fn.on_tick_end(key=key, ts=ts, cell=cell, timer=timer))


def _upd(tick, seq, op, eid, item=(0, 1)):
    """A travelling update (``PersonUpdateCheck``'s value without the person) at the middle of ``tick`` (1 s
    ticks from 0)."""
    return (tick, seq, op, None if op == "delete" else item, tick - 0.5, None, eid)


def test_a_late_update_under_current_is_decided_at_the_persons_next_tick_and_its_window():
    """``late_policy: current``: an update older than the person's last decided tick is decided at that tick
    + 1, in that tick's window. Limit 1 per window of 2 ticks: e1 (tick 3, window 1) admitted and decided; a late
    insertion of e2 (tick 1) is decided at tick 4, window 1, which is full: refused. Decided at tick last - 1
    (window 0, empty) or at last + 2 (window 2, empty) it was admitted, and reached the release at the person's
    current ticks: two insertions of one person in one window, over the limit the calibration assumes. Kills
    ``transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_31`` and ``..._32``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, late_policy="current", end_time=100.0)
    run = _Persons(BoundPersonsFn(spec, PersonLimit(1, window=2)))
    run.arrive("P", _upd(3, 1, "insert", "e1"))
    run.advance(spec.closes_at(3))
    assert run.admitted == [(person_entry_key("P", "e1"), 1)] and run.dead == []
    run.arrive("P", _upd(1, 2, "insert", "e2"))
    cell, timer = run.keys[("a", "P")]
    _, last, timer_tick, pending = read_person_cell(cell.value)
    assert last == 3 and timer_tick == 4 and [u[0] for u in pending] == [4] and timer.at == spec.closes_at(4)
    run.advance(spec.closes_at(20))
    assert run.admitted == [(person_entry_key("P", "e1"), 1)]
    assert run.dead == [("contribution_bounded", 2, "person")]


def test_the_person_timer_stays_at_the_earliest_pending_tick_after_a_firing():
    """After a firing that leaves updates of a later tick pending, the cell records the tick the timer is set
    for; an update of a still later tick then leaves the timer where it is, and the pending tick's update is
    decided when that tick closes, not later (it would reach the registry after its tick closed, and be
    released at a later tick). Kills ``transforms.person.xǁBoundPersonsFnǁ_fire__mutmut_27``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=100.0)
    run = _Persons(BoundPersonsFn(spec, PersonLimit(2)))
    run.arrive("P", _upd(1, 1, "insert", "e1"))
    run.arrive("P", _upd(3, 2, "upsert", "e1", (0, 2)))
    run.advance(spec.closes_at(1))
    cell, timer = run.keys[("a", "P")]
    assert read_person_cell(cell.value)[2] == 3 and timer.at == spec.closes_at(3)
    run.arrive("P", _upd(5, 3, "insert", "e2"))
    assert read_person_cell(cell.value)[2] == 3 and timer.at == spec.closes_at(3)
    run.advance(spec.closes_at(3))
    assert [seq for _, seq in run.admitted] == [1, 2]  # the upsert of tick 3 decided at its close
    run.advance(spec.closes_at(5))
    assert [seq for _, seq in run.admitted] == [1, 2, 3] and run.dead == []


def test_the_streaming_person_step_counts_each_person_once_and_each_entry_once():
    """``persons_seen`` counts a (stream, person) key at its first update only, ``entries_admitted`` and
    ``entries_refused`` an entry once (at its first insertion), over a bundle. Kills
    ``transforms.person.xǁBoundPersonsFnǁ_buffer__mutmut_3``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=100.0)
    fn = BoundPersonsFn(spec, PersonLimit(1))
    run = _Persons(fn)
    run.arrive("P", _upd(1, 1, "insert", "e1"))
    run.arrive("P", _upd(1, 2, "insert", "e2"))  # refused: P is at the limit
    run.arrive("Q", _upd(1, 3, "insert", "e1"))
    run.advance(spec.closes_at(1))
    run.arrive("P", _upd(2, 4, "upsert", "e1", (0, 3)))
    run.arrive("P", _upd(2, 5, "delete", "e2"))
    run.advance(spec.closes_at(2))
    assert fn.counts == [2, 2, 1]
    assert run.dead == [("contribution_bounded", 2, "person"), ("contribution_bounded", 5, "person")]


def test_the_bounded_registry_carries_records_by_default():
    """``ResolveEntriesBoundedFn``'s default (``digests=False``): the update tuples carry the records as
    received, and its dead letters are ``DeadLetter``s with the record (not references to join with a second
    read); ``accepted`` counts the accepted updates of the bundle. Kills
    ``transforms.bounded.xǁResolveEntriesBoundedFnǁ__init____mutmut_1`` and ``...start_bundle__mutmut_3``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=10.0)
    fn = ResolveEntriesBoundedFn(spec, (4,), True)
    fn.start_bundle()
    line = '{"op": "insert"}'
    ups = [(1, 0, "insert", (1,), 0.5, line), (2, 1, "insert", (2,), 1.5, line)]
    out = list(fn.process((("a", "e"), ups)))
    dead = [o.value for o in out if isinstance(o, beam.pvalue.TaggedOutput)]
    assert dead == [
        DeadLetter("duplicate_insert", UpdateRecord(1.5, "insert", "e", (2,), "a", 1, line), "registry", "a")
    ]
    assert fn.accepted == 1  # the updates_accepted counter's bundle sum: the first insertion only


def test_validation_dead_letters_carry_their_reason_the_record_and_the_stream():
    """``ValidateFn``: a rejected record leaves on the dead letters as received, with its reason, the stage
    ``validate`` and its stream when that is a string (None otherwise); an accepted one leaves on the main
    output. Kills ``transforms.validate.xǁValidateFnǁprocess__mutmut_19``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=10.0)
    fn = ValidateFn(UpdateCheck(spec, (4,)))
    fn.start_bundle()
    ok = UpdateRecord(1.5, "insert", "e", (2,), "a", 0)
    bad = [
        (ok._replace(op="merge"), "unknown_op", "a"),
        (ok._replace(item=(4,)), "item_out_of_range", "a"),
        (ok._replace(stream="mars"), "undeclared_stream", "mars"),
        (ok._replace(stream=7), "undeclared_stream", None),
        (ok._replace(event_time=20.5), "after_end", "a"),
    ]
    for rec, reason, stream in bad:
        (out,) = list(fn.process(rec))
        assert isinstance(out, beam.pvalue.TaggedOutput) and out.tag == ValidateFn.DEAD
        assert out.value == DeadLetter(reason, rec, "validate", stream)
    assert list(fn.process(ok)) == [(("a", "e"), (2, 0, "insert", (2,), 1.5, None))]
    assert fn.n_valid == 1


def test_the_update_check_refuses_every_malformed_field_with_its_reason():
    """``UpdateCheck``: an entry id that is not a non-empty string, a delete's item that is not a sequence, an
    item of the wrong length or with a value that is not an int (a bool is not one) is ``malformed``; an int out
    of its domain ``item_out_of_range``. Each goes through ``reason`` (the fast path refuses them first). Kills
    ``transforms.validate.xǁUpdateCheckǁreason__mutmut_13`` and ``..._47``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=10.0)
    check = UpdateCheck(spec, (4, 3))
    ok = UpdateRecord(1.5, "insert", "e", (2, 1), "a", 0)
    assert check(ok) == (None, (("a", "e"), (2, 0, "insert", (2, 1), 1.5, None)))
    cases = [
        (ok._replace(entry_id=""), "malformed"),
        (ok._replace(entry_id=5), "malformed"),
        (ok._replace(entry_id=None), "malformed"),
        (ok._replace(op="delete", item=5), "malformed"),
        (ok._replace(item=(2,)), "malformed"),
        (ok._replace(item=(2, True)), "malformed"),
        (ok._replace(item=(2, 1.0)), "malformed"),
        (ok._replace(item=[2, 1], seq=True), "malformed"),
        (ok._replace(item=(2, 3)), "item_out_of_range"),
        (ok._replace(item=(-1, 0)), "item_out_of_range"),
    ]
    for rec, reason in cases:
        assert check(rec) == (reason, None), rec
        assert check.reason(rec)[0] == reason
    assert check(ok._replace(op="delete", item=[2, 1])) == (None, (("a", "e"), (2, 0, "delete", (2, 1), 1.5, None)))


def test_a_dead_letter_rebuilds_the_record_as_received():
    """``update_record`` / ``dead_letter``: the registry's and the person step's dead letters carry the record
    as received, every field (the entry id as received and the person under the person unit, not the
    registry's per-person key). Kills ``transforms.common.x_update_record__mutmut_30`` and ``..._32``."""
    value = (2, 7, "upsert", (1, 0), 1.5, "line")
    assert update_record(("a", "e"), value) == UpdateRecord(1.5, "upsert", "e", (1, 0), "a", 7, "line")
    assert update_record(("a", person_entry_key("P", "e")), (*value, "e", "P")) == UpdateRecord(
        1.5, "upsert", "e", (1, 0), "a", 7, "line", "P"
    )
    assert update_record(("a", "e"), value[:5]) == UpdateRecord(1.5, "upsert", "e", (1, 0), "a", 7, None)
    d = dead_letter("late", ("a", "e"), value)
    assert d == DeadLetter("late", UpdateRecord(1.5, "upsert", "e", (1, 0), "a", 7, "line"), "registry", "a")


def test_an_empty_aggregate_never_stops_the_ones_after_it():
    """``apply_in_order``: an aggregate with nothing accepted is skipped, and every aggregate after it is
    applied (the same results as without it). Kills ``transforms.common.x_apply_in_order__mutmut_8``."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    noise = NoiseSource.disabled()
    aggs = [(2, {(0,): 2}, {}, 2), (3, {(0,): 1}, {}, 1)]
    plain = FullyDynamicRelease(cfg, stream="a")
    with_empty = FullyDynamicRelease(cfg, stream="a")
    expect = apply_in_order(plain, aggs, noise)
    got = apply_in_order(with_empty, [(1, {}, {}, 0), *aggs], noise)
    assert len(got) == len(expect) == 2 and with_empty.last_tick == plain.last_tick == 3


def test_floats_of_every_estimate_type():
    """``floats``: a float64 array, an int array, a tuple or list of ints: the same Python floats. Kills
    ``transforms.common.x_floats__mutmut_8``."""
    for est in (np.array([1.5, 2.0]), np.array([1, 2]), (1, 2), [1.0, 2], np.array([1.5, 2.0], dtype=np.float32)):
        out = floats(est)
        assert type(out) is tuple and all(type(x) is float for x in out)
        assert out == tuple(float(x) for x in est)


def test_in_update_order_takes_the_full_key_or_raises_as_it_does():
    """``in_update_order``: where the (tick, event time, seq) prefix does not compare (a time that is not a
    number: never past validation), the full key ``update_order`` decides, and raises as it does; never an
    order by the tuples' own field order (tick, seq, op, ...). Kills
    ``transforms.common.x_in_update_order__mutmut_17``."""
    ups = [(1, 0, "insert", (1,), None), (1, 1, "insert", (1,), 0.5)]
    with pytest.raises(TypeError):
        in_update_order(ups)
    ties = [(1, 1, "delete", None, 0.5, "b"), (1, 1, "insert", (2,), 0.5, "a"), (1, 0, "upsert", (1,), 0.7, "c")]
    assert in_update_order(ties) == [ties[1], ties[0], ties[2]]


def test_the_registry_resolves_held_updates_once_the_earlier_ones_arrive_and_counts_what_it_accepts(monkeypatch):
    """``ResolveEntriesFn(counts=True, upstream_counts=True)`` (the DirectRunner's person path): updates that
    arrive ahead of an earlier one of their entry (numbers 1, 4, 3, then 2) are held, and the hold survives a firing
    of the entry's timer in between; once update 2 arrives, 2, 3 and 4 are resolved at their ticks: all four
    accepted, one aggregate per tick, and ``accepted`` counts exactly them, as the ``updates_accepted`` counter
    does at the end of the bundle. Kills ``transforms.streaming.xǁResolveEntriesFnǁon_tick_end__mutmut_79``,
    ``...process__mutmut_81`` (the second held update dropped), ``...start_bundle__mutmut_5`` and
    ``...finish_bundle__mutmut_2``."""
    incs = []
    monkeypatch.setattr(transforms.streaming._UPDATES_ACCEPTED, "inc", lambda n=1: incs.append(n))
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=20.0)
    fn = ResolveEntriesFn(spec, (5,), True, counts=True, upstream_counts=True)
    fn.start_bundle()
    key = ("a", person_entry_key("P", "e"))
    meta, timer = _Cell(), _Timer()
    dead = []

    def arrive(tick, op, item, n):
        value = (tick, n, op, item, tick - 0.5, None, "e", "P", n)
        dead.extend(fn.process((key, value), meta=meta, timer=timer))

    def advance(wm):
        while timer.at is not None and timer.at <= wm:
            ts, timer.at = timer.at, None
            dead.extend(fn.on_tick_end(key=key, ts=ts, meta=meta, timer=timer))

    arrive(1, "insert", (1,), 1)
    arrive(4, "upsert", (4,), 4)  # ahead of 2 and 3: held
    arrive(3, "upsert", (3,), 3)  # ahead of 2: held
    advance(spec.closes_at(1))
    assert fn.accepted == 1 and sorted(fn.acc["a"]) == [1]
    arrive(2, "upsert", (2,), 2)
    advance(spec.closes_at(4))
    assert dead == []
    # an upsert counts as two (its deletion and its insertion): 1 + 2 + 2 + 2
    assert fn.accepted == 7 and sorted(fn.acc["a"]) == [1, 2, 3, 4]
    assert [fn.acc["a"][t][2] for t in (1, 2, 3, 4)] == [1, 2, 2, 2]
    assert [fn.acc["a"][t][0] for t in (1, 2, 3, 4)] == [{(1,): 1}, {(2,): 1}, {(3,): 1}, {(4,): 1}]
    list(fn.finish_bundle())
    assert incs == [7]


def test_the_registry_for_the_stateful_merge_emits_one_aggregate_per_tick_at_its_close():
    """``ResolveEntriesFn(per_stream=False)`` without counts (the stateful per-tick merge off the DirectRunner):
    at the end of a bundle, one element ``((stream, tick), aggregate)`` per resolved tick, stamped with the tick's
    close, in the global window. Its mutants raise there (``WindowedValue`` without its windows): loud, never
    reached by the capped covering tests. Reaches ``transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_93``
    and ``..._95``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=20.0)
    fn = ResolveEntriesFn(spec, (4,), True, per_stream=False)
    fn.start_bundle()
    cells = {}
    for eid, tick, item in (("e1", 1, (1,)), ("e2", 1, (2,)), ("e3", 2, (1,))):
        cells[eid] = (_Cell(), _Timer())
        out = list(
            fn.process(
                (("a", eid), (tick, 0, "insert", item, tick - 0.5, None)), meta=cells[eid][0], timer=cells[eid][1]
            )
        )
        assert out == []
    for eid, (meta, timer) in cells.items():
        assert list(fn.on_tick_end(key=("a", eid), ts=timer.at, meta=meta, timer=timer)) == []
    out = list(fn.finish_bundle())
    assert [(w.value, w.timestamp, w.windows) for w in out] == [
        ((("a", 1), (1, {(1,): 1, (2,): 1}, {}, 2)), spec.closes_at(1), (beam.window.GlobalWindow(),)),
        ((("a", 2), (2, {(1,): 1}, {}, 1)), spec.closes_at(2), (beam.window.GlobalWindow(),)),
    ]


def test_the_registry_with_counts_for_the_stateful_merge_sends_what_it_buffered_and_what_it_resolved():
    """``ResolveEntriesFn(per_stream=False, counts=True)`` (the DirectRunner with ``tick_merge: stateful``): the
    bundle that buffers updates sends ``((stream, tick), (COUNTS, +buffered))``; the bundle that resolves them
    sends ``((stream, tick), (COUNTS, aggregate or None, -resolved))``, rejected updates counted too (the merge
    step brings the tick's count back to 0 with them, and only then may the tick be released). Kills
    ``transforms.streaming.xǁResolveEntriesFnǁfinish_bundle__mutmut_42`` (the resolved count None: the merge
    step's sum then raises), and reaches ``..._10`` and ``..._21`` (they raise)."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=20.0)
    fn = ResolveEntriesFn(spec, (4,), True, per_stream=False, counts=True)
    fn.start_bundle()
    meta, timer = _Cell(), _Timer()
    key = ("a", "e")
    ups = [(1, 0, "insert", (1,), 0.5, None), (1, 1, "insert", (2,), 0.7, None), (2, 2, "delete", None, 1.5, None)]
    for u in ups:
        assert list(fn.process((key, u), meta=meta, timer=timer)) == []
    glob = (beam.window.GlobalWindow(),)
    out = [(w.value, w.timestamp, w.windows) for w in fn.finish_bundle()]
    assert out == [
        ((("a", 1), (COUNTS, 2)), spec.closes_at(1), glob),
        ((("a", 2), (COUNTS, 1)), spec.closes_at(2), glob),
    ]
    fn.start_bundle()
    dead = list(fn.on_tick_end(key=key, ts=spec.closes_at(1), meta=meta, timer=timer))
    assert [d.value.reason for d in dead] == ["duplicate_insert"]
    out = [(w.value, w.timestamp) for w in fn.finish_bundle()]
    assert out == [((("a", 1), (COUNTS, (1, {(1,): 1}, {}, 1), -2)), spec.closes_at(1))]
    fn.start_bundle()
    assert list(fn.on_tick_end(key=key, ts=spec.closes_at(2), meta=meta, timer=timer)) == []
    out = [(w.value, w.timestamp) for w in fn.finish_bundle()]
    assert out == [((("a", 2), (COUNTS, (2, {}, {((1,), 1): 1}, 1), -1)), spec.closes_at(2))]


def test_the_person_steps_limit_is_the_units_per_window():
    """``person_limit``: the unit's ``max_entries`` per ``per_window`` ticks, the window kept (without it the
    step would enforce L over the whole release, not the unit the calibration was given). Kills
    ``transforms.person.x_person_limit__mutmut_5``."""
    assert person_limit(PrivacyUnit.person(2, 3, per_window=5)) == PersonLimit(2, 5)
    assert person_limit(PrivacyUnit.person(3, 1)) == PersonLimit(3, None)


def test_a_person_cell_of_another_shape_is_refused():
    """``read_person_cell``: only the 5-tuple of its version is a cell; one field more or less, or the same
    fields in a list, is refused (``StateError``), never read as a person's state with a field dropped or
    shifted. Kills ``transforms.person.x_read_person_cell__mutmut_4``."""
    cell = person_cell(new_person_state(), 2, 3, ((3, 0, "insert", (0, 1), 2.5, None, "e", "P"),))
    assert read_person_cell(cell) == cell[1:]
    for bad in ((*cell, "more"), cell[:4], list(cell)):
        with pytest.raises(StateError):
            read_person_cell(bad)


def test_the_gated_person_steps_counts_are_stamped_with_their_earliest_ticks_close():
    """``BoundPersonsFn(counts=True)`` (the DirectRunner's gate): a bundle's counts leave as one element per
    stream, ``((stream, COUNTS), (COUNTS, ((tick, buffered - refused), ...)))``, stamped with the close of the
    earliest tick, so that it holds that tick's release until the counts arrive (stamped later, the release
    of the tick could fire first and miss its updates). Kills
    ``transforms.person.xǁBoundPersonsFnǁfinish_bundle__mutmut_14``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=100.0)
    fn = BoundPersonsFn(spec, PersonLimit(1), counts=True)
    run = _Persons(fn)
    for seq, eid in enumerate(("e1", "e2", "e3", "e4", "e5")):
        run.arrive("P", _upd(3, seq, "insert", eid))
    run.arrive("Q", _upd(4, 9, "insert", "e1"))
    out = list(fn.finish_bundle())
    assert [(w.value, w.timestamp) for w in out] == [((("a", COUNTS), (COUNTS, ((3, 5), (4, 1)))), spec.closes_at(3))]
    fn.start_bundle()
    run.advance(spec.closes_at(3))  # P's e1 admitted (its count goes on with it), e2..e5 refused: -4 at tick 3
    out = list(fn.finish_bundle())
    assert [(w.value, w.timestamp) for w in out] == [((("a", COUNTS), (COUNTS, ((3, -4),))), spec.closes_at(3))]


def test_the_sharded_registry_by_default_emits_per_stream_as_the_entry_registry_does():
    """``ResolveShardsFn``'s default (``per_stream=True``, as ``ResolveEntriesFn``'s): a bundle's resolved
    ticks leave as one element per stream, ``(stream, aggregates in tick order)``, stamped with the close of
    the earliest tick. Kills ``transforms.sharded.xǁResolveShardsFnǁ__init____mutmut_1``."""
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=20.0)
    fn = ResolveShardsFn(spec, (4,), True, shards=2)
    fn.start_bundle()
    key, cell, timers = ("a", 0), _Cell(), {}

    class _Tags:
        def set(self, ts, dynamic_timer_tag=""):
            timers[dynamic_timer_tag] = ts

    for eid, tick, item in (("e1", 1, (1,)), ("e2", 1, (2,)), ("e3", 2, (1,))):
        value = (eid, (tick, 0, "insert", item, tick - 0.5, None))
        assert list(fn.process((key, value), shard=cell, timer=_Tags())) == []
    for tag, ts in sorted(timers.items(), key=lambda kv: kv[1]):
        assert list(fn.on_tick_end(key=key, ts=ts, tag=tag, shard=cell, timer=_Tags())) == []
    out = [(w.value, w.timestamp) for w in fn.finish_bundle()]
    aggs = ((1, {(1,): 1, (2,): 1}, {}, 2), (2, {(1,): 1}, {}, 1))
    assert out == [(("a", aggs), spec.closes_at(1))]


def test_batches_after_finish_counts_only_the_batches_a_finished_mechanism_receives(monkeypatch):
    """``ReleaseStep.wake``: aggregates that reach a mechanism past its end are counted on
    ``batches_after_finish`` (operators see input the release ignored); before the end nothing is counted and
    the aggregates are applied; ``emit_results`` makes each answer a ``ReleaseRecord`` with every field (its
    error bound and beta, the spend, the tick's ``as_of``) and records the spend on ``budget_spent_micro``. The
    metric calls are recorded (no pipeline). Kills ``transforms.common.xǁReleaseStepǁwake__mutmut_1``, ``..._4``,
    ``..._8`` (``..._5`` raises), ``transforms.common.xǁReleaseStepǁdiscard__mutmut_1`` and
    ``transforms.common.x_emit_results__mutmut_55`` and ``..._75``."""
    calls = []

    class _Counter:
        def __init__(self, namespace, name):
            self.key = (namespace, name)

        def inc(self, n=1):
            calls.append((*self.key, n))

        update = inc

    class _Metrics:
        @staticmethod
        def counter(namespace, name):
            return _Counter(namespace, name)

        @staticmethod
        def distribution(namespace, name):
            return _Counter(namespace, name)  # update(n): recorded as inc

    monkeypatch.setattr(transforms.common, "Metrics", _Metrics)
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=4.0)
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    rel = ReleaseIdentity("beam57-wake-0001")
    step = ReleaseStep(spec, cfg, MECHANISMS["fully_dynamic"], NoiseKey.disabled(), False, release=rel)
    step.setup()
    core = step.new_core("a")
    out = []
    step.wake(core, 2, [(1, {(0,): 1}, {}, 1)], (), out)
    assert not core.finished and core.last_tick == 2 and out
    assert [c for c in calls if c[1] == "batches_after_finish"] == []
    records = list(transforms.common.emit_results(step, core, out, float))
    (a,) = [a for r in out for a in r.answers]  # the release at tick 2
    assert [(rec.value, rec.timestamp) for rec in records] == [
        (
            ReleaseRecord(
                "a", 2, a.segment, "n", floats(a.estimate), a.error_bound, a.beta, as_vector(a.spent), spec.as_of(2)
            ),
            2.0,
        )
    ]
    spent = [c for c in calls if c[1] == "budget_spent_micro"]
    assert spent == [(NAMESPACE, "budget_spent_micro", int(as_vector(core.spent)[0] * 1e6))] and spent[0][2] > 0
    for tick in (3, 4):
        step.wake(core, tick, [], (), out)
    assert core.finished
    step.wake(core, 5, [(5, {(0,): 1}, {}, 1), (6, {(0,): 2}, {}, 2)], (), out)
    assert [c for c in calls if c[1] == "batches_after_finish"] == [(NAMESPACE, "batches_after_finish", 2)]
    step.discard(core, [(7, {(0,): 1}, {}, 1)], out)  # aggregates the per-stream step discards: counted too
    assert [c for c in calls if c[1] == "batches_after_finish"][1:] == [(NAMESPACE, "batches_after_finish", 1)]
