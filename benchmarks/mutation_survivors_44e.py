"""Judged survivors of the mutation round of 2026-11-27 (session 44, group e: ``transforms/core/families/``,
``forecast.py``, ``mechanisms.py``, ``protocol.py``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 mutants a
module), merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is either
equivalent (the reason in one line) or killed since by a test that asserts a property (file::test, checked with
``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

_K = "tests/test_mutation_kills_sample44e.py::"

EQUIVALENT: dict[str, str] = {
    "transforms.core.families.changelog_orders.x_generate__mutmut_137": (
        "rng.random() <= 0.5 for < 0.5 (a late change or one mutation too many): the two differ only where random() "
        "returns exactly 0.5, one of its 2^53 values (measured: generate() of the seeds 16..35 with the default "
        "sizes, byte-identical records)"
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_plan__mutmut_154": (
        "the method chosen by auto named 'XXhdcrXX' for 'hdcr': the local name is read once, in self.direct = method "
        "== 'direct', false for both: the same derived HDCR"
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_init_structure__mutmut_3": (
        "a direct SWCR's ring of exact unit counts float64 instead of int64: it holds integer counts (exact below "
        "2^53) copied from the int64 accumulator, summed to the same window histogram the static mechanism releases "
        "(measured: count, histogram and linear sets, Laplace and Gaussian, 40 ticks with noise: the same answers, "
        "dtypes and bounds); its state holds the same values as floats and restores to them"
    ),
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_answer__mutmut_81": (
        "a changelog release's period_tick left None: it is read only by ContinualRelease._period_ends / "
        "next_period_end, which DCR, HDCR and SWCR never call (their unit clock decides every release), and by nothing "
        "in the Beam layer (grep); the state carries None instead of the tick, never read back either"
    ),
    "transforms.core.families.rr_client.xǁRRClientǁ__init____mutmut_43": (
        "a pure design's per-node cost ApproxDP(2 eps_r, 0) instead of PureDP(2 eps_r): the client's ledger has a "
        "PureDP total and charges every cost in its currency (PureDP.express: ApproxDP.as_pure_cost, delta 0 gives "
        "PureDP(eps) exactly): the same records, spend and refusals (measured: the same records and spent)"
    ),
    "transforms.core.protocol.xǁContinualReleaseǁplan__mutmut_9": (
        "calibrations called without end_tick from ContinualRelease.plan: the only calibrations that reads end_tick "
        "is NetChangeRelease's, and net_change has its own plan (auto too); every class that reaches this plan "
        "inherits ContinualRelease.calibrations, which never reads end_tick: the same plan"
    ),
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_44": (
        "a re-run's estimate kept in the black box's own dtype instead of float64: both (est, bound) lists it feeds "
        "(the close's answers and the carried ones) reach the records only through GrowingRelease._answers, which "
        "makes every estimate np.asarray(est, dtype=float): the same values (integer answers exact below 2^53)"
    ),
    "transforms.core.families.changelog.folds.xǁSWCROptionsǁ__post_init____mutmut_12": (
        "none_ok=None for False: _int_option reads it only for its truth (value is None and none_ok; ' or None' if "
        "none_ok): the same refusal of None and the same message"
    ),
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁ__init____mutmut_30": (
        "phase_rounds starts at 1: it is read only in _open_round, after the reset to 0 that the first round always "
        "makes (phase starts at -1 and phase_of is >= 0, so p > phase): the same rounds"
    ),
    "transforms.core.families.changelog.releases.xǁDCRReleaseǁ_plan__mutmut_18": (
        "a DCR's direct flag None for False: only SWCRRelease's methods read it (for its truth), DCR inherits none of "
        "them, and it is excluded from the state (_STATE_EXCLUDE): nothing reads it"
    ),
    "transforms.core.families.rr_client.x__weights__mutmut_35": (
        "the guard loop's step other = 1 for other += 1: the loop body runs only if Q rounded up from its 60-digit "
        "value fails the exact check, i.e. if the 60-digit rounding (relative 1e-59, ~1e-40 of a weight unit) crosses "
        "an integer; measured: 40,000 random (m, eps, delta) (m up to 61^2, eps 1e-4..60, delta 0 or 1e-12..0.1), "
        "the body never ran: the same weights"
    ),
    "transforms.core.families.changelog.folds.x_entry_sensitivity_ratio__mutmut_32": (
        "a.astype(None) for a.astype(float): numpy's astype(None) is float64, the default dtype: the same columns"
    ),
    "transforms.core.families.changelog.folds.xǁHDCROptionsǁ__post_init____mutmut_3": (
        "none_ok=None for False: _int_option reads it only for its truth: the same refusal of None and the same "
        "message (as SWCROptions.__post_init____mutmut_12)"
    ),
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ_release__mutmut_7": (
        "tick % c * i for tick % c**i: equal for i = 0 and 1; for i >= 2 the mutant also takes layer i's node at ticks "
        "with tick % c == 0 but tick % c^i != 0, where apply has refused that layer's counts (layers_ending_at) and "
        "advance passes none: a node of zero reports, adding 0 to diff, touch and n: the same releases"
    ),
    "transforms.core.forecast.x_forecast__mutmut_77": (
        "a projected answer's sd None instead of sd: every projected query is also in changed (own_total, and the "
        "paired histograms, which projected holds only with threshold_bound), where sd is None already"
    ),
    "transforms.core.protocol.xǁContinualReleaseǁ__init____mutmut_46": (
        "Ledger(..., keep_records=None) for False: the ledger reads keep_records only for its truth (if "
        "self.ledger.keep_records): no records either way, the same charges and refusals"
    ),
}

# open (not judged in time): transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_73 (the easy answer's
# threshold-noise profile without its lattice unit)
KILLED_BY: dict[str, str] = {
    "transforms.core.families.changelog.folds.xǁSWCROptionsǁ__post_init____mutmut_6": _K
    + "test_swcr_options_refuse_a_missing_window_or_period",
    "transforms.core.families.growing.base.x_check_fraction__mutmut_4": _K
    + "test_growing_options_refuse_a_fraction_that_is_not_a_number",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_advance__mutmut_12": _K
    + "test_a_growing_release_answers_every_period_end_when_time_passes_without_data",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_choose_branching__mutmut_47": _K
    + "test_an_hdcrs_default_branching_has_the_smallest_mean_variance_over_its_horizon",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_clamp__mutmut_2": _K
    + "test_a_growing_release_decides_nothing_after_its_configured_end",
    "transforms.core.families.changelog_orders.x_main__mutmut_6": _K
    + "test_the_orders_generators_help_names_the_command_that_runs_it",
    "transforms.core.families.changelog.folds.xǁSWCROptionsǁ__post_init____mutmut_15": _K
    + "test_swcr_options_refuse_a_missing_window_or_period",
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_bound__mutmut_31": _K
    + "test_a_pmw_reruns_bound_is_its_alpha_at_half_beta_at_the_public_size_bound_of_half_beta",
    "transforms.core.forecast.x_forecast__mutmut_51": _K
    + "test_a_paired_histograms_forecast_states_the_consistent_pairs_bound_and_beta",
    "transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_7": _K
    + "test_a_refused_privacy_unit_names_exactly_the_mechanisms_that_serve_it",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_answer__mutmut_44": _K
    + "test_a_changelog_answer_is_the_sum_of_its_node_answer_records",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_43": _K
    + "test_pmwg_draws_only_at_its_documented_coordinates",
    "transforms.core.families.local_dp.x_report_variance__mutmut_14": _K
    + "test_one_reports_variance_is_the_exact_variance_of_its_contribution_under_the_implemented_response",
    "transforms.core.families.changelog.folds.x_hdcr_layer_folds__mutmut_2": _K
    + "test_the_fold_counts_refuse_a_mutation_limit_below_one",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_answer__mutmut_25": _K
    + "test_a_changelog_answer_is_the_sum_of_its_node_answer_records",
    "transforms.core.families.changelog_orders.x_main__mutmut_36": _K
    + "test_the_orders_command_writes_the_generators_default_output_by_default",
    "transforms.core.families.changelog_orders.x_main__mutmut_5": _K
    + "test_the_orders_generators_help_names_the_command_that_runs_it",
    "transforms.core.families.changelog_orders.x_main__mutmut_9": _K
    + "test_the_orders_generators_help_names_the_command_that_runs_it",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_10": _K
    + "test_a_growing_releases_epochs_are_charged_to_one_parallel_growth_scope",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁobserve__mutmut_8": _K
    + "test_a_growth_trackers_observe_first_lets_time_pass_through_the_tick_before",
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ_release__mutmut_14": _K
    + "test_an_rr_collector_reads_a_layer_without_reports_as_zero_reports",
    "transforms.core.forecast.x__projected__mutmut_7": _K
    + "test_a_paired_histograms_forecast_states_the_consistent_pairs_bound_and_beta",
    "transforms.core.protocol.xǁContinualReleaseǁapply__mutmut_15": _K
    + "test_a_ledger_refusal_during_apply_finishes_the_stream_with_budget_exhausted",
    "transforms.core.protocol.xǁContinualReleaseǁ_after_release__mutmut_4": _K
    + "test_a_release_reports_its_end_once_at_the_end_tick",
    "transforms.core.families.changelog.folds.x_ceil_log__mutmut_7": _K
    + "test_ceil_log_is_the_smallest_height_whose_span_covers_n",
    "transforms.core.families.changelog.folds.x__check_shape__mutmut_19": _K
    + "test_a_bad_height_or_step_is_refused_by_its_own_name",
    "transforms.core.families.growing.black_box.xǁBBImproverOptionsǁ__post_init____mutmut_6": _K
    + "test_a_bad_height_or_step_is_refused_by_its_own_name",
    "transforms.core.families.changelog_orders.x_main__mutmut_14": _K
    + "test_the_orders_command_writes_to_the_bundled_files_path_by_default",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_after_close__mutmut_8": _K
    + "test_a_growing_releases_n_hat_records_carry_the_tick_of_their_close",
    "transforms.core.families.rr_client.xǁSurveyDesignǁ__post_init____mutmut_9": _K
    + "test_a_survey_refuses_an_epsilon_outside_0_700_and_a_k_that_is_not_an_integer",
    "transforms.core.families.rr_client.xǁAtMostKǁ__post_init____mutmut_2": _K
    + "test_a_survey_refuses_an_epsilon_outside_0_700_and_a_k_that_is_not_an_integer",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_124": _K
    + "test_a_pmwg_hard_answer_is_the_true_answer_plus_the_one_draw_at_its_coordinates",
    "transforms.core.protocol.xǁContinualReleaseǁ__init____mutmut_10": _K + "test_a_release_may_end_at_tick_one",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_30": _K
    + "test_pmwg_draws_only_at_its_documented_coordinates",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_node_coords__mutmut_5": _K
    + "test_a_changelog_answer_is_the_sum_of_its_node_answer_records",
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_between__mutmut_4": _K
    + "test_a_growing_release_answers_every_period_end_when_time_passes_without_data",
    "transforms.core.families.changelog.folds.xǁSWCROptionsǁ__post_init____mutmut_1": _K
    + "test_swcr_options_refuse_a_missing_window_or_period",
    "transforms.core.families.changelog_orders.x_main__mutmut_33": _K
    + "test_the_orders_command_writes_the_generators_default_output_by_default",
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_21": _K
    + "test_a_black_box_under_an_approx_ledger_charges_every_rerun_its_planned_eps_and_delta",
    "transforms.core.families.growing.pmwg.xǁPMWGReleaseǁ_planned_share__mutmut_3": _K
    + "test_pmwg_plans_no_cost_for_a_coordinate_that_is_not_one_of_its_rounds",
    "transforms.core.families.growing.pmwg.xǁPMWGOptionsǁ__post_init____mutmut_40": _K
    + "test_pmwg_rounds_per_phase_and_a_reports_delta_are_refused_by_name",
    "transforms.core.families.rr_client.xǁSurveyDesignǁ__post_init____mutmut_16": _K
    + "test_pmwg_rounds_per_phase_and_a_reports_delta_are_refused_by_name",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_release_node__mutmut_48": _K
    + "test_a_changelog_nodes_release_is_recorded_as_its_one_round",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_96": _K
    + "test_pmwgs_hard_count_is_the_number_of_answers_it_gave_as_hard",
    "transforms.core.families.rr_client.xǁSurveyDesignǁfrom_total__mutmut_9": _K
    + "test_a_surveys_entry_guarantee_over_all_its_reports_is_the_configured_total",
    "transforms.core.forecast.x__counters__mutmut_15": _K
    + "test_an_autos_forecast_states_no_sd_for_its_pmw_part_and_the_counters_sd_for_the_others",
    "transforms.core.protocol.xǁContinualReleaseǁapply__mutmut_16": _K
    + "test_a_ledger_refusal_during_apply_finishes_the_stream_with_budget_exhausted",
    "transforms.core.protocol.xǁContinualReleaseǁapply__mutmut_12": _K
    + "test_a_ledger_refusal_during_apply_finishes_the_stream_with_budget_exhausted",
    "transforms.core.forecast.x_release_ticks__mutmut_3": _K
    + "test_release_ticks_are_every_tick_without_periods_and_the_period_ends_with_them",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_2": _K
    + "test_a_growth_tracker_refuses_a_budget_of_zero",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_answer__mutmut_26": _K
    + "test_a_changelog_nodes_release_is_recorded_as_its_one_round",
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_11": _K
    + "test_a_growing_releases_epochs_are_charged_to_one_parallel_growth_scope",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_14": _K
    + "test_a_growing_releases_epochs_are_charged_to_one_parallel_growth_scope",
    "transforms.core.families.changelog_orders.x_main__mutmut_21": _K
    + "test_the_orders_command_writes_the_generators_default_output_by_default",
    "transforms.core.families.growing.pmwg.xǁPMWGOptionsǁ__post_init____mutmut_20": _K
    + "test_growing_options_refuse_a_fraction_that_is_not_a_number",
    "transforms.core.families.changelog.folds.xǁSWCROptionsǁ__post_init____mutmut_7": _K
    + "test_swcr_options_refuse_a_missing_window_or_period",
    "transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_6": _K
    + "test_a_refused_privacy_unit_names_exactly_the_mechanisms_that_serve_it",
    "transforms.core.forecast.x__counters__mutmut_18": _K
    + "test_an_autos_forecast_states_no_sd_for_its_pmw_part_and_the_counters_sd_for_the_others",
    "transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_1": _K
    + "test_a_horizon_shorter_than_the_release_is_refused_with_the_default_period_of_one_tick",
    "transforms.core.forecast.x_forecast__mutmut_11": _K
    + "test_a_forecast_with_periods_states_the_bounds_a_real_run_with_those_periods_carries",
    "transforms.core.forecast.x_forecast__mutmut_6": _K
    + "test_a_forecast_with_periods_states_the_bounds_a_real_run_with_those_periods_carries",
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_88": _K
    + "test_between_reruns_a_black_boxs_bound_is_its_alpha_at_half_beta_plus_the_open_epochs_bound_at_half_beta",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_choose_branching__mutmut_8": _K
    + "test_an_hdcrs_chosen_branching_stays_within_2_and_max_branching",
    "transforms.core.protocol.xǁContinualReleaseǁ_resolve_persons__mutmut_20": _K
    + "test_under_a_person_unit_a_release_without_deletions_refuses_every_delete_as_deletion_not_supported",
}

ASSERTED_BY: dict[str, str] = {}
