"""The released answers as rows, and as pandas DataFrames (``docs/results.md``).

    from pipelines.results import read_releases, read_ledger
    df = read_releases("output/")                    # a folder, a file, a glob or a list of them
    df[df["query"] == "by_carrier"].pivot(index="as_of", columns=["stream", "cell"], values="estimate")

Two layers:

* pandas-free (the plot draws with them, matplotlib being a core dependency and pandas not): :func:`iter_records`
  yields the release records as written (``pipelines/schemas/release.avsc``), from JSON lines, Avro (told by its
  magic bytes, whatever the name) or CSV (a hook for the CSV sink: :data:`READERS`); :func:`iter_rows`
  flattens them into one row per (stream, query, cell, period).
* :func:`read_releases` / :func:`read_ledger`: the same as DataFrames (the ``pandas`` extra:
  ``pip install -e ".[pandas]"``; importing those two without pandas raises one ImportError naming the extra).

Node outputs (``nodes*``) and dead letters (``dead_letters*``) are not releases: a folder's are skipped (only its
``releases*`` files are read), a file of them named directly is refused with a ValueError saying what it holds.
Reading released values is post-processing: it costs no privacy.
"""

from __future__ import annotations

import csv
import glob
import json
import os
from collections.abc import Callable, Iterable, Iterator

__all__ = [
    "COLUMNS",
    "READERS",
    "NotReleasesError",
    "file_format",
    "release_files",
    "iter_records",
    "iter_rows",
    "read_releases",  # noqa: F822 (module __getattr__: the pandas check)
    "read_ledger",  # noqa: F822
]

AVRO_MAGIC = b"Obj\x01"

#: the DataFrame's columns and their dtypes (pandas names): strings as pandas' ``string`` dtype (missing: <NA>),
#: integers that are always present as ``int64``, numbers as ``float64`` (missing: NaN), the event time as a
#: timezone-aware ``datetime64[ns, UTC]`` (missing: NaT)
COLUMNS = {
    "stream": "string",
    "query": "string",
    "cell": "string",  # a histogram's cell; <NA> for a scalar query (count, sum, ...)
    "as_of": "datetime64[ns, UTC]",  # the event-time end of the released tick; NaT where the record has none
    "estimate": "float64",
    "lower": "float64",  # estimate - error_bound (NaN without a bound; not clamped: the estimate may be)
    "upper": "float64",  # estimate + error_bound
    "release_id": "string",
    "tick": "int64",  # the period: the tick released
    "segment": "int64",
    "error_bound": "float64",  # the (1 - beta) bound of the release (of each cell, for a histogram)
    "beta": "float64",
    "epsilon_spent": "float64",  # the spend so far for the configured unit (NaN where the budget has no such field)
    "delta_spent": "float64",
    "rho_spent": "float64",
    "update_level_epsilon": "float64",  # update_level_spent flattened (NaN: not stated, e.g. the changelog's)
    "update_level_delta": "float64",
    "update_level_rho": "float64",
}
_SCALARS = ("release_id", "tick", "segment", "error_bound", "beta", "epsilon_spent", "delta_spent", "rho_spent")


class NotReleasesError(ValueError):
    """A file named for reading holds node outputs, dead letters or something else, not release records."""


def file_format(path: str) -> str:
    """``avro`` (by the magic bytes), ``csv`` (by the extension) or ``jsonl``."""
    with open(path, "rb") as fh:
        if fh.read(4) == AVRO_MAGIC:
            return "avro"
    return "csv" if path.lower().endswith(".csv") else "jsonl"


def _read_jsonl(path: str) -> Iterator[dict]:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{n}: not a JSON line ({e.msg})") from None


def _read_avro(path: str) -> Iterator[dict]:
    import fastavro

    with open(path, "rb") as fh:
        yield from fastavro.reader(fh)


def _csv_value(text: str):
    """A CSV field: JSON where it parses (numbers, null, a histogram's map), else the text; empty is missing."""
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _read_csv(path: str) -> Iterator[dict]:
    """A CSV file with a header of the release fields (the JSON-lines field names; a map field as JSON text)."""
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            yield {
                k: (v if k in ("stream", "query", "as_of", "release_id") and v else _csv_value(v))
                for k, v in row.items()
            }


#: a file format's reader (path -> records): the CSV sink (issue 32, item 4) may replace ``csv`` with its own
READERS: dict[str, Callable[[str], Iterable[dict]]] = {"jsonl": _read_jsonl, "avro": _read_avro, "csv": _read_csv}


def release_files(where) -> list[str]:
    """The files ``where`` names: a file, a folder (its ``releases*`` files: JSON lines, Avro or CSV), a glob, or a
    list of those; sorted, without repeats. A name that matches nothing raises FileNotFoundError."""
    items = [where] if isinstance(where, (str, os.PathLike)) else list(where)
    out: list[str] = []
    for item in map(str, items):
        if os.path.isdir(item):
            found = sorted(
                p for p in glob.glob(os.path.join(item, "releases*")) if p.endswith((".jsonl", ".avro", ".csv"))
            )
        elif os.path.isfile(item):
            found = [item]
        else:
            found = sorted(p for p in glob.glob(item) if os.path.isfile(p))
            if not found:
                raise FileNotFoundError(f"no release files at {item}")
        out += [p for p in found if p not in out]
    return out


def _what(rec: dict) -> str | None:
    """What a record is when it is not a release (None: a release)."""
    if "reason" in rec and "estimate" not in rec:
        return "dead letters (dead_letters*), not releases"
    if "values" in rec and "estimate" not in rec:
        return "node outputs (nodes*), not releases"
    if not {"stream", "query", "estimate"} <= set(rec):
        return f"not release records (fields {sorted(rec)[:6]}; a release has stream, query, estimate)"
    return None


def iter_records(where, *, releases_only: bool = True) -> Iterator[dict]:
    """The records of the files ``where`` names (:func:`release_files`), as written: a histogram's ``estimate`` a
    dict. ``releases_only``: refuse a file whose first record is not a release (:class:`NotReleasesError`)."""
    for path in release_files(where):
        name = os.path.basename(path)
        if releases_only and name.startswith(("nodes", "dead_letters")):
            raise NotReleasesError(
                f"{path}: {'node outputs' if name.startswith('nodes') else 'dead letters'}, not releases"
            )
        first = True
        for rec in READERS[file_format(path)](path):
            if first and releases_only and (what := _what(rec)) is not None:
                raise NotReleasesError(f"{path}: {what}")
            first = False
            yield rec


def _at(est, bound):
    if bound is None:
        return None, None
    return est - bound, est + bound


def iter_rows(where) -> Iterator[dict]:
    """One flat row per (stream, query, cell, period) of the releases under ``where``: the keys of :data:`COLUMNS`
    (``as_of`` still its RFC 3339 text; ``cell`` None for a scalar query)."""
    for rec in iter_records(where):
        common = {k: rec.get(k) for k in _SCALARS}
        update = rec.get("update_level_spent") or {}
        for f in ("epsilon", "delta", "rho"):
            common[f"update_level_{f}"] = update.get(f)
        est = rec["estimate"]
        cells = est.items() if isinstance(est, dict) else [(None, est)]
        for cell, value in cells:
            lower, upper = _at(float(value), rec.get("error_bound"))
            yield {
                "stream": rec["stream"],
                "query": rec["query"],
                "cell": cell,
                "as_of": rec.get("as_of"),
                "estimate": float(value),
                "lower": lower,
                "upper": upper,
                **common,
            }


def _pandas():
    try:
        import pandas
    except ImportError:
        raise ImportError(
            "pipelines.results.read_releases / read_ledger need pandas, an optional extra: "
            'pip install -e ".[pandas]" (the row iterators iter_records / iter_rows need nothing)'
        ) from None
    return pandas


def _read_releases(where):
    """The releases under ``where`` (a folder, a file, a glob or a list; JSON lines, Avro or CSV) as a DataFrame:
    one row per (stream, query, cell, period), the columns and dtypes of :data:`COLUMNS`, sorted by stream, query,
    tick, segment (then the cells in their record order)."""
    pd = _pandas()
    df = pd.DataFrame.from_records(list(iter_rows(where)), columns=list(COLUMNS))
    df["as_of"] = pd.to_datetime(df["as_of"], utc=True, format="ISO8601").astype("datetime64[ns, UTC]")
    for col, dtype in COLUMNS.items():
        if col == "as_of":
            continue
        if dtype == "int64" and df[col].isna().any():
            dtype = "Int64"  # nullable: a record without the field (the schema requires it)
        df[col] = df[col].astype(dtype)
    return df.sort_values(["stream", "query", "tick", "segment"], kind="stable", ignore_index=True)


def _read_ledger(url: str, dataset: str | None = None):
    """A budget ledger's releases (``privacy.ledger``; every dataset, or ``dataset``'s) as a DataFrame: one row per
    release with its charge (``epsilon`` / ``delta`` / ``rho``: the budget it registered, NaN where its kind has
    no such field), the cap at its launch (``cap_epsilon`` ...), whether it counts, its status and times
    (``started`` / ``ended``: UTC timestamps). ``pipelines.ledger.read.ledger_rows`` gives the same rows without
    pandas."""
    from pipelines.ledger.read import LEDGER_COLUMNS, ledger_rows

    pd = _pandas()
    df = pd.DataFrame.from_records(ledger_rows(url, dataset), columns=list(LEDGER_COLUMNS))
    for col, dtype in LEDGER_COLUMNS.items():
        if dtype == "datetime":
            df[col] = pd.to_datetime(df[col], utc=True, format="ISO8601").astype("datetime64[ns, UTC]")
        else:
            df[col] = df[col].astype(dtype)
    return df


def __getattr__(name: str):
    """``from pipelines.results import read_releases`` without pandas: one ImportError naming the extra (the
    pandas-free names import as usual: the plot uses them)."""
    if name in ("read_releases", "read_ledger"):
        _pandas()
        return globals()[f"_{name}"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
