"""How close to the square root can a counter without a horizon get?  (issue 31, ``docs/counters.md``,
"Anytime square root", "Against the target").

The target: a counter whose variance at every t in [t0, N] is at most rho times ``s(t)^2 / 2``, the max
variance of ``sqrt_factorization`` designed for horizon t (rho = 1, count), and which is private for ever.

**Reduction to a finite problem.** Any counter is a factorization A = D E of the (infinite)
lower-triangular counting matrix with E, D lower triangular; its first N rows are a factorization of
A_N, and a truncated column is no longer than the whole one. So the best worst ratio over t in [t0, N]
of ANY counter (Toeplitz or not, with or without a horizon) is at least

    v(t0, N) = min over X > 0, diag(X) <= 1 of max_{t0 <= t <= N} a_t' X^-1 a_t / s(t)^2

(X = E'E, a_t the t-th row of A_N; every X > 0 is E'E for a lower-triangular E, so the minimum is
also attained by a causal counter on the first N steps). Conversely v(t0, N) is reached for ever: run
the optimal E_N for the first N steps, then a fresh counter for the items after N plus the (post-processed)
estimate of the prefix at N; every item's column is one of the two, so the sensitivity is unchanged for
ever. The issue's target (every t up to 2^24) is v(2^10, 2^24) <= 1.25.

**Certified lower bound (weak duality).** For row weights lam and column weights mu on simplices,
||diag(sqrt(lam) / s) A diag(sqrt(mu))||_*^2 <= sum_t lam_t a_t' X^-1 a_t / s(t)^2 <= max_t ... for
every feasible X (Hoelder: ||B C||_* <= ||B||_F ||C||_F with B = P A X^-1/2, C = X^1/2 Q). The weights
are found by the fixed-point iteration lam <- lam r / ||M||_* (r the row sums of U^2 S, the column
sums of V^2 S for columns); the primal X = Q^-1 (Q A' P^2 A Q)^1/2 Q^-1 (scaled to diag <= 1) gives
the upper bound. Both are printed; their gap says how converged the pair is.

**Toeplitz at the same scale.** For comparison, the best damped square root E = Toeplitz(c_k h(k))
on the same horizon (no tail: a Toeplitz column's norm is its first column's, to N), with log h
piecewise linear in log(1 + k) (``knots`` values, Nelder-Mead on the worst ratio).

Run (one process, ``nice -n 10``; N = 1024 takes about a minute of CPU, N = 2048 about 10):

    python -m benchmarks.anytime_floor [--N 1024] [--t0 16] [--iters 80]

Dense float64 numerics (SVD of an (N - t0 + 1) x N matrix per iteration); memory O(N^2).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def sqrt_coefficients_f(n: int) -> np.ndarray:
    """c_k = binom(2k, k) / 4^k, k < n (float64)."""
    c = np.ones(n)
    for k in range(1, n):
        c[k] = c[k - 1] * (2 * k - 1) / (2 * k)
    return c


def sqrt_row_norms(n: int) -> np.ndarray:
    """s(t) = sum_{k<t} c_k^2 for t = 1..n (index t - 1): s(t)^2 / 2 is the square root's max variance."""
    c = sqrt_coefficients_f(n)
    return np.cumsum(c * c)


def _counting_rows(n: int, t0: int) -> tuple[np.ndarray, np.ndarray]:
    ts = np.arange(t0, n + 1)
    return ts, (np.arange(n)[None, :] < ts[:, None]).astype(float)


def general_optimum(n: int, t0: int, iters: int = 80) -> dict:
    """The certified lower bound and a primal factorization for v(t0, n) (module docstring)."""
    from scipy.linalg import eigh, svd

    s = sqrt_row_norms(n)
    ts, a = _counting_rows(n, t0)
    w = 1.0 / s[ts - 1]
    lam = np.full(len(ts), 1.0 / len(ts))
    mu = np.full(n, 1.0 / n)
    lower = 0.0
    for _ in range(iters):
        m = (np.sqrt(lam) * w)[:, None] * a * np.sqrt(mu)[None, :]
        u, sv, vt = svd(m, full_matrices=False, lapack_driver="gesdd")
        f = float(sv.sum())
        lower = max(lower, f * f)
        r = (u * u) @ sv
        c = (vt.T * vt.T) @ sv
        # damped fixed point lam <- lam r / f (its fixed points are the KKT points of the concave dual)
        lam = np.sqrt(lam * r / f)
        lam /= lam.sum()
        mu = np.sqrt(mu * c / f)
        mu /= mu.sum()
    q = np.sqrt(mu)
    wq = (a.T * (lam * w * w)) @ a * q[:, None] * q[None, :]
    ev, vec = eigh(wq)
    x = (vec * np.sqrt(np.clip(ev, 0.0, None))) @ vec.T / q[:, None] / q[None, :]
    x += 1e-12 * np.eye(n) * x.diagonal().max()
    x /= x.diagonal().max()
    xi = np.linalg.inv(x)
    ratio = np.einsum("ij,jk,ik->i", a, xi, a) * w * w
    return {"lower": lower, "primal": float(ratio.max()), "ts": ts, "ratio": ratio, "x": x}


def reverse_cholesky(x: np.ndarray) -> np.ndarray:
    """Lower-triangular E with E'E = x (the causal encoder of a primal X)."""
    j = np.eye(len(x))[::-1]
    c = np.linalg.cholesky(j @ x @ j)
    return j @ c.T @ j


def toeplitz_ratios(e: np.ndarray, t0: int) -> np.ndarray:
    """Ratios at t = t0..n of the Toeplitz encoder with coefficients e (e_0 = 1) on horizon n = len(e)."""
    n = len(e)
    inv = np.zeros(n)
    inv[0] = 1.0 / e[0]
    for k in range(1, n):
        inv[k] = -np.dot(e[1 : k + 1], inv[k - 1 :: -1][:k]) / e[0]
    d = np.cumsum(inv)
    rows = np.cumsum(d * d)
    s = sqrt_row_norms(n)
    return float(np.sum(e * e)) * rows[t0 - 1 :] / s[t0 - 1 :] ** 2


def toeplitz_best(n: int, t0: int, knots: int = 6) -> dict:
    """Best damped square root on horizon n: log h piecewise linear in log(1 + k), h(0) = 1."""
    from scipy.optimize import minimize

    c = sqrt_coefficients_f(n)
    lk = np.log1p(np.arange(n))
    grid = np.linspace(0.0, lk[-1], knots + 1)

    def coeffs(p):
        return c * np.exp(np.interp(lk, grid, np.concatenate([[0.0], np.minimum.accumulate(np.minimum(p, 0.0))])))

    def worst(p):
        return float(toeplitz_ratios(coeffs(p), t0).max())

    opts = {"maxiter": 3000, "xatol": 1e-4, "fatol": 1e-6}
    best = minimize(worst, np.linspace(0.0, -1.0, knots), method="Nelder-Mead", options=opts)
    return {"worst": best.fun, "plain_sqrt": float(toeplitz_ratios(c, t0).max())}


def heuristic_floor(n: int, t0: int) -> float:
    """The slowly-varying Toeplitz floor of ``docs/counters.md`` in its continuum form, 1 + ln(U_n / U_t0) / 2."""
    s = sqrt_row_norms(n)
    return 1.0 + 0.5 * float(np.log(s[n - 1] / s[t0 - 1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, nargs="+", default=[1024])
    ap.add_argument("--t0", type=int, default=16)
    ap.add_argument("--iters", type=int, default=80)
    ap.add_argument("--no-general", action="store_true", help="only the Toeplitz rows (cheap)")
    args = ap.parse_args(argv)
    print(
        "| t0 | N | s(N)/s(t0) | general: certified lower bound | general: primal | best damped Toeplitz "
        "| plain sqrt(N) | Toeplitz heuristic floor |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for n in args.N:
        s = sqrt_row_norms(n)
        t = time.process_time()
        nan = {"lower": float("nan"), "primal": float("nan")}
        g = nan if args.no_general else general_optimum(n, args.t0, args.iters)
        tp = toeplitz_best(n, args.t0)
        print(
            f"| {args.t0} | {n} | {s[n - 1] / s[args.t0 - 1]:.3f} | {g['lower']:.4f} | {g['primal']:.4f} | "
            f"{tp['worst']:.4f} | {tp['plain_sqrt']:.4f} | {heuristic_floor(n, args.t0):.4f} |"
            f"  ({time.process_time() - t:.0f} s CPU)",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
