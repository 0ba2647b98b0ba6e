"""Round 11 of issue 30 (the per-update path of the bounded release): each shortcut against the computation it
replaces, over the demo's lines and random variants of them. Cheap (about a second in all); each has a broken
twin that must fail (``docs/performance.md``, "Round 11")."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from apache_beam.transforms.window import GlobalWindows, TimestampedValue, WindowFn
from apache_beam.utils.timestamp import Timestamp

import pipelines.parse_lines as parse_lines
import pipelines.wiring as wiring
import transforms.common as common
import transforms.validate as validate
from benchmarks.reference import Demo, demo_yaml
from pipelines.config.load import load_config
from pipelines.demo_data import generate
from pipelines.parse import RecordParser
from transforms.core.foundation.aggregates import resolve_entry
from transforms.core.foundation.entries import DeletionsRefused, update_order
from transforms.records import UpdateRecord
from transforms.spec import StreamSpec

# --- fast_parse is RecordParser.parse -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def parser(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "demo.yaml"
    path.write_text(demo_yaml(Demo(end=86400.0 * 30), "/nonexistent.jsonl", "/nonexistent/"))
    return RecordParser(load_config(path))


def _variants(rng: random.Random, line: str) -> list:
    """The line, its bytes, and random edits of one field (types, ranges, missing fields, bad encodings)."""
    try:
        d = json.loads(line)
    except ValueError:  # the generator's bad lines
        return [line, line.encode()]
    out = [line, line.encode()]
    odd = [
        None, True, False, 0, -1, 7, 2**63, -(2**63) - 1, 2**80, 1.5, -0.0, math.nan, math.inf, 1e300, -1e12,
        3e11, "", "x", "12", "AA", "eu", [], [1], {}, {"carrier": "AA"}, np.float64(3.0).item(), 10**31,
    ]  # fmt: skip
    for _ in range(6):
        e = dict(d, item=dict(d["item"])) if isinstance(d.get("item"), dict) else dict(d)
        field = rng.choice(["time", "op", "id", "region", "seq", "item", "carrier", "amount", "extra"])
        value = rng.choice(odd + [rng.choice(["insert", "upsert", "delete", "merge"])])
        if field in ("carrier", "amount"):
            if isinstance(e.get("item"), dict):
                if rng.random() < 0.2:
                    e["item"].pop(field, None)
                else:
                    e["item"][field] = rng.choice([value, rng.uniform(-50, 200), "DL", "B6", "ZZ", 150, 0])
        elif rng.random() < 0.15:
            e.pop(field, None)
        else:
            e[field] = value
        out.append(json.dumps(e))
    out += [json.dumps([d]), "", "{", b"\xff\xfe{}", json.dumps(d).encode("utf-16"), bytearray(line.encode()), d]
    return out


def _mismatches(parser, elements) -> list:
    """Elements where ``fast_parse`` takes the case and differs from ``parser.parse``."""
    bad = []
    for x in elements:
        fast = wiring.fast_parse(parser, x)
        if fast is not None and fast != parser.parse(x):
            bad.append(x)
    return bad


def _elements(n_lines=1500, seed=11) -> list:
    rng = random.Random(seed)
    lines = generate(n_lines, seed=seed)
    out = []
    for line in lines:
        out += _variants(rng, line)
    return out


def test_fast_parse_is_record_parser(parser):
    """Over 1,500 demo lines (and the generator's bad lines) and 6 random edits of each: wherever ``fast_parse``
    takes the case it gives ``RecordParser.parse``'s ``Parsed`` (record, raw, stream, clamped sums, dedup key),
    and it takes most of them (the shortcut is used, not bypassed)."""
    elements = _elements()
    assert _mismatches(parser, elements) == []
    taken = sum(wiring.fast_parse(parser, x) is not None for x in elements)
    rejected = sum(parser.parse(x).reason is not None for x in elements)
    assert taken > len(elements) * 0.2 and rejected > len(elements) * 0.2
    clean = [line for line in generate(300, seed=3) if parser.parse(line).reason is None]
    assert len(clean) >= 295 and all(wiring.fast_parse(parser, x.encode()) for x in clean)  # the demo's: all taken


def test_fast_parse_declines_other_parsers(tmp_path):
    """A CSV header, a dedup field, a person field: ``fast_parse`` takes nothing (``parser.parse`` decides)."""
    path = tmp_path / "demo.yaml"
    path.write_text(demo_yaml(Demo(end=86400.0), "/nonexistent.jsonl", "/nonexistent/"))
    cfg = load_config(path)
    line = generate(3)[0]
    assert wiring.fast_parse(RecordParser(cfg), line) is not None
    assert wiring.fast_parse(RecordParser(cfg, csv_header=("time", "op")), line) is None
    assert wiring.fast_parse(RecordParser(cfg, dedup_field="uid"), line) is None


@pytest.mark.parametrize(
    "break_it",
    [
        "seq_range",  # no seq range check
        "time_range",  # a wider time range
        "clamp",  # the clamped sums not reported
        "levels",  # a sum rounded to other levels
        "raw",  # the record's raw as bytes
    ],
)
def test_fast_parse_twin_fails(parser, monkeypatch, break_it):
    """The broken twin: each break of the shortcut makes ``test_fast_parse_is_record_parser``'s check fail."""
    if break_it == "seq_range":
        monkeypatch.setattr(parse_lines, "SEQ_RANGE", (-(2**100), 2**100))
    elif break_it == "time_range":
        monkeypatch.setattr(parse_lines, "TIME_RANGE", (-1e400, 1e400))
    elif break_it == "clamp":
        real = parse_lines.item_encoder

        def unclamped(query):
            encode = real(query)
            return lambda fields: (lambda v: v if v is None else (v[0], False))(encode(fields))

        monkeypatch.setattr(parse_lines, "item_encoder", unclamped)
    elif break_it == "levels":
        monkeypatch.setattr(
            parse_lines, "sum_level", lambda lo, hi, x: (int((min(max(x, lo), hi) - lo) / (hi - lo) * 100), False)
        )
    else:
        real_record = parse_lines.UpdateRecord
        monkeypatch.setattr(parse_lines, "UpdateRecord", lambda *a: real_record(*a[:6], str(a[6]).encode(), a[7]))
    assert _mismatches(parser, _elements(400)) != []


# --- json_value is json.loads ----------------------------------------------------------------------------------

_JSON_TEXTS = [
    '{"a": 1}', ' {"a": 1}', '{"a": 1} ', '{"a": 1}\r', '\t{"a": 1}\n', '{"a": 1}x', '{"a": 1}{}', '{"a": 1', "",
    " ", "\ufeff{}", "1", "-0.0", "NaN", "Infinity", '"x"', "[1, 2]", "null", '{"a": NaN}', '{"a": "\\ud800"}',
    '{"a": 1, "a": 2}', '{"a": 1e400}', "01", "[1,]", '{"a": {"b": [1.5, true, null]}}', "\u00a0{}",
]  # fmt: skip


def _loads_outcome(loads, text):
    try:
        return "value", json.dumps(loads(text), sort_keys=True)  # NaN == NaN as text
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)


def _json_mismatches(loads) -> list:
    texts = _JSON_TEXTS + [x for x in _elements(300) if type(x) is str]
    return [t for t in texts if _loads_outcome(loads, t) != _loads_outcome(json.loads, t)]


def test_json_value_is_json_loads():
    """The shortcut's decoder gives ``json.loads``' value or its error (type and message) for JSON lines, texts
    with leading or trailing whitespace, a BOM, extra data, bad JSON, non-finite numbers and edits of demo lines."""
    assert _json_mismatches(parse_lines.json_value) == []


@pytest.mark.parametrize("break_it", ["no_end_check", "no_fallback"])
def test_json_value_twin_fails(break_it):
    """Broken twins: trailing data accepted; a text not starting with its value refused with another error."""
    scan = json.JSONDecoder().scan_once

    def no_end_check(text):
        return scan(text, 0)[0]

    def no_fallback(text):
        try:
            value, end = scan(text, 0)
        except StopIteration:
            raise ValueError("not JSON") from None
        return value if end == len(text) else json.loads(text)

    assert _json_mismatches(no_end_check if break_it == "no_end_check" else no_fallback) != []


# --- the parse step's windowed values: what GlobalWindows.assign makes --------------------------------------------


def _assigned(value):
    """What Beam's runner makes of ``value`` (a TimestampedValue) in the global windowing."""
    return value.value, value.timestamp, GlobalWindows().assign(WindowFn.AssignContext(value.timestamp, value.value))


@pytest.mark.parametrize("dedup", [False, True])
def test_parsed_outputs_in_global_window(parser, dedup):
    """``parsed_outputs(..., global_window=True)``: the value, timestamp and windows the runner's assignment
    gives the ``TimestampedValue`` of ``global_window=False`` (times with sub-microsecond digits, negative, big);
    dead letters unchanged."""
    lines = [line for line in generate(200, seed=5)] + ['{"time": 1.5}']
    for t in (0.0, 1e-7, 0.1 + 0.2, 12345.6789012, -3.0000004, 2.5e11):
        lines.append(json.dumps({"time": t, "op": "insert", "id": "z", "item": {"carrier": "AA", "amount": 3}}))
        lines[-1] = lines[-1][:-1] + ', "region": "us"}'
    for line in lines:
        parsed = parser.parse(line)
        if parsed.reason is None:
            parsed = parsed._replace(dedup_key="f:1" if dedup else None)
        old = list(wiring.parsed_outputs(parsed, "dead", dedup))
        new = list(wiring.parsed_outputs(parsed, "dead", dedup, True))
        assert len(old) == len(new) == 1
        if parsed.reason:
            assert old[0].tag == new[0].tag == "dead" and old[0].value == new[0].value
            continue
        assert isinstance(old[0], TimestampedValue)
        value, ts, windows = _assigned(old[0])
        assert (new[0].value, new[0].timestamp, list(new[0].windows)) == (value, ts, list(windows))
        assert new[0].timestamp == Timestamp.of(parsed.record.event_time)


def test_parsed_outputs_twin_fails(parser, monkeypatch):
    """The broken twin: a timestamp in whole seconds is caught."""
    monkeypatch.setattr(wiring, "Timestamp", type("T", (), {"of": staticmethod(lambda t: Timestamp.of(int(t)))}))
    with pytest.raises(AssertionError):
        test_parsed_outputs_in_global_window(parser, False)


# --- UpdateCheck's exact-type path is its general path ------------------------------------------------------------


def _former_call(check, rec):
    """``UpdateCheck.__call__`` before the exact-type path."""
    reason, tick = check.reason(rec)
    if reason:
        return reason, None
    item = tuple(rec.item) if rec.item is not None else None
    raw = rec.raw if len(rec) > 6 else None
    return None, ((rec.stream, rec.entry_id), (tick, rec.seq, rec.op, item, float(rec.event_time), raw))


def _records(rng: random.Random, n: int) -> list:
    times = [0.0, 1e-9, 59.999999, 60.0, 61.5, 3599.9, 3600.0, 3600.0000001, -1.0, 7200.5, 1e12, 3e11, math.nan]
    times += [math.inf, 5, True, "7", None, np.float64(30.0), -0.0]
    items = [(0, 1, 5), (0, 2, 100), (0, 3, 5), (0, -1, 5), (1, 0, 0), (0, 0), [0, 1, 2], None, (0, True, 3)]
    items += [(0, np.int64(1), 4), (0, 1.0, 2), "abc", (0, 1, 101), ()]
    out = []
    for _ in range(n):
        rec = UpdateRecord(
            rng.choice(times + [rng.uniform(0, 7300)] * 6),
            rng.choice(["insert", "delete", "upsert", "merge", None, ["insert"]] + ["insert", "delete"] * 3),
            rng.choice(["a", "b1", "", 7, None] + ["e"] * 5),
            rng.choice(items + [(0, rng.randrange(3), rng.randrange(101))] * 5),
            rng.choice(["eu", "us", "asia", 3] + ["eu"] * 4),
            rng.choice([0, 1, -5, 2**70, True, 1.0, None] + [rng.randrange(100)] * 4),
            rng.choice([None, "line", b"bytes"]),
        )
        out.append(rec)
    return out + [("eu", "x"), None, UpdateRecord(1.0, "insert", "a", (0, 1, 2), "eu")[:5]]


def _check_mismatches(check, records) -> list:
    return [r for r in records if check(r) != _former_call(check, r)]


def test_update_check_exact_type_path():
    """2,000 random records (times at tick bounds, outside the run, not numbers; ops, ids, seqs and items of
    every type, numpy ints, lists, bools, out of range; undeclared streams; tuples that are not records):
    ``UpdateCheck`` gives what it gave before, and the exact-type path decides most of the accepted ones."""
    spec = StreamSpec(streams=("eu", "us"), tick_seconds=60.0, origin=0.0, end_time=7200.0)
    check = validate.UpdateCheck(spec, (1, 3, 101))
    records = _records(random.Random(5), 2000)
    assert _check_mismatches(check, records) == []
    accepted = [r for r in records if check(r)[0] is None]
    assert len(accepted) > 200
    assert sum(check.accepted(r) is not None for r in accepted) > 0.6 * len(accepted)
    open_end = validate.UpdateCheck(StreamSpec(streams=("eu",), tick_seconds=60.0), (1, 3, 101))
    assert _check_mismatches(open_end, records) == []


@pytest.mark.parametrize("break_it", ["time_range", "end"])
def test_update_check_twin_fails(monkeypatch, break_it):
    """The broken twin: a wider time range, or no end check, on the exact-type path is caught."""
    spec = StreamSpec(streams=("eu", "us"), tick_seconds=60.0, origin=0.0, end_time=7200.0)
    check = validate.UpdateCheck(spec, (1, 3, 101))
    if break_it == "time_range":  # a time past TIME_RANGE (1e12 s) taken by the open-ended check
        monkeypatch.setattr(validate, "_T_LOW", -1e13)  # the exact-type path's copy of TIME_RANGE
        monkeypatch.setattr(validate, "_T_HIGH", 1e13)
        check = validate.UpdateCheck(StreamSpec(streams=("eu", "us"), tick_seconds=60.0), (1, 3, 101))
    else:
        check._end = None
    assert _check_mismatches(check, _records(random.Random(5), 2000)) != []


# --- in_update_order is sorted(key=update_order); resolve_updates without the copy -------------------------------


def _entry_updates(rng: random.Random) -> list:
    """One entry's update tuples (tick, seq, op, item, event_time, raw), with many ties on (tick, time, seq)."""
    n = rng.choice([0, 1, 2, 2, 3, 4, 6])
    out = []
    for _ in range(n):
        tick = rng.choice([1, 1, 2, 3])
        t = rng.choice([float(tick * 60 - 30), float(tick * 60 - 30) + rng.random(), float(tick * 60 - 1)])
        if rng.random() < 0.05:
            t = rng.choice([int(t), math.nan, np.float64(t)])
        seq = rng.choice([0, 0, 1, 2, True]) if rng.random() < 0.05 else rng.choice([0, 0, 1, 2])
        op = rng.choice(["insert", "insert", "upsert", "delete"])
        item = None if op == "delete" and rng.random() < 0.7 else (0, rng.randrange(3), rng.randrange(4))
        raw = rng.choice([None, "line a", "line b", b"\x00", ("p", (("k", "v"),))])
        out.append((tick, seq, op, item, t, raw))
    return out


def _order_mismatches(cases) -> list:
    return [u for u in cases if common.in_update_order(u) != sorted(u, key=update_order)]


def test_in_update_order_is_update_order():
    """3,000 random entries (ties on tick, time and seq differing only in op, item or raw; int, NaN and numpy
    times; bool seqs; generators): the order of ``sorted(key=update_order)``, element for element."""
    rng = random.Random(9)
    cases = [_entry_updates(rng) for _ in range(3000)]
    assert _order_mismatches(cases) == []
    assert all(common.in_update_order(iter(u)) == sorted(u, key=update_order) for u in cases[:300])
    ties = sum(len({(v[0], v[4], v[1]) for v in u}) < len(u) for u in cases)
    assert ties > 200  # the full key is exercised, not only the prefix


@pytest.mark.parametrize("break_it", ["prefix", "full"])
def test_in_update_order_twin_fails(monkeypatch, break_it):
    """The broken twin: a prefix without the event time, or ties left to the prefix, is caught."""
    if break_it == "prefix":
        monkeypatch.setattr(common, "_PREFIX", lambda v: (v[0], -v[4], v[1]))  # later times first
    else:
        monkeypatch.setattr(common, "update_order", common._PREFIX)
    rng = random.Random(9)
    assert _order_mismatches([_entry_updates(rng) for _ in range(3000)]) != []


def _former_resolve_updates(state, entry_id, updates, domain_sizes, deletions_allowed, max_mutations=None):
    five = [(v[0], v[1], v[2], v[3], i) for i, v in enumerate(updates)]
    state, batches, dead, accepted = resolve_entry(
        state, entry_id, five, domain_sizes, deletions_allowed, max_mutations
    )
    return state, batches, [(reason, updates[v[4]]) for reason, v in dead], accepted


def _resolve_cases():
    rng = random.Random(4)
    for _ in range(3000):
        ups = sorted(_entry_updates(rng), key=update_order)
        allowed = rng.choice([True, True, False, DeletionsRefused("deletion_not_allowed")])
        limit = rng.choice([None, None, 1, 2])
        state = rng.choice([None, None, ((0, 1, 2), 1, 0)])
        yield state, rng.choice(["e", "", None]), ups, (1, 3, 4), allowed, limit


def test_resolve_updates_is_the_former_copy():
    """3,000 random entries (rejections of every kind: live inserts, absent deletes, refused deletions,
    mutation limits, bad items and ids): the same state, tick aggregates, rejected tuples (raw included) and
    count as the former five-tuple copy."""
    n_dead = 0
    for case in _resolve_cases():
        got = common.resolve_updates(*case)
        assert got == _former_resolve_updates(*case)
        n_dead += len(got[2])
    assert n_dead > 1000


def test_resolve_updates_twin_fails(monkeypatch):
    """The broken twin: rejections returned without the raw field are caught."""
    real = common.resolve_entry

    def broken(*a, **k):
        s, b, dead, n = real(*a, **k)
        return s, b, [(r, v[:5]) for r, v in dead], n

    monkeypatch.setattr(common, "resolve_entry", broken)
    with pytest.raises(AssertionError):
        test_resolve_updates_is_the_former_copy()
