"""Steps shared by the streaming and the bounded paths: validation, the
release DoFns' common setup, and turning a mechanism's results into records.

The mechanisms are driven only through the ``ContinualRelease`` contract
(``transforms/core/protocol.py``): ``apply``, ``advance``, ``last_tick``,
``next_wake``, ``finished``, ``drain_node_outputs``, ``spent``.
"""

from __future__ import annotations

import logging
import typing

import apache_beam as beam
from apache_beam.metrics import Metrics

from transforms.core.continual.consistency import Consistency, make_consistent
from transforms.core.foundation.accounting import as_vector
from transforms.core.foundation.aggregates import fold, resolve_entry, to_batch
from transforms.core.foundation.entries import OPS
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.core.mechanisms import MechanismSpec
from transforms.records import DeadLetter, NoiseKey, ReleaseRecord, UpdateRecord, node_record
from transforms.spec import NAMESPACE, StreamSpec, event_time_ok

__all__ = [
    "ValidateFn",
    "ReleaseFnBase",
    "emit_results",
    "apply_in_order",
    "update_record",
    "update_order",
    "resolve_updates",
]

_PROGRESS = logging.getLogger("dp_dynamic.progress")
NODES = "nodes"  # the node outputs' tag of the release steps


@beam.typehints.with_output_types(tuple[tuple[str, str], typing.Any])
class ValidateFn(beam.DoFn):
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
            stream = getattr(rec, "stream", None)
            yield beam.pvalue.TaggedOutput(
                self.DEAD, DeadLetter(reason, rec, "validate", stream if isinstance(stream, str) else None)
            )
            return
        self.n_valid += 1
        item = tuple(rec.item) if rec.item is not None else None
        raw = rec.raw if len(rec) > 6 else None
        # plain tuples of primitives: Beam encodes them without pickling (raw: the
        # input as received, for the dead letters only)
        yield ((rec.stream, rec.entry_id), (tick, rec.seq, rec.op, item, float(rec.event_time), raw))

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
        if not event_time_ok(rec.event_time):  # not finite, or a tick end Beam could not represent
            return "bad_time", 0
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


def update_record(key, value) -> UpdateRecord:
    """The input record of a validated ``(key, value)`` (for dead letters)."""
    (stream, entry_id), (_, seq, op, item, event_time) = key, value[:5]
    return UpdateRecord(event_time, op, entry_id, item, stream, seq, value[5] if len(value) > 5 else None)


def dead_letter(reason: str, key, value) -> DeadLetter:
    Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
    return DeadLetter(reason, update_record(key, value), "registry", key[0])


_OP_RANK = {"insert": 0, "upsert": 1, "delete": 2}


def _raw_key(raw):
    if isinstance(raw, str):
        return (0, raw, b"")
    if isinstance(raw, bytes):
        return (1, "", raw)
    return (2, repr(raw), b"")


def update_order(value):
    """The order in which one entry's updates are resolved: tick, then event
    time, then ``seq``, then the update itself (op in lifecycle order insert,
    upsert, delete; the item; the record as received). A total order on the
    updates' content, so the order of lines in a file or of messages in a
    subscription never changes which updates are accepted, hence never a release."""
    item = value[3]
    return (
        value[0],
        value[4],
        value[1],
        _OP_RANK.get(value[2], 3),
        item if isinstance(item, tuple) else (),
        _raw_key(value[5] if len(value) > 5 else None),
    )


def resolve_updates(state, entry_id, updates, domain_sizes, deletions_allowed, max_mutations=None, into=None):
    """:func:`transforms.core.foundation.aggregates.resolve_entry` over the pipeline's
    update tuples ``(tick, seq, op, item, event_time[, raw])`` (given in
    :func:`update_order`); the rejections come back with their full tuples."""
    five = [(v[0], v[1], v[2], v[3], i) for i, v in enumerate(updates)]
    state, batches, dead, accepted = resolve_entry(
        state, entry_id, five, domain_sizes, deletions_allowed, max_mutations, into
    )
    return state, batches, [(reason, updates[v[4]]) for reason, v in dead], accepted


class ReleaseFnBase(beam.DoFn):
    """What the per-stream release steps share: the mechanism (by its registry
    entry), its configuration and options, the noise of this release, and the
    counting of emitted records."""

    NODES = NODES
    PROGRESS_EVERY = 1000

    def __init__(
        self,
        spec: StreamSpec,
        config,
        mechanism: MechanismSpec,
        noise_key: NoiseKey,
        emit_nodes: bool,
        options=None,
        release: ReleaseIdentity | None = None,
        consistency: Consistency | None = None,
    ):
        if not isinstance(release, ReleaseIdentity):
            raise TypeError("the release DoFns need the ReleaseIdentity the transform fixed at construction")
        self.spec = spec
        self.config = config
        self.mechanism = mechanism
        self.options = mechanism.options_cls() if options is None else options
        self.noise_key = noise_key
        self.emit_nodes = emit_nodes
        self.release = release
        # post-processing of each (stream, tick)'s answers (transforms.core.continual.consistency)
        self.consistency = consistency if consistency is not None else Consistency()
        self.noise = None
        self.emitted = 0

    def setup(self):
        # the release's own noise: the key AND the release identity fixed in the
        # graph at construction (retries of this job redraw the same noise, any
        # other release draws independent noise)
        self.noise = self.noise_key.load().for_release(self.release)

    def new_core(self, stream: str):
        return self.mechanism.core_cls(
            self.config,
            stream=stream,
            emit_nodes=self.emit_nodes,
            end_tick=self.spec.end_tick,
            every_ticks=self.spec.every_ticks,
            options=self.options,
        )


def emit_results(fn, core, results, timestamp_of):
    """Answers, node outputs and events of ``results`` as timestamped records,
    with the metrics (shared by the timer-driven and the bounded per-stream
    steps). Events (a mechanism that reached its end, horizon or budget) are
    counted (``<event>``) and logged without any value."""
    for res in results:
        if res.closes:
            Metrics.counter(NAMESPACE, "segments_closed").inc(len(res.closes))
        for tick, event in res.events:
            Metrics.counter(NAMESPACE, event).inc()
            if event != "ended":
                _PROGRESS.warning("stream %s: %s at tick %d; it releases no more", core.stream, event, tick)
        answers = res.answers
        if fn.consistency:  # post-processing of this call's answers (free): one (stream, tick) is never split
            answers = make_consistent(answers, fn.consistency)
        for a in answers:
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
                    as_vector(a.spent),
                    fn.spec.as_of(a.tick),
                ),
                timestamp_of(a.tick),
            )
    Metrics.distribution(NAMESPACE, "budget_spent_micro").update(int(as_vector(core.spent)[0] * 1e6))
    nodes = core.drain_node_outputs()
    if fn.emit_nodes:
        for n in nodes:  # stamped with their own tick's time too, whichever firing computed them
            yield beam.pvalue.TaggedOutput(NODES, beam.window.TimestampedValue(node_record(n), timestamp_of(n.tick)))


def apply_in_order(core, aggregates, noise):
    """Apply tick aggregates in tick order, merging those of one tick; an
    aggregate for a tick already released is applied at the next tick (its
    registry effect has already happened). Returns the results."""
    merged: dict[int, list] = {}
    first = core.last_tick + 1
    for tick, ins, dele, n in aggregates:
        if not (n or ins or dele):  # nothing accepted: nothing to apply
            continue
        if tick < first:
            Metrics.counter(NAMESPACE, "late_batches_applied_at_current_tick").inc()
            tick = first
        fold(merged, tick, ins, dele, n)
    return [core.apply(to_batch(t, *merged[t]), noise) for t in sorted(merged)]
