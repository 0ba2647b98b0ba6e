# ruff: noqa: B008 - Beam's stateful DoFn idiom: state and timer parameters are declared as defaults
"""The person step: contribution bounding under the person unit (issue 28, item 2), ahead of the entry
registry.

Under ``PrivacyUnit.person(L, k, ...)`` neighbouring inputs differ in all updates of one person, who may
bring at most ``L`` entries (per window of ``per_window`` ticks, if set). This step enforces the limit in
the pipeline instead of assuming it: keyed by ``(stream, person id)``, it decides each person's updates by
:func:`transforms.core.contribution.bounding.bound_person` (the rule the in-memory core applies too), in the
project's total order on updates (``update_order``: tick, event time, seq, op rank, item, raw; then the entry
id), so the order of lines never changes a decision. An entry is admitted whole at its first insertion
while the person is under the limit, or refused for good: every update of a refused entry is a dead letter
``contribution_bounded`` (never half an entry), and an upsert or delete of an entry the person has not
inserted is ``unknown_entry``. Admitted updates go on to the entry registry keyed by ``(stream,
person_entry_key(person, entry id))``, an injective key, so two persons' entries never meet.

Wiring (``transforms.releases.ReleaseContinually``, under the person unit only)::

  ValidateFn (PersonUpdateCheck) ── ((stream, person), update) ──►
      streaming: BoundPersons = ParDo(BoundPersonsFn): state per (stream, person), one event-time timer
                 at the earliest pending tick; a tick's updates are decided when it closes (the registry's
                 schedule: the watermark past its end plus the allowed lateness)
      bounded:   GroupByPerson, BoundPersons = ParDo(BoundPersonsBoundedFn): all of a person's updates at
                 once, in order
  ── ((stream, person_entry_key), update) ──► ResolveEntries (the entry registry, unchanged)

**Why it keeps the guarantee** (``docs/beam.md``, "The person step"; ``docs/contribution.md`` section 6):
a decision reads only the state and the records of its own key, one person of one stream. Removing a
person's records therefore changes no other person's admissions, and (entries keyed by person) no other
entry's resolution by the registry: two neighbouring inputs reach the registry differing only in that
person's admitted entries, at most ``L`` (per window), each at most ``k`` mutations (the registry's limit),
which is what the calibration assumes. Nothing public depends on the person step: it releases nothing,
emits at the registry's times (public functions of the tick), and its counters are operator metrics.

The update as it travels (``UpdateCheck``'s tuple plus two fields): ``(tick, seq, op, item, event_time,
raw, entry_id, person)``; the registry's steps read the first six, and the dead letters of both steps
rebuild the record as received from all eight (``transforms.common.update_record``).

State of the streaming step (``person``, a ReadModifyWrite cell of plain data, versioned by its first
element; the timer ``tick_end``; names that never change): ``(PERSON_CELL_VERSION, person state, last
decided tick, the tick the timer is set for, pending updates)``, where the person state is
``bound_person``'s own versioned tuple. A person's cell is kept for the whole release (the admitted and
refused entries must be remembered to keep every later update's verdict): one small entry per entry id
the person brought.

**Across streams** (``privacy.max_streams_per_person: n``, ``PersonLimit.max_streams``; not ``per_stream``): the
step is keyed by ``(ALL_STREAMS, person)`` instead, one key per person whatever the stream, each update carrying
its stream as a ninth field (``PersonUpdateCheck(across_streams=True)``), and decides by
:func:`~transforms.core.contribution.bounding.bound_person_streams`: a person's updates reach at most
``max_streams`` streams (the first the person inserts into, in the total order), each with at most ``L``
entries. Its cell holds that function's state in place of ``bound_person``'s. The admitted updates leave
as above (eight fields, keyed ``(stream, person_entry_key)``): the registry and everything after it are
unchanged. Each stream runs at its ``1 / max_streams`` share of the configured budget
(``PipelineConfig.stream_budget``, ``stream_share``), so the budget protects a person across all streams.
"""

from __future__ import annotations

import typing

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder
from apache_beam.metrics import Metrics
from apache_beam.transforms import window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.windowed_value import WindowedValue

import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from transforms.common import dead_letter
from transforms.core.contribution.bounding import (
    PersonLimit,
    bound_person,
    bound_person_streams,
    new_person_state,
    new_streams_state,
)
from transforms.core.foundation.state import StateError
from transforms.per_stream import COUNTS
from transforms.spec import NAMESPACE, StreamSpec
from transforms.validate import UpdateCheck

__all__ = [
    "ALL_STREAMS",
    "PERSON_CELL_VERSION",
    "PERSON_STAGE",
    "PERSON_METRICS",
    "person_limit",
    "person_entry_key",
    "PersonUpdateCheck",
    "person_cell",
    "read_person_cell",
    "BoundPersonsFn",
    "BoundPersonsBoundedFn",
    "bound_persons",
]

PERSON_CELL_VERSION = 1
#: the stream part of the person step's key across streams (``max_streams``): never a declared stream
#: (``ReleaseContinually`` refuses a stream named so under that limit)
ALL_STREAMS = ""
#: the ``stage`` of the person step's dead letters
PERSON_STAGE = "person"
#: the step's counters (namespace ``dp_dynamic``), besides ``dead_letter_<reason>``: persons seen (a
#: (stream, person) key's first update), entries admitted and entries refused by the limit (an entry counts
#: once, at its first insertion; ``dead_letter_contribution_bounded`` counts the refused updates)
PERSON_METRICS = ("persons_seen", "entries_admitted", "entries_refused")

_PERSONS_SEEN = Metrics.counter(NAMESPACE, "persons_seen")
_ENTRIES_ADMITTED = Metrics.counter(NAMESPACE, "entries_admitted")
_ENTRIES_REFUSED = Metrics.counter(NAMESPACE, "entries_refused")


def person_limit(unit) -> PersonLimit:
    """The person step's limit for a person ``PrivacyUnit``: ``max_entries`` per person, per ``per_window``
    ticks if set."""
    if unit.kind != "person":
        raise ValueError(f"the person step needs a person unit, got {unit.kind!r}")
    return PersonLimit(unit.max_entries, unit.per_window, getattr(unit, "max_streams", None))


def person_entry_key(person: str, entry_id: str) -> str:
    """The registry's entry key of ``entry_id`` brought by ``person``: injective in the pair (the length of
    the person id says where it ends), so two persons' entries never meet in the registry."""
    return f"{len(person)}:{person}:{entry_id}"


class PersonUpdateCheck(UpdateCheck):
    """:class:`~transforms.validate.UpdateCheck` under the person unit: the same checks, then the person id,
    which must be present (``missing_field`` when ``UpdateRecord.person`` is None: the parse step found no
    ``privacy.person_field``) and a non-empty string (``malformed`` otherwise). Output: ``((stream, person),
    (tick, seq, op, item, event_time, raw, entry_id, person))``; ``across_streams`` (``max_streams``):
    ``((ALL_STREAMS, person), (..., entry_id, person, stream))``. Same label and counter as the update check
    (a stateless step: its name holds no state)."""

    def __init__(self, spec: StreamSpec, domain_sizes: tuple, digests: bool = False, across_streams: bool = False):
        super().__init__(spec, domain_sizes, digests)
        self.across_streams = across_streams

    def __call__(self, rec):
        reason, out = super().__call__(rec)
        if reason:
            return reason, None
        person = getattr(rec, "person", None)
        if person is None:
            return "missing_field", None
        if type(person) is not str or not person:
            return "malformed", None
        (stream, entry_id), value = out
        if self.across_streams:
            return None, ((ALL_STREAMS, person), (*value, entry_id, person, stream))
        return None, ((stream, person), (*value, entry_id, person))


def person_cell(state, last: int, timer_tick: int | None, pending: tuple) -> tuple:
    """The streaming step's stored value (plain data, versioned)."""
    return (PERSON_CELL_VERSION, state, last, timer_tick, pending)


def read_person_cell(cell, across_streams: bool = False) -> tuple:
    """``(person state, last decided tick, timer tick, pending)`` of a stored value (None: a new person; its
    state across streams with ``across_streams``)."""
    if cell is None:
        return (new_streams_state() if across_streams else new_person_state()), 0, None, ()
    if type(cell) is not tuple or len(cell) != 5 or cell[0] != PERSON_CELL_VERSION:
        raise StateError(f"not a person step cell of version {PERSON_CELL_VERSION}")  # no payload: person ids
    return cell[1], cell[2], cell[3], tuple(cell[4])


class _DecideFn(beam.DoFn):
    """What both person DoFns do with a batch of one person's updates: decide them by ``bound_person``,
    emit the admitted ones keyed for the registry and dead-letter the others; count entries once per
    bundle (counters incremented in a timer callback are lost on the BundleBased runner)."""

    DEAD = "dead_letters"

    def __init__(self, spec: StreamSpec, limit: PersonLimit):
        if not isinstance(limit, PersonLimit):
            raise TypeError("limit must be a transforms.core.contribution.bounding.PersonLimit")
        self.spec = spec
        self.limit = limit
        self.across = limit.max_streams is not None  # keyed (ALL_STREAMS, person), the stream in each update

    def new_state(self) -> tuple:
        return new_streams_state() if self.across else new_person_state()

    def stream_of(self, key, value) -> str:
        """The stream of ``value`` under ``key`` (across streams: its ninth field)."""
        return value[8] if self.across else key[0]

    def start_bundle(self):
        self.counts = [0, 0, 0]  # persons seen, entries admitted, entries refused

    def finish_bundle(self):
        for counter, n in zip((_PERSONS_SEEN, _ENTRIES_ADMITTED, _ENTRIES_REFUSED), self.counts):
            if n:
                counter.inc(n)
        self.counts = [0, 0, 0]

    def decide(self, key, state, updates):
        """Decide ``updates`` (travelling tuples) of the person ``key = (stream, person)`` (across streams:
        ``(ALL_STREAMS, person)``) from ``state``; returns ``(new state, outputs)``."""
        if self.across:
            return self._decide_across(key, state, updates)
        stream, person = key
        new, decisions = bound_person(state, [(u[6], u) for u in updates], self.limit)
        self.counts[1] += len(new[1]) - len(state[1])
        self.counts[2] += len(new[2]) - len(state[2])
        out = []
        for entry_id, value, reason in decisions:
            if reason is None:
                out.append(((stream, person_entry_key(person, entry_id)), value))
            else:
                self.refused(stream, value)
                out.append(beam.pvalue.TaggedOutput(self.DEAD, dead_letter(reason, key, value, PERSON_STAGE)))
        return new, out

    def _decide_across(self, key, state, updates):
        """``decide`` under ``max_streams``: ``bound_person_streams`` over the person's updates of every
        stream; what leaves is what ``decide`` emits per stream (eight fields, keyed by the update's stream)."""
        person = key[1]
        new, decisions = bound_person_streams(state, [(u[8], u[6], u) for u in updates], self.limit)
        for i, n in ((1, 1), (2, 2)):  # entries admitted, refused: summed over the streams' states
            before = sum(len(s[n]) for s in state[2].values())
            self.counts[i] += sum(len(s[n]) for s in new[2].values()) - before
        out = []
        for stream, entry_id, value, reason in decisions:
            value = value[:8]
            if reason is None:
                out.append(((stream, person_entry_key(person, entry_id)), value))
            else:
                self.refused(stream, value)
                dead = dead_letter(reason, (stream, person), value, PERSON_STAGE)
                out.append(beam.pvalue.TaggedOutput(self.DEAD, dead))
        return new, out

    def refused(self, stream, value) -> None:
        """Called for each update ``decide`` refuses (a dead letter)."""


@beam.typehints.with_output_types(tuple[tuple[str, str], typing.Any])
class BoundPersonsFn(_DecideFn):
    """The streaming person step: state per ``(stream, person)`` (module docstring), one event-time timer
    kept at the earliest pending tick and firing when that tick closes (``StreamSpec.closes_at``, as the
    registry's), which decides the pending updates of the ticks closed by then, in order. An update older
    than the person's last decided tick is ``late``: dead-lettered (stage ``person``), or decided at the
    person's next tick (``late_policy``), as the registry does for an entry.

    ``counts=True`` (the DirectRunner's gate, ``transforms.streaming.counts_gate``): this step emits from a
    timer, and the DirectRunner holds no watermark for a stage's pending timers, so when the watermark
    jumps several ticks the per-stream step could release tick t before this step had decided (and the
    registry resolved) the updates of t. So the step counts, per (stream, tick): +1 for each update it
    buffers (in ``process``, at the tick it will be decided at) and -1 for each it refuses when deciding;
    an admitted update's count goes on with it: the registry (``ResolveEntriesFn(upstream_counts=True)``)
    takes it over in the bundle that buffers the update (-1 and +1 summed there, never a zero in between)
    and closes it when it resolves the update. The counts leave at the end of the bundle as one element
    per stream, ``((stream, COUNTS), (COUNTS, ((tick, d), ...)))``, stamped with the close of their earliest
    tick: the registry passes them on to the per-stream step (``GatedPerStreamStepFn``), and until they
    arrive there they hold its input watermark before any of their ticks' releases. A count is a number of
    updates held by this step, it only delays a firing of the per-stream step and is never released."""

    PERSON = ReadModifyWriteStateSpec("person", FastPrimitivesCoder())  # person_cell(...)
    TICK_END = TimerSpec("tick_end", TimeDomain.WATERMARK)

    def __init__(self, spec: StreamSpec, limit: PersonLimit, counts: bool = False):
        super().__init__(spec, limit)
        self.counts_on = counts

    def start_bundle(self):
        super().start_bundle()
        self.deltas = {}  # stream -> tick -> updates buffered minus updates refused (counts=True)

    def _count(self, stream, tick: int, d: int) -> None:
        ticks = self.deltas.setdefault(stream, {})
        ticks[tick] = ticks.get(tick, 0) + d

    def refused(self, stream, value) -> None:
        if self.counts_on:  # its count ends here; an admitted update's goes on to the registry with it
            self._count(stream, value[0], -1)

    def finish_bundle(self):
        super().finish_bundle()
        deltas, self.deltas = self.deltas, {}
        glob = (window.GlobalWindow(),)
        for stream, ticks in deltas.items():
            counts = tuple(sorted((t, d) for t, d in ticks.items() if d))
            if counts:  # stamped with the close of its earliest tick: it holds that tick's release
                yield WindowedValue(((stream, COUNTS), (COUNTS, counts)), self.spec.closes_at(counts[0][0]), glob)

    def process(self, element, cell=beam.DoFn.StateParam(PERSON), timer=beam.DoFn.TimerParam(TICK_END)):
        yield from self._buffer(element, cell, timer)

    def _buffer(self, element, cell, timer):
        key, value = element
        stored = cell.read()
        if stored is None:
            self.counts[0] += 1
        state, last, timer_tick, pending = read_person_cell(stored, self.across)
        tick = value[0]
        stream = self.stream_of(key, value)
        # late per key (``StreamSpec.late_policy``): ``last`` is the last tick this person's timer closed (the
        # watermark passed it), public and of this person's records only, never another person's
        if tick <= last:
            if self.spec.late_policy == "dead_letter":
                dead = dead_letter("late", (stream, key[1]), value[:8], PERSON_STAGE)
                yield beam.pvalue.TaggedOutput(self.DEAD, dead)
                return
            tick = last + 1  # decided at the person's current tick
            value = (tick, *value[1:])
        if self.counts_on:
            self._count(stream, tick, 1)
        if timer_tick is None or tick < timer_tick:  # a timer holds one time: keep the earliest
            timer_tick = tick
            timer.set(self.spec.closes_at(tick))
        cell.write(person_cell(state, last, timer_tick, (*pending, value)))

    @on_timer(TICK_END)
    def on_tick_end(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        cell=beam.DoFn.StateParam(PERSON),
        timer=beam.DoFn.TimerParam(TICK_END),
    ):
        yield from self._fire(key, ts, cell, timer)

    def _fire(self, key, ts, cell, timer):
        upto = self.spec.closed_tick(ts)
        state, last, _, pending = read_person_cell(cell.read(), self.across)
        now = [u for u in pending if u[0] <= upto]
        later = tuple(u for u in pending if u[0] > upto)
        state, out = self.decide(key, state, now)  # a refused update's count ends here (``refused``)
        yield from out
        nxt = min(u[0] for u in later) if later else None
        cell.write(person_cell(state, max(upto, last), nxt, later))
        if nxt is not None:
            timer.set(self.spec.closes_at(nxt))


@beam.typehints.with_output_types(tuple[tuple[str, str], typing.Any])
class BoundPersonsBoundedFn(_DecideFn):
    """The bounded person step: after a GroupByKey by ``(stream, person)``, all of a person's updates at
    once, decided in order (no state, no timers; the same decisions as the streaming step's tick by tick,
    since the order puts the tick first)."""

    def process(self, element):
        key, updates = element
        self.counts[0] += 1
        _, out = self.decide(key, self.new_state(), list(updates))
        yield from out


def bound_persons(valid, spec: StreamSpec, limit: PersonLimit, bounded: bool, fn: BoundPersonsFn | None = None):
    """Apply the person step to ``valid`` (``PersonUpdateCheck``'s output) inside the calling transform's
    ``expand``; returns ``(admitted, dead letters)``, ``admitted`` keyed ``(stream, person_entry_key)`` for
    the registry. Names in the graph (stable: a savepoint matches them): ``BoundPersons`` (streaming:
    ``BoundPersons/ParDo(BoundPersonsFn)``, state ``person``, timer ``tick_end``); bounded:
    ``GroupByPerson`` and ``BoundPersons``. ``fn``: the streaming step's DoFn, ``BoundPersonsFn(spec,
    limit)`` if None; the DirectRunner's gate passes ``transforms.streaming.GatedBoundPersonsFn``, which
    sends per-tick counts and numbers each entry's updates (the registry must then be built with
    ``upstream_counts=True``; the label ``BoundPersons`` is the same)."""
    key_type = tuple[tuple[str, str], typing.Any]
    if bounded:
        grouped = valid | "GroupByPerson" >> beam.GroupByKey()
        out = grouped | "BoundPersons" >> beam.ParDo(BoundPersonsBoundedFn(spec, limit)).with_outputs(
            _DecideFn.DEAD, main="admitted"
        )
    else:
        fn = BoundPersonsFn(spec, limit) if fn is None else fn
        out = valid | "BoundPersons" >> beam.ParDo(fn).with_input_types(key_type).with_output_types(
            key_type
        ).with_outputs(_DecideFn.DEAD, main="admitted")
    return out.admitted, out[_DecideFn.DEAD]
