"""The numbers behind the conversions between zCDP and (eps, delta)-DP.

Plain floats in, plain floats out (the budget classes in :mod:`.budgets` wrap
them):

* :func:`cks_epsilon` / :func:`zcdp_epsilon`: rho-zCDP implies
  (eps, delta)-DP (Canonne, Kamath, Steinke 2020, Cor. 13), the tight eps
  minimised over the Renyi order;
* :func:`rho_for_epsilon_delta`: the largest rho whose conversion is within a
  given (eps, delta) (the calibration of a Gaussian mechanism under an
  (eps, delta) budget);
* :func:`analytic_gaussian_delta` and :func:`gaussian_rho_for_approx_tight`:
  the analytic Gaussian curve (Balle and Wang 2018) and the tight
  (eps, delta) calibration of the multivariate *discrete* Gaussian that the
  lattice counters use (proof in ``docs/counters.md``, "tight calibration").
"""

from __future__ import annotations

import functools
import math

__all__ = [
    "cks_epsilon",
    "zcdp_epsilon",
    "rho_for_epsilon_delta",
    "analytic_gaussian_delta",
    "gaussian_rho_for_approx_tight",
    "smallest_epsilon",
    "tight_gaussian_delta",
    "tight_gaussian_epsilon",
    "DISCRETE_TAU2",
    "TIGHT_EPS_SLACK",
    "TIGHT_DELTA_FACTOR",
    "TIGHT_FLOAT_MARGIN",
]


def cks_epsilon(rho: float, delta: float, alpha: float) -> float:
    """The eps of Canonne-Kamath-Steinke 2020, Prop. 12 / Cor. 13 at Renyi order
    ``alpha``: rho-zCDP implies (eps, delta)-DP with eps = alpha rho +
    (log(1/delta) + (alpha-1) log(1-1/alpha) - log(alpha)) / (alpha - 1), for
    every alpha > 1."""
    return alpha * rho + (math.log(1 / delta) + (alpha - 1) * math.log1p(-1 / alpha) - math.log(alpha)) / (alpha - 1)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """The eps of the tight conversion of rho-zCDP at ``delta`` (>= 0).

    Every alpha > 1 gives a valid eps; we minimise over alpha numerically
    (golden-section search on a convex function in log-alpha), so an imprecise
    minimiser only loses tightness, never validity. The result is never worse
    than the classic ``rho + 2 sqrt(rho log(1/delta))``.
    """
    if rho == 0:
        return 0.0
    classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    lo, hi = math.log(1 + 1e-9), math.log(1e7 / min(1.0, rho) + 10)
    g = (math.sqrt(5) - 1) / 2
    f = lambda la: cks_epsilon(rho, delta, math.exp(la))  # noqa: E731
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(200):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    eps = min(fa, fb, classic)
    return max(eps, 0.0)


@functools.lru_cache(maxsize=4096)
def rho_for_epsilon_delta(epsilon: float, delta: float) -> float:
    """The largest rho (bisection, rounded down) with rho-zCDP => (epsilon, delta)-DP.

    Cached: about 40 ms of bisection, once per (eps, delta) instead of per release."""
    hi = max(epsilon, 1e-12)
    while zcdp_epsilon(hi, delta) < epsilon:
        hi *= 2
    return _largest(lambda rho: zcdp_epsilon(rho, delta) <= epsilon, 0.0, hi, 100)


def _largest(ok, lo: float, hi: float, steps: int) -> float:
    """Bisection: the last ``lo`` with ``ok(lo)`` after ``steps`` halvings of [lo, hi]."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


# ---------------------------------------------------------------------------
# Tight (eps, delta) for the discrete Gaussian (docs/counters.md, "tight calibration")
# ---------------------------------------------------------------------------

DISCRETE_TAU2 = 4  # lattice-unit variance of the smoothing kernel in the proof (added to sigma^2)
_DIM_MAX = 1 << 62  # the proof's bound holds for up to this many differing coordinates
# eta = 2 sum_{m>=1} exp(-2 pi^2 tau^2 m^2) <= 2 exp(-2 pi^2 tau^2) / (1 - exp(-6 pi^2 tau^2))
_ETA = 2 * math.exp(-2 * math.pi**2 * DISCRETE_TAU2) / (1 - math.exp(-6 * math.pi**2 * DISCRETE_TAU2))
_LOG_R = 2 * _ETA / (1 - _ETA)  # >= log((1 + eta) / (1 - eta))
TIGHT_EPS_SLACK = 2 * _DIM_MAX * _LOG_R  # ~2e-15: taken off the target epsilon
TIGHT_DELTA_FACTOR = math.exp(_DIM_MAX * _LOG_R)  # ~1 + 1e-15: the target delta is divided by it
TIGHT_FLOAT_MARGIN = 1e-9  # relative margin for the float evaluation of Phi


def _phi(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def analytic_gaussian_delta(epsilon: float, mu: float) -> float:
    """delta(eps) of the continuous Gaussian mechanism with sensitivity / sigma = mu
    (Balle and Wang 2018, Thm 8): Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
    if mu <= 0:
        return 0.0
    a = _phi(mu / 2 - epsilon / mu)
    tail = _phi(-mu / 2 - epsilon / mu)
    b = math.exp(epsilon + math.log(tail)) if tail > 0 else 0.0
    return max(a - b, 0.0)


@functools.lru_cache(maxsize=256)
def gaussian_rho_for_approx_tight(epsilon: float, delta: float) -> float:
    """The largest rho_eff (bisection, rounded down) such that adding discrete
    Gaussian noise N_Z(0, sigma^2)^d with ``sigma^2 >= Delta^2 / (2 rho_eff) +
    DISCRETE_TAU2`` to an integer vector query of L2 sensitivity Delta (any
    d <= 2^62 coordinates; non-adaptive inputs) is (epsilon, delta)-DP.

    Proof (docs/counters.md): N_Z(mu, sigma^2) is within a pointwise ratio
    r = (1 + eta) / (1 - eta), eta ~ 1e-34, of the post-processing of the
    continuous N(mu, sigma^2 - tau^2) by the mu-free kernel x -> N_Z(x, tau^2);
    so the mechanism is (eps + 2 d log r, r^d delta_cont(eps))-DP, where
    delta_cont is the analytic Gaussian curve. The slack (2e-15 in eps, a factor
    1 + 1e-15 in delta, plus a 1e-9 relative margin for the float evaluation) is
    taken off the target before the bisection.
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError("the tight calibration needs epsilon > 0 and 0 < delta < 1")
    eps = epsilon - TIGHT_EPS_SLACK
    target = delta / TIGHT_DELTA_FACTOR / (1 + TIGHT_FLOAT_MARGIN)
    hi = 1.0
    while analytic_gaussian_delta(eps, hi) <= target:
        hi *= 2
        if hi > 1e6:
            break
    lo = _largest(lambda mu: analytic_gaussian_delta(eps, mu) <= target, 0.0, hi, 200)
    return lo * lo / 2 * (1 - 1e-12)


def tight_gaussian_delta(epsilon: float, rho: float) -> float:
    """The delta the proof of :func:`gaussian_rho_for_approx_tight` states at ``epsilon`` for a
    composition of discrete Gaussian lattice releases whose ``sum Delta_j^2 / (sigma_j^2 -
    DISCRETE_TAU2)`` is at most ``2 rho`` (the slack and the float margin included): the
    continuous curve at ``mu = sqrt(2 rho)`` and ``epsilon - TIGHT_EPS_SLACK``, times
    ``TIGHT_DELTA_FACTOR (1 + TIGHT_FLOAT_MARGIN)``; 1 where ``epsilon`` is within the slack."""
    if rho <= 0:
        return 0.0
    eps = epsilon - TIGHT_EPS_SLACK
    if eps <= 0:
        return 1.0
    return min(1.0, analytic_gaussian_delta(eps, math.sqrt(2 * rho)) * TIGHT_DELTA_FACTOR * (1 + TIGHT_FLOAT_MARGIN))


@functools.lru_cache(maxsize=4096)
def tight_gaussian_epsilon(rho: float, delta: float) -> float:
    """The smallest epsilon (bisection, rounded up) with :func:`tight_gaussian_delta`
    ``(epsilon, rho) <= delta``: the epsilon a tight Gaussian account of ``rho`` states at
    ``delta`` (the inverse of :func:`gaussian_rho_for_approx_tight`: at its rho, at most the
    epsilon it was calibrated for). Cached: a release record states the same spend many times."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if rho <= 0:
        return 0.0
    return smallest_epsilon(lambda eps: tight_gaussian_delta(eps, rho), delta)


def smallest_epsilon(delta_at, delta: float) -> float:
    """The smallest epsilon with ``delta_at(epsilon) <= delta`` for a privacy profile ``delta_at``
    non-increasing in epsilon: doubling from 1, then 200 bisection steps, rounded up (the safe side)."""
    hi = 1.0
    while delta_at(hi) > delta:
        hi *= 2
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if delta_at(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi
