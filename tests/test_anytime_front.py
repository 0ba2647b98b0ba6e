"""benchmarks/anytime_front.py: the model behind issue 31's front (the worst ratio to the square root against the
dense stream's no-end ratio). Its dense ratio is the library's: through ``anytime_sqrt`` profile 3's own stated
variance it is the 1.1140 of ``docs/counters.md``, through profile 4's (new counters) the benchmark's stated ratio,
below 1.1 (a model off by its rho, or one comparing variances instead of mean errors, is caught), and the knot
model's no-end variance is the library counter's, tick by tick, for both profiles, up to the constant M of a
shorter table (phase 1 and after the hand-over). About 2 s."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.anytime_front import LAST, Design, dense_ratio, lp_step, model_variance, with_end_variance
from benchmarks.anytime_merge import knot_ratio
from transforms.core.counters.factorization.anytime import (
    MERGE_T1,
    anytime_sensitivity_sq,
    anytime_variance_path,
    knot_profile,
)

DENSE_PINS = (1.0998, 1.1)  # profile 4's stated dense ratio (docs/counters.md, "Profile 4")


def test_the_dense_ratio_is_the_stated_one_1_114_for_profile_3_and_below_1_1_for_profile_4():
    """Through the library's own stated variances: profile 3 at 1.1140 (docs/counters.md), profile 4 (new counters:
    the stream without an end in ``bench_anytime_dense``) equal to the benchmark's stated ratio and at most 1.1
    (issue 31's "within 1.1x"; its design point 1.09989)."""
    from benchmarks import bench_anytime_dense as bd

    three = dense_ratio(anytime_variance_path(LAST, rho=1.0, profile=3))
    assert 1.1139 < three < 1.1141
    library = anytime_variance_path(LAST, rho=1.0, profile=4)
    ratio = dense_ratio(library)
    stated = bd.expected_error(bd.stated_variances(bd._counters(bd._core(False))[0], LAST)) / bd.expected_error(
        bd.stated_variances(bd._counters(bd._core(True))[0], LAST)
    )
    assert ratio == pytest.approx(stated, rel=1e-9) and DENSE_PINS[0] < ratio < DENSE_PINS[1]
    # variances, not mean errors, would say about 1.2; the with-end run at another rho moves it
    assert float(library.mean() / with_end_variance().mean()) > 1.15
    assert dense_ratio(library * 1.01) == pytest.approx(ratio * np.sqrt(1.01), rel=1e-12)


@pytest.mark.parametrize("profile", [3, 4])
def test_the_knot_model_is_the_counter_tick_by_tick(profile):
    knots, values, b, q = knot_profile(profile)
    design = Design(knots, MERGE_T1, 1.0 / (b * (q - 1.0)), n=1 << 16)
    ratio, m = design.full(np.array(values))
    assert m == pytest.approx(anytime_sensitivity_sq(profile) / 2.0**40, rel=1e-9)  # the bound the counter states
    model = model_variance(ratio, m, MERGE_T1)
    library = anytime_variance_path(LAST, rho=1.0, profile=profile)
    np.testing.assert_allclose(model[MERGE_T1:], library[MERGE_T1:], rtol=2e-5)  # V0: float vs lattice phase 1
    np.testing.assert_allclose(model[:MERGE_T1], library[:MERGE_T1], rtol=2e-3)  # float vs lattice phase 1
    assert model[MERGE_T1] < 0.5 * model[MERGE_T1 - 1]  # the hand-over (8.37 against 24.26 at rho = 1)
    # the model's own M (float sum to 2^16 and its tail) is below the bound: judged by it, a design looks better
    assert knot_ratio(np.array(values[1:]), np.array(knots), MERGE_T1, 1 << 16, tailc=design.tailc)[1] < m


def test_a_step_lowers_the_worst_within_the_box_and_pays_for_the_constraint():
    ratio, dense = np.array([1.3, 1.2]), 1.2
    jr = np.array([[-1.0, 0.0], [0.0, -1.0]])  # each knot lowers one grid point
    dv, predicted = lp_step(jr, np.array([1.0, 1.0]), ratio, dense, target=1.25, delta=0.05)
    assert np.all(np.abs(dv) <= 0.05 + 1e-12) and predicted == pytest.approx(1.25)  # 1.3 - 0.05, free constraint
    # the dense ratio must fall by 0.05: the knots' sum at most -0.05 in a box of 0.05, so the first point
    # cannot move down and the worst stays 1.3 (a step ignoring the constraint would predict 1.25)
    dv, predicted = lp_step(jr, np.array([1.0, 1.0]), ratio, dense, target=1.15, delta=0.05)
    assert dv.sum() <= -0.05 + 1e-9 and predicted == pytest.approx(1.3)
