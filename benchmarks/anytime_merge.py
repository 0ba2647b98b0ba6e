"""A time-varying anytime counter: the damped square root run on a *merged* stream (issue 31,
``docs/counters.md``, "Anytime square root", "Merged start").

What the optimum of ``benchmarks/anytime_floor.py`` does (read off its (E, X) pair at N = 512, t0 = 8):
X = E'E is nearly stationary (``X[j, j + l]`` depends on l alone, within 0.02, for j >= 16), E's
columns are damped square roots with a diagonal about 0.63, and the items before t0 have a zero
diagonal: they are not released at their own step but merged and released from t0 on. A damped
Toeplitz on the merged stream copies that last feature, and it is most of the gap at reduced scale
(``python -m benchmarks.anytime_merge --reduced``).

**The counter (a model here; built as ``anytime_sqrt`` profile 3 with a knot damping).** Two phases, one
Gaussian mechanism with one sigma:

* phase 1, steps 1..T1: a counter P on the first T1 batches whose every column has squared norm at
  most e_0^2 = 1 (here the square root for horizon T1 divided by sqrt(s(T1))), releasing the
  estimates for t <= T1;
* phase 2, steps T1 + tau (tau >= 1): the damped square-root Toeplitz e (e_0 = 1, profile 2's
  form) on the merged stream x_0 = (the sum of the first T1 batches), x_tau = batch T1 + tau. Its
  release for x_0 alone (tau = 0) is not made: the decoder starts from phase 1's estimate of the
  prefix at T1 ("handover"). Variant "merged only" (the ideal the reduced-scale optimum points at):
  no phase 1, nothing released before T1, x_0 released once with e_0 at T1.

**Privacy for ever.** An item of batch j > T1 moves the releases by the Toeplitz column (e_0, e_1, ...)
(squared norm M, ``anytime_sqrt``'s bound); an item of batch j <= T1 by its phase-1 column (squared
norm <= 1 = e_0^2) and (e_1, e_2, ...) in phase 2: squared norm <= M. So the sensitivity is the
infinite Toeplitz column's, for ever, and sigma^2 = M / (2 rho) as for ``anytime_sqrt``.

**Variance (exact, float model).** With b the decoder weights of e (the coefficients of
1 / ((1 - x) e(x))) and V0 the variance of phase 1's estimate at T1, the estimate at t = T1 + tau has
variance V0 b_tau^2 + sigma^2 sum_{j < tau} b_j^2 ("merged only": V0 = sigma^2); before T1, phase 1's. The ratio
to the square root designed for t is that over s(t)^2 / 2; computed here at **every** t of [2^10, 2^24]
(one series inverse of length 2^24: about 10 s of CPU).

Run: ``python -m benchmarks.anytime_merge`` (full scale, the table of the docs; a few minutes of CPU),
``--reduced`` (reduced-scale comparison with the general optimum and the damped Toeplitz: seconds),
``--knots [--optimise]`` (profile 3, the built counter: its knot damping through the lattice model, and the
design's optimiser, ``optimise_knots``).
"""

from __future__ import annotations

import argparse
import functools
import math
import time

import numpy as np

from benchmarks.anytime_floor import sqrt_row_norms

# profile 2 of anytime_sqrt (transforms/core/counters/factorization/anytime.py): h(k)^2 = (1 + A ln(1 + k/K0))^-P
PROFILE2 = (0.933, 1640.0, 0.711)
N2 = 1 << 24


def damped(n: int, a: float, k0: float, p: float) -> np.ndarray:
    """e_k = c_k h(k), h(k)^2 = (1 + a ln(1 + k / k0))^-p, k < n (float64)."""
    from transforms.core.counters.factorization.coefficients import sqrt_coefficients

    k = np.arange(n, dtype=np.float64)
    return sqrt_coefficients(n) * (1.0 + a * np.log1p(k / k0)) ** (-p / 2)


def tail_past(a: float, k0: float, p: float, n: int = N2) -> float:
    """sum_{k >= n} e_k^2 for profile 2's tail past N2 (h(N2)^2 (1 + ln(k / N2))^-2): at most
    h(N2)^2 / pi (``anytime.anytime_tail_bound`` past N2)."""
    return (1.0 + a * math.log1p(n / k0)) ** (-p) / math.pi


def decoder_sq(e: np.ndarray) -> np.ndarray:
    """b_k^2 and their running sums: b the coefficients of 1 / ((1 - x) e(x))."""
    from transforms.core.counters.factorization.coefficients import series_inverse

    b = np.cumsum(series_inverse(e, len(e)))
    return b * b, np.cumsum(b * b)


@functools.lru_cache(maxsize=2)
def _design(params: tuple, n: int):
    e = damped(n, *params)
    m = float(np.sum(e * e)) + tail_past(*params, n=n)  # the infinite column, e_0 = 1
    return m, *decoder_sq(e), sqrt_row_norms(n)


def merged_ratio_path(params=PROFILE2, t1: int = 512, n: int = N2, handover: bool = True, phase1_row=None) -> dict:
    """Ratio to s(t)^2 / 2 at every t = 1..n of the merged counter (module docstring), rho = 1.

    phase1_row(t) -> the squared decoder-row norm of phase 1 at t (column budget 1); default: the
    square root for horizon t1 scaled to column 1, s(t) s(t1)."""
    m, b2, bsq, s = _design(tuple(params), n)
    t = np.arange(1, n + 1)
    g1 = s[:t1] * s[t1 - 1] if phase1_row is None else phase1_row(np.arange(1, t1 + 1))
    v0 = g1[-1] if handover else 1.0  # "merged only": x_0 released alone with e_0, nothing before T1
    tau = t[t1:] - t1  # steps past T1 (tau >= 1)
    late = v0 * b2[tau] + bsq[tau - 1]
    early = g1 if handover else np.concatenate([np.full(t1 - 1, np.inf), [1.0]])  # merged only: x_0 alone at T1
    var = np.concatenate([early, late]) * m / 2.0  # sigma^2 = M / (2 rho): the sensitivity is M in both
    return {"ratio": var / (s * s / 2.0), "M": m, "t": t}


def worst_on(path: dict, lo: int = 1 << 10, hi: int = N2) -> tuple[float, int]:
    r = path["ratio"][lo - 1 : hi]
    i = int(np.argmax(r))
    return float(r[i]), lo + i


# --------------------------------------------------------------------------- reduced scale (dense)


def dense_merged(n: int, t1: int, e: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """The merged counter's encoder on n steps as a dense matrix (rows = releases in time order,
    columns = items): rows 0..t1-1 the phase-1 Toeplitz p1 on the first t1 items; row t1 - 1 + tau
    (tau >= 1) applies e_tau to every item of the first t1 (the merged item x_0) and e_{tau - i} to
    item t1 - 1 + i (handover: no row for x_0 alone)."""
    enc = np.zeros((n, n))
    for r in range(t1):
        enc[r, : r + 1] = p1[r::-1]
    for tau in range(1, n - t1 + 1):
        enc[t1 - 1 + tau, :t1] = e[tau]
        enc[t1 - 1 + tau, t1 : t1 + tau] = e[tau - 1 :: -1][:tau]
    return enc


def dense_decoder(n: int, t1: int, e: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """The decoder as a dense matrix L (estimate at step t = row t - 1 of L @ releases), built by
    running the counter's decoding steps on the releases' basis: phase 1's forward substitution and
    prefix for t <= t1; then x_0's estimate = phase 1's estimate at t1 and the forward substitution
    x_tau = (y_tau - sum_{k >= 1} e_k x_{tau - k}) / e_0 on the merged stream."""
    y = np.eye(n)  # column i: the decoder's response to release i
    xs = []
    for r in range(t1):  # phase 1: P x = y
        xs.append((y[r] - sum(p1[k] * xs[r - k] for k in range(1, r + 1))) / p1[0])
    rows = list(np.cumsum(xs, axis=0))
    merged = [rows[t1 - 1]]  # x_0's estimate (handover)
    for tau in range(1, n - t1 + 1):
        merged.append((y[t1 - 1 + tau] - sum(e[k] * merged[tau - k] for k in range(1, tau + 1))) / e[0])
        rows.append(np.sum(merged, axis=0))
    return np.array(rows)


def closed_form_variances(n: int, t1: int, e: np.ndarray, p1: np.ndarray) -> np.ndarray:
    """Per-step variance (sigma = 1) from the closed form of the module docstring (phase 1: the
    Toeplitz decoder weights of p1; then V0 b_tau^2 + sum_{j < tau} b_j^2)."""
    _, g1 = decoder_sq(np.asarray(p1[:t1], dtype=np.float64))
    b2, bsq = decoder_sq(np.asarray(e[: n - t1 + 1], dtype=np.float64))
    tau = np.arange(1, n - t1 + 1)
    return np.concatenate([g1, g1[-1] * b2[tau] + bsq[tau - 1]])


def reduced_table(cases=((256, 4), (512, 8), (1024, 8))) -> list[str]:
    """Merged-start damped Toeplitz ("merged only": x_0 released once, no early rows required) against the plain
    damped Toeplitz at the same span, 6-knot damping by Nelder-Mead (``anytime_floor.toeplitz_best``'s
    parametrisation)."""
    from scipy.optimize import minimize

    from benchmarks.anytime_floor import sqrt_coefficients_f, toeplitz_best

    out = []
    for n, t0 in cases:
        m = n - t0 + 1
        c = sqrt_coefficients_f(m)
        lk = np.log1p(np.arange(m))
        grid = np.linspace(0.0, lk[-1], 7)
        s = sqrt_row_norms(n)

        def coeffs(p, c=c, lk=lk, grid=grid):
            return c * np.exp(np.interp(lk, grid, np.concatenate([[0.0], np.minimum.accumulate(np.minimum(p, 0.0))])))

        def worst(p, n=n, t0=t0, s=s):
            e = coeffs(p)
            _, bsq = decoder_sq(e)
            return float((np.sum(e * e) * bsq / s[t0 - 1 :] ** 2).max())

        opts = {"maxiter": 3000, "xatol": 1e-4, "fatol": 1e-6}
        merged = minimize(worst, np.linspace(0.0, -1.0, 6), method="Nelder-Mead", options=opts).fun
        out.append(f"| [{t0}, {n}] | {toeplitz_best(n, t0)['worst']:.4f} | {merged:.4f} |")
    return out


def capped_start_bound(n: int, t0: int, cap: float, iters: int = 80) -> float:
    """The certified lower bound of ``anytime_floor.general_optimum`` with the rows before t0 held to a
    ratio <= cap too (weights 1 / (s(t) sqrt(cap)) there): how much the optimum lives on a free start."""
    from scipy.linalg import svd

    s = sqrt_row_norms(n)
    ts = np.arange(1, n + 1)
    a = (np.arange(n)[None, :] < ts[:, None]).astype(float)
    w = 1.0 / (s * np.sqrt(np.where(ts < t0, cap, 1.0)))
    lam, mu, lower = np.full(n, 1.0 / n), np.full(n, 1.0 / n), 0.0
    for _ in range(iters):
        u, sv, vt = svd((np.sqrt(lam) * w)[:, None] * a * np.sqrt(mu)[None, :], full_matrices=False)
        f = float(sv.sum())
        lower = max(lower, f * f)
        lam = np.sqrt(lam * ((u * u) @ sv) / f)
        lam /= lam.sum()
        mu = np.sqrt(mu * ((vt.T * vt.T) @ sv) / f)
        mu /= mu.sum()
    return lower


def readout(n: int = 512, t0: int = 8) -> list[str]:
    """The optimum's (X, E) at [t0, n]: X's stationarity and E's diagonal (``docs/counters.md``)."""
    from benchmarks.anytime_floor import general_optimum, reverse_cholesky

    g = general_optimum(n, t0)
    x = g["x"]
    e = reverse_cholesky(x)
    out = [f"bound {g['lower']:.4f}, primal {g['primal']:.4f}"]
    for lag in (1, 8, 128):
        out.append(
            f"X[j, j+{lag}], j = 16, 32, ..., 256: " + " ".join(f"{x[j, j + lag]:.3f}" for j in (16, 32, 64, 128, 256))
        )
    out.append(
        "E diagonal, j = 0..8, 16, 64, 256, n-12, n-1: "
        + " ".join(f"{e[j, j]:.3f}" for j in (*range(9), 16, 64, 256, n - 12, n - 1))
    )
    return out


def inverse_variance_mix(step: int, lo: int = 10, hi: int = 24) -> tuple[float, np.ndarray]:
    """Square roots for horizons 2^lo, 2^(lo+step), ..., 2^hi (each stopped at its horizon) with budget
    shares p_i, combined at each t by inverse-variance weights: the ratio at t is
    1 / sum_{T_i >= t} p_i s(t) / s(T_i); the shares minimising its max over t (16 points an octave)
    by a linear program."""
    from scipy.optimize import linprog

    s = sqrt_row_norms(1 << hi)
    hs = [1 << v for v in range(lo, hi + 1, step)]
    if hs[-1] != 1 << hi:
        hs.append(1 << hi)
    ts = np.unique(np.round(2.0 ** np.arange(lo, hi + 1e-9, 1 / 16)).astype(int))
    a_ub = [[-(s[t - 1] / s[h - 1]) if h >= t else 0.0 for h in hs] + [1.0] for t in ts]
    m = len(hs)
    res = linprog(
        c=[0.0] * m + [-1.0],
        A_ub=a_ub,
        b_ub=[0.0] * len(ts),
        A_eq=[[1.0] * m + [0.0]],
        b_eq=[1.0],
        bounds=[(0, None)] * m + [(None, None)],
    )
    return 1.0 / res.x[-1], res.x[:-1]


# --------------------------------------------------------------------------- profile 3: the knot design


def knot_ratio(v, knots, t1: int, n: int = N2, tailc: float = 0.25, grid=None):
    """The lattice model of ``anytime_sqrt`` profile 3 (``transforms/core/counters/factorization/anytime.py``):
    ln h(k)^2 piecewise linear in log2(1 + k) through (knots, (0, *v)), e_k = floor(c_k h(k) 2^20) / 2^20 made
    non-increasing (the counter's own coefficients), M = sum_{k<n} e_k^2 + h(n)^2 tailc / pi (the tail past
    N2 = n, tailc = 1 / (B3 (Q3 - 1))), phase 1 the square root for horizon t1 scaled to column 1 (V0 =
    s(t1)^2), the hand-over. Returns the ratio to s(t)^2 / 2 at every t of (t1, n] (index t - t1 - 1), or at
    the t of ``grid``, and M."""
    from transforms.core.counters.factorization.coefficients import series_inverse, sqrt_coefficients

    c = sqrt_coefficients(n)
    s = np.cumsum(c * c)
    lh2 = np.interp(np.log2(1.0 + np.arange(n, dtype=np.float64)), knots, np.concatenate([[0.0], v]))
    e = np.minimum.accumulate(np.floor(c * np.exp(0.5 * lh2) * float(1 << 20))) / float(1 << 20)
    m = float(e @ e) + math.exp(float(v[-1])) * tailc / math.pi
    b = np.cumsum(series_inverse(e, n))
    bsq = np.cumsum(b * b)
    tau = np.arange(1, n - t1 + 1)
    ratio = m * (s[t1 - 1] ** 2 * b[tau] ** 2 + bsq[tau - 1]) / s[t1:] ** 2
    return (ratio if grid is None else ratio[np.asarray(grid) - t1 - 1]), m


def optimise_knots(v, knots, t1: int, n: int = N2, lo: int = 1 << 10, per_octave: int = 24, iters: int = 40):
    """Minimise the worst ``knot_ratio`` over t in [lo, n] (a grid of ``per_octave`` points an octave) by
    sequential linear programming: the ratio's Jacobian by forward differences (step 2e-3 in ln h^2), the
    step by a linear program in a box of half-width delta, accepted when the worst ratio falls (delta x 1.5
    when the fall is at least half the predicted one), else delta x 0.4. About 1 minute an iteration at
    n = 2^24 (17 knots) on this machine; prints each iteration. Returns (v, worst on the grid)."""
    from scipy.optimize import linprog

    grid = np.unique(np.round(2.0 ** np.arange(math.log2(lo), math.log2(n) + 1e-9, 1 / per_octave)).astype(int))
    v = np.asarray(v, dtype=np.float64)
    r = knot_ratio(v, knots, t1, n, grid=grid)[0]
    delta, h = 0.15, 2e-3
    for it in range(iters):
        jac = np.array(
            [(knot_ratio(v + h * np.eye(len(v))[i], knots, t1, n, grid=grid)[0] - r) / h for i in range(len(v))]
        ).T
        lp = linprog(
            np.r_[np.zeros(len(v)), 1.0],
            A_ub=np.hstack([jac, -np.ones((len(r), 1))]),
            b_ub=-r,
            bounds=[(-delta, delta)] * len(v) + [(None, None)],
        )
        vn = v + lp.x[:-1]
        rn = knot_ratio(vn, knots, t1, n, grid=grid)[0]
        accepted = rn.max() < r.max()
        print(f"iteration {it}: worst {r.max():.5f}, predicted {lp.x[-1]:.5f}, new {rn.max():.5f}", flush=True)
        if accepted:
            gain = (r.max() - rn.max()) / max(r.max() - lp.x[-1], 1e-12)
            v, r = vn, rn
            delta = min(1.0, delta * 1.5) if gain > 0.5 else delta
        else:
            delta *= 0.4
            if delta < 1e-3:
                break
    return v, float(r.max())


def knots_report(n: int = N2) -> list[str]:
    """The constants of profile 3 through the model: the worst ratio over every t of [2^10, n], and at the
    five points (the lattice counter's own figures: ``bench_counters.py --anytime``)."""
    from transforms.core.counters.factorization.anytime import B3, KNOTS3, LOGH2_3, MERGE_T1, Q3

    ratio, m = knot_ratio(np.array(LOGH2_3[1:]), np.array(KNOTS3), MERGE_T1, n, tailc=1.0 / (B3 * (Q3 - 1.0)))
    lo = (1 << 10) - MERGE_T1 - 1
    i = int(np.argmax(ratio[lo:]))
    five = " / ".join(f"{ratio[(1 << k) - MERGE_T1 - 1]:.4f}" for k in (10, 14, 18, 22, 24) if 1 << k <= n)
    at = math.log2(lo + i + MERGE_T1 + 1)
    return [f"profile 3 (model): M = {m:.4f}, worst {ratio[lo + i]:.4f} at t = 2^{at:.2f}; five points {five}"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reduced", action="store_true")
    ap.add_argument("--others", action="store_true", help="readout, capped start, inverse-variance mix")
    ap.add_argument("--t1", type=int, nargs="+", default=[256, 512, 768])
    ap.add_argument("--params", type=float, nargs=3, default=list(PROFILE2))
    ap.add_argument("--knots", action="store_true", help="profile 3's constants through the model")
    ap.add_argument(
        "--optimise", action="store_true", help="with --knots: re-run the design from profile 3's constants"
    )
    args = ap.parse_args(argv)
    if args.knots:
        if args.optimise:
            from transforms.core.counters.factorization.anytime import KNOTS3, LOGH2_3, MERGE_T1

            v, worst = optimise_knots(np.array(LOGH2_3[1:]), np.array(KNOTS3), MERGE_T1)
            print("LOGH2_3 =", tuple(round(float(x), 6) for x in (0.0, *v)), f"worst on the grid {worst:.5f}")
        for line in knots_report():
            print(line, flush=True)
        return 0
    if args.reduced:
        print("| span [t0, N] | best damped Toeplitz | merged start (items before t0 one item) |")
        print("|---|---|---|")
        for row in reduced_table():
            print(row, flush=True)
        return 0
    if args.others:
        for line in readout():
            print(line, flush=True)
        for cap in (float("inf"), 4.0, 2.0, 1.5):
            print(
                f"[4, 256], rows before t0 held to ratio <= {cap}: bound {capped_start_bound(256, 4, cap):.4f}",
                flush=True,
            )
        for step in (1, 2, 4, 7):
            w, p = inverse_variance_mix(step)
            print(
                f"inverse-variance mix of square roots every {step} octaves: {w:.4f} (last share {p[-1]:.3f})",
                flush=True,
            )
        return 0
    print(f"params (A, K0, P) = {tuple(args.params)}")
    print("| T1 | variant | M | 2^10 | 2^14 | 2^18 | 2^22 | 2^24 | worst, every t in [2^10, 2^24] | t=1 | T1/2 | T1 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for t1 in args.t1:
        for handover in (True, False):
            c0 = time.process_time()
            p = merged_ratio_path(tuple(args.params), t1, handover=handover)
            r = p["ratio"]
            w, at = worst_on(p)
            five = " | ".join(f"{r[(1 << L) - 1]:.4f}" for L in (10, 14, 18, 22, 24))
            name = "handover" if handover else "merged only"
            early = f"{r[0]:.2f} | {r[t1 // 2 - 1]:.2f} | {r[t1 - 1]:.2f}"
            worst = f"{w:.4f} (t = 2^{math.log2(at):.2f})"
            cpu = time.process_time() - c0
            print(f"| {t1} | {name} | {p['M']:.4f} | {five} | {worst} | {early} |  ({cpu:.0f} s CPU)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
