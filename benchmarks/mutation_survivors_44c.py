"""Judged survivors of the mutation round of session 44, group c (``transforms/core/continual/``, ``static/``,
``config.py``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 a module), merged into
``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is either equivalent (the reason
in one line, checked against the mutant's code in the run's copy) or killed since by a test that asserts a property
(file::test, checked with ``python -m benchmarks.mutation_fast confirm``: passes unmutated, fails on the mutant)."""

from __future__ import annotations

_K = "tests/test_mutation_kills_sample44c.py::"

EQUIVALENT: dict[str, str] = {
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_error_bound__mutmut_16": (
        "bound = fsum(halted bounds) for bound += ...: bound is 0.0 just above (the first term added), and 0.0 + x is "
        "x exactly for every float x: the same bound"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_34": (
        "the float fast path skipped for w == 1 as well as w == 0 (a 64-bit word of 1: probability 2^-64): the decimal "
        "comparison decides the same inequality U ? (1-p)^n exactly (the fast path answers only where a margin 8x its "
        "float error decides it, far inside the decimal path's first precision), refining U with more bits of the "
        "same local stream only where undecided: the same K, speed only"
    ),
    "transforms.core.continual.auto.x__net_change_options__mutmut_20": (
        "auto_counter's pick compared with choose_counter(None, h) (the Laplace pick) instead of the noise kind's: "
        "under Laplace noise both are choose_counter's pick (counter stays auto); under Gaussian noise the part's "
        "options name the counter auto would resolve to (sqrt_factorization / blt at an entry or person unit or a "
        "horizon of 1) instead of 'auto': counter_choice, calibrations, _check_calibration, _check_horizon and the "
        "plan read the same counter and horizon, and a part's options key no noise and enter no state or digest "
        "(ContinualRelease's state excludes options; auto's digest and sub-keys use auto's own options and names)"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_92": (
        "the non-paper delta weights' first entry 1.0 for 0.0: wd[0] is never read (n_hat's plan is b_r.pure_part of "
        "eps weights only): the same plans"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_93": (
        "the non-paper static delta weight 1.4 for 0.4: under tuned / tight the ledger budget is PureDP, ApproxDP(eps, "
        "0) or ZCDP (an (eps, delta > 0) budget means Gaussian noise there, a ZCDP ledger), whose part() ignores the "
        "delta weight or multiplies a delta of 0: the same plans"
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ_round_budgets__mutmut_63": (
        "the deletion-count counter's delta share wd[3] + c wd[3] / k for wd[3] + c wd[2] / k: c (reusing count sets) "
        "is non-zero only in the tight profile, whose ledger budget has no delta to weigh (PureDP, ApproxDP(eps, 0) or "
        "ZCDP: part() ignores w_delta or multiplies 0): the same budgets"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁlast_close_tick__mutmut_2": (
        "partitioner.prev_close returned also while closed == 0: it is 0 until the partitioner's first close, and "
        "while the release absorbs (the only reader besides check_invariants) every partitioner close so far is at a "
        "tick <= the batch's (<= the end) and went through _close, so closed == 0 only where prev_close == 0: the same "
        "boundary"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_139": (
        "the search starts at max(guess, 2) instead of max(guess, 1): for K = 1 it steps down (decide(2) = -1, then "
        "decide(1) = -1 at n = 1 returns 1); the loop returns the unique n with decide(n) = -1 and decide(n - 1) = +1 "
        "from any start, each comparison exact on the same U (more words only refine it): the same K, speed only"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_167": (
        "n = 1 instead of n += 1 where K > n: the loop then repeats decide(1) = +1 (a float comparison) until its "
        "10,000 steps run out and the bisection over [1, cap] returns the smallest n with decide(n) = -1, or cap: "
        "exactly min(K, cap) on the same U, speed only (checked: test_geometric_capped_is_exact_whatever_its_float_"
        "guess, guesses 1 and cap for K ~ 5e5, passes on it)"
    ),
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_carried_answer__mutmut_21": (
        "np.array(est) without dtype=float: est is a fresh answer's estimate, float64 for every segmented mechanism "
        "(InfiniteCounter's estimate, fully_dynamic's sum of node answers from mech.answer floats; measured: "
        "insertion_only, two_stream_baseline, fully_dynamic under paper / tuned / tight, pure, (eps, delta), zCDP, "
        "count, histogram, linear), and before the first close np.zeros (float64): the same float64 copy"
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁ_noise__mutmut_7": (
        "discrete_laplace(stream, param) without size: its default size is 1 and both callers (release: n_hat and each "
        "measurement) pass 1: the same draw"
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_20": (
        "_split(budget, None) for _split(budget, external): only count_p is kept, and it is read only where the count "
        "is not external, where None and False give the same share (0.1): the same count noise (as release__mutmut_22)"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_166": (
        "n -= 2 instead of n -= 1 where K <= n - 1: the walk may step below K, where decide(n) = +1 (decide(0) = +1) "
        "moves it up one, and it returns only at the n with decide(n) = -1 and decide(n - 1) = +1 (or n = 1 with "
        "decide(1) = -1): exactly min(K, cap) on the same U, speed only (checked: test_geometric_capped_is_exact_"
        "whatever_its_float_guess passes on it)"
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁ_noise__mutmut_14": (
        "the memo's check compares the sub-source list memo[2] with (release, disabled): never equal, so the parts' "
        "sub-sources are made again at every call: for_release of the same ReleaseIdentity on the same source gives "
        "the same key and release (a source keeps no other state), the same noise, speed only"
    ),
    "transforms.core.continual.consistency.x_own_total_histogram__mutmut_10": (
        "np.asarray(hist) without dtype=float before the sum: make_consistent passes released estimates (float64 "
        "arrays, or a record's tuple of Python floats), which np.asarray makes float64 anyway: the same sum and total"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_145": (
        "the fallback start segments taken from every output kind but static (setdefault, after the n_hat starts): "
        "a (node, round) with deletion counters always has its n_hat output, which setdefault never overrides; the "
        "pairs without one are the static-only leaves of tuned / tight, whose plan returns before starts is read (as "
        "43c's _planned_cost__mutmut_148); planned_cost's only callers (tests) pass a run's drained outputs, all kinds"
    ),
    "transforms.core.continual.net_change.xǁ_options_awareǁ__get____mutmut_24": (
        "on an instance, an explicit options argument replaced by the instance's own: every call on an instance "
        "(protocol's Ledger(self.ledger_cap(config)), counter_budgets' self.ledger_cap(config)) passes none; class "
        "calls take the other branch: the same caps"
    ),
    "transforms.core.continual.net_change.xǁ_options_awareǁ__init____mutmut_2": (
        "the descriptor's __doc__ not copied from the function: it has no reader (class access returns a "
        "functools.partial, instance access a lambda, pydoc lists the partial; the docs are markdown; no code reads "
        "it): no output changes"
    ),
    "transforms.core.static.linear.xǁCountMechanismǁ_answers_units__mutmut_4": (
        "np.array([int(total)]) without dtype=int64: a Python int below 2^63 (the sum of a histogram numpy holds) "
        "makes an int64 array by default: the same array"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁcheck_invariants__mutmut_11": (
        "the expected node contents built as float64 zeros: they are incremented by 1 per live entry (exact below "
        "2^53) and compared by np.array_equal, by value, with the integer contents: the same verdicts"
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ__init____mutmut_4": (
        "tick_lo None at construction: the only constructor call (FullyDynamicRelease._close) sets node.tick_lo on "
        "the next lines, before any read (locate, _reset_pending's chain, check_invariants); a restored node's "
        "tick_lo comes from its state"
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁspent__mutmut_18": (
        "the memo's check compares the composed Budget memo[1] with the key (a tuple of reprs): never equal, so the "
        "parts' spends are composed again at every call: compose_sequential of the same spends, the same value, "
        "speed only"
    ),
    "transforms.core.continual.consistency.x_simplex_projection__mutmut_5": (
        "np.asarray(x) without dtype=float: for a total > 0, p = np.maximum(x - tau, 0.0) is float64 with the same "
        "values for integer x; for a total of 0 or an empty x the zeros keep x's dtype, equal in value, and every "
        "caller converts (make_consistent's _like, apportion's asarray(float)); released estimates are float64 anyway"
    ),
    "transforms.core.continual.consistency.x__replace__mutmut_30": (
        "kw.get('error_bound') without the record's own as default: every call of _replace (make_consistent: the "
        "paired histogram, the count, the own-total histogram) passes error_bound: the same records"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁreuse__mutmut_1": (
        "the reuse cache never read: the list is computed again at every read from the configuration alone (the "
        "profile's reuse_count, the mechanisms' types): the same list, speed only"
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcheck_settings__mutmut_12": (
        "_check_calibration without the end: it reads only whether the chosen counter is a lattice counter, under "
        "Gaussian noise (tight_account); without the end auto picks blt instead of sqrt_factorization there, both "
        "lattice counters, and an explicit counter does not depend on the end: the same verdict"
    ),
    "transforms.core.continual.partition.x_log_one_minus_p__mutmut_7": (
        "k0 = 1 computed by the second formula: (1 - k0) ln q - log1p(q) = -log1p(q) is ln(1/(1+q)), the same quantity"
        " as log1p(-q/(1+q)), within an ulp or two; its only caller, geometric_capped, uses it for the float guess "
        "and for float decisions taken with a margin 2^-42 + |ls| 2^-46 far above such errors (else exact decimals): "
        "the same K"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_116": (
        "the float guess from U / 2 (2^-65 for 2^-64): the guess only starts the walk, whose exact comparisons (and "
        "past 10,000 steps the bisection) return min(K, cap) on the same U: the same K, speed only"
    ),
    "transforms.core.continual.partition.x_geometric_capped__mutmut_49": (
        "the float path answers +1 also where lu_hi equals ls - margin exactly: U is still a margin 8x the float "
        "error below (1-p)^n there, the verdict the decimal path gives: the same K"
    ),
}

KILLED_BY: dict[str, str] = {
    "transforms.core.static.linear.xǁStaticMechanismǁalpha__mutmut_6": _K
    + "test_a_static_alpha_holds_for_every_answer_at_once",
    "transforms.core.continual.consistency.x_simplex_projection__mutmut_6": _K
    + "test_a_simplex_projection_refuses_a_total_that_is_negative_or_not_finite",
    "transforms.core.continual.consistency.x_simplex_projection__mutmut_43": _K
    + "test_a_simplex_projection_lies_on_the_simplex_whatever_the_magnitudes",
    "transforms.core.config.xǁDynamicConfigǁ__post_init____mutmut_15": _K
    + "test_a_horizon_of_one_segment_is_accepted_and_zero_refused",
    "transforms.core.continual.auto.xǁAutoReleaseǁcheck_settings__mutmut_21": _K
    + "test_auto_refuses_unequal_weights_for_its_fully_dynamic_query_sets",
    "transforms.core.continual.baselines.xǁTwoStreamBaselineǁ_start__mutmut_21": _K
    + "test_each_stream_of_the_two_stream_baseline_is_the_insertion_only_counter",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁsize_bound__mutmut_19": _K
    + "test_a_node_that_released_no_size_states_no_finite_size_bound",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_counter_hists__mutmut_3": _K
    + "test_fully_dynamic_nodes_hold_exact_integer_counts_through_a_state_round_trip",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_123": _K
    + "test_a_static_node_output_carries_the_values_the_node_released",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_carried_answer__mutmut_18": _K
    + "test_a_carried_answers_bound_splits_beta_between_the_last_close_and_the_drift",
    "transforms.core.config.xǁBudgetProfileǁtuned__mutmut_1": _K
    + "test_the_tuned_profiles_default_level_split_is_the_planned_one_over_l_to_the_1_5",
    "transforms.core.continual.auto.xǁAutoReleaseǁplan__mutmut_9": _K
    + "test_autos_plan_states_the_counter_horizon_and_calibrations_its_parts_run",
    "transforms.core.continual.auto.xǁAutoReleaseǁ_sub_configs__mutmut_5": _K
    + "test_autos_plan_states_the_counter_horizon_and_calibrations_its_parts_run",
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_4": _K
    + "test_a_counter_release_states_no_plan_for_a_coordinate_it_never_charges",
    "transforms.core.continual.consistency.x_own_total_histogram__mutmut_35": _K
    + "test_an_own_total_histograms_cells_are_within_its_stated_bound",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_42": _K
    + "test_every_fully_dynamic_charge_has_its_plan_restarts_and_declared_horizons_included",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_49": _K
    + "test_every_fully_dynamic_charge_has_its_plan_restarts_and_declared_horizons_included",
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcalibrations__mutmut_33": _K
    + "test_a_per_window_person_limit_is_calibrated_over_the_releases_windows",
    "transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_9": _K
    + "test_a_linear_query_set_needs_a_non_empty_matrix",
    "transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_6": _K
    + "test_a_linear_query_matrix_of_exact_fractions_is_the_same_real_matrix",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_42": _K
    + "test_a_static_node_output_carries_the_values_the_node_released",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_closes__mutmut_37": _K
    + "test_a_carried_answers_bound_splits_beta_between_the_last_close_and_the_drift",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_make_counter__mutmut_12": _K
    + "test_every_node_counter_release_is_charged_to_the_streams_ledger",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_make_counter__mutmut_35": _K
    + "test_every_node_counter_release_is_charged_to_the_streams_ledger",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁanswer__mutmut_1": _K
    + "test_a_halted_node_answers_zero_for_every_query_of_its_set",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_error_bound__mutmut_13": _K
    + "test_a_halted_node_answers_zero_for_every_query_of_its_set",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_error_bound__mutmut_36": _K
    + "test_a_reused_counts_bound_is_taken_below_beta_times_its_round_weights",
    "transforms.core.continual.auto.xǁAutoReleaseǁ_merge__mutmut_5": _K
    + "test_every_auto_answer_carries_the_releases_spend_within_its_budget",
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_next_wake__mutmut_1": _K
    + "test_a_continual_counter_wakes_at_its_next_release",
    "transforms.core.continual.consistency.xǁConsistencyǁdefault_for__mutmut_29": _K
    + "test_the_default_projection_rounds_when_asked_with_or_without_a_count",
    "transforms.core.continual.baselines.xǁInsertionOnlyReleaseǁ_start__mutmut_30": _K
    + "test_insertion_only_pending_insertions_are_exact_integer_counts_in_its_state",
    "transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_55": _K
    + "test_pmw_with_a_public_size_of_zero_releases_the_empty_histogram",
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ_start_segment__mutmut_27": _K
    + "test_each_svt_instance_draws_its_one_threshold_noise_at_its_own_coordinates",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ__init____mutmut_26": _K
    + "test_every_fully_dynamic_charge_has_its_plan_restarts_and_declared_horizons_included",
    "transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_32": _K
    + "test_a_zero_one_query_matrix_is_answered_in_exact_integers",
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcalibrations__mutmut_49": _K
    + "test_a_counter_without_a_contribution_bound_states_group_privacy_in_its_plan",
    "transforms.core.continual.partition.x_geometric_capped__mutmut_177": _K
    + "test_geometric_capped_is_exact_whatever_its_float_guess",
    "transforms.core.config.xǁDynamicConfigǁ__post_init____mutmut_14": _K
    + "test_a_horizon_of_one_segment_is_accepted_and_zero_refused",
    "transforms.core.config.xǁDynamicConfigǁ__post_init____mutmut_8": _K
    + "test_a_configs_beta_is_strictly_between_zero_and_one",
    "transforms.core.continual.auto.xǁAutoReleaseǁplan__mutmut_7": _K
    + "test_autos_plan_states_the_counter_horizon_and_calibrations_its_parts_run",
    "transforms.core.continual.baselines.xǁInsertionOnlyReleaseǁ_close__mutmut_22": _K
    + "test_insertion_only_pending_insertions_are_exact_integer_counts_in_its_state",
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_22": _K
    + "test_every_continual_count_charge_has_its_plan_for_its_noise",
    "transforms.core.continual.consistency.xǁConsistencyǁdefault_for__mutmut_1": _K
    + "test_the_default_projection_rounds_when_asked_with_or_without_a_count",
    "transforms.core.continual.consistency.xǁConsistencyǁdefault_for__mutmut_21": _K
    + "test_the_default_projection_pairs_every_histogram_with_the_one_count",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_closes__mutmut_14": _K
    + "test_a_periodic_segmented_release_without_an_end_answers_every_period",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_apply__mutmut_26": _K
    + "test_noise_off_every_period_answer_is_the_exact_current_answer_with_deletions",
    "transforms.core.static.linear.x__calibrated__mutmut_15": _K
    + "test_a_gaussian_linear_release_spends_exactly_its_rho_at_its_l2_sensitivity",
    "transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_38": _K
    + "test_a_real_query_matrix_is_answered_exactly_on_its_lattice",
    "transforms.core.static.linear.xǁStaticMechanismǁcheck_budget__mutmut_3": _K
    + "test_a_gaussian_mechanism_refuses_a_pure_budget_saying_what_to_give_it",
    "transforms.core.static.pmw.xǁPMWMechanismǁalpha__mutmut_18": _K
    + "test_pmw_alpha_is_stated_for_the_releases_own_number_of_iterations",
    "transforms.core.static.pmw.xǁPMWMechanismǁ_select__mutmut_40": _K
    + "test_pmw_selection_with_a_large_budget_picks_a_worst_answered_range",
    "transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_11": _K
    + "test_a_noise_off_pmw_release_is_the_exact_histogram_with_its_cost_and_no_noise_law",
    "transforms.core.static.pmw.xǁPMWMechanismǁ__init____mutmut_23": _K
    + "test_pmw_checks_its_query_matrix_and_takes_its_entries_as_real_numbers",
    "transforms.core.static.pmw.xǁPMWMechanismǁ__init____mutmut_19": _K
    + "test_pmw_checks_its_query_matrix_and_takes_its_entries_as_real_numbers",
    "transforms.core.static.pmw.xǁPMWMechanismǁchoose_iterations__mutmut_39": _K
    + "test_pmw_chooses_the_number_of_iterations_minimising_its_stated_bound",
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ__init____mutmut_20": _K
    + "test_every_svt_charge_is_recorded_in_the_partitions_parallel_scope",
    "transforms.core.continual.baselines.xǁTwoStreamBaselineǁ_bound__mutmut_6": _K
    + "test_a_carried_answers_bound_splits_beta_between_the_last_close_and_the_drift",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
