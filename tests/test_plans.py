"""``transforms/core/plans.py``: the plan lines the run summary prints and the manifest records, exactly (issue
27: the module's text had no exact test in the fast tier; a plan line is what an operator reads to know which
mechanism spends what share of the budget)."""

from __future__ import annotations

from transforms.core.plans import Calibration, PlanEntry


def test_calibration_text_names_the_multiplier_the_method_and_whether_the_bound_is_exact():
    assert Calibration("q", "contribution", 1.23456, True).text() == (
        "q: noise x1.235 the update level's (sensitivity by contribution, exact)"
    )
    assert Calibration("h", "group", 3.0, False, "g = 3").text() == (
        "h: noise x3 the update level's (group privacy, an upper bound)"
    )


def test_plan_entry_text_configured_shared_counter_and_calibrations():
    assert PlanEntry("pmw", ("a", "b")).text() == "a, b -> pmw (the whole budget; configured)"
    assert PlanEntry("net_change", ("n",), 0.5, "why", "binary", 64).text() == (
        "n -> net_change [counter binary, horizon 64 periods] (50% of the budget): why"
    )
    assert PlanEntry("net_change", ("n",), 0.25, "why", "binary").text() == (
        "n -> net_change [counter binary, unbounded] (25% of the budget): why"
    )
    cal = (Calibration("n", "group", 2.0, True), Calibration("m", "contribution", 0.5, False))
    assert PlanEntry("auto", ("n", "m"), calibrations=cal).text() == (
        "n, m -> auto (the whole budget; configured); n: noise x2 the update level's (group privacy, exact); "
        "m: noise x0.5 the update level's (sensitivity by contribution, an upper bound)"
    )
    assert PlanEntry("x", ("q",)).share == 1.0 and PlanEntry("x", ("q",)).calibrations == ()
