"""The streaming (unbounded) path: per-entry state and timers, a per-tick
merge, and a per-stream release step driven by event-time timers.

Wiring (``ReleaseContinually._expand_unbounded``)::

  ((stream, entry), update) ── ResolveEntries ──► (stream, aggregates)
        stateful, keyed by (stream, entry id), an event-time timer per tick; sums
        each (stream, tick) over the bundle
  (other runners: ((stream, tick), aggregate) ── MergePerTick: stateful, keyed by
        (stream, tick), one aggregate per tick; see ``stateful_tick_merge``)
  declared streams ── StartMarkers ──┐
                                     ▼
  ReleaseStream: the per-stream step (``transforms.per_stream.PerStreamStepFn``
  with ``transforms.common.ReleaseStep``): stateful, keyed by stream, event-time
  timers: applies each tick's aggregate in tick order to the mechanism
  (restored from its versioned state), lets it release on schedule, emits
  answers and node outputs.

Time (``StreamSpec``): tick ``k`` covers event times ``[origin + (k-1) s,
origin + k s)``. An entry's updates of tick k are resolved when the tick
closes (``closes_at``: the watermark passes the tick's end plus the allowed
lateness); the per-stream step applies tick k's batch, and the releases of
tick k, when its input is final (``final_at``: the close of tick k + 1).
Everything stays in the global window: late data is never dropped by
windowing.
"""

from __future__ import annotations

import typing

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder, VarIntCoder
from apache_beam.metrics import Metrics
from apache_beam.transforms import window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.trigger import AccumulationMode, AfterWatermark
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import Timestamp
from apache_beam.utils.windowed_value import WindowedValue

import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from transforms.common import dead_letter, resolve_updates, update_order
from transforms.core.contribution.bounding import PersonLimit
from transforms.core.foundation.aggregates import fold, in_tick_order
from transforms.per_stream import (
    COUNTS,
    INPUT_END,
    START,
    GatedPerStreamStepFn,
    PerStreamStepFn,
    holds_timer_watermarks,
)
from transforms.person import BoundPersonsFn
from transforms.spec import NAMESPACE, StreamSpec

__all__ = [
    "ResolveEntriesFn",
    "MergeTickFn",
    "GatedBoundPersonsFn",
    "TICK_MERGES",
    "stateful_tick_merge",
    "counts_gate",
    "per_stream_step",
    "with_input_end",
]

_UPDATES_ACCEPTED = Metrics.counter(NAMESPACE, "updates_accepted")  # resolved per container at inc()


@beam.typehints.with_output_types(tuple[tuple[str, int], typing.Any])
class ResolveEntriesFn(beam.DoFn):
    """Resolves one entry's updates in (tick, seq) order when their tick is over.

    State per (stream, entry), in one ReadModifyWrite value (each state write
    costs the SDK's state-cache sizing, so one value is cheaper than several):
    the entry's live state (item, insertion tick), the last resolved tick, the
    tick the timer is set for and the buffered updates. Accepted updates are
    resolved at the tick's end (plus the allowed lateness) and summed per
    (stream, tick) over the bundle (the pre-aggregation a lifted combiner does:
    on the DirectRunner all timers due together fire in one bundle, so a tick
    leaves as one aggregate). At the end of the bundle they leave as
    ``((stream, tick), aggregate)`` (``per_stream=False``, for the stateful
    per-tick merge) or as ``(stream, aggregates)``, one element per stream.
    Rejections (unknown entry, duplicate insert, insertion-only violations,
    late) go to dead letters.

    ``counts=True`` (the DirectRunner, ``counts_gate``): each output element is
    ``(stream, (COUNTS, aggregates, deltas))``, ``deltas`` the per-tick update
    counts ``((tick, d), ...)``: +1 for each update buffered here (in
    ``process``) and -1 for each update resolved at a tick's close (in the
    timer, accepted or rejected), so that the per-stream step knows, from the
    data, when every update of a tick has been resolved (``PerStreamStepFn``,
    ``gate``). The +1 counts leave from the bundle that buffered their updates,
    stamped with their tick's close: they hold the per-stream step's input
    watermark before its tick's release can fire, which the DirectRunner does
    not do for this step's pending timers.

    ``upstream_counts=True`` (with ``counts``; under the person unit, whose step counts its updates too:
    ``transforms.person.BoundPersonsFn(counts=True)``): the person step's count elements, keyed ``(stream,
    COUNTS)`` (never an entry key: ``person_entry_key`` always holds a ``:``), are summed into this bundle's
    counts and passed on; and each update takes over its count from the person step: -1 at the tick it came
    with, +1 at the tick it is buffered at, in the same bundle (so the two never leave apart and no tick's
    count passes through 0 in between). Each update comes numbered in its entry's order (a ninth field: the
    person step is then ``GatedBoundPersonsFn``): one that arrives ahead of an earlier update of its entry is
    held (counted at its tick, so the release waits) until the earlier ones arrive, so the registry resolves
    an entry's updates in the order the person step decided them, whatever order the DirectRunner delivers
    its firings in; the late rule then applies as before, to each update in its entry's order.
    """

    META = ReadModifyWriteStateSpec("meta", FastPrimitivesCoder())  # (state, last, timer tick, pending[, seen, held])
    TICK_END = TimerSpec("tick_end", TimeDomain.WATERMARK)
    DEAD = "dead_letters"

    def __init__(
        self,
        spec: StreamSpec,
        domain_sizes: tuple,
        deletions_allowed: bool,
        per_stream: bool = True,
        max_mutations: int | None = None,
        counts: bool = False,
        upstream_counts: bool = False,
    ):
        if upstream_counts and not counts:
            raise ValueError("the person step's counts go on through this step's counts (counts=True)")
        self.spec = spec
        self.domain_sizes = tuple(domain_sizes)
        self.deletions_allowed = deletions_allowed
        self.per_stream = per_stream
        self.max_mutations = max_mutations
        self.counts = counts
        self.upstream_counts = upstream_counts

    #: under ``upstream_counts``, resolve an entry's updates in the person step's order (the numbers): the
    #: broken twin in ``tests/test_streaming_jumps.py`` turns it off
    in_order = True

    def start_bundle(self):
        self.acc = {}  # stream -> tick -> [inserts, deletes, n]
        self.deltas = {}  # stream -> tick -> updates buffered minus updates resolved (counts=True)
        self.resolved = {}  # stream -> tick -> minus the updates resolved (counts=True, per_stream=False)
        self.accepted = 0

    def _count(self, stream, tick: int, d: int, into=None) -> None:
        into = self.deltas if into is None else into
        ticks = into.get(stream)
        if ticks is None:
            ticks = into[stream] = {}
        ticks[tick] = ticks.get(tick, 0) + d

    def finish_bundle(self):
        acc, self.acc = self.acc, {}
        if self.accepted:  # one metric update per bundle, not per entry
            _UPDATES_ACCEPTED.inc(self.accepted)
            self.accepted = 0
        glob = (window.GlobalWindow(),)
        if self.counts and not self.per_stream:  # the stateful merge's counts (``MergeTickFn(counts=True)``)
            deltas, self.deltas = self.deltas, {}
            resolved, self.resolved = self.resolved, {}
            for stream, ticks in deltas.items():  # buffered: on at once, through the merge step
                for t, d in sorted(ticks.items()):
                    if d:
                        yield WindowedValue(((stream, t), (COUNTS, d)), self.spec.closes_at(t), glob)
            for stream in acc.keys() | resolved.keys():  # resolved: with their tick's aggregate
                aggs = {agg[0]: agg for agg in in_tick_order(acc.get(stream, {}))}
                done = resolved.get(stream, {})
                for t in sorted(aggs.keys() | done.keys()):
                    yield WindowedValue(
                        ((stream, t), (COUNTS, aggs.get(t), done.get(t, 0))), self.spec.closes_at(t), glob
                    )
            return
        if self.counts:
            deltas, self.deltas = self.deltas, {}
            for stream in acc.keys() | deltas.keys():
                aggs = in_tick_order(acc.get(stream, {}))
                counts = tuple(sorted((t, d) for t, d in deltas.get(stream, {}).items() if d))
                if aggs or counts:  # stamped with the close of its earliest tick: it holds that tick's release
                    first = min([a[0] for a in aggs[:1]] + [c[0] for c in counts[:1]])
                    yield WindowedValue((stream, (COUNTS, aggs, counts)), self.spec.closes_at(first), glob)
            return
        for stream, ticks in acc.items():
            aggs = in_tick_order(ticks)
            if not aggs:  # every update of this stream in the bundle was rejected
                continue
            if self.per_stream:  # stamped with its earliest tick's resolution time
                yield WindowedValue((stream, tuple(aggs)), self.spec.closes_at(aggs[0][0]), glob)
            else:
                for agg in aggs:
                    yield WindowedValue(((stream, agg[0]), agg), self.spec.closes_at(agg[0]), glob)

    def _read(self, meta) -> tuple:
        """``(state, last, timer tick, pending, seen, held)`` of the stored value: ``seen`` the number of the
        person step's updates of this entry that have arrived in order, ``held`` those that came ahead of an
        earlier one, ``((n, value), ...)`` (``upstream_counts`` only; the stored value is the 4-tuple
        otherwise)."""
        stored = meta.read() or (None, 0, None, ())
        return stored if len(stored) == 6 else (*stored, 0, ())

    def _write(self, meta, state, last, timer_tick, pending, seen, held) -> None:
        meta.write(
            (state, last, timer_tick, pending, seen, held)
            if self.upstream_counts
            else (state, last, timer_tick, pending)
        )

    def process(
        self,
        element,
        meta=beam.DoFn.StateParam(META),
        timer=beam.DoFn.TimerParam(TICK_END),
    ):
        key, value = element  # (tick, seq, op, item, event_time, raw)
        if self.upstream_counts and key[1] == COUNTS:  # the person step's counts, passed on (no state touched)
            for t, d in value[1]:
                self._count(key[0], t, d)
            return
        state, last, timer_tick, pending, seen, held = self._read(meta)
        if self.upstream_counts:
            self._count(key[0], value[0], -1)  # taken over from the person step (+1 below, or dead-lettered)
            n, value = value[8], value[:8]  # this update's number in its entry's order (``GatedBoundPersonsFn``)
            if self.in_order and n != seen + 1:
                # an earlier update of this entry is still on its way (the DirectRunner hands the person step's
                # firings over in no fixed order): held, counted at its tick, until the ones before it arrive
                self._count(key[0], value[0], 1)
                self._write(meta, state, last, timer_tick, pending, seen, tuple(sorted((*held, (n, value)))))
                return
            seen = n
        out = self._admit(key, value, last, timer_tick, pending, timer)
        timer_tick, pending = next(out)
        yield from out
        while held and held[0][0] == seen + 1:  # the held ones that now come next, in their order
            (seen, value), held = held[0], held[1:]
            self._count(key[0], value[0], -1)  # its held count, taken over again by ``_admit``
            out = self._admit(key, value, last, timer_tick, pending, timer)
            timer_tick, pending = next(out)
            yield from out
        self._write(meta, state, last, timer_tick, pending, seen, held)

    def _admit(self, key, value, last, timer_tick, pending, timer):
        """Buffer one update of the entry ``key``: yields ``(timer tick, pending)`` first, then its dead letter
        if it is late under ``late_policy: dead_letter``."""
        tick = value[0]
        # Late is decided per key (``StreamSpec.late_policy``): ``last`` is the last tick this entry's timer
        # closed, i.e. a tick whose close the watermark passed: public (a tick, the watermark) and of this
        # entry only, so no other entry's data decides whether this update is dropped. A new entry has
        # resolved nothing (``last`` 0): its first update is never late; if its tick was already released,
        # the per-stream step applies it at the stream's next tick (never to a released tick).
        if tick <= last:
            if self.spec.late_policy == "dead_letter":
                yield timer_tick, pending
                yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter("late", key, value))
                return
            tick = last + 1  # apply at the entry's current tick
        pending = pending + ((tick, *value[1:]),)
        if self.counts:
            self._count(key[0], tick, 1)
        if timer_tick is None or tick < timer_tick:  # a timer holds one time: keep the earliest
            timer_tick = tick
            timer.set(self.spec.closes_at(tick))
        yield timer_tick, pending

    @on_timer(TICK_END)
    def on_tick_end(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        meta=beam.DoFn.StateParam(META),
        timer=beam.DoFn.TimerParam(TICK_END),
    ):
        stream, entry_id = key
        upto = self.spec.closed_tick(ts)
        state, last, _, pending, seen, held = self._read(meta)
        pending = sorted(pending, key=update_order)
        now = [p for p in pending if p[0] <= upto]
        later = tuple(p for p in pending if p[0] > upto)
        acc = self.acc.get(stream)
        if acc is None:
            acc = self.acc[stream] = {}
        state, _, dead, accepted = resolve_updates(
            state, entry_id, now, self.domain_sizes, self.deletions_allowed, self.max_mutations, acc
        )
        self.accepted += accepted
        if self.counts:
            into = None if self.per_stream else self.resolved
            for p in now:
                self._count(stream, p[0], -1, into)
        for reason, value in dead:
            yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter(reason, key, value))
        if state is None and not later and not self.upstream_counts:
            # a deleted entry with nothing pending keeps no state: registry state is
            # O(live entries), not O(all entries ever seen) (with a mutation limit a
            # deleted entry keeps its tombstone, which is not None). Under the person step's numbering
            # (``upstream_counts``) the entry keeps its count of updates in order (``seen``): a number
            # seen again from 1 would hold the entry's next update for ever.
            meta.clear()
        else:
            # ``later`` holds no held update: those wait for an earlier one, whose arrival sets the timer.
            # ``upto`` is a tick of an update in order, so an update still on its way (a later tick than
            # those) is never late by it
            nxt = later[0][0] if later else None
            self._write(meta, state, max(upto, last), nxt, later, seen, held)
            if nxt is not None:
                timer.set(self.spec.closes_at(nxt))


@beam.typehints.with_output_types(tuple[str, typing.Any])
class MergeTickFn(beam.DoFn):
    """Merges each (stream, tick)'s batches into one, in parallel across ticks,
    so the per-stream step receives one aggregate per tick on every runner.

    Keyed by ``(stream, tick)``, in the global window: a bag of batches and one
    event-time timer, half a tick after the tick's batches are emitted (the end
    of the tick plus the allowed lateness). A key per tick keeps a backlog
    linear (keys shared by several ticks would re-read the pending ticks at
    every flush); runners drop cleared state, but the DirectRunner keeps an
    empty entry per key it has seen. Nothing is dropped: a batch arriving after
    its tick's flush is flushed on its own, and the per-stream step applies it
    at its current tick. (The flush handles several ticks per key, so the
    keying can change without touching it.)

    ``counts=True`` (the DirectRunner with ``tick_merge: stateful``, ``counts_gate``): the registry step
    (``ResolveEntriesFn(per_stream=False, counts=True)``) sends ``(COUNTS, d)`` for the updates it buffered,
    passed on at once to the per-stream step as ``(stream, (COUNTS, (), ((tick, d),)))`` with the
    element's timestamp (the close of its tick: it holds the per-stream step's input watermark before the
    tick's release until it arrives), and ``(COUNTS, aggregate or None, -resolved)`` for the updates it
    resolved, buffered like an aggregate and flushed with it as ``(stream, (COUNTS, aggregates, counts))``:
    so a tick's count comes back to 0 at the per-stream step only when every aggregate of the tick is
    there, whichever timer fires first. The bag's items are then ``(tick, aggregate or None, count)``."""

    BUFFER = BagStateSpec("buffer", FastPrimitivesCoder())  # tick aggregates
    FLUSH_TICK = ReadModifyWriteStateSpec("flush_tick", VarIntCoder())
    FLUSH = TimerSpec("flush", TimeDomain.WATERMARK)

    def __init__(self, spec: StreamSpec, counts: bool = False):
        self.spec = spec
        self.counts = counts

    def _flush_time(self, tick: int) -> Timestamp:
        return self.spec.tick_middle(tick + self.spec.lateness_ticks + 1)  # half a tick after it closes

    def process(
        self,
        element,
        buffer=beam.DoFn.StateParam(BUFFER),
        flush_tick=beam.DoFn.StateParam(FLUSH_TICK),
        flush=beam.DoFn.TimerParam(FLUSH),
        ts=beam.DoFn.TimestampParam,
    ):
        (stream, tick), agg = element
        if self.counts:
            if len(agg) == 2:  # updates buffered by the registry: on at once (they hold the release)
                return [beam.window.TimestampedValue((stream, (COUNTS, (), ((tick, agg[1]),))), ts)]
            agg = (tick, agg[1], agg[2])  # resolved: (tick, aggregate or None, count), flushed together
        buffer.add(agg)
        tick = agg[0]
        current = flush_tick.read()
        if current is None or tick < current:  # a timer holds one time: keep the earliest
            flush_tick.write(tick)
            flush.set(self._flush_time(tick))

    @on_timer(FLUSH)
    def on_flush(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        buffer=beam.DoFn.StateParam(BUFFER),
        flush_tick=beam.DoFn.StateParam(FLUSH_TICK),
        flush=beam.DoFn.TimerParam(FLUSH),
    ):
        stream, _ = key
        due: dict[int, list] = {}  # tick -> [inserts, deletes, n]
        counts: dict[int, int] = {}  # tick -> count (counts=True)
        later = []
        for agg in buffer.read():
            if self._flush_time(agg[0]) > ts:
                later.append(agg)
            elif not self.counts:
                fold(due, *agg)
            else:
                counts[agg[0]] = counts.get(agg[0], 0) + agg[2]
                if agg[1] is not None:
                    fold(due, *agg[1])
        buffer.clear()
        flush_tick.clear()
        if later:
            for agg in later:
                buffer.add(agg)
            first = min(agg[0] for agg in later)
            flush_tick.write(first)
            flush.set(self._flush_time(first))
        if self.counts:
            deltas = tuple(sorted((t, d) for t, d in counts.items() if d))
            if due or deltas:
                yield beam.window.TimestampedValue((stream, (COUNTS, in_tick_order(due), deltas)), ts)
            return
        for tick in sorted(due):
            ins, dele, n = due[tick]
            yield beam.window.TimestampedValue((stream, ((tick, ins, dele, n),)), ts)


@beam.typehints.with_output_types(tuple[tuple[str, str], typing.Any])
class GatedBoundPersonsFn(BoundPersonsFn):
    """The person step on the DirectRunner's gated path (``ReleaseContinually`` passes it to
    ``transforms.person.bound_persons``): ``BoundPersonsFn`` with its counts, and each admitted update numbered
    in its entry's order, so that the registry resolves an entry's updates in the order this step decided
    them (``ResolveEntriesFn(upstream_counts=True)``).

    Why: each firing of this step's timer is a bundle, and the DirectRunner hands a stateful step's input
    bundles over in no fixed order (``executor.py``, ``_SerialEvaluationState``: a queue popped from the end,
    last in first out), while the watermark it gives the registry does not wait for this step's pending
    timers. After a watermark jump of 100 ticks one entry's updates of ticks 9, 14, 12, 8, 5 reached the
    registry in that order; the registry resolved the later ticks first and the earlier updates were late.
    Ordering by the watermark is impossible here (a timer callback does not see the watermark, and a bundle
    cannot be held back), so the order travels with the data: the ``n``-th update this step emits for an
    entry carries ``n`` as a ninth field (``emitted``, a ReadModifyWrite cell per (stream, person): entry id
    -> updates emitted, per person across streams: (stream, entry id) -> updates emitted; an entry's updates
    leave in tick order, ``decide``'s total order), and the registry
    holds an update until updates 1..n-1 of its entry have arrived. A number is a position in one entry's own
    sequence: it says nothing to any other key, decides no release time (the watermark and the ticks do; the
    counts only delay a firing) and is never released. Other runners hold the registry's watermark for
    this step's timers (its output reaches the registry before the watermark that closes its tick) and keep
    ``BoundPersonsFn``, its graph and its state."""

    PERSON = BoundPersonsFn.PERSON
    EMITTED = ReadModifyWriteStateSpec("emitted", FastPrimitivesCoder())  # entry id -> updates emitted
    # A timer spec takes one callback, so this class declares its own; and under a name of its own: the
    # FnApiRunner (which runs a followed file on the DirectRunner) fuses this step with the registry and keeps
    # a stage's timers in one buffer per timer family id, whatever the transform (``execution.py``,
    # ``get_buffer``: ``timers:<family>``; apache/beam#21995), so the registry's ``tick_end`` timers were handed
    # to this step (an empty cell: nothing done) and the registry never resolved its updates (stop 55). Only
    # the DirectRunner builds this class: no savepoint holds its name.
    TICK_END = TimerSpec("person_tick_end", TimeDomain.WATERMARK)

    def __init__(self, spec: StreamSpec, limit: PersonLimit):
        super().__init__(spec, limit, counts=True)

    def process(self, element, cell=beam.DoFn.StateParam(PERSON), timer=beam.DoFn.TimerParam(TICK_END)):
        yield from self._buffer(element, cell, timer)

    @on_timer(TICK_END)
    def on_tick_end(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        cell=beam.DoFn.StateParam(PERSON),
        timer=beam.DoFn.TimerParam(TICK_END),
        emitted=beam.DoFn.StateParam(EMITTED),
    ):
        numbered = None
        for out in self._fire(key, ts, cell, timer):
            if not isinstance(out, beam.pvalue.TaggedOutput):  # admitted: ((stream, entry key), value)
                if numbered is None:
                    numbered = dict(emitted.read() or {})
                entry_key, value = out
                # an entry is (stream, entry id): across streams one key holds a person's entries of every stream,
                # and one entry id may be used in two of them (two entries, each numbered from 1)
                entry = (entry_key[0], value[6]) if self.across else value[6]
                n = numbered[entry] = numbered.get(entry, 0) + 1
                out = (entry_key, (*value, n))
            yield out
        if numbered is not None:
            emitted.write(numbered)


TICK_MERGES = ("auto", "stateful", "bundle")


def stateful_tick_merge(choice: str, pipeline) -> bool:
    """Whether the streaming path merges each tick in a stateful step.

    ``bundle``: the registry step's per-bundle sums only. Exact on the
    DirectRunner, whose timer firings that are due together are delivered in
    one bundle per transform, so a tick leaves the registry step as one
    aggregate; elsewhere the per-stream step would then merge many small
    aggregates itself. ``stateful``:
    the per-(stream, tick) merge as well (every runner). ``auto``: ``bundle``
    on the DirectRunner, ``stateful`` on any other runner. The releases are the
    same either way (the per-stream step merges whatever arrives for a tick)."""
    if choice != "auto":
        return choice == "stateful"
    return holds_timer_watermarks(pipeline)  # i.e. not the DirectRunner


def counts_gate(choice: str, pipeline) -> bool:
    """Whether the registry step sends per-tick update counts and the per-stream step waits for them
    (``ResolveEntriesFn(counts=True)``, ``GatedPerStreamStepFn``): on a runner that does not hold a
    stateful stage's output watermark for its pending timers (the DirectRunner), whatever ``choice`` (the
    ``tick_merge``). There the registry step's close of tick t and the release of tick t can fire in the
    same round when the watermark jumps several ticks at once (a starved process, a backlog), and the
    release would miss the updates still being resolved; the counts make the release of t wait until
    every update of a tick <= t has been resolved. With ``tick_merge: stateful`` the counts go through
    the merge step (``MergeTickFn(counts=True)``: the resolved ones with their aggregates, flushed
    together). Under the person unit the person step counts its updates into the same gate
    (``transforms.person.BoundPersonsFn(counts=True)``, the registry with ``upstream_counts=True``). Other
    runners hold the watermark for the timers (the registry step's output holds the release), and keep
    their graph and state as they were."""
    return not holds_timer_watermarks(pipeline)


def per_stream_step(step, tick_merge: str, pipeline) -> PerStreamStepFn:
    """The stateful per-stream step for ``step`` in ``pipeline``'s streaming graph: the catch-up timer where
    the runner holds the watermark for the registry step's timers, the data's counts where it does not
    (``counts_gate``: :class:`~transforms.per_stream.GatedPerStreamStepFn`, with
    ``ResolveEntriesFn(counts=True)``)."""
    if counts_gate(tick_merge, pipeline):
        return GatedPerStreamStepFn(step, catch_up=True)
    return PerStreamStepFn(step, catch_up=holds_timer_watermarks(pipeline))


def with_input_end(inputs, spec: StreamSpec):
    """The per-stream step's input (keyed by stream, with a :data:`START` marker per declared stream) and, for a
    release without a configured end, an :data:`INPUT_END` marker per declared stream once the input has ended.

    A drain, a followed file's ``#END`` or a bounded read in a streaming job brings the watermark to the end of
    time, which fires every event-time timer: a release without an end would walk every tick up to Beam's
    largest timestamp (a firing each 1,024 ticks, the state growing all the way) and never finish. The marker
    is the start markers grouped in the global window with a trigger at the end of the window, which Beam
    fires only when the watermark gets there (never in a running stream); it reaches the step as an element, so
    the step learns that its input has ended and stops (``PerStreamStepFn._input_ended``). With a configured end
    the graph is unchanged: the core finishes at its end."""
    if spec.end_tick is not None:
        return inputs
    ends = (
        inputs
        | "InputEndStreams" >> beam.Filter(lambda kv: type(kv[1]) is str and kv[1] == START)
        | "AtInputEnd"
        >> beam.WindowInto(
            window.GlobalWindows(), trigger=AfterWatermark(), accumulation_mode=AccumulationMode.DISCARDING
        )
        | "GroupAtInputEnd" >> beam.GroupByKey()
        | "InputEndMarker" >> beam.Map(lambda kv: (kv[0], INPUT_END)).with_output_types(tuple[str, typing.Any])
        | "InputEndWindow" >> beam.WindowInto(window.GlobalWindows())
    )
    return (inputs, ends) | "WithInputEnd" >> beam.Flatten()
