"""Continual counters: per-timestamp variance and error, event-level counting.

For each counter and T (default 2^10 and 2^16) this prints

* mean and max over t = 1..T of the exact per-timestamp variance of the
  estimate (from the noise actually added: discrete Laplace / discrete
  Gaussian with the effective, rounded-up parameters);
* the mean over runs of max_t |estimate_t - count_t| (empirical, real noise);
* for T <= 2^12, the empirical variance averaged over t as a cross-check.

Pure DP: eps = 1 (Laplace). zCDP: rho = 1 (Gaussian). Reference figures for
event-level counting are printed beside them.

``--analytic`` prints the variance table of the factorization counters and
the trees at T = 2^10, 2^16, 2^20 from their exact noise laws (no run), with
the square-root factorization's reference (rho = 1: 5.355 / 10.564 / 15.01),
and ``--timing`` the wall time of a T-step run of the new counters (1 cell).
``--anytime`` prints ``anytime_sqrt``'s variance over the square root's designed for t (rho = 1,
exact lattice figures, both coefficient profiles) at t = 2^10 .. 2^24 with ``blt``'s beside it, then
the bytes of its encoded state and the CPU time of a step at t = 10^4 and 10^5 (1 cell; ``blt``'s).

Usage: python benchmarks/bench_counters.py [--T 10 16] [--runs-small 30] [--runs-large 2]
       python benchmarks/bench_counters.py --analytic [--T 10 16 20]
       python benchmarks/bench_counters.py --timing [--T 10 16]
       python benchmarks/bench_counters.py --pure [--T 10 14 18 20 24]
       python benchmarks/bench_counters.py --anytime [--T 10 12 14 16 18 20 22 24]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from transforms.core import ZCDP, CountMechanism, NoiseSource, PureDP, make_counter  # noqa: E402
from transforms.core.counters import COUNTER_NAMES  # noqa: E402
from transforms.core.counters.factorization import (  # noqa: E402
    kary_radices,
    kary_variance_path,
    sqrt_coefficients,
    toeplitz_variance_path,
)
from transforms.core.counters.factorization.anytime import anytime_variance_path  # noqa: E402
from transforms.core.counters.factorization.kary_signed import signed_node_counts, signed_shape  # noqa: E402
from transforms.core.counters.factorization.scaled import scaled_variance_path  # noqa: E402

REFERENCES = {
    (16, "laplace", "binary_tree"): "reference: max 9248, mean 4624 (scale (log2 T + 1)/eps per node)",
    (10, "gaussian", "*"): "reference: square-root factorization, rho = 1: max 5.355",
    (16, "gaussian", "*"): "reference: square-root factorization, rho = 1: max 10.56, mean 9.83",
}
SQRT_REFERENCE = {10: 5.355, 16: 10.564, 20: 15.01}  # s(T)^2 / 2, rho = 1

COUNTERS = list(COUNTER_NAMES)  # every registered counter
SKIP = {
    ("laplace", "sqrt_factorization"),
    ("laplace", "blt"),
    ("laplace", "scaled_sqrt"),
}  # L1 column norms ~ sqrt(T): not pure-DP counters


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


def _tree_path(T: int, radices: tuple, kind: str, eps: float = 1.0, rho: float = 1.0) -> np.ndarray:
    """Honaker tree variance per t (continuous node variance: Laplace 2 (L/eps)^2,
    Gaussian L / (2 rho); the discrete noise of the counters is within 1e-6 of it
    at these scales)."""
    levels = len(radices) + 1
    s2 = 2.0 * (levels / eps) ** 2 if kind == "laplace" else levels / (2.0 * rho)
    return kary_variance_path(T, radices, s2)


def analytic_table(logs) -> None:
    """Per-step variance (count, event level) from the exact noise laws: eps = 1 or rho = 1."""
    print("| T | budget | counter | construction | max var over t <= T | mean var | var at t = 2T / 4T | vs sqrt |")
    print("|---|---|---|---|---|---|---|---|")
    for lt in logs:
        T = 1 << lt
        s = float(np.sum(sqrt_coefficients(T) ** 2))
        ref = s * s / 2
        v = toeplitz_variance_path("sqrt_factorization", T)
        print(
            f"| 2^{lt} | rho=1 | sqrt_factorization | lattice 2^-20, exact column norm | {v.max():.3f} | "
            f"{v.mean():.3f} | refuses | {v.max() / ref:.5f} |"
        )
        vs = scaled_variance_path(T)
        hku_up, hku_lo = (0.846 + lt * np.log(2) / np.pi) ** 2 / 2, (0.701 + lt * np.log(2) / np.pi) ** 2 / 2
        print(
            f"| 2^{lt} | rho=1 | scaled_sqrt | square root, optimised diagonal D between the factors, lattice | "
            f"{vs.max():.3f} | {vs.mean():.3f} | refuses | {vs.max() / ref:.5f} (HKU explicit {hku_up:.2f}: "
            f"{vs.max() / hku_up:.4f}x; lower bound {hku_lo:.2f}) |"
        )
        va = anytime_variance_path(T)
        print(
            f"| 2^{lt} | rho=1 | anytime_sqrt | damped infinite square root, no horizon | {va.max():.3f} | "
            f"{va.mean():.3f} | no horizon | at t = T: {va[-1] / ref:.4f} |"
        )
        try:
            vb = toeplitz_variance_path("blt", T, steps=4 * T)
            print(
                f"| 2^{lt} | rho=1 | blt | design horizon T, window 2T | {vb[:T].max():.3f} | {vb[:T].mean():.3f} | "
                f"{vb[2 * T - 1]:.2f} / {vb[4 * T - 1]:.2f} | {vb[:T].max() / ref:.5f} |"
            )
        except ValueError as e:
            print(f"| 2^{lt} | rho=1 | blt | design horizon T, window 2T | {e} | | | |")
        for kind, label in [("gaussian", "rho=1"), ("laplace", "eps=1")]:
            binary = (2,) * (T.bit_length() - 1)
            vh = _tree_path(T, binary, kind)
            rad = kary_radices(T, 2 if kind == "laplace" else 1)
            vk = _tree_path(T, rad, kind)
            print(f"| 2^{lt} | {label} | honaker | binary tree, Honaker | {vh.max():.1f} | {vh.mean():.1f} | - | - |")
            print(
                f"| 2^{lt} | {label} | kary_tree | radices {rad}, Honaker | {vk.max():.1f} | {vk.mean():.1f} | - | "
                f"mean {vh.mean() / vk.mean():.2f}x / max {vh.max() / vk.max():.2f}x better than binary |"
            )
        print(f"| 2^{lt} | rho=1 | * | reference: square-root factorization s(T)^2/2 = {ref:.3f} | | | | |")


def timing(logs) -> None:
    """Wall time of a T-step run (count, 1 cell, real noise)."""
    noise = NoiseSource.generate()
    print("| T | counter | budget | seconds | s per step |")
    print("|---|---|---|---|---|")
    for lt in logs:
        T = 1 << lt
        for name, kind, budget in [
            ("sqrt_factorization", "gaussian", ZCDP(1.0)),
            ("scaled_sqrt", "gaussian", ZCDP(1.0)),
            ("anytime_sqrt", "gaussian", ZCDP(1.0)),
            ("blt", "gaussian", ZCDP(1.0)),
            ("kary_tree", "laplace", PureDP(1.0)),
            ("honaker", "laplace", PureDP(1.0)),
        ]:
            c = make_counter(name, CountMechanism(1, kind), budget, horizon=T, coords=("bench-time",))
            one = np.array([1])
            t0 = time.perf_counter()
            for _ in range(T):
                c.step(one, noise)
            dt = time.perf_counter() - t0
            print(f"| 2^{lt} | {name} | {kind} | {dt:.2f} | {dt / T * 1e6:.0f} us |", flush=True)


def infinite_honaker_path(T: int, eps: float = 1.0) -> np.ndarray:
    """infinite_honaker's per-step variance, t = 1..T, count under pure DP (continuous node
    variance 2 b^2): finished ranges [2^i, 2^(i+1)) at eps/2 each, plus range i's Honaker binary
    tree (horizon 2^i, i + 1 levels, eps / 2 / (i + 1) per node) at offset t - 2^i + 1."""
    out = np.zeros(T)
    i = 0
    while (1 << i) <= T:
        lo, hi = 1 << i, min((1 << (i + 1)) - 1, T)
        s2 = 2.0 * (2.0 * (i + 1) / eps) ** 2
        tree = kary_variance_path(1 << i, (2,) * i, s2)
        out[lo - 1 : hi] = i * 2.0 * (2.0 / eps) ** 2 + tree[: hi - lo + 1]
        i += 1
    return out


def pure_table(logs) -> None:
    """Pure DP (eps = 1), count: kary_signed against kary_tree (Honaker and plain) and
    infinite_honaker, max and mean variance over t = 1..T (continuous node variance 2 b^2)."""
    print("| T | counter | shape | max var | mean var | kary_tree (Honaker) / this, mean / max |")
    print("|---|---|---|---|---|---|")
    for lt in logs:
        T = 1 << lt
        k, h = signed_shape(T, 2)
        vs = signed_node_counts(T, k, h) * 2.0 * h * h
        rad = kary_radices(T, 2)
        vk = _tree_path(T, rad, "laplace")
        levels = len(rad) + 1
        digits = np.zeros(T)
        tt, size = np.arange(1, T + 1), 1
        for j in range(levels):
            digits += tt // size if j == levels - 1 else (tt // size) % rad[j]
            if j < levels - 1:
                size *= rad[j]
        vp = digits * 2.0 * levels**2
        vi = infinite_honaker_path(T)
        for name, shape, v in (
            ("kary_signed", f"k = {k}, h = {h}", vs),
            ("kary_tree", f"radices {rad}, Honaker", vk),
            ("kary_tree, plain sums", f"radices {rad}", vp),
            ("infinite_honaker", "no horizon", vi),
        ):
            ratio = f"{vk.mean() / v.mean():.2f} / {vk.max() / v.max():.2f}"
            print(f"| 2^{lt} | {name} | {shape} | {v.max():.1f} | {v.mean():.1f} | {ratio} |", flush=True)


def anytime_table(logs) -> None:
    """anytime_sqrt (profiles 1 to 4) and blt (design 2^12) over the square root designed for t, and each
    profile's worst ratio over every t from 2^10 to the largest t asked (profiles 3 and 4 before their hand-over
    too)."""
    from transforms.core.counters.factorization.anytime import MERGE_T1, PROFILE

    top = 1 << max(logs)
    s = np.cumsum(sqrt_coefficients(top) ** 2)
    ref_all = s * s / 2
    profiles = (1, 2, 3, 4)
    paths = {p: anytime_variance_path(top, profile=p) for p in profiles}
    vb = toeplitz_variance_path("blt", 1 << 12, steps=min(top, 1 << 20))
    names = ["profile 1", "profile 2", "profile 3 (merged start)", "profile 4 (30 knots, a sixteenth of the tail)"]
    names[PROFILE - 1] = f"**{names[PROFILE - 1]} (new counters)**"
    print("| t | square root for horizon t, s(t)^2/2 | " + " | ".join(names) + " | blt (2^12) |")
    print("|---" * (len(names) + 3) + "|")
    for lt in logs:
        t = 1 << lt
        ref = ref_all[t - 1]
        cells = [f"{paths[p][t - 1]:.3f} ({paths[p][t - 1] / ref:.3f}x)" for p in profiles]
        b = f"{vb[t - 1] / ref:.2f}x" if t <= len(vb) else "grows linearly"
        cells[PROFILE - 1] = f"**{cells[PROFILE - 1]}**"
        print(f"| 2^{lt} | {ref:.3f} | " + " | ".join(cells) + f" | {b} |", flush=True)
    lo = min(1 << 10, top)
    worst = []
    for p in profiles:
        r = paths[p][lo - 1 :] / ref_all[lo - 1 :]
        i = int(np.argmax(r))
        worst.append(f"{r[i]:.4f} (t = 2^{np.log2(lo + i):.2f})")
    print(f"| worst over every t of [2^{lo.bit_length() - 1}, 2^{max(logs)}] | | " + " | ".join(worst) + " | |")
    early = [1, MERGE_T1 // 2, MERGE_T1]
    print(
        "| before 2^10, t = "
        + " / ".join(map(str, early))
        + " | | "
        + " | ".join(" / ".join(f"{paths[p][t - 1] / ref_all[t - 1]:.2f}" for t in early) for p in profiles)
        + " | |",
        flush=True,
    )
    from transforms.core.foundation import state as state_mod

    noise = NoiseSource.generate()
    print("\n| counter | t | encoded state (bytes, 1 cell) | CPU per step |")
    print("|---|---|---|---|")
    for name in ("anytime_sqrt", "blt"):
        c, t, one = make_counter(name, CountMechanism(1, "gaussian"), ZCDP(1.0)), 0, np.array([1])
        for target in (10**4, 10**5):
            while t < target - 200:
                c.step(one, noise)
                t += 1
            t0 = time.process_time()
            for _ in range(200):
                c.step(one, noise)
            t += 200
            per = (time.process_time() - t0) / 200
            size = len(state_mod.encode(state_mod.to_plain(c)))
            print(f"| {name} | {t} | {size} | {per * 1e3:.3f} ms |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", nargs="+", type=int, default=None, help="log2 of the horizons")
    ap.add_argument("--runs-small", type=int, default=30, help="noisy runs for T <= 2^12")
    ap.add_argument("--runs-large", type=int, default=2, help="noisy runs for larger T")
    ap.add_argument("--counters", nargs="+", default=COUNTERS)
    ap.add_argument("--analytic", action="store_true", help="the analytic variance table only")
    ap.add_argument("--timing", action="store_true", help="the timing table only")
    ap.add_argument("--pure", action="store_true", help="the pure-DP table (kary_signed) only")
    ap.add_argument("--anytime", action="store_true", help="anytime_sqrt against the square root, and its state")
    args = ap.parse_args(argv)
    if args.anytime:
        return anytime_table(args.T or [10, 12, 14, 16, 18, 20, 22, 24])
    if args.analytic:
        return analytic_table(args.T or [10, 16, 20])
    if args.pure:
        return pure_table(args.T or [10, 14, 18, 20, 24])
    if args.timing:
        return timing(args.T or [10, 16])
    args.T = args.T or [10, 16]
    noise = NoiseSource.generate()
    print("| T | noise | budget | counter | mean var | max var | mean max abs err (runs) | emp. mean var | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for lt in args.T:
        T = 1 << lt
        for kind, budget, label in [("laplace", PureDP(1.0), "eps=1"), ("gaussian", ZCDP(1.0), "rho=1")]:
            mech = CountMechanism(1, kind)
            for name in args.counters:
                if (kind, name) in SKIP:
                    continue
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
