"""The validation step: a stateless check of each input record, the one DoFn
for every kind of record (updates, queries, client reports), parameterised by
a check.

A check is a callable ``record -> (reason, output)``: ``reason`` None and the
``(key, value)`` to emit, or the rejection reason (the record then goes to the
dead letters as received, with a ``dead_letter_<reason>`` counter and the
stage ``validate``). Checks read the record and the public configuration only
(no state); the tick of a record is ``StreamSpec.tick_of`` of its event time.
"""

from __future__ import annotations

import typing

import apache_beam as beam
from apache_beam.metrics import Metrics

from transforms.common import entry_key_prefixes, raw_digest
from transforms.core.foundation.entries import OPS
from transforms.records import DeadLetter, UpdateChunk, UpdateRecord
from transforms.spec import NAMESPACE, TIME_RANGE, StreamSpec, event_time_ok

__all__ = ["ValidateFn", "UpdateCheck", "tick_in_range"]

_T_LOW, _T_HIGH = TIME_RANGE
# UpdateCheck.accepted unpacks a record's fields by position
assert UpdateRecord._fields == ("event_time", "op", "entry_id", "item", "stream", "seq", "raw", "person")


class ValidateFn(beam.DoFn):
    """Checks each record with ``check``; emits its output, or a dead letter on ``DEAD``.

    ``check.output_type`` types the main output (its coder: the key coder of the stateful step after it),
    ``check.counter`` names the counter of the records that pass (None: not counted), ``check.label`` the
    DoFn in the pipeline graph (``ParDo(<label>)``: the name a job update matches transforms by)."""

    DEAD = "dead_letters"

    def __init__(self, check, chunks: bool = False):
        super().__init__()
        self.check = check
        # ``chunks``: a list element is a chunk of records, each checked as an element would be (a bounded input
        # read in chunks, where no step after this one reads an element's timestamp: ReleaseContinually's bounded
        # path); otherwise a list is one record, refused as any other shape (``malformed``)
        self.chunks = chunks
        self.with_output_types(check.output_type)

    def default_label(self):
        return self.check.label

    def start_bundle(self):
        self.n_valid = 0

    def finish_bundle(self):
        if self.n_valid and self.check.counter:  # one metric update per bundle, not per record
            Metrics.counter(NAMESPACE, self.check.counter).inc(self.n_valid)
        self.n_valid = 0

    def process(self, rec):
        return self._each(rec if self.chunks and (type(rec) is UpdateChunk or type(rec) is list) else (rec,))

    def _each(self, records):
        check = self.check
        # an UpdateCheck's own outputs of the records it accepts by exact types, without its (reason, output) pair
        accepted = check.accepted if type(check) is UpdateCheck else _none
        for rec in records:
            out = accepted(rec)
            if out is None:
                reason, out = check(rec)
                if reason:
                    yield from self._dead(reason, rec)
                    continue
            self.n_valid += 1
            yield out

    def _dead(self, reason, rec):
        Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
        stream = getattr(rec, "stream", None)
        yield beam.pvalue.TaggedOutput(
            self.DEAD, DeadLetter(reason, rec, "validate", stream if isinstance(stream, str) else None)
        )


def _none(rec) -> None:
    return None


def tick_in_range(spec: StreamSpec, event_time) -> tuple[str | None, int]:
    """(``bad_time`` / ``before_origin`` / ``after_end`` or None, the tick of ``event_time``)."""
    if not event_time_ok(event_time):  # not finite, or a tick end Beam could not represent
        return "bad_time", 0
    tick = spec.tick_of(event_time)
    if tick < 1:
        return "before_origin", tick
    end = spec.end_tick
    if end is not None and tick > end:
        return "after_end", tick
    return None, tick


class UpdateCheck:
    """An :class:`~transforms.records.UpdateRecord`: shape, op, declared stream, event time, item domain.
    Output: ``((stream, entry id), (tick, seq, op, item, event time, raw))``, plain tuples of primitives
    (Beam encodes them without pickling; ``raw``, the input as received, is for the dead letters only).

    ``digests``: ``raw`` is ``transforms.common.raw_digest`` of the input as received (the bounded graph with a
    source read twice, ``ReleaseContinually``'s ``raw_lines``: the record stays out of the entry shuffle).
    ``joined_keys`` (the bounded graph): the key is one text, ``transforms.common.entry_key_prefixes``' prefix
    of the stream and the entry id (``ResolveEntriesBoundedFn`` splits it), typed ``str``."""

    output_type = tuple[tuple[str, str], typing.Any]
    counter = "updates_validated"
    label = "ValidateFn"

    def __init__(self, spec: StreamSpec, domain_sizes: tuple, digests: bool = False, joined_keys: bool = False):
        self.spec = spec
        self.digests = digests
        self.joined_keys = joined_keys
        self._prefixes = entry_key_prefixes(spec.streams) if joined_keys else None
        if joined_keys:
            self.output_type = tuple[str, typing.Any]
        self.domain_sizes = tuple(domain_sizes)
        self.streams = frozenset(spec.streams)
        self._end = spec.end_tick
        self._tick_of = spec.tick_of

    def __call__(self, rec):
        accepted = self.accepted(rec)
        if accepted is not None:
            return None, accepted
        reason, tick = self.reason(rec)
        if reason:
            return reason, None
        item = tuple(rec.item) if rec.item is not None else None
        raw = rec.raw if len(rec) > 6 else None
        if self.digests:
            raw = raw_digest(raw)
        key = self._prefixes[rec.stream] + rec.entry_id if self.joined_keys else (rec.stream, rec.entry_id)
        return None, (key, (tick, rec.seq, rec.op, item, float(rec.event_time), raw))

    def accepted(self, rec):
        """The output of a record that :meth:`reason` accepts, decided by exact type tests (an
        ``UpdateRecord`` of a float time, an int seq, a str id, a tuple item of ints in range); None for
        anything else, which :meth:`reason` then decides (every rejection, and the accepted records of other
        types: ``__call__`` gives the same output either way, ``tests/test_speed_update_path.py``)."""
        if type(rec) is not UpdateRecord:
            return None
        t, op, eid, item, stream, seq, raw, _ = rec  # UpdateRecord's fields, in their order
        if (
            type(t) is not float
            or not _T_LOW <= t <= _T_HIGH  # False for NaN: then reason() says bad_time
            or type(seq) is not int
            or type(eid) is not str
            or not eid
            or op not in OPS  # a tuple: no hashing of whatever op holds
            or stream not in self.streams
        ):
            return None
        tick = self._tick_of(t)
        if tick < 1 or (self._end is not None and tick > self._end):
            return None
        if op == "delete":
            if item is not None and type(item) is not tuple:
                return None
        else:
            if type(item) is not tuple or len(item) != len(self.domain_sizes):
                return None
            for v, d in zip(item, self.domain_sizes):
                if type(v) is not int or not 0 <= v < d:
                    return None
        key = self._prefixes[stream] + eid if self._prefixes is not None else (stream, eid)
        return (key, (tick, seq, op, item, t, raw_digest(raw) if self.digests else raw))

    def reason(self, rec) -> tuple[str | None, int]:
        """(rejection reason or None, the update's tick)."""
        if not isinstance(rec, UpdateRecord):
            return "malformed", 0
        if rec.stream not in self.streams:
            return "undeclared_stream", 0
        if rec.op not in OPS:
            return "unknown_op", 0
        if not isinstance(rec.entry_id, str) or not rec.entry_id:
            return "malformed", 0
        if not event_time_ok(rec.event_time):
            return "bad_time", 0
        if isinstance(rec.seq, bool) or not isinstance(rec.seq, int):  # it orders an entry's updates
            return "malformed", 0
        reason, tick = tick_in_range(self.spec, rec.event_time)
        if reason:
            return reason, tick
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
