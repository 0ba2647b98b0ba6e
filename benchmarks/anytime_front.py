"""The front between issue 31's two figures for a counter without an end (``docs/counters.md``, "Profile 3",
"What it does to the dense stream"): the worst ratio to the square root designed for t over every t of
[2^10, 2^24] (target 1.25) against the dense stream's "run without ``time.end`` within 1.1x of the run with it"
(the stated mean error of the no-end counter over the 43,200 one-minute ticks of ``bench_anytime_dense``,
against ``scaled_sqrt`` for horizon 43,200).

The design space is profile 3's (the merged start at ``T1``, the knot damping ``ln h(k)^2`` piecewise linear in
``log2(1 + k)``, the tail past 2^24 ``h(N2)^2 (1 + B3 ln(k / N2))^-Q3``), through the lattice model of
``benchmarks.anytime_merge.knot_ratio`` (the built counter's own floored coefficients), with:

* **more knots**: ``--extra-knots`` adds knots (their values start on profile 3's line, so the start is profile 3);
* **a cheaper tail**: ``--tail-factor f`` multiplies the tail's share ``1 / (B3 (Q3 - 1))`` (f = 1/4: B3 = 4,
  Q3 = 5, i.e. a faster decay after 2^24: the ratio past 2^24 grows faster);
* **the dense stream as a constraint**: sequential linear programming on the worst ratio of a grid of 24 points
  an octave with an exact penalty (weight 50) on the dense ratio above ``--dense`` (each step aims 2e-5 inside
  it); the Jacobian by forward differences (step 2e-3 in ``ln h^2``), evaluated on ``--workers`` processes; a
  trust region that grows by 1.5 after a step that delivers at least half its predicted fall and shrinks by 0.4
  after one that does not.

**The dense ratio in the model.** The no-end counter's variance at rho = 1: phase 1 ``M s(t) s(T1) / 2`` for
t <= T1 (the square root for horizon T1 at 1 / M of the column), then ``ratio(t) s(t)^2 / 2``; the run with an
end: ``scaled_sqrt``'s stated variance (``bench_anytime_dense``, the library's own counter) brought to rho = 1
(times its rho, ``n2 / (2 noise_param)``). The ratio is that of the mean of ``sqrt(var)`` over the ticks
(``expected_error``'s, whose constant cancels). Through the library's profile 3 it is the stated 1.1140
(``tests/test_anytime_front.py``). Both figures use the column bound the built counter would state (``Design.bound``:
the exact head and the tail bound, as ``anytime_sensitivity_sq``), not the model's float M, 0.03% lower.

Each evaluation takes the series inverse of 2^24 coefficients (about 10-20 s of CPU on this machine); an
iteration is one evaluation per knot plus one. The run prints each iteration and, at the end, the knot values,
the worst ratio on the grid, the five points, the dense ratio and M; ``--state FILE`` keeps the last accepted
point (a run resumes from it; with other ``--extra-knots`` it starts from the kept function read at the new knots).

Profile 4 (``anytime.py``'s ``KNOTS4`` / ``LOGH2_4``, B4 = 32, Q4 = 3; new counters from stop 62) is a point of this
tool: ``--dense 1.0999 --tail-factor 0.0625 --extra-knots 1 3 5 7 8.5 9.5 10.5 11.5 12.5 13 15 17 19`` from the
stop-61 30-knot point, one iteration (``docs/counters.md``, "Profile 4"). The tool's start and ``--tail-factor``
are relative to profile 3.

Usage: python -m benchmarks.anytime_front [--dense 1.0995] [--tail-factor 0.25] [--extra-knots 13 15 17 19]
       [--iters 12] [--workers 2] [--state /tmp/front.pkl]
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import pickle
import time

import numpy as np

from benchmarks.anytime_floor import sqrt_row_norms
from benchmarks.anytime_merge import N2, knot_ratio

LAST = 43_200  # the dense stream's ticks (bench_anytime_dense.LAST)
PENALTY = 50.0
MARGIN = 2e-5  # of the dense ratio: how far inside its bound a step aims


@functools.lru_cache(maxsize=1)
def with_end_variance() -> np.ndarray:
    """``scaled_sqrt``'s stated variance for horizon LAST (the run with ``time.end``) at rho = 1."""
    from benchmarks import bench_anytime_dense as bd

    counter = bd._counters(bd._core(True))[0]
    rho = counter._tab.n2 / (2.0 * float(counter.noise_param))
    return bd.stated_variances(counter, LAST) * rho


def dense_ratio(no_end_variance: np.ndarray) -> float:
    """Mean of ``sqrt(var)`` over the LAST ticks of a run without an end (rho = 1) over the run with it."""
    return float(np.sqrt(no_end_variance[:LAST]).mean() / np.sqrt(with_end_variance()).mean())


def model_variance(ratio: np.ndarray, m: float, t1: int) -> np.ndarray:
    """The model's no-end variance at rho = 1, t = 1..LAST, from ``knot_ratio``'s ratio at t in (t1, n] and M."""
    s = sqrt_row_norms(LAST)
    return np.concatenate([m * s[:t1] * s[t1 - 1] / 2.0, ratio[: LAST - t1] * s[t1:] ** 2 / 2.0])


def grid(lo: int = 1 << 10, hi: int = N2, per_octave: int = 24) -> np.ndarray:
    steps = np.arange(math.log2(lo), math.log2(hi) + 1e-9, 1.0 / per_octave)
    return np.unique(np.round(2.0**steps).astype(int))


class Design:
    """A point of the design space: knots (with the value 0 at knot 0), T1 and the tail's share."""

    def __init__(self, knots, t1: int, tailc: float, n: int = N2):
        self.knots, self.t1, self.tailc, self.n = np.asarray(knots, dtype=float), int(t1), float(tailc), int(n)
        self.grid = grid(hi=self.n)

    def evaluate(self, v) -> tuple[np.ndarray, float, float]:
        """(the ratio on the grid, the dense ratio, M) for the knot values v (v[0] = 0)."""
        ratio, m = self.full(v)
        return ratio[self.grid - self.t1 - 1], dense_ratio(model_variance(ratio, m, self.t1)), m

    def full(self, v) -> tuple[np.ndarray, float]:
        """The ratio at every t of (t1, n] and M, with M the bound the counter would state (:meth:`bound`)."""
        ratio, m = knot_ratio(np.asarray(v[1:]), self.knots, self.t1, self.n, tailc=self.tailc)
        bound = self.bound(v)
        return ratio * (bound / m), bound

    def bound(self, v) -> float:
        """The counter's column bound for these knots, as ``anytime_sensitivity_sq`` states it (over 2^40): the
        floored coefficients' squares summed exactly below EXACT_TERMS, then the tail bound (the knot integral
        from EXACT_TERMS - 1 to N2 times ``(1 + 1/x) / pi``, and ``h(N2)^2 tailc / pi`` past N2). The model's own
        M (the float sum to n plus the tail past n) is about 0.03% below it: a design judged by the model's M
        states 0.03% more when built (profile 3: 1.24397 in the model, 1.2444 built)."""
        from transforms.core.counters.factorization.anytime import EXACT_TERMS, knot_integral
        from transforms.core.counters.factorization.coefficients import sqrt_coefficients

        v = np.asarray(v, dtype=float)
        k = np.arange(EXACT_TERMS, dtype=np.float64)
        lh2 = np.interp(np.log2(1.0 + k), self.knots, v)
        e = np.minimum.accumulate(np.floor(sqrt_coefficients(EXACT_TERMS) * np.exp(0.5 * lh2) * 2.0**20))
        ei = e.astype(np.int64)
        head = int(np.sum(ei * ei)) / 2.0**40  # exact: each square < 2^40, 2^21 of them < 2^61
        x = EXACT_TERMS - 1.0
        integral = knot_integral(x, [float(k) for k in self.knots], [float(u) for u in v])
        return head + (1.0 + 1.0 / x) * integral / math.pi + math.exp(float(v[-1])) * self.tailc / math.pi


def _merit(ratio: np.ndarray, dense: float, target: float) -> float:
    return float(ratio.max()) + PENALTY * max(0.0, dense - target)


def lp_step(jr, jd, ratio, dense, target, delta):
    """The linear program of one step: minimise w + PENALTY s over dv in the box [-delta, delta], with
    ratio + jr dv <= w and dense + jd dv - s <= target, s >= 0. Returns (dv, the predicted merit)."""
    from scipy.optimize import linprog

    nv = jr.shape[1]
    a = np.vstack(
        [np.hstack([jr, -np.ones((len(ratio), 1)), np.zeros((len(ratio), 1))]), np.r_[jd, 0.0, -1.0][None, :]]
    )
    lp = linprog(
        np.r_[np.zeros(nv), 1.0, PENALTY],
        A_ub=a,
        b_ub=np.r_[-ratio, target - dense],
        bounds=[(-delta, delta)] * nv + [(None, None), (0, None)],
    )
    return lp.x[:nv], float(lp.x[nv] + PENALTY * lp.x[nv + 1])


def optimise(design: Design, v, target: float, iters: int, workers: int, state: str | None = None, delta=0.1):
    """Sequential linear programming (module docstring) from knot values v; returns (v, ratio, dense)."""
    from concurrent.futures import ProcessPoolExecutor

    v = np.asarray(v, dtype=float)
    ratio, dense, _ = design.evaluate(v)
    h = 2e-3
    with ProcessPoolExecutor(workers) as pool:
        for it in range(iters):
            c0 = time.time()
            moved = [v + h * np.eye(len(v))[i] for i in range(1, len(v))]
            outs = list(pool.map(design.evaluate, moved))
            jr = np.array([(o[0] - ratio) / h for o in outs]).T
            jd = np.array([(o[1] - dense) / h for o in outs])
            while delta >= 2e-3:
                # the step aims a little inside the dense bound (MARGIN): the ratio is not linear in the knots, and
                # a step aimed at the bound itself lands a few 1e-5 over it, which the penalty then refuses
                dv, predicted = lp_step(jr, jd, ratio, dense, target - MARGIN, delta)
                vn = v + np.r_[0.0, dv]
                rn, dn, _ = design.evaluate(vn)
                old, new = _merit(ratio, dense, target), _merit(rn, dn, target)
                print(
                    f"iteration {it}, delta {delta:.3g}: worst {ratio.max():.5f} dense {dense:.5f} -> worst "
                    f"{rn.max():.5f} dense {dn:.5f} (merit {old:.5f} -> {new:.5f}, predicted {predicted:.5f}; "
                    f"{time.time() - c0:.0f} s)",
                    flush=True,
                )
                if new < old:
                    if (old - new) > 0.5 * max(old - predicted, 1e-12):
                        delta = min(0.6, delta * 1.5)
                    v, ratio, dense = vn, rn, dn
                    break
                delta *= 0.4
            if state:
                with open(state, "wb") as f:
                    pickle.dump({"v": v, "delta": delta, "knots": design.knots, "t1": design.t1}, f)
            if delta < 2e-3:
                break
    return v, ratio, dense


def report(design: Design, v) -> list[str]:
    ratio, m = design.full(v)
    lo = (1 << 10) - design.t1 - 1
    i = int(np.argmax(ratio[lo:]))
    five = " / ".join(f"{ratio[(1 << k) - design.t1 - 1]:.4f}" for k in (10, 14, 18, 22, 24) if 1 << k <= design.n)
    dense = dense_ratio(model_variance(ratio, m, design.t1))
    return [
        f"knots {tuple(float(k) for k in design.knots)}",
        f"values {tuple(round(float(x), 6) for x in v)}",
        f"T1 {design.t1}, tail share {design.tailc:.5f}, M {m:.4f}",
        f"worst over every t of [2^10, 2^24] {ratio[lo + i]:.5f} at t = 2^{math.log2(lo + i + design.t1 + 1):.2f}; "
        f"five points {five}; dense ratio {dense:.5f}",
    ]


def main(argv=None) -> int:
    from transforms.core.counters.factorization.anytime import B3, KNOTS3, LOGH2_3, MERGE_T1, Q3

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dense", type=float, default=1.0995, help="the dense ratio's bound (the issue: 1.1)")
    ap.add_argument("--tail-factor", type=float, default=1.0)
    ap.add_argument("--extra-knots", type=float, nargs="*", default=[])
    ap.add_argument("--t1", type=int, default=MERGE_T1)
    ap.add_argument("--iters", type=int, default=12)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--state", default=None, help="keep (and resume from) the last accepted point here")
    args = ap.parse_args(argv)
    knots = np.unique(np.r_[KNOTS3, args.extra_knots])
    values = np.interp(knots, KNOTS3, LOGH2_3)  # profile 3's function
    design = Design(knots, args.t1, args.tail_factor / (B3 * (Q3 - 1.0)))
    delta = 0.1
    if args.state and os.path.exists(args.state):
        with open(args.state, "rb") as f:
            kept = pickle.load(f)
        if kept["t1"] == args.t1:  # other knots: the kept function read at these knots (the same where they agree)
            values = np.interp(knots, kept["knots"], kept["v"])
            delta = kept["delta"] if list(kept["knots"]) == list(knots) else 0.1
    v, _, _ = optimise(design, values, args.dense, args.iters, args.workers, args.state, delta)
    for line in report(design, v):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
