"""Continual counters: per-timestamp variance and error, event-level counting.

For each counter and T (default 2^10 and 2^16) this prints

* mean and max over t = 1..T of the exact per-timestamp variance of the
  estimate (from the noise actually added: discrete Laplace / discrete
  Gaussian with the effective, rounded-up parameters);
* the mean over runs of max_t |estimate_t - count_t| (empirical, real noise);
* for T <= 2^12, the empirical variance averaged over t as a cross-check.

Pure DP: eps = 1 (Laplace). zCDP: rho = 1 (Gaussian). Reference figures for
event-level counting are printed beside them.

Usage: python benchmarks/bench_counters.py [--T 10 16] [--runs-small 30] [--runs-large 2]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transforms.core import ZCDP, CountMechanism, NoiseSource, PureDP, make_counter  # noqa: E402

REFERENCES = {
    (16, "laplace", "binary_tree"): "reference: max 9248, mean 4624 (scale (log2 T + 1)/eps per node)",
    (16, "gaussian", "*"): "reference: square-root factorization, rho = 1: max 10.56, mean 9.83 (not implemented here)",
}

COUNTERS = ["naive_prefix", "naive_increments", "binary_tree", "honaker", "infinite", "infinite_honaker"]


def variance_path(name, mech, budget, T):
    c = make_counter(name, mech, budget, horizon=T, coords=("bench-var",))
    off = NoiseSource.disabled()
    one = np.array([1])
    v = np.empty(T)
    for t in range(T):
        c.step(one, off)
        v[t] = c.variance()
    return v


def error_runs(name, mech, budget, T, runs, noise):
    maxerr, sq = [], np.zeros(T)
    one = np.array([1])
    for r in range(runs):
        c = make_counter(name, mech, budget, horizon=T, coords=("bench-err", r))
        err = np.empty(T)
        for t in range(T):
            err[t] = c.step(one, noise)[0] - (t + 1)
        maxerr.append(np.max(np.abs(err)))
        sq += err**2
    return float(np.mean(maxerr)), sq / runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", nargs="+", type=int, default=[10, 16], help="log2 of the horizons")
    ap.add_argument("--runs-small", type=int, default=30, help="noisy runs for T <= 2^12")
    ap.add_argument("--runs-large", type=int, default=2, help="noisy runs for larger T")
    ap.add_argument("--counters", nargs="+", default=COUNTERS)
    args = ap.parse_args(argv)
    noise = NoiseSource.generate()
    print("| T | noise | budget | counter | mean var | max var | mean max abs err (runs) | emp. mean var | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for lt in args.T:
        T = 1 << lt
        for kind, budget, label in [("laplace", PureDP(1.0), "eps=1"), ("gaussian", ZCDP(1.0), "rho=1")]:
            mech = CountMechanism(kind)
            for name in args.counters:
                t0 = time.time()
                v = variance_path(name, mech, budget, T)
                runs = args.runs_small if lt <= 12 else args.runs_large
                mae, emp = error_runs(name, mech, budget, T, runs, noise)
                emp_s = f"{emp.mean():.1f}" if lt <= 12 else "-"
                print(
                    f"| 2^{lt} | {kind} | {label} | {name} | {v.mean():.1f} | {v.max():.1f} | "
                    f"{mae:.1f} ({runs}) | {emp_s} | {time.time() - t0:.0f} |",
                    flush=True,
                )
            for (rl, rk, rn), text in REFERENCES.items():
                if rl == lt and rk == kind:
                    print(f"| 2^{lt} | {kind} | {label} | {rn} | {text} | | | | |")


if __name__ == "__main__":
    main()
