"""Draw the releases of a run: each query's estimate over time with its bound.

``python -m pipelines.plot OUTPUT_DIR [--out FILE.png]`` reads
``OUTPUT_DIR/releases*.jsonl`` (the differentially private outputs only) and
draws one panel per (query, stream): the estimate at every release and the
band ``estimate +/- error_bound`` (the release's (1-beta) bound). A histogram
panel draws every cell. Plotting is post-processing of released values: it
costs no privacy. Written to ``OUTPUT_DIR/releases.png`` by default.
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path

__all__ = ["plot_releases", "main"]


def _load(out_dir: str) -> list[dict]:
    rows = []
    for path in sorted(glob.glob(str(Path(out_dir) / "releases*.jsonl"))):
        with open(path) as fh:
            rows += [json.loads(line) for line in fh if line.strip()]
    return rows


def plot_releases(out_dir: str, out_file: str | None = None) -> Path | None:
    """Draw the releases under ``out_dir``; returns the PNG path (None: no releases)."""
    rows = _load(out_dir)
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    queries = sorted({r["query"] for r in rows}, key=[r["query"] for r in rows].index)
    streams = sorted({r["stream"] for r in rows})
    fig, axes = plt.subplots(
        len(queries), len(streams), figsize=(6 * len(streams), 2.8 * len(queries)), squeeze=False, sharex=True
    )
    for i, q in enumerate(queries):
        for j, s in enumerate(streams):
            ax = axes[i][j]
            mine = sorted((r for r in rows if r["query"] == q and r["stream"] == s), key=lambda r: r["tick"])
            if not mine:
                continue
            ticks = [r["tick"] for r in mine]
            first = mine[0]["estimate"]
            cells = list(first) if isinstance(first, dict) else [None]
            for cell in cells:
                est = [r["estimate"][cell] if cell is not None else r["estimate"] for r in mine]
                bound = [r["error_bound"] or 0.0 for r in mine]
                line = ax.plot(ticks, est, lw=0.9, label=cell if cell is not None else "estimate")[0]
                ax.fill_between(
                    ticks,
                    [e - b for e, b in zip(est, bound)],
                    [e + b for e, b in zip(est, bound)],
                    color=line.get_color(),
                    alpha=0.12,
                    lw=0,
                )
            ax.set_title(f"{q} ({s})", fontsize=10)
            if cells != [None]:
                ax.legend(fontsize=7, ncol=len(cells))
            if i == len(queries) - 1:
                ax.set_xlabel("tick")
    beta = rows[0].get("beta")
    fig.suptitle(f"releases with their (1 - beta) bounds, beta = {beta}", fontsize=11)
    fig.tight_layout()
    path = Path(out_file) if out_file else Path(out_dir) / "releases.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("output_dir", help="a file sink's path (holding releases*.jsonl)")
    ap.add_argument("--out", default=None, help="PNG file (default OUTPUT_DIR/releases.png)")
    args = ap.parse_args(argv)
    path = plot_releases(args.output_dir, args.out)
    if path is None:
        print(f"no releases*.jsonl under {args.output_dir}", file=sys.stderr)
        return 2
    print(f"picture: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
