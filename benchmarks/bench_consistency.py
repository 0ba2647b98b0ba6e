"""What a histogram consistent with the count (``release.consistent``) does to
the error, measured on the dense stream of ``bench_utility.py``.

For each budget (eps = 1 pure; (1, 1e-6)) the ``auto`` mechanism (net_change
on these additive queries) releases the count and a histogram every tick;
each histogram is then post-processed four ways: as released, clamped at 0
(``release.clamp``, the default), consistent with the count (the projection
of ``transforms.core.continual.consistency``), and consistent and rounded. Reported per
variant: the mean and p95 over ticks of the mean absolute cell error, the
mean over ticks of the largest cell error, the mean stated bound and how often
it held (the consistent bound is max(2 B_h, B_c), stated with beta_h +
beta_c), and how far the cells' sum is from the released count.

Usage: python benchmarks/bench_consistency.py [--days 7] [--seeds 3] [--cells 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import bench_utility  # noqa: E402
from transforms.core import MECHANISMS, DynamicConfig, NoiseSource, QuerySet, ReleaseIdentity  # noqa: E402
from transforms.core.continual.consistency import Consistency, make_consistent  # noqa: E402

VARIANTS = ("released", "clamped", "consistent", "consistent+round")


def run(config, batches, last_tick, cells, seed):
    """Per tick: the true histogram, and per variant the released histogram,
    its bound and the released count."""
    core = MECHANISMS["auto"].core_cls(config, stream="bench", end_tick=last_tick, every_ticks=1)
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-consistency-{seed}"))
    live: dict[str, int] = {}
    truth = np.zeros((last_tick + 1, cells))
    out = {v: {} for v in VARIANTS}
    plain, rounded = Consistency((("h", "n"),)), Consistency((("h", "n"),), round_answers=True)

    def collect(answers):
        by_tick = {}
        for a in answers:
            by_tick.setdefault(a.tick, []).append(a)
        for tick, group in by_tick.items():
            for variant, post in (
                ("released", lambda g: g),
                ("clamped", lambda g: g),
                ("consistent", lambda g: make_consistent(g, plain)),
                ("consistent+round", lambda g: make_consistent(g, rounded)),
            ):
                got = {a.query: a for a in post(group)}
                h = np.asarray(got["h"].estimate, float)
                if variant == "clamped":
                    h = np.maximum(h, 0)
                out[variant][tick] = (h, got["h"].error_bound, float(got["n"].estimate[0]), got["h"].beta)

    prev, hist = 0, np.zeros(cells)
    for tick, ups in batches:
        truth[prev + 1 : tick] = hist
        for u in ups:
            if u.op in ("delete", "upsert"):
                hist[live.pop(u.entry_id)] -= 1
            if u.op in ("insert", "upsert"):
                live[u.entry_id] = u.item[1]
                hist[u.item[1]] += 1
        truth[tick] = hist
        collect(core.process_tick(tick, ups, noise).answers)
        prev = tick
    truth[prev + 1 :] = hist
    for res in core.run_to_end(noise):
        collect(res.answers)
    return truth, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    cells = bench_utility.DENSE_CELLS
    last_tick = args.days * 1440
    batches = list(bench_utility.dense_stream(args.days))
    queries = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=cells))
    print(f"# bench_consistency: dense stream, {args.days} days ({last_tick:,} ticks), {cells} cells, auto, ")
    print(f"# {args.seeds} seeds, beta 0.05 per query\n")
    print(
        "| budget | histogram | mean cell error (mean / p95 over ticks) | max cell error | mean bound | "
        "bound held | beta | max abs(sum - count) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for bname, budget in bench_utility.BUDGETS.items():
        config = DynamicConfig(queries, budget)
        acc = {v: {"mean": [], "max": [], "bound": [], "held": [], "gap": [], "beta": []} for v in VARIANTS}
        for seed in range(args.seeds):
            truth, out = run(config, batches, last_tick, cells, seed)
            for v in VARIANTS:
                for tick, (h, bound, count, beta) in out[v].items():
                    err = np.abs(h - truth[tick])
                    acc[v]["mean"].append(err.mean())
                    acc[v]["max"].append(err.max())
                    acc[v]["bound"].append(bound)
                    acc[v]["held"].append(err.max() <= bound)
                    acc[v]["gap"].append(abs(h.sum() - count))
                    acc[v]["beta"].append(beta)
        for v in VARIANTS:
            a = {k: np.asarray(x, float) for k, x in acc[v].items()}
            print(
                f"| {bname} | {v} | {a['mean'].mean():.2f} / {np.percentile(a['mean'], 95):.2f} | "
                f"{a['max'].mean():.2f} | {a['bound'].mean():.1f} | {a['held'].mean():.2%} | "
                f"{a['beta'].mean():.2f} | {a['gap'].max():.1f} |",
                flush=True,
            )
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
