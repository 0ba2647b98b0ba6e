"""Queries as a stream: linear queries answered by PMWG against the database
as of their arrival (``docs/growing.md``).

``AnswerQueries`` takes two PCollections: the update stream
(:class:`~transforms.records.UpdateRecord`, timestamps = event time) and the
query stream (:class:`QueryRecord`: an id, an arrival time, a row of weights in
[0, 1] over the domain of the first query set, and the stream it asks about).
It joins them in event time through state and timers, per stream: the
per-stream step holds the ``pmwg`` mechanism (restored from its versioned
state), buffers tick aggregates and queries, and when the watermark passes the
end of tick ``t`` (plus the allowed lateness) it applies tick ``t``'s updates,
then answers tick ``t``'s queries in (arrival time, id) order. So a query is
answered against every update of its tick and the ticks before (the tick is
the time resolution of the release; ``tick_seconds`` is public
configuration). Outputs:

* ``query_answers``: :class:`QueryAnswerRecord` (query id, answer, bound,
  epsilon_spent, ...), one per valid query;
* ``answers``, ``nodes``: the standing releases of the configured query sets,
  as :class:`~transforms.releases.ReleaseContinually` emits them;
* ``dead_letters``: rejected updates (deletes and upserts:
  ``deletion_not_supported``) and rejected queries (``undeclared_stream``,
  ``bad_time``, ``before_origin``, ``after_end``, ``malformed``).

Unbounded input (or a streaming pipeline) runs the stateful, timer-driven
step above. Bounded input in a batch pipeline runs one call per stream with
all of its tick aggregates and queries (no state, no timers), in the same
order: each tick's updates, then its queries; then the run to the configured
end. Both give the in-memory core's answers. (The timer-driven step on bounded
input re-reads its whole buffer at every tick: quadratic in the ticks; 130 s
for ``configs/growing.yaml``'s 720 ticks on the DirectRunner, against a few
seconds on the bounded path.)
"""

from __future__ import annotations

import math
import typing
from typing import NamedTuple

import apache_beam as beam
from apache_beam.coders import BytesCoder, FastPrimitivesCoder, VarIntCoder
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms import window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec, TimerSpec, on_timer

from transforms.bounded import BOUNDED_END, ResolveEntriesBoundedFn
from transforms.common import NODES, ReleaseFnBase, ValidateFn, apply_in_order, emit_results
from transforms.core.foundation.aggregates import fold, in_tick_order
from transforms.records import DeadLetter
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE, StreamSpec, event_time_ok
from transforms.streaming import (
    START,
    ReleaseStreamFn,
    ResolveEntriesFn,
    buffer_aggregates,
    next_work,
    set_catch_up,
)

__all__ = ["QueryRecord", "QueryAnswerRecord", "AnswerQueries", "QUERY"]

QUERY = "__query__"


class QueryRecord(NamedTuple):
    """One linear query: ``row`` holds one weight in [0, 1] per value of the
    first query set's domain; it asks for ``sum_x row[x] h(x)`` on ``stream``
    as of ``event_time`` (its arrival)."""

    query_id: str
    event_time: float
    row: tuple
    stream: str = "default"


class QueryAnswerRecord(NamedTuple):
    """The answer to one query: the estimate, a (1-beta) bound, whether it was
    a hard query (a noisy answer and an update), and the release's spend so far
    (ledger currency: eps, or rho under zCDP)."""

    query_id: str
    stream: str
    tick: int
    answer: float
    bound: float
    epsilon_spent: float
    hard: bool
    beta: float
    as_of: str | None = None


@beam.typehints.with_output_types(tuple[str, typing.Any])
class ValidateQueryFn(beam.DoFn):
    """A query to ``(stream, (QUERY, (tick, time, id, row)))`` or a dead letter."""

    DEAD = "dead_letters"

    def __init__(self, spec: StreamSpec, domain_size: int):
        self.spec = spec
        self.domain_size = int(domain_size)

    def process(self, q):
        reason, value = self._check(q)
        if reason:
            Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
            stream = getattr(q, "stream", None)
            yield beam.pvalue.TaggedOutput(
                self.DEAD, DeadLetter(reason, q, "validate", stream if isinstance(stream, str) else None)
            )
            return
        Metrics.counter(NAMESPACE, "queries_validated").inc()
        yield (q.stream, (QUERY, value))

    def _check(self, q):
        if not isinstance(q, QueryRecord):
            return "malformed", None
        if q.stream not in self.spec.streams:
            return "undeclared_stream", None
        if not isinstance(q.query_id, str) or not q.query_id:
            return "malformed", None
        if not event_time_ok(q.event_time):
            return "bad_time", None
        tick = self.spec.tick_of(q.event_time)
        if tick < 1:
            return "before_origin", None
        end = self.spec.end_tick
        if end is not None and tick > end:
            return "after_end", None
        row = q.row
        if not isinstance(row, (tuple, list)) or len(row) != self.domain_size:
            return "malformed", None
        try:
            row = tuple(float(x) for x in row)
        except (TypeError, ValueError):
            return "malformed", None
        if not all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in row):
            return "malformed", None
        return None, (tick, float(q.event_time), q.query_id, row)


@beam.typehints.with_output_types(typing.Any)
class AnswerStreamFn(ReleaseStreamFn):
    """The per-stream step of :class:`ReleaseStreamFn` that also answers
    queries: queries wait in a bag until their tick is final, and are answered
    after that tick's updates are applied (the event-time join)."""

    CORE = ReadModifyWriteStateSpec("core", BytesCoder())
    PENDING = BagStateSpec("pending", FastPrimitivesCoder())
    QUERIES = BagStateSpec("queries", FastPrimitivesCoder())  # (tick, time, id, row)
    WAKE_TICK = ReadModifyWriteStateSpec("wake_tick", VarIntCoder())
    WAKE = TimerSpec("wake", TimeDomain.WATERMARK)
    CATCH_UP = TimerSpec("catch_up", TimeDomain.WATERMARK)  # the public catch-up grid (streaming.set_catch_up)
    ANSWERS = "query_answers"

    def process(
        self,
        element,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
    ):
        stream, value = element
        if value == START:
            if core_state.read() is None:
                core_state.write(self._encode(self.new_core(stream)))
            self._wake_at(1, wake, wake_tick)
            if self.catch_up:
                set_catch_up(self.spec, 1, catch_up)
            return
        if isinstance(value, tuple) and len(value) == 2 and value[0] == QUERY:
            queries.add(value[1])
            self._wake_at(value[1][0], wake, wake_tick)
            return
        first = buffer_aggregates(value, pending)
        if first is not None:
            self._wake_at(first, wake, wake_tick)

    @staticmethod
    def _encode(core):
        from transforms.core.foundation.state import encode

        return encode(core.to_state())

    @on_timer(WAKE)
    def on_wake(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
    ):
        yield from self._fire_answering(key, ts, core_state, pending, queries, wake_tick, wake, catch_up)

    @on_timer(CATCH_UP)
    def on_catch_up(
        self,
        key=beam.DoFn.KeyParam,
        ts=beam.DoFn.TimestampParam,
        core_state=beam.DoFn.StateParam(CORE),
        pending=beam.DoFn.StateParam(PENDING),
        queries=beam.DoFn.StateParam(QUERIES),
        wake_tick=beam.DoFn.StateParam(WAKE_TICK),
        wake=beam.DoFn.TimerParam(WAKE),
        catch_up=beam.DoFn.TimerParam(CATCH_UP),
    ):
        yield from self._fire_answering(key, ts, core_state, pending, queries, wake_tick, wake, catch_up)

    def _fire_answering(self, key, ts, core_state, pending, queries, wake_tick, wake, catch_up):
        """One firing of either timer (``ReleaseStreamFn._fire``, with the queries answered): the wakes due up
        to the tick whose input is final at ``ts``, each as its own firing would have done it."""
        stream = key
        first = wake_tick.read()
        wake_tick.clear()
        core = self._load(stream, core_state)
        upto = self.spec.tick_at(ts) - 1 - self.spec.lateness_ticks
        aggs = sorted(pending.read(), key=lambda a: a[0])
        qs = sorted(queries.read(), key=lambda q: (q[0], q[1], q[2]))
        results, answered, i, k = [], [], 0, 0
        w = first if first is not None else next_work(core, aggs, i, qs, k)
        while w is not None and w <= upto:
            j, m = i, k
            while j < len(aggs) and aggs[j][0] <= w:
                j += 1
            while m < len(qs) and qs[m][0] <= w:
                m += 1
            aggs_now, q_now, i, k = aggs[i:j], qs[k:m], j, m
            for t in sorted({a[0] for a in aggs_now} | {q[0] for q in q_now}):
                results += apply_in_order(core, [a for a in aggs_now if a[0] == t], self.noise)
                asked = [q for q in q_now if q[0] == t]
                if asked:
                    if t > core.last_tick:
                        results.append(core.advance(t, self.noise))
                    answered += [core.answer_query(t, qid, row, self.noise) for _, _, qid, row in asked]
            if w > core.last_tick:
                results.append(core.advance(w, self.noise))
            w = next_work(core, aggs, i, qs, k)
        aggs_later = [] if core.finished else aggs[i:]
        q_later = qs[k:]  # queries are answered even after the end (with the size bound)
        pending.clear()
        queries.clear()
        for agg in aggs_later:
            pending.add(agg)
        for q in q_later:
            queries.add(q)
        yield from emit_results(self, core, results, self._release_time)
        yield from _answer_records(self, answered, self._release_time)
        self._store(stream, core_state, core)
        nxt = next_work(core, aggs_later, 0, q_later, 0)
        if nxt is not None:
            self._wake_at(nxt, wake, wake_tick)
            if self.catch_up:
                set_catch_up(self.spec, nxt, catch_up)


def _answer_records(fn, answered, timestamp_of):
    """Query answers as timestamped records on the ``query_answers`` output."""
    beta = fn.config.beta
    for a in answered:
        Metrics.counter(NAMESPACE, "queries_answered").inc()
        yield beam.pvalue.TaggedOutput(
            AnswerStreamFn.ANSWERS,
            window.TimestampedValue(
                QueryAnswerRecord(
                    a.query_id,
                    a.stream,
                    a.tick,
                    a.answer,
                    a.bound,
                    a.epsilon_spent,
                    a.hard,
                    beta,
                    fn.spec.as_of(a.tick),
                ),
                timestamp_of(a.tick),
            ),
        )


AGGS = "__aggregates__"


@beam.typehints.with_output_types(typing.Any)
class AnswerBoundedStreamFn(ReleaseFnBase):
    """Bounded input in a batch pipeline: one call per declared stream with all
    of its tick aggregates and queries (after a GroupByKey), no state and no
    timers. Each tick's updates are applied, then its queries answered in
    (arrival time, id) order, as the timer-driven step does when the tick is
    final; then the mechanism runs to the configured end. Records are stamped
    with the time the streaming step would emit them (the end of the tick after
    theirs, plus the allowed lateness)."""

    def __init__(self, spec: StreamSpec, *args, **kwargs):
        if spec.end_tick is None:
            raise ValueError(BOUNDED_END)
        super().__init__(spec, *args, **kwargs)

    def process(self, element):
        stream, values = element
        acc: dict[int, list] = {}
        asked: dict[int, list] = {}
        for value in values:
            if value == START:
                continue
            kind, body = value
            if kind == AGGS:
                for agg in body:
                    fold(acc, *agg)
            else:
                asked.setdefault(body[0], []).append(body)
        aggregates = {agg[0]: agg for agg in in_tick_order(acc)}
        core = self.new_core(stream)
        results, answered = [], []
        for t in sorted(set(aggregates) | set(asked)):
            if t in aggregates:
                results += apply_in_order(core, [aggregates[t]], self.noise)
            if t in asked:
                if t > core.last_tick:
                    results.append(core.advance(t, self.noise))
                for _, _, qid, row in sorted(asked[t], key=lambda q: (q[1], q[2])):
                    answered.append(core.answer_query(t, qid, row, self.noise))
        results += core.run_to_end(self.noise)
        lateness = self.spec.lateness_ticks

        def stamp(tick):
            return self.spec.tick_end(tick + 1 + lateness)

        yield from emit_results(self, core, results, stamp)
        yield from _answer_records(self, answered, stamp)


class AnswerQueries(ReleaseContinually):
    """PMWG over every declared stream, answering a stream of linear queries
    as of their arrival time (module docstring). Apply it to a pair
    ``(updates, queries)``; returns ``{"query_answers", "answers", "nodes",
    "dead_letters"}``.

    Privacy: ``config.budget`` per declared stream for ``config.unit``, for
    the whole run, whatever the number of queries (``docs/growing.md``): the
    growth tracker, the test's rounds and the hard answers are charged to each
    stream's ledger; easy answers are post-processing of the public histogram.
    """

    mechanism_name = "pmwg"

    def __init__(self, config, spec: StreamSpec, noise_key=None, **kwargs):
        super().__init__(None, config, spec, noise_key, **kwargs)

    def expand(self, pcolls):
        updates, queries = pcolls
        spec = self.spec
        validated = updates | "Validate" >> beam.ParDo(ValidateFn(spec, self._domains)).with_outputs(
            ValidateFn.DEAD, main="valid"
        )
        asked = queries | "ValidateQueries" >> beam.ParDo(ValidateQueryFn(spec, self._domains[0])).with_outputs(
            ValidateQueryFn.DEAD, main="valid"
        )
        streaming = updates.pipeline.options.view_as(StandardOptions).streaming
        if updates.is_bounded and queries.is_bounded and not streaming:
            if spec.end_tick is None:
                raise ValueError(BOUNDED_END)
            return self._expand_bounded_queries(validated, asked)
        resolved, merged, starts = self._resolve_unbounded(validated.valid)
        out = (
            (merged, asked.valid, starts)
            | "Flatten" >> beam.Flatten()
            | "AnswerStream"
            >> beam.ParDo(self._release_fn(AnswerStreamFn, updates.pipeline))
            .with_input_types(tuple[str, typing.Any])
            .with_outputs(NODES, AnswerStreamFn.ANSWERS, main="answers")
        )
        dead = (
            validated[ValidateFn.DEAD],
            asked[ValidateQueryFn.DEAD],
            resolved[ResolveEntriesFn.DEAD],
        ) | "DeadLetters" >> beam.Flatten()
        return {
            "query_answers": out[AnswerStreamFn.ANSWERS],
            "answers": out.answers,
            "nodes": out[NODES],
            "dead_letters": dead,
        }

    def _expand_bounded_queries(self, validated, asked):
        """Batch: resolve each entry once, then one call per stream with all of
        its aggregates and queries (``AnswerBoundedStreamFn``)."""
        spec = self.spec
        resolved = self._resolve_bounded(validated.valid)
        aggs = resolved.resolved | "TagAggregates" >> beam.MapTuple(lambda stream, a: (stream, (AGGS, a)))
        starts = asked.valid.pipeline | "DeclaredStreams" >> beam.Create(
            [(s, START) for s in spec.streams], reshuffle=False
        )
        out = (
            (aggs, asked.valid, starts)
            | "Flatten" >> beam.Flatten()
            | "GroupByStream" >> beam.GroupByKey()
            | "AnswerStream"
            >> beam.ParDo(self._release_fn(AnswerBoundedStreamFn)).with_outputs(
                NODES, AnswerStreamFn.ANSWERS, main="answers"
            )
        )
        dead = (
            validated[ValidateFn.DEAD],
            asked[ValidateQueryFn.DEAD],
            resolved[ResolveEntriesBoundedFn.DEAD],
        ) | "DeadLetters" >> beam.Flatten()
        return {
            "query_answers": out[AnswerStreamFn.ANSWERS],
            "answers": out.answers,
            "nodes": out[NODES],
            "dead_letters": dead,
        }
