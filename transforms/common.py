"""What the streaming and the bounded paths share: the entry registry's
resolution of one entry's updates, and the release's per-stream step
(:class:`ReleaseStep`, driven by ``transforms.per_stream``) with the turning of
a mechanism's results into records.

The mechanisms are driven only through the ``ContinualRelease`` contract
(``transforms/core/protocol.py``): ``apply``, ``advance``, ``last_tick``,
``next_wake``, ``finished``, ``drain_node_outputs``, ``spent``.
"""

from __future__ import annotations

import hashlib
import logging
import operator
import struct

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics

from transforms.core.continual.consistency import Consistency, make_consistent
from transforms.core.counters.base import forget_noise_ahead
from transforms.core.foundation.accounting import as_vector
from transforms.core.foundation.aggregates import fold, in_tick_order, resolve_entry, to_batch
from transforms.core.foundation.entries import update_order
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.core.mechanisms import MechanismSpec
from transforms.per_stream import StreamStep, query_order
from transforms.records import DeadLetter, NoiseKey, ReleaseRecord, UpdateRecord, node_record
from transforms.spec import NAMESPACE, StreamSpec

__all__ = [
    "NODES",
    "ReleaseStep",
    "emit_results",
    "consistent_answers",
    "floats",
    "apply_in_order",
    "iter_apply_in_order",
    "in_blocks",
    "BOUNDED_STEP_TICKS",
    "BOUNDED_BLOCK_RESULTS",
    "update_record",
    "update_order",
    "in_update_order",
    "resolve_updates",
    "dead_letter",
    "raw_digest",
    "entry_key_prefixes",
    "split_entry_key",
    "line_digest",
    "digest_length",
    "MAX_DIGEST_LENGTH",
    "tie_refs",
    "join_raw",
]

_PROGRESS = logging.getLogger("dp_dynamic.progress")
_RELEASES_EMITTED = Metrics.counter(NAMESPACE, "releases_emitted")  # resolved in the running step's container
_SEGMENTS_CLOSED = Metrics.counter(NAMESPACE, "segments_closed")  # the same: made once, not once per call
NODES = "nodes"  # the node outputs' tag of the release steps


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
    """The input record of a validated ``(key, value)`` (for dead letters). Under the person unit the value
    carries the entry id as received and the person (``transforms.person``: its key is the person's, then
    the registry's per-person entry key), so the record is rebuilt as received either way."""
    (stream, entry_id), (_, seq, op, item, event_time) = key, value[:5]
    raw = value[5] if len(value) > 5 else None
    if len(value) > 7:
        return UpdateRecord(event_time, op, value[6], item, stream, seq, raw, value[7])
    return UpdateRecord(event_time, op, entry_id, item, stream, seq, raw)


def dead_letter(reason: str, key, value, stage: str = "registry") -> DeadLetter:
    """A dead letter of a keyed step (``stage``), counted as ``dead_letter_<reason>``."""
    Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
    return DeadLetter(reason, update_record(key, value), stage, key[0])


# ---------------------------------------------------------------------------
# The bounded graph's records as received, out of the entry shuffle (issue 30, docs/performance.md round 12)
# ---------------------------------------------------------------------------
#
# With a source that can be read twice (a bounded file source: ``pipelines.wiring``), the registry's update
# tuples carry a digest of the line in place of the line, ``(tick, seq, op, item, event_time, digest)``; the
# registry's dead letters leave as references ``(reason, key, value, tie)`` and get their lines back from a
# second read of the source, filtered by the digests the references name (``transforms.releases``).
#
# Privacy: no release depends on the digest. It orders only the updates of one entry that tie on everything
# else (tick, event time, seq, op, item: the same update content), and the registry's decisions read the
# content only, so which of two tied updates comes first never changes an accepted update; it changes which
# tied line a dead letter names, and ``tie_refs`` / ``join_raw`` restore that choice as the record as
# received decides it (``update_order``), so the dead letters are those of the line-carrying path too.


def raw_digest(raw):
    """The digest that stands for a record as received in the bounded registry's shuffle (16 bytes): the length
    of a text's UTF-8 in 4 bytes (big-endian; 2^32 - 1 for a longer one) and 12 bytes of BLAKE2b of it
    (``line_digest`` of the line it was decoded from; the length lets the second read hash only the lines of a
    length some dead letter wants: ``digest_length``); None for None. Any other raw (bytes, a Pub/Sub pair:
    never from a text file source) gets 16 bytes of BLAKE2b under its own personalisation, which no line
    matches (its dead letter then has no record: ``join_raw``)."""
    if type(raw) is str:  # _text_digest of its UTF-8, inline (once per update of a bounded file run)
        data = raw.encode("utf-8", "surrogatepass")
        n = len(data)
        head = _LENGTH(n if n < MAX_DIGEST_LENGTH else MAX_DIGEST_LENGTH)
        return head + hashlib.blake2b(data, digest_size=12).digest()
    if raw is None:
        return None
    return hashlib.blake2b(repr(raw).encode("utf-8", "backslashreplace"), digest_size=16, person=b"non-text").digest()


def entry_key_prefixes(streams: tuple) -> dict:
    """``stream -> prefix`` of the bounded registry's joined keys: an entry's key in the ``GroupByEntry`` shuffle
    is one text, ``prefix + entry id``, the stream's place among the declared ``streams`` (decimal digits) and a
    NUL, where the streaming registry's key is the pair ``(stream, entry id)``. Beam encodes a text key in one
    copy and a pair through its tuple coder, and the runner's grouping encodes each element's key again: ~1 us
    an update less over the four codings of the shuffle (``docs/performance.md``). The same groups (a key per
    (stream, entry), the declared streams only: the validation refuses any other), in the same order."""
    return {stream: f"{i}\x00" for i, stream in enumerate(streams)}


def split_entry_key(key: str, streams: tuple) -> tuple[str, str]:
    """``(stream, entry id)`` of a key joined by :func:`entry_key_prefixes` (the digits end at the first NUL;
    the id is the rest, whatever it holds)."""
    place, _, eid = key.partition("\x00")
    return streams[int(place)], eid


def _text_digest(data: bytes) -> bytes:
    n = len(data)
    head = _LENGTH(n if n < MAX_DIGEST_LENGTH else MAX_DIGEST_LENGTH)
    return head + hashlib.blake2b(data, digest_size=12).digest()


_LENGTH = struct.Struct(">I").pack  # a digest's length field: 4 bytes, big-endian


#: the largest length a digest holds (a longer text's digest holds this)
MAX_DIGEST_LENGTH = 2**32 - 1


def digest_length(digest: bytes) -> int:
    """The UTF-8 length ``raw_digest`` put in a text's digest (any other digest: a number no line's length
    needs to be)."""
    return int.from_bytes(digest[:4], "big")


def line_digest(line):
    """``raw_digest`` of the text a line of the source decodes to (the parse step's ``raw``), from the line's
    bytes (UTF-8 decoding and encoding are inverse on valid input); a str line: its ``raw_digest``."""
    if type(line) is str:
        return raw_digest(line)
    return _text_digest(line)


def tie_refs(ordered, dead) -> dict:
    """For the registry's rejections ``dead`` (``(reason, value)`` pairs) of one entry's updates ``ordered``
    (``in_update_order`` of tuples that carry digests), ``{id(value): (rank, members)}`` for the rejected
    values in a *tie*: a run of updates equal in all of ``update_order``'s key but the record as received, with
    more than one digest. ``members`` are the run's tuples, ``rank`` the value's place in it: the rejected
    update is the run's member at ``rank`` once the run is ordered by its records as received
    (``join_raw``), as ``update_order`` orders them when the tuples carry the records (the registry's
    decisions read the content only, equal in a run, so a place's decision is the same whichever member sits
    there). Empty when no rejected value is in such a run (nearly always)."""
    if not dead or len(ordered) < 2:
        return {}
    refs = {}
    wanted = {id(v) for _, v in dead}
    keys = [update_order(v)[:5] for v in ordered]
    i, n = 0, len(ordered)
    while i < n:
        j = i + 1
        while j < n and keys[j] == keys[i]:
            j += 1
        if j - i > 1:
            run = tuple(ordered[i:j])
            if len({v[5] for v in run}) > 1:
                for rank, v in enumerate(run):
                    if id(v) in wanted:
                        refs[id(v)] = (rank, run)
        i = j
    return refs


def join_raw(ref, raws: dict) -> tuple[DeadLetter, bool]:
    """The registry's dead letter of a reference ``(reason, key, value, tie)`` (``value``'s sixth field a
    digest; ``tie`` None or ``tie_refs``' ``(rank, members)``) given ``raws`` {digest: the record as
    received}: the :class:`DeadLetter` the line-carrying registry makes, and whether every record it needed
    was found (False only if the source changed between its two reads: the record is then None)."""
    reason, key, value, tie = ref
    found = True

    def raw_of(v):
        nonlocal found
        d = v[5]
        if d is None:
            return None
        raw = raws.get(d)
        if raw is None:
            found = False
        return raw

    if tie is None:
        raw = raw_of(value)
    else:
        rank, members = tie
        with_raws = [(m, raw_of(m)) for m in members]
        # by update_order's last field (the record as received), stable: the line-carrying registry's order
        with_raws.sort(key=lambda mr: update_order((*mr[0][:5], mr[1]))[5])
        value, raw = with_raws[rank]
    return DeadLetter(reason, update_record(key, (*value[:5], raw)), "registry", key[0]), found


def resolve_updates(state, entry_id, updates, domain_sizes, deletions_allowed, max_mutations=None, into=None):
    """:func:`transforms.core.foundation.aggregates.resolve_entry` over the pipeline's
    update tuples ``(tick, seq, op, item, event_time[, raw])`` (given in
    :func:`update_order`); the rejections come back with their full tuples (``resolve_entry`` reads the first
    four fields of each and returns the rejected tuples as given: no copy of the updates)."""
    return resolve_entry(state, entry_id, updates, domain_sizes, deletions_allowed, max_mutations, into)


def in_update_order(updates) -> list:
    """``sorted(updates, key=update_order)`` (update tuples of one entry), sorted by ``(tick, event_time,
    seq)`` alone where those are distinct (nearly always: one update of an entry per time). A sort by a prefix
    of :func:`update_order`'s key gives its order when no two updates tie on the prefix and the prefix's
    values compare as numbers do (an int tick and seq, a float time that is not NaN: what ``ValidateFn``
    passes on). A tie, or any other prefix, takes the full key."""
    updates = updates if type(updates) is list else list(updates)
    if len(updates) < 2:
        return updates[:]
    try:
        ordered = sorted(updates, key=_PREFIX)
    except TypeError:  # a prefix that does not compare: the full key decides (or raises) as before
        return sorted(updates, key=update_order)
    prev = None
    for u in ordered:
        cur = _PREFIX(u)
        t = cur[1]
        if cur == prev or type(cur[0]) is not int or type(t) is not float or t != t or type(cur[2]) is not int:
            return sorted(updates, key=update_order)
        prev = cur
    return ordered


_PREFIX = operator.itemgetter(0, 4, 1)  # (tick, event_time, seq): the first three fields of update_order's key


class ReleaseStep(StreamStep):
    """The release's per-stream step (``transforms.per_stream``): one mechanism per stream, by its registry
    entry, with its configuration and options, the noise of this release, and the counting of emitted
    records. A wake applies the pending aggregates in one call and lets the mechanism release on
    schedule; the bounded path applies all of a stream's aggregates and runs to the configured end.
    Emits :class:`~transforms.records.ReleaseRecord` (and node records on ``NODES``)."""

    output_type = ReleaseRecord
    stream_label, bounded_label = "ReleaseStreamFn", "ReleaseBoundedStreamFn"
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
            raise TypeError("the release steps need the ReleaseIdentity the transform fixed at construction")
        super().__init__(spec)
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

    def restore(self, stream: str, state: dict):
        return self.mechanism.core_cls.from_state(
            self.config, state, options=self.options, end_tick=self.spec.end_tick, every_ticks=self.spec.every_ticks
        )

    def wake(self, core, tick, aggs, queries, out):
        if core.finished and aggs:
            Metrics.counter(NAMESPACE, "batches_after_finish").inc(len(aggs))
        self.apply_inputs(core, aggs, queries, out)
        if tick > core.last_tick:
            out.append(core.advance(tick, self.noise))

    def apply_inputs(self, core, aggs, queries, out):
        """Apply tick aggregates (sorted by tick) in one call (``apply_in_order``); no queries here."""
        out += apply_in_order(core, aggs, self.noise)

    def discard(self, core, aggs, out):
        Metrics.counter(NAMESPACE, "batches_after_finish").inc(len(aggs))

    def feed(self, core, parts, queries, out):
        self.apply_inputs(core, _merged_parts(parts), sorted(queries, key=query_order), out)

    def run_to_end(self, core, out):
        out += core.run_to_end(self.noise)

    def emit(self, core, out, stamp):
        return emit_results(self, core, out, stamp)

    def bounded(self, core, parts, queries, stamp):
        """The records of ``feed``, ``run_to_end`` and ``emit``, the same in the same order, computed as they
        leave: ``BOUNDED_BLOCK_RESULTS`` results at a time are turned into records before the next are
        computed, and long stretches without data are advanced through ``BOUNDED_STEP_TICKS`` at a time, so a
        stream's memory is its mechanism's state and a block, not its whole run's releases. No queries here.

        The run's counters may draw their nodes' noise ahead, in blocks (``NoiseSource.drawing_ahead``: the same
        values from the same streams; a streaming step's never do, so no noise of a release to come is held
        between firings); the blocks are dropped when the stream's run ends."""
        noise = self.noise.drawing_ahead()
        try:
            yield from emit_results(self, core, self._bounded_results(core, parts, noise), stamp)
        finally:
            forget_noise_ahead()

    def _bounded_results(self, core, parts, noise):
        yield from iter_apply_in_order(core, _merged_parts(parts), noise, BOUNDED_STEP_TICKS)
        yield from core.iter_run_to_end(noise, BOUNDED_STEP_TICKS)


def in_blocks(results):
    """``results`` in lists of ``BOUNDED_BLOCK_RESULTS``, each computed before any of its records leaves (each
    result's records pass through the rest of Beam's fused stage before the next is computed otherwise: ~6% of a
    bounded year's CPU, measured)."""
    block = []
    for r in results:
        block.append(r)
        if len(block) >= BOUNDED_BLOCK_RESULTS:
            yield block
            block = []
    if block:
        yield block


def _merged_parts(parts) -> list:
    """A stream's tick aggregates from the parts of its input (one per bundle of the registry step)."""
    if len(parts) == 1:
        return parts[0]  # one bundle of the registry step: one aggregate per tick already
    acc: dict[int, list] = {}
    for aggs in parts:
        for agg in aggs:
            fold(acc, *agg)
    return in_tick_order(acc)


#: The bounded steps' lazy paths (``ReleaseStep.bounded``, ``CollectStep.bounded``) advance through ticks
#: without data at most this many at a time. Public (a count of ticks, never the data); it changes no release
#: (``advance_in_steps``).
BOUNDED_STEP_TICKS = 4096
#: ... and computes this many results (a call of the mechanism each) before their records leave (``in_blocks``)
BOUNDED_BLOCK_RESULTS = 1024


def emit_results(fn, core, results, timestamp_of):
    """Answers, node outputs and events of ``results`` as timestamped records,
    with the metrics (``fn``: the :class:`ReleaseStep`). Events (a mechanism
    that reached its end, horizon or budget) are counted (``<event>``) and
    logged without any value.

    Per record only what differs: the answers of one tick (one per query set) share its ``as_of`` and
    timestamp, and ``releases_emitted`` counts a call's answers at once (a year of one-minute periods emits
    a million records: the metric look-up and the time formatting per record were ~10% of the release).
    The results are taken ``BOUNDED_BLOCK_RESULTS`` at a time (:func:`in_blocks`: a lazy ``results`` computes a
    block before its records leave), and a block's answers are made consistent in one call (:func:`consistent_answers`:
    its histograms' projections at once, the same floats)."""
    last_tick = as_of = stamp = last_spent = spent = None
    for block in in_blocks(results):
        for res, answers in zip(block, consistent_answers(block, fn.consistency)):
            if res.closes:
                _SEGMENTS_CLOSED.inc(len(res.closes))
            for tick, event in res.events:
                Metrics.counter(NAMESPACE, event).inc()
                if event != "ended":
                    _PROGRESS.warning("stream %s: %s at tick %d; it releases no more", core.stream, event, tick)
            if answers:
                _RELEASES_EMITTED.inc(len(answers))
            for a in answers:
                fn.emitted += 1
                if fn.emitted % fn.PROGRESS_EVERY == 0:  # counts only, never values
                    _PROGRESS.info("releases emitted by this worker: %d", fn.emitted)
                if a.tick != last_tick:
                    last_tick, as_of, stamp = a.tick, fn.spec.as_of(a.tick), timestamp_of(a.tick)
                if a.spent is not last_spent:  # the answers of a call mostly carry one spend object
                    last_spent, spent = a.spent, as_vector(a.spent)
                yield beam.window.TimestampedValue(
                    ReleaseRecord(
                        a.stream, a.tick, a.segment, a.query, floats(a.estimate), a.error_bound, a.beta, spent, as_of
                    ),
                    stamp,
                )
            if fn.emit_nodes:  # after each result: a lazy ``results`` then holds no run's worth of nodes
                yield from _node_records(core.drain_node_outputs(), timestamp_of)
    Metrics.distribution(NAMESPACE, "budget_spent_micro").update(int(as_vector(core.spent)[0] * 1e6))
    nodes = core.drain_node_outputs()
    if fn.emit_nodes:
        yield from _node_records(nodes, timestamp_of)


def consistent_answers(block: list, consistency) -> list:
    """The answers of each result of ``block``, made consistent (post-processing, free; ``make_consistent``):
    the whole block's answers in one call (its projections at once) when each (stream, tick) is answered in one
    result only and no (stream, tick, query) twice (no mechanism splits a tick's answers between results), else
    result by result, as each result was before: the same answers either way."""
    if not consistency:
        return [res.answers for res in block]
    flat = [a for res in block for a in res.answers]
    if len(block) == 1 or _split_ticks(block, len(flat)):
        return [make_consistent(res.answers, consistency) for res in block]
    done, out, at = make_consistent(flat, consistency), [], 0
    for res in block:
        out.append(done[at : at + len(res.answers)])
        at += len(res.answers)
    return out


def _split_ticks(block: list, n: int) -> bool:
    """Whether some (stream, tick) of ``block`` is answered in two results, or some (stream, tick, query) twice
    (``n``: the block's answers)."""
    owner: dict = {}
    queries = set()
    for i, res in enumerate(block):
        for a in res.answers:
            if owner.setdefault((a.stream, a.tick), i) != i:
                return True
            queries.add((a.stream, a.tick, a.query))
    return len(queries) < n


def _node_records(nodes, timestamp_of):
    for n in nodes:  # stamped with their own tick's time too, whichever firing computed them
        yield beam.pvalue.TaggedOutput(NODES, beam.window.TimestampedValue(node_record(n), timestamp_of(n.tick)))


def floats(estimate) -> tuple:
    """``tuple(map(float, estimate))``: a float64 array's values by ``tolist`` (the same Python floats, one
    call instead of one ``float`` per cell); anything else (ints, tuples, other dtypes) as before."""
    if type(estimate) is np.ndarray and estimate.dtype == _F64:
        return tuple(estimate.tolist())
    return tuple(map(float, estimate))


_F64 = np.dtype(np.float64)


def apply_in_order(core, aggregates, noise):
    """Apply tick aggregates in tick order, merging those of one tick; an
    aggregate for a tick already released is applied at the next tick (its
    registry effect has already happened). Returns the results."""
    return list(iter_apply_in_order(core, aggregates, noise))


def iter_apply_in_order(core, aggregates, noise, step: int | None = None):
    """:func:`apply_in_order`'s results, each as it is computed (the aggregates are merged first, all of
    them, as there); with ``step``, a stretch of more than ``step`` ticks without data before a batch is
    advanced through ``step`` ticks at a time first (``advance_in_steps``: the same releases).

    A mechanism with ``apply_block`` (``auto``, ``net_change``, ``continual_count`` over k-ary trees) gets the
    aggregates of up to ``BLOCK_TICKS`` ticks in one call, which computes the same results as a call per batch, bit
    for bit (``tests/test_kary_block.py``); where it declines, the batches are applied one by one. Which of the two
    computes a block depends on which ticks have data; nothing released does, and when a release happens is the
    mechanism's public schedule either way."""
    merged: dict[int, list] = {}
    first = core.last_tick + 1
    for tick, ins, dele, n in aggregates:
        if not (n or ins or dele):  # nothing accepted: nothing to apply
            continue
        if tick < first:
            Metrics.counter(NAMESPACE, "late_batches_applied_at_current_tick").inc()
            tick = first
        fold(merged, tick, ins, dele, n)
    ticks = sorted(merged)
    block = getattr(core, "apply_block", None)  # a mechanism that computes a run of periods at once
    end = getattr(core, "end_tick", None)
    i = retry = 0
    wait = 1
    while i < len(ticks):
        t = ticks[i]
        if step is not None:
            yield from core.advance_in_steps(t - 1, noise, step)
        j = i + 1
        # a block: the ticks that follow within BLOCK_TICKS, none after a gap that advance_in_steps takes
        if block is not None and i >= retry:
            while (
                j < len(ticks)
                and ticks[j] - t < BLOCK_TICKS
                and (step is None or ticks[j] - ticks[j - 1] <= step)
                and (end is None or ticks[j] < end)  # the end's release finishes the mechanism: a call of its own
            ):
                j += 1
        out = block([(u, *merged[u]) for u in ticks[i:j]], noise) if j - i > 1 else None
        if out:  # the results of the block's first len(out) aggregates
            yield from out
            i += len(out)
            wait = 1
        else:  # one batch, or a block the mechanism does not take (yet: a counter level's first node)
            if j - i > 1:  # asked again after 1, 2, 4, ... BLOCK_RETRY batches (each ask makes its aggregates)
                retry, wait = i + wait, min(2 * wait, BLOCK_RETRY)
            yield core.apply(to_batch(t, *merged[t]), noise)
            i += 1


#: The most ticks a block of batches spans in :func:`iter_apply_in_order` (``apply_block``): a count of ticks,
#: public; the same results for any value (``tests/test_kary_block.py``)
BLOCK_TICKS = 1024
#: After blocks the mechanism did not take, at most this many batches are applied one by one before it is asked again
BLOCK_RETRY = 64
