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

ASSERTED_BY: dict[str, str] = {
    # group e's recheck, run by the lead after the round (100 crash kills of its privacy and bound functions): the
    # two of the 85 crash-only ones that return a wrong value where they do not raise
    "transforms.core.families.changelog.folds.x_swcr_fold__mutmut_25": "tests/test_mutation_kills_sample44f.py::"
    "test_a_time_bounded_swcr_fold_is_ceil_of_b_plus_w_over_p_and_the_smaller_of_both",
    "transforms.core.families.changelog.folds.x_prefix_nodes__mutmut_9": "tests/test_mutation_kills_sample44f.py::"
    "test_prefix_nodes_partition_the_whole_prefix_from_zero",
}

# judged on the code as fixed after the round (the mutant showed a real accuracy bug: see the reason)
EQUIVALENT["transforms.core.foundation.bounds.x__newton_rows__mutmut_88"] = (
    "REAL BUG, fixed after the round: the start clipped at lo / 2 (outside the bracket) gave tighter bounds than "
    "the original where a Gaussian term is 1e13 times a Laplace scale and more, because the bracket's lower end "
    "lam_max e^-30 sat above the minimiser (Laplace 1 + Gaussian variance 1e30, beta 0.05: 4.68e16, 17x the "
    "minimum, against the docstring's 'within a few ulps'). The bracket now reaches min(lam_max e^-30, l_g / 4) "
    "(l_g the Gaussian approximation's minimiser, the start), so l_g >= 4 lo: clip(l_g, lo / 2, hi / 2) = "
    "clip(l_g, 2 lo, hi / 2), the same start, the same iteration: equivalent on the fixed code. Test: "
    "tests/test_mutation_kills_sample44f.py::test_a_laplace_term_beside_a_huge_gaussian_leaves_the_gaussian_bound "
    "(fails on the code of the round)"
)
