"""Draw the releases of a run: each query's estimate over time with its bound.

``python -m pipelines.plot OUTPUT_DIR [--out FILE.png] [--truth FILE]`` reads ``OUTPUT_DIR/releases*`` (the
differentially private outputs only) and draws small multiples: one panel per (query, stream), in rows of at most
four panels, the estimate at every release against the event time it is as of (``as_of``; the tick where the
releases have none) and the band ``estimate +/- error_bound`` (the release's (1 - beta) bound), clamped at 0 like
the estimates where the released values cannot be negative. A histogram panel draws at most ``max_cells`` lines:
the largest cells, each labelled at its end, and the rest summed into one line ``other (k cells)`` (without a band:
the sum of several cells has no bound in the records). ``--truth FILE``: the exact answers to overlay (dashed),
for an evaluation: JSON lines with ``stream``, ``query``, ``tick`` and ``value`` or ``estimate`` (the releases of a
run with ``privacy.disable_noise``, or a folder holding them, fit as they are).

A long run draws a sample of its periods: past ``MAX_PERIODS`` distinct release ticks, every k-th tick (the
first and the last included, k the least that keeps at most ``MAX_PERIODS``), every record of the ticks drawn
(every query, stream and cell, with its own bound), and the title says so ("every k-th of N periods drawn"). A
panel is some 500 pixels wide: 5,000 periods are ten a pixel, so the lines and bands are those of the whole run
at the picture's resolution except for excursions shorter than k periods. Only the sampled lines of a JSON-lines
file are parsed (the tick is read from the raw line), so a year of one-minute periods (a million records) costs
a pass over the file, not a million parses.

Plotting is post-processing of released values: it costs no privacy (the truth overlay is confidential: never
publish a picture drawn with it). Written to ``OUTPUT_DIR/releases.png`` by default.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from pipelines.results import file_format, iter_records, release_files

__all__ = [
    "plot_releases",
    "draw",
    "load_rows",
    "load_sampled",
    "main",
    "MAX_CELLS",
    "MAX_PANELS",
    "MAX_PERIODS",
    "PANELS_PER_ROW",
]

MAX_CELLS = 6  # lines per histogram panel: the MAX_CELLS - 1 largest cells and one for the rest
MAX_PANELS = 48  # panels per picture (the first ones, in the order of the records; the title says so)
PANELS_PER_ROW = 4
MAX_PERIODS = 5000  # release ticks drawn at most: a longer run draws every k-th (module docstring)


def load_rows(where: str, releases_only: bool = True) -> list[dict]:
    """The records of ``where``: a file (JSON lines or Avro), or a folder's ``releases*`` files (none: an empty
    list). Read by :func:`pipelines.results.iter_records`, which needs no pandas (neither does the picture);
    ``releases_only=False`` for the truth overlay's exact answers."""
    try:
        return list(iter_records(where, releases_only=releases_only))
    except FileNotFoundError:
        return []


_TICK = re.compile(rb'"tick": ?(-?[0-9]+)')


def _sampled_ticks(ticks: set, max_periods: int) -> tuple[set | None, int]:
    """(the ticks to draw, k): None and 1 when all are drawn; else every k-th distinct tick and the last."""
    if len(ticks) <= max_periods:
        return None, 1
    order = sorted(ticks)
    k = math.ceil((len(order) - 1) / (max_periods - 1))
    return set(order[::k]) | {order[-1]}, k


def load_sampled(where: str, max_periods: int | None = None) -> tuple[list[dict], int, int]:
    """``(rows, k, periods)``: the release records of ``where`` (:func:`load_rows`) at every k-th of its
    ``periods`` distinct ticks (module docstring; ``k = 1``: all). JSON-lines files are read twice, the ticks
    from the raw lines first, and only the lines of the ticks drawn are parsed; other formats are read whole and
    thinned. A file that is not plain release records is read by :func:`load_rows` (its errors)."""
    max_periods = max_periods or MAX_PERIODS
    try:
        paths = release_files(where)
    except FileNotFoundError:
        return [], 1, 0
    if not paths or any(file_format(p) != "jsonl" for p in paths):
        rows = load_rows(where)
        keep, k = _sampled_ticks({r["tick"] for r in rows}, max_periods)
        periods = len({r["tick"] for r in rows})
        return (rows if keep is None else [r for r in rows if r["tick"] in keep]), k, periods
    ticks = set()
    for path in paths:
        with open(path, "rb") as fh:
            for line in fh:
                m = _TICK.search(line)
                if m is None and line.strip():
                    return load_rows(where), 1, 0  # not a release line as written: the full reader decides
                if m is not None:
                    ticks.add(int(m[1]))
    keep, k = _sampled_ticks(ticks, max_periods)
    if keep is None:
        return load_rows(where), 1, len(ticks)
    rows = []
    for path in paths:
        with open(path, "rb") as fh:
            for line in fh:
                m = _TICK.search(line)
                if m is not None and int(m[1]) in keep:
                    rows.append(json.loads(line))
    if any(not {"stream", "query", "estimate", "tick"} <= r.keys() for r in rows[:1]):
        return load_rows(where), 1, len(ticks)  # not release records: load_rows raises as it says
    return rows, k, len(ticks)


def _x(row: dict):
    """The event time a release is as of (a datetime), or its tick."""
    as_of = row.get("as_of")
    if as_of:
        try:
            return datetime.fromisoformat(as_of.replace("Z", "+00:00"))
        except ValueError:
            pass
    return row["tick"]


def _xs(rows: list[dict]):
    """The x values of ``rows``: the event times they are as of as one ``datetime64`` array (UTC; matplotlib
    converts an array of them at once, where it converts a list of datetimes point by point, for every line and
    band drawn: a fifth of a long run's picture), or, where some row has no ``as_of``, the ticks of all (one
    axis of one kind: matplotlib cannot draw a mix)."""
    xs = [_x(r) for r in rows]
    if not all(isinstance(x, datetime) for x in xs):
        return [r["tick"] for r in rows]
    return np.array([x.astimezone(UTC).replace(tzinfo=None) if x.tzinfo else x for x in xs], dtype="datetime64[us]")


def _cells(rows: list[dict], max_cells: int) -> tuple[list, list]:
    """``(drawn, rest)``: the cells drawn on their own (the largest mean estimates) and those summed as one."""
    first = rows[0]["estimate"]
    if not isinstance(first, dict):
        return [None], []
    names = list(first)
    if len(names) <= max_cells:
        return names, []
    mean = {c: sum(r["estimate"].get(c, 0.0) for r in rows) / len(rows) for c in names}
    ranked = sorted(names, key=lambda c: (-mean[c], names.index(c)))
    keep = set(ranked[: max_cells - 1])
    return [c for c in names if c in keep], [c for c in names if c not in keep]


def _value(row: dict, cells: list) -> float:
    est = row.get("estimate", row.get("value"))
    if cells == [None]:
        return float(est)
    return float(sum(est.get(c, 0.0) for c in cells))


def _label_ends(ax, ends: list[tuple[float, str, str]]) -> None:
    """Direct labels at the right end of the lines, spread so that they do not overlap."""
    if not ends:
        return
    lo, hi = ax.get_ylim()
    gap = (hi - lo) * 0.07
    placed = []
    for y, text, color in sorted(ends):
        y = max(y, placed[-1] + gap) if placed else y
        placed.append(y)
        ax.annotate(
            text,
            xy=(1.0, y),
            xycoords=("axes fraction", "data"),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
            color=color,
            annotation_clip=False,
        )


def draw(
    rows: list[dict],
    truth: list[dict] | None = None,
    nonnegative=None,
    max_cells: int = MAX_CELLS,
    sampled: tuple[int, int] = (1, 0),
):
    """The figure of ``rows`` (release records); ``truth``: exact answers to overlay; ``nonnegative``: the queries
    whose released values are clamped at 0 (None: those whose estimates are all >= 0); ``sampled``: ``(k,
    periods)`` when ``rows`` hold every k-th of ``periods`` release ticks (:func:`load_sampled`: the title says
    so)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    queries = list(dict.fromkeys(r["query"] for r in rows))
    streams = sorted({r["stream"] for r in rows})
    panels = [(q, s) for q in queries for s in streams if any(r["query"] == q and r["stream"] == s for r in rows)]
    shown = panels[:MAX_PANELS]
    ncols = min(PANELS_PER_ROW, len(streams), len(shown)) if len(streams) > 1 else 1
    nrows = math.ceil(len(shown) / ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(5.2 * ncols + 1.2, 2.5 * nrows + 0.9), squeeze=False, layout="constrained"
    )
    truth_by = {}
    for t in truth or ():
        truth_by.setdefault((t["query"], t["stream"]), []).append(t)
    any_dates = False
    for k, (q, s) in enumerate(shown):
        ax = axes[k // ncols][k % ncols]
        mine = sorted((r for r in rows if r["query"] == q and r["stream"] == s), key=lambda r: r["tick"])
        xs = _xs(mine)
        dates = isinstance(xs, np.ndarray)
        any_dates = any_dates or dates
        drawn, rest = _cells(mine, max_cells)
        clamp = (
            all(_value(r, [c]) >= 0 for r in mine for c in drawn + rest) if nonnegative is None else q in nonnegative
        )
        ends = []
        for cell in drawn + (["rest"] if rest else []):
            cells = rest if cell == "rest" else [cell]
            est = [_value(r, cells) for r in mine]
            name = f"other ({len(rest)} cells)" if cell == "rest" else ("estimate" if cell is None else str(cell))
            line = ax.plot(xs, est, lw=0.9, label=name)[0]
            if cell != "rest":
                bound = [r.get("error_bound") or 0.0 for r in mine]
                low = [e - b for e, b in zip(est, bound)]
                ax.fill_between(
                    xs,
                    [max(x, 0.0) for x in low] if clamp else low,
                    [e + b for e, b in zip(est, bound)],
                    color=line.get_color(),
                    alpha=0.12,
                    lw=0,
                )
            if cell is not None:
                ends.append((est[-1], name, line.get_color()))
            exact = sorted(truth_by.get((q, s), ()), key=lambda t: t["tick"])
            if exact:
                at = {r["tick"]: x for r, x in zip(mine, xs)}
                pts = [(at[t["tick"]], _value(t, cells)) for t in exact if t["tick"] in at]
                if pts:
                    ax.plot(*zip(*pts), lw=0.8, ls="--", color="black" if cell is None else line.get_color())
        if clamp:
            ax.set_ylim(bottom=0)
        _label_ends(ax, ends)
        ax.set_title(f"{q} · {s}", fontsize=9, loc="left")
        ax.tick_params(labelsize=7)
        if dates:
            locator = mdates.AutoDateLocator(maxticks=6)
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
            ax.xaxis.get_offset_text().set_fontsize(7)
        if k % ncols == 0:
            ax.set_ylabel("estimate", fontsize=8)
    for k in range(len(shown), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    for k in range(max(0, len(shown) - ncols), len(shown)):
        axes[k // ncols][k % ncols].set_xlabel("event time (as of, UTC)" if any_dates else "tick", fontsize=8)
    beta = rows[0].get("beta")
    title = f"releases with their (1 - beta) bounds, beta = {beta}"
    if truth:
        title += "; dashed: the exact answers (confidential)"
    if len(shown) < len(panels):
        title += f"; the first {len(shown)} of {len(panels)} panels"
    if sampled[0] > 1:
        title += f"; every {sampled[0]}-th of {sampled[1]:,} periods drawn"
    fig.suptitle(title, fontsize=10)
    return fig


def plot_releases(out_dir: str, out_file: str | None = None, truth: str | None = None, nonnegative=None) -> Path | None:
    """Draw the releases under ``out_dir``; returns the PNG path (None: no releases). ``truth``: a file or folder
    of exact answers to overlay (:func:`draw`)."""
    rows, k, periods = load_sampled(out_dir)
    if not rows:
        return None
    import matplotlib.pyplot as plt

    fig = draw(rows, load_rows(truth, releases_only=False) if truth else None, nonnegative, sampled=(k, periods))
    path = Path(out_file) if out_file else Path(out_dir) / "releases.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("output_dir", help="a file sink's path (holding releases* files: JSON lines or Avro)")
    ap.add_argument("--out", default=None, help="PNG file (default OUTPUT_DIR/releases.png)")
    ap.add_argument(
        "--truth",
        default=None,
        help="exact answers to overlay, for an evaluation (JSON lines: stream, query, tick, value; or the releases "
        "of a run with privacy.disable_noise, a file or its folder); the picture is then confidential",
    )
    args = ap.parse_args(argv)
    if args.truth and not load_rows(args.truth, releases_only=False):
        print(f"no records in {args.truth}", file=sys.stderr)
        return 2
    path = plot_releases(args.output_dir, args.out, truth=args.truth)
    if path is None:
        print(f"no releases* files under {args.output_dir}", file=sys.stderr)
        return 2
    print(f"picture: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
