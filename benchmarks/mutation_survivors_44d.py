"""Judged survivors of the mutation round of session 44, group d (``transforms/core/contribution/`` and
``transforms/core/selection/``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 sampled mutants a module, issue 27),
merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is either equivalent
(the reason in one line) or killed since by a test that asserts a property (file::test, checked with
``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

_K = "tests/test_mutation_kills_sample44d.py::"

EQUIVALENT: dict[str, str] = {
    "transforms.core.selection.candidate.xǁNodeNoiseǁnode__mutmut_7": (
        "the node's sampler called without its size 1: discrete_laplace and discrete_gaussian both default to size 1,"
        " the same one draw from the same stream (as candidate.xǁNodeNoiseǁat__mutmut_16, round 43)"
    ),
    "transforms.core.selection.keys.x__rank__mutmut_2": (
        "an op outside insert / upsert / delete ranked None instead of 3: the pairs sorted are those "
        "PersonBounder.bound_tick accepted, whose contract is a known op (static_reason None; the Beam path refuses "
        "any other op as unknown_op in transforms/validate.py first), and _OP_RANK.get returns its default for no "
        "known op"
    ),
    "transforms.core.selection.release.x_advance_key__mutmut_72": (
        "the selected key's first batch called with d_live 1 for 0: the SelectedKey branch of advance_key reads "
        "d_entries only (a selected key's counter counts live entries; contributors are the candidate's test), the "
        "same batch, answer and state"
    ),
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_person__mutmut_24": (
        "the bounder's persons {person: None} instead of {} for a person without a bounder state: bound_person reads "
        "persons.get(person), None either way (a new person), bound_tick stores only a state with entries, and "
        "bound_state = persons.get(person, st['bound']) is that state or None both ways"
    ),
    "transforms.core.selection.candidate.xǁNodeNoiseǁat__mutmut_42": (
        "the tree test's node cache never read (every node drawn again): self.node draws from the node's own keyed "
        "coordinates (select_coords), a fresh stream each call, so the same value (as at__mutmut_37, round 43); the "
        "cache is rewritten with the same values: the same sums, slower"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_112": (
        "the histogram pattern's ops hint None for '': _lifecycle reads the hint only in ops_hint == 'alive', False "
        "for both: the same pattern"
    ),
    "transforms.core.contribution.bounding.x__id_key__mutmut_2": (
        "every entry id keyed as a string, (0, id): the ids bound_person orders are strings on every path, so the "
        "non-string branch is never taken: the Beam person step's input passed PersonUpdateCheck (validate.py refuses"
        " an entry id that is not a non-empty str as malformed), and PersonBounder.bound_tick's contract (the in-"
        "memory core) is a string entry id (static_reason of the registry None, which refuses any other id); for a "
        "str, isinstance is True both ways: the same keys, the same order"
    ),
    "transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_12": (
        "q from 0 instead of 1: q = 0 adds one candidate, chain_bound(model, 0, False) (0, the empty path) or 0 * n2 "
        "unbounded, plus a slack of C(0, 2) = 0 pairs: (0, ...), never above best (starts at 0, replaced only by a "
        "strictly larger value): the same result"
    ),
    "transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_8": (
        "best starts at (1, True, ()) instead of (0, ...): with r >= 1 the q = 1 candidate is S(T) >= kappa_0^2 = "
        "2^40 (finite) or n2 >= 2^40 (unbounded), strictly above 1 and 0, so it replaces the start either way and the"
        " loop goes on identically"
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_90": (
        "break for continue in the forward pass when pv is None or hi < plo: every layer is a set of cells of one "
        "hierarchy (identical initial splits, every surviving cell halved each round), in increasing order, and no "
        "fwd value is ever None (layer 0 never; a layer-i cell kept has its argmax predecessor J* kept, since f_J* + "
        "b_J* >= f_I + b_I > cut, and J* is the cell itself or lies before it, so each half has a predecessor "
        "starting at or below its end), so only hi < plo breaks, and every later cell of the previous layer starts "
        "further right: the same skips (checked: no None in 96 searches, T up to 1000, closed 1-6)"
    ),
    "transforms.core.selection.candidate.xǁNodeNoiseǁat__mutmut_6": (
        "the sparse-vector threshold noise's memo never read: rho is drawn again from svt_coords(key), a fresh keyed "
        "stream, the same value (and stored again): the same test, slower"
    ),
    "transforms.core.selection.release.x_advance_key__mutmut_61": (
        "the selected key's first batch called with key None: the SelectedKey branch of advance_key never reads key "
        "(its counter was built with the key's coordinates by ctx.counter(key, p)): the same batch and answer"
    ),
    "transforms.core.selection.release.xǁKeyContextǁbound__mutmut_18": (
        "the bounds memo cleared past 4097 entries instead of 4096: it only caps the memory of a pure memo (each "
        "value is the counter's error_bound(beta) + 1/2 for its public (period, steps)); a cleared entry is computed "
        "again alike: the same bounds"
    ),
    "transforms.core.contribution.harness.x__run__mutmut_22": (
        "the logged values read without dtype float64: every release_log writer logs float64 arrays (counters/base.py"
        " logs mechanism.answer, np.asarray(values, dtype=float), the only answer of the static mechanisms; "
        "lattice.py yhat * g and kary_signed.py vals are float64), so np.asarray keeps float64: the same lattice "
        "values"
    ),
    "transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_33": (
        "chain_bound(model, 0, rtol) for (model, 0, True, rtol) in the finite-horizon q = 1 case: open_ is rtol "
        "(1e-3, truthy) and rtol the default; with closed = 0 and a finite horizon chain_bound returns "
        "ChainBound(S(T), S(T), (0,), True) if open_ else 0, reading open_ only for its truth and rtol not at all: "
        "the same bound"
    ),
    "transforms.core.selection.answers.x__laplace_mass__mutmut_30": (
        "the histogram query set named OPEN_KEYS for open_keys: contribution_sensitivity reads its kind and columns "
        "(query_columns: query.mechanism, the domain size and kind), never its name: the same multiplier (as "
        "_laplace_mass__mutmut_29, round 43)"
    ),
    "transforms.core.contribution.sensitivity.x_noise_multiplier__mutmut_8": (
        "noise_multiplier passes radices=None instead of the caller's: in contribution_sensitivity the k-ary tree's "
        "radices set only its levels (update_level) and top nodes (exact, pattern); the multiplier is m_entry = CM / "
        "l1 (change_mass, no radices) times the entries: the same multiplier, which is all noise_multiplier returns "
        "(the horizon check comes before the radices)"
    ),
    "transforms.core.contribution.bounding.xǁPersonBounderǁbound_tick__mutmut_9": (
        "the in-memory updates' seq 1 instead of 0: every update of bound_tick gets the same seq, so order_key (tick,"
        " event time, seq, op rank, item, raw, entry id) orders them alike; bound_person reads value[0] (tick) and "
        "value[2] (op), bound_tick value[6] (position), none reads value[1]: the same decisions and state"
    ),
    "transforms.core.contribution.harness.x_neighbour_loss__mutmut_24": (
        "the noisy values read without dtype=object: an int64 array (they come from _run's int64 lattice) minus an "
        "object array is computed by numpy's object loop, which casts the int64 elements to Python ints: exact at any"
        " size (measured: 2^62 + 5 - (-2^62) = 2^63 + 5), the same noise per coordinate, compared alike"
    ),
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_20": (
        "the second run's values without dtype=object: as x_privacy_loss__mutmut_16 (the first run's, judged in round"
        " 27), an object array minus an int64 array runs numpy's object loop on the int64 elements cast to Python "
        "ints: exact at any size (measured: differences past 2^63 exact), the same diff"
    ),
    "transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_9": (
        "best starts at (0, False, ()) instead of (0, True, ()): with r >= 1 the q = 1 candidate is S(T) >= kappa_0^2"
        " = 2^40 > 0 (finite) or n2 > 0 (unbounded), so it replaces the start whatever its flag (as "
        "alternating_bound__mutmut_8): the same result"
    ),
    "transforms.core.selection.candidate.xǁNodeNoiseǁat__mutmut_27": (
        "the sparse vector's query noise drawn without its size 1: discrete_laplace defaults to size 1, the same one "
        "draw from the same stream (as at__mutmut_16, round 43)"
    ),
    "transforms.core.contribution.harness.x_neighbour_loss__mutmut_32": (
        "the second input's noisy values read with dtype None: an int64 array (from _run's int64 lattice) minus an "
        "object array runs numpy's object loop on the int64 elements cast to Python ints, exact at any size (as "
        "neighbour_loss__mutmut_24): the same noise, compared alike"
    ),
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_14": (
        "the first run's values read with dtype None instead of object: the same array as x_privacy_loss__mutmut_16 "
        "(without dtype, judged in the second round of 2026-11-27): int64 minus object runs numpy's object loop on "
        "Python ints, exact at any size"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_149": (
        "the one-row sum's Gaussian pattern built by _lifecycle(None, ...) for ('linear', ...): _lifecycle takes its "
        "count branch only for kind 'count' or hint 'alive' and its histogram branch for 'histogram'; None, like "
        "'linear', falls to the one-row branch: the same pattern"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_85": (
        "a count's Gaussian pattern with hint 'ALIVE' for 'alive': _lifecycle's count branch is kind == 'count' or "
        "hint == 'alive', and the kind is 'count': the same alternating pattern"
    ),
    "transforms.core.contribution.units.xǁContributionUnitǁgroup_size__mutmut_3": (
        "the update unit's early return never taken ('UPDATE'): the general formula gives entries() * (2 * mutations "
        "- 1) = 1 * (2 * 1 - 1) = 1 for kind 'update' (entries is 1 for a non-person, mutations 1 for an update): the"
        " same group size"
    ),
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_person__mutmut_169": (
        "the person state's refused entry ids sorted by value instead of repr: the list is only read back as a set "
        "(bounded = set(st.get('refused', ()))), and entry ids are non-empty strings (validated; PersonBounder's "
        "contract), which sort either way without error: the same set, the same decisions"
    ),
    "transforms.core.contribution.harness.x__run__mutmut_24": (
        "the logged values read without a dtype (as _run__mutmut_22, dtype None): every release_log writer logs "
        "float64 arrays, which np.asarray keeps as they are: the same lattice values"
    ),
    "transforms.core.contribution.trees.x__mass__mutmut_29": (
        "cand >= nxt.get(key, (-1, 0)) for >: they differ only when cand equals the stored tuple (mass, -changes), "
        "which is then replaced by an equal tuple: the same table, the same result"
    ),
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_tick__mutmut_28": (
        "the 'refused' list left out of the keep condition: it is non-empty only after an insertion refused "
        "contribution_bounded by _reason, i.e. with the person's K >= 1 slots taken, so keys or left is non-empty too"
        " and the state is kept either way"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_252": (
        "the Laplace pattern's hint tested against 'XXcountXX' for 'count': for a count query the hint is then '' (or"
        " 'alive' for one column), and _lifecycle takes its alternating branch on kind == 'count' itself whatever the"
        " hint: the same pattern"
    ),
    "transforms.core.contribution.trees.x_change_costs__mutmut_7": (
        "the columns read without dtype int64: every caller passes query_columns' int64 array (sensitivity.py twice, "
        "trees.change_mass with the same array), which np.asarray keeps as it is: the same norms"
    ),
}

KILLED_BY: dict[str, str] = {
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_tick__mutmut_32": _K
    + "test_a_person_whose_updates_are_all_refused_keeps_no_key_state",
    "transforms.core.selection.release.xǁOpenKeyReleaseǁstep__mutmut_32": _K
    + "test_an_open_key_release_takes_keys_of_any_coordinate_type_in_the_canonical_order",
    "transforms.core.selection.release.xǁOpenKeyReleaseǁ__init____mutmut_8": _K
    + "test_a_cap_of_one_released_key_is_accepted_and_releases_one_key_for_good",
    "transforms.core.selection.candidate.x_new_candidate_state__mutmut_1": _K
    + "test_a_new_candidate_state_is_a_versioned_state_its_readers_accept",
    "transforms.core.selection.release.x_advance_key__mutmut_55": _K
    + "test_a_selected_keys_live_entries_are_its_counters_input_and_its_noise_off_answer",
    "transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_59": _K
    + "test_an_alternating_bound_from_four_toggles_is_the_chain_plus_lemma_p_allowance_and_bounds_every_path",
    "transforms.core.contribution.units.xǁContributionUnitǁof__mutmut_11": _K
    + "test_a_configured_entry_unit_contributes_its_insertion_limit",
    "transforms.core.selection.keys.x__rank__mutmut_3": _K
    + "test_a_persons_updates_of_one_tick_are_decided_inserts_first_then_upserts_then_deletes",
    "transforms.core.selection.params.xǁSelectionParamsǁ__post_init____mutmut_21": _K
    + "test_a_selection_over_a_horizon_of_one_period_is_accepted_and_tested_once",
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_303": _K
    + "test_a_sensitivitys_account_says_exact_only_for_an_attained_bound",
    "transforms.core.contribution.bounding.x__check__mutmut_10": _K
    + "test_a_person_state_of_another_shape_is_refused_naming_its_type_only",
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_210": _K
    + "test_a_chain_search_stops_for_work_only_past_its_budget",
    "transforms.core.selection.answers.x__gaussian_key_multiplier__mutmut_36": _K
    + "test_the_answers_multiplier_is_the_largest_over_every_counter_horizon_from_one",
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_12": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_250": _K
    + "test_an_exact_laplace_bound_is_attained_by_its_pattern",
    "transforms.core.selection.candidate.x_svt_coords__mutmut_14": _K
    + "test_the_sparse_vectors_noise_is_drawn_at_the_keys_documented_coordinates",
    "transforms.core.selection.candidate.x_svt_coords__mutmut_15": _K
    + "test_the_sparse_vectors_noise_is_drawn_at_the_keys_documented_coordinates",
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_2": _K
    + "test_an_open_key_state_reader_refuses_other_versions_and_reads_what_the_writer_wrote",
    "transforms.core.selection.release.x_key_state_to_plain__mutmut_10": _K
    + "test_an_open_key_state_reader_refuses_other_versions_and_reads_what_the_writer_wrote",
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_318": _K
    + "test_a_person_sensitivity_states_its_entries_group_and_account",
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_320": _K
    + "test_a_person_sensitivity_states_its_entries_group_and_account",
    "transforms.core.contribution.bounding.x_bound_person__mutmut_17": _K
    + "test_which_entry_a_person_keeps_at_the_limit_does_not_depend_on_the_order_of_lines",
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_227": _K
    + "test_a_chain_search_stopped_past_its_work_budget_still_bounds_every_pattern",
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_33": _K
    + "test_an_empty_chain_is_worth_nothing_and_an_open_visit_alone_its_column",
    "transforms.core.contribution.trees.x_kary_top_nodes__mutmut_3": _K
    + "test_a_kary_trees_released_top_nodes_are_the_complete_ones",
    "transforms.core.selection.candidate.x_svt_coords__mutmut_13": _K
    + "test_the_sparse_vectors_noise_is_drawn_at_the_keys_documented_coordinates",
    "transforms.core.selection.keys.x__rank__mutmut_1": _K
    + "test_a_persons_updates_of_one_tick_are_decided_inserts_first_then_upserts_then_deletes",
    "transforms.core.selection.release.x_advance_key__mutmut_35": _K
    + "test_a_candidate_whose_counts_reach_zero_is_evicted_not_selected",
    "transforms.core.contribution.bounding.xǁPersonBounderǁ__init____mutmut_3": _K
    + "test_the_in_memory_bounder_enforces_its_limit_per_window",
    "transforms.core.selection.candidate.xǁNodeNoiseǁ__init____mutmut_4": _K
    + "test_a_tree_tests_nodes_are_drawn_from_the_selection_noise_at_their_coordinates",
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_26": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
    "transforms.core.selection.release.x_key_state_to_plain__mutmut_4": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
    "transforms.core.selection.release.x_key_state_to_plain__mutmut_8": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
    "transforms.core.contribution.sensitivity.x_group_noise_multiplier__mutmut_1": _K
    + "test_group_privacys_noise_multiplier_is_g_wherever_the_budget_scales_linearly",
    "transforms.core.contribution.bounding.xǁPersonBounderǁlimit__mutmut_2": _K
    + "test_the_in_memory_bounder_enforces_its_limit_per_window",
    "transforms.core.contribution.bounding.x__check__mutmut_26": _K
    + "test_a_person_state_of_another_shape_is_refused_naming_its_type_only",
    "transforms.core.selection.candidate.xǁNodeNoiseǁforget__mutmut_1": _K
    + "test_a_key_context_that_does_not_remember_holds_no_node_noise_after_its_keys",
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_187": _K
    + "test_a_small_horizons_chain_search_converges_to_a_pattern_it_attains",
    "transforms.core.selection.params.x_dyadic_nodes__mutmut_16": _K
    + "test_the_dyadic_nodes_of_a_period_partition_one_to_p",
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_235": _K
    + "test_an_early_stopped_chain_search_never_states_more_than_lemma_ms_cap",
    "transforms.core.contribution.toeplitz.x_layer_cake_bound__mutmut_52": _K
    + "test_the_layer_cake_bound_of_a_negated_query_is_the_querys",
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_6": _K
    + "test_privacy_loss_takes_coordinates_of_any_types_in_a_canonical_order",
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_5": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
    "transforms.core.selection.answers.x__laplace_mass__mutmut_8": _K
    + "test_the_joint_l1_accounts_counter_is_the_one_the_selected_keys_use",
    "transforms.core.selection.candidate.x_svt_coords__mutmut_12": _K
    + "test_the_sparse_vectors_noise_is_drawn_at_the_keys_documented_coordinates",
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_21": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
    "transforms.core.contribution.trees.x_change_costs__mutmut_2": _K + "test_change_costs_default_to_the_l1_norm",
    "transforms.core.selection.release.x_advance_key__mutmut_24": _K
    + "test_a_persons_return_to_a_key_they_left_is_counted_in_its_entries_not_its_contributors",
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_14": _K
    + "test_a_zcdp_loss_at_its_budget_to_the_tolerance_is_within_it_and_one_ulp_more_is_not",
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_234": _K
    + "test_an_early_stopped_chain_search_never_states_more_than_lemma_ms_cap",
    "transforms.core.contribution.units.xǁContributionUnitǁof__mutmut_3": _K
    + "test_a_configured_update_unit_contributes_one_update",
    "transforms.core.selection.release.x_key_state_from_plain__mutmut_18": _K
    + "test_a_selected_keys_plain_state_round_trips_and_the_key_goes_on_as_if_never_stored",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
