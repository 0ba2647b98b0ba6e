"""Tests written for the open mutants of round 44 in the offline optimiser of ``scaled.py`` (``optimize_scaled``,
``polish_scaled``: the shipped ``SCALED_TABLE`` is data; these functions produced it, docs/counters.md "Scaled
square root"). A golden reproduction of a table row would pin one processor's floating point (issue 27), so each
test watches the optimiser run (a spy on ``scipy.optimize.minimize``, imported at call time, and on the module's
``lattice_max_variance``) and asserts the stage its docstring states: the continuation's schedule of p, the
Nelder-Mead stages' initial simplices, the independent random sparse perturbations. Each names the mutant it kills
(checked with ``python -m benchmarks.mutation_fast confirm --sync NAME TEST``). Fast: T = 2^3 / 2^4, no Beam."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from transforms.core.counters.factorization import scaled as scaled_mod
from transforms.core.counters.factorization.scaled import BASIS, SCALED_TABLE, optimize_scaled, polish_scaled

STEPS = 12  # random sparse steps of the watched polish


def _spy_minimize(monkeypatch, calls: list, after_nelder_mead=None):
    """Record every ``scipy.optimize.minimize`` call (method, x0, args, options); ``after_nelder_mead(k, result)``
    is told of the k-th Nelder-Mead stage's end."""
    real = scipy.optimize.minimize

    def spy(fun, x0, args=(), method=None, options=None, **kw):
        calls.append({"method": method, "x0": np.array(x0, dtype=np.float64), "args": args, "options": options})
        r = real(fun, x0, args=args, method=method, options=options, **kw)
        if after_nelder_mead is not None and str(method).lower() == "nelder-mead":
            after_nelder_mead(sum(str(c["method"]).lower() == "nelder-mead" for c in calls), r)
        return r

    monkeypatch.setattr(scipy.optimize, "minimize", spy)


@pytest.fixture(scope="module")
def watched_polish():
    """``polish_scaled(3, row 3, evaluations=STEPS)`` watched: its minimize calls and, after its four Nelder-Mead
    stages, the candidates of its random stage (each scored +inf by the spy, so none is accepted and every one is
    a perturbation of the returned coefficients). About 0.6 s (Nelder-Mead's evaluations dominate)."""
    mp = pytest.MonkeyPatch()
    calls: list = []
    cands: list = []
    stage = {"random": False}
    real_lmv = scaled_mod.lattice_max_variance

    def after_nm(k, r):
        stage["random"] = k == 4

    def lmv(horizon, coef=None, rho=1.0):
        if stage["random"]:
            cands.append(np.array(coef, dtype=np.float64))
            return float("inf")
        return real_lmv(horizon, coef, rho)

    _spy_minimize(mp, calls, after_nm)
    mp.setattr(scaled_mod, "lattice_max_variance", lmv)
    try:
        coef, best = polish_scaled(3, SCALED_TABLE[3], evaluations=STEPS)
    finally:
        mp.undo()
    return calls, cands, np.array(coef)


# kills transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_42 (the continuation at p = 101
# instead of 100: another L-BFGS path, other coefficients, the same lattice figure on the rows measured)
def test_polish_scaled_runs_the_continuation_it_states(watched_polish):
    """``polish_scaled``'s L-BFGS stage is ``optimize_scaled``'s continuation (p = 20, 100, 1000, 10000 in turn,
    its docstring) carried on to p = 30000 (docstring and docs/counters.md: "p = 20 to 30,000"), the first stage
    from the given start."""
    calls, _, _ = watched_polish
    lbfgs = [c for c in calls if c["method"] == "L-BFGS-B"]
    assert [c["args"] for c in lbfgs] == [(20,), (100,), (1000,), (10000,), (30000,)]
    np.testing.assert_array_equal(lbfgs[0]["x0"], np.asarray(SCALED_TABLE[3], dtype=np.float64))


# kills transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_117 (the Nelder-Mead stages with
# scipy's default options: its own initial simplex of 5% steps, xatol 1e-4, maxfev 200 x 16)
def test_polish_scaled_starts_each_nelder_mead_stage_from_its_stated_simplex(watched_polish):
    """Four Nelder-Mead stages on the exact figure, each from an initial simplex around the current point with
    random steps of scale 3e-3, 1e-3, 3e-4, 1e-4 in turn (the docstring: "initial simplices of 3e-3 .. 1e-4"):
    17 vertices of 16 coefficients, the first the stage's start, the others' offsets of that root mean square
    (256 standard normals: within 25% of the scale, a deviation of about 6 standard errors)."""
    calls, _, _ = watched_polish
    nm = [c for c in calls if str(c["method"]).lower() == "nelder-mead"]
    assert len(nm) == 4
    for c, scale in zip(nm, (3e-3, 1e-3, 3e-4, 1e-4), strict=True):
        simplex = np.asarray((c["options"] or {}).get("initial_simplex"))
        assert simplex.shape == (BASIS + 1, BASIS)
        np.testing.assert_array_equal(simplex[0], c["x0"])
        rms = float(np.sqrt(np.mean((simplex[1:] - simplex[0]) ** 2)))
        assert 0.75 * scale < rms < 1.25 * scale, (scale, rms)


# kills transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_148 (every selected coefficient moved
# by one common normal draw instead of one each: the random steps search along the diagonals only)
def test_polish_scaled_perturbs_each_selected_coefficient_independently(watched_polish):
    """The random stage's steps are sparse perturbations with one independent normal per coefficient: each
    candidate moves a random subset of the 16 coefficients (each with probability 0.3), by a common scale
    10^U(-5, -2.5) times its own standard normal, so two moved coefficients never move by the same amount (equal
    only with probability 0 for independent draws; a common draw moves all by one amount, to rounding of ~1e-18)."""
    _, cands, coef = watched_polish
    assert len(cands) == STEPS
    multi = 0
    for cand in cands:
        delta = cand - coef
        moved = delta[delta != 0]
        assert np.all(np.abs(moved) < 10**-2.5 * 10)  # a scale of at most 10^-2.5 (10 standard deviations)
        if len(moved) >= 2:
            multi += 1
            spread = np.ptp(moved) / np.max(np.abs(moved))
            assert spread > 1e-6, (moved, spread)
    assert multi >= STEPS // 2  # P(fewer than 2 of 16 moved) = 0.026 a step: deterministic for the seed


# kills transforms.core.counters.factorization.scaled.x_optimize_scaled__mutmut_26 (the continuation from p = 21
# instead of 20: another path, max variances ~1e-11 relative apart)
def test_optimize_scaled_runs_the_continuation_it_states(monkeypatch):
    """``optimize_scaled`` is L-BFGS on ``scaled_objective`` with p = 20, 100, 1000, 10000 in turn (its docstring,
    docs/counters.md "p = 20 -> 10^4"), the first stage from log d = 0 (no start given). T = 2^4 (milliseconds)."""
    calls: list = []
    _spy_minimize(monkeypatch, calls)
    coef, v = optimize_scaled(4)
    assert [c["method"] for c in calls] == ["L-BFGS-B"] * 4
    assert [c["args"] for c in calls] == [(20,), (100,), (1000,), (10000,)]
    np.testing.assert_array_equal(calls[0]["x0"], np.zeros(BASIS))
    assert len(coef) == BASIS
