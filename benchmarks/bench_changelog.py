"""Changelog releases on an orders changelog (``docs/changelog.md``).

The workload (``transforms/core/families/changelog_orders.py``): orders created over a
year (daily ticks), each shipped / delivered / returned or cancelled, at most
k = 4 mutations, all within B = 30 days of creation (1% of the orders try one
mutation too many or too late: dead-lettered), about 10^6 mutations.

Measured:

* throughput in memory (the core with its entry registry: ``process_tick``)
  for ``dcr``, ``hdcr``, ``swcr`` and ``net_change``, on the whole changelog;
* throughput on the DirectRunner (the CLI pipeline with ``hdcr``, JSON lines in
  and out) on the first ``--beam-mutations`` mutations (default: all of them;
  about 140 s for 10^6 on this machine);
* the error at the same entry-level guarantee (eps = 1 per order for the whole
  year, pure DP, three query sets: open orders, orders by status, order
  value): RMSE over the year of the current value for ``dcr``, ``hdcr`` and
  ``net_change`` (entry level by group privacy over 2k - 1 updates), and of
  the 30-day change for ``swcr`` (direct and from an HDCR) against the
  difference of two current values of the others; over ``--reps`` noise
  draws. A table on stdout and a plot in ``docs/figures/changelog_error.png``.

Usage: python benchmarks/bench_changelog.py [--mutations 1000000] [--reps 20] [--beam-mutations 1000000]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from transforms.core import MECHANISMS, DynamicConfig, NoiseSource, PureDP, QuerySet, ReleaseIdentity, Update  # noqa: E402
from transforms.core.families.changelog_orders import STATUSES, generate  # noqa: E402
from transforms.core.foundation.accounting import PrivacyUnit  # noqa: E402

DAY = 86400.0
K, B_DAYS, DAYS, W_DAYS = 4, 30, 365, 30
LEVELS = 101
QUERIES = (
    QuerySet("open_orders", "count"),
    QuerySet("by_status", "histogram", domain_size=len(STATUSES)),
    QuerySet("order_value", "linear", domain_size=LEVELS, matrix=(tuple(b / (LEVELS - 1) for b in range(LEVELS)),)),
)
CONFIG = DynamicConfig(QUERIES, PureDP(1.0), unit=PrivacyUnit.entry(K, B_DAYS))
RUNS = {
    "dcr": ("dcr", {}),
    "hdcr": ("hdcr", {}),
    "swcr (direct)": ("swcr", {"window": W_DAYS, "method": "direct"}),
    "swcr (hdcr)": ("swcr", {"window": W_DAYS, "method": "hdcr"}),
    "swcr (auto)": ("swcr", {"window": W_DAYS}),
    "net_change": ("net_change", {}),
}


def orders_for(mutations: int, seed: int = 16) -> list[dict]:
    """About ``mutations`` mutations of the orders changelog over a year."""
    n = max(10, int(mutations / 2.9))
    return generate(orders=n, days=DAYS, seed=seed, k=K, window_days=B_DAYS)


def to_ticks(records):
    """(tick, [Update]) with items (0, status, value level)."""
    by_tick: dict[int, list] = {}
    for r in records:
        tick = max(1, math.ceil(r["time"] / DAY))
        item = None
        if "item" in r:
            level = int(round(min(max(r["item"]["amount"], 0.0), 200.0) / 200.0 * (LEVELS - 1)))
            item = (0, STATUSES.index(r["item"]["status"]), level)
        by_tick.setdefault(tick, []).append(Update(r["op"], r["id"], item))
    return sorted(by_tick.items())


def make(label, end=DAYS):
    name, opts = RUNS[label]
    spec = MECHANISMS[name]
    return spec.core_cls(CONFIG, stream="orders", options=spec.options(**opts), end_tick=end, every_ticks=1)


def throughput_in_memory(ticks, n_mut):
    out = {}
    for label in RUNS:
        core = make(label)
        noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity("bench-throughput"))
        t0 = time.perf_counter()
        rejected = 0
        for t, ups in ticks:
            rejected += len(core.process_tick(t, ups, noise).rejections)
        core.run_to_end(noise)
        dt = time.perf_counter() - t0
        out[label] = (n_mut / dt, dt, rejected)
    return out


def truths(ticks):
    """Exact current values per day (count, status histogram, value) after enforcement."""
    reg = make("dcr").registry
    cur = np.zeros(1 + len(STATUSES) + 1)
    per_day = np.zeros((DAYS + 1, cur.size))
    batches = {}
    for t, ups in ticks:
        batch, _ = reg.resolve_tick(t, ups)
        batches[t] = batch
        for item in batch.inserts:
            cur[0] += 1
            cur[1 + item[1]] += 1
            cur[-1] += item[2] / (LEVELS - 1)
        for item, _ in batch.deletes:
            cur[0] -= 1
            cur[1 + item[1]] -= 1
            cur[-1] -= item[2] / (LEVELS - 1)
        per_day[t] = cur
    for t in range(1, DAYS + 1):  # days without mutations carry the values forward
        if t not in batches:
            per_day[t] = per_day[t - 1]
    return per_day, batches


def errors(per_day, batches, reps):
    """Per mechanism: squared errors per day (count, mean over status cells, value), averaged over reps."""
    from transforms.core.foundation.entries import TickBatch

    out = {}
    for label in RUNS:
        sq = np.zeros((DAYS + 1, 3))
        for rep in range(reps):
            core = make(label)
            noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-error-{rep}"))
            answers = []
            for t in range(1, DAYS + 1):
                answers += core.apply(batches.get(t, TickBatch(t)), noise).answers
            answers += [a for r in core.run_to_end(noise) for a in r.answers]
            window = label.startswith("swcr")
            for a in answers:
                exact = per_day[a.tick]
                if window:
                    exact = exact - per_day[max(0, a.tick - W_DAYS)]
                col = {"open_orders": 0, "by_status": 1, "order_value": 2}[a.query]
                sl = {0: slice(0, 1), 1: slice(1, 1 + len(STATUSES)), 2: slice(-1, None)}[col]
                sq[a.tick, col] += float(np.mean((np.asarray(a.estimate) - exact[sl]) ** 2)) / reps
        out[label] = sq
    return out


def window_from_current(sq):
    """The 30-day change from two current values (independent noises at days t and t - W
    for the day-sized nodes' sums: variance at most the sum)."""
    out = np.zeros_like(sq)
    for t in range(1, DAYS + 1):
        out[t] = sq[t] + (sq[t - W_DAYS] if t > W_DAYS else 0)
    return out


def directrunner(records, n):
    """Wall time of the CLI pipeline (DirectRunner) on the first n mutations."""
    from pipelines.release import main

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "orders.jsonl"
        data.write_text("\n".join(json.dumps(r) for r in records[:n]) + "\n")
        cfg = {
            "privacy": {"epsilon": 1.0, "unit": "entry", "max_mutations_per_entry": K, "mutation_window": B_DAYS * DAY},
            "time": {"field": "time", "tick_seconds": DAY, "origin": 0, "end": DAYS * DAY},
            "mechanism": {"kind": "hdcr"},
            "queries": [
                {"name": "open_orders", "type": "count"},
                {"name": "by_status", "type": "histogram", "field": "status", "domain": list(STATUSES)},
                {"name": "order_value", "type": "sum", "field": "amount", "lower": 0, "upper": 200},
            ],
            "source": {"type": "file", "path": str(data), "format": "jsonl"},
            "sinks": [{"type": "file", "path": str(Path(tmp) / "out"), "format": "jsonl"}],
        }
        import yaml

        (Path(tmp) / "cfg.yaml").write_text(yaml.safe_dump(cfg))
        import os

        os.environ.setdefault("DP_NOISE_KEY", bytes(range(32)).hex())
        t0 = time.perf_counter()
        rc = main(["--config", str(Path(tmp) / "cfg.yaml"), "--runner=DirectRunner"])
        dt = time.perf_counter() - t0
    assert rc == 0
    return n / dt, dt


def plot(sq, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    days = np.arange(1, DAYS + 1)
    for label in ("dcr", "hdcr", "net_change"):
        axes[0].plot(days, np.sqrt(sq[label][1:, 0]), label=label)
    axes[0].set(title="open orders: error of the current value", xlabel="day", ylabel="RMSE (orders)")
    axes[0].legend()
    for label in ("swcr (direct)", "swcr (hdcr)"):
        axes[1].plot(days, np.sqrt(sq[label][1:, 0]), label=label)
    for label in ("hdcr", "net_change"):
        axes[1].plot(days, np.sqrt(window_from_current(sq[label])[1:, 0]), "--", label=f"{label} (difference)")
    axes[1].set(title=f"open orders: error of the {W_DAYS}-day change", xlabel="day", ylabel="RMSE (orders)")
    axes[1].legend()
    fig.suptitle("orders changelog: eps = 1 per order (k = 4 mutations within 30 days), pure DP, 3 query sets")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutations", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--beam-mutations", type=int, default=1_000_000)
    ap.add_argument("--plot", default=str(ROOT / "docs" / "figures" / "changelog_error.png"))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    records = orders_for(args.mutations)
    ticks = to_ticks(records)
    n = len(records)
    print(f"orders changelog: {n} mutations over {DAYS} days (generated in {time.perf_counter() - t0:.1f} s)")
    for label in RUNS:
        core = make(label)
        print(
            f"  {label:14s} c={core.c if label != 'net_change' else '-'} "
            f"h={core.h if label != 'net_change' else '-'} fold={getattr(core, 'total_fold', '2k-1 = 7 (group)')}"
        )
    print("\nthroughput in memory (process_tick: registry with k and B enforced, then the release):")
    for label, (rate, dt, rejected) in throughput_in_memory(ticks, n).items():
        print(f"  {label:14s} {rate:>10,.0f} mutations/s  ({dt:.1f} s; {rejected} dead-lettered)")
    if args.beam_mutations:
        rate, dt = directrunner(records, min(n, args.beam_mutations))
        print(
            f"\nDirectRunner (CLI, hdcr, JSON lines): {rate:,.0f} mutations/s "
            f"({min(n, args.beam_mutations)} in {dt:.1f} s)"
        )
    per_day, batches = truths(ticks)
    sq = errors(per_day, batches, args.reps)
    print(f"\nerror over the year ({args.reps} noise draws; RMSE over days 1..{DAYS}; the same entry-level eps = 1):")
    print(f"  {'mechanism':28s} {'open orders':>12s} {'status cell':>12s} {'value (x200)':>13s}  answers")
    rows = [
        (label, sq[label], "current value" if not label.startswith("swcr") else f"{W_DAYS}-day change")
        for label in RUNS
    ]
    rows += [
        (f"{lab} (difference)", window_from_current(sq[lab]), f"{W_DAYS}-day change")
        for lab in ("dcr", "hdcr", "net_change")
    ]
    for label, s, what in rows:
        r = np.sqrt(s[1:].mean(axis=0))
        print(f"  {label:28s} {r[0]:12.1f} {r[1]:12.1f} {r[2] * 200:13.0f}  {what}")
    last = {label: np.sqrt(sq[label][DAYS, 0]) for label in ("dcr", "hdcr", "net_change")}
    print("  open orders at day 365: " + ", ".join(f"{k} {v:.1f}" for k, v in last.items()))
    plot(sq, args.plot)
    print(f"\nplot: {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
