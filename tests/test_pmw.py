"""Private multiplicative weights: structure, noise-off exactness, valid bound."""

import numpy as np
import pytest
from scipy import stats

from transforms.core.accounting import ZCDP, PureDP
from transforms.core.pmw import PMWMechanism, range_answers


def test_range_enumeration_matches_triu():
    m = PMWMechanism(37, ranges=True)
    a, b = m._range_of(np.arange(m.m))
    ea, eb = np.triu_indices(37)
    assert (a == ea).all() and (b == eb).all()
    h = np.arange(37)
    np.testing.assert_allclose(range_answers(h), [h[i : j + 1].sum() for i, j in zip(ea, eb)])


def test_noise_off_release_is_exact(no_noise):
    m = PMWMechanism(16, ranges=True)
    h = np.arange(16)
    np.testing.assert_array_equal(m.release(h, PureDP(1.0), no_noise.stream("x")).values, h)


def test_validation():
    with pytest.raises(ValueError, match="exactly one"):
        PMWMechanism(8)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        PMWMechanism(2, matrix=[[2.0, 0.0]])
    assert PMWMechanism(8, ranges=True).alpha(PureDP(1.0), 0.1) == float("inf")  # needs n


@pytest.mark.statistical
@pytest.mark.parametrize("kind,budget", [("laplace", PureDP(1.0)), ("gaussian", ZCDP(0.5))], ids=["pure", "zcdp"])
def test_error_bound_exceedance(kind, budget, noise):
    """max over all ranges of |q(A) - q(D)| exceeds alpha(beta) with rate <= beta
    (binomial test at 1e-4)."""
    rng = np.random.default_rng(4)
    d, n = 64, 3000
    h = np.bincount(np.clip(rng.normal(20, 6, n).astype(int), 0, d - 1), minlength=d)
    m = PMWMechanism(d, ranges=True, iterations=15, noise=kind)
    beta, runs = 0.2, 60
    a = m.alpha(budget, beta, n=n)
    truth = range_answers(h)
    errs = [
        np.max(np.abs(range_answers(m.release(h, budget, noise.stream("pmw", r)).values) - truth)) for r in range(runs)
    ]
    exceed = sum(e > a for e in errs)
    assert stats.binomtest(exceed, runs, beta, alternative="greater").pvalue > 1e-4
    # PMW does better than the trivial answer "all zeros" (error n)
    assert np.median(errs) < 0.5 * n


def test_matrix_queries(noise):
    rng = np.random.default_rng(2)
    q = rng.random((6, 10))
    m = PMWMechanism(10, matrix=q)
    h = rng.integers(0, 30, 10)
    rel = m.release(h, PureDP(2.0), noise.stream("mat"))
    assert rel.values.shape == (10,)
    assert abs(rel.values.sum() - h.sum()) < 60  # the synthetic total is n_hat
    assert m.evaluate(rel.values).shape == (6,)
