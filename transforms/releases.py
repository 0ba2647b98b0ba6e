"""Beam composite PTransforms for continual release over dynamic data.

Wiring (``_ReleaseDynamic.expand``, unbounded input)::

  UpdateRecord ── Validate ──► ((stream, entry), update) ── ResolveEntries ──► (stream, aggregates)
                     │                                          │ stateful, keyed by (stream, entry id),
                     │                                          │ event-time timer per tick; sums each
                     ▼                                          ▼ (stream, tick) over the bundle
               dead letters                                dead letters
  (other runners: ((stream, tick), aggregate) ── MergePerTick: stateful, keyed by (stream, tick),
                  one timer: one aggregate per tick; ``tick_merge``, see below) ───────────────┤
  declared streams ── StartMarkers ────────────────────────────────────────────────────────────┤
  (end_time set) ── EndMarkers ─────────────────────────────────────────────────────────────────┤
                                                                                                ▼
                              ReleaseStream: stateful, keyed by stream, one event-time timer:
                              applies each tick's aggregate in tick order to the core state
                              machine, lets segments close on schedule, emits answers and nodes

Work per update (validation, entry registry, merging per tick) runs in parallel
across keys and workers; the per-stream sequential step sees one merged batch
per tick. After the registry a tick's accepted updates travel as an
*aggregate*: plain multisets of inserted items and deleted (item, insertion
tick) pairs, with counts (see ``_fold``).

Bounded input in a batch pipeline (``PCollection.is_bounded``, not
``--streaming``): every entry's updates are known, so the registry step is a
GroupByKey per (stream, entry id) resolved once in (tick, seq) order and
summed per (stream, tick) over each bundle (a combiner's lifted
pre-aggregation, done in the registry step), then a GroupByKey per stream and
a plain DoFn that merges a stream's aggregates and applies them in one call;
declared streams without data are released by the same DoFn from a Create,
and each stream's last tick is a side input (the end tick). Same releases; no
per-update state, and no state or timers at all in the per-stream step.

Time: tick ``k`` covers event times ``[origin + (k-1) s, origin + k s)``. An
entry's updates of tick k are resolved when the watermark passes the tick's end
and emitted at that time; the per-stream step applies tick k's batch, and the
closes of tick k, when the watermark passes ``origin + (k+1) s``. Everything
stays in the global window: late data is never dropped by windowing. Releases
are therefore emitted one tick after the tick they describe.

Privacy: per stream, the guarantee of the core mechanism (update-level,
``DynamicConfig.budget``); streams are disjoint partitions of the updates, so
each declared stream is an independent release with its own budget (parallel
composition). Every declared stream ticks and releases on schedule with or
without data, so the presence of data does not show in the release schedule.
Noise is keyed by (key, stream, release coordinates): a retried bundle
recomputes byte-identical releases.
"""

from __future__ import annotations

import logging
import math
import operator
import typing
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.coders import FastPrimitivesCoder, PickleCoder, VarIntCoder
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms import window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import (
    BagStateSpec,
    ReadModifyWriteStateSpec,
    TimerSpec,
    on_timer,
)
from apache_beam.utils.timestamp import MIN_TIMESTAMP, Timestamp
from apache_beam.utils.windowed_value import WindowedValue

from transforms.core.accounting import ZCDP, ApproxDP
from transforms.core.counters import COUNTER_NAMES
from transforms.core.dynamic import (
    ContinualCountRelease,
    DynamicConfig,
    FullyDynamicRelease,
    InsertionOnlyRelease,
    TwoStreamBaseline,
)
from transforms.core.noise import ReleaseIdentity, config_digest
from transforms.core.registry import DELETE, INSERT, OPS, TickBatch, Update, resolve
from transforms.records import DeadLetter, NodeRecord, NoiseKey, ReleaseRecord, UpdateRecord

__all__ = ["ReleaseFullyDynamic", "ReleaseInsertionOnly", "ReleaseTwoStreamBaseline", "CountContinually", "StreamSpec"]

NAMESPACE = "dp_dynamic"
_PROGRESS = logging.getLogger("dp_dynamic.progress")
LATE_POLICIES = ("current", "dead_letter")


@dataclass(frozen=True)
class StreamSpec:
    """Time and stream layout shared by the transforms.

    Args:
      streams: the declared stream keys (public). Updates for other streams are
        dead-lettered; every declared stream releases on schedule.
      tick_seconds: tick length in event-time seconds.
      origin: event time of the start of tick 1.
      late_policy: an update older than its entry's last resolved tick is
        ``dead_letter``-ed (reason ``late``) or applied at the entry's
        ``current`` tick. (A tick batch that reaches a stream after the stream
        has released that tick is always applied at the stream's next tick:
        its registry effect has happened, so dropping it would corrupt state.)
      end_time: the configured, public end of the release (event time,
        exclusive): the last released tick is the last one that starts before
        ``end_time`` (so an end inside a tick is rounded up to the end of that
        tick); updates of later ticks are dead-lettered (``after_end``).
        Required for bounded input: the end of a release must never be
        derived from the data (the last tick with data is data, and a release
        schedule that depends on it leaks with probability 1).
        Optional for unbounded input (the release then runs until cancelled).
      allowed_lateness: seconds an update may arrive behind the watermark and
        still count as on time (rounded up to whole ticks, L). Tick k is
        resolved when the watermark passes the end of tick k + L, so releases
        are L ticks later; updates arriving out of order within L change nothing.
    """

    streams: tuple = ("default",)
    tick_seconds: float = 60.0
    origin: float = 0.0
    late_policy: str = "current"
    end_time: float | None = None
    allowed_lateness: float = 0.0

    def __post_init__(self):
        if not self.allowed_lateness >= 0:
            raise ValueError(f"allowed_lateness must be >= 0 seconds, got {self.allowed_lateness}")
        if not self.streams or len(set(self.streams)) != len(self.streams):
            raise ValueError("streams must be a non-empty list of distinct keys")
        if not self.tick_seconds > 0:
            raise ValueError(f"tick_seconds must be > 0, got {self.tick_seconds}")
        if self.late_policy not in LATE_POLICIES:
            raise ValueError(f"late_policy must be one of {', '.join(LATE_POLICIES)}; got {self.late_policy!r}")
        if self.end_time is not None and not self.end_time > self.origin:
            raise ValueError(f"end_time ({self.end_time}) must be after origin ({self.origin})")

    @property
    def lateness_ticks(self) -> int:
        """Allowed lateness in whole ticks (rounded up)."""
        return int(math.ceil(self.allowed_lateness / self.tick_seconds - 1e-9))

    def tick_of(self, event_time: float) -> int:
        return int(math.floor((event_time - self.origin) / self.tick_seconds)) + 1

    @property
    def end_tick(self) -> int | None:
        """The last released tick (public: from ``end_time``), or None."""
        if self.end_time is None:
            return None
        return max(1, int(math.ceil((self.end_time - self.origin) / self.tick_seconds - 1e-9)))

    def tick_end(self, tick: int) -> Timestamp:
        """Event time at which tick ``tick`` is over (start of tick + 1)."""
        return Timestamp.of(self.origin + tick * self.tick_seconds)

    def tick_at(self, ts: Timestamp) -> int:
        """The last tick that is over at timestamp ``ts``."""
        return int(math.floor((float(ts) - self.origin) / self.tick_seconds + 1e-9))


def _spent_tuple(b) -> tuple:
    if isinstance(b, ApproxDP):
        return (b.epsilon, b.delta)
    if isinstance(b, ZCDP):
        return (b.rho,)
    return (b.epsilon,)


# ---------------------------------------------------------------------------
# Step 1: validation (stateless)
# ---------------------------------------------------------------------------


@beam.typehints.with_output_types(tuple[tuple[str, str], typing.Any])
class _ValidateFn(beam.DoFn):
    """Checks what needs no state: record shape, op, declared stream, item domain."""

    DEAD = "dead_letters"

    def __init__(self, spec: StreamSpec, domain_sizes: tuple):
        self.spec = spec
        self.domain_sizes = tuple(domain_sizes)
        self.streams = frozenset(spec.streams)
        self.end_tick = spec.end_tick
        self.validated = Metrics.counter(NAMESPACE, "updates_validated")

    def start_bundle(self):
        self.n_valid = 0

    def finish_bundle(self):
        if self.n_valid:  # one metric update per bundle, not per update
            self.validated.inc(self.n_valid)
            self.n_valid = 0

    def process(self, rec):
        reason, tick = self._check(rec)
        if reason:
            Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
            yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(reason, rec))
            return
        self.n_valid += 1
        item = tuple(rec.item) if rec.item is not None else None
        # plain tuples of primitives: Beam encodes them without pickling
        yield ((rec.stream, rec.entry_id), (tick, rec.seq, rec.op, item, float(rec.event_time)))

    def _check(self, rec) -> tuple[str | None, int]:
        """(rejection reason or None, the update's tick)."""
        if not isinstance(rec, UpdateRecord):
            return "malformed", 0
        if rec.stream not in self.streams:
            return "undeclared_stream", 0
        if rec.op not in OPS:
            return "unknown_op", 0
        if not isinstance(rec.entry_id, str) or not rec.entry_id:
            return "malformed", 0
        if not isinstance(rec.event_time, (int, float)) or not math.isfinite(rec.event_time):
            return "malformed", 0
        if isinstance(rec.seq, bool) or not isinstance(rec.seq, int):  # it orders an entry's updates
            return "malformed", 0
        tick = self.spec.tick_of(rec.event_time)
        if tick < 1:
            return "before_origin", tick
        if self.end_tick is not None and tick > self.end_tick:
            return "after_end", tick
        item = rec.item
        if rec.op == "delete":  # a delete's item is not used, but it is carried to dead letters
            if item is not None and not isinstance(item, (tuple, list)):
                return "malformed", tick
            return None, tick
        if not isinstance(item, (tuple, list)) or len(item) != len(self.domain_sizes):
            return "malformed", tick
        for v, d in zip(item, self.domain_sizes):
            if isinstance(v, bool) or not isinstance(v, int):
                return "malformed", tick
            if not 0 <= v < d:
                return "item_out_of_range", tick
        return None, tick


# ---------------------------------------------------------------------------
# Step 2: the entry registry, keyed by (stream, entry id)
# ---------------------------------------------------------------------------


# After the registry, the accepted updates of one (stream, tick) travel as a
# *tick aggregate*, a plain tuple ``(tick, inserts, deletes, n_updates)``:
# ``inserts`` {item: count}, ``deletes`` {(item, insertion tick): count}. A
# tick's batch is order-free (the core histograms its items), so the multisets
# are all it needs. Dicts, tuples and ints are encoded by Beam's
# FastPrimitivesCoder without pickling, and counting instead of listing keeps
# the merges and shuffles small when items repeat (a count query has one item).


def _aggregates(acc: dict) -> tuple:
    """The tick aggregates of ``acc`` (tick -> [inserts, deletes, n]), in tick order."""
    return tuple((t, ins, dele, n) for t, (ins, dele, n) in sorted(acc.items()))


def _fold(acc: dict, key, inserts: dict, deletes: dict, n: int) -> None:
    """``acc[key]``: ``[inserts, deletes, n_updates]``, summed in place (merging
    k aggregates stays linear in their sizes)."""
    cur = acc.get(key)
    if cur is None:
        acc[key] = [dict(inserts), dict(deletes), n]
        return
    for into, add in ((cur[0], inserts), (cur[1], deletes)):
        for k, c in add.items():
            into[k] = into.get(k, 0) + c
    cur[2] += n


_UPDATES_ACCEPTED = Metrics.counter(NAMESPACE, "updates_accepted")  # resolved per container at inc()
_TICK_SEQ = operator.itemgetter(0, 1)  # the order of an entry's updates


def _update_record(key, value) -> UpdateRecord:
    """The input record of a validated ``(key, value)`` (for dead letters)."""
    (stream, entry_id), (_, seq, op, item, event_time) = key, value
    return UpdateRecord(event_time, op, entry_id, item, stream, seq)


def _plain_item(item, domain_sizes) -> bool:
    """``item`` passes ``resolve``'s item checks (a tuple of in-range ints)."""
    if type(item) is not tuple or len(item) != len(domain_sizes):
        return False
    for v, d in zip(item, domain_sizes):
        if type(v) is not int or not 0 <= v < d:
            return False
    return True


def _resolve_entry(state, key, updates, domain_sizes, deletions_allowed, max_mutations=None, into=None):
    """Resolve one entry's updates, given in (tick, seq) order, from ``state``.

    Returns the new state, the accepted updates as tick aggregates (tick ->
    ``[inserts, deletes, n]``, see :func:`_fold`; added to ``into`` if given),
    the dead letters (with their counters incremented) and the number of
    accepted updates. Shared by the streaming and the bounded registry steps,
    so both resolve exactly like the core registry: the common cases (insert of
    a new entry, delete of a live one) take a shortcut that decides them as
    ``resolve`` does, everything else goes through ``resolve``.
    """
    batches: dict[int, list] = {} if into is None else into
    dead = []
    entry_id = key[1]
    plain_id = type(entry_id) is str and bool(entry_id)
    unlimited = max_mutations is None
    accepted = 0
    for value in updates:
        tick, _, op, item, _ = value
        if plain_id and op == INSERT and state is None and _plain_item(item, domain_sizes):
            state, ins, dele, n = (item, tick, 1), item, None, 1
        elif plain_id and unlimited and op == DELETE and state is not None and deletions_allowed:
            state, ins, dele, n = None, None, (state[0], state[1]), 1
        else:
            new, ins, dele, n, reason = resolve(
                state, Update(op, entry_id, item), tick, domain_sizes, deletions_allowed, max_mutations
            )
            if reason:
                Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
                dead.append(DeadLetter(reason, _update_record(key, value)))
                continue
            state = new
        cur = batches.get(tick)
        if cur is None:
            cur = batches[tick] = [{}, {}, 0]
        if ins is not None:
            cur[0][ins] = cur[0].get(ins, 0) + 1
        if dele is not None:
            cur[1][dele] = cur[1].get(dele, 0) + 1
        cur[2] += n
        accepted += n
    return state, batches, dead, accepted


@beam.typehints.with_output_types(tuple[tuple[str, int], typing.Any])
class _ResolveEntriesFn(beam.DoFn):
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
            aggs = _aggregates(ticks)
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
        key, (tick, seq, op, item, event_time) = element
        state, last, timer_tick, pending = meta.read() or (None, 0, None, ())
        if tick <= last:
            if self.spec.late_policy == "dead_letter":
                Metrics.counter(NAMESPACE, "dead_letter_late").inc()
                yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter("late", _update_record(key, element[1])))
                return
            tick = last + 1  # apply at the entry's current tick
        pending = pending + ((tick, seq, op, item, event_time),)
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
        pending = sorted(pending, key=_TICK_SEQ)
        now = [p for p in pending if p[0] <= upto]
        later = tuple(p for p in pending if p[0] > upto)
        acc = self.acc.get(stream)
        if acc is None:
            acc = self.acc[stream] = {}
        state, _, dead, accepted = _resolve_entry(
            state, key, now, self.domain_sizes, self.deletions_allowed, self.max_mutations, acc
        )
        self.accepted += accepted
        for d in dead:
            yield beam.pvalue.TaggedOutput(self.DEAD, d)
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
class _ResolveEntriesBoundedFn(beam.DoFn):
    """Bounded input: all of an entry's updates are known, so the entry is
    resolved once, after a GroupByKey, in (tick, seq) order (no per-update state).
    Same resolution as :class:`_ResolveEntriesFn`.

    The accepted updates are summed per (stream, tick) over the bundle (the
    pre-aggregation a lifted combiner does, without a call per entry) and
    leave at the end of the bundle as ``(stream, tick aggregates)``, with
    the names of the streams the bundle saw on the ``streams_seen`` output (so
    that a declared stream without data is released from the declared list
    instead; the end of a bounded release is configured, never taken from
    the data)."""

    DEAD = "dead_letters"
    STREAMS_SEEN = "streams_seen"

    def __init__(self, spec: StreamSpec, domain_sizes: tuple, deletions_allowed: bool, max_mutations=None):
        self.spec = spec
        self.domain_sizes = tuple(domain_sizes)
        self.deletions_allowed = deletions_allowed
        self.max_mutations = max_mutations

    def start_bundle(self):
        self.acc = {}  # stream -> tick -> [inserts, deletes, n]
        self.accepted = 0
        self.seen = set()  # streams of this bundle

    def process(self, element):
        key, updates = element
        ordered = sorted(updates, key=_TICK_SEQ)
        acc = self.acc.get(key[0])
        if acc is None:
            acc = self.acc[key[0]] = {}
        _, _, dead, accepted = _resolve_entry(
            None, key, ordered, self.domain_sizes, self.deletions_allowed, self.max_mutations, acc
        )
        self.accepted += accepted
        for d in dead:
            yield beam.pvalue.TaggedOutput(self.DEAD, d)
        self.seen.add(key[0])

    def finish_bundle(self):
        acc, self.acc = self.acc, {}
        if self.accepted:  # one metric update per bundle, not per entry
            _UPDATES_ACCEPTED.inc(self.accepted)
            self.accepted = 0
        for stream, ticks in acc.items():
            aggs = _aggregates(ticks)
            yield WindowedValue((stream, aggs), MIN_TIMESTAMP, (window.GlobalWindow(),))
        seen, self.seen = self.seen, set()
        for stream in seen:
            yield beam.pvalue.TaggedOutput(
                self.STREAMS_SEEN, WindowedValue(stream, MIN_TIMESTAMP, (window.GlobalWindow(),))
            )


# ---------------------------------------------------------------------------
# Step 3: merge each (stream, tick) into one batch
# ---------------------------------------------------------------------------


@beam.typehints.with_output_types(tuple[str, typing.Any])
class _MergeTickFn(beam.DoFn):
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
                _fold(due, *agg)
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

_START, _END = "__start__", "__end__"
_MAX_TS = Timestamp.of(2**62 / 1e6)  # well inside Beam's timestamp range
_MAX_TICK = 2**62  # fits the VarInt state coder


@beam.typehints.with_output_types(ReleaseRecord)
class _ReleaseStreamFn(beam.DoFn):
    """Holds one stream's core state machine; one event-time timer drives it.

    Input: ``(stream, tick aggregates)`` merged per tick, plus start and end markers.
    The timer is set to the end of the next tick that has work: a pending batch
    or the partitioning's next scheduled close. On firing it applies pending
    batches in tick order (segments close in between, on schedule) and emits the
    answers and the released node outputs.
    """

    CORE = ReadModifyWriteStateSpec("core", PickleCoder())
    PENDING = BagStateSpec("pending", FastPrimitivesCoder())  # tick aggregates
    END = ReadModifyWriteStateSpec("end", VarIntCoder())
    # the tick the timer is set for, and the partitioning's next close (kept small so
    # that adding a batch never reads the core or the pending bag)
    WAKE_TICK = ReadModifyWriteStateSpec("wake_tick", VarIntCoder())
    NEXT_CLOSE = ReadModifyWriteStateSpec("next_close", VarIntCoder())
    WAKE = TimerSpec("wake", TimeDomain.WATERMARK)
    NODES = "nodes"
    PROGRESS_EVERY = 1000

    def __init__(
        self,
        spec: StreamSpec,
        config: DynamicConfig,
        core_cls,
        noise_key: NoiseKey,
        emit_nodes: bool,
        core_kwargs: dict | None = None,
        release: ReleaseIdentity | None = None,
    ):
        self.spec = spec
        self.core_kwargs = dict(core_kwargs or {})
        self.config = config
        self.core_cls = core_cls
        self.noise_key = noise_key
        self.emit_nodes = emit_nodes
        self.release = _required_release(release)
        self.noise = None
        self.emitted = 0

    def setup(self):
        # the release's own noise: the key AND the release identity fixed in the
        # graph at construction (retries of this job redraw the same noise, any
        # other release draws independent noise)
        self.noise = self.noise_key.load().for_release(self.release)

    def _core(self, stream, state):
        core = state.read()
        if core is None:
            core = self.core_cls(self.config, stream=stream, emit_nodes=self.emit_nodes, **self.core_kwargs)
        return core

    def _wake_at(self, tick, wake, wake_tick):
        """Make sure the timer fires for ``tick`` (keep the earliest)."""
        current = wake_tick.read()
        if current is not None and current <= tick:
            return
        # tick k's batch is final at the end of tick k + 1 + L
        ts = self.spec.tick_end(tick + 1 + self.spec.lateness_ticks)
        if ts >= _MAX_TS:
            return
        wake_tick.write(tick)
        wake.set(ts)

    def process(
        self,
        element,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        end=beam.DoFn.StateParam(END),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        next_close=beam.DoFn.StateParam(NEXT_CLOSE),
        wake=beam.DoFn.TimerParam(WAKE),
    ):
        stream, value = element
        if value == _START:
            if core_state.read() is None:
                core_state.write(self._core(stream, core_state))
            self._wake_at(1, wake, wake_tick)
            return
        if isinstance(value, tuple) and value and value[0] == _END:
            end.write(int(value[1]))
            nc = next_close.read()
            self._wake_at(nc if nc is not None else 1, wake, wake_tick)
            return
        first = None
        for agg in value:  # a tuple of tick aggregates
            pending.add(agg)
            first = agg[0] if first is None else min(first, agg[0])
        if first is not None:
            self._wake_at(first, wake, wake_tick)

    @on_timer(WAKE)
    def on_wake(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        end=beam.DoFn.StateParam(END),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        next_close=beam.DoFn.StateParam(NEXT_CLOSE),
        wake=beam.DoFn.TimerParam(WAKE),
    ):
        stream = key
        wake_tick.clear()
        core = self._core(stream, core_state)
        upto = self.spec.tick_at(ts) - 1 - self.spec.lateness_ticks  # ticks whose batches are final
        end_tick = end.read()
        now, later = [], []
        for agg in sorted(pending.read(), key=lambda agg: agg[0]):
            (now if agg[0] <= upto else later).append(agg)
        results = _apply_in_order(core, now, self.noise)
        if upto > core.partitioner.last_tick:
            results.append(core.advance(upto, self.noise))
        pending.clear()
        for agg in later:
            pending.add(agg)
        yield from _emit(self, core, results, lambda tick: ts)
        core_state.write(core)
        # next wake: the earliest pending batch, else the next scheduled close,
        # unless the stream is over (its first close at or after the end tick)
        # deadlines square (T_j = t_{j-1}^2), so the next close can exceed 64 bits;
        # ticks past Beam's timestamp range are never scheduled anyway
        next_close.write(min(core.next_close, _MAX_TICK))
        over = end_tick is not None and core.closed and core.partitioner.prev_close >= end_tick
        candidates = [agg[0] for agg in later] + ([] if over else [core.next_close])
        if candidates:
            self._wake_at(max(min(candidates), core.partitioner.last_tick + 1), wake, wake_tick)


def _emit(fn, core, results, timestamp_of):
    """Answers and node outputs of ``results`` as timestamped records, with the
    metrics (shared by the timer-driven and the bounded per-stream steps)."""
    for res in results:
        if res.closes:
            Metrics.counter(NAMESPACE, "segments_closed").inc(len(res.closes))
        for a in res.answers:
            Metrics.counter(NAMESPACE, "releases_emitted").inc()
            fn.emitted += 1
            if fn.emitted % fn.PROGRESS_EVERY == 0:  # counts only, never values
                _PROGRESS.info("releases emitted by this worker: %d", fn.emitted)
            yield beam.window.TimestampedValue(
                ReleaseRecord(
                    a.stream,
                    a.tick,
                    a.segment,
                    a.query,
                    tuple(float(x) for x in a.estimate),
                    a.error_bound,
                    a.beta,
                    _spent_tuple(a.spent),
                ),
                timestamp_of(a.tick),
            )
    spent = _spent_tuple(core.ledger.spent)[0]
    Metrics.distribution(NAMESPACE, "budget_spent_micro").update(int(spent * 1e6))
    if fn.emit_nodes:
        for n in core.node_outputs:
            yield beam.pvalue.TaggedOutput(
                _ReleaseStreamFn.NODES,
                NodeRecord(
                    n.stream,
                    n.tick,
                    n.segment,
                    n.node,
                    n.level,
                    n.round,
                    n.kind,
                    n.query,
                    tuple(float(x) for x in n.values),
                    None if n.cost is None else _spent_tuple(n.cost),
                    tuple(n.coordinates),
                ),
            )
        core.node_outputs.clear()


def _apply_in_order(core, aggregates, noise):
    """Apply tick aggregates in tick order, merging those of one tick; an
    aggregate for a tick already released is applied at the next tick (its
    registry effect has already happened). Returns the results."""
    merged: dict[int, list] = {}
    first = core.partitioner.last_tick + 1
    for tick, ins, dele, n in aggregates:
        if not (n or ins or dele):  # nothing accepted: nothing to apply
            continue
        if tick < first:
            Metrics.counter(NAMESPACE, "late_batches_applied_at_current_tick").inc()
            tick = first
        _fold(merged, tick, ins, dele, n)
    return [core.apply_batch(TickBatch.from_counts(t, *merged[t]), noise) for t in sorted(merged)]


@beam.typehints.with_output_types(ReleaseRecord)
class _ReleaseBoundedStreamFn(beam.DoFn):
    """Bounded input in a batch pipeline: one call per declared stream with all
    of its tick aggregates (one tuple per bundle of the registry step, merged
    here per tick), no state and no timers. The end tick
    is a side input (the last tick with data over all streams, or None when
    there is none) or ``spec.end_time``'s tick. Same releases as
    :class:`_ReleaseStreamFn` (each stamped with the time the streaming step
    would emit it: the end of the tick after its tick, plus the allowed
    lateness)."""

    NODES = "nodes"
    PROGRESS_EVERY = 1000

    def __init__(self, spec, config, core_cls, noise_key, emit_nodes, core_kwargs=None, release=None):
        if spec.end_tick is None:
            raise ValueError(_BOUNDED_END)
        self.spec = spec
        self.config = config
        self.core_cls = core_cls
        self.noise_key = noise_key
        self.emit_nodes = emit_nodes
        self.core_kwargs = dict(core_kwargs or {})
        self.release = _required_release(release)
        self.noise = None
        self.emitted = 0

    def setup(self):
        self.noise = self.noise_key.load().for_release(self.release)  # see _ReleaseStreamFn.setup

    def process(self, element, streams_seen):
        """``element``: ``(stream, parts)`` (a tuple of tick aggregates per bundle of
        the registry step), or a declared stream's name, released here only if it
        had no data (``streams_seen``: the streams with data). Every stream is
        released up to the configured end tick (``spec.end_time``): the
        partitioning keeps closing segments on schedule, and the last release is
        the first close at or after the end tick (a close decided by the
        configuration and the sparse vector's noisy outputs only)."""
        if isinstance(element, str):
            if element in set(streams_seen):
                return
            stream, parts = element, ()
        else:
            stream, parts = element
        parts = [p for p in parts if p]
        if len(parts) == 1:
            aggregates = parts[0]  # one bundle: one aggregate per tick already
        else:
            acc: dict[int, list] = {}
            for aggs in parts:
                for agg in aggs:
                    _fold(acc, *agg)
            aggregates = _aggregates(acc)
        core = self.core_cls(self.config, stream=stream, emit_nodes=self.emit_nodes, **self.core_kwargs)
        results = _apply_in_order(core, aggregates, self.noise)
        end_tick = self.spec.end_tick
        if end_tick > core.partitioner.last_tick:
            results.append(core.advance(end_tick, self.noise))
        while not (core.closed and core.partitioner.prev_close >= end_tick):
            results.append(core.advance(core.next_close, self.noise))
        lateness = self.spec.lateness_ticks
        yield from _emit(self, core, results, lambda tick: self.spec.tick_end(tick + 1 + lateness))


_BOUNDED_END = (
    "bounded input needs a configured end: StreamSpec(end_time=...) (time.end in a pipeline config). The end "
    "of a release is public configuration; deriving it from the data (its last time) would make the release "
    "schedule depend on the data"
)


def _required_release(release):
    if not isinstance(release, ReleaseIdentity):
        raise TypeError("the release DoFns need the ReleaseIdentity the transform fixed at construction")
    return release


TICK_MERGES = ("auto", "stateful", "bundle")


def _stateful_tick_merge(choice: str, pipeline) -> bool:
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
    runner = getattr(pipeline, "runner", None)
    return "DirectRunner" not in type(runner).__name__


# ---------------------------------------------------------------------------
# Public composite transforms
# ---------------------------------------------------------------------------


class _ReleaseDynamic(beam.PTransform):
    core_cls = FullyDynamicRelease

    def __init__(
        self,
        config: DynamicConfig,
        spec: StreamSpec = StreamSpec(),
        noise_key: NoiseKey | None = None,
        *,
        emit_nodes: bool = True,
        label: str | None = None,
        core_kwargs: dict | None = None,
        tick_merge: str = "auto",
        release: ReleaseIdentity | None = None,
    ):
        super().__init__(label)
        self.core_kwargs = dict(core_kwargs or {})
        if tick_merge not in TICK_MERGES:
            raise ValueError(f"tick_merge must be one of {', '.join(TICK_MERGES)}; got {tick_merge!r}")
        self.tick_merge = tick_merge
        if not isinstance(config, DynamicConfig):
            raise TypeError("config must be a transforms.core.DynamicConfig")
        if not isinstance(spec, StreamSpec):
            raise TypeError("spec must be a StreamSpec")
        if noise_key is None:
            raise ValueError(
                "a noise key source is required: NoiseKey.from_env(...) or from_file(...) in production, "
                "NoiseKey.fixed(...) or NoiseKey.disabled() in tests"
            )
        if release is not None and not isinstance(release, ReleaseIdentity):
            raise TypeError("release must be a transforms.core.ReleaseIdentity (or None for a new release)")
        self.config = config
        self.spec = spec
        self.noise_key = noise_key
        self.emit_nodes = emit_nodes
        self._domains = tuple(q.mechanism(config.noise_kind).domain_size for q in config.queries)
        # The release identity keys all noise of this transform. It is fixed here, at
        # pipeline construction, so it travels in the graph: retried bundles (and a
        # restored or updated job given the same id) redraw the same noise, while any
        # other release on the same key draws independent noise. A new id is random
        # (os.urandom), never derived from data; the digest covers everything that
        # defines the release, so a reused id with another configuration differs too.
        base = release if release is not None else ReleaseIdentity.new()
        self.release = base.with_digest(
            config_digest(type(self).__name__, self.core_cls.__name__, config, spec, sorted(self.core_kwargs.items()))
        )

    def expand(self, updates):
        spec = self.spec
        validated = updates | "Validate" >> beam.ParDo(_ValidateFn(spec, self._domains)).with_outputs(
            _ValidateFn.DEAD, main="valid"
        )
        streaming = updates.pipeline.options.view_as(StandardOptions).streaming
        if updates.is_bounded and not streaming:
            if spec.end_tick is None:
                raise ValueError(_BOUNDED_END)
            answers, nodes, dead = self._expand_bounded(validated.valid)
        else:
            answers, nodes, dead = self._expand_unbounded(validated.valid)
        dead = (validated[_ValidateFn.DEAD], dead) | "DeadLetters" >> beam.Flatten()
        return {"answers": answers, "nodes": nodes, "dead_letters": dead}

    def _release_fn(self, cls):
        return cls(
            self.spec,
            self.config,
            self.core_cls,
            self.noise_key,
            self.emit_nodes,
            core_kwargs=self.core_kwargs,
            release=self.release,
        )

    def _expand_bounded(self, valid):
        """All input is known: resolve each entry once, group per stream, and
        apply each stream's aggregates in one call (no state, no timers)."""
        spec = self.spec
        resolved = (
            valid
            | "GroupByEntry" >> beam.GroupByKey()
            | "ResolveEntries"
            >> beam.ParDo(
                _ResolveEntriesBoundedFn(
                    spec, self._domains, self.core_cls.deletions_allowed, self.config.max_mutations
                )
            ).with_outputs(_ResolveEntriesBoundedFn.DEAD, _ResolveEntriesBoundedFn.STREAMS_SEEN, main="resolved")
        )
        # one call per stream with data, after a GroupByKey; a declared stream without
        # data is released from a Create of the declared streams (the FnApiRunner gives
        # a multi-input Flatten a stage of its own, so the markers stay out of the data's way)
        seen = beam.pvalue.AsList(resolved[_ResolveEntriesBoundedFn.STREAMS_SEEN])
        fn = self._release_fn(_ReleaseBoundedStreamFn)
        with_data = (
            resolved.resolved
            | "GroupByStream" >> beam.GroupByKey()
            | "ReleaseStream" >> beam.ParDo(fn, seen).with_outputs(_ReleaseStreamFn.NODES, main="answers")
        )
        idle = (
            valid.pipeline
            | "DeclaredStreams" >> beam.Create(list(spec.streams), reshuffle=False)
            | "ReleaseIdleStreams" >> beam.ParDo(fn, seen).with_outputs(_ReleaseStreamFn.NODES, main="answers")
        )
        answers = (with_data.answers, idle.answers) | "Answers" >> beam.Flatten()
        nodes = (with_data[_ReleaseStreamFn.NODES], idle[_ReleaseStreamFn.NODES]) | "Nodes" >> beam.Flatten()
        return answers, nodes, resolved[_ResolveEntriesBoundedFn.DEAD]

    def _expand_unbounded(self, valid):
        """Streaming: per-entry state and timers, merged per tick, applied by a
        stateful per-stream step as the watermark passes each tick."""
        spec = self.spec
        stateful_merge = _stateful_tick_merge(self.tick_merge, valid.pipeline)
        resolved = valid | "ResolveEntries" >> beam.ParDo(
            _ResolveEntriesFn(
                spec,
                self._domains,
                self.core_cls.deletions_allowed,
                per_stream=not stateful_merge,
                max_mutations=self.config.max_mutations,
            )
        ).with_input_types(tuple[tuple[str, str], typing.Any]).with_output_types(
            tuple[typing.Any, typing.Any]
        ).with_outputs(_ResolveEntriesFn.DEAD, main="resolved")
        merged = resolved.resolved
        if stateful_merge:
            merged = merged | "MergePerTick" >> beam.ParDo(_MergeTickFn(spec)).with_input_types(
                tuple[tuple[str, int], typing.Any]
            )
        p = valid.pipeline
        inputs = [
            merged,
            p
            | "DeclaredStreams" >> beam.Create([(s, _START) for s in spec.streams], reshuffle=False)
            | "StampStart"
            >> beam.Map(lambda kv, t=spec.origin: window.TimestampedValue(kv, t)).with_output_types(
                tuple[str, typing.Any]
            ),
        ]
        if spec.end_time is not None:
            end_tick = spec.end_tick
            inputs.append(
                p
                | "EndMarkers" >> beam.Create([(s, (_END, end_tick)) for s in spec.streams], reshuffle=False)
                | "StampEnd"
                >> beam.Map(lambda kv, t=spec.origin: window.TimestampedValue(kv, t)).with_output_types(
                    tuple[str, typing.Any]
                )
            )
        release = (
            inputs
            | "Flatten" >> beam.Flatten()
            | "ReleaseStream"
            >> beam.ParDo(self._release_fn(_ReleaseStreamFn))
            .with_input_types(tuple[str, typing.Any])
            .with_outputs(_ReleaseStreamFn.NODES, main="answers")
        )
        return release.answers, release[_ReleaseStreamFn.NODES], resolved[_ResolveEntriesFn.DEAD]


class ReleaseFullyDynamic(_ReleaseDynamic):
    """Qiu-Yi's fully-dynamic continual release of every declared stream.

    Consumes a PCollection of :class:`UpdateRecord` (element timestamps = event
    time). Returns a dict of PCollections: ``answers`` (:class:`ReleaseRecord`,
    one per query per segment close, emitted when the watermark passes the end
    of the tick after the closing tick), ``nodes`` (:class:`NodeRecord`, the
    released data structure) and ``dead_letters`` (:class:`DeadLetter`).

    Privacy: ``config.budget`` per declared stream, update-level neighbours
    (see ``docs/fully_dynamic.md``).
    """

    core_cls = FullyDynamicRelease


class ReleaseInsertionOnly(_ReleaseDynamic):
    """The insertion-only release (000 Thm 8) of every declared stream; deletes and
    upserts are dead-lettered (``deletion_not_allowed``). Outputs as
    :class:`ReleaseFullyDynamic` (no node outputs)."""

    core_cls = InsertionOnlyRelease


class ReleaseTwoStreamBaseline(_ReleaseDynamic):
    """The two-stream baseline (000 §1.3) of every declared stream. Outputs as
    :class:`ReleaseFullyDynamic` (no node outputs)."""

    core_cls = TwoStreamBaseline


class CountContinually(_ReleaseDynamic):
    """A plain continual counter of inserted items per declared stream: every tick
    is one timestamp of ``counter`` (any of ``transforms.core.COUNTER_NAMES``;
    ``horizon`` in ticks for the finite ones), releasing an estimate at every
    tick, empty or not. Deletes and upserts are dead-lettered. Privacy:
    ``config.budget`` per stream, neighbours differ by one insert. Outputs as
    :class:`ReleaseFullyDynamic` (no node outputs)."""

    core_cls = ContinualCountRelease

    def __init__(
        self,
        config,
        spec=StreamSpec(),
        noise_key=None,
        *,
        counter="infinite_honaker",
        horizon=None,
        label=None,
        tick_merge="auto",
        release=None,
    ):
        if counter not in COUNTER_NAMES:
            raise ValueError(f"unknown counter {counter!r}; choose one of {', '.join(COUNTER_NAMES)}")
        if counter in ("naive_prefix", "binary_tree", "honaker") and not horizon:
            raise ValueError(f"counter {counter!r} needs horizon= (the number of ticks it will run)")
        super().__init__(
            config,
            spec,
            noise_key,
            emit_nodes=False,
            label=label,
            core_kwargs={"counter": counter, "horizon": horizon},
            tick_merge=tick_merge,
            release=release,
        )
