"""Judged survivors of the mutation round of 2026-11-27 (session 43, part c; ``benchmarks/mutation_fast.py``,
seed 20261127), merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is
either equivalent (the reason in one line) or killed since by a test that asserts a property (file::test, checked
with ``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

_K = "tests/test_mutation_kills_sample43c.py::"

EQUIVALENT: dict[str, str] = {
    # ---- open from the round of 2026-11-27 (h27mut2), judged again ----
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_next_wake__mutmut_9": (
        "period_tick <= end_tick for <: they differ only at period_tick == end_tick, which is set only by "
        "_released(t) "
        "with t >= end_tick, whose _after_release finishes the release (finished_reason set, never cleared); the "
        "only reader of _next_wake is ContinualRelease.next_wake, which returns None once finished"
    ),
    # ---- this round ----
    "transforms.core.selection.candidate.xǁNodeNoiseǁat__mutmut_37": (
        "the tree test's node cache looked up under None (never a key): every node is drawn again by self.node(key, "
        "level, index) from its own coordinates (a keyed, coordinate-addressed stream: the same value), and the cache"
        " is then rewritten for the key; the same sums, slower (a memo never found is recomputed alike)"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_after_restore__mutmut_6": (
        "pops _REUSE instead of the cache _reuse after a restore: reuse is a function of the configuration alone (the"
        " profile's reuse_count and the mechanisms' types), which a restore cannot change (the state digest binds the"
        " configuration), so a kept cache holds the same list; _reuse is in _STATE_EXCLUDE"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_148": (
        "the static outputs' start segments stored under None instead of (node, round): they only fill pairs without "
        "an n_hat output, i.e. the static-only leaves of tuned and tight (nhat_b is None only there, _round_budgets),"
        " whose planned cost returns before starts is read; every node with deletion counters logs n_hat in the same "
        "round, so starts[(i, r)] is the same"
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_166": (
        "the planned deletion-query counter's delta weight wd[3] / k for wd[2] / k: under paper wd[2] = wd[3] = 1/3; "
        "under tuned and tight the planned tree budget (the ledger budget's part) is ZCDP (part ignores w_delta), "
        "PureDP or ApproxDP(eps, 0) (delta 0): the same planned cost"
    ),
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_person__mutmut_40": (
        "bounder.persons.get(person, None) for get(person, st['bound']): persons starts as {person: st['bound']} when"
        " that is not None and bound_tick never removes a person (it only sets), so the default is read only when "
        "st['bound'] is None: the same None"
    ),
    "transforms.core.selection.answers.x__laplace_mass__mutmut_29": (
        "the histogram query set named XXopen_keysXX for open_keys: contribution_sensitivity reads its kind and "
        "columns (query_columns, query.mechanism: domain size and kind), never its name: the same multiplier"
    ),
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_19": (
        "the tracker's first theta 1 for 0 before any epoch: theta is set by _start (max(threshold, 1)) before any "
        "draw, and its only other reader, open_bound, takes max(theta, 1): the same 1 for 0 and 1"
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_84": (
        "rng.random() <= 0.85 for < 0.85 in the sample-data generator: random() returns multiples of 2^-53, so the "
        "two differ only when a draw is exactly the double 0.85 (probability 2^-53 per order; the measure-zero "
        "standard of the earlier rounds); the bundled file is the generator's default output under the mutant too "
        "(its test passes on it)"
    ),
    "transforms.core.families.changelog.releases.xǁHDCRReleaseǁ_plan__mutmut_64": (
        "HDCR's direct = True for False: direct is read only by SWCRRelease's own methods (_init_structure, "
        "_close_unit, _parts, _node_coords, lines 484-513); HDCR, a _PrefixRelease, never reads it, and it is in "
        "_STATE_EXCLUDE (recomputed by _plan on restore, never in a state)"
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ_round_budgets__mutmut_20": (
        "a leaf's static budget b_r.part(1/k, k) for part(1/k, 1/k): w_delta reaches only an (eps, delta > 0) "
        "budget's "
        "delta, and leaf_static_only is the tuned/tight profiles', whose node budgets are ZCDP (a zCDP or a Gaussian "
        "(eps, delta > 0) budget: ZCDP.part ignores w_delta), PureDP, or ApproxDP(eps, 0) (0 times k): the same budget"
    ),
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_person__mutmut_72": (
        "c[0] = 1 for c[0] += 1 (a key's contributor change when the person's count in it goes 0 -> 1): changes is "
        "per call and c[0] moves only there or at 1 -> 0, which puts the key in left, after which neither branch is "
        "taken; so the 0 -> 1 branch runs at most once, with c[0] == 0: the same value"
    ),
    "transforms.core.selection.candidate.xǁNodeNoiseǁat__mutmut_16": (
        "discrete_laplace(stream, thr) without its size 1: the sampler's size defaults to 1, the same one draw"
    ),
}

KILLED_BY: dict[str, str] = {
    # ---- open from the round of 2026-11-27 (h27mut2), killed now ----
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_closes__mutmut_21": _K
    + "test_a_segmented_period_answer_is_the_latest_close_at_or_before_its_tick",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_24": _K
    + "test_pmwg_answers_from_the_public_histogram_once_the_phases_rounds_are_used_up",
    # ---- this round ----
    "transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_29": _K
    + "test_an_rr_clients_ledger_charges_each_node_holding_a_mutation_once_at_its_coordinates",
    "transforms.core.families.local_dp.xǁRROptionsǁ__post_init____mutmut_32": _K
    + "test_rr_options_refuse_a_branching_outside_2_to_1000",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁthreshold__mutmut_4": _K
    + "test_pmwg_threshold_is_two_thirds_alpha_of_the_public_size",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_99": _K
    + "test_a_pmwg_round_spends_exactly_its_charge_half_on_the_test_half_on_the_answer",
    "transforms.core.families.growing.black_box.x_scheduler_weight__mutmut_1": _K
    + "test_scheduler_weights_default_to_the_eps_shares_and_sum_to_one",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ_draw_from__mutmut_34": _K
    + "test_growth_tracker_skip_halts_exactly_when_the_documented_test_fires",
    "transforms.core.families.changelog.releases.xǁ_PrefixReleaseǁ_prune__mutmut_3": _K
    + "test_an_hdcr_keeps_only_the_nodes_a_prefix_can_still_need",
    "transforms.core.families.changelog.folds.x_entry_sensitivity_ratio__mutmut_23": _K
    + "test_entry_sensitivity_ratio_refuses_a_mechanism_that_is_not_linear",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁhalted_bound__mutmut_23": _K
    + "test_a_halted_nodes_bound_is_a_union_over_its_possible_halting_rounds",
    "transforms.core.continual.baselines.xǁInsertionOnlyReleaseǁ_start__mutmut_10": _K
    + "test_insertion_only_charges_its_plan_and_stays_within_the_budget_over_several_query_sets",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_start__mutmut_13": _K
    + "test_the_partitioning_runs_at_the_configured_beta",
    "transforms.core.selection.release.xǁKeyContextǁ__init____mutmut_7": _K
    + "test_a_key_context_refuses_a_failure_probability_outside_0_1",
    "transforms.core.selection.params.xǁSelectionParamsǁlevels__mutmut_1": _K
    + "test_a_keys_selection_tree_spends_at_most_its_key_share_over_all_levels",
    "transforms.core.selection.params.xǁSelectionParamsǁ__post_init____mutmut_26": _K
    + "test_selection_share_must_leave_both_the_selection_and_the_answers_a_budget",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_answers__mutmut_3": _K
    + "test_a_growing_releases_answers_name_the_epochs_closed_by_their_tick",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_149": _K
    + "test_pmwg_hard_answers_bound_holds_for_its_noise",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁclosed_bound__mutmut_9": _K
    + "test_growth_tracker_closed_bound_covers_a_closed_epochs_count_noise",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_start__mutmut_1": _K
    + "test_changelog_releases_refuse_query_sets_that_are_not_additive",
    "transforms.core.families.changelog.folds.x_variance_weight__mutmut_6": _K
    + "test_variance_weight_is_how_a_nodes_noise_variance_grows_with_its_fold",
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁsize_bound__mutmut_7": _K
    + "test_a_nodes_size_bound_moves_one_for_one_with_its_released_size_above_zero",
    "transforms.core.continual.baselines.xǁTwoStreamBaselineǁ_close__mutmut_22": _K
    + "test_two_stream_bound_is_the_union_of_both_streams_at_half_beta",
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁcounter_budgets__mutmut_10": _K
    + "test_continual_count_splits_the_ledger_budget_exactly_over_its_counters",
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_57": _K
    + "test_a_finite_counter_stops_at_its_horizon_for_good",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_apply__mutmut_12": _K
    + "test_a_segmented_close_just_before_a_batch_never_counts_the_batch",
    "transforms.core.selection.params.xǁSelectionParamsǁlevel_weight__mutmut_6": _K
    + "test_a_keys_selection_tree_spends_at_most_its_key_share_over_all_levels",
    "transforms.core.selection.params.xǁSelectionParamsǁlevel_weight__mutmut_7": _K
    + "test_a_keys_selection_tree_spends_at_most_its_key_share_over_all_levels",
    "transforms.core.selection.candidate.x_key_coords__mutmut_4": _K
    + "test_open_key_coordinates_are_the_documented_marker_then_the_pair_and_never_coincide",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ_start__mutmut_35": _K
    + "test_growth_tracker_draws_only_at_its_documented_coordinates",
    "transforms.core.families.growing.pmwg.x__rows__mutmut_3": _K
    + "test_pmwg_noise_off_answers_a_count_over_several_cells_with_the_one_total",
    "transforms.core.families.changelog.folds.x_hdcr_fold__mutmut_1": _K
    + "test_hdcr_fold_defaults_to_leaves_of_one_tick_like_its_layers_and_the_dcr",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁadvance__mutmut_14": _K
    + "test_growth_tracker_chunks_tile_the_ticks_without_overlap",
    "transforms.core.families.growing.base.xǁGrowthTrackerǁthreshold_scale__mutmut_2": _K
    + "test_growth_tracker_noise_spends_exactly_its_charge_half_on_the_test_half_on_the_count",
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_27": _K
    + "test_net_change_under_an_entry_unit_charges_what_it_plans_at_the_units_sensitivity",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁnoise_profile__mutmut_1": _K
    + "test_a_nodes_noise_law_holds_its_static_releases_noise",
    "transforms.core.selection.params.xǁSelectionParamsǁcounter_budget__mutmut_12": _K
    + "test_the_selection_and_the_answers_split_the_open_key_budget_exactly",
    "transforms.core.selection.params.xǁSelectionParamsǁevent_delta__mutmut_10": _K
    + "test_the_selection_and_the_answers_split_the_open_key_budget_exactly",
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁplanned_cost__mutmut_7": _K
    + "test_every_charge_has_its_stated_plan",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁplanned_cost__mutmut_3": _K
    + "test_every_charge_has_its_stated_plan",
    "transforms.core.continual.baselines.x__infinite_counter_cost__mutmut_7": _K
    + "test_every_charge_has_its_stated_plan",
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_planned_cost__mutmut_169": _K
    + "test_every_charge_has_its_stated_plan",
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁplanned_cost__mutmut_33": _K
    + "test_every_charge_has_its_stated_plan",
    "transforms.core.families.growing.black_box.xǁBBImproverReleaseǁ_planned_weight__mutmut_6": _K
    + "test_every_charge_has_its_stated_plan",
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_planned_share__mutmut_6": _K
    + "test_every_charge_has_its_stated_plan",
}
