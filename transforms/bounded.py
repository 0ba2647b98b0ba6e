"""The bounded (batch) path: every entry's updates are known, so nothing needs
per-update state or timers.

Wiring (``ReleaseContinually._expand_bounded``)::

  ((stream, entry), update) ── BatchByShard ── GroupByShard ── ResolveShards ──► (stream, aggregates per bundle)
        updates cross the shuffle in lists, one per (stream, shard) and flush (``BatchByShardFn``: the shard a
        public hash of the entry id, so an entry's updates all meet in one group); each entry is resolved once
        in (tick, seq) order, summed per (stream, tick) over the bundle (a lifted combiner's pre-aggregation,
        done in the registry step)
  ── GroupByStream ── ReleaseStream: one call per stream with all its
        aggregates, merged per tick, applied in one call; the mechanism then runs
        to the configured end (``StreamSpec.end_time``, required here):
        ``transforms.per_stream.BoundedStreamFn`` with ``transforms.common.ReleaseStep``
  declared streams ── ReleaseIdleStreams: the same step for streams without data

With a source of lines read twice (``ReleaseContinually``'s ``raw_lines``, given by ``pipelines.wiring`` for
a bounded file source), the updates cross GroupByEntry with a digest of their line instead of the line, and
the registry's dead letters get their lines back from the second read (``transforms.common.join_raw``).

Why lists: a shuffle element costs the runner ~1 us of Python per element on each side (the FnApiRunner's
output encoding, its grouping buffer, the grouped output's decoding), whatever it holds; an element per update
was ~1/4 of the bounded release's time over the reference's at 10^6 updates (``docs/performance.md``, round
14). A list of ``FLUSH`` updates is one element, encoded in one call of the (compiled) coder.

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

from transforms.common import dead_letter, in_update_order, resolve_updates, tie_refs
from transforms.core.foundation.aggregates import in_tick_order
from transforms.sharded import shard_of
from transforms.spec import NAMESPACE, StreamSpec

__all__ = ["BOUNDED_SHARDS", "BatchByShardFn", "ResolveEntriesBoundedFn", "ResolveShardsBoundedFn"]

#: Hash shards of the bounded entry shuffle, per stream (``shard_of``: CRC-32 of the entry id). They decide
#: no release and no noise (only which list an update travels in: every entry still meets all its updates in
#: one group); they bound a group's size (the updates of 1 / BOUNDED_SHARDS of a stream's entries, decoded at
#: once by the resolving step) and the elements per bundle a flush leaves (at most one per shard).
BOUNDED_SHARDS = 1024
#: Updates per shuffle element: a shard's list leaves when it holds this many (or at the end of the bundle),
#: so the step holds at most ``FLUSH`` updates per (stream, shard) it saw in a bundle.
FLUSH = 64

_GLOBAL = (window.GlobalWindow(),)


class BatchByShardFn(beam.DoFn):
    """``((stream, entry id), update)`` -> ``((stream, shard), [(entry id, update), ...])``: the updates of a
    bundle in lists per ``(stream, shard_of(entry id, shards))`` of at most ``flush``, in the global window
    (the bounded graph's: one group per key, whatever the updates' timestamps, as the entry shuffle was).
    The elements' order within a list is the bundle's; ``ResolveShardsBoundedFn`` orders each entry's updates
    itself (``in_update_order``), so no order is relied on."""

    def __init__(self, shards: int = BOUNDED_SHARDS, flush: int = FLUSH):
        if shards < 1 or flush < 1:
            raise ValueError("BatchByShardFn needs at least one shard and one update per list")
        self.shards = shards
        self.flush = flush

    def start_bundle(self):
        self.buf = {}

    def process(self, element):
        key, value = element
        skey = (key[0], shard_of(key[1], self.shards))
        batch = self.buf.get(skey)
        if batch is None:
            batch = self.buf[skey] = []
        batch.append((key[1], value))
        if len(batch) >= self.flush:
            del self.buf[skey]
            yield WindowedValue((skey, batch), MIN_TIMESTAMP, _GLOBAL)

    def finish_bundle(self):
        buf, self.buf = self.buf, {}
        for skey, batch in buf.items():
            yield WindowedValue((skey, batch), MIN_TIMESTAMP, _GLOBAL)


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


@beam.typehints.with_output_types(tuple[str, typing.Any])
class ResolveShardsBoundedFn(ResolveEntriesBoundedFn):
    """``ResolveEntriesBoundedFn`` fed a shard's lists (``BatchByShardFn`` then a GroupByKey): the updates are
    grouped by entry id here, and each entry is resolved as the entry shuffle's group would be (the same
    call, the same outputs: ``tests/test_bounded_shards.py``)."""

    def process(self, element):
        (stream, _), batches = element
        entries = {}
        for batch in batches:
            for eid, value in batch:
                updates = entries.get(eid)
                if updates is None:
                    entries[eid] = [value]
                else:
                    updates.append(value)
        entry = super().process
        for eid, updates in entries.items():
            yield from entry(((stream, eid), updates))
