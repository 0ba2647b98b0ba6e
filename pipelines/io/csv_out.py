"""CSV output of the file sink (``sinks: [{type: file, format: csv}]``): a header line, then one row per record.

The columns are the fields of the output's published Avro schema (``pipelines/schemas/*.avsc``), in its order:
the JSON lines record's fields, every one of them, whatever the mechanism (a field the record leaves out, such as
``rho_spent`` of a pure-DP release, is an empty cell). A cell is: empty for null; the number as Python writes it
(``repr``: a double reads back exactly); the text itself; a nested value (a histogram's ``estimate`` map,
``update_level_spent``, a node's lists, Pub/Sub ``attributes``) as its JSON text. Quoting is the ``csv`` module's
(a field with a comma, a quote or a line break is quoted), so a dead letter's raw record survives the trip.
:func:`read_csv` reads a file back to the JSON lines records (``tests/test_csv_sink.py``).
"""

from __future__ import annotations

import csv
import io
import json

from apache_beam.io import fileio

__all__ = ["csv_columns", "csv_row", "csv_header_line", "read_csv", "CsvFileSink"]


def csv_columns(avro_schema: dict) -> tuple[str, ...]:
    """The columns of an output: its schema's field names, in order."""
    return tuple(f["name"] for f in avro_schema["fields"])


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)  # repr of a double (exact), NaN / Infinity as JSON writes them
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _line(cells) -> str:
    buf = io.StringIO()
    # the terminator "\r\n", cut off after: the csv module quotes a field that holds a character of its
    # terminator (with "" it left a CR or LF in a field unquoted, which split the row for every reader)
    csv.writer(buf, lineterminator="\r\n").writerow(cells)
    return buf.getvalue()[:-2]


def csv_row(columns: tuple[str, ...], record: dict) -> str:
    """One record as one CSV line (no line terminator; a quoted field may hold line breaks). A field the columns
    do not name is an error: a column must never be dropped silently."""
    extra = set(record) - set(columns)
    if extra:
        raise ValueError(f"a record has fields the CSV columns lack: {sorted(extra)}")
    return _line(_cell(record.get(c)) for c in columns)


def csv_header_line(columns: tuple[str, ...]) -> str:
    return _line(columns)


def read_csv(path: str, avro_schema: dict) -> list[dict]:
    """The records of a CSV output file as the JSON lines records (an empty cell is null and, as in the JSON
    lines record, a null field the record would leave out is left out only by the caller's comparison)."""
    types = {f["name"]: f["type"] for f in avro_schema["fields"]}
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out.append({k: _value(v, types[k]) for k, v in row.items()})
    return out


def _value(text: str, avro_type):
    kinds = avro_type if isinstance(avro_type, list) else [avro_type]
    if text == "" and "null" in kinds:
        return None
    if [k for k in kinds if k != "null"] == ["string"]:
        return text
    return json.loads(text)  # a number, or a nested value's JSON text


class CsvFileSink(fileio.FileSink):
    """Windowed CSV files (streaming): the header, then one line per record."""

    def __init__(self, columns: tuple[str, ...]):
        self.columns = tuple(columns)

    def open(self, fh):
        self._fh = fh
        fh.write(csv_header_line(self.columns).encode() + b"\n")

    def write(self, record):
        self._fh.write(csv_row(self.columns, record).encode() + b"\n")

    def flush(self):
        self._fh.flush()
