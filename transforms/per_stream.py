# ruff: noqa: B008 - Beam's stateful DoFn idiom: state and timer parameters are declared as defaults
"""The per-stream step, built once: the release, the query answering and the
local-DP collector each hold one core per declared stream and drive it as the
watermark passes each tick.

What differs between them is a :class:`StreamStep` (how to build and restore
its core, what a wake does with the inputs due, what it emits); the Beam side
is written once here, as Beam writes its own stateful transforms
(``apache_beam/transforms/util.py``, ``GroupIntoBatches``: the state specs and
timers declared once, the behaviour a parameter):

* :class:`PerStreamStepFn` (unbounded input, or any input under
  ``--streaming``): keyed by stream. The core's versioned state in a
  ReadModifyWrite cell (``core``: ``to_state()`` encoded by
  ``transforms.core.foundation.state.encode``, plain data, so an updated job
  can read it), tick aggregates in a bag (``pending``), queries in another
  (``queries``: the query step's only; the others never read or write it), the
  tick the wake timer is set for (``wake_tick``), the wake timer (``wake``) and
  the catch-up timer on a public grid (``catch_up``), and the chunks of a large
  state (``chunks``: a state with a large array, a counter's history, is written
  as a small head in ``core`` and content-addressed chunks in this bag, so a
  firing writes what changed: ``transforms.core.foundation.state_chunks``).
  These names are the ones stored in savepoints and checkpoints: they never change.
  A release without a configured end also keeps ``input_end``: the last tick it releases
  once its input has ended (``transforms.streaming.with_input_end``).
* :class:`BoundedStreamFn` (bounded input in a batch pipeline): one call per
  stream with all of its input, after a GroupByKey; no state, no timers.

Inputs, keyed by stream: a start marker per declared stream (:data:`START`), a
tuple of tick aggregates (tuples whose first field is the tick), or a query
``(QUERY, (tick, ...))``. Every record of tick ``t`` carries the time at which
``t``'s input is final (``StreamSpec.final_at``: the end of tick t + 1 + L), a
public function of the tick, whichever firing (or bounded call) computed it.
"""

from __future__ import annotations

import time
import typing

import apache_beam as beam
from apache_beam.coders import BytesCoder, FastPrimitivesCoder, VarIntCoder
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.transforms.window import GlobalWindow, TimestampedValue
from apache_beam.utils.timestamp import Timestamp
from apache_beam.utils.windowed_value import WindowedValue

import transforms.state_cache  # noqa: F401  (user state: the SDK's cache without its scan of every module)
from transforms.core.foundation.state import encode
from transforms.core.foundation.state_chunks import CHUNK_BYTES, COMPACT_FLOOR, ChunkStore
from transforms.spec import StreamSpec

__all__ = [
    "START",
    "INPUT_END",
    "QUERY",
    "COUNTS",
    "BOUNDED_END",
    "CATCH_UP_TICKS",
    "GATED_CATCH_UP_TICKS",
    "StreamStep",
    "PerStreamStepFn",
    "GatedPerStreamStepFn",
    "BoundedStreamFn",
    "in_global_window",
    "set_catch_up",
    "schedule_wake",
    "next_work",
    "buffer_aggregates",
    "holds_timer_watermarks",
    "is_query",
    "query_order",
]

START = "__start__"  # the start marker of a declared stream
INPUT_END = "__input_end__"  # the input has ended (with_input_end): a release without an end stops
QUERY = "__query__"  # tags a query: (QUERY, (tick, time, id, row))
#: tags the registry step's output under a gate: (COUNTS, tick aggregates, ((tick, updates buffered - resolved), ...))
COUNTS = "__counts__"
_MAX_TS = Timestamp.of(2**62 / 1e6)  # well inside Beam's timestamp range
#: The wall clock (epoch seconds) that ends a release without a configured end when its input ends (a drain, a
#: followed file's ``#END``): public (when the operator stopped the input), never the data. Tests replace it.
_clock = time.time
#: Ticks between two points of the catch-up grid (``set_catch_up``): a public constant.
CATCH_UP_TICKS = 1024
#: The catch-up grid of :class:`GatedPerStreamStepFn` (the DirectRunner), public too: each round of the DirectRunner
#: is a firing per stage, and while a backlog of ticks is walked one wake per round, timers fire in every round and
#: the runner schedules no read of an unbounded source (``executor.py``, ``_add_work_if_necessary``): a fine grid.
GATED_CATCH_UP_TICKS = 8
BOUNDED_END = (
    "bounded input needs a configured end: StreamSpec(end_time=...) (time.end in a pipeline config). The end "
    "of a release is public configuration; deriving it from the data (its last time) would make the release "
    "schedule depend on the data"
)


def is_query(value) -> bool:
    """``value`` is a query input ``(QUERY, (tick, time, id, row))``."""
    return isinstance(value, tuple) and len(value) == 2 and value[0] == QUERY


def query_order(q):
    """The order in which queries are answered: tick, arrival time, id."""
    return q[0], q[1], q[2]


class StreamStep:
    """What one kind of per-stream step does; :class:`PerStreamStepFn` and :class:`BoundedStreamFn` do the
    rest. A *core* is a state machine with ``last_tick``, ``next_wake``, ``finished`` and ``to_state()``
    (a ``ContinualRelease``, the randomized-response collector). Outputs of a firing (or of a bounded
    call) are collected in a list ``out`` that only the step reads: its :meth:`emit` turns them into
    records."""

    #: the type of the main output's records (it sets the coder of that output)
    output_type: typing.Any = typing.Any
    #: whether the step answers queries (reads the ``queries`` bag)
    takes_queries = False
    #: the names the step's DoFns take in the pipeline graph (``ParDo(<name>)``): a Flink savepoint and a
    #: Dataflow update match state by transform name, so a step keeps the names its DoFns had before the
    #: per-stream step was shared, never changes them, and no two steps share one
    stream_label = "PerStreamStepFn"
    bounded_label = "BoundedStreamFn"

    def __init__(self, spec: StreamSpec):
        self.spec = spec

    def setup(self) -> None:
        """Once per worker, before any element (``DoFn.setup``)."""

    def new_core(self, stream: str):
        raise NotImplementedError

    def restore(self, stream: str, state: dict):
        """The core stored in a stream's state cell (decoded)."""
        raise NotImplementedError

    def wake(self, core, tick: int, aggs: list, queries: list, out: list) -> None:
        """One wake for ``tick``: apply ``aggs`` (the pending tick aggregates of ticks <= ``tick``, in tick
        order; a tick already released among them), answer ``queries`` (the same, by tick, arrival time
        and id), advance the core to ``tick``."""
        raise NotImplementedError

    def discard(self, core, aggs: list, out: list) -> None:
        """Tick aggregates left when the core is finished: they are never applied."""

    def feed(self, core, parts: list, queries: list, out: list) -> None:
        """Bounded: all of a stream's input at once (``parts``: tick aggregates, one tuple per bundle)."""
        raise NotImplementedError

    def run_to_end(self, core, out: list) -> None:
        """Bounded: run the core to the configured end."""
        raise NotImplementedError

    def emit(self, core, out: list, stamp) -> typing.Iterator:
        """The records of ``out``; ``stamp(tick)`` is the timestamp a record of ``tick`` carries."""
        raise NotImplementedError

    def bounded(self, core, parts: list, queries: list, stamp) -> typing.Iterator:
        """Bounded: a stream's records (``feed``, ``run_to_end``, ``emit``; ``ReleaseStep``'s are lazy)."""
        out: list = []
        self.feed(core, parts, queries, out)
        self.run_to_end(core, out)
        return self.emit(core, out, stamp)


class _StepFn(beam.DoFn):
    """A DoFn that runs a :class:`StreamStep`: the step's setup, its output type (declared: a timer's output
    takes the type inferred for ``process`` otherwise) and its name in the graph (``LABEL``: which of the
    step's labels)."""

    LABEL = ""

    def __init__(self, step: StreamStep):
        super().__init__()
        self.step = step
        self.with_output_types(step.output_type)

    def default_label(self):
        return getattr(self.step, self.LABEL)

    def setup(self):
        self.step.setup()


class PerStreamStepFn(_StepFn):
    """The stateful per-stream step (module docstring), driving ``step`` with two event-time timers.

    The wake timer (``schedule_wake``) is set for the end of the tick after the next tick with work (a
    pending aggregate or query, or the core's ``next_wake``): each firing applies what is due up to its
    tick. The catch-up timer (``set_catch_up``, ``catch_up=True``; armed by every firing for the grid
    point at or after the next wake) fires on a public grid of ``CATCH_UP_TICKS`` ticks: with the
    watermark far ahead (a backlog, a replay, a job restored after downtime) one firing walks every wake
    up to its grid point. Either firing walks the wakes one at a time (``_fire``: the same calls to the
    core as one firing per wake), so a record does not depend on which firing computed it. Adding an
    input never reads the core or the bags. A finished core sets no more timers; the other streams go
    on.

    Args:
      step: the :class:`StreamStep`.
      catch_up: set the catch-up timer. The transforms turn it off on the DirectRunner
        (``holds_timer_watermarks``): it holds no watermark for the registry step's timers, so a
        catch-up firing there could overtake their batches by up to a grid's worth of ticks.

    On the DirectRunner the transforms use :class:`GatedPerStreamStepFn`, which waits on the data as well.
    """

    CORE = ReadModifyWriteStateSpec("core", BytesCoder())  # the core's versioned state
    PENDING = BagStateSpec("pending", FastPrimitivesCoder())  # tick aggregates
    QUERIES = BagStateSpec("queries", FastPrimitivesCoder())  # (tick, time, id, row)
    # the tick the wake timer is set for (kept apart so that adding an input never reads the core or a bag)
    WAKE_TICK = ReadModifyWriteStateSpec("wake_tick", VarIntCoder())
    WAKE = TimerSpec("wake", TimeDomain.WATERMARK)
    CATCH_UP = TimerSpec("catch_up", TimeDomain.WATERMARK)  # the next tick on the public catch-up grid
    CHUNKS = BagStateSpec("chunks", BytesCoder())  # a large core state's chunks (digest + bytes; ChunkStore)
    # no configured end: the last tick released once the input has ended (the wall clock's, at INPUT_END)
    INPUT_END_TICK = ReadModifyWriteStateSpec("input_end", VarIntCoder())

    LABEL = "stream_label"
    catch_up_ticks = CATCH_UP_TICKS  # the catch-up grid
    chunk_bytes = CHUNK_BYTES  # arrays of the core's state this large or larger are written in chunks
    chunk_floor = COMPACT_FLOOR  # the bag is written afresh past twice the state plus this

    def __init__(self, step: StreamStep, catch_up: bool = True):
        super().__init__(step)
        self.spec = step.spec
        self.catch_up = catch_up

    def setup(self):
        super().setup()
        # stream -> (the state bytes last written, the core they encode, its ChunkStore): a firing whose
        # state cell holds exactly those bytes reuses the object instead of decoding it (and reads no
        # chunk). An entry is taken out while a firing runs and put back only after its state is written,
        # so a failed (retried) firing decodes afresh.
        self._live = {}

    def process(
        self,
        element,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        input_end=beam.DoFn.StateParam(INPUT_END_TICK),
    ):
        stream, value = element
        if value == INPUT_END:
            self._input_ended(input_end)
            return
        if value == START:
            if core_state.read() is None:
                core_state.write(encode(self.step.new_core(stream).to_state()))
            schedule_wake(self.spec, 1, wake, wake_tick)  # its firing arms the catch-up timer
            return
        if is_query(value):
            if not self.step.takes_queries:
                raise TypeError(f"{type(self.step).__name__} answers no queries")
            queries.add(value[1])
            schedule_wake(self.spec, value[1][0], wake, wake_tick)
            return
        first = buffer_aggregates(value, pending)
        if first is not None:
            schedule_wake(self.spec, first, wake, wake_tick)

    @on_timer(WAKE)
    @on_timer(CATCH_UP)
    def on_wake_or_catch_up(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
        chunks=beam.DoFn.StateParam(CHUNKS),
        input_end=beam.DoFn.StateParam(INPUT_END_TICK),
    ):
        """Either timer: one firing (``_fire``); which timer fired changes nothing but how far it walks."""
        yield from self._fire(
            key, ts, (core_state, chunks), pending, queries, wake_tick, wake, catch_up, None, input_end.read()
        )

    def _input_ended(self, input_end) -> None:
        """The input has ended (:data:`INPUT_END`: a drain, or every source finished). With a configured end nothing
        changes. Without one, the timers would walk every tick to the end of Beam's time (periods that have not
        happened) and the job would never finish: the release stops at the last tick whose input is final at
        the wall clock now (``StreamSpec.final_tick``, the watermark's rule). Public: when the input was stopped,
        not what it held; the updates of later ticks are discarded as after an end."""
        if self.spec.end_tick is None and input_end.read() is None:
            input_end.write(max(self.spec.final_tick(Timestamp.of(_clock())), 0))

    def _fire(self, stream, ts, cells, pending, queries, wake_tick, wake, catch_up, bound=None, stop=None):
        """One firing of either timer: the wakes due up to the tick whose input is final at ``ts`` (and,
        ``bound`` given, at most ``bound``: :class:`GatedPerStreamStepFn`), each as its own firing would
        have made it. A wake timer's firing is one wake (its own tick); a catch-up
        firing walks every tick with work up to its grid point. Same calls to the core either way, so
        every record field is the same (an error bound or a spend stamped per call would otherwise depend
        on how far the watermark was ahead). ``stop``: the last tick of a release without an end whose input
        has ended (``_input_ended``): nothing after it is released, and no timer is set again."""
        step = self.step
        first = wake_tick.read()  # the tick the wake timer was set for
        wake_tick.clear()
        core, store = self._load(stream, *cells)
        upto = self.spec.final_tick(ts)
        if bound is not None:  # gate: no tick at or after one whose updates are still on their way
            upto = min(upto, bound)
        if stop is not None:
            upto = min(upto, stop)
        aggs = sorted(pending.read(), key=lambda agg: agg[0])
        asks = sorted(queries.read(), key=query_order) if step.takes_queries else []
        out, i, k = [], 0, 0
        w = first if first is not None else next_work(core, aggs, i, asks, k)
        while w is not None and w <= upto:
            j, m = _due(aggs, i, w), _due(asks, k, w)
            step.wake(core, w, aggs[i:j], asks[k:m], out)
            i, k = j, m
            w = next_work(core, aggs, i, asks, k)  # None once the core is finished and no query waits
        later, asks_later = aggs[i:], asks[k:]  # queries are answered even after the end
        ended = stop is not None and (w is None or w > stop)  # the input has ended and the walk reached its stop
        if (core.finished or ended) and later:  # nothing will be released after the end
            step.discard(core, later, out)
            later = []
        pending.clear()
        for agg in later:
            pending.add(agg)
        if step.takes_queries:
            queries.clear()
            for q in asks_later:
                queries.add(q)
        yield from step.emit(core, out, self.spec.final_at)
        self._store(stream, *cells, core, store)
        # next wake: the earliest pending input, else the core's next wake (None once it is finished)
        nxt = None if ended else next_work(core, later, 0, asks_later, 0)
        if nxt is not None:
            if bound is not None and nxt > bound:  # parked: the count that closes tick bound + 1 sets the timer
                wake_tick.write(nxt)
                return
            schedule_wake(self.spec, nxt, wake, wake_tick)
            if self.catch_up:
                set_catch_up(self.spec, nxt, catch_up, self.catch_up_ticks)

    def _load(self, stream, cell, chunks):
        """``(core, store)``: the stream's core and the :class:`ChunkStore` of its cells."""
        data = cell.read()
        cached = self._live.pop(stream, None)
        if data is None:
            return self.step.new_core(stream), ChunkStore(self.chunk_bytes, self.chunk_floor)
        if cached is not None and cached[0] == data:
            return cached[1], cached[2]
        plain, store = ChunkStore.load(data, chunks.read, self.chunk_bytes, self.chunk_floor)
        return self.step.restore(stream, plain), store

    def _store(self, stream, cell, chunks, core, store):
        write = store.write(core.to_state)
        if write.clear:
            chunks.clear()
        for entry in write.adds:
            chunks.add(entry)
        cell.write(write.head)
        self._live[stream] = (write.head, core, store)


class GatedPerStreamStepFn(PerStreamStepFn):
    """The per-stream step that waits on the data as well as the watermark: what the transforms use on a
    runner that holds no watermark for a stateful stage's pending timers (the DirectRunner:
    ``transforms.streaming.counts_gate``).

    There, when the watermark passes the close of tick t and the release time of t in one step (a starved
    process, a backlog), the registry step's close of t and this step's wake for t fire in the same round,
    and the release missed the updates still being resolved. So the registry step
    (``ResolveEntriesFn(counts=True)``) sends ``(COUNTS, aggregates, counts)``: per tick, +1 for each
    update it buffered (from the bundle that buffered it, so it holds this step's input watermark before
    the tick's release can fire) and -1 for each it resolved (with the aggregates it went into), summed in
    ``open_counts``. A wake walks no tick at or after the first tick whose count is not 0; the wake is
    then parked (``wake_tick`` written, no timer) and the count that brings that tick to 0 sets the timer
    again. The watermark still decides when a tick may be released (``final_at``, a public schedule); the
    counts only make a release wait for its own tick's updates, never come earlier, and are never
    released (a count says how many updates the registry step holds, which only delays a firing of this
    step, and shows in no record). Other runners keep :class:`PerStreamStepFn`, its graph and its state
    names (a savepoint's). The catch-up timer is on (the counts bound its walk as they bound a wake's), on a grid
    of ``GATED_CATCH_UP_TICKS``."""

    OPEN_COUNTS = ReadModifyWriteStateSpec("open_counts", FastPrimitivesCoder())  # tick -> count (non-zero)
    # the counts keep a catch-up firing from overtaking the registry step's batches, so this step catches up too,
    # on a finer public grid
    catch_up_ticks = GATED_CATCH_UP_TICKS
    CORE, PENDING, QUERIES, WAKE_TICK, CHUNKS, INPUT_END_TICK = (
        PerStreamStepFn.CORE,
        PerStreamStepFn.PENDING,
        PerStreamStepFn.QUERIES,
        PerStreamStepFn.WAKE_TICK,
        PerStreamStepFn.CHUNKS,
        PerStreamStepFn.INPUT_END_TICK,
    )
    # the same timers (a timer spec takes one callback, so this class declares its own, of the same names)
    WAKE = TimerSpec("wake", TimeDomain.WATERMARK)
    CATCH_UP = TimerSpec("catch_up", TimeDomain.WATERMARK)

    def process(
        self,
        element,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        open_counts=beam.DoFn.StateParam(OPEN_COUNTS),
        input_end=beam.DoFn.StateParam(INPUT_END_TICK),
    ):
        value = element[1]
        if type(value) is tuple and len(value) == 3 and value[0] == COUNTS:
            self._counted(value, pending, wake_tick, wake, open_counts)
            return
        super().process(element, core_state, pending, queries, wake_tick, wake, input_end)

    @on_timer(WAKE)
    @on_timer(CATCH_UP)
    def on_wake_or_catch_up(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
        open_counts=beam.DoFn.StateParam(OPEN_COUNTS),
        chunks=beam.DoFn.StateParam(CHUNKS),
        input_end=beam.DoFn.StateParam(INPUT_END_TICK),
    ):
        """Either timer, walking no tick at or after the first one with updates still on their way."""
        bound = _open_bound(open_counts.read())
        yield from self._fire(
            key, ts, (core_state, chunks), pending, queries, wake_tick, wake, catch_up, bound, input_end.read()
        )

    def _counted(self, value, pending, wake_tick, wake, open_counts):
        """The registry step's output: its aggregates buffered, its counts summed; the wake timer set
        for the earliest tick with work unless a tick at or before it still has updates on their way (then
        the wake is parked, and the count that closes that tick sets it)."""
        _, aggs, counts = value
        first = buffer_aggregates(aggs, pending)
        opened = dict(open_counts.read() or {})
        if counts:
            for tick, d in counts:
                d += opened.get(tick, 0)
                if d:
                    opened[tick] = d
                else:
                    opened.pop(tick, None)
            open_counts.write(opened)
        current = wake_tick.read()
        due = current if first is None or (current is not None and current <= first) else first
        if due is None:
            return
        bound = _open_bound(opened)
        if bound is not None and due > bound:  # parked: a tick <= due still has updates on their way
            if due != current:
                wake_tick.write(due)
            return
        ts = self.spec.final_at(due)
        if ts < _MAX_TS:  # set again (a timer holds one time): it may have been parked
            wake_tick.write(due)
            wake.set(ts)


def _open_bound(opened) -> int | None:
    """The last tick a gated wake may walk: the tick before the first one whose count is not 0 (None: no
    limit)."""
    return min(opened) - 1 if opened else None


def _due(items: list, i: int, tick: int) -> int:
    """The end of the run of ``items[i:]`` (sorted, tick first) at or before ``tick``."""
    while i < len(items) and items[i][0] <= tick:
        i += 1
    return i


class BoundedStreamFn(_StepFn):
    """Bounded input in a batch pipeline: one call per declared stream with all of its input (after a
    GroupByKey), no state and no timers: the step is fed everything and run to the configured end
    (``StreamStep.bounded``). Records carry the time the streaming step gives them (``final_at``).
    ``element``: ``(stream, values)`` (start markers, tuples of tick aggregates, queries), or a declared
    stream's name, released here only if it had no data: ``streams_seen`` (a side input) tells them apart."""

    LABEL = "bounded_label"

    def __init__(self, step: StreamStep):
        if step.spec.end_tick is None:
            raise ValueError(BOUNDED_END)
        super().__init__(step)

    def process(self, element, streams_seen=None, window=beam.DoFn.WindowParam):
        if isinstance(element, str):
            if streams_seen is not None and element in set(streams_seen):
                return
            stream, values = element, ()
        else:
            stream, values = element
        parts, asks = [], []
        for value in values:
            if is_query(value):
                asks.append(value[1])
            elif value and value != START:
                parts.append(value)
        core = self.step.new_core(stream)
        records = self.step.bounded(core, parts, asks, self.step.spec.final_at)
        yield from in_global_window(records, window) if isinstance(window, GlobalWindow) else records


def in_global_window(records, window) -> typing.Iterator:
    """``records`` with each ``TimestampedValue`` made the ``WindowedValue(value, timestamp, (GlobalWindow(),))``
    Beam makes of it in the global windowing, here, not by ``GlobalWindows.assign`` per record (a year of
    one-minute periods has a million). Only for a step whose input is in the global window (the bounded
    steps: after a ``GroupByKey`` in the global windowing); anything else passes unchanged."""
    windows = (window,)
    for r in records:
        if type(r) is TimestampedValue:
            yield WindowedValue(r.value, r.timestamp, windows)
        else:
            yield r


def set_catch_up(spec: StreamSpec, tick: int, catch_up, grid: int = CATCH_UP_TICKS) -> None:
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
    have made one firing each (``PerStreamStepFn._fire``: the same calls to the core, so every field of
    every record is the same), each record carrying its own tick's time (``StreamSpec.final_at``), a
    public function of the tick, whichever firing computed it. The grid is public (the origin, the tick
    length, this constant, the configured end); which firing computes a release while catching up follows
    the watermark and the ticks with input, as the wake timer always did, and shows in no record."""
    if tick < 1:
        tick = 1
    nxt = ((tick - 1) // grid + 1) * grid
    if spec.end_tick is not None:  # the configured end is public too
        if tick > spec.end_tick:
            return
        nxt = min(nxt, spec.end_tick)
    ts = spec.final_at(nxt)
    if ts < _MAX_TS:
        catch_up.set(ts)


def schedule_wake(spec: StreamSpec, tick: int, wake, wake_tick) -> None:
    """Make sure the per-stream step's wake timer fires for ``tick``, keeping the earliest (``wake_tick``
    holds the tick it is set for): when tick's input is final (``StreamSpec.final_at``), a public
    schedule, never the data."""
    current = wake_tick.read()
    if current is not None and current <= tick:
        return
    ts = spec.final_at(tick)
    if ts >= _MAX_TS:  # deadlines square: ticks past Beam's time range are never scheduled
        return
    wake_tick.write(tick)
    wake.set(ts)


def next_work(core, aggs, i: int, queries=(), k: int = 0) -> int | None:
    """The next tick a per-stream step must wake for: the earliest of ``aggs[i:]`` (tick aggregates sorted by
    tick; none once the core is finished), ``queries[k:]`` (sorted, tick first; answered even after the
    end) and the core's ``next_wake``, never at or before its last tick; None when there is none."""
    candidates = [aggs[i][0]] if i < len(aggs) and not core.finished else []
    if k < len(queries):
        candidates.append(queries[k][0])
    if core.next_wake is not None:
        candidates.append(core.next_wake)
    return max(min(candidates), core.last_tick + 1) if candidates else None


def buffer_aggregates(aggs, pending) -> int | None:
    """Add tick aggregates (tuples whose first field is the tick) to the ``pending`` bag; returns their
    earliest tick (None if there were none)."""
    first = None
    for agg in aggs:
        pending.add(agg)
        first = agg[0] if first is None else min(first, agg[0])
    return first


def holds_timer_watermarks(pipeline) -> bool:
    """Whether ``pipeline``'s runner holds a stateful stage's output watermark for its pending timers (Flink,
    Dataflow, the portable runners), so that the per-stream step may catch up through its grid timer. The
    DirectRunner does not (``shared/design/BEAM_NOTES.md``): there the step keeps to the wake timer."""
    runner = getattr(pipeline, "runner", None)
    return "DirectRunner" not in type(runner).__name__
