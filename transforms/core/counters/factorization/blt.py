"""The BLT parameters: the offline optimiser and the table it produced.

:data:`BLT_TABLE` (log2 of the design horizon -> the poles ``(theta,
theta_hat)``) is data, ``blt_table.json`` beside this module, loaded at
import; :func:`optimize_blt` (needs scipy, a test and bench dependency)
reproduces it (``tests/test_factorization.py``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from transforms.core.counters.factorization.coefficients import (
    blt_max_error,
    blt_omega,
    blt_sensitivity_squared,
    sqrt_coefficients,
)

__all__ = ["BLT_TABLE", "BLT_TABLE_FILE", "blt_params", "blt_log_loss", "optimize_blt"]

BLT_TABLE_FILE = Path(__file__).resolve().parent / "blt_table.json"


def _load_table() -> dict[int, tuple[tuple[float, ...], tuple[float, ...]]]:
    data = json.loads(BLT_TABLE_FILE.read_text())["tables"]
    return {
        int(k): (tuple(v["theta"]), tuple(v["theta_hat"])) for k, v in sorted(data.items(), key=lambda kv: int(kv[0]))
    }


# log2(n) -> (theta, theta_hat): optimize_blt(n, b) for b in 2..5, the fewest buffers
# within 0.2% of the best (produced offline; see docs/counters.md)
BLT_TABLE: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = _load_table()


def blt_params(log2n: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The table's poles for the design horizon 2^log2n."""
    if log2n in BLT_TABLE:
        return BLT_TABLE[log2n]
    raise ValueError(
        f"no BLT parameters for design horizon 2^{log2n}; BLT_TABLE covers 2^{min(BLT_TABLE)}..2^{max(BLT_TABLE)}"
    )


def blt_log_loss(p: np.ndarray, n: int) -> float:
    """log(sens^2 x max error) at parameters ``p`` = log(-log theta), log(-log theta_hat)
    (the optimiser's objective; 1e30 outside the valid region or where it overflows)."""
    b = len(p) // 2
    theta, theta_hat = np.exp(-np.exp(p[:b])), np.exp(-np.exp(p[b:]))
    if not (np.all((theta > 0) & (theta < 1)) and np.all((theta_hat > 0) & (theta_hat < 1))):
        return 1e30
    gaps = np.abs(np.subtract.outer(theta, theta)) + np.eye(b)
    if gaps.min() < 1e-12:
        return 1e30
    w = blt_omega(theta, theta_hat)
    if np.any(w <= 0) or w.sum() >= 1:  # decreasing positive coefficients with c_1 < 1
        return 1e30
    v = blt_sensitivity_squared(theta, theta_hat) * blt_max_error(theta, theta_hat, n)
    return math.log(v) if np.isfinite(v) and v > 0 else 1e30


def optimize_blt(
    n: int, buffers: int, restarts: int = 8, converged: list | None = None
) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """Offline: BLT poles (theta, theta_hat) minimising sens^2(inf) x max error(n).

    Needs scipy (a test/bench dependency, imported here only). Nelder-Mead then
    Powell from ``restarts`` interlaced starting points, parameters
    log(-log theta). Returns (theta, theta_hat, loss / s(n)^2): the ratio of the
    max variance to the square-root factorization's. :data:`BLT_TABLE` holds its
    output, so the counters never run it. ``converged``: a list that receives, per
    restart run, whether its Nelder-Mead stage met its tolerances before its
    iteration cap (3000 x buffers); a False says that start's point was cut short.
    """
    from scipy.optimize import minimize

    best = None
    for trial in range(restarts):
        om = np.logspace(np.log10(0.3 / n) + 0.2 * trial, np.log10(0.6), buffers)
        omh = np.minimum(om * (1.5 + 0.3 * trial), 0.999)
        p0 = np.concatenate([np.log(-np.log1p(-om)), np.log(-np.log1p(-omh))])
        if blt_log_loss(p0, n) >= 1e29:
            continue
        opts = dict(maxiter=3000 * buffers, xatol=1e-9, fatol=1e-13, adaptive=True)
        r = minimize(blt_log_loss, p0, args=(n,), method="Nelder-Mead", options=opts)
        if converged is not None:
            converged.append(bool(r.success))
        r = minimize(blt_log_loss, r.x, args=(n,), method="Powell", options=dict(maxiter=20000, xtol=1e-10, ftol=1e-14))
        if best is None or r.fun < best.fun:
            best = r
    b = buffers
    theta, theta_hat = np.exp(-np.exp(best.x[:b])), np.exp(-np.exp(best.x[b:]))
    s = float(np.sum(sqrt_coefficients(n) ** 2))
    return tuple(map(float, theta)), tuple(map(float, theta_hat)), math.exp(best.fun) / (s * s)
