"""Simulate continual randomized response: ``python -m pipelines.rr_simulate``.

N entries whose true answers change over time under a constraint (at most k
mutations, or B-time-bounded), each reporting through its own client
(``transforms/core/families/rr_client.py``) at every period: writes the reports as JSON
lines (the collector's input, ``configs/local_dp.yaml``) and the true
histogram per period (JSON, for measuring the estimate; it is the secret the
clients protect, so it is for simulations only).

The clients' randomness here is a generator seeded by ``--seed`` so that a
simulation can be reproduced: that makes the reports NOT private; real
clients draw from the OS CSPRNG (``secrets``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from transforms.core.families.local_dp import AtMostK, SurveyDesign, TimeBounded, simulate

__all__ = ["main", "write_reports"]


def write_reports(sim, path: Path, domain: list, origin: float, tick_seconds: float, stream: str | None = None) -> int:
    """Reports as JSON lines: ``time`` (mid-period), ``id``, ``layer``, ``old``, ``new``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "w") as fh:
        for entry, rep in sim.reports:
            d = {
                "time": origin + (rep.period - 0.5) * tick_seconds,
                "id": entry,
                "layer": rep.layer,
                "old": None if rep.old is None else domain[rep.old],
                "new": None if rep.new is None else domain[rep.new],
            }
            if stream is not None:
                d["stream"] = stream
            fh.write(json.dumps(d) + "\n")
            n += 1
    return n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.rr_simulate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=3000, help="number of entries N (default 3000)")
    ap.add_argument("--periods", type=int, default=24, help="number of periods (ticks) T (default 24)")
    ap.add_argument("--domain", default="A,B,C", help="the answer domain, comma-separated (default A,B,C)")
    ap.add_argument("--epsilon", type=float, default=8.0, help="each entry's total local epsilon (default 8)")
    ap.add_argument("--delta", type=float, default=0.0, help="each entry's total local delta (default 0)")
    ap.add_argument("--constraint", choices=("at_most_k", "time_bounded"), default="at_most_k")
    ap.add_argument("--max-mutations", type=int, default=2, help="k for at_most_k (default 2)")
    ap.add_argument("--bound-ticks", type=float, default=4.0, help="B in ticks for time_bounded (default 4)")
    ap.add_argument("--aggregation", choices=("direct", "hdcr"), default="direct")
    ap.add_argument("--layers", type=int, default=3, help="h for hdcr (default 3)")
    ap.add_argument("--branching", type=int, default=2, help="c for hdcr (default 2)")
    ap.add_argument("--violate", type=float, default=0.02, help="share of entries that try one mutation too many")
    ap.add_argument("--origin", type=float, default=0.0, help="event time of the start of period 1 (default 0)")
    ap.add_argument("--tick-seconds", type=float, default=3600.0, help="period length in seconds (default 3600)")
    ap.add_argument("--seed", type=int, default=0, help="simulation seed (the clients' draws too: NOT private)")
    ap.add_argument("--out", default="data/rr_reports.jsonl", help="reports file (default data/rr_reports.jsonl)")
    ap.add_argument("--truth", default="data/rr_truth.json", help="true histograms (default data/rr_truth.json)")
    args = ap.parse_args(argv)
    domain = [v.strip() for v in args.domain.split(",") if v.strip()]
    try:
        if args.entries < 1 or args.periods < 1:
            raise ValueError("--entries and --periods must be >= 1")
        constraint = AtMostK(args.max_mutations) if args.constraint == "at_most_k" else TimeBounded(args.bound_ticks)
        layers = 1 if args.aggregation == "direct" else args.layers
        design = SurveyDesign.from_total(len(domain), args.epsilon, args.delta, constraint, layers, args.branching)
    except (ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    sim = simulate(design, args.entries, args.periods, seed=args.seed, violate=args.violate)
    n = write_reports(sim, Path(args.out), domain, args.origin, args.tick_seconds)
    truth = {
        "domain": domain,
        "origin": args.origin,
        "tick_seconds": args.tick_seconds,
        "histograms": sim.truth,
        "refused_mutations": sim.refused,
    }
    Path(args.truth).parent.mkdir(parents=True, exist_ok=True)
    Path(args.truth).write_text(json.dumps(truth) + "\n")
    eps, delta = design.entry_guarantee()
    print(
        f"{n} reports from {args.entries} entries over {args.periods} periods -> {args.out}; truth -> {args.truth}\n"
        f"per report eps {design.epsilon:.4g} (delta {design.delta:.3g}), fold {design.fold}: each entry is "
        f"({eps:.4g}, {delta:.3g})-locally DP; {sim.refused} mutations refused by the clients (constraint)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
