"""Queries as a stream: linear queries answered by PMWG against the database
as of their arrival (``docs/growing.md``).

``AnswerQueries`` takes two PCollections: the update stream
(:class:`~transforms.records.UpdateRecord`, timestamps = event time) and the
query stream (:class:`QueryRecord`: an id, an arrival time, a row of weights in
[0, 1] over the domain of the first query set, and the stream it asks about).
It joins them in event time through state and timers, per stream: the
per-stream step (``transforms.per_stream`` with :class:`AnswerStep`) holds the
``pmwg`` mechanism (restored from its versioned state), buffers tick
aggregates and queries, and when the watermark passes the
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
from apache_beam.metrics import Metrics
from apache_beam.options.pipeline_options import StandardOptions
from apache_beam.transforms import window

from transforms.bounded import ResolveEntriesBoundedFn
from transforms.common import NODES, ReleaseStep, apply_in_order, emit_results
from transforms.core.foundation.outputs import TickResult
from transforms.per_stream import (
    BOUNDED_END,
    QUERY,
    START,
    BoundedStreamFn,
    StreamStep,
)
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE, StreamSpec
from transforms.streaming import ResolveEntriesFn, per_stream_step, with_input_end
from transforms.validate import ValidateFn, tick_in_range

__all__ = ["QueryRecord", "QueryAnswerRecord", "AnswerQueries", "QUERY", "QueryCheck", "AnswerStep"]


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


class QueryCheck:
    """A :class:`QueryRecord` (for ``transforms.validate.ValidateFn``): to ``(stream, (QUERY, (tick, time, id,
    row)))``."""

    output_type = tuple[str, typing.Any]
    counter = "queries_validated"
    label = "ValidateQueryFn"

    def __init__(self, spec: StreamSpec, domain_size: int):
        self.spec = spec
        self.domain_size = int(domain_size)

    def __call__(self, q):
        if not isinstance(q, QueryRecord):
            return "malformed", None
        if q.stream not in self.spec.streams:
            return "undeclared_stream", None
        if not isinstance(q.query_id, str) or not q.query_id:
            return "malformed", None
        reason, tick = tick_in_range(self.spec, q.event_time)
        if reason:
            return reason, None
        row = q.row
        if not isinstance(row, (tuple, list)) or len(row) != self.domain_size:
            return "malformed", None
        try:
            row = tuple(float(x) for x in row)
        except (TypeError, ValueError):
            return "malformed", None
        if not all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in row):
            return "malformed", None
        return None, (q.stream, (QUERY, (tick, float(q.event_time), q.query_id, row)))


class AnswerStep(ReleaseStep):
    """The release's per-stream step that also answers queries (``transforms.per_stream``): queries wait
    until their tick is final and are answered after that tick's updates are applied, in (arrival time, id)
    order (the event-time join). Emits the release's records and :class:`QueryAnswerRecord` on
    ``ANSWERS``."""

    output_type = typing.Any
    stream_label, bounded_label = "AnswerStreamFn", "AnswerBoundedStreamFn"
    takes_queries = True
    ANSWERS = "query_answers"

    def apply_inputs(self, core, aggs, queries, out):
        """Each tick's updates, then its queries (given in ``query_order``), tick by tick."""
        for t in sorted({a[0] for a in aggs} | {q[0] for q in queries}):
            out += apply_in_order(core, [a for a in aggs if a[0] == t], self.noise)
            asked = [q for q in queries if q[0] == t]
            if asked:
                if t > core.last_tick:
                    out.append(core.advance(t, self.noise))
                out += [core.answer_query(t, qid, row, self.noise) for _, _, qid, row in asked]

    # its queries interleave with the ticks and its records with the answers: the list path
    bounded = StreamStep.bounded

    def emit(self, core, out, stamp):
        yield from emit_results(self, core, [r for r in out if isinstance(r, TickResult)], stamp)
        beta = self.config.beta
        for a in out:
            if isinstance(a, TickResult):
                continue
            Metrics.counter(NAMESPACE, "queries_answered").inc()
            record = QueryAnswerRecord(
                a.query_id, a.stream, a.tick, a.answer, a.bound, a.epsilon_spent, a.hard, beta, self.spec.as_of(a.tick)
            )
            yield beam.pvalue.TaggedOutput(self.ANSWERS, window.TimestampedValue(record, stamp(a.tick)))


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
        validated = self._validate(updates)
        asked = queries | "ValidateQueries" >> beam.ParDo(ValidateFn(QueryCheck(spec, self._domains[0]))).with_outputs(
            ValidateFn.DEAD, main="valid"
        )
        streaming = updates.pipeline.options.view_as(StandardOptions).streaming
        step = self._step(AnswerStep)
        bounded = updates.is_bounded and queries.is_bounded and not streaming
        if bounded and spec.end_tick is None:
            raise ValueError(BOUNDED_END)
        admitted, person_dead = self._bound_persons(validated.valid, bounded)  # the person unit only
        if bounded:
            # batch: each entry resolved once, then one call per stream with all of its aggregates and queries
            resolved = self._resolve_bounded(admitted)
            resolve_dead = resolved[ResolveEntriesBoundedFn.DEAD]
            starts = updates.pipeline | "DeclaredStreams" >> beam.Create(
                [(s, START) for s in spec.streams], reshuffle=False
            )
            inputs = (
                (resolved.resolved, asked.valid, starts)
                | "Flatten" >> beam.Flatten()
                | "GroupByStream" >> beam.GroupByKey()
            )
            answer = beam.ParDo(BoundedStreamFn(step))
        else:
            resolved, merged, starts = self._resolve_unbounded(admitted)
            resolve_dead = resolved[ResolveEntriesFn.DEAD]
            inputs = with_input_end((merged, asked.valid, starts) | "Flatten" >> beam.Flatten(), spec)
            fn = per_stream_step(step, self.tick_merge, updates.pipeline)
            answer = beam.ParDo(fn).with_input_types(tuple[str, typing.Any])
        out = inputs | "AnswerStream" >> answer.with_outputs(NODES, AnswerStep.ANSWERS, main="answers")
        dead = (validated[ValidateFn.DEAD], asked[ValidateFn.DEAD], *person_dead, resolve_dead) | "DeadLetters" >> (
            beam.Flatten()
        )
        return {
            "query_answers": out[AnswerStep.ANSWERS],
            "answers": out.answers,
            "nodes": out[NODES],
            "dead_letters": dead,
        }
