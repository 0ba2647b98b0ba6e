"""The parse step's shortcut for JSON lines: :func:`line_parser` compiles, once per parse step, what
``RecordParser.parse`` does for the common case of a JSON-lines file, with the configuration's look-ups and each
query's encoding decided once (:func:`item_encoder`) instead of per line.

It gives ``RecordParser.parse``'s ``Parsed`` wherever it takes a case and None otherwise (``parser.parse`` then
decides: every rejection, and every case this does not take): ``tests/test_speed_update_path.py`` compares them
over the demo's lines and random edits of every field, with a broken twin of each shortcut.
"""

from __future__ import annotations

import json
import math

from pipelines.parse import SEQ_RANGE, Parsed, encode_detail, sum_level
from transforms.core.foundation.entries import OPS
from transforms.records import UpdateRecord
from transforms.spec import TIME_RANGE

__all__ = ["line_parser", "line_records", "item_encoder", "json_value"]


def _declined(element) -> None:
    return None


def item_encoder(query):
    """``fields -> (domain index, clamped)`` of one configured query for an item's fields, as ``encode_detail``
    gives them when it accepts the value; None where it would refuse it or where this does not decide (then
    ``RecordParser.parse`` decides). A count: index 0; a histogram of declared cells: the first cell of the same
    type that equals the value (``encode_detail``'s first test; its match by text, for CSV strings and numbers
    written another way, is left to it); a sum: an int or float value, clamped to ``[lower, upper]`` and rounded to
    its level by ``encode_detail``'s own ``sum_level``."""
    if query.type == "count":
        zero = (0, False)
        return lambda fields: zero
    field = query.field
    if query.type == "histogram" and not query.open_domain:
        try:
            cells: dict = {}
            for i, d in enumerate(query.domain):
                cells.setdefault((type(d), d), i)  # the first equal cell of the same type, as encode_detail's loop
        except TypeError:  # a cell that cannot be a key: encode_detail decides every value
            return _generic(query)

        def histogram(fields):
            if field not in fields:
                return None
            value = fields[field]
            i = cells.get((type(value), value))
            return None if i is None else (i, False)

        return histogram
    if query.type == "sum":
        lower, upper = query.lower, query.upper
        isfinite = math.isfinite

        def total(fields):
            if field not in fields:
                return None
            value = fields[field]
            if type(value) is float:
                x = value
            elif type(value) is int:
                x = float(value)  # OverflowError beyond the float range: the caller declines
            else:
                return None
            if not isfinite(x):
                return None
            return sum_level(lower, upper, x)

        return total
    return _generic(query)


def _generic(query):
    def generic(fields):
        value, reason, clamped = encode_detail(query, fields)
        return None if reason else (value, clamped)

    return generic


def line_parser(parser, records=None):
    """``element -> Parsed | None``: ``parser.parse(element)`` for a line (bytes of UTF-8 text, or text) of a JSON
    object whose time is a float or an int in ``TIME_RANGE``, op one of ``OPS``, id a non-empty ASCII string, stream
    (with ``streams.field``) an ASCII string, seq absent, None or an int in ``SEQ_RANGE``, and (insert, upsert) an
    item object that every query's :func:`item_encoder` takes; None for anything else. A parser with a CSV header, a
    timestamp attribute, a person field or a dedup field: None for every element. Any exception ends in None.
    ``records``: :func:`line_records` of ``parser``, when made already (this wraps it)."""
    records = records or line_records(parser)

    def parse(element):
        r = records(element)
        return Parsed(None, r, r.raw, r.stream, (), None) if type(r) is UpdateRecord else r

    return parse


#: the C scanner of a JSON decoder with ``json.loads``' settings: what ``json.loads`` calls for a text after its
#: leading whitespace, without the two Python frames and two regular-expression matches around it
_SCAN = json.JSONDecoder().scan_once


def json_value(text: str):
    """``json.loads(text)``: the value of a JSON text, decoded by ``json.loads``' own scanner when the text starts
    with its value and ends with it (a line of a JSON-lines file); any other text (leading or trailing
    whitespace, a BOM, extra data, not JSON) is ``json.loads``' to decode or refuse, with its error.
    ``tests/test_speed_update_path.py`` compares them."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return value


def line_records(parser):
    """:func:`line_parser`'s shortcut without the ``Parsed`` of the common case: ``element -> UpdateRecord`` where
    nothing was clamped (the record of the ``Parsed`` :func:`line_parser` gives), the ``Parsed`` where a sum value
    was, None where :func:`line_parser` gives None (the parse step of a chunk takes the records as they come)."""
    if (
        parser.csv_header is not None
        or parser.timestamp_attribute
        or parser.person_field is not None
        or parser.dedup_field
    ):
        return _declined
    cfg = parser.cfg
    stream_field, time_field = cfg.stream_field, cfg.time_field
    encoders = tuple((q.name, item_encoder(q)) for q in cfg.queries)
    t_low, t_high = TIME_RANGE
    s_low, s_high = SEQ_RANGE
    loads = json_value

    def parse(element):
        try:
            if type(element) is bytes:
                element = element.decode("utf-8")
            elif type(element) is not str:
                return None
            d = loads(element)
            if type(d) is not dict:
                return None
            stream = "default"
            if stream_field:
                stream = d.get(stream_field, d.get("stream"))
                if type(stream) is not str or not stream.isascii():  # anything else: the general parser decides
                    return None
            t = d.get(time_field)
            if type(t) is not float and type(t) is not int:
                return None
            t = float(t)
            if not t_low <= t <= t_high:  # False for NaN
                return None
            op = d.get("op")
            eid = d.get("id")
            if type(op) is not str or op not in OPS or type(eid) is not str or not eid or not eid.isascii():
                return None
            seq = d.get("seq", 0)
            if seq is None:
                seq = 0
            elif type(seq) is not int or not s_low <= seq <= s_high:
                return None
            item = None
            clamped = ()
            if op != "delete":
                fields = d.get("item")
                if type(fields) is not dict:
                    return None
                idx = []
                for name, encode in encoders:
                    v = encode(fields)
                    if v is None:
                        return None
                    if v[1]:
                        clamped += (name,)
                    idx.append(v[0])
                item = tuple(idx)
            record = UpdateRecord(t, op, eid, item, stream, seq, element, None)
            return record if not clamped else Parsed(None, record, element, stream, clamped, None)
        except Exception:  # noqa: BLE001 - parser.parse decides (and never raises)
            return None

    return parse
