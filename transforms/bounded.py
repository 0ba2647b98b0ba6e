"""The bounded (batch) path: every entry's updates are known, so nothing needs
per-update state or timers.

Wiring (``ReleaseContinually._expand_bounded``)::

  ((stream, entry), update) ── GroupByEntry ── ResolveEntries ──► (stream, aggregates per bundle)
        resolved once in (tick, seq) order, summed per (stream, tick) over the
        bundle (a lifted combiner's pre-aggregation, done in the registry step)
  ── GroupByStream ── ReleaseStream: one call per stream with all its
        aggregates, merged per tick, applied in one call; the mechanism then runs
        to the configured end (``StreamSpec.end_time``, required here):
        ``transforms.per_stream.BoundedStreamFn`` with ``transforms.common.ReleaseStep``
  declared streams ── ReleaseIdleStreams: the same step for streams without data

With a source of lines read twice (``ReleaseContinually``'s ``raw_lines``, given by ``pipelines.wiring`` for
a bounded file source), the updates cross GroupByEntry with a digest of their line instead of the line, and
the registry's dead letters get their lines back from the second read (``transforms.common.join_raw``).

Same releases as the streaming path (tested against the core on FnApiRunner,
multi-process and portable). The price: one worker holds a stream's
aggregates in memory at once.
"""

from __future__ import annotations

import typing

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms import window
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from transforms.common import dead_letter, in_update_order, resolve_updates, split_entry_key, tie_refs
from transforms.core.foundation.aggregates import in_tick_order
from transforms.spec import NAMESPACE, StreamSpec

__all__ = ["ResolveEntriesBoundedFn"]

_UPDATES_ACCEPTED = Metrics.counter(NAMESPACE, "updates_accepted")


@beam.typehints.with_output_types(tuple[str, typing.Any])
class ResolveEntriesBoundedFn(beam.DoFn):
    """Bounded input: all of an entry's updates are known, so the entry is
    resolved once, after a GroupByKey, in (tick, seq) order (no per-update state).
    Same resolution as :class:`~transforms.streaming.ResolveEntriesFn`.

    The accepted updates are summed per (stream, tick) over the bundle (the
    pre-aggregation a lifted combiner does, without a call per entry) and
    leave at the end of the bundle as ``(stream, tick aggregates)``, with
    the names of the streams the bundle saw on the ``streams_seen`` output (so
    that a declared stream without data is released from the declared list
    instead; the end of a bounded release is configured, never taken from
    the data).

    ``digests``: the update tuples carry a digest of the record as received in place of the record
    (``transforms.common.raw_digest``: the line stays out of the ``GroupByEntry`` shuffle); the dead letters
    then leave as references ``(reason, key, value, tie)`` (``transforms.common.tie_refs``), which
    ``ReleaseContinually`` joins with the lines of a second read of the source (``transforms.common.join_raw``),
    counted here as :func:`~transforms.common.dead_letter` counts them. Nothing else changes: the digest
    orders only updates of equal content (see ``transforms.common``), so no release depends on it."""

    DEAD = "dead_letters"
    STREAMS_SEEN = "streams_seen"

    def __init__(
        self, spec: StreamSpec, domain_sizes: tuple, deletions_allowed: bool, max_mutations=None, digests=False
    ):
        self.spec = spec
        self.digests = digests
        self.domain_sizes = tuple(domain_sizes)
        self.deletions_allowed = deletions_allowed
        self.max_mutations = max_mutations

    def start_bundle(self):
        self.acc = {}  # stream -> tick -> [inserts, deletes, n]
        self.accepted = 0
        self.seen = set()  # streams of this bundle

    def process(self, element):
        key, updates = element
        if type(key) is str:  # joined by UpdateCheck(joined_keys=True): the pair again, as everything after reads it
            key = split_entry_key(key, self.spec.streams)
        ordered = in_update_order(updates)  # sorted(updates, key=update_order), without its key where it can
        acc = self.acc.get(key[0])
        if acc is None:
            acc = self.acc[key[0]] = {}
        _, _, dead, accepted = resolve_updates(
            None, key[1], ordered, self.domain_sizes, self.deletions_allowed, self.max_mutations, acc
        )
        self.accepted += accepted
        if self.digests and dead:
            ties = tie_refs(ordered, dead)
            for reason, value in dead:
                Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()  # as dead_letter() counts
                yield beam.pvalue.TaggedOutput(self.DEAD, (reason, key, value, ties.get(id(value))))
            dead = ()
        for reason, value in dead:
            yield beam.pvalue.TaggedOutput(self.DEAD, dead_letter(reason, key, value))
        self.seen.add(key[0])

    def finish_bundle(self):
        acc, self.acc = self.acc, {}
        if self.accepted:  # one metric update per bundle, not per entry
            _UPDATES_ACCEPTED.inc(self.accepted)
            self.accepted = 0
        for stream, ticks in acc.items():
            aggs = in_tick_order(ticks)
            yield WindowedValue((stream, aggs), MIN_TIMESTAMP, (window.GlobalWindow(),))
        seen, self.seen = self.seen, set()
        for stream in seen:
            yield beam.pvalue.TaggedOutput(
                self.STREAMS_SEEN, WindowedValue(stream, MIN_TIMESTAMP, (window.GlobalWindow(),))
            )
