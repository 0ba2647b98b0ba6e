"""A file source's lines read in chunks (``pipelines.io.lines``, issue 30, docs/performance.md "Stop 64").

The release CLI reads a JSON-lines or CSV file source as lists of lines (``FileSource.read_chunks``) and its parse
step loops over each list. Nothing a user sees may change: the chunks hold exactly the lines ``ReadFromText`` of
the same file gives (every line once, whatever the bundles and chunk sizes; line separators, empty lines, bytes
that are not UTF-8, compression, a CSV header, a glob of files), and a run's every output (releases, dead
letters of every stage with their records as received, the counters the summary prints) equals the run that
reads line by line. Each check has a broken twin that must fail.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
from pathlib import Path

import apache_beam as beam
import pytest
import yaml
from apache_beam.testing.util import assert_that, equal_to

import pipelines.cli as cli
import pipelines.io.lines as lines
import pipelines.wiring as wiring
from pipelines.demo_data import generate
from pipelines.io.files import FileSource
from pipelines.io.lines import ReadLineChunks, text_source
from pipelines.release import main
from transforms.records import UpdateRecord
from transforms.spec import StreamSpec
from transforms.validate import UpdateCheck, ValidateFn

ROOT = Path(__file__).resolve().parents[1]
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())

# lines ReadFromText splits in its own ways: CRLF, a lone CR (not a separator), empty lines, bytes that are not
# UTF-8, a last line without a newline
_RAW = (
    b'{"a": 1}\r\n'
    b"\n"
    b'{"b": 2}\rstill b\n'
    b"\xff\xfe not utf-8\n"
    b"\r\n" + b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * (i % 17)) for i in range(300)) + b'{"last": true}'
)


def _write(tmp_path: Path, kind: str) -> tuple[str, int]:
    """A source file (or glob) of ``kind``: (path, header lines to skip)."""
    if kind == "plain":
        (tmp_path / "in.jsonl").write_bytes(_RAW)
        return str(tmp_path / "in.jsonl"), 0
    if kind == "gzip":
        (tmp_path / "in.jsonl.gz").write_bytes(gzip.compress(_RAW))
        return str(tmp_path / "in.jsonl.gz"), 0
    if kind == "csv":
        (tmp_path / "in.csv").write_bytes(b"time,op,id\n" + b"".join(b"%d,insert,e%d\n" % (i, i) for i in range(200)))
        return str(tmp_path / "in.csv"), 1
    (tmp_path / "a.jsonl").write_bytes(_RAW)
    (tmp_path / "b.jsonl").write_bytes(b'{"other": 1}\n{"other": 2}\n')
    return str(tmp_path / "*.jsonl"), 0


def _checked_chunk(chunk: list, size: int) -> list:
    assert type(chunk) is list and 0 < len(chunk) <= size, len(chunk)
    return chunk


def _same(want: list, got: list) -> tuple[bool, int]:
    return sorted(want) == sorted(got), len(want)


def _check(path: str, skip: int, chunk, bundle_bytes, at_least: int = 200) -> None:
    """ReadLineChunks' lines of ``path`` equal ReadFromText's (as multisets: the runner orders the bundles), each
    chunk a list of 1 to ``chunk`` lines; at least ``at_least`` lines."""
    with beam.Pipeline() as p:
        want = p | "Text" >> beam.io.ReadFromText(path, skip_header_lines=skip, coder=beam.coders.BytesCoder())
        got = (
            p
            | "Chunks" >> ReadLineChunks(path, skip, chunk=chunk, bundle_bytes=bundle_bytes)
            | "Flat" >> beam.FlatMap(_checked_chunk, chunk or lines.CHUNK)
        )
        both = (want | "WantList" >> beam.combiners.ToList()) | "Compare" >> beam.Map(
            _same, beam.pvalue.AsSingleton(got | "GotList" >> beam.combiners.ToList())
        )
        assert_that(both | beam.Map(lambda r, n=at_least: r[0] and r[1] >= n), equal_to([True]))


@pytest.mark.parametrize("kind", ["plain", "gzip", "csv", "glob"])
@pytest.mark.parametrize("chunk,bundle_bytes", [(None, None), (3, 64), (1, 1000)])
def test_chunks_hold_every_line_of_read_from_text_once(tmp_path, kind, chunk, bundle_bytes):
    path, skip = _write(tmp_path, kind)
    _check(path, skip, chunk, bundle_bytes)


# the uncompressed reader against Beam's text source, range by range (pure: no pipeline)
_ALPHABET = (b"a", b"b", b"\n", b"\r", b"\r\n", b"\n\n", b"\xc3\xa9", b"\xff", b" ")


def _beam_ranges(path: str, bundle: int, skip: int = 0) -> list:
    """Beam's text source's bundles of ``path`` and the lines it reads in each."""
    out = []
    for b in text_source(path, skip).split(bundle):
        tracker = b.source.get_range_tracker(b.start_position, b.stop_position)
        out.append((b.start_position, b.stop_position, list(b.source.read(tracker))))
    return out


@pytest.mark.parametrize("seed", range(240))
def test_the_uncompressed_reader_reads_each_range_as_beam_does(tmp_path, seed):
    rng = random.Random(seed)
    data = b"".join(rng.choice(_ALPHABET) for _ in range(rng.choice((rng.randrange(0, 6), rng.randrange(0, 400)))))
    if rng.random() < 0.3:
        data += b"\n"
    skip = seed % 3  # header lines (a CSV's: 1)
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    if not data:
        assert list(lines._range_lines(str(path), 0, 0, skip=skip)) == []
        return
    bundle = rng.choice((1, 2, 3, 7, 16, 50, 1000))
    ranges = _beam_ranges(str(path), bundle, skip)
    assert sum(stop - start for start, stop, _ in ranges) == len(data)
    for start, stop, want in ranges:
        for block in (1, 2, 5, None):  # lines across the reader's blocks too
            got = list(lines._range_lines(str(path), start, stop, block, skip))
            assert got == want, (start, stop, block, skip, data)


@pytest.mark.parametrize("seed", range(60))
def test_a_compressed_file_is_read_whole_as_beam_reads_it(tmp_path, seed):
    """A gzip file (by its extension): decompressed and read whole, the lines Beam's text source reads (one bundle:
    it cannot be split), with 0-2 header lines, a header that does not end with a LF included."""
    rng = random.Random(1000 + seed)
    data = b"".join(rng.choice(_ALPHABET) for _ in range(rng.choice((rng.randrange(0, 6), rng.randrange(0, 300)))))
    path = tmp_path / "in.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    skip = seed % 3
    want = [line for _, _, got in _beam_ranges(str(path), 7, skip) for line in got]
    assert list(lines._range_lines(str(path), 0, None, rng.choice((1, 3, None)), skip)) == want, (skip, data)


def test_a_header_without_a_newline_gives_no_line(tmp_path):
    """Beam's ``_skip_lines`` leaves its buffer at the end of a file whose header has no LF: no line at all."""
    for data, skip in ((b"time,op,id", 1), (b"a\rb\rc", 1), (b"h1\nh2", 2), (b"h1\nh2\n", 2)):
        path = tmp_path / "in.csv"
        path.write_bytes(data)
        want = [line for _, _, got in _beam_ranges(str(path), 1000, skip) for line in got]
        assert want == [] and list(lines._range_lines(str(path), 0, len(data), skip=skip)) == []


def test_file_names_with_glob_characters_are_read_once_each(tmp_path):
    """A file is opened by the name its pattern matched: ``a[1]`` is not matched again as a pattern (it would
    read ``a1`` instead)."""
    for name, text in (("a[1].jsonl.gz", b"bracket-gz\n"), ("a1.jsonl.gz", b"plain-gz\n"), ("b[2].jsonl", b"b2\n")):
        data = gzip.compress(text) if name.endswith(".gz") else text
        (tmp_path / name).write_bytes(data)
    (tmp_path / "b2.jsonl").write_bytes(b"other\n")
    _check(str(tmp_path / "*.jsonl*"), 0, None, None, at_least=4)


def test_wide_lines_make_short_chunks(tmp_path, monkeypatch):
    """A chunk is given up once it holds ``CHUNK_BYTES`` of lines: wide lines make short lists, none lost."""
    monkeypatch.setattr(lines, "CHUNK_BYTES", 100)
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"".join(b"%03d" % i + b"x" * 57 + b"\n" for i in range(50)))
    got = list(lines._read_chunks((str(path), 0, path.stat().st_size, 0), 4096))
    assert [len(c) for c in got] == [2] * 25 and [x[:3] for c in got for x in c] == [b"%03d" % i for i in range(50)]


def test_the_reader_check_fails_for_a_reader_that_keeps_cr(tmp_path):
    """The twin: a reader that does not strip the CR of a CR LF (and one that keeps the range's first partial line)
    reads other lines than Beam's."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a": 1}\r\nxyz\n{"b": 2}\n')
    (start, stop, want), *_ = _beam_ranges(str(path), 1000)
    assert [x.rstrip(b"\r") for x in want] == want and len(want) == 3
    kept = [line + b"\r" if line == b'{"a": 1}' else line for line in lines._range_lines(str(path), start, stop)]
    assert kept != want
    later = [r for r in _beam_ranges(str(path), 4) if r[0] == 4][0]
    assert list(lines._range_lines(str(path), 4, later[1])) == later[2] != [b'": 1}']


def test_the_lines_check_fails_when_a_bundle_loses_its_last_chunk(tmp_path, monkeypatch):
    """The twin: a reader that drops each bundle's last chunk (a chunk flushed only when full)."""
    real = lines._read_chunks

    def broken(item, chunk, counter=None):
        yield from list(real(item, chunk, counter))[:-1]

    monkeypatch.setattr(lines, "_read_chunks", broken)
    path, skip = _write(tmp_path, "plain")
    with pytest.raises(Exception, match="Failed assert"):
        _check(path, skip, 7, 64)


# ---------------------------------------------------------------------------
# the release CLI: chunked read (the default) against the read line by line
# ---------------------------------------------------------------------------


def _inputs(tmp_path: Path) -> dict:
    """A JSON-lines file (the demo generator's updates and bad lines: unparseable, unknown op, undeclared stream,
    a carrier outside the domain, a delete of an unknown entry) and the same updates as CSV with bad rows."""
    found = generate(3000)
    (tmp_path / "in.jsonl").write_text("\n".join(found) + "\n")
    rows = ["time,op,id,region,seq,carrier,amount"]
    for line in found:
        try:
            d = json.loads(line)
        except ValueError:
            rows.append("not,a,row")
            continue
        item = d.get("item") or {}
        rows.append(
            ",".join(
                str(x)
                for x in (d["time"], d["op"], d["id"], d["region"], d.get("seq", 0), *(item.get(k, "") for k in ITEM))
            )
        )
    (tmp_path / "in.csv").write_text("\n".join(rows) + "\n")
    last = max(json.loads(x)["time"] for x in found if x.startswith("{") and '"time"' in x)
    return {"end": (int(last // 600) + 1) * 600}


ITEM = ("carrier", "amount")


def _release(tmp_path: Path, fmt: str, name: str, end: int, capsys) -> tuple[dict, dict]:
    """Every output file of a CLI run (lines sorted: a sink's line order is the runner's; the manifest as
    written) and the summary's counts of the run."""
    raw = copy.deepcopy(DEMO)
    raw["time"]["end"] = end
    raw["source"] = {"type": "file", "path": str(tmp_path / f"in.{fmt}"), "format": fmt}
    out = tmp_path / name
    raw["sinks"] = [{"type": "file", "path": str(out), "format": "jsonl"}]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    capsys.readouterr()
    assert main(["--config", str(path), "--release-id", "line-chunks"]) in (0, None)
    printed = capsys.readouterr()
    summary = {
        key: line.split(":", 1)[1].split("(")[0].strip()
        for line in (printed.out + printed.err).splitlines()
        for key in ("records read", "updates accepted", "dead-lettered", "releases written")
        if line.startswith(key + ":")
    }
    files = {}
    for folder in (out, out.parent / (out.name + "-confidential")):
        for f in sorted(folder.rglob("*")):
            if f.is_file():
                text = f.read_text()
                files[f.name] = text if f.suffix == ".json" else sorted(text.splitlines())
    return files, summary


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_cli_outputs_equal_the_line_by_line_read(tmp_path, fmt, monkeypatch, capsys):
    monkeypatch.setattr(cli, "draw_picture", lambda cfg: None)
    end = _inputs(tmp_path)["end"]
    monkeypatch.setattr(lines, "CHUNK", 7)  # many chunks, and a last one not full
    chunks = []
    real_each = wiring._ParseFn._each
    monkeypatch.setattr(wiring._ParseFn, "_each", lambda self, els: chunks.append(len(els)) or real_each(self, els))
    validated = []  # the validation's chunks of records (the parse step's lists)
    real_validate = ValidateFn._each
    monkeypatch.setattr(ValidateFn, "_each", lambda self, rs: validated.append(len(rs)) or real_validate(self, rs))
    new, new_summary = _release(tmp_path, fmt, "new", end, capsys)
    n_lines = 3005  # the generator's 3,000 updates and 5 bad lines (CSV: rows)
    assert sum(chunks) == n_lines and max(chunks) == 7 and len(chunks) >= n_lines // 7, chunks[:5]
    assert n_lines - 5 <= sum(validated) < n_lines and max(validated) <= 7, validated[:5]
    monkeypatch.setattr(FileSource, "read_chunks", FileSource.read)  # the former read: a line an element
    old, old_summary = _release(tmp_path, fmt, "old", end, capsys)
    assert new == old
    assert new_summary == old_summary and new_summary["records read"] == str(n_lines), new_summary
    dead = [json.loads(x) for f, ls in new.items() if f.startswith("dead_letters") for x in ls]
    stages = {d["stage"] for d in dead}
    assert {"parse", "registry"} <= stages, stages  # dead letters of the first read and of the second
    assert all(d.get("record") or d.get("record_base64") for d in dead if d["stage"] == "registry"), dead


def test_the_cli_check_fails_when_a_chunk_loses_a_line(tmp_path, monkeypatch, capsys):
    """The twin: a parse step that skips the last line of each chunk."""
    monkeypatch.setattr(cli, "draw_picture", lambda cfg: None)
    end = _inputs(tmp_path)["end"]
    monkeypatch.setattr(lines, "CHUNK", 7)
    real_each = wiring._ParseFn._each
    monkeypatch.setattr(wiring._ParseFn, "_each", lambda self, els: real_each(self, els[:-1]))
    new, new_summary = _release(tmp_path, "jsonl", "new", end, capsys)
    monkeypatch.setattr(FileSource, "read_chunks", FileSource.read)
    old, old_summary = _release(tmp_path, "jsonl", "old", end, capsys)
    assert new != old and new_summary != old_summary


# ---------------------------------------------------------------------------
# a chunk of records through ReleaseContinually's validation (a bounded run)
# ---------------------------------------------------------------------------


def _records() -> list:
    """Records of every validation outcome: valid, and each refusal the check gives."""
    ok = UpdateRecord(30.0, "insert", "a", (0, 1, 2), "eu", 0, '{"x": 1}', None)
    return [
        ok,
        ok._replace(entry_id="b", op="delete", item=None),
        ok._replace(stream="mars"),
        ok._replace(op="merge"),
        ok._replace(entry_id=""),
        ok._replace(event_time=float("nan")),
        ok._replace(event_time=-5000.0),
        ok._replace(item=(0, 9, 2)),
        ok._replace(item=(0, 1)),
        ok._replace(seq=True),
        "not a record",
        ok._replace(entry_id="c", event_time=90.0, seq=3),
    ]


def _outputs(fn, elements) -> list:
    fn.start_bundle()
    out = []
    for e in elements:
        for o in fn.process(e) or ():
            out.append((o.tag, o.value) if isinstance(o, beam.pvalue.TaggedOutput) else ("valid", o))
    return out


@pytest.mark.parametrize("digests", [False, True])
def test_a_chunk_is_validated_as_its_records_one_by_one(digests):
    spec = StreamSpec(streams=("eu", "us"), tick_seconds=60.0, end_time=6000.0)
    check = UpdateCheck(spec, (3, 4, 101), digests=digests)
    records = _records()
    one_by_one = _outputs(ValidateFn(check), records)
    assert {tag for tag, _ in one_by_one} == {"valid", ValidateFn.DEAD} and len(one_by_one) == len(records)
    reasons = {v.reason for tag, v in one_by_one if tag != "valid"}
    assert {"undeclared_stream", "unknown_op", "malformed", "bad_time", "before_origin", "item_out_of_range"} <= reasons
    chunked = ValidateFn(check, chunks=True)
    assert _outputs(chunked, [records[:5], records[5:], []]) == one_by_one
    assert chunked.n_valid == sum(tag == "valid" for tag, _ in one_by_one)
    # the twin: without chunks a list is one malformed record
    twin = _outputs(ValidateFn(check), [records])
    assert [(tag, v.reason) for tag, v in twin] == [(ValidateFn.DEAD, "malformed")] != one_by_one
