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
  ReleaseStream: stateful, keyed by stream, one event-time timer: applies each
  tick's aggregate in tick order to the mechanism (restored from its versioned
  state), lets it release on schedule, emits answers and node outputs.

Time: tick ``k`` covers event times ``[origin + (k-1) s, origin + k s)``. An
entry's updates of tick k are resolved when the watermark passes the tick's
end (plus the allowed lateness); the per-stream step applies tick k's batch,
and the releases of tick k, when the watermark passes ``origin + (k+1) s``
(plus the lateness). Everything stays in the global window: late data is
never dropped by windowing.
"""

from __future__ import annotations

import typing

import apache_beam as beam
from apache_beam.coders import BytesCoder, FastPrimitivesCoder, VarIntCoder
from apache_beam.metrics import Metrics
from apache_beam.transforms import window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import Timestamp
from apache_beam.utils.windowed_value import WindowedValue

from transforms.common import ReleaseFnBase, apply_in_order, dead_letter, emit_results, resolve_updates, update_order
from transforms.core.foundation.aggregates import fold, in_tick_order
from transforms.core.foundation.state import decode, encode
from transforms.records import ReleaseRecord
from transforms.spec import NAMESPACE, StreamSpec

__all__ = [
    "ResolveEntriesFn",
    "MergeTickFn",
    "ReleaseStreamFn",
    "START",
    "TICK_MERGES",
    "CATCH_UP_TICKS",
    "buffer_aggregates",
    "holds_timer_watermarks",
    "next_work",
    "schedule_wake",
    "set_catch_up",
    "stateful_tick_merge",
]

_UPDATES_ACCEPTED = Metrics.counter(NAMESPACE, "updates_accepted")  # resolved per container at inc()
START = "__start__"
_MAX_TS = Timestamp.of(2**62 / 1e6)  # well inside Beam's timestamp range


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
    """

    META = ReadModifyWriteStateSpec("meta", FastPrimitivesCoder())  # (state, last, timer tick, pending)
    TICK_END = TimerSpec("tick_end", TimeDomain.WATERMARK)
    DEAD = "dead_letters"

    def __init__(
        self,
        spec: StreamSpec,
        domain_sizes: tuple,
        deletions_allowed: bool,
        per_stream: bool = True,
        max_mutations: int | None = None,
    ):
        self.spec = spec
        self.domain_sizes = tuple(domain_sizes)
        self.deletions_allowed = deletions_allowed
        self.per_stream = per_stream
        self.max_mutations = max_mutations

    def start_bundle(self):
        self.acc = {}  # stream -> tick -> [inserts, deletes, n]
        self.accepted = 0

    def finish_bundle(self):
        acc, self.acc = self.acc, {}
        if self.accepted:  # one metric update per bundle, not per entry
            _UPDATES_ACCEPTED.inc(self.accepted)
            self.accepted = 0
        lateness = self.spec.lateness_ticks
        glob = (window.GlobalWindow(),)
        for stream, ticks in acc.items():
            aggs = in_tick_order(ticks)
            if not aggs:  # every update of this stream in the bundle was rejected
                continue
            if self.per_stream:  # stamped with its earliest tick's resolution time
                yield WindowedValue((stream, tuple(aggs)), self.spec.tick_end(aggs[0][0] + lateness), glob)
            else:
                for agg in aggs:
                    yield WindowedValue(((stream, agg[0]), agg), self.spec.tick_end(agg[0] + lateness), glob)

    def process(
        self,
        element,
        meta=beam.DoFn.StateParam(META),
        timer=beam.DoFn.TimerParam(TICK_END),
    ):
        key, value = element  # (tick, seq, op, item, event_time, raw)
        tick = value[0]
        state, last, timer_tick, pending = meta.read() or (None, 0, None, ())
        if tick <= last:
            if self.spec.late_policy == "dead_letter":
                yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter("late", key, value))
                return
            tick = last + 1  # apply at the entry's current tick
        pending = pending + ((tick, *value[1:]),)
        if timer_tick is None or tick < timer_tick:  # a timer holds one time: keep the earliest
            timer_tick = tick
            timer.set(self.spec.tick_end(tick + self.spec.lateness_ticks))
        meta.write((state, last, timer_tick, pending))

    @on_timer(TICK_END)
    def on_tick_end(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        meta=beam.DoFn.StateParam(META),
        timer=beam.DoFn.TimerParam(TICK_END),
    ):
        stream, entry_id = key
        upto = self.spec.tick_at(ts) - self.spec.lateness_ticks
        state, last, _, pending = meta.read() or (None, 0, None, ())
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
        for reason, value in dead:
            yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter(reason, key, value))
        if state is None and not later:
            # a deleted entry with nothing pending keeps no state: registry state is
            # O(live entries), not O(all entries ever seen) (with a mutation limit a
            # deleted entry keeps its tombstone, which is not None)
            meta.clear()
        else:
            nxt = later[0][0] if later else None
            meta.write((state, max(upto, last), nxt, later))
            if nxt is not None:
                timer.set(self.spec.tick_end(nxt + self.spec.lateness_ticks))


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
    keying can change without touching it.)"""

    BUFFER = BagStateSpec("buffer", FastPrimitivesCoder())  # tick aggregates
    FLUSH_TICK = ReadModifyWriteStateSpec("flush_tick", VarIntCoder())
    FLUSH = TimerSpec("flush", TimeDomain.WATERMARK)

    def __init__(self, spec: StreamSpec):
        self.spec = spec

    def _flush_time(self, tick: int) -> Timestamp:
        return Timestamp.of(float(self.spec.tick_end(tick + self.spec.lateness_ticks)) + self.spec.tick_seconds / 2)

    def process(
        self,
        element,
        buffer=beam.DoFn.StateParam(BUFFER),
        flush_tick=beam.DoFn.StateParam(FLUSH_TICK),
        flush=beam.DoFn.TimerParam(FLUSH),
    ):
        _, agg = element
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
        later = []
        for agg in buffer.read():
            if self._flush_time(agg[0]) <= ts:
                fold(due, *agg)
            else:
                later.append(agg)
        buffer.clear()
        flush_tick.clear()
        if later:
            for agg in later:
                buffer.add(agg)
            first = min(agg[0] for agg in later)
            flush_tick.write(first)
            flush.set(self._flush_time(first))
        for tick in sorted(due):
            ins, dele, n = due[tick]
            yield beam.window.TimestampedValue((stream, ((tick, ins, dele, n),)), ts)


# ---------------------------------------------------------------------------
# Step 4: the per-stream release
# ---------------------------------------------------------------------------


@beam.typehints.with_output_types(ReleaseRecord)
class ReleaseStreamFn(ReleaseFnBase):
    """Holds one stream's mechanism; one event-time timer drives it.

    Input: ``(stream, tick aggregates)`` merged per tick, plus a start marker
    per declared stream. The mechanism lives in a ReadModifyWrite cell as its
    versioned state (``ContinualRelease.to_state``, encoded by
    ``transforms.core.foundation.state.encode``: plain data, no pickles), so a job
    updated to a new library version can read it. The timer is set to the end
    of the next tick that has work: a pending batch or the mechanism's
    ``next_wake``. On firing it applies pending batches in tick order
    (releases happen in between, on schedule) and emits the answers and the
    released node outputs. A finished mechanism (its end, horizon or budget
    reached: counted as an event) sets no more timers; the other streams go on.
    """

    CORE = ReadModifyWriteStateSpec("core", BytesCoder())  # versioned mechanism state
    PENDING = BagStateSpec("pending", FastPrimitivesCoder())  # tick aggregates
    # the tick the timer is set for (kept apart so that adding a batch never reads
    # the mechanism or the pending bag)
    WAKE_TICK = ReadModifyWriteStateSpec("wake_tick", VarIntCoder())
    WAKE = TimerSpec("wake", TimeDomain.WATERMARK)
    CATCH_UP = TimerSpec("catch_up", TimeDomain.WATERMARK)  # the next tick on the public catch-up grid
    #: Set the catch-up timer (``set_catch_up``). The transforms turn it off on the DirectRunner
    #: (``holds_timer_watermarks``): it holds no watermark for the registry step's timers, so a catch-up
    #: firing there could overtake their batches by up to a grid's worth of ticks.
    catch_up = True

    def setup(self):
        super().setup()
        # stream -> (the state bytes last written, the mechanism they encode): a
        # wake whose state cell holds exactly those bytes reuses the object instead
        # of decoding it. An entry is taken out while a wake runs and put back only
        # after its state is written, so a failed (retried) wake decodes afresh.
        self._live = {}

    def _load(self, stream, cell):
        data = cell.read()
        cached = self._live.pop(stream, None)
        if data is None:
            return self.new_core(stream)
        if cached is not None and cached[0] == data:
            return cached[1]
        return self.mechanism.core_cls.from_state(
            self.config,
            decode(data),
            options=self.options,
            end_tick=self.spec.end_tick,
            every_ticks=self.spec.every_ticks,
        )

    def _store(self, stream, cell, core):
        data = encode(core.to_state())
        cell.write(data)
        self._live[stream] = (data, core)

    def _wake_at(self, tick, wake, wake_tick):
        schedule_wake(self.spec, tick, wake, wake_tick)

    def process(
        self,
        element,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
    ):
        stream, value = element
        if value == START:
            if core_state.read() is None:
                core_state.write(encode(self.new_core(stream).to_state()))
            self._wake_at(1, wake, wake_tick)
            if self.catch_up:
                set_catch_up(self.spec, 1, catch_up)
            return
        first = buffer_aggregates(value, pending)  # a tuple of tick aggregates
        if first is not None:
            self._wake_at(first, wake, wake_tick)

    @on_timer(WAKE)
    def on_wake(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
    ):
        yield from self._fire(key, ts, core_state, pending, wake_tick, wake, catch_up)

    @on_timer(CATCH_UP)
    def on_catch_up(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
    ):
        yield from self._fire(key, ts, core_state, pending, wake_tick, wake, catch_up)

    def _fire(self, key, ts, core_state, pending, wake_tick, wake, catch_up):
        """One firing of either timer: the wakes due up to the tick whose input is final at ``ts``."""
        stream = key
        first = wake_tick.read()  # the tick the wake timer was set for
        wake_tick.clear()
        core = self._load(stream, core_state)
        upto = self.spec.tick_at(ts) - 1 - self.spec.lateness_ticks  # ticks whose batches are final
        aggs = sorted(pending.read(), key=lambda agg: agg[0])
        results, i = [], 0
        # The wakes the wake timer would have made one firing each, in this one: a wake timer's firing is one
        # step (its own tick); a catch-up firing walks every tick with work up to the grid point. Same calls
        # to the mechanism either way, so every record field is the same (an error bound or a spend stamped
        # per call would otherwise depend on how far the watermark was ahead).
        w = first if first is not None else next_work(core, aggs, i)
        while w is not None and w <= upto:
            j = i
            while j < len(aggs) and aggs[j][0] <= w:
                j += 1
            now, i = aggs[i:j], j
            if core.finished and now:
                Metrics.counter(NAMESPACE, "batches_after_finish").inc(len(now))
            results += apply_in_order(core, now, self.noise)
            if w > core.last_tick:
                results.append(core.advance(w, self.noise))
            if core.finished:
                break
            w = next_work(core, aggs, i)
        later = [] if core.finished else aggs[i:]  # nothing will be released after the end
        pending.clear()
        for agg in later:
            pending.add(agg)
        yield from emit_results(self, core, results, self._release_time)
        self._store(stream, core_state, core)
        # next wake: the earliest pending batch, else the mechanism's next wake (None once it is finished)
        nxt = next_work(core, later, 0)
        if nxt is not None:
            self._wake_at(nxt, wake, wake_tick)
            if self.catch_up:
                set_catch_up(self.spec, nxt, catch_up)

    def _release_time(self, tick: int) -> Timestamp:
        """The event time a record of ``tick`` carries: when tick's input is final (a public function of the
        tick, whichever firing computed it; see ``set_catch_up``). On a runner that holds the output watermark
        for pending timers (Flink, Dataflow) it is not behind the watermark: the wake timer is set for the
        earliest tick still to be released. The DirectRunner holds none (``shared/design/BEAM_NOTES.md``); the
        streaming file sinks accept late records."""
        return self.spec.tick_end(tick + 1 + self.spec.lateness_ticks)


#: Ticks between two points of the catch-up grid (``set_catch_up``): a public constant.
CATCH_UP_TICKS = 1024


def set_catch_up(spec: StreamSpec, tick: int, catch_up) -> None:
    """Set the per-stream step's second timer for the first point of the catch-up grid at or after
    ``tick`` (the next tick the wake timer is set for).

    The wake timer (``schedule_wake``) steps one tick with input or release at a time, which is what a
    stream that follows its input in real time needs. Catching up (the watermark far ahead of the
    releases: a backlog, a replay, a job restored after downtime), each step would cost a round trip
    between the runner and the SDK worker and a read of the whole pending bag: 83,407 one-second ticks
    did not finish in 26 minutes on Flink. This timer fires at a multiple of ``CATCH_UP_TICKS`` ticks;
    when the watermark is already past it, that one firing applies every tick up to it in order, so a
    backlog takes a round trip per 1,024 ticks (from the first grid point on: before it, the wake timer's
    single steps, as many as 1,024). It computes what the wakes would have: the input of every tick up to
    the grid point is final (the watermark passed it), and the firing walks the wakes the wake timer would
    have made one firing each (``ReleaseStreamFn._fire``: the same calls to the mechanism, so every field
    of every record is the same), each record carrying its own tick's time (``_release_time``), a public
    function of the tick, whichever firing computed it. The grid is public (the origin, the tick length,
    this constant, the configured end); which firing computes a release while catching up follows the
    watermark and the ticks with input, as the wake timer always did, and shows in no record."""
    if tick < 1:
        tick = 1
    nxt = ((tick - 1) // CATCH_UP_TICKS + 1) * CATCH_UP_TICKS
    if spec.end_tick is not None:  # the configured end is public too
        if tick > spec.end_tick:
            return
        nxt = min(nxt, spec.end_tick)
    ts = spec.tick_end(nxt + 1 + spec.lateness_ticks)
    if ts < _MAX_TS:
        catch_up.set(ts)


def next_work(core, aggs, i: int, queries=(), k: int = 0) -> int | None:
    """The next tick a per-stream step must wake for: the earliest of ``aggs[i:]`` (tick aggregates sorted by
    tick; none once the mechanism is finished), ``queries[k:]`` (sorted, tick first; answered even after the
    end) and the mechanism's ``next_wake``, never at or before its last tick; None when there is none."""
    candidates = [aggs[i][0]] if i < len(aggs) and not core.finished else []
    if k < len(queries):
        candidates.append(queries[k][0])
    if core.next_wake is not None:
        candidates.append(core.next_wake)
    return max(min(candidates), core.last_tick + 1) if candidates else None


def holds_timer_watermarks(pipeline) -> bool:
    """Whether ``pipeline``'s runner holds a stateful stage's output watermark for its pending timers (Flink,
    Dataflow, the portable runners), so that the per-stream step may catch up through its grid timer. The
    DirectRunner does not (``shared/design/BEAM_NOTES.md``): there the step keeps to the wake timer."""
    runner = getattr(pipeline, "runner", None)
    return "DirectRunner" not in type(runner).__name__


def schedule_wake(spec: StreamSpec, tick: int, wake, wake_tick) -> None:
    """Make sure a per-stream step's event-time timer fires for ``tick``,
    keeping the earliest (``wake_tick`` holds the tick it is set for). Tick k's
    input is final when the watermark passes the end of tick k + 1 + L (L: the
    allowed lateness in ticks): a public schedule, never the data. Shared by
    every stateful per-stream step (``ReleaseStreamFn``, the query join, the
    local-DP collector)."""
    current = wake_tick.read()
    if current is not None and current <= tick:
        return
    ts = spec.tick_end(tick + 1 + spec.lateness_ticks)
    if ts >= _MAX_TS:  # deadlines square: ticks past Beam's time range are never scheduled
        return
    wake_tick.write(tick)
    wake.set(ts)


def buffer_aggregates(aggs, pending) -> int | None:
    """Add tick aggregates (tuples whose first field is the tick) to the
    ``pending`` bag; returns their earliest tick (None if there were none)."""
    first = None
    for agg in aggs:
        pending.add(agg)
        first = agg[0] if first is None else min(first, agg[0])
    return first


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
