"""``NoiseProfile.tail_bound`` against references computed another way (issue 27: bounds that claim more
confidence than they have).

Deterministic, no sampling: a bound that forgets the two sides (``log(1/beta)`` where ``log(2/beta)`` is owed),
drops a factor, or rounds the exact Laplace quantile down is caught at any beta, where a coverage test needs
thousands of runs at a small beta.

* **Validity, exactly**: the law of a sum of a few discrete Laplace / Gaussian terms on the integers is computed
  by convolution of their exact pmfs; ``P(|noise| > bound) <= beta``.
* **The Chernoff bound it claims to be**: for sums, the bound is ``min over lambda of (log E exp(lambda X) +
  log(2 / beta)) / lambda`` (a union of the two one-sided Chernoff bounds at ``beta / 2`` each); the reference
  minimises it on a fine grid, independently of the implementation's golden-section search.
* **The exact quantile** of one discrete Laplace term: the least integer ``a`` with ``P(|X| > a) <= beta``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile

BETAS = (0.25, 0.05, 1e-3, 1e-6)


def laplace_pmf(b: float, support: int) -> np.ndarray:
    """Discrete Laplace of scale ``b`` on ``-support..support``: ``(1 - q) / (1 + q) q^|x|``, ``q = exp(-1/b)``."""
    q = math.exp(-1.0 / b)
    x = np.arange(-support, support + 1)
    return (1 - q) / (1 + q) * q ** np.abs(x)


def gaussian_pmf(sigma2: float, support: int) -> np.ndarray:
    """Discrete Gaussian of parameter ``sigma^2`` on ``-support..support``, normalised over a support far wider
    than its mass (40 sigma: the rest is below 1e-300)."""
    x = np.arange(-support, support + 1)
    w = np.exp(-(x.astype(float) ** 2) / (2 * sigma2))
    return w / w.sum()


def law_of(terms, support: int) -> np.ndarray:
    """The pmf of a sum of independent terms ``(kind, param, weight, count)`` with integer weights, on
    ``-support..support`` (each term's pmf on ``-support..support`` too: the mass cut is below 1e-30 for the
    profiles here)."""
    out = np.zeros(1)
    out[0] = 1.0
    for kind, p, w, c in terms:
        base = laplace_pmf(p, support) if kind == LAPLACE else gaussian_pmf(p, support)
        spread = np.zeros(2 * support * w + 1)
        spread[::w] = base  # w X on the integers
        for _ in range(c):
            out = np.convolve(out, spread)
    mid = len(out) // 2
    return out, mid


def exact_tail(terms, a: float, support: int = 200) -> float:
    """``P(|sum| > a)`` exactly (to float rounding)."""
    pmf, mid = law_of(terms, support)
    x = np.arange(len(pmf)) - mid
    return float(pmf[np.abs(x) > a + 1e-9].sum())


def profile_of(terms) -> NoiseProfile:
    out = NoiseProfile.zero()
    for kind, p, w, c in terms:
        out = out + NoiseProfile.single(kind, p, w).times(c)
    return out


def chernoff_reference(terms, beta: float) -> float:
    """``min over lambda in (0, lambda_max) of (log MGF(lambda) + log(2 / beta)) / lambda``, on a grid of 200,001
    points in log lambda (the discrete Laplace MGF ``(1 - q)^2 / ((1 - q e^t)(1 - q e^-t))`` exists for
    ``t < 1/b``; the discrete Gaussian's is at most ``exp(sigma^2 t^2 / 2)``)."""
    lap = [(p, w, c) for kind, p, w, c in terms if kind == LAPLACE]
    gvar = sum(c * w * w * p for kind, p, w, c in terms if kind == GAUSSIAN)
    lam_max = min((1.0 / (p * w) for p, w, _ in lap), default=50.0)
    lam = np.exp(np.linspace(math.log(lam_max) - 30, math.log(lam_max * (1 - 1e-9)), 200_001))
    log_mgf = lam * lam * gvar / 2
    for p, w, c in lap:
        q = math.exp(-1.0 / p)
        t = lam * w
        log_mgf = log_mgf + c * (2 * np.log1p(-q) - np.log1p(-q * np.exp(t)) - np.log1p(-q * np.exp(-t)))
    return float(np.min((log_mgf + math.log(2 / beta)) / lam))


PROFILES = {
    "gaussian": [(GAUSSIAN, 4.0, 1, 1)],
    "gaussian-sum": [(GAUSSIAN, 2.5, 1, 3), (GAUSSIAN, 1.0, 2, 1)],
    "laplace-sum": [(LAPLACE, 3.0, 1, 2), (LAPLACE, 1.5, 2, 1)],
    "mixed": [(LAPLACE, 2.0, 1, 3), (GAUSSIAN, 3.0, 1, 2)],
}


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("beta", BETAS)
def test_tail_bound_is_valid_exactly_and_is_the_chernoff_bound_at_beta_over_two(name, beta):
    terms = PROFILES[name]
    bound = profile_of(terms).tail_bound(beta)
    assert exact_tail(terms, bound) <= beta * (1 + 1e-9), (name, beta, bound)
    ref = chernoff_reference(terms, beta)
    if all(kind == GAUSSIAN for kind, *_ in terms):
        ref = math.sqrt(2 * sum(c * w * w * p for _, p, w, c in terms) * math.log(2 / beta))  # the minimum
    # the implementation's search and the grid both approach the minimum from above: 1e-4 apart at most
    assert abs(bound - ref) <= 1e-4 * ref, (name, beta, bound, ref)


@pytest.mark.parametrize("b", [0.7, 2.0, 9.5])
@pytest.mark.parametrize("beta", BETAS)
def test_one_laplace_term_gets_its_exact_quantile(b, beta):
    """One discrete Laplace term: the bound is the least integer ``a`` with ``P(|X| > a) <= beta`` (rounded up,
    never down), times its weight."""
    pmf, mid = law_of([(LAPLACE, b, 1, 1)], 400)
    x = np.abs(np.arange(len(pmf)) - mid)
    least = next(a for a in range(400) if pmf[x > a].sum() <= beta)
    for w in (1.0, 0.25):
        assert NoiseProfile.single(LAPLACE, b, w).tail_bound(beta) == pytest.approx(w * least, rel=1e-12)


def test_the_references_catch_a_one_sided_bound_and_a_lost_factor():
    """Twins: the bound computed at ``beta`` where ``beta / 2`` is owed (one side forgotten) and a bound divided
    by sqrt(2) both fail the checks above (the first the Chernoff reference, the second validity too)."""
    for terms in PROFILES.values():
        one_sided = chernoff_reference(terms, 2 * 1e-6)  # log(2 / (2 beta)) = log(1 / beta)
        assert abs(one_sided - chernoff_reference(terms, 1e-6)) > 1e-4 * chernoff_reference(terms, 1e-6)
    terms = PROFILES["gaussian"]
    assert exact_tail(terms, profile_of(terms).tail_bound(1e-6) / math.sqrt(2)) > 1e-6
