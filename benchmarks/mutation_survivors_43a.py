"""Judged survivors of the mutation round of 2026-11-27 (session 43, part a; ``benchmarks/mutation_fast.py``,
seed 20261127), merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is
either equivalent (the reason in one line) or killed since by a test that asserts a property (file::test, checked
with ``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_38": (
        "1 <= v for 0 <= v: as resolve_tick__mutmut_39, an item with a 0 coordinate leaves the fast path for "
        "_resolve_one, where resolve inserts a new entry without a mutation limit exactly as the fast path does: the "
        "same batch, rejections and entries, speed only"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁstream_at__mutmut_7": (
        "the per-source memo looked up under the key None, never found: as stream_at__mutmut_9, each call keys a new "
        "BLAKE2b state for head and then last: the digest of the same concatenation, the same seed, speed only"
    ),
    "transforms.core.foundation.accounting.calibration.x_rho_for_epsilon_delta__mutmut_11": (
        "the doubling goes on where zcdp_epsilon(hi, delta) equals epsilon exactly (at most one hi of the doubling "
        "sequence: a crossing point, measure zero): the bisection (100 halvings, far past float resolution) then ends"
        " on the same crossing, the same float, or where that hi is itself the crossing, hi instead of the float "
        "below it; both have zcdp_epsilon <= epsilon (the safe side), as mutation_core_survivors judges "
        "smallest_epsilon__mutmut_17"
    ),
    "transforms.core.foundation.accounting.calibration.x_gaussian_rho_for_approx_tight__mutmut_27": (
        "the doubling's stop at hi > 1,000,001 instead of 1e6: hi runs through the powers of two from 1, and the "
        "first past 1e6, 2^20 = 1,048,576, is also the first past 1,000,001: the same bracket, the same bisection"
    ),
    "transforms.core.forecast.x_forecast__mutmut_33": (
        "bound_ticks never set (the attribute looked up under another name): as x_forecast__mutmut_32, the release "
        "states its bound at every tick instead of NaN at the ticks the forecast does not read; the noise drawn and "
        "the bounds at the ticks read are the same: speed only"
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁevaluate__mutmut_3": (
        "the (synthetic) histogram kept in its own dtype instead of float64: range_answers converts it to float64 "
        "itself, and the float64 matrix times an integer vector casts it to float64 first (exact below 2^53): the "
        "same operands, the same answers"
    ),
    "transforms.core.foundation.samplers.x_dlap_integer_ratio__mutmut_23": (
        "the reference sampler's bounds array without dtype int64: np.full of a Python int t < 2^63 is int64 by "
        "default (the same array and draws); for t >= 2^63 (uint64 or object) the original raises OverflowError at "
        "np.full and the mutant at t * v (numpy refuses a Python int past int64 with an int64 array): measured, 20 "
        "seeds each of t = 2^63, 2^64 + 3, 2^70 with several s: OverflowError every time for both, and t = 2^63 - 1 "
        "is drawn (int64) by both"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁstream_at__mutmut_6": (
        "the per-source memo never read (None): every call makes a new one and keys a new BLAKE2b state for head, "
        "then last's encoding: the digest of the same concatenation, the same seed, speed only"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁstream_at__mutmut_28": (
        "None kept for a head instead of its hash state: the next call with that head finds None, keys a new state "
        "from the key and head's encoding and stores None again: the digest of the same concatenation, the same seed "
        "(one entry per head, as before), speed only"
    ),
    "transforms.core.forecast.x_forecast__mutmut_32": (
        "bound_ticks never set: the forecast's continual counter release states its bound at every tick instead of "
        "NaN at the ticks the forecast does not read; it changes neither which noise is drawn nor when (its "
        "docstring), and error_bound is a function of the counter's state: the same forecasts at the ticks read, "
        "speed only"
    ),
    "transforms.core.static.linear.xǁ_AdditiveMechanismǁrelease__mutmut_3": (
        "the calibration memo never read: every release calibrates again with _param(budget) (check_budget, then the "
        "cached _calibrated: the same value for the same budget) and builds the same term: the same noise parameter, "
        "draws and profile, speed only"
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁ_range_of__mutmut_38": (
        "start(a) >= idx moves a down also where idx is exactly the start of row a: the next step (start(a + 1) <= "
        "idx and a + 1 < d, since start(a) = idx < m) moves it back up, so the same (a, b); elsewhere the comparison "
        "is the same"
    ),
    "transforms.core.protocol.xǁContinualReleaseǁadvance__mutmut_3": (
        "advance(t) with t = last_tick returns at once: in the original it is a no-op for every registered mechanism "
        "(measured by driving every contract case of tests/test_contract.py, with and without periods: 4,584 calls "
        "after apply / advance, no answer, no event, the same state bytes); the noiseless flag it no longer sets is "
        "set again by the next apply / advance before any work"
    ),
    "transforms.core.foundation.random_stream.x_encode_coordinates__mutmut_2": (
        "the exact-type fast paths skipped (t = None): a str takes the isinstance(c, str) branch (_encode_str, the "
        "bytes the cache holds), an int the isinstance(c, (int, np.integer)) branch (b'i' + its 4-byte length + its "
        "decimal digits, the bytes of the fast path), a bool is still refused first: the same encoding, speed only"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁstream_at__mutmut_9": (
        "the per-head hash states looked up under another name, never found: each call keys a new BLAKE2b state, "
        "hashes head's encoding and then last's, the digest of the same concatenation (as stream() computes it): the "
        "same seed, speed only (the memo is replaced at every call, so it does not grow)"
    ),
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_39": (
        "the fast path refuses an item with a 0 coordinate, which then goes through _resolve_one: without a mutation "
        "limit (the only case with a fast path) resolve inserts a new entry as (item, tick, 1) with the item inserted"
        " and one update counted, as the fast path does (no tombstone exists without a limit): the same batch, "
        "rejections and entries, speed only"
    ),
    "transforms.core.foundation.entries.x__raw_key__mutmut_2": (
        "a str raw record's key (0, raw, b'XXXX') for (0, raw, b''): every str key carries the same constant third "
        "element, so two str keys still compare by their text, and keys of another kind by their first element: the "
        "same order"
    ),
    "transforms.core.foundation.state.x__instances__mutmut_37": (
        "a numpy array's {'$nd': (dtype, shape, bytes)} walked too: its values are a dtype string, a tuple of ints "
        "and bytes, none of them a dict, so no instance is created from them: the same memo, speed only"
    ),
    "transforms.core.foundation.accounting.ledger.xǁScopeǁtotal__mutmut_12": (
        "the memo of a scope's total never stored: every call builds from_vector(_total) again, the same frozen value"
        " (_total_memo is excluded from the state; the callers' 'is' checks on a spend, common.py and "
        "pipelines/outputs.py, only skip recomputing the same fields): speed only"
    ),
    "transforms.core.foundation.aggregates.x_resolve_entry__mutmut_24": (
        "valid_item(None, ...) is False: the new-entry insert shortcut is never taken and every insert goes through "
        "entries.resolve, which the shortcut copies (test_resolve_entry_equals_resolving_one_update_at_a_time): the "
        "same aggregates, rejections and count; the state is resolve's own (with the first-insertion tick / insertion"
        " count where a window or max_insertions > 1 keeps them), which resolve reads as the shortcut's 3-tuple: the "
        "same later decisions, speed only"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁdisabled__mutmut_6": (
        "another constant key for the noise-off source: its streams are disabled (every sampler returns zeros) and no"
        " release draws words from a disabled stream (partition, growing and PMW test is_disabled first; local DP has"
        " its own randbits); the key is otherwise read only by __eq__/__hash__ (two disabled sources still equal) and"
        " the fingerprint, which a disabled source's repr does not show and nothing else reads"
    ),
}

_K = "tests/test_mutation_kills_sample43a.py::"

KILLED_BY: dict[str, str] = {
    "transforms.core.static.pmw.xǁPMWMechanismǁalpha__mutmut_51": _K
    + "test_pmw_alpha_is_its_stated_bound_from_the_budget_split",
    "transforms.core.static.pmw.xǁPMWMechanismǁalpha__mutmut_10": _K
    + "test_pmw_alpha_is_its_stated_bound_from_the_budget_split",
    "transforms.core.protocol.xǁContinualReleaseǁstate_digest__mutmut_29": _K
    + "test_a_periodic_state_digest_is_the_unperiodic_ones_parts_and_the_tagged_period",
    "transforms.core.limits.x_periods_limit__mutmut_3": _K
    + "test_a_release_without_a_limited_counter_states_the_general_period_limit_and_why",
    "transforms.core.foundation.accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_24": _K
    + "test_a_mutation_window_of_zero_ticks_is_accepted_and_enforced",
    "transforms.core.foundation.accounting.ledger.xǁScopeǁcharge__mutmut_11": _K
    + "test_an_approx_ledger_refuses_a_charge_over_its_delta_with_epsilon_to_spare",
    "transforms.core.forecast.x_forecast__mutmut_85": _K
    + "test_a_projected_histograms_forecast_names_its_query_and_states_its_bound_plus_tau",
    "transforms.core.forecast.x_forecast__mutmut_82": _K
    + "test_a_projected_histograms_forecast_names_its_query_and_states_its_bound_plus_tau",
    "transforms.core.forecast.x_forecast__mutmut_73": _K
    + "test_a_projected_histograms_forecast_names_its_query_and_states_its_bound_plus_tau",
    "transforms.core.forecast.x_forecast__mutmut_71": _K
    + "test_a_projected_histograms_forecast_names_its_query_and_states_its_bound_plus_tau",
    "transforms.core.static.linear.x__calibrated__mutmut_3": _K
    + "test_a_laplace_release_at_zero_epsilon_is_refused_with_its_reason",
    "transforms.core.foundation.entries.x_resolve__mutmut_84": _K
    + "test_a_mutation_window_counts_from_the_first_insertion_whatever_the_insertion_limit",
    "transforms.core.static.pmw.xǁPMWMechanismǁ_units_param__mutmut_11": _K
    + "test_pmw_measurements_of_a_real_matrix_cost_their_share_in_lattice_units",
    "transforms.core.protocol.xǁContinualReleaseǁstate_digest__mutmut_21": _K
    + "test_a_state_digest_names_the_mechanism_the_configuration_the_end_and_the_period",
    "transforms.core.foundation.accounting.budgets.xǁZCDPǁ__post_init____mutmut_1": _K
    + "test_a_zcdp_budgets_refusals_name_rho",
    "transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_4": _K
    + "test_a_budget_profiles_partition_fraction_is_strictly_between_zero_and_one",
    "transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_11": _K
    + "test_a_budget_profiles_refusal_of_bad_weights_names_the_weights_it_refuses",
    "transforms.core.static.linear.xǁStaticMechanismǁanswer__mutmut_2": _K
    + "test_static_answers_are_real_numbers_in_answer_units_whatever_the_lattice",
    "transforms.core.foundation.entries.x_resolve__mutmut_96": _K
    + "test_a_deletion_carries_the_insertion_tick_of_the_item_it_removes",
    "transforms.core.foundation.entries.xǁMutationLimitǁ__post_init____mutmut_16": _K
    + "test_a_mutation_window_of_zero_ticks_is_accepted_and_enforced",
    "transforms.core.static.pmw.xǁPMWMechanismǁ_split__mutmut_31": _K
    + "test_pmw_gaussian_split_composes_to_its_budgets_rho",
    "transforms.core.static.pmw.xǁPMWMechanismǁ__init____mutmut_2": _K
    + "test_pmw_without_iterations_chooses_t_per_release_within_one_and_twenty",
    "transforms.core.limits.x_periods_limit__mutmut_2": _K
    + "test_a_release_without_a_limited_counter_states_the_general_period_limit_and_why",
    "transforms.core.foundation.random_stream.xǁRandomStreamǁuniform_below__mutmut_42": _K
    + "test_uniform_below_accepts_exactly_the_words_from_2_to_the_64_mod_n",
    "transforms.core.forecast.x_forecast__mutmut_75": _K
    + "test_a_projected_histograms_forecast_names_its_query_and_states_its_bound_plus_tau",
    "transforms.core.config.xǁBudgetProfileǁpaper__mutmut_35": _K
    + "test_the_paper_profile_splits_a_round_as_the_seed_eps_in_quarters_delta_in_thirds_n_hat_pure",
    "transforms.core.static.pmw.xǁPMWMechanismǁ_range_of__mutmut_26": _K
    + "test_pmw_range_index_maps_to_the_row_major_range_it_enumerates",
    "transforms.core.static.pmw.xǁPMWMechanismǁalpha__mutmut_63": _K
    + "test_pmw_alpha_is_its_stated_bound_from_the_budget_split",
    "transforms.core.foundation.state.x_open_envelope__mutmut_21": _K
    + "test_an_old_schemas_state_is_migrated_step_by_step_to_the_current_schema",
    "transforms.core.foundation.random_stream.xǁRandomStreamǁuniform_below__mutmut_41": _K
    + "test_uniform_below_accepts_exactly_the_words_from_2_to_the_64_mod_n",
    "transforms.core.config.xǁBudgetProfileǁpaper__mutmut_32": _K
    + "test_the_paper_profile_splits_a_round_as_the_seed_eps_in_quarters_delta_in_thirds_n_hat_pure",
    "transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_18": _K
    + "test_a_budget_profile_accepts_weights_up_to_one_plus_its_tolerance_and_refuses_one_ulp_more",
    "transforms.core.config.xǁDynamicConfigǁbudget_profile__mutmut_14": _K
    + "test_a_configs_level_split_uses_its_eta_when_no_horizon_is_declared",
    "transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_7": _K
    + "test_a_budget_profiles_refusal_of_bad_weights_names_the_weights_it_refuses",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {
    "transforms.core.foundation.bounds.xǁNoiseProfileǁtail_bound__mutmut_1": _K
    + "test_a_tail_bound_is_stated_only_for_a_failure_probability_inside_zero_one",
    "transforms.core.foundation.accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_47": _K
    + "test_per_window_is_refused_outside_a_person_unit_and_bounds_a_persons_group",
}
