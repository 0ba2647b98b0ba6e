"""Input elements -> :class:`~transforms.records.UpdateRecord` or a rejection
reason, for every source format. Pure Python (no Beam): the pipeline's parse
step (``pipelines.wiring``), the tests and the tools share it.

It never raises on data: whatever arrives (bytes that are not UTF-8, JSON that
is not an object, a time that is NaN, 1e400 or a date in the year 90000, an
integer of a thousand digits, a Pub/Sub attribute that is not a time) ends as
a record or as one reason of :data:`transforms.core.foundation.entries.REASONS`. The
element as received is kept for the dead letters (text, or bytes when it is
not UTF-8); it is never logged.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import math
from datetime import UTC, datetime
from typing import NamedTuple

from transforms.core.foundation.entries import OPS
from transforms.records import UpdateRecord
from transforms.spec import event_time_ok

__all__ = [
    "Parsed",
    "RecordParser",
    "PubsubElement",
    "safe_json",
    "attribute_time",
    "raw_fields",
    "encode_detail",
    "sum_level",
    "id_text",
    "is_text",
    "content_digest",
]

SEQ_RANGE = (-(2**63), 2**63 - 1)  # seq orders an entry's updates; Beam encodes it as a 64-bit varint
MAX_CELL_TEXT = 256  # an open histogram's cell (issue 33): its text, at most this long (else bad_value)
SUM_BUCKETS = 101  # pipelines.config.queries: a sum's values are rounded to 101 levels in [lower, upper]


def encode_detail(query, record) -> tuple[int | None, str | None, bool]:
    """``(domain index, None, clamped)`` or ``(None, reason, False)`` of one record's item fields for one
    configured query (:class:`~pipelines.config.QueryConfig`); ``reason`` is a dead-letter reason
    (``missing_field``, ``not_in_domain``, ``bad_value``); ``clamped``: a sum value outside ``[lower, upper]``
    that was clamped (counted, never logged)."""
    if query.type == "count":
        return 0, None, False
    if not isinstance(record, dict) or query.field not in record:
        return None, "missing_field", False
    value = record.get(query.field)
    if query.type == "histogram" and query.open_domain:  # issue 33: the cell's text is the item (a key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e300  # not NaN
        text = _domain_text(value) if isinstance(value, str) or number else ""
        return (text, None, False) if 0 < len(text) <= MAX_CELL_TEXT else (None, "bad_value", False)
    if query.type == "histogram":
        for i, d in enumerate(query.domain):
            if type(value) is type(d) and value == d:
                return i, None, False
        # CSV gives strings (and JSON numbers may be written 1 or 1.0): match by text
        if isinstance(value, (str, int, float)):
            text = _domain_text(value)
            for i, d in enumerate(query.domain):
                if _domain_text(d) == text:
                    return i, None, False
        return None, "not_in_domain", False
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None, "bad_value", False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, "bad_value", False
    try:
        value = float(value)
    except OverflowError:  # an integer beyond the float range
        return None, "bad_value", False
    if not math.isfinite(value):
        return None, "bad_value", False
    index, clamped = sum_level(query.lower, query.upper, value)
    return index, None, clamped


def sum_level(lower, upper, value: float) -> tuple[int, bool]:
    """``(level, clamped)`` of a finite sum value: clamped to ``[lower, upper]`` and rounded to its level among
    ``SUM_BUCKETS``; ``clamped``: it was outside (the parse step's shortcut calls it too, ``pipelines.parse_lines``)."""
    clamped = min(max(value, lower), upper)
    return int(round((clamped - lower) / (upper - lower) * (SUM_BUCKETS - 1))), clamped != value


def content_digest(rec: UpdateRecord) -> str:
    """What an update says (time, op, entry, item, stream, seq, person; not the text it was written in), as 32
    hex digits of BLAKE2b: with the update id, the key of ``source.dedup``. Keyed by the id alone, a record
    could take the slot of any other record carrying that id: one person's records (even ones refused later)
    would decide whether other people's records are applied, without bound under any privacy unit."""
    body = repr((rec.event_time, rec.op, rec.entry_id, rec.item, rec.stream, rec.seq, rec.person))
    return hashlib.blake2b(body.encode("utf-8", "backslashreplace"), digest_size=16).hexdigest()


def id_text(value) -> str | None:
    """An entry id or a person id as text: a non-empty string that is text (:func:`is_text`), or an integer as its
    decimal text (below 10^30); None when it is neither (``malformed``)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        return None
    if isinstance(value, int):
        return str(value) if abs(value) < 10**30 else None
    return value if is_text(value) else None


def is_text(value: str) -> bool:
    r"""``value`` has a UTF-8 form: no lone surrogate, which a JSON line's ``"\ud800"`` decodes to. Beam's
    string coders (a shuffle's key, a line written) refuse one, so such an id or stream would fail the job
    instead of becoming a dead letter: the parse step refuses it (an id ``malformed``, a stream
    ``undeclared_stream``)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _domain_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class PubsubElement(NamedTuple):
    """A Pub/Sub message as the parse step sees it: the payload, its attributes
    and its publish time (seconds; the reference of ``max_future_seconds``)."""

    data: bytes
    attributes: tuple  # sorted (name, value) pairs
    publish_time: float | None = None


class Parsed(NamedTuple):
    """The outcome for one element: ``record`` (accepted by the parser) or
    ``reason``; ``raw`` is the element as received (str, bytes, or for Pub/Sub
    ``(payload, attributes)``); ``stream``: the stream named by the record, if
    any; ``clamped``: sum queries whose value was clamped into [lower, upper];
    ``dedup_key``: the key of ``source.dedup`` (files)."""

    reason: str | None
    record: UpdateRecord | None
    raw: object
    stream: str | None = None
    clamped: tuple = ()
    dedup_key: str | None = None


def safe_json(value) -> str:
    """JSON text of any decoded record (an Avro record may hold NaN, bytes or
    anything else): always valid JSON, never raises."""

    def clean(v, depth=0):
        if depth > 50:
            return repr(type(v).__name__)
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)  # "nan", "inf", "-inf": valid JSON strings
        if isinstance(v, (bytes, bytearray)):
            return {"base64": base64.b64encode(bytes(v)).decode("ascii")}
        if isinstance(v, dict):
            return {str(k): clean(x, depth + 1) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x, depth + 1) for x in v]
        if v is None or isinstance(v, (str, bool, float)):
            return v
        if isinstance(v, int):
            return v if abs(v) < 10**300 else str(v)[:64] + "..."
        return str(v)

    try:
        return json.dumps(clean(value), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return json.dumps(repr(type(value).__name__))


def raw_fields(raw) -> dict:
    """A raw element as dead-letter fields: ``record`` (text, or base64 of bytes
    that are not UTF-8), ``encoding`` and ``attributes`` (Pub/Sub)."""
    attributes = None
    if isinstance(raw, tuple) and len(raw) == 2 and isinstance(raw[1], (tuple, dict)):
        raw, attrs = raw
        attributes = {str(k): str(v) for k, v in (attrs.items() if isinstance(attrs, dict) else attrs)}
    if isinstance(raw, (bytes, bytearray)):
        try:
            return {"record": bytes(raw).decode("utf-8"), "encoding": "text", "attributes": attributes}
        except UnicodeDecodeError:
            return {
                "record": base64.b64encode(bytes(raw)).decode("ascii"),
                "encoding": "base64",
                "attributes": attributes,
            }
    if isinstance(raw, str):
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates: not valid UTF-8 text
            return {
                "record": base64.b64encode(raw.encode("utf-8", "surrogatepass")).decode("ascii"),
                "encoding": "base64",
                "attributes": attributes,
            }
        return {"record": raw, "encoding": "text", "attributes": attributes}
    return {"record": safe_json(raw), "encoding": "text", "attributes": attributes}


def attribute_time(value) -> float | None:
    """A Pub/Sub timestamp attribute (milliseconds since the epoch, or RFC 3339)
    as seconds, or None when it is not a time."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    text = value.strip()
    try:
        if text.lstrip("-").isdigit():
            t = int(text) / 1000.0
        else:
            dt = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)
            t = dt.timestamp()
    except (ValueError, OverflowError, OSError):
        return None
    return t if event_time_ok(t) else None


class RecordParser:
    """Parses elements of one configured source (see the module docstring).

    Args:
      cfg: the :class:`~pipelines.config.PipelineConfig`.
      csv_header: the CSV header (a CSV source), else None.
      timestamp_attribute: Pub/Sub: the event time comes from this attribute.
      max_future_seconds: Pub/Sub: an event time more than this past the
        message's publish time is rejected (``too_far_in_future``).
      dedup_field: the record field that names an update (``source.dedup``;
        default: the configured source's).
    """

    def __init__(self, cfg, csv_header=None, timestamp_attribute=None, max_future_seconds=None, dedup_field=None):
        self.cfg = cfg
        self.csv_header = None if csv_header is None else tuple(csv_header)
        self.timestamp_attribute = timestamp_attribute
        self.max_future_seconds = max_future_seconds
        self.dedup_field = dedup_field if dedup_field is not None else cfg.source.dedup_field
        # the person unit's privacy id (``privacy.person_field``): a field of the record, never of its item
        self.person_field = cfg.person_field if cfg.unit == "person" else None
        self.fixed = {cfg.time_field, "op", "id", "seq", cfg.stream_field, "stream", self.person_field} - {None}

    # -- decoding ------------------------------------------------------------

    def _dict(self, element):
        """The element as a dict (item fields under "item"), or None."""
        if isinstance(element, dict):  # Avro
            return element
        if self.csv_header is not None:
            row = next(csv.reader(io.StringIO(element)), None)
            if row is None or len(row) != len(self.csv_header):
                return None
            d = dict(zip(self.csv_header, row))
            out = {k: v for k, v in d.items() if k in self.fixed}
            item = {k: v for k, v in d.items() if k not in self.fixed and v != ""}
            if item:
                out["item"] = item
            if out.get("seq") == "":
                out.pop("seq")
            return out
        d = json.loads(element)
        return d if isinstance(d, dict) else None

    def parse(self, element) -> Parsed:
        try:
            return self._parse(element)
        except Exception:  # noqa: BLE001 - a last resort: no data may stop the run
            return Parsed("unparseable", None, element if isinstance(element, (str, bytes)) else safe_json(element))

    def _parse(self, element) -> Parsed:
        attrs = {}
        publish_time = None
        pubsub = isinstance(element, PubsubElement)
        if pubsub:
            attrs = dict(element.attributes or ())
            publish_time = element.publish_time
            raw = (element.data, tuple(sorted(attrs.items())))
            element = element.data
        else:
            raw = element
        if isinstance(element, (bytes, bytearray)):
            try:
                element = bytes(element).decode("utf-8")
            except UnicodeDecodeError:
                return Parsed("unparseable", None, raw)
            if not pubsub:
                raw = element
        elif isinstance(element, dict):
            raw = safe_json(element)
        elif not isinstance(element, str):
            return Parsed("unparseable", None, safe_json(element))
        try:
            d = self._dict(element)
        except (ValueError, RecursionError, csv.Error, TypeError):
            d = None
        if d is None:
            return Parsed("unparseable", None, raw)
        stream_value = None
        if self.cfg.stream_field:
            stream_value = d.get(self.cfg.stream_field, d.get("stream"))
        stream = stream_value if isinstance(stream_value, str) and is_text(stream_value) else None

        def reject(reason):
            return Parsed(reason, None, raw, stream)

        # time
        if self.timestamp_attribute:
            value = attrs.get(self.timestamp_attribute)
            if value is None:
                return reject("missing_field")
            t = attribute_time(value)
            if t is None:
                return reject("bad_time")
        else:
            if self.cfg.time_field not in d or d[self.cfg.time_field] is None:
                return reject("missing_field")
            t = d[self.cfg.time_field]
            if isinstance(t, str) and self.csv_header is not None:
                try:
                    t = float(t)
                except ValueError:
                    return reject("bad_time")
            if not event_time_ok(t):
                return reject("bad_time")
            t = float(t)
        if self.max_future_seconds is not None and publish_time is not None:
            if t > publish_time + self.max_future_seconds:
                return reject("too_far_in_future")
        # op, id, stream
        op = d.get("op")
        if op is None:
            return reject("missing_field")
        if not isinstance(op, str) or op not in OPS:
            return reject("unknown_op")
        eid = d.get("id")
        if eid is None:
            return reject("missing_field")
        eid = id_text(eid)
        if eid is None:
            return reject("malformed")
        person = None
        if self.person_field is not None:  # never in a message, a log line or a metric: only in the record
            person = d.get(self.person_field)
            if person is None:
                return reject("missing_field")
            person = id_text(person)
            if person is None:
                return reject("malformed")
        if self.cfg.stream_field:
            if stream_value is None:
                return reject("missing_field")
            if stream is None:
                return reject("undeclared_stream")
        else:
            stream = "default"
        # seq
        seq = d.get("seq", 0)
        if seq is None:
            seq = 0
        if isinstance(seq, str) and self.csv_header is not None:
            try:
                seq = int(seq)
            except ValueError:
                return reject("malformed")
        if isinstance(seq, bool) or not isinstance(seq, int) or not SEQ_RANGE[0] <= seq <= SEQ_RANGE[1]:
            return reject("malformed")
        # item
        item = None
        clamped = []
        if op in ("insert", "upsert"):
            fields = d.get("item")
            if fields is None:
                return reject("missing_field")
            if not isinstance(fields, dict):
                return reject("malformed")
            idx = []
            for q in self.cfg.queries:
                v, reason, was_clamped = encode_detail(q, fields)
                if reason:
                    return reject(reason)
                if was_clamped:
                    clamped.append(q.name)
                idx.append(v)
            item = tuple(idx)
        rec = UpdateRecord(t, op, eid, item, stream, seq, raw, person)
        dedup_key = None
        if self.dedup_field:
            uid = d.get(self.dedup_field)
            if isinstance(uid, (str, int)) and not isinstance(uid, bool) and uid != "":
                # the id and what the record says: a repeat is dropped, a record that only shares the id (another
                # entry's, another person's) is not, so that no record can remove someone else's
                dedup_key = "f:" + str(uid)[:256] + ":" + content_digest(rec)
            else:
                text = raw if isinstance(raw, str) else safe_json(d)
                dedup_key = "h:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return Parsed(None, rec, raw, stream, tuple(clamped), dedup_key)
