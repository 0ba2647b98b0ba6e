"""Per-cell accuracy of a 16-cell histogram on a month of flights-like data (issue 31, "Histograms").

The stream is :func:`benchmarks.workloads.flights_stream`: 10-minute ticks over ``--days`` days (an answer
every tick, 4,320 periods a month, a bounded run with a public end), about 370 flights alive on average
with a daily cycle, each living hours, 16 carriers with Zipf-like shares (``--zipf``: 2.2 by default, the
largest carrier 69%, the smallest about 0.6 flights alive; 1.0 and 0 (flat) for comparison). Queries: the
count and the 16-cell histogram (the budget split evenly between them, as a new user's configuration
does). ``auto`` releases both (``net_change``: the k-ary tree with Honaker's estimator under eps = 1, the
square-root factorization under (1, 1e-6)); each release's histogram is then post-processed (all free:
functions of released values only):

* ``released``: as the mechanism releases it;
* ``clamped``: cells clamped at 0 (``release.clamp``, **today's default**);
* ``consistent``: projected onto the cells >= 0 summing to the count (``release.consistent: true``),
  stated bound ``max(2 B_h, B_c)`` with ``beta_h + beta_c``;
* ``consistent, threshold bound``: the same cells, stated bound ``B_h + |tau|`` with ``beta_h``
  (``Consistency(..., threshold_bound=True)``, :meth:`Consistency.default_for`);
* ``own total``: projected onto the cells >= 0 summing to the histogram's own clamped total (no count),
  ``B_h + |tau|`` with ``beta_h``;
* ``consistent + 1 h average`` (exploratory, NO stated bound): the mean of the last 6 consistent releases,
  a filter over time: what it would buy;
* ``SURE soft threshold`` (exploratory): ``max(x - lambda, 0)`` with ``lambda >= 0`` minimising Stein's
  unbiased risk estimate over the cells (noise sd taken from ``B_h`` as a Gaussian quantile), stated
  ``B_h + lambda`` (the threshold lemma); its cells do not sum to the count.

``--hierarchy`` prints what a hierarchical release over the 16 cells would give a cell at the same budget
(the GLS variance of a leaf, relative to the flat release).

Reported per variant: the mean absolute cell error (over ticks, cells and seeds; in brackets the ratio of
the clamped error to it), the mean over seeds of each cell's mean error, the mean stated bound, the share
of ticks whose stated bound covered the largest cell error, and beta.

Usage: python -m benchmarks.bench_histogram [--days 30] [--seeds 3] [--zipf 2.2,1.0,0] [--per-cell]
"""

from __future__ import annotations

import argparse
import sys
import time
from statistics import NormalDist

import numpy as np

from benchmarks.workloads import flights_stream
from transforms.core import MECHANISMS, ApproxDP, DynamicConfig, NoiseSource, PureDP, QuerySet, ReleaseIdentity
from transforms.core.continual.consistency import Consistency, make_consistent

BUDGETS = {"eps = 1": PureDP(1.0), "(1, 1e-6)": ApproxDP(1.0, 1e-6)}
CELLS = 16
QUERIES = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=CELLS))
POST = {
    "consistent": Consistency((("h", "n"),)),
    "consistent, threshold bound": Consistency((("h", "n"),), threshold_bound=True),
    "own total": Consistency((), own_total=("h",), threshold_bound=True),
}
VARIANTS = ("released", "clamped (today)", *POST, "consistent + 1 h average", "SURE soft threshold")
WINDOW = 6  # releases in the exploratory moving average (one hour of 10-minute ticks)


def run(config, batches, last_tick: int, seed: int):
    """``(truth, answers)``: per tick the true cells, and per tick the released answers ``{query: Answer}``
    of ``auto`` on the batches (one keyed noise draw per seed)."""
    core = MECHANISMS["auto"].core_cls(config, stream="bench", end_tick=last_tick, every_ticks=1)
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-histogram-{seed}"))
    truth = np.zeros((last_tick + 1, CELLS))
    answers: dict[int, list] = {}
    live: dict[str, int] = {}
    hist = np.zeros(CELLS)
    prev = 0

    def collect(got):
        for a in got:
            answers.setdefault(a.tick, []).append(a)

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
    return truth, answers


def variants(answers: dict) -> dict:
    """Per variant: ``(cells [ticks x CELLS], bound [ticks], beta [ticks])`` over the ticks 1..last."""
    ticks = sorted(answers)
    out = {}
    for name in ("released", "clamped (today)", *POST):
        cells, bounds, betas = [], [], []
        for t in ticks:
            group = answers[t] if name not in POST else make_consistent(answers[t], POST[name])
            h = next(a for a in group if a.query == "h")
            est = np.asarray(h.estimate, float)
            cells.append(np.maximum(est, 0.0) if name == "clamped (today)" else est)
            bounds.append(h.error_bound)
            betas.append(h.beta)
        out[name] = (np.asarray(cells), np.asarray(bounds, float), np.asarray(betas, float))
    cons = out["consistent"][0]
    avg = np.array([cons[max(0, i - WINDOW + 1) : i + 1].mean(0) for i in range(len(cons))])
    out["consistent + 1 h average"] = (avg, np.full(len(avg), np.nan), np.full(len(avg), np.nan))
    raw, bound, beta = out["released"]
    sd = bound / NormalDist().inv_cdf(1 - beta[0] / (2 * CELLS))  # B_h is the Gaussian beta / cells quantile
    lam = np.array([sure_threshold(x, s * s) for x, s in zip(raw, sd)])
    out["SURE soft threshold"] = (np.maximum(raw - lam[:, None], 0.0), bound + lam, beta)
    return out


def sure_threshold(x, var: float) -> float:
    """The ``lambda >= 0`` (0 or one of the positive cells) minimising Stein's unbiased risk estimate of
    ``max(x - lambda, 0)`` for noise of variance ``var``: ``sum(x_i^2 for x_i <= lambda) + (lambda^2 + 2 var)
    * #{x_i > lambda}``."""
    best, best_lam = None, 0.0
    for lam in np.concatenate([[0.0], np.sort(x[x > 0])]):
        risk = float(np.where(x > lam, lam * lam + 2 * var, x * x).sum())
        if best is None or risk < best:
            best, best_lam = risk, float(lam)
    return best_lam


def hierarchy() -> list[tuple[str, float]]:
    """``(release, a cell's GLS variance relative to the flat release of the cells at the same budget)``:
    k-ary trees over the 16 cells (every level at the same share; one update is in one node a level) and
    the count with the cells (each at half the budget: the flat release is then at half too)."""
    out = []
    for name, widths in (("binary tree (5 levels)", (1, 2, 4, 8, 16)), ("4-ary tree (3 levels)", (1, 4, 16))):
        rows = [np.isin(np.arange(CELLS) // w, [j]).astype(float) for w in widths for j in range(CELLS // w)]
        a = np.array(rows)
        out.append((name, float(np.linalg.inv(a.T @ a / len(widths))[0, 0])))
    a = np.vstack([np.ones(CELLS), np.eye(CELLS)])
    out.append(
        ("count + cells, least squares (vs cells at half the budget: 2.0)", float(np.linalg.inv(a.T @ a / 2)[0, 0]))
    )
    return out


def measure(days: int, seeds: int, zipf: float) -> dict:
    """Per budget, per variant: the per-seed per-cell mean errors, the bounds, coverage and betas."""
    last_tick = days * 144
    batches = list(flights_stream(days, cells=CELLS, zipf=zipf))
    result = {}
    for bname, budget in BUDGETS.items():
        acc = {v: {"cells": [], "bound": [], "held": [], "beta": []} for v in VARIANTS}
        for seed in range(seeds):
            truth, answers = run(DynamicConfig(QUERIES, budget), batches, last_tick, seed)
            true = truth[1:]
            for v, (cells, bound, beta) in variants(answers).items():
                err = np.abs(cells - true)
                acc[v]["cells"].append(err.mean(0))
                acc[v]["bound"].append(np.nanmean(bound) if np.isfinite(bound).any() else np.nan)
                acc[v]["held"].append(np.mean(err.max(1) <= bound) if np.isfinite(bound).any() else np.nan)
                acc[v]["beta"].append(np.nanmean(beta) if np.isfinite(beta).any() else np.nan)
        result[bname] = (acc, truth[1:].mean(0))
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--zipf", default="2.2,1.0,0")
    ap.add_argument("--per-cell", action="store_true", help="print each cell's mean error too")
    ap.add_argument("--hierarchy", action="store_true", help="print the hierarchical releases' cell variance")
    args = ap.parse_args(argv)
    if args.hierarchy:
        for name, v in hierarchy():
            print(f"{name}: a cell's variance {v:.3f}x the flat release's")
    print(f"# bench_histogram: flights-like stream, {args.days} days of 10-minute ticks, {CELLS} cells, auto,")
    print(f"# count + histogram (even split), {args.seeds} seeds, beta 0.05 per query\n")
    print(
        "| zipf | budget | histogram | mean cell error (x better than clamped) | per seed | mean stated bound "
        "| bound held | beta |"
    )
    print("|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    per_cell_rows = []
    for zipf in (float(z) for z in args.zipf.split(",")):
        for bname, (acc, true_cells) in measure(args.days, args.seeds, zipf).items():
            base = float(np.mean(acc["clamped (today)"]["cells"]))
            for v in VARIANTS:
                a = acc[v]
                mean = float(np.mean(a["cells"]))
                seeds = " / ".join(f"{np.mean(c):.2f}" for c in a["cells"])
                bound = np.mean(a["bound"])
                held = np.mean(a["held"])
                beta = np.mean(a["beta"])
                print(
                    f"| {zipf:g} | {bname} | {v} | {mean:.2f} ({base / mean:.2f}x) | {seeds} | "
                    + ("-" if np.isnan(bound) else f"{bound:.1f}")
                    + " | "
                    + ("-" if np.isnan(held) else f"{held:.2%}")
                    + " | "
                    + ("-" if np.isnan(beta) else f"{beta:.2f}")
                    + " |",
                    flush=True,
                )
                per_cell_rows.append((zipf, bname, v, np.mean(a["cells"], 0), true_cells))
    if args.per_cell:
        print("\nPer cell (largest carrier first): the true mean, then each variant's mean error\n")
        for zipf, bname, v, cells, true_cells in per_cell_rows:
            if v == "released":
                print(f"| {zipf:g} | {bname} | truth | " + " | ".join(f"{x:.1f}" for x in true_cells) + " |")
            print(f"| {zipf:g} | {bname} | {v} | " + " | ".join(f"{x:.1f}" for x in cells) + " |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
