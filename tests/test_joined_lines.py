"""A bounded file sink writes its lines joined a thousand at a time (``pipelines.io.lines.JoinedLines``): the
shards hold the same bytes, in the same order, as when every line is an element of ``WriteToText`` (JSON lines,
and CSV rows whose fields hold newlines), bundle ends included; the twin (a bundle's last lines dropped) fails."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import apache_beam as beam
import pytest

import pipelines.io.files as files
import pipelines.io.lines as lines
from pipelines.io.files import write_files

FNAPI = "apache_beam.runners.portability.fn_api_runner.FnApiRunner"


class _OneLineEach(beam.DoFn):
    """What the sink did before: one element per line."""

    def __init__(self, to_line):
        self.to_line = to_line

    def process(self, element):
        yield self.to_line(element)


class _DropsTheBundleEnd(lines.JoinedLines):
    def finish_bundle(self):
        self._lines = []
        return iter(())


def _records(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append(
            {
                # a newline in a field: a quoted multi-line CSV row (JSON escapes it)
                "stream": "e\nu" if i % 7 == 0 else "eu" if i % 3 else "us",
                "tick": i,
                "query": "by_carrier",
                "estimate": {"AA": i * 0.5, "B6": -1.25},
                "error_bound": 3.5,
            }
        )
    return out


def _write(tmp_path: Path, name: str, records: list, csv_schema=None, bundles: int = 1) -> dict:
    out = tmp_path / name
    with beam.Pipeline(runner=FNAPI) as p:
        parts = [
            p | f"Create{k}" >> beam.Create(records[k::bundles], reshuffle=False) for k in range(bundles)
        ]  # one bundle each
        pcoll = parts[0] if bundles == 1 else parts | beam.Flatten()
        write_files(pcoll, str(out), "releases", "releases0", False, 60.0, None, csv_schema)
    return {f.name: f.read_bytes() for f in sorted(out.iterdir())}


def _rows(shards: dict, csv_schema) -> list:
    """Every record of the shards, sorted (a runner orders the bundles of a stage as it likes)."""
    text = b"".join(shards.values()).decode()
    if csv_schema is None:
        return sorted(text.splitlines())
    return sorted(tuple(r) for body in shards.values() for r in csv.reader(io.StringIO(body.decode(), newline="")))


@pytest.mark.parametrize("csv_schema", [None, "release"])
@pytest.mark.parametrize("n", [0, 1, 5, 2500])
def test_the_shards_hold_the_bytes_of_one_line_per_element(tmp_path, monkeypatch, csv_schema, n):
    """One bundle: the same bytes in the same order; three bundles: the same records (their order across
    bundles is the runner's, as before)."""
    records = _records(n)
    monkeypatch.setattr(lines, "JOINED_LINES", 4)  # many joined elements, and a bundle end that is not full
    new = _write(tmp_path, "new", records, csv_schema)
    new3 = _write(tmp_path, "new3", records, csv_schema, bundles=3)
    monkeypatch.setattr(files, "JoinedLines", _OneLineEach)
    old = _write(tmp_path, "old", records, csv_schema)
    old3 = _write(tmp_path, "old3", records, csv_schema, bundles=3)
    assert new == old and len(new) == 1
    assert _rows(new3, csv_schema) == _rows(old3, csv_schema) and len(new3) == len(old3)
    if csv_schema is None:
        assert sorted(json.loads(x)["tick"] for x in _rows(new3, None)) == list(range(n))
    else:  # a header a shard, and every record
        assert len(_rows(new3, csv_schema)) == n + len(new3)


def test_the_default_join_writes_every_line(tmp_path):
    records = _records(3000)  # 1,024 a join: two full joins and a bundle end
    got = _write(tmp_path, "d", records)
    body = b"".join(got.values()).decode()
    assert body.endswith("\n") and sorted(json.loads(x)["tick"] for x in body.splitlines()) == list(range(3000))


def test_the_check_fails_when_a_bundle_loses_its_last_lines(tmp_path, monkeypatch):
    records = _records(10)
    monkeypatch.setattr(lines, "JOINED_LINES", 4)
    monkeypatch.setattr(files, "JoinedLines", _DropsTheBundleEnd)
    new = _write(tmp_path, "new", records)
    monkeypatch.setattr(files, "JoinedLines", _OneLineEach)
    assert new != _write(tmp_path, "old", records)


def test_wide_lines_are_joined_fewer_at_a_time(monkeypatch):
    """A join ends once its lines hold ``JOINED_CHARS`` characters (dead letters carry records of any width): each
    element is at most that and one line more, and the lines are all there, in order."""
    monkeypatch.setattr(lines, "JOINED_CHARS", 1000)
    fn = lines.JoinedLines(str)
    fn.start_bundle()
    texts = [("x" * (i * 37 % 400)) + str(i) for i in range(300)]
    out = [e for t in texts for e in fn.process(t)]
    out += [wv.value for wv in fn.finish_bundle()]
    assert "\n".join(out) == "\n".join(texts)
    # (a join holds at least 1,000 characters but the last: without the limit, one element of 300 lines)
    assert 40 <= len(out) <= sum(map(len, texts)) // 1000 + 1 and max(len(e) for e in out) < 1000 + 400 + 3
