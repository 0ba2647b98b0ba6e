"""The picture of a run's releases (issue 29, item 6): small multiples for any number of streams, queries and
cells (at most ``MAX_CELLS`` lines a panel, the rest summed, labelled at their ends: no legend to run off the
page), event time on the x axis from ``as_of``, bands clamped at 0 like the estimates, an optional truth overlay.
Rendered from the demo's run and from a 1-stream 16-cell histogram run; the PNGs were looked at (see the report
of issue 29)."""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import yaml

from pipelines.plot import MAX_CELLS, MAX_PANELS, PANELS_PER_ROW, draw, load_rows, main, plot_releases

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
CARRIERS = [f"C{i:02d}" for i in range(16)]


def _rows(streams=("default",), cells=None, ticks=30, negative=False, as_of=True):
    rng = random.Random(7)
    rows = []
    for s in streams:
        for t in range(1, ticks + 1):
            if cells:
                est = {c: (-50.0 if negative else 0.0) + (i + 1 + rng.random()) * t for i, c in enumerate(cells)}
            else:
                est = rng.random() * t
            rows.append(
                {
                    "stream": s,
                    "tick": t,
                    "query": "by_carrier" if cells else "active",
                    "estimate": est,
                    "error_bound": 40.0,
                    "beta": 0.05,
                    "as_of": datetime.fromtimestamp(600 * t).strftime("%Y-%m-%dT%H:%M:%SZ") if as_of else None,
                }
            )
    return rows


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def _check_panel(ax, *, clamp: bool, dates: bool = True):
    lines = [ln for ln in ax.get_lines() if ln.get_linestyle() != "--"]
    assert 1 <= len(lines) <= MAX_CELLS
    assert ax.get_legend() is None  # direct labels: nothing to run off the page
    for band in ax.collections:
        low = band.get_paths()[0].vertices[:, 1].min()
        assert (low >= 0) == clamp or not clamp
    if clamp:
        assert ax.get_ylim()[0] == 0
    assert type(ax.xaxis.get_major_formatter()).__name__ == ("ConciseDateFormatter" if dates else "ScalarFormatter")


def test_sixteen_cells_draw_the_largest_and_sum_the_rest():
    fig = draw(_rows(cells=CARRIERS), nonnegative={"by_carrier"})
    (ax,) = _panels(fig)
    _check_panel(ax, clamp=True)
    labels = [t.get_text() for t in ax.texts]
    assert len(labels) == MAX_CELLS and f"other ({16 - MAX_CELLS + 1} cells)" in labels
    assert set(labels) - {f"other ({16 - MAX_CELLS + 1} cells)"} == set(CARRIERS[-(MAX_CELLS - 1) :])  # the largest
    ys = sorted(t.xy[1] for t in ax.texts)
    assert all(b - a > 0 for a, b in zip(ys, ys[1:]))  # spread: no two labels at one height
    assert ax.get_title(loc="left") == "by_carrier · default"


def test_bands_follow_the_estimates_clamping():
    """A band goes below 0 only where the released values may (a signed sum); without the CLI's list, the panels
    whose estimates are all >= 0 are clamped."""
    fig = draw(_rows(cells=CARRIERS[:3]))
    (ax,) = _panels(fig)
    _check_panel(ax, clamp=True)
    assert min(b.get_paths()[0].vertices[:, 1].min() for b in ax.collections) == 0
    fig = draw(_rows(cells=CARRIERS[:3], negative=True))
    (ax,) = _panels(fig)
    assert min(b.get_paths()[0].vertices[:, 1].min() for b in ax.collections) < 0
    fig = draw(_rows(cells=CARRIERS[:3]), nonnegative=set())  # the CLI says: not clamped
    (ax,) = _panels(fig)
    assert min(b.get_paths()[0].vertices[:, 1].min() for b in ax.collections) < 0


def test_the_x_values_are_the_as_of_times_in_utc_and_ticks_where_one_is_missing():
    """The x values of a panel: its rows' ``as_of`` as one datetime64 array in UTC (an offset other than Z is
    converted), or the ticks of all where a row has none (a mix: matplotlib's ConversionError before)."""
    rows = _rows(ticks=3)
    rows[1]["as_of"] = "1970-01-01T02:20:00+02:00"  # 00:20 UTC, tick 2's own time
    xs = _panels(draw(rows))[0].get_lines()[0].get_xdata()
    assert list(xs) == [np.datetime64(f"1970-01-01T00:{m}:00", "us") for m in ("10", "20", "30")]
    rows[2]["as_of"] = None
    xs = _panels(draw(rows))[0].get_lines()[0].get_xdata()
    assert list(xs) == [1, 2, 3]  # one kind of axis: the ticks


def test_many_streams_flow_in_rows_and_ticks_without_as_of():
    streams = [f"s{i}" for i in range(10)]
    fig = draw(_rows(streams=streams) + _rows(streams=streams, cells=CARRIERS[:3]))
    panels = _panels(fig)
    assert len(panels) == 20
    assert {ax.get_subplotspec().get_gridspec().ncols for ax in panels} == {PANELS_PER_ROW}
    w, h = fig.get_size_inches()
    assert w <= 5.2 * PANELS_PER_ROW + 1.2 and h <= 2.5 * 5 + 0.9
    fig = draw(_rows(as_of=False))
    (ax,) = _panels(fig)
    _check_panel(ax, clamp=True, dates=False)
    assert ax.get_xlabel() == "tick"
    many = [f"s{i}" for i in range(MAX_PANELS + 5)]
    fig = draw(_rows(streams=many, ticks=3))
    assert len(_panels(fig)) == MAX_PANELS
    assert f"the first {MAX_PANELS} of {MAX_PANELS + 5} panels" in fig._suptitle.get_text()


def test_truth_overlay(tmp_path):
    rows = _rows(cells=CARRIERS)
    truth = [{**r, "estimate": {c: 1.0 for c in CARRIERS}} for r in rows]
    fig = draw(rows, truth=truth)
    (ax,) = _panels(fig)
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == MAX_CELLS
    assert list(dashed[-1].get_ydata()) == [16.0 - MAX_CELLS + 1] * len(rows)  # the rest, summed like the estimates
    assert "exact answers" in fig._suptitle.get_text()
    out = tmp_path / "out"
    out.mkdir()
    (out / "releases-00000-of-00001.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in truth))
    assert main([str(out), "--truth", str(tmp_path / "truth.jsonl"), "--out", str(tmp_path / "t.png")]) == 0
    assert (tmp_path / "t.png").stat().st_size > 10_000
    assert main([str(out), "--truth", str(tmp_path / "missing.jsonl")]) == 2


def _sixteen_cell_config(tmp_path) -> Path:
    """One stream, a count and a 16-cell histogram with skewed cells, a day of 10-minute ticks."""
    rng = random.Random(3)
    lines, alive = [], []
    for i in range(3000):
        t = i * 28.8
        if alive and rng.random() < 0.3:
            lines.append({"time": t, "op": "delete", "id": alive.pop(rng.randrange(len(alive)))})
            continue
        carrier = CARRIERS[min(15, int(rng.expovariate(0.35)))]
        lines.append({"time": t, "op": "insert", "id": f"b{i}", "item": {"carrier": carrier}})
        alive.append(f"b{i}")
    (tmp_path / "flights.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    raw = copy.deepcopy(DEMO)
    raw.pop("streams")
    raw["time"] = {"field": "time", "tick_seconds": 600, "origin": 0, "end": 86400}
    raw["queries"] = [
        {"name": "flights", "type": "count"},
        {"name": "by_carrier", "type": "histogram", "field": "carrier", "domain": CARRIERS},
    ]
    raw["source"] = {"type": "file", "path": str(tmp_path / "flights.jsonl"), "format": "jsonl"}
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    path = tmp_path / "flights.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.parametrize("which", ["demo", "sixteen_cells"])
def test_the_cli_draws_the_demo_and_a_sixteen_cell_histogram(tmp_path, monkeypatch, capsys, which):
    from pipelines.release import main as release

    monkeypatch.setenv("DP_NOISE_KEY", "22" * 32)
    if which == "demo":
        raw = copy.deepcopy(DEMO)
        raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
        raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
        config = tmp_path / "demo.yaml"
        config.write_text(yaml.safe_dump(raw, sort_keys=False))
    else:
        config = _sixteen_cell_config(tmp_path)
    assert release(["--config", str(config)]) == 0
    png = tmp_path / "out" / "releases.png"
    assert png.is_file() and png.stat().st_size > 20_000
    assert f"picture:             {png}" in capsys.readouterr().out
    rows = load_rows(str(tmp_path / "out"))
    panels = _panels(draw(rows, nonnegative={"active", "by_carrier", "flights"}))
    titles = [ax.get_title(loc="left") for ax in panels]
    if which == "demo":
        assert titles == [f"{q} · {s}" for q in ("active", "by_carrier", "total_amount") for s in ("eu", "us")]
    else:
        assert titles == ["flights · default", "by_carrier · default"]
        hist = panels[1]
        assert f"other ({16 - MAX_CELLS + 1} cells)" in [t.get_text() for t in hist.texts]
    for ax in panels:
        _check_panel(ax, clamp=not ax.get_title(loc="left").startswith("total_amount"))
    # time on the x axis: the releases' as_of, from 1970-01-01 (origin 0) on
    # (one datetime64 array, UTC: matplotlib converts it at once)
    xs = panels[0].get_lines()[0].get_xdata()
    assert xs.dtype == np.dtype("datetime64[us]")
    assert xs[0] == np.datetime64(datetime(1970, 1, 1, 0, 10)) and xs[-1] == np.datetime64(
        datetime(1970, 1, 9 if which == "demo" else 2)
    )
    assert plot_releases(str(tmp_path / "out"), str(tmp_path / "again.png")) == tmp_path / "again.png"
