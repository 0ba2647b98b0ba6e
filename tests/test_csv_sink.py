"""The file sink's ``format: csv`` (``pipelines/io/csv_out.py``): the CSV rows are the JSON lines records of the
same run (releases, node outputs, dead letters), bounded and windowed (streaming), staged like the other formats;
what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import apache_beam as beam
import pytest
import yaml

from pipelines.cli import main as cli_main
from pipelines.config import ConfigError, parse_config
from pipelines.io.csv_out import csv_columns, csv_row, read_csv
from pipelines.io.files import schema, write_files

ROOT = Path(__file__).resolve().parent.parent
KEY = "3c" * 32

CONFIG = {
    "privacy": {"epsilon": 1.0, "delta": 0.0},
    "time": {"field": "time", "tick_seconds": 60, "origin": 0, "end": 600},
    "streams": {"field": "region", "keys": ["eu", "us"]},
    "mechanism": {"kind": "fully_dynamic"},  # publishes its tree: node outputs to compare too
    "queries": [
        {"name": "active", "type": "count"},
        {"name": "by_carrier", "type": "histogram", "field": "carrier", "domain": ["AA", "DL"]},
    ],
}
UPDATES = [
    '{"time": 5.5, "op": "insert", "id": "a", "item": {"carrier": "AA"}, "region": "eu"}',
    '{"time": 70.0, "op": "insert", "id": "b", "item": {"carrier": "DL"}, "region": "us"}',
    '{"time": 130.0, "op": "upsert", "id": "a", "item": {"carrier": "DL"}, "region": "eu"}',
    '{"time": 200.0, "op": "delete", "id": "b", "region": "us"}',
    '{"time": 210.0, "op": "truncate", "id": "c,\\"quoted\\"", "region": "eu"}',  # a dead letter: commas, quotes
    'not json, "at all"',  # and one that is no JSON
]

OUTPUTS = (("releases", "release", ""), ("nodes", "node", ""), ("dead_letters", "dead_letter", "-confidential"))


def _key(d: dict) -> str:
    return json.dumps(d, sort_keys=True)


def _jsonl(folder: Path, name: str) -> list[dict]:
    return [json.loads(x) for f in sorted(folder.glob(f"{name}-*.jsonl")) for x in f.read_text().splitlines()]


def _csv(folder: Path, name: str, avro: str) -> list[dict]:
    files = sorted(folder.glob(f"{name}-*.csv"))
    assert files, f"no {name} CSV in {folder}"
    for f in files:  # a header line naming the schema's fields, in order
        assert f.read_text().split("\n", 1)[0] == ",".join(csv_columns(schema(avro)))
    return [r for f in files for r in read_csv(str(f), schema(avro))]


def test_csv_rows_are_the_jsonl_records_of_the_same_run(tmp_path, monkeypatch):
    """One run, two sinks (jsonl and csv): every output's CSV rows, read back, equal its JSON lines records, in
    number and in every field (doubles exactly), the dead letters' raw records (commas, quotes) included; the
    bounded run's files appear only when it completes (staged), with the release manifest."""
    data = tmp_path / "in.jsonl"
    data.write_text("".join(u + "\n" for u in UPDATES))
    cfg = {
        **CONFIG,
        "source": {"type": "file", "path": str(data)},
        "sinks": [
            {"type": "file", "path": str(tmp_path / "j") + "/", "format": "jsonl"},
            {"type": "file", "path": str(tmp_path / "c") + "/", "format": "csv"},
        ],
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    monkeypatch.setenv("DP_NOISE_KEY", KEY)
    assert cli_main(["--config", str(path), "--release-id", "csv-vs-jsonl"]) == 0
    for name, avro, side in OUTPUTS:
        want = _jsonl(tmp_path / f"j{side}", name)
        got = _csv(tmp_path / f"c{side}", name, avro)
        assert want, name
        columns = csv_columns(schema(avro))
        assert all(set(w) <= set(columns) for w in want)  # no field of a record is missing from the columns
        want = [{**dict.fromkeys(columns), **w} for w in want]  # a JSON lines record leaves some nulls out
        assert sorted(got, key=_key) == sorted(want, key=_key), name
    assert (tmp_path / "c-confidential" / "release_manifest.json").is_file()
    assert not list(tmp_path.glob("*staging*")) and not list(tmp_path.glob(".*staging*"))
    # pipelines.results reads the CSV sink's folder to the same DataFrame as the JSON lines one
    pd = pytest.importorskip("pandas")
    from pipelines.results import read_releases

    frames = [read_releases(str(tmp_path / side)) for side in ("j", "c")]
    frames = [f.sort_values(["stream", "query", "cell", "tick"]).reset_index(drop=True) for f in frames]
    assert len(frames[0]) > 0
    pd.testing.assert_frame_equal(frames[0], frames[1])


def test_windowed_csv_files_hold_the_records(tmp_path):
    """Streaming writes one CSV file per window and firing (``fileio.WriteToFiles``), each with its header."""
    records = [
        {"reason": "unparseable", "record": 'a,"b"\nc', "encoding": "text", "stage": "parse", "stream": None,
         "attributes": {"k": "v"}, "format": "jsonl", "release_id": "r-123456"},
        {"reason": "unknown_op", "record": "{}", "encoding": "text", "stage": "parse", "stream": "eu",
         "attributes": None, "format": "jsonl", "release_id": "r-123456"},
    ]  # fmt: skip
    with beam.Pipeline() as p:
        pcoll = (
            p
            | beam.Create([(0, records[0]), (500, records[1])])
            | beam.Map(lambda tr: beam.window.TimestampedValue(tr[1], tr[0]))
        )
        write_files(pcoll, str(tmp_path), "dead_letters", "d", True, 60.0, None, "dead_letter")
    files = sorted(tmp_path.glob("dead_letters-*.csv"))
    assert len(files) == 2  # two windows
    got = [r for f in files for r in read_csv(str(f), schema("dead_letter"))]
    assert sorted(got, key=_key) == sorted(records, key=_key)


def test_csv_row_never_drops_a_field():
    columns = csv_columns(schema("release"))
    with pytest.raises(ValueError, match="surplus"):
        csv_row(columns, {"stream": "eu", "surplus": 1})
    assert csv_row(columns[:3], {"stream": "e,u", "tick": 1}) == '"e,u",1,'


def test_a_field_with_a_line_break_is_quoted(tmp_path):
    """A field holding LF, CR or CR LF (a dead letter's record: a lone CR stays in a line) is quoted, so the row
    reads back whole (it was written bare, and split the row for every reader)."""
    columns = csv_columns(schema("dead_letter"))
    records = [
        {"reason": "unparseable", "stage": "parse", "record": text} for text in ("a\nb", "c\rd", "e\r\nf", "g,h")
    ]
    path = tmp_path / "d.csv"
    lines = [",".join(columns)] + [csv_row(columns, r) for r in records]
    path.write_text("\n".join(lines) + "\n", newline="")
    back = read_csv(str(path), schema("dead_letter"))
    assert [r["record"] for r in back] == ["a\nb", "c\rd", "e\r\nf", "g,h"]
    assert csv_row(columns, records[3]).count('"g,h"') == 1 and "\n" not in csv_row(columns, {"reason": "x"})


def test_csv_is_refused_for_the_local_dp_collector():
    raw = yaml.safe_load((ROOT / "configs" / "local_dp.yaml").read_text())
    raw["sinks"] = [{"type": "file", "path": "out/", "format": "csv"}]
    with pytest.raises(ConfigError, match=r"sinks\[0\]\.format: csv is not available for a local-DP collector"):
        parse_config(raw)
    raw["sinks"] = [{"type": "file", "path": "out/", "format": "tsv"}]
    with pytest.raises(ConfigError, match="sinks"):
        parse_config(raw)
