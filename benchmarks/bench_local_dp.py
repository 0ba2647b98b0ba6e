"""Benchmark of continual randomized response (``docs/local_dp.md``).

``python -m benchmarks.bench_local_dp [--reports 1000000] [--skip-throughput]``:

1. throughput: reports per second through the collector pipeline on the
   DirectRunner (files -> parse -> validate -> one report per node -> counts ->
   collector -> JSON lines), for a simulated reports file of the given size;
2. estimation error vs the number of entries N and the entry's epsilon (direct
   summation and HDCR, 24 periods, at most 2 mutations), RMSE of the final
   histogram estimate over seeds, beside the released standard deviation;
3. the picture of the bundled demo's estimates against the truth over time
   (``docs/figures/local_dp_estimate.png``), from ``configs/local_dp.yaml``'s
   output and ``data/rr_truth.json``.
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pipelines.rr_simulate import write_reports
from transforms.core import DynamicConfig, PureDP, QuerySet
from transforms.core.families.local_dp import RandomizedResponseCollector, RROptions, in_memory, simulate

ROOT = Path(__file__).resolve().parents[1]


def throughput(num_reports: int) -> dict:
    periods = 25
    entries = num_reports // periods
    cfg = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(16.0))
    coll = RandomizedResponseCollector(cfg, options=RROptions(max_mutations=2), end_tick=periods)
    t0 = time.perf_counter()
    sim = simulate(coll.design, entries, periods, seed=1)
    t_sim = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        reports = Path(tmp) / "reports.jsonl"
        n = write_reports(sim, reports, ["A", "B", "C"], 0.0, 3600.0)
        conf = Path(tmp) / "c.yaml"
        conf.write_text(
            json.dumps(
                {
                    "privacy": {"epsilon": 16.0},
                    "time": {"field": "time", "tick_seconds": 3600, "origin": 0, "end": periods * 3600},
                    "mechanism": {"kind": "randomized_response", "max_mutations": 2},
                    "queries": [{"name": "answer", "type": "histogram", "field": "answer", "domain": ["A", "B", "C"]}],
                    "source": {"type": "file", "path": str(reports)},
                    "sinks": [{"type": "file", "path": str(Path(tmp) / "out")}],
                }
            )
        )
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pipelines.release", "--config", str(conf)],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        wall = time.perf_counter() - t0
        got = sorted(
            (json.loads(line) for f in glob.glob(str(Path(tmp) / "out" / "releases*.jsonl")) for line in open(f)),
            key=lambda r: r["tick"],
        )
    expected = in_memory(coll, sim.reports, periods)
    same = [list(r["estimate"].values()) for r in got] == [list(e.estimate) for e in expected]
    return {"reports": n, "entries": entries, "simulate_s": t_sim, "pipeline_s": wall, "per_s": n / wall, "same": same}


def error_table(seeds: int = 4) -> list[dict]:
    rows = []
    for aggregation in ("direct", "hdcr"):
        opts = RROptions(max_mutations=2) if aggregation == "direct" else RROptions(max_mutations=2, aggregation="hdcr")
        for eps in (4.0, 8.0, 16.0):
            for n in (1000, 3000, 10000):
                cfg = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(eps))
                errs, sds, bounds = [], [], []
                for seed in range(seeds):
                    coll = RandomizedResponseCollector(cfg, options=opts, end_tick=24)
                    sim = simulate(coll.design, n, 24, seed=100 + seed)
                    rel = in_memory(coll, sim.reports, 24)[-1]
                    errs.append(np.array(rel.estimate) - np.array(sim.truth[-1]))
                    sds.append(np.sqrt(rel.variance).mean())
                    bounds.append(rel.error_bound)
                rows.append(
                    {
                        "aggregation": aggregation,
                        "epsilon": eps,
                        "entries": n,
                        "rmse": float(np.sqrt(np.mean(np.square(errs)))),
                        "released_sd": float(np.mean(sds)),
                        "bound": float(np.mean(bounds)),
                        "alive": float(np.sum(sim.truth[-1])),
                    }
                )
                print(rows[-1], flush=True)
    return rows


def plot_demo(path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rels = sorted(
        (json.loads(line) for f in glob.glob(str(ROOT / "output/local_dp/releases*.jsonl")) for line in open(f)),
        key=lambda r: r["tick"],
    )
    truth = json.loads((ROOT / "data/rr_truth.json").read_text())
    domain = truth["domain"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ticks = [r["tick"] for r in rels]
    for i, v in enumerate(domain):
        color = f"C{i}"
        est = np.array([r["estimate"][v] for r in rels])
        b = np.array([r["error_bound"] for r in rels])
        sd = np.sqrt([r["variance"][v] for r in rels])
        ax.plot(ticks, [h[i] for h in truth["histograms"][: len(ticks)]], color=color, lw=2, label=f"{v}: truth")
        ax.plot(ticks, est, color=color, ls="--", marker="o", ms=3, label=f"{v}: estimate")
        ax.fill_between(ticks, est - 2 * sd, est + 2 * sd, color=color, alpha=0.15)
        if i == 0:
            ax.plot(ticks, est + b, color="grey", lw=0.8, ls=":", label="(1-beta) bound (cell A)")
            ax.plot(ticks, est - b, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("period (hour)")
    ax.set_ylabel("entries with that answer")
    ax.set_title("configs/local_dp.yaml: 3000 entries, eps 16 per entry, k = 2, direct (band: +-2 sd)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=1_000_000)
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-errors", action="store_true")
    args = ap.parse_args(argv)
    if not args.skip_throughput:
        print(throughput(args.reports), flush=True)
    if not args.skip_errors:
        error_table()
    plot_demo(ROOT / "docs" / "figures" / "local_dp_estimate.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
