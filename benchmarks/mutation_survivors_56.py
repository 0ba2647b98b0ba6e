"""Survivors of mutation round 56 (stop 56): the functions of ``transforms/core/`` whose body changed since 9ad19d7,
mutants on the changed lines (``benchmarks/mutation_runs/s56/``: the sample, the verdicts, the confirmations and
``REPORT.md``); merged last by ``benchmarks/mutation_core_survivors.py`` (the latest round wins: these mutant names
are of the code as it is now).

Since stop 62 new ``anytime_sqrt`` counters are profile 4 (``PROFILE = 4``) and ``knot_profile`` refuses a profile
without knots: the entries below that argue from ``PROFILE`` being 3, or from profile ``None`` taking profile 3's
branch (``toeplitz._anytime_model`` _4 and _6, ``anytime_variance_path`` _39, _54 and _56, and the like), were
judged on the code of stop 56 and are no longer equivalent by that argument; not re-run since (the next mutation
round of ``transforms/core/`` re-judges them)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_38": (
        "the guard c_1 < c_0 read as P_2 < P_0: P_2 < P_1 < P_0 for every t1 >= 3 (P_1 is about P_0 / 2), so "
        "both guards pass or fail together; at t1 = 2 the mutant raises IndexError (loud); the only caller "
        "builds MERGE_T1 = 896"
    ),
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_39": (
        "the guard P_1 < P_0 read as P_1 <= P_0: P_1 = floor(c_1 scale) with c_1 = c_0 / 2 is never equal to "
        "P_0 for any t1 >= 2"
    ),
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_41": (
        "column_sq < 2^40 for <= 2^40: the scale carries a 1 + 1e-12 margin and the coefficients are floored,"
        " so sum P_k^2 <= 2^40 / (1 + 1e-12) < 2^40 strictly for every t1: never equal"
    ),
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_28": (
        "the state name handed to migrated() (XXopen_keys.counterXX): migrated builds the envelope with that "
        "name and open_envelope compares it with the same string; the name appears only in the text of a "
        "refusal; same behaviour for every state"
    ),
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_29": (
        "the state name handed to migrated() in upper case: as _28, only the text of a refusal"
    ),
    "transforms.core.contribution.harness.x__scale__mutmut_12": (
        "node_budget never read (always the release's cost): every counter with a node_budget releases every "
        "node at a cost whose noise profile is node_budget's (measured: kary_tree, binary_tree, honaker x "
        "gaussian ApproxDP / ZCDP and laplace PureDP, 0 of 114 releases differ); the others have none and "
        "read the cost in both"
    ),
    "transforms.core.contribution.harness.x__scale__mutmut_13": ("getattr(None, 'node_budget', None): None, as _12"),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_4": (
        "anytime_coefficients(ANYTIME_PREFIX, None): _damping_block(i, None) takes the profile-3 branch "
        "(neither 1 nor 2), which is PROFILE (3): the same coefficients"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_6": (
        "anytime_coefficients(ANYTIME_PREFIX) without the profile: its default is PROFILE, the same call"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_RowWindowǁrestart__mutmut_3": (
        "limit None after restart(): a window's limit is read only by a push that finds its array full; after"
        " the hand-over the array has phase 1's capacity (>= 896 rows, stored whole in state) and _grow sets "
        "keep and limit at position 256, before it fills: never read (were it read, a TypeError: loud)"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_hand_over__mutmut_34": (
        "restart(window, 3 window): the limit is overwritten by _grow at position 256 before a push can read "
        "it (as _RowWindow.restart__mutmut_3): the same rows, the same releases"
    ),
    "transforms.core.foundation.samplers.x__geometric_inversion_small__mutmut_57": (
        "np.array(values) without dtype: a list of Python ints below 2^63 is int64 under numpy 2 (2.2.6 here;"
        " the default integer is int64 on every 64-bit platform): the same array"
    ),
    "transforms.core.foundation.samplers.x__geometric_inversion_small__mutmut_53": (
        "the placeholder of an undecided draw 1 instead of 0: every placeholder is in redo and overwritten by"
        " _geometric_exact's value before the return"
    ),
    "transforms.core.continual.auto.x__restored_options__mutmut_35": (
        "the text of the warning logged for a restored part holding an earlier version's counters: the same "
        "options returned, the same counters run; message text only"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_37": (
        "merge_tables(MERGE_T1, None): PhaseTables does not depend on the profile and the path reads only "
        "p1.bsq (not the table's n2): the same values"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_39": (
        "merge_tables(MERGE_T1) with the default profile (PROFILE = 3, the only profile reaching this line): "
        "the same call"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_54": (
        "anytime_tables(cap, None): the coefficients of profile None are profile 3's (_damping_block's last "
        "branch); the path reads b and bsq only (the table's n2, which differs, is not read): the same values"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_56": (
        "anytime_tables(cap) with the default profile (PROFILE = 3, the only profile reaching this line): the same call"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_48": (
        "late < 0 for late <= 0: at late = 0 the mutant concatenates phase 1's rows with an empty array (tau "
        "= arange(1, 1)): the same values"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_hand_over__mutmut_25": (
        "the float encoder kept at s1 dmax = 2^53 exactly: every partial sum is then an integer of magnitude "
        "<= 2^53, exact in float64; both encoders give the same exact integers (and both switch at the first "
        "larger batch)"
    ),
    "transforms.core.counters.factorization.anytime.x_knot_integral__mutmut_19": (
        "the last point at max(top, KNOTS3[1]) for max(top, KNOTS3[-1]): top = log2(1 + 2^24) > 24 = "
        "KNOTS3[-1] > every knot, so both are top"
    ),
    "transforms.core.counters.factorization.anytime.x_knot_integral__mutmut_20": ("max(top, KNOTS3[-2]): top, as _19"),
    "transforms.core.counters.factorization.anytime.x_knot_integral__mutmut_39": (
        "a piece skipped only when b < a (not b <= a): a zero-width piece adds exactly 0.0 (its slope is "
        "finite: the knots increase strictly and the last piece is top - 24 > 0 wide)"
    ),
    "transforms.core.foundation.samplers.x__as_ratio_up__mutmut_3": (
        "fx = Fraction(x) also for a Fraction x: Fraction(Fraction) is the same value, and a small Fraction "
        "still takes the fast path (which tests x, not fx)"
    ),
    "transforms.core.foundation.samplers.x__as_ratio_up__mutmut_4": (
        "fx = x without the conversion: for an int or a float x every later step gives the same p (log2 of "
        "float(x); x * 2^k exact in float64 for k <= 51, then ceil), for a Fraction the same as before"
    ),
    "transforms.core.counters.factorization.lattice.xǁLatticeTablesǁderive__mutmut_6": (
        "crev_i.astype(None): ndarray.astype(None) is float64, the same array"
    ),
    "transforms.core.counters.factorization.lattice.xǁLatticeTablesǁderive__mutmut_14": (
        "cint.astype(None): float64, the same array"
    ),
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_15": (
        "the state name None handed to migrated(): compared with itself, only in the text of a refusal (as _28)"
    ),
    "transforms.core.foundation.entries.xǁTickBatchǁhistograms__mutmut_14": (
        "np.array(counts) without dtype: lists of Python ints are int64 under numpy 2 (2.2.6 here, on every "
        "64-bit platform): the same arrays"
    ),
    "transforms.core.foundation.entries.xǁTickBatchǁhistograms__mutmut_16": ("np.array(counts) without dtype: as _14"),
    "transforms.core.contribution.harness.x__scale__mutmut_18": (
        "getattr(counter, 'XXnode_budgetXX', None): None, always the release's cost (as _12)"
    ),
    "transforms.core.contribution.harness.x__scale__mutmut_19": ("getattr(counter, 'NODE_BUDGET', None): None, as _12"),
    "transforms.core.contribution.harness.x__scale__mutmut_23": (
        "(budget is None) or True: always the release's cost, as _12"
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁ_apply__mutmut_2": (
        "every = None: every part takes the projection path, which for a part of every query set in order "
        "copies each item's values into an equal tuple: the same sub-batches (the fast path only avoids the "
        "copy)"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_RowWindowǁrestart__mutmut_10": (
        "n = 1 after restart(): one stale row at index 0 below the pushed ones; every read is last(L) with L "
        "<= n - 1 (L = min(position, window), n = position + 1), and a compaction keeps the last keep - 1 "
        "rows: the stale row is never read (the stored state holds it: other bytes, the same restored "
        "releases)"
    ),
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_35": (
        "the guard 0 <= P_last for 0 < P_last: P_k = floor(c_k 2^20 / sqrt(s(t1))) >= 1 while c_k >= "
        "sqrt(s(t1)) 2^-20, i.e. for every t1 below about 10^11 (PhaseTables holds t1 numbers; the only "
        "caller builds 896): never 0"
    ),
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_37": (
        "the guard on P at t1 - 2 instead of t1 - 1: both positive for every buildable t1 (as _35)"
    ),
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_45": (
        "the guard column_sq <= 2^60 for <= 2^40: column_sq <= 2^40 / (1 + 1e-12) by construction (as _41), "
        "so neither guard ever fires"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_hand_over__mutmut_33": (
        "restart(window, 2 / window): limit max(0, keep) = keep until _grow overwrites it at position 256, "
        "before a push can read it (as _34)"
    ),
}

# not equivalent, not killed: measured, with the reason no exact property separates it
OPEN: dict[str, str] = {
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_62": (
        "the late steps read from a table twice as large (2 << bit_length): the same coefficients "
        "(prefix-stable by construction), decoder weights from an FFT of twice the length: bsq differs by at "
        "most 4.4e-16 relative (measured, tables of 512 and 1024); the analytic path is itself read from one "
        "table for every step, so no exact property separates them (as round 43's open "
        "coefficients._conv__mutmut_12)"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_25": (
        "profiles 1 and 2 read from a table twice as large (2 << bit_length): bsq differs by at most 1.1e-15 "
        "relative (measured: tables 256 / 512 / 1024 of profiles 1 and 2), as _62"
    ),
}

# the test that kills each (``confirm``: passes unmutated, fails on the mutant; fast.confirmed.json)
KILLED_BY: dict[str, str] = {
    "transforms.core.continual.auto.x_auto_counter__mutmut_10": (
        "tests/test_mutation_kills_sample56.py::test_auto_picks_scaled_sqrt_for_every_bounded_update_level_gaussian_run"
    ),
    "transforms.core.continual.auto.x_auto_counter__mutmut_11": (
        "tests/test_mutation_kills_sample56.py::test_auto_picks_scaled_sqrt_for_every_bounded_update_level_gaussian_run"
    ),
    "transforms.core.contribution.harness.x__run__mutmut_17": (
        "tests/test_contribution_harness.py::test_pure_dp_without_an_end_infinite_honaker_is_measured_within_the_budget"
    ),
    "transforms.core.contribution.harness.x__run__mutmut_19": (
        "tests/test_contribution_harness.py::test_pure_dp_without_an_end_infinite_honaker_is_measured_within_the_budget"
    ),
    "transforms.core.contribution.harness.x__scale__mutmut_17": (
        "tests/test_contribution_harness.py::test_pure_dp_without_an_end_infinite_honaker_is_measured_within_the_budget"
    ),
    "transforms.core.contribution.harness.x__scale__mutmut_22": (
        "tests/test_contribution_harness.py::test_pure_dp_without_an_end_infinite_honaker_is_measured_within_the_budget"
    ),
    "transforms.core.contribution.harness.x__scale__mutmut_24": (
        "tests/test_contribution_harness.py::test_pure_dp_without_an_end_infinite_honaker_is_measured_within_the_budget"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_272": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_laplace_account_names_the_trees_levels_and_nothing_for_other_counters"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_277": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_laplace_account_names_the_trees_levels_and_nothing_for_other_counters"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_278": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_laplace_account_names_the_trees_levels_and_nothing_for_other_counters"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_281": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_laplace_account_names_the_trees_levels_and_nothing_for_other_counters"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_285": (
        "tests/test_mutation_kills_sample56.py::test_blts_exact_bound_comes_with_a_witness_that_reaches_it"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_286": (
        "tests/test_mutation_kills_sample56.py::test_blts_exact_bound_comes_with_a_witness_that_reaches_it"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_10": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_14": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_17": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_18": (
        "tests/test_contribution_anytime.py::test_unbounded_bounds_are_sqrt_of_the_changes_and_not_attained"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_2": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_24": (
        "tests/test_contribution_anytime.py::test_model_is_the_counters_calibration"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_25": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_26": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_27": (
        "tests/test_contribution_anytime.py::test_model_is_the_counters_calibration"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_28": (
        "tests/test_contribution_anytime.py::test_model_is_the_counters_calibration"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_5": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_8": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x__anytime_model__mutmut_9": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_anytime_model_is_the_counters_column_with_its_documented_attributes"
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_18": (
        "tests/test_mutation_kills_sample56b.py::"
        "test_an_unbounded_chain_bounds_positions_are_its_changes_a_window_apart"
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_25": (
        "tests/test_mutation_kills_sample56b.py::"
        "test_an_unbounded_chain_bounds_positions_are_its_changes_a_window_apart"
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_27": (
        "tests/test_mutation_kills_sample56b.py::"
        "test_an_unbounded_chain_bounds_positions_are_its_changes_a_window_apart"
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_28": (
        "tests/test_mutation_kills_sample56b.py::"
        "test_an_unbounded_chain_bounds_positions_are_its_changes_a_window_apart"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_11": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_14": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_17": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_18": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_19": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_21": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_24": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_29": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_30": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_31": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_5": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__check_knots__mutmut_6": (
        "tests/test_mutation_kills_sample56.py::test_the_knot_check_refuses_knots_that_break_the_tail_bounds_premises"
    ),
    "transforms.core.counters.factorization.anytime.x__damping_block__mutmut_73": (
        "tests/test_mutation_kills_sample56.py::test_profile_3_damping_past_n2_is_what_the_tail_bound_integrates"
    ),
    "transforms.core.counters.factorization.anytime.x__damping_block__mutmut_75": (
        "tests/test_mutation_kills_sample56.py::test_profile_3_damping_past_n2_is_what_the_tail_bound_integrates"
    ),
    "transforms.core.counters.factorization.anytime.x__damping_block__mutmut_86": (
        "tests/test_mutation_kills_sample56.py::test_profile_3_damping_past_n2_is_what_the_tail_bound_integrates"
    ),
    "transforms.core.counters.factorization.anytime.x_knot_integral__mutmut_7": (
        "tests/test_mutation_kills_sample56.py::test_knot_integral_is_the_integral_it_names"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_tail_bound__mutmut_46": (
        "tests/test_mutation_kills_sample56b.py::test_profile_3_tail_bound_past_n2_is_the_integral_of_its_damping"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_tail_bound__mutmut_60": (
        "tests/test_mutation_kills_sample56b.py::test_profile_3_tail_bound_past_n2_is_the_integral_of_its_damping"
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_variance_path__mutmut_27": (
        "tests/test_mutation_kills_sample56.py::test_the_variance_path_has_one_variance_a_step_and_is_the_tables_rows"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ__init____mutmut_8": (
        "tests/test_mutation_kills_sample56b.py::test_every_profile_of_anytime_sqrt_can_be_built"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_advance_weights__mutmut_11": (
        "tests/test_counters_anytime_merged.py::test_variance_is_the_dense_decoder_row_norm_across_the_hand_over"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_advance_weights__mutmut_13": (
        "tests/test_counters_anytime_merged.py::test_variance_is_the_dense_decoder_row_norm_across_the_hand_over"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_advance_weights__mutmut_4": (
        "tests/test_counters_anytime_merged.py::test_variance_is_the_dense_decoder_row_norm_across_the_hand_over"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_hand_over__mutmut_8": (
        "tests/test_mutation_kills_sample56b.py::test_a_merged_item_of_exactly_2_62_is_refused"
    ),
    "transforms.core.counters.factorization.anytime.xǁPhaseTablesǁ__init____mutmut_28": (
        "tests/test_mutation_kills_sample56.py::"
        "test_phase_tables_state_and_check_the_first_phases_exact_squared_column_norm"
    ),
    "transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_165": (
        "tests/test_mutation_kills_sample56b.py::test_polish_scaled_returns_its_start_when_what_it_found_is_only_as_low"
    ),
    "transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_43": (
        "tests/test_mutation_kills_sample56.py::test_polish_scaled_returns_its_start_with_the_starts_own_figure"
    ),
    "transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_45": (
        "tests/test_mutation_kills_sample56.py::test_polish_scaled_returns_its_start_with_the_starts_own_figure"
    ),
    "transforms.core.foundation.samplers.x__as_ratio_up__mutmut_6": (
        "tests/test_mutation_kills_sample56b.py::test_as_ratio_up_refuses_every_parameter_that_is_not_positive"
    ),
    "transforms.core.foundation.samplers.x__geometric_exact__mutmut_65": (
        "tests/test_mutation_kills_sample56b.py::test_an_undecided_geometric_reads_exactly_one_more_word_a_refinement"
    ),
    "transforms.core.foundation.samplers.x__geometric_inversion_small__mutmut_29": (
        "tests/test_mutation_kills_sample56.py::test_the_float_guess_decides_every_small_draw_outside_the_band"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_17": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_18": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_20": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_22": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_23": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_24": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_27": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_28": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_29": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_30": (
        "tests/test_mutation_kills_sample56.py::test_search_says_found_only_for_x_and_resumes_to_x_after_a_refinement"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_31": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_34": (
        "tests/test_mutation_kills_sample56.py::test_past_the_walk_the_search_gallops_with_doubling_steps_then_bisects"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_35": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_36": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_37": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_38": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_39": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_40": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_42": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_43": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_47": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_48": (
        "tests/test_mutation_kills_sample56.py::test_past_the_walk_the_search_gallops_with_doubling_steps_then_bisects"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_49": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_5": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_50": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_51": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_52": (
        "tests/test_mutation_kills_sample56.py::test_past_the_walk_the_search_gallops_with_doubling_steps_then_bisects"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_53": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_57": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_58": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_59": (
        "tests/test_mutation_kills_sample56.py::test_search_says_found_only_for_x_and_resumes_to_x_after_a_refinement"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_60": (
        "tests/test_mutation_kills_sample56.py::test_search_says_found_only_for_x_and_resumes_to_x_after_a_refinement"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_61": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_64": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_67": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_71": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_72": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_74": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_75": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_77": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_79": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_81": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_83": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_84": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_85": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.samplers.x__search__mutmut_86": (
        "tests/test_mutation_kills_sample56.py::test_search_finds_x_from_any_start_when_every_comparison_is_decided"
    ),
    "transforms.core.foundation.state.x__escape_v1__mutmut_34": (
        "tests/test_mutation_kills_sample56b.py::"
        "test_the_migration_walks_an_objects_walked_fields_and_escapes_a_dollar_d_inside"
    ),
    "transforms.core.foundation.state.x__to_plain__mutmut_50": (
        "tests/test_mutation_kills_sample56.py::test_an_object_under_a_tag_like_key_stays_shared_through_a_round_trip"
    ),
    "transforms.core.foundation.state_chunks.xǁChunkStoreǁ_chunks__mutmut_47": (
        "tests/test_mutation_kills_sample56b.py::test_a_write_hashes_only_the_chunks_that_changed"
    ),
    "transforms.core.foundation.state_chunks.xǁChunkStoreǁ_write__mutmut_30": (
        "tests/test_mutation_kills_sample56.py::"
        "test_the_bag_is_written_afresh_exactly_when_it_would_exceed_twice_the_live_state"
    ),
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_21": (
        "tests/test_mutation_kills_sample56.py::"
        "test_a_selected_keys_counter_is_migrated_from_the_schema_it_was_written_in"
    ),
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_22": (
        "tests/test_mutation_kills_sample56.py::"
        "test_a_selected_keys_counter_is_migrated_from_the_schema_it_was_written_in"
    ),
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_25": (
        "tests/test_mutation_kills_sample56.py::"
        "test_a_selected_keys_counter_is_migrated_from_the_schema_it_was_written_in"
    ),
    "transforms.core.selection.release.x_key_state_to_plain__mutmut_13": (
        "tests/test_mutation_kills_sample56.py::"
        "test_a_selected_keys_counter_is_migrated_from_the_schema_it_was_written_in"
    ),
    "transforms.core.selection.release.x_key_state_to_plain__mutmut_14": (
        "tests/test_mutation_kills_sample56.py::"
        "test_a_selected_keys_counter_is_migrated_from_the_schema_it_was_written_in"
    ),
}

ASSERTED_BY: dict[str, str] = {}
