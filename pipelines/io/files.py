"""Files: ``source: {type: file}`` (JSON lines, CSV with a header, Avro; a path or glob, bounded), the file
sink (JSON lines or Avro under ``path``, dead letters and the manifest under ``confidential_path``), and
``queries_source: {type: file}`` (streamed queries as JSON lines).
"""

from __future__ import annotations

import csv
import functools
import glob
import hashlib
import json
import os
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.transforms import trigger, window
from apache_beam.utils.timestamp import Duration
from pydantic import BeforeValidator, ValidationInfo, field_validator

from pipelines.io.base import Elements, Fraction, Sink, Source
from pipelines.io.csv_out import CsvFileSink, csv_columns, csv_header_line, csv_row
from pipelines.io.lines import JoinedLines, ReadLineChunks, text_source
from pipelines.io.staging import staging_folder
from pipelines.model import ConfigError, Section, choice, issue, number, text
from transforms.spec import event_time_ok

__all__ = [
    "FileSource",
    "FileSink",
    "FileQueries",
    "source_files",
    "csv_header_of",
    "csv_header",
    "schema",
    "SCHEMAS",
    "json_line",
]

SOURCE_FORMATS = ("jsonl", "csv", "avro")
SINK_FORMATS = ("jsonl", "avro", "csv")
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
_STREAM_FILE_LATENESS = 7 * 24 * 3600  # a late release still gets written (to a file of its own)


def schema(name: str) -> dict:
    """The published Avro schema ``pipelines/schemas/NAME.avsc``."""
    return json.loads((SCHEMAS / f"{name}.avsc").read_text())


def _relative_to(path: str, info: ValidationInfo) -> str:
    base_dir = (info.context or {}).get("base_dir")
    if base_dir is not None and not Path(path).is_absolute():
        return str(Path(base_dir) / path)
    return path


class Dedup(Section):
    """``source.dedup``: one update per value of ``field``."""

    EXAMPLE: ClassVar[str] = "{field: update_id}"

    field: Annotated[str, BeforeValidator(lambda v: text(v, "a field name"))]


class FileSource(Source):
    """``{type: file, path, format, dedup, max_dead_letter_fraction}``: every file that ``path`` (a path or glob,
    local or on any Beam file system) matches, read once: a bounded run, whose public schedule (``time.origin``
    and ``time.end``) the configuration must give."""

    EXAMPLE: ClassVar[str] = "{type: file, path: data/*.jsonl, format: jsonl}"
    STREAMING: ClassVar[bool] = False

    type: Literal["file"] = "file"
    path: Annotated[str, BeforeValidator(lambda v: text(v, "a path or glob"))]
    format: Annotated[Literal["jsonl", "csv", "avro"], BeforeValidator(lambda v: choice(v, SOURCE_FORMATS))] = "jsonl"
    dedup: Dedup | None = None
    max_dead_letter_fraction: Fraction = 1.0

    @field_validator("path")
    @classmethod
    def _relative(cls, path: str, info: ValidationInfo) -> str:
        return _relative_to(path, info)

    @property
    def dead_letter_format(self) -> str:
        return self.format

    @property
    def dedup_field(self) -> str | None:
        return None if self.dedup is None else self.dedup.field

    def check_config(self, cfg) -> None:
        tm = cfg.time
        missing = [k for k in (() if tm.ticks else ("origin",)) + ("end",) if getattr(tm, k) is None]
        if missing:
            raise issue(
                "required for a file (bounded) source: the release's schedule runs from time.origin (tick 1) to "
                "time.end and must be public configuration, never derived from the data (epoch seconds or an "
                "ISO-8601 date-time such as 2026-11-22T00:00:00Z"
                + (", or with time.ticks the last tick" if tm.ticks else "")
                + ")",
                f"time.{' and time.'.join(missing)}",
                missing_time=True,
            )

    def check_launch(self, cfg, local: bool, required: tuple | None = None) -> None:
        for path in source_files(self.path):
            check_source_file(
                path,
                self.format,
                (cfg.time_field, "op", "id") if required is None else required,
                person_field=cfg.person_field,
            )

    def read_chunks(self, p, cfg) -> Elements:
        """JSON lines and CSV: the lines in lists (``pipelines.io.lines.ReadLineChunks``), the same lines as
        :meth:`read`'s, with the files they come from (``Elements.lines_of``); Avro: :meth:`read`."""
        if self.format == "avro":
            return self.read(p, cfg)
        skip = 1 if self.format == "csv" else 0
        text_source(self.path, skip)  # ReadFromText's check of the pattern, at construction
        chunks = p | "ReadFiles" >> ReadLineChunks(self.path, skip)
        header = csv_header(self.path) if skip else None
        return Elements(chunks, csv_header=header, chunked=True, lines_of=(self.path, skip))

    def read(self, p, cfg) -> Elements:
        if self.format == "avro":
            return Elements(p | "ReadFiles" >> beam.io.ReadFromAvro(self.path))
        if self.format == "csv":
            header = csv_header(self.path)
            lines = p | "ReadFiles" >> beam.io.ReadFromText(
                self.path, skip_header_lines=1, coder=beam.coders.BytesCoder()
            )
            return Elements(lines, csv_header=header)
        # lines as bytes: a line that is not UTF-8 is a dead letter, not a failed read
        return Elements(p | "ReadFiles" >> beam.io.ReadFromText(self.path, coder=beam.coders.BytesCoder()))

    def fingerprint(self) -> str | None:
        """A digest of the input (names and contents of local files; names, sizes and modification times of
        remote ones). It is derived from the data, so it lives in the confidential folder only."""
        from apache_beam.io.filesystems import FileSystems

        h = hashlib.sha256(b"dpdyn-input-v1")
        try:
            metas = sorted(FileSystems.match([self.path])[0].metadata_list, key=lambda m: m.path)
        except Exception:  # noqa: BLE001 - an unmatched glob: the pipeline reports it
            metas = []
        for m in metas:
            h.update(m.path.encode() + b"\0" + str(m.size_in_bytes).encode() + b"\0")
            if os.path.isfile(m.path):
                with open(m.path, "rb") as fh:
                    for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                        h.update(chunk)
            else:
                h.update(str(getattr(m, "last_updated_in_seconds", "")).encode())
        return h.hexdigest()

    def replay_header(self) -> tuple | None:
        return csv_header_of(source_files(self.path)[0]) if self.format == "csv" else None

    def time_range(self, time_field: str) -> tuple[float, float] | None:
        """The first and last event times of the local files (for the operator to copy into ``time.origin`` /
        ``time.end``; never used by the pipeline)."""
        lo = hi = None
        for f in sorted(glob.glob(self.path)):
            try:
                values = _time_values(f, self.format, time_field)
            except (OSError, ValueError):
                continue
            for v in values:
                try:
                    t = float(v)
                except (TypeError, ValueError):
                    continue
                if event_time_ok(t):
                    lo = t if lo is None else min(lo, t)
                    hi = t if hi is None else max(hi, t)
        return None if lo is None else (lo, hi)


def _time_values(path: str, fmt: str, field: str) -> list:
    if fmt == "avro":
        import fastavro

        with open(path, "rb") as fh:
            return [r.get(field) for r in fastavro.reader(fh)]
    if fmt == "csv":
        with open(path, newline="", errors="replace") as fh:
            return [r.get(field) for r in csv.DictReader(fh)]
    values = []
    with open(path, errors="replace") as fh:
        for line in fh:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            values.append(d.get(field) if isinstance(d, dict) else None)
    return values


def source_files(pattern: str) -> list[str]:
    """The files a source path or glob matches (local, or any Beam file system); none is a ConfigError."""
    if "://" in pattern:
        from apache_beam.io.filesystems import FileSystems

        try:
            files = [m.path for m in FileSystems.match([pattern])[0].metadata_list]
        except Exception as e:  # noqa: BLE001 - any file-system error is a configuration problem here
            raise ConfigError(f"source.path: cannot list {pattern} ({type(e).__name__})") from None
    else:
        files = [f for f in glob.glob(pattern) if not Path(f).is_dir()]
    if not files:
        raise ConfigError(f"source.path: no file matches {pattern}")
    return sorted(files)


def csv_header_of(path: str) -> tuple | None:
    """The header row of a CSV file (None: the file is empty)."""
    with open(path, "rb") as fh:  # the first line only: later lines may be anything (dead letters)
        first = fh.readline().decode("utf-8").rstrip("\r\n")
    if not first:
        return None
    row = next(csv.reader([first]), None)
    return None if row is None else tuple(row)


def csv_header(pattern: str) -> tuple:
    """The header of a CSV source (every file must have the same one)."""
    headers = set()
    for path in source_files(pattern):
        if "://" in path:
            from apache_beam.io.filesystems import FileSystems

            with FileSystems.open(path) as fh:
                first = fh.readline().decode("utf-8", "replace")
            headers.add(tuple(next(csv.reader([first]), ())))
            continue
        header = csv_header_of(path)
        if header is None:
            raise ConfigError(f"source.path: {path} is empty; a CSV source needs a header row")
        headers.add(header)
    if len(headers) != 1:
        raise ConfigError(f"source.path: the CSV files of {pattern} do not all have the same header row")
    return headers.pop()


def check_source_file(path: str, fmt: str, required: tuple, person_field: str | None = None) -> None:
    """A local source file is readable in its format: a CSV has a header row naming ``required``; an Avro file
    reads to its end and has the fields ``op`` and ``id`` (when required). ``person_field`` (the person unit's
    ``privacy.person_field``): a CSV column, an Avro field (JSON lines: a record without it is a dead letter
    ``missing_field``). Never shows a record."""
    if "://" in path:  # remote: listed above; read by the workers
        return
    try:
        if fmt == "csv":
            try:
                header = csv_header_of(path)
            except UnicodeDecodeError:
                raise ConfigError(f"source.path: {path} is not UTF-8 text (source.format is csv)") from None
            if not header:
                raise ConfigError(f"source.path: {path} is empty; a CSV source needs a header row")
            missing = [c for c in required if c not in header]
            if missing:
                raise ConfigError(
                    f"source.path: {path}: the first row must be a header naming the columns {', '.join(required)} "
                    f"(missing: {', '.join(missing)}; a CSV without a header row?)"
                )
            if len(set(header)) != len(header):
                raise ConfigError(f"source.path: {path}: the header names a column twice")
            if person_field is not None and person_field not in header:
                raise ConfigError(_no_person_field(path, "the CSV header has no column", person_field))
        elif fmt == "avro":
            _check_avro(path, [c for c in ("op", "id") if c in required], person_field)
        else:
            with open(path, "rb") as fh:
                fh.read(1)
    except OSError as e:
        raise ConfigError(f"source.path: cannot read {path} ({e.strerror or type(e).__name__})") from None


def _no_person_field(path: str, what: str, field: str) -> str:
    return (
        f"privacy.person_field: {path}: {what} {field!r}, the field that identifies the person (unit person); "
        "name the field the records have, or add it"
    )


def _check_avro(path: str, required: list[str], person_field: str | None = None) -> None:
    import fastavro

    with open(path, "rb") as fh:
        try:
            reader = fastavro.block_reader(fh)
            writer_schema = reader.writer_schema
            for _ in reader:  # every block: a truncated file fails here, not in the pipeline
                pass
        except Exception as e:  # noqa: BLE001 - fastavro raises many types on a bad file
            raise ConfigError(
                f"source.path: {path} is not a complete Avro file ({type(e).__name__}); source.format is avro"
            ) from None
    names = {f.get("name") for f in writer_schema.get("fields", [])} if isinstance(writer_schema, dict) else set()
    missing = [c for c in required if c not in names]
    if missing:
        raise ConfigError(
            f"source.path: {path}: the Avro records have no field {', '.join(missing)} "
            "(see pipelines/schemas/update.avsc)"
        )
    if person_field is not None and person_field not in names:
        raise ConfigError(_no_person_field(path, "the Avro records have no field", person_field))


def check_writable(folder: str, key: str) -> None:
    if "://" in folder:  # a remote file system: the workers write it
        return
    p = Path(folder).absolute()
    while not p.exists() and p.parent != p:  # creates nothing: a run that fails leaves no new folder
        p = p.parent
    try:
        probe = p / f".dp-dynamic-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ConfigError(f"{key}: cannot write to {folder} ({e.strerror or type(e).__name__})") from None


class FileSink(Sink):
    """``{type: file, path, format, window_seconds, confidential_path}``: ``releases*`` and ``nodes*`` files
    (the differentially private outputs) under ``path``, and ``dead_letters*`` plus the release manifest under
    ``confidential_path`` (default: the sibling folder ``<path>-confidential``; never the releases' folder: dead
    letters hold raw records). In streaming, one set of files per ``window_seconds`` of event time."""

    type: Literal["file"] = "file"
    path: Annotated[str, BeforeValidator(lambda v: text(v, "a folder path"))]
    # csv: a header line and one row per record, the columns of the output's Avro schema (pipelines/io/csv_out.py)
    format: Annotated[Literal["jsonl", "avro", "csv"], BeforeValidator(lambda v: choice(v, SINK_FORMATS))] = "jsonl"
    window_seconds: Annotated[float, BeforeValidator(lambda v: number(v, positive=True))] = 60.0
    confidential_path: Annotated[str | None, BeforeValidator(lambda v: text(v, "a non-empty path"))] = None

    # a file sink has no topics (the Pub/Sub and Kafka sinks do; tools read these of every sink)
    topic: ClassVar[None] = None
    nodes_topic: ClassVar[None] = None
    dead_letter_topic: ClassVar[None] = None
    answers_topic: ClassVar[None] = None

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        path = data.get("path")
        if isinstance(path, str) and path and data.get("confidential_path") is None:
            data = {**data, "confidential_path": path.rstrip("/") + "-confidential/"}
        return data

    def takes(self, output: str) -> bool:
        return True

    @property
    def manifest_folder(self) -> str | None:
        return self.confidential_path

    @property
    def picture_folder(self) -> str | None:
        return self.path if self.format == "jsonl" and "://" not in self.path else None

    @property
    def output_folders(self) -> dict[str, str]:
        keys = {"path": self.path, "confidential_path": self.confidential_path}
        return {k: v for k, v in keys.items() if "://" not in v}

    @property
    def publishes_atomically(self) -> bool:
        return len(self.output_folders) == 2  # local folders only: a remote one is written in place

    def staged(self, tag: str) -> tuple[FileSink, list[tuple[str, str]]]:
        folders = self.output_folders
        if not self.publishes_atomically:  # a remote folder: written in place
            return self, []
        moved = {k: staging_folder(v, tag) for k, v in folders.items()}
        return self.model_copy(update=moved), [(moved[k], folders[k]) for k in folders]

    def check_config(self, cfg, index: int) -> None:
        if Path(self.confidential_path.rstrip("/")) == Path(self.path.rstrip("/")):
            raise issue(
                f"must differ from sinks[{index}].path: dead letters hold raw records and must never sit beside "
                "the differentially private releases",
                f"sinks[{index}].confidential_path",
            )
        if self.format == "csv" and cfg.mechanism_spec.input_kind == "reports":
            raise issue(
                "csv is not available for a local-DP collector: its estimates have no published schema to take the "
                "columns from; use jsonl",
                f"sinks[{index}].format",
            )
        if not cfg.source.STREAMING and "window_seconds" in self.model_fields_set:
            raise issue(
                "does not apply to a file (bounded) source: only streaming writes windows; remove it",
                f"sinks[{index}].window_seconds",
            )

    def check_launch(self, cfg, index: int, local: bool) -> None:
        for key, folder in (("path", self.path), ("confidential_path", self.confidential_path)):
            check_writable(folder, f"sinks[{index}].{key}")

    def write(self, records, output: str, *, label: str, streaming: bool, schema: str | None) -> str | None:
        """Write dicts as ``{path}/{output}*.jsonl``, ``.avro`` or ``.csv`` (dead letters under
        ``confidential_path``); returns the glob.

        Bounded input: one set of shards. Streaming: the records are grouped into fixed windows of
        ``window_seconds`` of event time, one file per window and firing (a late firing gets its own file, so
        nothing is dropped)."""
        base = self.confidential_path if output == "dead_letters" else self.path
        avro = self.format == "avro" and schema is not None
        csv_schema = schema if self.format == "csv" else None
        if self.format == "csv" and schema is None:  # refused in check_config (the collector's estimates)
            raise ValueError(f"no published schema for the {output} output: no CSV columns")
        return write_files(
            records, base, output, label, streaming, self.window_seconds, schema if avro else None, csv_schema
        )


def write_files(
    records, base: str, name: str, label: str, streaming: bool, window_seconds: float, avro, csv_schema=None
):
    """``records`` as ``{base}/{name}*.jsonl`` (``avro``: the schema's name, ``.avro``; ``csv_schema``: the schema's
    name whose fields are the columns, ``.csv`` with a header line); returns the glob."""
    suffix = ".avro" if avro else ".csv" if csv_schema else ".jsonl"
    prefix = str(Path(base) / name)
    columns = csv_columns(schema(csv_schema)) if csv_schema else None
    if not streaming:
        if csv_schema:
            header = csv_header_line(columns)
            (
                records
                | f"Csv{label}" >> beam.ParDo(JoinedLines(functools.partial(csv_row, columns)))
                | f"Write{label}" >> beam.io.WriteToText(prefix, file_name_suffix=suffix, header=header)
            )
        elif avro:
            records | f"Write{label}" >> beam.io.WriteToAvro(prefix, schema=schema(avro), file_name_suffix=suffix)
        else:
            (
                records
                | f"Json{label}" >> beam.ParDo(JoinedLines(json_line))
                | f"Write{label}" >> beam.io.WriteToText(prefix, file_name_suffix=suffix)
            )
        return prefix + "*" + suffix
    windowed = records | f"Window{label}" >> beam.WindowInto(
        window.FixedWindows(window_seconds),
        trigger=trigger.AfterWatermark(late=trigger.AfterCount(1)),
        accumulation_mode=trigger.AccumulationMode.DISCARDING,
        allowed_lateness=Duration(seconds=_STREAM_FILE_LATENESS),
    )
    # a factory, not a FileSink: WriteToFiles remakes a FileSink instance with its class and no arguments
    # (Beam 2.62 fileio._get_sink_fn), which dropped the Avro schema
    file_sink = (
        functools.partial(_avro_sink, schema(avro))
        if avro
        else functools.partial(_csv_sink, columns)
        if csv_schema
        else JsonFileSink
    )
    windowed | f"Write{label}" >> fileio.WriteToFiles(
        path=base, file_naming=_window_file_naming(name, suffix), sink=file_sink, shards=1
    )
    return prefix + "*" + suffix


def _line_encoder():
    """The encoder ``json.dumps(record)`` builds for every call (its defaults: ASCII escapes, ``", "`` and
    ``": "``, NaN allowed, keys unsorted), built once: the same C encoder in the same one-shot mode, so the same
    text. Without the circular-reference markers (a dict shared by every call and every thread would be mutable
    state); a record that contains itself, which no output record does, raises RecursionError instead of
    ValueError. ``None`` where the C accelerator is missing (then :func:`json_line` is ``json.dumps``)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    defaults = json.JSONEncoder()
    return make(None, defaults.default, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True)


_ENCODER = _line_encoder()


def json_line(record) -> str:
    """``json.dumps(record)``, without building a new encoder per record (the JSON lines sinks' step: one call
    per output record)."""
    if _ENCODER is None:
        return json.dumps(record)
    return "".join(_ENCODER(record, 0))


def _window_file_naming(name: str, suffix: str):
    """File names per window and firing, unique per finalisation.

    Window, pane index and shard do not name a firing uniquely: on the DirectRunner several firings of one
    window (releases of several ticks, emitted late after a watermark jump) all arrive as pane 0, shard 0, and
    each finalisation renamed its file over the previous one: releases were lost. A random token per
    finalisation call keeps every file."""

    def naming(w, pane, shard_index, total_shards, compression, destination):
        start = getattr(w, "start", None)
        where = "global" if start is None else f"{int(w.start)}-{int(w.end)}"
        token = os.urandom(4).hex()  # not noise: only a file name
        return f"{name}-{where}-p{pane.index if pane is not None else 0}-{shard_index or 0}-{token}{suffix}"

    return naming


class JsonFileSink(fileio.FileSink):
    """One JSON document per line."""

    def open(self, fh):
        self._fh = fh

    def write(self, record):
        self._fh.write((json_line(record) + "\n").encode())

    def flush(self):
        self._fh.flush()


def _csv_sink(columns: tuple, destination) -> CsvFileSink:
    return CsvFileSink(columns)


def _avro_sink(avro_schema: dict, destination) -> AvroFileSink:
    return AvroFileSink(avro_schema)


class AvroFileSink(fileio.FileSink):
    """Avro container files with the published schema (fastavro)."""

    def __init__(self, avro_schema: dict):
        self.schema = avro_schema

    def open(self, fh):
        import fastavro

        self._writer = fastavro.write.Writer(fh, fastavro.parse_schema(self.schema))

    def write(self, record):
        self._writer.write(record)

    def flush(self):
        self._writer.flush()


class FileQueries(Section):
    """``queries_source: {type: file, path}``: streamed queries, one JSON object per line (``docs/growing.md``)."""

    EXAMPLE: ClassVar[str] = "{type: file, path: data/growing_queries.jsonl}"
    STREAMING: ClassVar[bool] = False

    type: Literal["file"] = "file"
    path: Annotated[str, BeforeValidator(lambda v: text(v, "a path or glob"))]

    @field_validator("path")
    @classmethod
    def _relative(cls, path: str, info: ValidationInfo) -> str:
        return _relative_to(path, info)

    def read(self, p):
        """The query lines, as bytes."""
        return p | "ReadQueries" >> beam.io.ReadFromText(self.path, coder=beam.coders.BytesCoder())

    def submit(self, line: str) -> str:
        """Append one query; returns where it went."""
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return self.path


__all__ += ["check_source_file", "check_writable", "write_files", "JsonFileSink", "AvroFileSink", "Dedup"]
