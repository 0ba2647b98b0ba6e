"""What ``queries[].weight`` buys: the demo's count (``active``) with weights 3:1:1 over its three query sets
against the equal split (issue 29, item 3; ``docs/auto.md``).

The demo's configuration (``configs/demo.yaml``: eps = 1 per stream, ``auto`` -> ``net_change`` with the
kary tree over 1,152 ten-minute periods) is run in memory on the demo's own input (``data/demo.jsonl``, one
stream), once with equal weights and once with ``active: 3, by_carrier: 1, total_amount: 1``, over seeded noise
(each run its own release identity under one fixed key, ``bench-weights-<arm>-<seed>``: the two arms draw
independent noise, of the same law as the pipeline's). Measured per run: the mean over the periods of
|released count - true count|; reported: per seed the ratio weighted / equal of that mean, the ratio of the
mean errors over the seeds (with a bootstrap interval over the seeds) and the per-seed ratios' mean and
standard deviation, beside the plan's ratio of the noise scales (the count's eps share goes from
1/3 to 3/5: 5/9 of the equal split's).

Usage: python benchmarks/bench_weights.py [--seeds 20] [--stream eu]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.config import SUM_BUCKETS, load_config  # noqa: E402
from transforms.core import MECHANISMS, NoiseSource, ReleaseIdentity  # noqa: E402
from transforms.core.foundation.entries import Update  # noqa: E402

WEIGHTS = (3.0, 1.0, 1.0)


def demo_stream(cfg, stream: str):
    """(tick, [Update]) of one stream of the demo's input, encoded as the pipeline encodes it (the carrier's
    index, the amount's level among SUM_BUCKETS), and the true count of live entries per tick."""
    carriers = {str(v): i for i, v in enumerate(cfg.queries[1].domain)}
    lo, hi = cfg.queries[2].lower, cfg.queries[2].upper
    by_tick: dict[int, list[Update]] = {}
    for line in (ROOT / "data" / "demo.jsonl").read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # the demo's deliberately malformed lines (dead letters in a run)
        if not isinstance(rec, dict) or rec.get("region") != stream or not isinstance(rec.get("time"), (int, float)):
            continue
        tick = math.floor((rec["time"] - cfg.origin) / cfg.tick_seconds) + 1
        if not 1 <= tick <= cfg.end_tick:
            continue
        item = None
        if rec.get("op") in ("insert", "upsert"):
            it = rec.get("item") or {}
            if it.get("carrier") not in carriers or not isinstance(it.get("amount"), (int, float)):
                continue
            level = round((min(max(it["amount"], lo), hi) - lo) / (hi - lo) * (SUM_BUCKETS - 1))
            item = (0, carriers[it["carrier"]], int(level))
        by_tick.setdefault(tick, []).append(Update(rec["op"], str(rec["id"]), item))
    return sorted(by_tick.items())


def run(cfg, config, batches, seed: str) -> tuple[np.ndarray, np.ndarray]:
    """The released count per period and the true count (the core's own registry resolves the updates)."""
    spec = MECHANISMS[cfg.mechanism]
    core = spec.core_cls(
        config, stream="bench", end_tick=cfg.end_tick, every_ticks=cfg.every_ticks, options=cfg.mechanism_options()
    )
    noise = NoiseSource(bytes(range(32))).for_release(ReleaseIdentity(f"bench-weights-{seed}"))
    est = np.full(cfg.end_tick + 1, np.nan)
    truth = np.zeros(cfg.end_tick + 1)
    live = 0

    def collect(res):
        for a in res.answers:
            if a.query == "active":
                est[a.tick] = float(a.estimate[0])

    prev = 0
    for tick, ups in batches:
        truth[prev + 1 : tick] = live
        res = core.process_tick(tick, ups, noise)
        rejected = {id(r[0]) for r in res.rejections}
        for u in ups:
            if id(u) not in rejected:
                live += {"insert": 1, "delete": -1}.get(u.op, 0)
        truth[tick] = live
        collect(res)
        prev = tick
    truth[prev + 1 :] = live
    for res in core.run_to_end(noise):
        collect(res)
    return est[1:], truth[1:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--stream", default="eu")
    args = ap.parse_args(argv)
    cfg = load_config(ROOT / "configs" / "demo.yaml")
    equal = cfg.dynamic_config()
    weighted = dataclasses.replace(
        equal, queries=tuple(dataclasses.replace(q, weight=w) for q, w in zip(equal.queries, WEIGHTS))
    )
    batches = demo_stream(cfg, args.stream)
    t0 = time.perf_counter()
    ratios, means = [], []
    print(f"# bench_weights: the demo ({args.stream}, {cfg.end_tick} periods), count 'active', weights 3:1:1 vs equal")
    print("| seed | mean abs error, equal | mean abs error, 3:1:1 | ratio |")
    print("|---|---|---|---|")
    for seed in range(args.seeds):
        errs = []
        for arm, config in (("equal", equal), ("weighted", weighted)):
            est, truth = run(cfg, config, batches, f"{arm}-{seed}")
            errs.append(float(np.mean(np.abs(est - truth))))
        ratios.append(errs[1] / errs[0])
        means.append(errs)
        print(f"| {seed} | {errs[0]:.2f} | {errs[1]:.2f} | {ratios[-1]:.3f} |", flush=True)
    r, m = np.asarray(ratios), np.asarray(means)
    rng = np.random.default_rng(0)  # a bootstrap over the seeds of the ratio of the mean errors
    boot = [(lambda b: b[:, 1].mean() / b[:, 0].mean())(m[rng.integers(len(m), size=len(m))]) for _ in range(2000)]
    print(
        f"\nratio of the mean errors over the seeds (3:1:1 / equal): {m[:, 1].mean() / m[:, 0].mean():.3f} "
        f"(bootstrap 95% interval {np.percentile(boot, 2.5):.3f} to {np.percentile(boot, 97.5):.3f}; "
        f"equal {m[:, 0].mean():.1f}, 3:1:1 {m[:, 1].mean():.1f})"
    )
    print(
        f"per-seed ratio (3:1:1 / equal) of the count's mean absolute error over {len(r)} seeds: {r.mean():.3f} "
        f"(sd {r.std(ddof=1) if len(r) > 1 else 0.0:.3f}, min {r.min():.3f}, max {r.max():.3f}); "
        f"the noise scale's ratio: 5/9 = {5 / 9:.3f}  ({time.perf_counter() - t0:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
