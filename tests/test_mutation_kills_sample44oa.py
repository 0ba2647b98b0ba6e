"""Tests written for the open mutants of the mutation round of session 44 (group a, helper h44oa, issue 27,
2026-11-27). As in ``test_mutation_kills_sample44a.py``: each asserts a property the module states (never a pinned
golden float) and names the mutant(s) it kills (checked with ``python -m benchmarks.mutation_fast confirm --sync``:
passes unmutated, fails on the mutant). Fast: in memory, no Beam."""

from __future__ import annotations

import math

import numpy as np
import pytest

from transforms.core.foundation.accounting import calibration as cal
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile, tail_bounds


# kills transforms.core.foundation.accounting.calibration.x_zcdp_epsilon__mutmut_77 (the classic conversion left out
# of the final min: at rho > ~1e17 the minimiser of the tight conversion lies below the search's lower end alpha =
# 1 + 1e-9, and the Renyi bound there is worse than the classic one the docstring promises never to exceed)
@pytest.mark.parametrize("rho", [1e-6, 0.5, 3.0, 1e4, 1e12, 1e18, 1e20, 1e25])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.5])
def test_the_tight_conversion_is_never_worse_than_the_classic_one(rho, delta):
    classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert 0.0 <= cal.zcdp_epsilon(rho, delta) <= classic


def _bound(profile: NoiseProfile, beta: float) -> float:
    """The profile's bound by :func:`tail_bounds` (uncached: the minimiser runs at each call)."""
    items = sorted(profile.terms.items())
    return float(tail_bounds([t for t, _ in items], np.array([[c for _, c in items]]), beta)[0])


_PROFILES = [
    NoiseProfile({(LAPLACE, 3.0, 1.0): 7}),
    NoiseProfile({(LAPLACE, 9.0, 0.5): 3, (GAUSSIAN, 4.0, 1.0): 2, (LAPLACE, 2.0, 2.0): 1}),
    NoiseProfile({(LAPLACE, 8.0, 1.0): 40, (LAPLACE, 8.0, 2.0): 3}),
]


# kills transforms.core.foundation.bounds.x__newton_rows__mutmut_185 (the Newton step phi * (x G'') for
# phi / (x G''): at small weights G'' is tiny, the step falls below the 1e-11 stop at the Gaussian start, and the
# bound is the exponent there, up to ~50% above the minimum)
@pytest.mark.parametrize("profile", _PROFILES, ids=["laplace7", "mixed", "two_weights"])
@pytest.mark.parametrize("beta", [0.05, 1e-9])
def test_a_bound_scales_with_the_weights_of_its_profile(profile, beta):
    """The Chernoff minimum of ``s * S`` is ``s`` times that of ``S`` exactly (lambda -> lambda / s; the range
    ``[lam_max e^-30, lam_max (1 - 1e-9)]`` scales with it), and every bound is that minimum to float rounding
    (module docstring: a few ulps; measured <= 5.2e-16 here): 1e-12 relative leaves room for any processor's
    exp / log1p, a lattice's weights (2^-20) and large ones alike."""
    base = _bound(profile, beta)
    for s in (2.0**-20, 1e-6, 1e-3, 1e3, 1e6):
        assert _bound(profile.scaled(s), beta) == pytest.approx(s * base, rel=1e-12, abs=0), s
