"""Nothing stops the pipeline (issue 14): every record reaches a release or a
dead letter, bad configurations and arguments fail before the run with one
line, failed or all-rejecting runs exit non-zero, dead letters hold the record
as received and can be replayed, line order and duplicates do not change a
release, spends are reported in the configured units, tools fail clearly.

The fuzz tests throw arbitrary JSON values, bytes, CSV rows, Avro values and
Pub/Sub attributes at every parse and validation step (``RecordParser``,
``UpdateCheck``, the dead-letter formatting) and through whole batch pipelines
(JSON lines, CSV, Avro), whose releases must equal the clean run's.
"""

from __future__ import annotations

import base64
import copy
import csv
import io
import json
import math
import os
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pipelines.wiring as wiring
from pipelines.config import ConfigError, check_mechanism, parse_config
from pipelines.outputs import dead_dict, schema
from pipelines.parse import PubsubElement, RecordParser
from pipelines.release import main
from transforms.core.foundation.entries import REASONS
from transforms.records import DeadLetter
from transforms.spec import StreamSpec
from transforms.validate import UpdateCheck

ROOT = Path(__file__).resolve().parents[1]
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
HEADER = ("time", "op", "id", "region", "seq", "carrier", "amount")

# a small clean workload: inserts, upserts and deletes in two regions over 6 ticks
CLEAN = []
for _i in range(24):
    _t = 30.0 + 25.0 * _i
    _region = ("eu", "us")[_i % 2]
    CLEAN.append({"time": _t, "op": "insert", "id": f"b{_i}", "region": _region, "seq": 0,
                  "item": {"carrier": ("AA", "B6", "DL")[_i % 3], "amount": 10.0 * _i}})  # fmt: skip
    if _i % 4 == 3:
        CLEAN.append({"time": _t + 5, "op": "upsert", "id": f"b{_i}", "region": _region, "seq": 1,
                      "item": {"carrier": "DL", "amount": 7.5}})  # fmt: skip
    if _i % 5 == 4:
        CLEAN.append({"time": _t + 7, "op": "delete", "id": f"b{_i - 2}", "region": ("eu", "us")[_i % 2], "seq": 2})


@pytest.fixture(autouse=True)
def _no_picture(monkeypatch):
    """The CLI draws a picture of a bounded run's releases: not needed here (it
    costs about a second per run)."""
    from pipelines import cli

    monkeypatch.setattr(cli, "draw_picture", lambda cfg: None)


def _raw(tmp_path, source, fmt="jsonl", **extra):
    raw = copy.deepcopy(DEMO)
    raw["privacy"]["disable_noise"] = True
    raw["time"] = {"field": "time", "tick_seconds": 100, "origin": 0, "end": 800}
    raw["source"] = {"type": "file", "path": str(source), "format": fmt, **extra}
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    return raw


def _run_cli(tmp_path, raw, *args, name="cfg"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return main(["--config", str(path), *args])


def _releases(folder) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in json.loads(x).items() if k not in ("segment", "release_id")}, sort_keys=True)
        for f in Path(folder).glob("releases*.jsonl")
        for x in f.read_text().splitlines()
    )


def _dead(folder) -> list[dict]:
    return [json.loads(x) for f in Path(folder).glob("dead_letters*.jsonl") for x in f.read_text().splitlines()]


def _csv_line(d) -> str:
    buf = io.StringIO()
    item = d.get("item", {})
    row = [d["time"], d["op"], d["id"], d["region"], d.get("seq", 0), item.get("carrier", ""), item.get("amount", "")]
    csv.writer(buf, lineterminator="").writerow(row)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# junk: values that must never be accepted and never crash anything
# ---------------------------------------------------------------------------

BAD_TIMES = [math.nan, math.inf, -math.inf, 1e20, -1e20, 10**400, "noon", "NaN", None, True, [], {}, "1e999"]
BAD_AMOUNTS = [math.nan, math.inf, -math.inf, 10**400, "noon", "NaN", "1e999", None, True, [], {}]  # 1e20: clamped
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)
FIELDS = ("time", "op", "id", "region", "item", "seq")


@st.composite
def bad_record(draw):
    """A clean record with one field broken (or removed): never acceptable."""
    d = copy.deepcopy(draw(st.sampled_from(CLEAN[:6])))
    d["id"] = "junk-" + str(draw(st.integers(0, 10**6)))  # never an entry of the clean run
    which = draw(st.sampled_from(("time", "time", "op", "id", "region", "item", "item_field", "seq", "drop")))
    if which == "time":
        d["time"] = draw(st.sampled_from(BAD_TIMES) | json_values.filter(lambda v: not isinstance(v, (int, float))))
    elif which == "op":
        d["op"] = draw(json_values.filter(lambda v: v not in ("insert", "upsert", "delete")))
    elif which == "id":
        d["id"] = draw(st.sampled_from(["", None, True, 1.5, [], {}, 10**40]))
    elif which == "region":
        d["region"] = draw(json_values.filter(lambda v: v not in ("eu", "us")))
    elif which == "item":
        d["item"] = draw(json_values.filter(lambda v: not isinstance(v, dict)))
    elif which == "item_field":
        key = draw(st.sampled_from(("carrier", "amount")))
        bad = {"carrier": st.sampled_from(["ZZ", "", 1, None, []]), "amount": st.sampled_from(BAD_AMOUNTS)}[key]
        d["item"][key] = draw(bad)
        if d["item"][key] is None:
            del d["item"][key]
    elif which == "seq":
        d["seq"] = draw(st.sampled_from([1.5, "x", True, 2**70, -(2**70), [], {}]))
    else:
        del d[draw(st.sampled_from(("time", "op", "id", "region", "item")))]
    return d


def _dumps(d) -> str:
    return json.dumps(d, default=str)  # NaN / Infinity as JSON does it; 10**400 as an integer


junk_lines = st.one_of(
    bad_record().map(lambda d: _dumps(d).encode()),
    st.binary(max_size=30).filter(lambda b: b"\n" not in b and b"\r" not in b),
    json_values.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode()),
    st.dictionaries(st.sampled_from(("time", "id", "item", "region", "x")), json_values, max_size=4).map(
        lambda v: json.dumps(v).encode()  # no op: never acceptable
    ),
    st.sampled_from([b"{", b"[1,2", b"\xff\xfe", b"\x00", b'{"time": 1e400}', b"[" * 3000, b"1" * 5000]),
)


def _check_dead(cfg, reason, raw, stage):
    """A dead letter of ``raw``: a documented reason, valid JSON and Avro, the
    record as received."""
    assert reason in REASONS, reason
    d = dead_dict(cfg, DeadLetter(reason, raw, stage, None))
    text = json.dumps(d, allow_nan=False)  # valid JSON (no NaN)
    import fastavro

    assert fastavro.validation.validate(d, fastavro.parse_schema(schema("dead_letter")))
    if isinstance(raw, (bytes, str)) and d["encoding"] == "base64":
        assert base64.b64decode(d["record"]) == (
            raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
        )
    elif isinstance(raw, str):
        assert d["record"] == raw
    return text


@settings(max_examples=400, deadline=None)
@given(line=junk_lines, fmt=st.sampled_from(["jsonl", "csv"]))
def test_fuzz_every_parse_and_validation_step(line, fmt):
    """Arbitrary input at the parser (JSON lines and CSV), the validation step
    and the dead-letter formatting: no exception, a documented reason, a dead
    letter that is valid JSON and Avro and holds the line as received."""
    cfg = parse_config(_raw(Path("/tmp"), "x"))
    parser = RecordParser(cfg, HEADER if fmt == "csv" else None)
    if fmt == "csv":
        line = _as_csv(line)
    parsed = parser.parse(line)
    spec = StreamSpec(streams=("eu", "us"), tick_seconds=100, end_time=800)
    if parsed.reason is None:  # accepted by the parser: the validation step must reject it or pass it on
        reason, _ = UpdateCheck(spec, (1, 3, 101)).reason(parsed.record)
        assert reason is not None or fmt == "csv", (line, parsed.record)  # in CSV "True" is a fine id
        if reason is not None:
            _check_dead(cfg, reason, parsed.record.raw, "validate")
    else:
        _check_dead(cfg, parsed.reason, parsed.raw, "parse")


@settings(max_examples=300, deadline=None)
@given(
    payload=junk_lines
    | st.just(b'{"op": "insert", "id": "a", "region": "eu", "item": {"carrier": "AA", "amount": 1}}'),
    attrs=st.dictionaries(
        st.sampled_from(("ts", "update_id", "x")),
        st.sampled_from(["", "abc", "nan", "1e400", "-1", "99999999999999999999", "2026-13-01T00:00:00Z", "9" * 70])
        | st.text(max_size=10),
        max_size=3,
    ),
    publish=st.floats(0, 1e9),
)
def test_fuzz_pubsub_payloads_and_attributes(payload, attrs, publish):
    """Pub/Sub elements (payload, attributes, publish time) with the event time
    from a timestamp attribute: never an exception; an attribute that is not a
    time is ``bad_time`` (``missing_field`` when absent); a time too far past
    the publish time is ``too_far_in_future``."""
    raw = _raw(Path("/tmp"), "x")
    raw["source"] = {"type": "pubsub", "subscription": "projects/p/subscriptions/sub", "timestamp_attribute": "ts"}
    raw["time"].pop("end")
    cfg = parse_config(raw)
    parser = RecordParser(cfg, timestamp_attribute="ts", max_future_seconds=cfg.max_future_seconds)
    parsed = parser.parse(PubsubElement(payload, tuple(sorted(attrs.items())), publish))
    if "ts" not in attrs:
        assert parsed.reason in ("missing_field", "unparseable"), parsed
    if parsed.reason is None:
        ts = attrs["ts"]
        assert ts.strip().lstrip("-").isdigit() or "T" in ts or "-" in ts
        assert parsed.record.event_time <= publish + cfg.max_future_seconds
    else:
        d = json.loads(_check_dead(cfg, parsed.reason, parsed.raw, "parse"))
        assert d["attributes"] == {k: v for k, v in attrs.items()}


# ---------------------------------------------------------------------------
# whole batch pipelines with junk mixed in: releases equal to the clean run
# ---------------------------------------------------------------------------

_CLEAN_RUNS: dict = {}


def _write_source(folder: Path, fmt: str, records, junk=()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "avro":
        import fastavro

        schema = {
            "type": "record",
            "name": "U",
            "fields": [
                {"name": "time", "type": ["null", "double", "long", "string", "boolean"]},
                {"name": "op", "type": ["null", "string", "long"]},
                {"name": "id", "type": ["null", "string", "long", "double"]},
                {"name": "region", "type": ["null", "string", "long"]},
                {"name": "seq", "type": ["null", "long", "double", "string"]},
                {"name": "item", "type": ["null", "string",
                                          {"type": "map", "values": ["null", "string", "double", "long"]}]},
            ],
        }  # fmt: skip
        path = folder / "in.avro"
        with open(path, "wb") as fh:
            fastavro.writer(fh, fastavro.parse_schema(schema), list(records) + list(junk))
        return path
    path = folder / f"in.{fmt}"
    with open(path, "wb") as fh:
        if fmt == "csv":
            fh.write((",".join(HEADER) + "\n").encode())
            for d in records:
                fh.write((_csv_line(d) + "\n").encode())
        else:
            for d in records:
                fh.write((json.dumps(d) + "\n").encode())
        for line in junk:
            fh.write(line + b"\n")
    return path


def _clean_run(tmp_path_factory):
    """The releases of the clean input (the three formats give the same releases:
    tests/test_pipelines.py)."""
    if "clean" not in _CLEAN_RUNS:
        base = tmp_path_factory.mktemp("clean")
        src = _write_source(base / "src", "jsonl", CLEAN)
        assert _run_cli(base, _raw(base, src), "--runner=DirectRunner") == 0
        _CLEAN_RUNS["clean"] = _releases(base / "out")
    return _CLEAN_RUNS["clean"]


avro_junk = st.fixed_dictionaries(
    {
        "time": st.sampled_from([math.nan, math.inf, -math.inf, 1e300, -1e300, 2**62, "noon", True, None]),
        "op": st.sampled_from(["insert", "upsert", "delete", "x", None, 7]),
        "id": st.sampled_from(["j1", "j2", "", None, 3, 1.5]),
        "region": st.sampled_from(["eu", "us", "mars", None, 5]),
        "seq": st.sampled_from([0, 1, None, 2.5, "s"]),
        "item": st.sampled_from([None, "str", {"carrier": "AA", "amount": math.nan}, {"carrier": "QQ", "amount": 1.0}]),
    }
)


def draw(strategy):
    """A random example of a hypothesis strategy, for a pipeline run with many
    fuzzed records at once (a run costs seconds: one run with a random list,
    rather than hypothesis' search, whose first example is the simplest)."""
    import warnings

    from hypothesis.errors import NonInteractiveExampleWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        return strategy.example()


class _Data:
    def draw(self, strategy):
        return draw(strategy)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "avro"])
def test_fuzz_batch_pipeline_releases_equal_the_clean_run(fmt, tmp_path_factory):
    """Junk records (bad times such as NaN, 1e20 or 10**400, broken fields,
    bytes that are not UTF-8, JSON that is not an object, Avro values of any
    type) mixed into a clean input, in shuffled order: the run succeeds, every
    junk record is a dead letter with a documented reason, and the releases are
    exactly those of the clean run."""
    base = tmp_path_factory.mktemp(f"fuzz-{fmt}")
    data = _Data()
    if fmt == "avro":
        junk = data.draw(st.lists(avro_junk, min_size=10, max_size=25))
    else:
        junk = data.draw(st.lists(junk_lines, min_size=20, max_size=40))
        if fmt == "csv":  # CSV rows of broken records, and anything at all
            junk = [_as_csv(x) for x in junk]
            junk = [x for x in junk if b"\n" not in x and b"\r" not in x and b'"' not in x]
            # as text, some broken values are fine (an id "True"): keep what the parser refuses
            parser = RecordParser(parse_config(_raw(base, "x", "csv")), HEADER)
            junk = [x for x in junk if parser.parse(x).reason is not None]
    records = list(CLEAN)
    random.Random(data.draw(st.integers(0, 2**32))).shuffle(records)
    if fmt == "avro":
        records = [{**r, "item": r.get("item")} for r in records]
    src = _write_source(base / "src", fmt, records, junk)
    assert _run_cli(base, _raw(base, src, fmt), "--runner=DirectRunner") == 0
    assert _releases(base / "out") == _clean_run(tmp_path_factory)
    dead = _dead(base / "out-confidential")
    assert len(dead) == len(junk) and all(d["reason"] in REASONS for d in dead)


def _try_json(x):
    try:
        return json.loads(x)
    except (ValueError, RecursionError):
        return None


def _as_csv(line: bytes) -> bytes:
    """A broken JSON record as a CSV row of the test header (anything else as is)."""
    d = _try_json(line)
    if isinstance(d, dict) and {"time", "op", "id", "region"} <= set(d):
        return _csv_line({**d, "item": d.get("item") if isinstance(d.get("item"), dict) else {}}).encode()
    return line


# ---------------------------------------------------------------------------
# order and duplicates
# ---------------------------------------------------------------------------


def test_line_order_within_a_tick_never_changes_a_release(tmp_path):
    """No seq: an insert, upserts and a delete of one entry at distinct times in
    one tick, and an insert and delete at the same time, in every line order:
    the same releases (resolved by event time, then seq, then the update)."""
    lines = [
        {"time": 10, "op": "insert", "id": "a", "region": "eu", "item": {"carrier": "AA", "amount": 5}},
        {"time": 20, "op": "upsert", "id": "a", "region": "eu", "item": {"carrier": "B6", "amount": 6}},
        {"time": 30, "op": "upsert", "id": "a", "region": "eu", "item": {"carrier": "DL", "amount": 7}},
        {"time": 40, "op": "delete", "id": "c", "region": "eu"},
        {"time": 40, "op": "insert", "id": "c", "region": "eu", "item": {"carrier": "AA", "amount": 1}},
        {"time": 50, "op": "insert", "id": "b", "region": "eu", "item": {"carrier": "AA", "amount": 1}},
    ]
    outs = []
    for k, order in enumerate((lines[::-1], [lines[i] for i in (3, 1, 5, 0, 4, 2)])):
        src = tmp_path / f"in{k}.jsonl"
        src.write_text("".join(json.dumps(d) + "\n" for d in order))
        raw = _raw(tmp_path / f"r{k}", src)
        assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name=f"c{k}") == 0
        outs.append(_releases(tmp_path / f"r{k}" / "out"))
        assert _dead(tmp_path / f"r{k}" / "out-confidential") == []  # c: inserted, then deleted
    assert outs[0] == outs[1]
    tick1 = [json.loads(x) for x in outs[0] if json.loads(x)["tick"] == 1 and json.loads(x)["stream"] == "eu"]
    by = {r["query"]: r["estimate"] for r in tick1}
    assert by["active"] == 2 and by["by_carrier"] == {"AA": 1, "B6": 0, "DL": 1}


def test_file_dedup_drops_repeated_update_ids(tmp_path, capsys):
    """``source.dedup: {field: update_id}``: a repeated update (same id) is
    applied once and counted; without it, the repeat is a duplicate_insert."""
    rec = {"time": 10, "op": "insert", "id": "a", "region": "eu", "item": {"carrier": "AA", "amount": 5}}
    lines = [dict(rec, update_id="u1"), dict(rec, update_id="u1"), dict(rec, id="b", update_id="u2")]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in lines))
    raw = _raw(tmp_path / "d", src, dedup={"field": "update_id"})
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name="dedup") == 0
    assert "duplicates dropped:  1" in capsys.readouterr().out
    assert _dead(tmp_path / "d" / "out-confidential") == []
    raw = _raw(tmp_path / "n", src)
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name="nodedup") == 0
    assert [d["reason"] for d in _dead(tmp_path / "n" / "out-confidential")] == ["duplicate_insert"]
    assert _releases(tmp_path / "d" / "out") == _releases(tmp_path / "n" / "out")


def test_file_dedup_never_drops_a_record_for_another_that_only_shares_its_id(tmp_path, capsys):
    """Records that reuse six other records' update ids (other entries, with earlier times: the kept one under
    an id-only key) remove none of them: with ``source.dedup`` the releases (noise off) equal the run without
    it, and only the true repeat (the same line twice) is dropped. Keyed by the id alone, the six were dropped:
    one person's records decided whether other people's were applied (stop 51's audit: the person unit's exact
    loss 5.0 at a budget of 1.0 with six such records, 99 with a hundred)."""
    item = {"carrier": "AA", "amount": 5}
    victims = [
        {"time": 300 + i, "op": "insert", "id": f"v{i}", "region": "eu", "item": item, "update_id": f"u{i}"}
        for i in range(6)
    ]
    others = [dict(v, time=110 + i, id=f"m{i}", item={"carrier": "B6", "amount": 7}) for i, v in enumerate(victims)]
    lines = [*others, *victims, victims[2]]  # the last: a repeat of a victim's line
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in lines))
    raw = _raw(tmp_path / "d", src, dedup={"field": "update_id"})
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name="dedup") == 0
    assert "duplicates dropped:  1" in capsys.readouterr().out
    assert _dead(tmp_path / "d" / "out-confidential") == []
    raw = _raw(tmp_path / "n", src)
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name="nodedup") == 0
    assert [d["reason"] for d in _dead(tmp_path / "n" / "out-confidential")] == ["duplicate_insert"]
    assert _releases(tmp_path / "d" / "out") == _releases(tmp_path / "n" / "out")


# ---------------------------------------------------------------------------
# configuration, arguments and exit codes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda c: c.update(privacy=5), "privacy: must be a mapping such as {epsilon: 1.0}; got 5"),
        (lambda c: c.update(time="daily"), "time: must be a mapping"),
        (lambda c: c["streams"].update(keys="de"), "streams.keys: must be a list of stream keys such as [eu, us]"),
        (lambda c: c["streams"].update(field=["region"]), "streams.field: must be the name of the stream field"),
        (lambda c: c.update(streams={"keys": ["eu"]}), "streams.keys: does not apply without streams.field"),
        (lambda c: c.update(sinks=[]), "sinks: must be a non-empty list"),
        (lambda c: c.update(sinks={"type": "file"}), "sinks: must be a non-empty list"),
        (lambda c: c["privacy"].update(rho=0.5), "privacy.epsilon: give either privacy.epsilon"),
        (
            lambda c: (c["privacy"].pop("epsilon"), c["privacy"].update(rho=0.5, delta=1e-6)),
            "privacy.delta: does not apply with privacy.rho",
        ),
        (lambda c: c["privacy"].update(epsilon=1e6), "privacy.epsilon: must be between 1e-06 and 100"),
        (lambda c: c["privacy"].update(epsilon=float("nan")), "privacy.epsilon: must be a number"),
        (
            lambda c: (c["privacy"].pop("epsilon"), c["privacy"].pop("delta"), c["privacy"].update(rho=1e-12)),
            "privacy.rho: must be between 1e-10 and 10000",
        ),
        (lambda c: c["privacy"].update(max_mutations_per_entry=3), "privacy.max_mutations_per_entry: does not apply"),
        (lambda c: c["queries"][0].update(field="x"), "queries[0].field: does not apply to a count query"),
        (lambda c: c["queries"][1].update(lower=0), "queries[1].lower: does not apply to a histogram query"),
        (lambda c: c["queries"][2].update(domain=[1]), "queries[2].domain: does not apply to a sum query"),
        (lambda c: c["queries"][1].update(field=3), "queries[1].field: must be the name of an item field"),
        (lambda c: c["queries"][1].update(domain=[1, "1"]), "queries[1].domain: values must be distinct as text"),
        (lambda c: c["queries"][2].update(upper=1e300), "queries[2].upper: must be between 0 and 1e+15"),
        (lambda c: c["time"].update(origin=1e20, end=2e20), "time.origin: must be a time between 0001-01-01"),
        (lambda c: c["time"].update(end="10000-01-01"), "time.end: must be epoch seconds or an ISO-8601"),
        (lambda c: c["time"].update(tick_seconds=1e12), "time.tick_seconds: must be between"),
        (lambda c: c["time"].update(field=7), "time.field: must be the name of the time field"),
        (lambda c: c["sinks"][0].update(window_seconds=5), "sinks[0].window_seconds: does not apply to a file"),
        (lambda c: c["sinks"][0].update(path=None), "sinks[0].path: must be a folder path"),
        (lambda c: c["source"].update(max_dead_letter_fraction=2), "source.max_dead_letter_fraction: must be between"),
        (lambda c: c["source"].update(dedup="update_id"), "source.dedup: must be a mapping such as {field: update_id}"),
        (lambda c: c["source"].update(max_future_seconds=5), "source: unknown key(s) max_future_seconds"),
        (
            lambda c: c["mechanism"].update(kind="net_change", horizon=10),
            "mechanism.horizon: 10 runs out before time.end (the release has 1152 periods",
        ),
        (
            lambda c: (
                c["time"].pop("end"),
                c.update(source={"type": "pubsub", "subscription": "projects/p/subscriptions/sub"}),
                c["mechanism"].update(kind="net_change", counter="sqrt_factorization"),
            ),
            "mechanism.counter: sqrt_factorization needs a horizon",
        ),
    ],
)
def test_bad_configurations_name_the_key(mutate, message):
    """Type errors, keys that do not apply, out-of-range budgets and times,
    inconsistent counters and horizons: ConfigError naming the key."""
    raw = copy.deepcopy(DEMO)
    mutate(raw)
    with pytest.raises(ConfigError) as e:
        check_mechanism(parse_config(raw))
    assert message in str(e.value)


def _avro_file(path, n=50):
    import fastavro

    with open(path, "wb") as fh:
        fastavro.writer(fh, fastavro.parse_schema(schema("update")), [
            {"time": float(i), "op": "insert", "id": f"a{i}", "item": {"carrier": "AA", "amount": 1.0},
             "stream": "eu", "seq": 0} for i in range(n)])  # fmt: skip


@pytest.mark.parametrize(
    "case,message",
    [
        ("no_file", "source.path: no file matches"),
        ("empty_csv", "is empty; a CSV source needs a header row"),
        ("headerless_csv", "the first row must be a header naming the columns time, op, id"),
        ("truncated_avro", "is not a complete Avro file"),
        ("unwritable_sink", "sinks[0].path: cannot write to"),
        ("bad_hex_key", "privacy.noise_key.env: the variable DP_TEST_KEY does not hold a hex key"),
        ("short_key", "the key in the variable DP_TEST_KEY is 4 bytes; it must be at least 16"),
        ("missing_key_file", "privacy.noise_key.file: cannot read"),
        ("secret_without_credentials", "privacy.noise_key.secret: cannot read projects/p/secrets/k/versions/1"),
        ("positional", "unexpected argument 'configs/demo.yaml': give the configuration as --config PATH"),
        ("typo_flag", "unknown argument --confg (did you mean --config?)"),
        ("no_end", "the input's event times run from"),
    ],
)
def test_cli_fails_fast_with_one_line(case, message, tmp_path, capsys, monkeypatch):
    """What only the launch can check (files, formats, sinks, keys, arguments)
    fails before the pipeline starts: exit 2, one line, no traceback."""
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(CLEAN[0]) + "\n")
    raw = _raw(tmp_path, src)
    args = ["--runner=DirectRunner"]
    monkeypatch.delenv("DP_TEST_KEY", raising=False)
    if case == "no_file":
        raw["source"]["path"] = str(tmp_path / "nothing*.jsonl")
    elif case in ("empty_csv", "headerless_csv"):
        src = tmp_path / "in.csv"
        src.write_text("" if case == "empty_csv" else _csv_line(CLEAN[0]) + "\n")
        raw["source"].update(path=str(src), format="csv")
    elif case == "truncated_avro":
        src = tmp_path / "in.avro"
        _avro_file(src, 2000)
        src.write_bytes(src.read_bytes()[:-100])
        raw["source"].update(path=str(src), format="avro")
    elif case == "unwritable_sink":
        (tmp_path / "blocker").write_text("a file, not a folder")
        raw["sinks"][0]["path"] = str(tmp_path / "blocker" / "out")
    elif case in ("bad_hex_key", "short_key"):
        raw["privacy"].pop("disable_noise")
        raw["privacy"]["noise_key"] = {"env": "DP_TEST_KEY"}
        monkeypatch.setenv("DP_TEST_KEY", "not hex" if case == "bad_hex_key" else "00112233")
    elif case == "missing_key_file":
        raw["privacy"].pop("disable_noise")
        raw["privacy"]["noise_key"] = {"file": str(tmp_path / "no-key.hex")}
    elif case == "secret_without_credentials":
        raw["privacy"].pop("disable_noise")
        raw["privacy"]["noise_key"] = {"secret": "projects/p/secrets/k/versions/1"}
        import sys
        import types

        class _NoCredentials:
            def __init__(self):
                raise RuntimeError("no credentials")

        fake = types.ModuleType("secretmanager")
        fake.SecretManagerServiceClient = _NoCredentials
        monkeypatch.setitem(sys.modules, "google.cloud.secretmanager", fake)
        import google.cloud

        monkeypatch.setattr(google.cloud, "secretmanager", fake, raising=False)
    elif case == "positional":
        args.insert(0, "configs/demo.yaml")
    elif case == "typo_flag":
        args += ["--confg", "x.yaml"]
    elif case == "no_end":
        raw["time"].pop("end")
    assert _run_cli(tmp_path, raw, *args) == 2
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.startswith("configuration error:")]
    assert len(lines) == 1 and message in err, err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("out/releases*"))  # nothing ran


def test_all_rejected_or_too_many_dead_letters_exit_3(tmp_path, capsys):
    """A histogram field missing from every record: exit 3 naming the top
    reason; over max_dead_letter_fraction: exit 3; under it: 0."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({**d, "item": {"amount": 1}}) + "\n" for d in CLEAN if d["op"] != "delete"))
    assert _run_cli(tmp_path, _raw(tmp_path / "a", src), "--runner=DirectRunner", name="all") == 3
    err = capsys.readouterr().err
    assert "error: dead letters: the run rejected every record" in err and "top reasons: missing_field" in err
    src.write_text("".join(json.dumps(d) + "\n" for d in CLEAN) + "not json\n" * 10)
    raw = _raw(tmp_path / "b", src, max_dead_letter_fraction=0.1)
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name="some") == 3
    assert "more than source.max_dead_letter_fraction = 0.1" in capsys.readouterr().err
    raw = _raw(tmp_path / "c", src, max_dead_letter_fraction=0.5)
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner", name="fine") == 0


def test_a_failed_pipeline_exits_non_zero_without_the_payload(tmp_path, capsys, monkeypatch):
    def boom(self, element):
        raise RuntimeError("SECRET-PAYLOAD")

    monkeypatch.setattr(RecordParser, "parse", boom)
    monkeypatch.setattr(wiring, "line_records", lambda parser: lambda element: None)  # the JSON-lines shortcut
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(CLEAN[0]) + "\n")
    assert _run_cli(tmp_path, _raw(tmp_path, src), "--runner=DirectRunner") == 1
    captured = capsys.readouterr()
    assert "pipeline failed (" in captured.err
    assert "SECRET-PAYLOAD" not in captured.err.splitlines()[-1]


# ---------------------------------------------------------------------------
# dead letters replayed; units; tools
# ---------------------------------------------------------------------------


def test_dead_letters_hold_the_record_and_replay_re_emits_the_fixable(tmp_path, capsys):
    """Rejected at every stage (parse, validate, registry), each dead letter
    holds the record as received (base64 for bytes that are not UTF-8), its
    stage and stream; replay re-emits the fixable ones byte for byte, not the
    final ones (after_end, constraint_exceeded)."""
    from pipelines import replay

    good = {"time": 10, "op": "insert", "id": "a", "region": "eu", "item": {"carrier": "AA", "amount": 5}}
    lines = [
        json.dumps(good).encode(),
        json.dumps({**good, "item": {"carrier": "ZZ", "amount": 5}}).encode(),  # not_in_domain (parse)
        json.dumps({**good, "id": "b", "time": 5000}).encode(),  # after_end (validate): final
        json.dumps({**good, "op": "delete", "id": "ghost"}).encode(),  # unknown_entry (registry)
        b"\xff\xfebinary",  # unparseable, base64
    ]
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n")
    raw = _raw(tmp_path, src)
    raw["sinks"].append({"type": "file", "path": str(tmp_path / "avro"), "format": "avro"})
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner") == 0
    dead = {d["reason"]: d for d in _dead(tmp_path / "out-confidential")}
    assert set(dead) == {"not_in_domain", "after_end", "unknown_entry", "unparseable"}
    assert dead["not_in_domain"]["record"] == lines[1].decode() and dead["not_in_domain"]["stage"] == "parse"
    assert dead["after_end"]["stage"] == "validate" and dead["after_end"]["stream"] == "eu"
    assert dead["unknown_entry"]["record"] == lines[3].decode() and dead["unknown_entry"]["stage"] == "registry"
    assert dead["unparseable"]["encoding"] == "base64"
    assert base64.b64decode(dead["unparseable"]["record"]) == lines[4]
    out = tmp_path / "replay.jsonl"
    for pattern in (
        str(tmp_path / "out-confidential" / "dead_letters*"),
        str(tmp_path / "avro-confidential" / "*.avro"),
    ):
        assert replay.main([pattern, "--out", str(out)]) == 0
        assert sorted(out.read_bytes().splitlines()) == sorted([lines[1], lines[3], lines[4]])
    assert "replayed 3 of 4 dead letters" in capsys.readouterr().err
    assert replay.main([str(tmp_path / "nothing*")]) == 2


def test_summary_and_records_report_spend_in_the_configured_units(tmp_path, capsys):
    """(epsilon, delta) with an entry-level unit and Gaussian noise: the records
    carry epsilon_spent / delta_spent for the entry level (within the target),
    rho_spent, and update_level_spent labelled; the summary says the same and
    which counts are exact. A mechanism accounted by group privacy (the two-stream
    baseline: net_change and auto calibrate to the entry's contribution instead
    and state no update-level figure, issue 28)."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in CLEAN))
    raw = _raw(tmp_path, src)
    raw["privacy"] = {"epsilon": 1.0, "delta": 1e-6, "unit": "entry", "max_mutations_per_entry": 2}
    raw["mechanism"] = {"kind": "two_stream_baseline"}
    os.environ.setdefault("DP_NOISE_KEY", bytes(range(32)).hex())
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner") == 0
    out = capsys.readouterr().out
    recs = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    last = max(recs, key=lambda r: r["tick"])
    assert 0 < last["epsilon_spent"] <= 1.0 + 1e-9 and last["delta_spent"] == 1e-6
    rho_u = last["update_level_spent"]["rho"]
    assert last["rho_spent"] == pytest.approx(9 * rho_u)  # group of 2k - 1 = 3 updates: 3^2 rho
    assert "budget spent:        epsilon" in out and "delta 1e-06" in out and "privacy unit 'entry" in out
    assert "update-level equivalent (the ledger's charge): rho" in out
    assert "counts of this run: exact" in out and "an upsert counts as 2" in out


def test_signed_sums_and_the_clamp_counter(tmp_path, capsys):
    """A sum with a negative lower bound releases the signed sum exactly (noise
    off); values outside [lower, upper] are clamped and counted."""
    src = tmp_path / "in.jsonl"
    vals = [-40, 25, -3, 500]  # 500 is clamped to 50
    src.write_text(
        "".join(
            json.dumps({"time": 10 + i, "op": "insert", "id": f"v{i}", "region": "eu", "item": {"x": v}}) + "\n"
            for i, v in enumerate(vals)
        )
    )
    raw = _raw(tmp_path, src)
    raw["queries"] = [{"name": "s", "type": "sum", "field": "x", "lower": -50, "upper": 50}]
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner") == 0
    out = capsys.readouterr().out
    assert "sum values clamped:  1  {'s': 1}" in out
    recs = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    eu = [r for r in recs if r["stream"] == "eu" and r["tick"] == 8]
    assert eu and eu[0]["estimate"] == pytest.approx(-40 + 25 - 3 + 50, abs=1e-3)


def test_recompute_reads_avro_and_fails_clearly(tmp_path, capsys, monkeypatch):
    """Node files in Avro recompute the releases; a glob matching nothing, a
    foreign file and a bad config are one-line errors (exit 2)."""
    from pipelines import recompute as rc

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in CLEAN))
    raw = _raw(tmp_path, src)
    raw["privacy"].pop("disable_noise")
    raw["mechanism"] = {"kind": "fully_dynamic"}
    raw["release"] = {"every_ticks": 1, "clamp": False}  # recomputation rebuilds the unclamped answers
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "avro"}]
    monkeypatch.setenv("DP_NOISE_KEY", bytes(range(32)).hex())
    assert _run_cli(tmp_path, raw, "--runner=DirectRunner") == 0
    import fastavro

    released = {}
    for f in (tmp_path / "out").glob("releases*.avro"):
        with open(f, "rb") as fh:
            for r in fastavro.reader(fh):
                released[(r["stream"], r["tick"], r["query"])] = r["estimate"]
    out = tmp_path / "re.jsonl"
    cfg = str(tmp_path / "cfg.yaml")
    assert rc.main(["--config", cfg, "--nodes", str(tmp_path / "out" / "nodes*.avro"), "--out", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows
    for r in rows:
        expect = released[(r["stream"], r["tick"], r["query"])]
        assert r["estimate"] == pytest.approx(expect, abs=1e-6)
    assert rc.main(["--config", cfg, "--nodes", str(tmp_path / "none*.avro")]) == 2
    (tmp_path / "junk.jsonl").write_text("not json\n")
    assert rc.main(["--config", cfg, "--nodes", str(tmp_path / "junk.jsonl")]) == 2
    assert rc.main(["--config", str(tmp_path / "missing.yaml"), "--nodes", str(tmp_path / "junk.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "no file matches" in err and "is not JSON" in err and "does not exist" in err and "Traceback" not in err


def test_cli_passes_flink_checkpoint_options_and_finishes_bundles_before_checkpoints():
    """Flink's checkpoint and restart options (not declared by Beam's Python SDK) are accepted by the CLI and
    reach the job server; a checkpointed Flink run gets ``--finish_bundle_before_checkpointing`` added (without
    it Beam's Flink operator releases late or never: docs/flink.md), other runners and uncheckpointed runs are
    left alone, and a misspelt option is still refused."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipelines.config import ConfigError
    from pipelines.release import check_cli_args, flink_checkpoint_args

    args = ["--runner=FlinkRunner", "--checkpointing_interval=500", "--number_of_execution_retries=2"]
    check_cli_args([*args, "--execution_retry_delay=500", "--savepoint_path=/tmp/sp"])
    check_cli_args(["--max_bundle_time_mills=100", "--max_bundle_size=500"])  # stop 52: Beam's names
    with pytest.raises(ConfigError, match="did you mean --max_bundle_time_mills"):
        check_cli_args(["--max_bundle_time_ms=100"])  # the name docs/flink.md used to give (never sent)
    with pytest.raises(ConfigError, match="did you mean --checkpointing_interval"):
        check_cli_args(["--checkpointing_intervall=500"])
    added = flink_checkpoint_args(args, "FlinkRunner")
    assert added == [*args, "--finish_bundle_before_checkpointing"]
    assert flink_checkpoint_args(added, "FlinkRunner") == added
    assert flink_checkpoint_args(args, "DirectRunner") == args
    assert flink_checkpoint_args(["--runner=FlinkRunner"], "FlinkRunner") == ["--runner=FlinkRunner"]
    sent = PipelineOptions(added).get_all_options()
    assert (sent["checkpointing_interval"], sent["finish_bundle_before_checkpointing"]) == (500, True)
    assert sent["number_of_execution_retries"] == 2 and sent["savepoint_path"] is None  # None: not sent
    assert PipelineOptions(["--max_bundle_time_mills=100"]).get_all_options()["max_bundle_time_mills"] == 100


# ---------------------------------------------------------------------------
# the person unit (issue 28): the privacy id is read into the record, never into its item
# ---------------------------------------------------------------------------

PERSON = yaml.safe_load((ROOT / "configs" / "demo_person.yaml").read_text())
PERSON_HEADER = ("time", "op", "id", "region", "customer", "carrier", "amount")
_BOOKING = {"time": 5.0, "op": "insert", "id": "b1", "item": {"carrier": "AA", "amount": 5}, "region": "eu"}


@pytest.mark.parametrize(
    "person,reason,expected",
    [
        (100017, None, "100017"),  # an integer id as its decimal text (as entry ids are)
        ("c-9", None, "c-9"),
        (10**40, "malformed", None),
        (True, "malformed", None),
        ("", "malformed", None),
        ([1], "malformed", None),
        ({"a": 1}, "malformed", None),
        (1.5, "malformed", None),
    ],
)
def test_the_person_field_is_read_into_the_record_never_into_its_item(person, reason, expected):
    cfg = parse_config(copy.deepcopy(PERSON))
    parsed = RecordParser(cfg, None).parse(json.dumps({**_BOOKING, "customer": person}))
    assert parsed.reason == reason
    if reason is None:
        assert (
            parsed.record.person == expected
            and parsed.record.item
            == RecordParser(cfg, None).parse(json.dumps(_BOOKING | {"customer": "other"})).record.item
        )  # the item is the booking's, whoever the person
    # without the field: missing_field; the same field inside the item does not count
    assert RecordParser(cfg, None).parse(json.dumps(_BOOKING)).reason == "missing_field"
    nested = {**_BOOKING, "item": {**_BOOKING["item"], "customer": 100017}}
    assert RecordParser(cfg, None).parse(json.dumps(nested)).reason == "missing_field"
    # CSV: a column of the header, not an item field
    csv_parser = RecordParser(cfg, PERSON_HEADER)
    row = csv_parser.parse("5.0,insert,b1,eu,100017,AA,5")
    assert row.reason is None and row.record.person == "100017"
    assert row.record.item == RecordParser(cfg, None).parse(json.dumps({**_BOOKING, "customer": 1})).record.item


@settings(max_examples=200, deadline=None)
@given(person=json_values, fmt=st.sampled_from(["jsonl", "csv"]))
@example(person="\n", fmt="csv")  # CI, stop 44: a raw line break (csv.writer with lineterminator="" leaves it bare)
@example(person="a\rb", fmt="csv")
def test_fuzz_the_person_field(person, fmt):
    """Any value of the person field: no exception; accepted only as a non-empty text id, else a dead letter
    ``missing_field`` / ``malformed`` (valid JSON and Avro, the line as received); a CSV line whose person text
    holds a raw line break is not one CSV record: ``unparseable``."""
    cfg = parse_config(copy.deepcopy(PERSON))
    if fmt == "csv":
        row = [5.0, "insert", "b1", "eu", person if isinstance(person, (str, int, float)) else json.dumps(person)]
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(row + ["AA", 5])
        line = buf.getvalue()
        parser = RecordParser(cfg, PERSON_HEADER)
    else:
        line = _dumps({**_BOOKING, "customer": person})
        parser = RecordParser(cfg, None)
    parsed = parser.parse(line)
    if parsed.reason is None:
        assert isinstance(parsed.record.person, str) and parsed.record.person
    else:
        broken_line = fmt == "csv" and isinstance(person, str) and ("\n" in person or "\r" in person)
        allowed = ("missing_field", "malformed") + (("unparseable",) if broken_line else ())
        assert parsed.reason in allowed, parsed.reason
        _check_dead(cfg, parsed.reason, parsed.raw, "parse")
