"""Survivors of mutation round 44 (session 44) judged by the lead after the five groups' runs (groups a-e:
``mutation_survivors_44{a..e}.py``); merged last by ``benchmarks/mutation_core_survivors.py``."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.core.foundation.accounting.calibration.x_rho_for_epsilon_delta__mutmut_14": (
        "the doubling of the bisection's upper end by 3 instead of 2: another bracket [0, hi] around the same "
        "crossing, and 100 halvings take either to adjacent floats (hi / 2^100 is far below the ulp of any rho it "
        "brackets): the same largest float with zcdp_epsilon(rho, delta) <= epsilon; measured equal on 150 random "
        "(epsilon in [1e-3, 20], delta in [1e-12, 1e-2]); as round 43's rho_for_epsilon_delta__mutmut_11"
    ),
}

KILLED_BY: dict[str, str] = {
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_73": (
        "tests/test_mutation_kills_sample44f.py::"
        "test_an_easy_pmwg_answers_bound_is_its_threshold_plus_the_two_laplace_tails_in_count_units"
    ),
    "transforms.core.foundation.accounting.calibration.x_rho_for_epsilon_delta__mutmut_28": (
        "tests/test_mutation_kills_sample44f.py::"
        "test_rho_for_epsilon_delta_is_the_largest_float_whose_zcdp_epsilon_is_within_epsilon"
    ),
}

ASSERTED_BY: dict[str, str] = {}
