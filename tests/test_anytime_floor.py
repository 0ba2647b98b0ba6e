"""benchmarks/anytime_floor.py: the certified lower bound on the worst ratio to the square root of any
causal counter over [t0, N] (``docs/counters.md``, "Anytime square root", "Against the target").

The bound is weak duality: it must never exceed the worst ratio of a feasible factorization (the plain
square root designed for N, the primal the module builds, a damped Toeplitz square root), and the
primal must be a real causal counter (lower-triangular E with E'E = X, columns of norm <= 1) whose
ratios the module reports. Cheap: N = 64 (well under a second).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.anytime_floor import general_optimum, reverse_cholesky, sqrt_row_norms, toeplitz_ratios


@pytest.fixture(scope="module")
def opt():
    return general_optimum(64, 4, iters=60)


def test_bound_below_every_feasible_counter(opt):
    s = sqrt_row_norms(64)
    plain = s[-1] * s[3:] / s[3:] ** 2  # sqrt_factorization for horizon 64: column s(64), row s(t)
    assert opt["lower"] <= plain.max()
    assert opt["lower"] <= opt["primal"] + 1e-9
    e = np.sqrt(np.diff(np.concatenate([[0.0], s])))  # c_k, e_0 = 1
    damped = e * (1.0 + np.arange(64) / 8.0) ** -0.25
    assert opt["lower"] <= toeplitz_ratios(damped, 4).max()


def test_primal_is_a_causal_counter_near_the_bound(opt):
    x = opt["x"]
    assert x.diagonal().max() <= 1.0 + 1e-12
    e = reverse_cholesky(x)
    assert np.abs(np.triu(e, 1)).max() == 0.0
    np.testing.assert_allclose(e.T @ e, x, atol=1e-9)
    # the ratios recomputed from the encoder: D = A E^-1, row t norm^2 / s(t)^2 times the column norm (<= 1)
    d = np.cumsum(np.linalg.inv(e), axis=0)
    s = sqrt_row_norms(64)
    ratio = (d * d).sum(axis=1)[3:] / s[3:] ** 2 * (e * e).sum(axis=0).max()
    # rtol 1e-3: X is ill-conditioned (the columns before t0 are free)
    np.testing.assert_allclose(ratio, opt["ratio"] * x.diagonal().max(), rtol=1e-3)
    assert opt["primal"] <= 1.02 * opt["lower"]  # converged: the pair certifies the optimum to 2%
