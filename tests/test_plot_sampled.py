"""A long run's picture draws a sample of its periods (issue 30: a year of one-minute periods): every k-th
release tick, the first and the last included, every record of the ticks drawn, and the title says so; only
the lines of the ticks drawn are parsed."""

from __future__ import annotations

import json

import matplotlib
import pytest

from pipelines import plot
from pipelines.plot import draw, load_rows, load_sampled, plot_releases

matplotlib.use("Agg")


def _write(folder, ticks: int, every: int = 1):
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for t in range(every, ticks * every + 1, every):
        for s in ("north", "south"):
            lines.append({"stream": s, "tick": t, "query": "active", "estimate": t * 0.5, "error_bound": 3.0})
            lines.append(
                {"stream": s, "tick": t, "query": "by_cat", "estimate": {"a": 1.0, "b": t}, "error_bound": 2.0}
            )
    with open(folder / "releases-00000-of-00001.jsonl", "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in lines)


@pytest.mark.parametrize("every", [1, 10])
def test_every_kth_tick_with_all_its_records(tmp_path, every):
    _write(tmp_path / "out", 12_001, every)
    full = load_rows(str(tmp_path / "out"))
    rows, k, periods = load_sampled(str(tmp_path / "out"), max_periods=100)
    assert periods == 12_001 and k == 122  # ceil(12000 / 99): at most 100 ticks
    ticks = sorted({r["tick"] for r in rows})
    assert ticks[0] == every and ticks[-1] == 12_001 * every and len(ticks) <= 100
    assert ticks[:-1] == list(range(every, 12_001 * every + 1, k * every))[: len(ticks) - 1]
    keep = set(ticks)
    assert rows == [r for r in full if r["tick"] in keep]  # every record of a tick drawn, as written


def test_short_runs_are_drawn_whole(tmp_path):
    _write(tmp_path / "out", 100)
    rows, k, periods = load_sampled(str(tmp_path / "out"), max_periods=100)
    assert (k, periods) == (1, 100) and rows == load_rows(str(tmp_path / "out"))
    assert load_sampled(str(tmp_path / "missing")) == ([], 1, 0)


def test_the_title_says_the_sample(tmp_path, monkeypatch):
    _write(tmp_path / "out", 1_000)
    monkeypatch.setattr(plot, "MAX_PERIODS", 50)
    path = plot_releases(str(tmp_path / "out"))
    assert path.exists()
    rows, k, periods = load_sampled(str(tmp_path / "out"))
    assert k == 21 and periods == 1_000
    fig = draw(rows, sampled=(k, periods))
    assert "every 21-th of 1,000 periods drawn" in fig._suptitle.get_text()
    assert "periods drawn" not in draw(load_rows(str(tmp_path / "out")))._suptitle.get_text()


def test_node_outputs_are_still_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "releases-x.jsonl").write_text(json.dumps({"stream": "s", "tick": 1, "values": [1]}) + "\n")
    with pytest.raises(Exception, match="node outputs"):
        load_sampled(str(tmp_path / "out"), max_periods=100)
