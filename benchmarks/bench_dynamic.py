"""Fully-dynamic release: core throughput, memory, and error over time.

Part 1 (throughput): a synthetic sparse fully-dynamic stream (``workloads.py``)
of ``--updates`` updates (default 10^6) with n_t ~ 10^3, for the count and
100-cell histogram query sets together, for both budget profiles and several
update densities (updates per non-empty tick). Only the core's
``process_tick`` calls are timed; the stream is generated lazily. Reports
updates/s, segments, peak RSS and the kept state.

Part 2 (error over time): the fully-dynamic mechanism (paper and tuned) against
the two-stream baseline, on (a) a count, (b) a 100-cell histogram, (c) PMW on
all range queries over a 1024-value domain. Error at every release: |count
error|, max cell error, max range error. Writes PNG plots and a markdown
table to ``--out`` (default docs/figures).

Usage: python benchmarks/bench_dynamic.py [--updates 1000000] [--error-updates 200000]
       [--pmw-updates 100000] [--eps 1.0] [--skip-throughput] [--skip-error]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.workloads import sparse_dynamic_stream  # noqa: E402
from transforms.core import DynamicConfig, FullyDynamicRelease, QuerySet, TwoStreamBaseline  # noqa: E402
from transforms.core.foundation.accounting import PureDP  # noqa: E402
from transforms.core.foundation.entries import DELETE, INSERT  # noqa: E402
from transforms.core.foundation.noise import NoiseSource  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def throughput(num_updates: int, eps: float, noise: NoiseSource):
    queries = (QuerySet("count", "count"), QuerySet("cells", "histogram", domain_size=100))
    print("\n## Throughput (count + 100-cell histogram, n_t ~ 1000)\n")
    print("| profile | updates / non-empty tick | updates | updates/s | segments | live nodes | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for density in (1, 5, 20, 100):
        for profile in ("tuned", "paper"):
            mech = FullyDynamicRelease(DynamicConfig(queries, PureDP(eps), profile=profile))
            busy = 0.0
            for tick, ups in sparse_dynamic_stream(num_updates, updates_per_active_tick=density, seed=density):
                t0 = time.perf_counter()
                mech.process_tick(tick, ups, noise)
                busy += time.perf_counter() - t0
            print(
                f"| {profile} | {density} | {mech.num_updates} | {mech.num_updates / busy:,.0f} | {mech.closed} | "
                f"{len(mech.nodes)} | {peak_rss_mb():.0f} |",
                flush=True,
            )


def _errors(kind, est, live_hist):
    if kind == "count":
        return abs(float(est[0]) - float(live_hist.sum()))
    if kind == "hist":
        return float(np.max(np.abs(est - live_hist)))
    e = np.concatenate([[0.0], np.cumsum(np.asarray(est, dtype=float) - live_hist)])
    return float(e.max() - e.min())  # max over all ranges [a, b]


def error_over_time(kind: str, num_updates: int, eps: float, noise: NoiseSource, out: Path):
    if kind == "count":
        q, field, d = QuerySet("count", "count"), "count", 1
    elif kind == "hist":
        q, field, d = QuerySet("cells", "histogram", domain_size=100), "cell", 100
    else:
        q, field, d = QuerySet("ranges", "pmw", domain_size=1024, ranges=True), "value", 1024
    series = {}
    for label, cls, profile, horizon in [
        ("fully-dynamic (tuned, horizon 2^16 segments)", FullyDynamicRelease, "tuned", 1 << 16),
        ("fully-dynamic (tuned)", FullyDynamicRelease, "tuned", None),
        ("fully-dynamic (paper)", FullyDynamicRelease, "paper", None),
        ("two-stream baseline", TwoStreamBaseline, "tuned", None),
    ]:
        mech = cls(DynamicConfig((q,), PureDP(eps), profile=profile, max_segments=horizon))
        live: dict[str, int] = {}
        hist = np.zeros(d)
        pts = []
        t0 = time.perf_counter()
        for tick, ups in sparse_dynamic_stream(num_updates, fields=(field,), seed=7):
            for u in ups:  # exact reference
                if u.op != INSERT:
                    hist[live.pop(u.entry_id)] -= 1
                if u.op != DELETE:
                    live[u.entry_id] = u.item[0]
                    hist[u.item[0]] += 1
            for a in mech.process_tick(tick, ups, noise).answers:
                pts.append((mech.num_updates, _errors(kind, a.estimate, hist), a.error_bound or 0.0))
        series[label] = (np.array(pts), time.perf_counter() - t0)
    _plot(kind, series, out)
    return series


def _plot(kind, series, out: Path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover
        print("(matplotlib missing: pip install -e '.[bench]' for the plots)")
        return
    titles = {"count": "count", "hist": "100-cell histogram (max cell error)", "pmw": "PMW, all ranges of 1024 values"}
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, (pts, _) in series.items():
        if len(pts):
            ax.plot(pts[:, 0], pts[:, 1], label=label, lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("updates so far (N_t); live records n_t ~ 1000")
    ax.set_ylabel("absolute error at each release")
    ax.set_title(f"Error over time: {titles[kind]}")
    ax.legend()
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / f"error_{kind}.png", dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--updates", type=int, default=1_000_000)
    ap.add_argument("--error-updates", type=int, default=200_000)
    ap.add_argument("--pmw-updates", type=int, default=100_000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    ap.add_argument("--skip-throughput", action="store_true")
    ap.add_argument("--skip-error", action="store_true")
    args = ap.parse_args(argv)
    noise = NoiseSource.generate()
    print(f"# bench_dynamic: eps = {args.eps} (pure DP), beta = 0.05")
    if not args.skip_throughput:
        throughput(args.updates, args.eps, noise)
    if args.skip_error:
        return
    print("\n## Error over time\n")
    print(
        "| query | mechanism | updates | releases | median error (last half) | max error (last half) | "
        "median error bound (last half) | releases with error > bound | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, n in (("count", args.error_updates), ("hist", args.error_updates), ("pmw", args.pmw_updates)):
        for label, (pts, secs) in error_over_time(kind, n, args.eps, noise, args.out).items():
            late = pts[pts[:, 0] > n / 2] if len(pts) else pts
            if not len(late):
                continue
            print(
                f"| {kind} | {label} | {n} | {len(pts)} | {np.median(late[:, 1]):.1f} | {late[:, 1].max():.1f} | "
                f"{np.median(late[:, 2]):.1f} | {int(np.sum(pts[:, 1] > pts[:, 2]))} | {secs:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
