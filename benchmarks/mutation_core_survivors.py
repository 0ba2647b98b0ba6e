"""The judged survivors of ``benchmarks/mutation_core.py`` (issue 27): every sampled mutant that the first run did
not kill (``survived``, or ``no tests``: no test of the fast tier's core selection runs its function) is either
equivalent (no input changes any output, charge, bound or error path; the reason in one line) or killed since by
a test that asserts a property (file::test). Each kill was checked by activating the mutant in the run's copy
(``python -m benchmarks.mutation_core confirm NAME TEST``: the test fails on the mutant, passes without it).
``python -m benchmarks.mutation_core summary`` reads both."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    # ---- the second round of 2026-11-27 (benchmarks/mutation_fast.py, seed 20261127, helper h27mut2) ----
    "transforms.core.counters.factorization.lattice.xǁ_RowWindowǁ__init____mutmut_18": (
        "a row window's first capacity 17 rows instead of 16: it grows by doubling up to the same limit and keeps the "
        "same last rows, a different spare capacity only"
    ),
    "transforms.core.foundation.accounting.calibration.x_smallest_epsilon__mutmut_2": (
        "the doubling starts from 2 instead of 1: either bracket holds the crossing, and 200 bisection steps end at "
        "two adjacent floats around it whichever bracket they start from: the same smallest float hi with "
        "delta_at(hi) <= delta (a non-increasing profile, as the function requires)"
    ),
    "transforms.core.foundation.accounting.units.x_stated_spend__mutmut_14": (
        "rank >= 2 for > 2: a zCDP spend (rank 2) converted by ZCDP.to_approx(delta).epsilon instead of "
        "_approx_epsilon(rho, delta); both are zcdp_to_approx(rho, delta).epsilon (the latter cached): the same value"
    ),
    "transforms.core.foundation.samplers.x_discrete_gaussian__mutmut_65": (
        "np.full(None, den) (a 0-d array of den) instead of np.full(m, den): bernoulli_exp takes atleast_1d and "
        "broadcasts den to num's length, the same den for every element: the same draws"
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_22": (
        "_split(budget) without external: count_p is read only when the count is not external, where the two calls "
        "are the same (external defaults to False); the iteration split is computed again with external below"
    ),
    "transforms.core.contribution.sensitivity.x_query_columns__mutmut_13": (
        "a float64 one-hot histogram instead of int64: mech.exact of a 0/1 vector gives the same values, then rounded "
        "(np.rint) to the same int64 columns"
    ),
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_41": (
        "ok = None for ok = False: ok is only read for its truth (if ok), the same branch"
    ),
    "transforms.core.contribution.bounding.x__check__mutmut_18": (
        "the refusal's message without the state's version number in parentheses: error-message text, the same "
        "StateError on the same states"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_encode__mutmut_25": (
        "_float_mode = None for False: the flag is only read for its truth (if self._float_mode), the same paths"
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcounter_budgets__mutmut_31": (
        "a multiplier of 1 passed through calibrated_budget too: with m = 1 it returns the share itself for Laplace "
        "and for every zCDP share (TightGaussian, the (eps, delta) cap of net_change, is a ZCDP): the same budgets "
        "(checked: tests/test_mutation_kills_sample27b.py::test_a_unit_whose_multiplier_is_one_gets_the_update_units_"
        "counter_budgets passes on it)"
    ),
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_16": (
        "one run's values without dtype=object: an int64 array minus an object array is computed by numpy's object "
        "loop on Python ints, exact at any size (checked with values near +-2^62 whose difference passes 2^63: "
        "test_privacy_loss_is_exact_for_values_near_the_ends_of_int64 passes on it); values past int64 are object "
        "arrays already"
    ),
    "transforms.core.families.changelog.folds.x_entry_sensitivity_ratio__mutmut_41": (
        "the search starts at 1 instead of 0: the columns are the mechanism's integer lattice values (_aq, e.g. 0.2 is "
        "209715), so any query with a non-zero entry has a largest norm >= 1, and an all-zero matrix is refused: the "
        "same ratio (measured; test_changelog.py::test_changelog_entry_ratio_of_small_linear_queries, which claims "
        "this kill, passes on it)"
    ),
    "transforms.core.counters.factorization.kary.xǁKaryTreeCounterǁerror_bound__mutmut_10": (
        "<= NEWTON_FROM (1) for <: a horizon-1 tree takes the per-period path, noise_profile().tail_bound(beta / m), "
        "instead of a one-row block of tail_bounds: the same Newton minimiser on the same one-node profile "
        "(measured: identical floats for Laplace and Gaussian, m = 1 and 3, beta 0.3, 0.05, 0.001)"
    ),
    "transforms.core.counters.factorization.blt.x_blt_log_loss__mutmut_36": "1e+30 for 1e30: the same float literal",
    "transforms.core.counters.factorization.coefficients.x_blt_coefficients__mutmut_5": (
        "theta without dtype=float64: every caller passes floats (the BLT table, the optimiser's arrays), which "
        "np.asarray makes float64 anyway; an integer theta would give the same float64 products (int64 times float64 "
        "is float64, exact below 2^53)"
    ),
    "transforms.core.counters.factorization.coefficients.x_blt_coefficients__mutmut_15": (
        "np.zeros(n) without dtype=float64: float64 is numpy's default, the same array"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ__init____mutmut_51": (
        "scope.child(name) without Scope.SEQUENTIAL: the kind's default is 'sequential' (Scope.SEQUENTIAL), the same "
        "scope"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ__init____mutmut_60": (
        "an unbounded counter's row window limit 2 / window instead of 2 window: _RowWindow takes max(int(limit), "
        "keep) = keep, so a full window shifts its last keep - 1 rows to the front at every push instead of every "
        "keep pushes: the same last rows (last(count), count <= keep), speed only"
    ),
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_encode__mutmut_25": (
        "float_mode or (not and) the 2^53 test: the wide encoder switches to the exact int64 limbs (limb_dot) at its "
        "first step instead of at the step where s1 max|d| reaches 2^53 (then the switch repeats, astype int64 of an "
        "int64 window: a no-op); both paths give the exact integers y_t (the float path is exact below 2^53 by that "
        "test), and step's yhat = float(y + z) (limbs) equals y + float(z) (float path: two exact floats, one "
        "correctly rounded sum; |z| far below 2^53): the same releases, speed only"
    ),
    "transforms.core.counters.factorization.kary.x_kary_radices__mutmut_19": (
        "one more number of levels searched, bit_length(T) + 1: such a tree needs bit_length(T) radices >= 2, whose "
        "product 2^bit_length(T) exceeds T, so no candidate passes prod(seq) <= T: the same radices"
    ),
    "transforms.core.counters.factorization.kary.x_digit_total__mutmut_30": (
        "part (part - 1) / 2 instead of // 2: the product of two consecutive ints is even, so the float quotient is "
        "the same value, exact (far below 2^53); the only caller (kary_radices) multiplies it by a float level "
        "variance: the same totals, the same radices"
    ),
    "transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_1": (
        "the default on_exceed 'XXraiseXX' instead of 'raise': report raises on every value but 'freeze' (on_exceed "
        "!= 'freeze'), so the default still raises ConstraintExceeded: the same behaviour"
    ),
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ_start_segment__mutmut_35": (
        "the threshold floor(theta) - Z0 instead of + Z0: Z0 is a discrete Laplace draw (symmetric) at its own "
        "coordinate (..., 'threshold'), used nowhere else, so -Z0 has the same law, independent of the rest: the same "
        "output distribution and the same charges (only which key maps to which threshold changes; the golden pins, "
        "outside this selection, would see it)"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_160": (
        "decide(n + 1) for decide(n - 1): when decide(n) = -1 (U > (1-p)^n) decide(n + 1) is -1 too, so the walk "
        "returns only at n = 1 and otherwise oscillates between K - 1 and K for its 10,000 steps; the bisection after "
        "it returns min{n: decide(n) = -1} = K, a function of U alone (refining U only reads its further bits of the "
        "call's own stream): the same value, slower"
    ),
    "transforms.core.foundation.bounds.x__packed__mutmut_26": (
        "a count of exactly 2^53 admitted to the packed cache key: 2^53 is itself a float64, so the cached bound "
        "computes the same value as the direct path; 2^53 + 1, the first count a float cannot hold, is still refused"
    ),
    "transforms.core.foundation.bounds.x__newton_rows__mutmut_16": (
        "the Laplace parameters without dtype=float: NoiseProfile stores every term as (kind, float(param), "
        "float(weight)), so np.array makes float64 anyway: the same array"
    ),
    "transforms.core.limits.x_periods_limit__mutmut_9": (
        "<= for <: on a tie (sqrt_factorization and scaled_sqrt share SQRT_MAX_HORIZON) the later counter's reason "
        "replaces the earlier's; the limit is the same number and both reasons are true (no order is stated): the "
        "same limit, another true why"
    ),
    # ---- the run of 2026-11-27 (benchmarks/mutation_fast.py, seed 20261127) ----
    "transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_53": (
        "astype(None) instead of astype(float): numpy reads dtype None as float64, the same array"
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁ_noise__mutmut_7": (
        "the memo is looked up under another name, so it is never found and the parts' sources are derived "
        "again on every call: for_release is a function of the key and the release id (a source keeps no "
        "state), the same sources; speed only"
    ),
    "transforms.core.contribution.bounding.xǁPersonBounderǁbound_tick__mutmut_23": (
        "keeps a person's state when admitted or counts (state[3]) is non-empty, instead of admitted or refused: "
        "counts grow only with an admission (admitted non-empty iff counts non-empty), and a refusal needs a "
        "window at max_entries >= 1 (PersonLimit refuses 0), so refused non-empty implies counts non-empty: the "
        "same persons keep their state"
    ),
    "transforms.core.contribution.toeplitz.x__check_kappa__mutmut_8": (
        "the lemmas' precondition accepts a zero coefficient (kappa < 0 for kappa <= 0): its only caller, "
        "toeplitz_model, passes the snapped square-root and BLT coefficients, which are decreasing and cut after "
        "their last non-zero (snap_coefficients; the square root refuses a vanishing one before): no zero reaches "
        "it (a test needs the private function: tests/test_architecture.py refuses that import)"
    ),
    "transforms.core.contribution.bounding.x__id_key__mutmut_4": (
        "non-string entry ids sort under 2 instead of 1: the key only orders strings (0) before the rest, the same "
        "order"
    ),
    "transforms.core.contribution.harness.x_neighbour_loss__mutmut_36": (
        "the pre-noise values of run b as numpy's own dtype (int64) instead of object: noisy (object) minus int64 "
        "gives the same integers (lattice values are far inside int64); the check compares them by value"
    ),
    "transforms.core.contribution.trees.x_change_mass__mutmut_5": (
        "change_costs(columns) without norm='l1': 'l1' is its default, the same call"
    ),
    "transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_92": (
        "method 'POWELL' for 'Powell': scipy.optimize.minimize lower-cases the method name, the same optimiser"
    ),
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_node_noise__mutmut_61": (
        "the node's noise z (already an int64 array from the sampler) without the float64 conversion: int64 plus "
        "the int64 range sum, times the float unit, gives the same float64 values (far below 2^53)"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_RowWindowǁpush__mutmut_13": (
        "the row window grows by 3x instead of 2x up to the same limit: the same last rows (n counts them), a "
        "different spare capacity only"
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_plan__mutmut_161": (
        "the direct sliding window's branching c = 3 instead of 2 with h = 1: one layer of span c^0 = 1 either "
        "way; c is read only by the layered paths (close_unit's parents, cover), which the direct window bypasses, "
        "and is not in the state (_STATE_EXCLUDE)"
    ),
    "transforms.core.foundation.accounting.budgets.xǁBudgetǁpure_part__mutmut_2": (
        "Budget.pure_part passes w_delta None instead of 0.0: ApproxDP overrides pure_part (PureDP of its share), "
        "and the PureDP and ZCDP part() it reaches ignore w_delta"
    ),
    "transforms.core.foundation.accounting.calibration.x_smallest_epsilon__mutmut_17": (
        "bisection moves lo also where delta_at(mid) == delta exactly: the delta curves are strictly decreasing, so "
        "at one point at most; after 200 halvings both end on the same or the adjacent float, and hi keeps "
        "delta_at(hi) <= delta either way (the safe side)"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁfrom_file__mutmut_6": (
        "open(..., encoding='ASCII') for 'ascii': Python's codec names are case-insensitive, the same codec"
    ),
    "transforms.core.foundation.state.x__class_info__mutmut_24": (
        "'__dict__' no longer skipped among __slots__ names: no class of the package lists '__dict__' in its "
        "__slots__ (grep), the same slots"
    ),
    "transforms.core.limits.x_counter_limit__mutmut_9": (
        "the 'why' text of a limit, read only into a ConfigError message (pipelines/config/mechanism.py): message "
        "text, as the raise lines the benchmark excludes; no release, charge or bound"
    ),
    "transforms.core.limits.x_counter_limit__mutmut_14": (
        "the 'why' text of a limit, read only into a ConfigError message (pipelines/config/mechanism.py): message "
        "text, as the raise lines the benchmark excludes; no release, charge or bound"
    ),
    "transforms.core.protocol.xǁContinualReleaseǁ__init____mutmut_56": (
        "noiseless starts True instead of False: process_tick and advance set it from the noise source before "
        "_apply / _advance, and every reader runs inside them"
    ),
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_16": (
        "the fast path never taken: every update goes through resolve(), whose decisions the fast path copies for "
        "the well-formed cases (tests/test_aggregates.py compares the two one update at a time); slower only"
    ),
    "transforms.core.continual.net_change.x_tight_account__mutmut_6": (
        "delta >= 0 for delta > 0 beside noise_kind == 'gaussian': a configuration's noise is Gaussian under an "
        "ApproxDP budget only when delta > 0 (ApproxDP.gaussian_calibrated), so delta = 0 never reaches it"
    ),
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ__init____mutmut_32": (
        "next_close starts at 1 instead of 0: advance() starts the first segment (j == 0), which draws next_close, "
        "before the loop reads it; nothing reads it earlier"
    ),
    "transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_100": (
        "Powell without xtol=1e-10 (its default 1e-4) after a Nelder-Mead that already converged (xatol 1e-9) and "
        "with ftol 1e-14 kept: the same objective to the last bit, measured for (n, buffers) = (8, 2), (16, 2), "
        "(64, 3) (ratios 1.0306886120429222, 1.0274211882373858, 1.0225537200555268 either way); the only "
        "difference is a degenerate pole near 1e-52 where the loss is flat. Offline only: the counters read the "
        "fixed BLT_TABLE"
    ),
    # ---- the run of 2026-11-26 (benchmarks/mutation_core.py, seed 20261126) ----
    "transforms.core.foundation.accounting.calibration.x_zcdp_epsilon__mutmut_76": (
        "min(fa, classic) without fb: after 200 golden-section steps the bracket is below the float resolution, "
        "a and b are the same or adjacent floats; at most an ulp larger eps (the safe side)"
    ),
    "transforms.core.contribution.loss.x_gaussian_epsilon__mutmut_20": (
        "bisection 201 instead of 200 halvings: the interval reached the float resolution long before; same result"
    ),
    "transforms.core.contribution.trees.x__mass__mutmut_36": (
        "default (-1, 1) instead of (-1, 0) in a max over candidates (m + cost, c - 1) with m + cost >= 0: every "
        "candidate beats either default"
    ),
    "transforms.core.counters.factorization.coefficients.x_series_inverse__mutmut_3": (
        "np.asarray(c) without dtype=float64: the FFT products convert to float64 anyway; 1.0 / c[0] is a float"
    ),
    "transforms.core.foundation.random_stream.x__needs_big__mutmut_3": (
        "np.asarray(n) without dtype=object: the values compared with 2^63 are the same numbers (ints too large "
        "for int64 become uint64 or object, floats stay floats)"
    ),
    "transforms.core.foundation.random_stream.xǁRandomStreamǁ_uniform_below_big__mutmut_28": (
        "v starts at 1 instead of 0: that bit is shifted to position 64 * nw >= bits and masked off"
    ),
}

_T = "tests/"
_K = _T + "test_mutation_kills_sample27.py::"
_K2 = _T + "test_mutation_kills_sample27b.py::"
KILLED_BY: dict[str, str] = {
    # ---- the second round of 2026-11-27 (h27mut2) ----
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ__init____mutmut_5": _K2
    + "test_anytime_sqrt_under_pure_dp_is_the_blt_counter_of_its_horizon",
    "transforms.core.counters.factorization.coefficients.x_series_inverse__mutmut_8": _K2
    + "test_series_inverse_times_its_series_is_one",
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_10": _K2
    + "test_within_holds_each_budgets_route_at_its_allowance",
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_27": _K2
    + "test_within_holds_each_budgets_route_at_its_allowance",
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_35": _K2
    + "test_within_holds_each_budgets_route_at_its_allowance",
    "transforms.core.counters.factorization.kary_signed.x_signed_variance_path__mutmut_12": _K2
    + "test_signed_variance_path_is_the_node_count_times_the_node_variance",
    "transforms.core.contribution.trees.x__mass__mutmut_7": _K2 + "test_a_query_that_no_entry_moves_has_no_change_mass",
    "transforms.core.contribution.trees.x__mass__mutmut_8": _K2 + "test_a_query_that_no_entry_moves_has_no_change_mass",
    "transforms.core.counters.factorization.anytime.xǁWideTablesǁ__init____mutmut_26": _K2
    + "test_wide_tables_are_the_lattice_tables_arrays_and_refuse_what_they_refuse",
    "transforms.core.contribution.units.xǁContributionUnitǁdescribe__mutmut_10": _K
    + "test_a_units_description_states_its_limits",
    "transforms.core.contribution.units.xǁContributionUnitǁdescribe__mutmut_12": _K
    + "test_a_units_description_states_its_limits",
    "transforms.core.contribution.toeplitz.x_layer_cake_bound__mutmut_60": _K
    + "test_layer_cake_bound_of_a_mixed_sign_row_is_its_spread_times_n_k",
    "transforms.core.contribution.toeplitz.x_histogram_bound__mutmut_57": _K2
    + "test_a_histogram_entrys_bound_covers_the_chain_of_its_visits",
    "transforms.core.families.growing.pmwg.x__rows__mutmut_27": _K2 + "test_pmwg_noise_off_answers_every_range_exactly",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_log__mutmut_24": _K2
    + "test_a_growing_releases_emitted_nodes_carry_their_released_values",
    "transforms.core.foundation.entries.x_update_order__mutmut_18": _K2
    + "test_update_order_reads_an_update_with_or_without_its_raw_record",
    "transforms.core.families.rr_client.x__weights__mutmut_32": _K2
    + "test_rr_weights_take_the_smallest_q_that_meets_the_local_guarantee",
    "transforms.core.contribution.sensitivity.x_calibrated_budget__mutmut_43": _K2
    + "test_a_laplace_calibration_for_m_updates_never_exceeds_the_share_over_m",
    "transforms.core.static.pmw.xǁPMWMechanismǁ_split__mutmut_39": _K2 + "test_pmw_budget_split_composes_to_its_budget",
    "transforms.core.limits.x_counter_limit__mutmut_8": _K2
    + "test_every_lattice_sqrt_counter_has_the_int64_encodings_limit_and_says_so",
    "transforms.core.limits.x_counter_limit__mutmut_4": _K2
    + "test_every_lattice_sqrt_counter_has_the_int64_encodings_limit_and_says_so",
    "transforms.core.forecast.x_forecast__mutmut_47": _K2
    + "test_forecast_states_no_sd_for_a_query_the_consistency_changes",
    "transforms.core.selection.release.xǁOpenKeyReleaseǁstep__mutmut_61": _K2
    + "test_a_selected_key_is_no_longer_a_candidate",
    "transforms.core.counters.trees.xǁNaivePrefixCounterǁstep__mutmut_25": _K2
    + "test_a_naive_prefix_answer_states_the_noise_of_one_release_at_budget_over_t",
    "transforms.core.continual.consistency.xǁConsistencyǁdefault_for__mutmut_24": _K2
    + "test_the_default_projection_without_one_count_projects_each_histogram_onto_its_own_total",
    "transforms.core.foundation.accounting.budgets.xǁApproxDPǁ__post_init____mutmut_6": _K2
    + "test_an_approx_budgets_refusals_name_epsilon_and_delta",
    "transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_6": _K2
    + "test_tight_gaussian_delta_is_one_for_an_epsilon_within_the_slack",
    "transforms.core.foundation.accounting.calibration.x_analytic_gaussian_delta__mutmut_19": _K2
    + "test_analytic_gaussian_delta_is_zero_where_its_tail_underflows",
    "transforms.core.families.rr_client.xǁSurveyDesignǁfold__mutmut_6": _K2
    + "test_a_survey_designs_fold_is_pans_count_for_its_own_branching",
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ__init____mutmut_83": _K2
    + "test_kary_signed_gaussian_nodes_spend_exactly_the_budgets_rho",
    "transforms.core.foundation.accounting.calibration.x_gaussian_rho_for_approx_tight__mutmut_3": _K2
    + "test_tight_gaussian_calibration_refuses_epsilon_zero_or_less",
    "transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_3": _K2
    + "test_tight_gaussian_delta_of_no_loss_is_zero_and_grows_with_rho",
    "transforms.core.protocol.xǁContinualReleaseǁ__init____mutmut_7": _K2
    + "test_a_release_refuses_an_end_tick_below_one",
    "transforms.core.families.changelog.folds.xǁDCROptionsǁ__post_init____mutmut_6": _K2
    + "test_dcr_window_must_be_a_positive_integer_not_none",
    "transforms.core.foundation.accounting.units.xǁPrivacyUnitǁdescribe__mutmut_38": _K2
    + "test_a_person_units_description_names_the_person_with_or_without_its_field",
    "transforms.core.counters.factorization.anytime.x_limb_width__mutmut_2": _K2
    + "test_limb_width_is_the_widest_limb_with_s1_times_2_to_the_w_below_2_to_the_61",
    "transforms.core.foundation.samplers.x__geometric_inversion_small__mutmut_26": _K2
    + "test_geometric_inversion_refines_a_first_word_whose_interval_straddles_a_boundary",
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_8": _K2
    + "test_the_blt_table_is_the_files_theta_and_theta_hat_for_every_log2n",
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_11": _K2
    + "test_the_blt_table_is_the_files_theta_and_theta_hat_for_every_log2n",
    "transforms.core.selection.keys.xǁKeyLimitǁ__init____mutmut_3": _K2
    + "test_a_key_limit_refusal_names_the_setting_it_refuses",
    "transforms.core.selection.answers.x_answer_calibration__mutmut_68": _K2
    + "test_the_group_route_gives_each_keys_counter_the_share_over_the_group_squared",
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_10": _K2
    + "test_a_laplace_linear_bound_claimed_exact_is_reached_by_its_pattern",
    "transforms.core.foundation.state.x__to_plain__mutmut_41": _K2
    + "test_an_arrays_state_encoding_depends_on_its_values_not_its_byte_order",
    "transforms.core.forecast.x_forecast__mutmut_61": _K2
    + "test_forecast_states_no_sd_for_a_query_the_consistency_changes",
    "transforms.core.contribution.units.xǁContributionUnitǁlifetimes__mutmut_5": _K2
    + "test_an_entrys_lifetimes_are_the_most_insertions_of_k_mutations",
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_19": _K2
    + "test_a_budget_with_delta_zero_is_held_as_pure",
    "transforms.core.contribution.toeplitz.x_toeplitz_model__mutmut_18": _K2
    + "test_a_sqrt_model_is_the_counters_coefficients_extended_to_2t_plus_1",
    "transforms.core.counters.factorization.anytime.xǁWideTablesǁ__init____mutmut_62": _K2
    + "test_wide_tables_are_the_lattice_tables_arrays_and_refuse_what_they_refuse",
    "transforms.core.counters.factorization.anytime.xǁWideTablesǁ__init____mutmut_6": _K2
    + "test_wide_tables_are_the_lattice_tables_arrays_and_refuse_what_they_refuse",
    "transforms.core.counters.factorization.coefficients.x_snap_coefficients__mutmut_19": _K2
    + "test_snapped_coefficients_are_cut_after_their_last_non_zero",
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁerror_bound__mutmut_6": _K2
    + "test_kary_signed_error_bound_is_a_union_bound_over_its_coordinates",
    "transforms.core.counters.factorization.kary_signed.x_signed_shape__mutmut_6": _K
    + "test_signed_shape_is_the_first_shape_of_least_mean_variance",
    # ---- the run of 2026-11-27 ----
    "transforms.core.continual.consistency.x__replace__mutmut_7": _K
    + "test_consistency_changes_only_the_estimate_its_bound_and_beta",
    "transforms.core.config.xǁBudgetProfileǁtight__mutmut_6": _K
    + "test_tight_profile_is_tuned_with_the_same_eta_and_horizon",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_38": _K
    + "test_every_released_piece_names_its_node_and_the_nodes_fenwick_level",
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcheck_settings__mutmut_1": _K
    + "test_net_change_horizon_must_cover_every_release_of_the_default_one_tick_period",
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_68": _K
    + "test_exact_loss_of_a_gaussian_pair_counts_sigma2_and_the_lattice_sigma2_minus_tau2",
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_37": _K
    + "test_a_lattice_loss_equal_to_its_allowance_is_within_and_one_ulp_more_is_not",
    "transforms.core.contribution.toeplitz.x_toeplitz_model__mutmut_97": _K
    + "test_toeplitz_models_carry_the_column_norms_of_the_counters_coefficients",
    "transforms.core.contribution.toeplitz.x_layer_cake_bound__mutmut_59": _K
    + "test_layer_cake_bound_of_a_mixed_sign_row_is_its_spread_times_n_k",
    "transforms.core.contribution.units.xǁContributionUnitǁdescribe__mutmut_11": _K
    + "test_a_units_description_states_its_limits",
    "transforms.core.contribution.units.xǁContributionUnitǁdescribe__mutmut_13": _K
    + "test_a_units_description_states_its_limits",
    "transforms.core.counters.factorization.anytime.x_anytime_sensitivity_sq__mutmut_20": _K
    + "test_anytime_sensitivity_rounds_the_tail_bound_up_past_its_exact_value",
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_tables__mutmut_6": _K
    + "test_an_anytime_counter_of_profile_1_calibrates_to_profile_1s_column_norm",
    "transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_encode__mutmut_16": _K
    + "test_the_wide_anytime_encoder_refuses_a_batch_answer_of_2_to_the_62",
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_node_noise__mutmut_59": _K
    + "test_kary_signed_node_releases_are_their_noise_plus_their_range_sums",
    "transforms.core.counters.factorization.kary_signed.x_signed_shape__mutmut_47": _K
    + "test_signed_shape_is_the_first_shape_of_least_mean_variance",
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_encode__mutmut_13": _K
    + "test_lattice_counters_refuse_a_batch_answer_of_2_to_the_62",
    "transforms.core.forecast.x_forecast__mutmut_19": _K
    + "test_forecast_of_a_noise_off_run_states_zero_error_bounds_and_of_a_noisy_run_positive",
    "transforms.core.foundation.accounting.calibration.x_zcdp_epsilon__mutmut_3": _K
    + "test_zcdp_epsilon_of_no_loss_is_zero_and_grows_with_rho",
    "transforms.core.foundation.accounting.units.xǁPrivacyUnitǁgroup_size__mutmut_3": _K
    + "test_group_size_of_each_unit",
    "transforms.core.foundation.random_stream.x_encode_coordinates__mutmut_33": _K
    + "test_long_int_coordinates_encode_injectively",
    "transforms.core.foundation.samplers.x_discrete_laplace__mutmut_1": _K
    + "test_discrete_laplace_and_gaussian_draw_one_value_by_default",
    "transforms.core.plans.xǁPlanEntryǁtext__mutmut_19": _K
    + "test_a_weighted_plan_line_states_each_query_sets_share_of_the_budget",
    "transforms.core.selection.answers.x_answer_calibration__mutmut_33": _K
    + "test_open_key_answer_calibration_states_its_route_multiplier_and_group",
    "transforms.core.selection.params.xǁSelectionParamsǁ__post_init____mutmut_32": _K
    + "test_selection_failure_probability_must_be_inside_zero_one",
    "transforms.core.counters.xǁCounterSpecǁplanned_cost__mutmut_2": _K + "test_counter_specs_plan_laplace_by_default",
    "transforms.core.contribution.bounding.x__check__mutmut_23": _K
    + "test_a_malformed_person_state_is_refused_without_quoting_its_contents",
    "transforms.core.contribution.harness.x_neighbour_loss__mutmut_45": _K
    + "test_neighbour_loss_returns_both_recordings_and_their_loss",
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_69": _K
    + "test_lattice_loss_of_a_draw_at_variance_tau2_or_below_is_infinite",
    "transforms.core.contribution.toeplitz.x_histogram_bound__mutmut_20": _K
    + "test_blt_histogram_bound_attains_at_integer_periods_one_window_apart",
    "transforms.core.contribution.units.xǁContributionUnitǁ__post_init____mutmut_28": _K
    + "test_entry_unit_refuses_the_person_units_fields",
    "transforms.core.contribution.units.xǁContributionUnitǁentries__mutmut_7": _K
    + "test_a_per_window_persons_entries_over_a_release_are_the_limit_times_its_windows",
    # ---- the run of 2026-11-26 ----
    "transforms.core.config.xǁBudgetProfileǁtight__mutmut_8": _T + "test_fully_dynamic_tight.py::"
    "test_profiles_name_themselves",
    "transforms.core.continual.consistency.x_apportion__mutmut_32": _T + "test_consistency.py::"
    "test_apportion_removes_a_floating_excess_from_the_largest_cells_first",
    "transforms.core.continual.partition.xǁTickByTickPartitionerǁrun__mutmut_8": _T + "test_partition.py::"
    "test_tick_by_tick_reference_equals_the_skip_with_noise_off_and_draws_its_coordinates",
    "transforms.core.contribution.toeplitz.xǁ_EvaluatorǁF__mutmut_9": _T + "test_contribution_lemmas.py::"
    "test_chain_bound_is_the_exhaustive_chain_on_short_horizons",
    "transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_112": _T + "test_factorization.py::"
    "test_blt_optimiser_returns_its_best_point_and_its_true_ratio",
    "transforms.core.counters.factorization.blt.x_optimize_blt__mutmut_113": _T + "test_factorization.py::"
    "test_blt_optimiser_returns_its_best_point_and_its_true_ratio",
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁvariance__mutmut_1": _T
    + "test_factorization.py::test_lattice_counter_variance_is_zero_before_the_first_step_then_grows",
    "transforms.core.counters.trees.xǁNaivePrefixCounterǁ__init____mutmut_23": _T + "test_counters.py::"
    "test_every_charge_of_a_tree_counter_is_its_planned_cost",
    "transforms.core.families.changelog.folds.x_prefix_nodes__mutmut_8": _T + "test_changelog.py::"
    "test_prefix_nodes_partition_the_prefix_from_zero",
    "transforms.core.families.changelog_orders.x_generate__mutmut_118": _T + "test_changelog_orders.py",
    "transforms.core.families.changelog_orders.x_generate__mutmut_130": _T + "test_changelog_orders.py",
    "transforms.core.families.changelog_orders.x_to_lines__mutmut_6": _T + "test_changelog_orders.py",
    "transforms.core.families.rr_client.xǁTimeBoundedǁ__post_init____mutmut_6": _T + "test_local_dp.py::"
    "test_time_bound_accepts_every_number_from_zero",
    "transforms.core.foundation.accounting.budgets.xǁBudgetǁ__add____mutmut_1": _T + "test_accounting.py::"
    "test_budget_sum_and_the_to_approx_conversions",
    "transforms.core.foundation.aggregates.x_resolve_entry__mutmut_33": _T + "test_aggregates.py",
    "transforms.core.foundation.aggregates.x_resolve_entry__mutmut_4": _T + "test_aggregates.py",
    "transforms.core.foundation.aggregates.x_valid_item__mutmut_4": _T + "test_aggregates.py",
    "transforms.core.foundation.random_stream.x__needs_big__mutmut_7": _T + "test_noise.py::"
    "test_big_path_only_from_2_63_and_bernoulli_is_exact",
    "transforms.core.foundation.samplers.x__dgauss_normaliser__mutmut_19": _T + "test_noise.py::"
    "test_discrete_gaussian_pmf_and_variance_are_the_normalised_kernel",
    "transforms.core.foundation.samplers.x_discrete_gaussian_variance__mutmut_8": _T + "test_noise.py::"
    "test_discrete_gaussian_pmf_and_variance_are_the_normalised_kernel",
    # under this mutant the registry itself refuses the collector at import: every test importing
    # transforms.core fails; the test also checks the contract by name
    "transforms.core.mechanisms.xǁMechanismSpecǁ__post_init____mutmut_15": _T + "test_protocol.py::"
    "test_report_specs_need_the_whole_collector_contract",
    "transforms.core.static.pmw.xǁPMWMechanismǁexact__mutmut_2": _T + "test_pmw.py::"
    "test_pmw_pickles_to_the_same_mechanism_and_exact_is_the_histogram",
}


ASSERTED_BY: dict[str, str] = {}


# the sessions' later rounds keep their judgements in files of their own (one writer each), merged here
def _merge() -> None:
    import importlib  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    # mutation_survivors_<session><part>.py, in the order of the sessions (43a, 43b, 43c, 44a, ...)
    parts = sorted(p.stem for p in Path(__file__).parent.glob("mutation_survivors_[0-9][0-9]*.py"))
    for part in parts:
        mod = importlib.import_module(f"benchmarks.{part}")
        # a later round's judgement wins (it judged the mutant of the code as it is now)
        for name, reason in mod.EQUIVALENT.items():
            KILLED_BY.pop(name, None)
            EQUIVALENT[name] = reason
        for name, test in mod.KILLED_BY.items():
            EQUIVALENT.pop(name, None)
            KILLED_BY[name] = test
        ASSERTED_BY.update(mod.ASSERTED_BY)


_merge()
