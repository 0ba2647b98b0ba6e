"""Empirical privacy check of the discrete Laplace count on neighbouring inputs.

In the style of Google's DP stochastic tester: run the mechanism many times
on D (count 10) and on a neighbour D' (count 11), histogram the outputs, and
for every output value seen often enough in both, compute a *lower confidence
bound* on |log(P[M(D)=v] / P[M(D')=v])|. A correct eps-DP mechanism has every
such ratio <= eps, so the largest lower bound must not exceed eps.

Statistics: counts are Poisson-like; the standard error of a log-ratio of two
counts c1, c2 is about sqrt(1/c1 + 1/c2). With z = 4.9 and a Bonferroni
correction over the (<= 60) tested values (each with >= 1000 draws), a correct mechanism fails with
probability < 1e-4. The same test must *fail* for a mechanism whose noise is
half the required scale (true eps = 2 eps).
"""

import math

import numpy as np
import pytest

from transforms.core.foundation.accounting import PureDP
from transforms.core.static import CountMechanism

EPS = 1.0
N = 400_000
MIN_COUNT = 1000
Z = 4.9


def epsilon_lower_bound(out_d, out_d2):
    va, ca = np.unique(out_d, return_counts=True)
    vb, cb = np.unique(out_d2, return_counts=True)
    a, b = dict(zip(va.tolist(), ca.tolist())), dict(zip(vb.tolist(), cb.tolist()))
    lower = 0.0
    tested = 0
    for v in set(a) & set(b):
        if a[v] >= MIN_COUNT and b[v] >= MIN_COUNT:
            tested += 1
            ratio = abs(math.log(a[v] / b[v]))
            se = math.sqrt(1 / a[v] + 1 / b[v])
            lower = max(lower, ratio - Z * se)
    assert tested >= 3, "too few output values tested"
    return lower


def run_count(mech, budget, count, noise, tag):
    """N independent releases of the count on a dataset of ``count`` items.

    A release is ``count + noise`` with the noise the mechanism draws for
    ``budget``; the N noises are drawn in one vectorised call of the
    mechanism's own noise path (same calibration, same sampler)."""
    stream = noise.stream("privacy-test", tag)
    one = mech.release(np.array([count]), budget, noise.stream("privacy-test", tag, "first")).values
    draws = np.concatenate([mech.draw_noise_n(budget, stream, N - 1) + count, one])
    return draws


@pytest.mark.statistical
def test_discrete_laplace_count_respects_epsilon(noise):
    mech = CountMechanism("laplace")
    budget = PureDP(EPS)
    lb = epsilon_lower_bound(run_count(mech, budget, 10, noise, "D"), run_count(mech, budget, 11, noise, "D2"))
    assert lb <= EPS


class _MisScaledCount(CountMechanism):
    """Claims eps but adds noise calibrated for 2 eps (the bug the test must catch)."""

    def _param(self, budget):
        return super()._param(PureDP(2 * budget.epsilon))


@pytest.mark.statistical
def test_mis_scaled_mechanism_is_caught(noise):
    mech = _MisScaledCount("laplace")
    budget = PureDP(EPS)
    lb = epsilon_lower_bound(run_count(mech, budget, 10, noise, "M"), run_count(mech, budget, 11, noise, "M2"))
    assert lb > EPS
