"""Many periods: a year of one-minute periods (525,600), a count and a 16-cell histogram, ~650k updates, with
``mechanism: auto`` and an answer every period, through the release CLI on the DirectRunner (issue 30: under
2 minutes). Cost per period, not per update, dominates such a release.

The input: one stream; bookings inserted, modified (a new category) and cancelled at a steady rate (about 1.24
updates a minute, so ~650k in a year), each with one of 16 categories. ``--periods N`` runs the first N
minutes only (the same rate), to measure the per-period cost on a smaller run; ``--profile FILE`` writes a
cProfile of the run. It prints the wall time and the CPU time of the run (user + system, this process).

Usage: python benchmarks/bench_periods.py [--periods 525600] [--profile /tmp/periods.prof]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

YEAR = 525_600
CATEGORIES = tuple(f"c{i:02d}" for i in range(16))
RATE = 650_000 / YEAR  # updates per minute


def generate(periods: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    live: list[str] = []
    lines, t, i = [], 0.0, 0
    end = periods * 60.0
    while True:
        t += rng.expovariate(RATE / 60.0)
        if t >= end:
            return lines
        r = rng.random()
        if live and r < 0.3:
            j = rng.randrange(len(live))
            bid = live[j]
            live[j] = live[-1]
            live.pop()
            rec = {"time": round(t, 3), "op": "delete", "id": bid}
        elif live and r < 0.45:
            rec = {"time": round(t, 3), "op": "upsert", "id": rng.choice(live), "item": {"cat": rng.choice(CATEGORIES)}}
        else:
            bid = f"e{i}"
            live.append(bid)
            rec = {"time": round(t, 3), "op": "insert", "id": bid, "item": {"cat": rng.choice(CATEGORIES)}}
        rec["seq"] = i
        i += 1
        lines.append(json.dumps(rec))


def config(periods: int, source: str, out: str) -> str:
    return (
        "privacy: {epsilon: 1.0, delta: 0.0, unit: update}\n"
        f"time: {{field: time, tick_seconds: 60, origin: 0, end: {periods * 60}}}\n"
        "mechanism: {kind: auto}\n"
        "release: {every_ticks: 1}\n"
        "queries:\n"
        "  - {name: active, type: count}\n"
        f"  - {{name: by_cat, type: histogram, field: cat, domain: [{', '.join(CATEGORIES)}]}}\n"
        f"source: {{type: file, path: {source}, format: jsonl}}\n"
        f"sinks:\n  - {{type: file, path: {out}, format: jsonl}}\n"
    )


def _cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished children: on a loaded machine a steadier
    measure of the run's work than its wall time (the DirectRunner runs in this process)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_mb() -> float:
    """Peak resident memory of this process (the DirectRunner runs in it), in MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--periods", type=int, default=YEAR)
    ap.add_argument("--profile", default=None, help="write a cProfile of the run here")
    args = ap.parse_args(argv)
    from pipelines.cli import main as release_main

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "updates.jsonl"
        lines = generate(args.periods)
        src.write_text("\n".join(lines) + "\n")
        cfg = Path(tmp) / "periods.yaml"
        cfg.write_text(config(args.periods, str(src), str(Path(tmp) / "output") + "/"))
        load = os.getloadavg()[0]
        t0, cpu0 = time.perf_counter(), _cpu_seconds()
        if args.profile:
            import cProfile

            cProfile.runctx("release_main(['--config', str(cfg)])", globals(), locals(), args.profile)
        else:
            release_main(["--config", str(cfg)])
        dt, cpu = time.perf_counter() - t0, _cpu_seconds() - cpu0
        n_out = sum(1 for f in (Path(tmp) / "output").glob("releases-*.jsonl") for _ in f.open())
    print(
        f"bench_periods: {args.periods} one-minute periods, {len(lines)} updates, {n_out} release records: "
        f"{dt:.1f} s ({args.periods / dt:,.0f} periods/s; load {load:.1f} on 2 cores before the run), "
        f"{cpu:.1f} s of CPU, peak memory {_peak_mb():,.0f} MB"
    )


if __name__ == "__main__":
    main()
