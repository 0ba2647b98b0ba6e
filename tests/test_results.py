"""Results as a DataFrame (issue 32, item 2): ``pipelines.results.read_releases`` on the demo's own output (JSON
lines and Avro of one run) gives one row per (stream, query, cell, period), the stated dtypes and the values of
the JSON records; node outputs and dead letters are refused; the row iterators and the picture need no pandas;
``read_ledger`` gives one row per release of a budget ledger."""

from __future__ import annotations

import copy
import csv
import json
import math
import sys
from decimal import Decimal as D
from pathlib import Path

import pytest
import yaml

from pipelines.ledger import NewRelease, open_store
from pipelines.results import COLUMNS, NotReleasesError, iter_records, iter_rows, release_files

pd = pytest.importorskip("pandas")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    """The demo (configs/demo.yaml as shipped, its sinks redirected) run once by the CLI, into a JSON-lines sink
    and an Avro sink."""
    from pipelines.release import main as release

    tmp = tmp_path_factory.mktemp("demo")
    raw = copy.deepcopy(yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text()))
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    raw["sinks"] = [
        {"type": "file", "path": str(tmp / "json"), "format": "jsonl"},
        {"type": "file", "path": str(tmp / "avro"), "format": "avro"},
    ]
    config = tmp / "demo.yaml"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    mp = pytest.MonkeyPatch()
    mp.setenv("DP_NOISE_KEY", "22" * 32)
    try:
        assert release(["--config", str(config)]) == 0
    finally:
        mp.undo()
    return tmp


def _json_records(folder: Path) -> list[dict]:
    return [json.loads(line) for p in sorted(folder.glob("releases*.jsonl")) for line in p.open() if line.strip()]


def test_demo_one_row_per_cell_and_period_with_the_stated_dtypes(demo_out):
    from pipelines.results import read_releases

    df = read_releases(str(demo_out / "json"))
    assert list(df.columns) == list(COLUMNS)
    assert {c: str(t) for c, t in df.dtypes.items()} == {c: t for c, t in COLUMNS.items()}
    assert isinstance(df["as_of"].dtype, pd.DatetimeTZDtype) and str(df["as_of"].dt.tz) == "UTC"
    key = ["stream", "query", "cell", "tick"]
    assert not df.duplicated(key).any()
    records = _json_records(demo_out / "json")
    cells = sum(len(r["estimate"]) if isinstance(r["estimate"], dict) else 1 for r in records)
    assert len(df) == cells and len(records) > 100
    assert set(df["query"]) == {"active", "by_carrier", "total_amount"} and set(df["stream"]) == {"eu", "us"}
    assert df.loc[df["query"] != "by_carrier", "cell"].isna().all()
    assert df.loc[df["query"] == "by_carrier", "cell"].notna().all()
    # the values are the JSON records', cell by cell
    by_key = {(r["stream"], r["query"], c, r["tick"]): r for r in records for c in _cells(r)}
    assert len(by_key) == len(df)
    for row in df.itertuples(index=False):
        cell = None if row.cell is pd.NA else row.cell
        rec = by_key[(row.stream, row.query, cell, row.tick)]
        est = rec["estimate"][cell] if cell is not None else rec["estimate"]
        assert row.estimate == est and row.error_bound == rec["error_bound"]
        assert row.lower == est - rec["error_bound"] and row.upper == est + rec["error_bound"]
        assert row.as_of == pd.Timestamp(rec["as_of"]) and row.as_of.tzinfo is not None
        assert row.release_id == rec["release_id"] and row.segment == rec["segment"] and row.beta == rec["beta"]
        assert row.epsilon_spent == rec["epsilon_spent"]
        assert row.update_level_epsilon == rec["update_level_spent"]["epsilon"]
        assert math.isnan(row.delta_spent) and math.isnan(row.rho_spent)


def _cells(rec: dict) -> list:
    return list(rec["estimate"]) if isinstance(rec["estimate"], dict) else [None]


def test_avro_csv_glob_and_list_read_the_same_frame(demo_out, tmp_path):
    from pipelines.results import read_releases

    df = read_releases(str(demo_out / "json"))
    (avro,) = release_files(str(demo_out / "avro"))
    pd.testing.assert_frame_equal(read_releases(avro), df)  # told by its magic bytes
    renamed = tmp_path / "releases-copy.data"
    renamed.write_bytes(Path(avro).read_bytes())
    pd.testing.assert_frame_equal(read_releases(str(renamed)), df)
    pd.testing.assert_frame_equal(read_releases(str(demo_out / "json" / "releases*.jsonl")), df)
    pd.testing.assert_frame_equal(read_releases([str(demo_out / "json"), avro]), pd.concat([df, df]).pipe(_sorted))
    # the CSV hook: the JSON-lines fields as columns, a histogram's map as JSON text
    records = _json_records(demo_out / "json")
    fields = list(dict.fromkeys(k for r in records for k in r))
    with (tmp_path / "releases.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fields)
        w.writeheader()
        for r in records:
            w.writerow({k: json.dumps(v) if isinstance(v, dict) else ("" if v is None else v) for k, v in r.items()})
    pd.testing.assert_frame_equal(read_releases(str(tmp_path / "releases.csv")), df)


def _sorted(df):
    return df.sort_values(["stream", "query", "tick", "segment"], kind="stable", ignore_index=True)


def test_nodes_and_dead_letters_are_not_releases(demo_out, tmp_path):
    nodes = tmp_path / "nodes-00000-of-00001.jsonl"
    nodes.write_text(json.dumps({"stream": "s", "tick": 1, "query": "q", "values": [1.0], "kind": "node"}) + "\n")
    dead = tmp_path / "bad.jsonl"
    dead.write_text(json.dumps({"reason": "malformed", "record": "{", "stage": "parse"}) + "\n")
    with pytest.raises(NotReleasesError, match="node outputs"):
        list(iter_records(str(nodes)))
    with pytest.raises(NotReleasesError, match="dead letters"):
        list(iter_records(str(dead)))
    # a folder: only its releases* files are read (the nodes beside them are skipped)
    (tmp_path / "releases-1.jsonl").write_text((demo_out / "json" / "releases-00000-of-00001.jsonl").read_text())
    assert release_files(str(tmp_path)) == [str(tmp_path / "releases-1.jsonl")]
    with pytest.raises(FileNotFoundError, match="no release files"):
        release_files(str(tmp_path / "nothing*.jsonl"))


def test_a_missing_integer_is_nullable(tmp_path):
    from pipelines.results import read_releases

    rec = {"stream": "s", "query": "q", "tick": 1, "estimate": 2.0, "error_bound": None, "beta": 0.05}
    (tmp_path / "releases.jsonl").write_text(json.dumps(rec) + "\n")
    df = read_releases(str(tmp_path))
    assert str(df["segment"].dtype) == "Int64" and df["segment"].isna().all()
    assert str(df["tick"].dtype) == "int64" and math.isnan(df["lower"][0]) and df["as_of"].isna().all()


def test_without_pandas_one_clear_import_error_and_the_picture_still_draws(demo_out, monkeypatch):
    """The rows and the picture need no pandas (matplotlib is a core dependency, pandas an extra)."""
    import pipelines.results as results
    from pipelines.plot import draw, load_rows

    monkeypatch.setitem(sys.modules, "pandas", None)  # ``import pandas`` now raises ImportError
    with pytest.raises(ImportError, match=r'pip install -e "\.\[pandas\]"'):
        from pipelines.results import read_releases  # noqa: F401
    with pytest.raises(ImportError, match="pandas"):
        results.read_ledger  # noqa: B018
    rows = load_rows(str(demo_out / "json"))
    assert rows == _json_records(demo_out / "json")
    assert len(list(iter_rows(str(demo_out / "json")))) > len(rows)
    fig = draw(rows)
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 6


def test_read_ledger_one_row_per_release(tmp_path):
    from pipelines.results import read_ledger

    url = f"sqlite:///{tmp_path}/ledger.db"
    store = open_store(url)
    reg = store.register(
        NewRelease("ds", "r1", "d1", "update", "pure", {"epsilon": D("0.5")}, {"epsilon": D("2")}, True)
    )
    store.finish(reg, "completed")
    store.register(NewRelease("ds", "r2", "d2", "update", "pure", {"epsilon": D("1")}, {"epsilon": D("2")}, True))
    store.register(NewRelease("z", "r3", "d3", "update", "zcdp", {"rho": D("0.125")}, {"rho": D("1")}, False))
    df = read_ledger(url)
    assert list(df["release_id"]) == ["r1", "r2", "r3"]
    assert list(df["epsilon"][:2]) == [0.5, 1.0] and math.isnan(df["epsilon"][2]) and df["rho"][2] == 0.125
    assert list(df["status"]) == ["completed", "running", "running"] and df["counted"].all()
    assert str(df["started"].dtype) == "datetime64[ns, UTC]" and df["ended"].isna().tolist() == [False, True, True]
    assert list(read_ledger(url, "z")["release_id"]) == ["r3"]
