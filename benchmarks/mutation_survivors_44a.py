"""Judged survivors of the mutation round of 2026-11-27 (session 44, group a: ``transforms/core/foundation/`` and
``limits.py``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 sampled mutants a module), merged into
``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is either equivalent (the reason in
one line) or killed since by a test that asserts a property (file::test, checked with
``python -m benchmarks.mutation_fast confirm``: passes unmutated, fails on the mutant)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.core.foundation.accounting.ledger.xǁScopeǁtotal__mutmut_3": (
        "the memo of a scope's total looked up under another name, never found: as total__mutmut_12 "
        "(mutation_survivors_43a), every call builds from_vector(_total) again, the same frozen value; speed "
        "only"
    ),
    "transforms.core.foundation.accounting.ledger.xǁScopeǁtotal__mutmut_2": (
        "the memo of a scope's total looked up under the key None, never found: as total__mutmut_3 and "
        "__mutmut_12, the same frozen value built again; speed only"
    ),
    "transforms.core.foundation.accounting.ledger.xǁScopeǁ_propagated__mutmut_7": (
        "the fallback tuple of 1.0 for a cost whose length _ZEROS lacks: every budget's vector has length 1 "
        "(eps, rho) or 2 (eps, delta), both keys of _ZEROS, so the fallback is never built"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁ__hash____mutmut_1": (
        "a constant hash: equal sources still hash equal (the hash contract); nothing reads the hash value but "
        "dict / set lookups, which stay correct (slower among many sources); no test hashes a source (no tests)"
    ),
    "transforms.core.foundation.random_stream.x__encode_str__mutmut_4": (
        "str.encode('UTF-8') for 'utf-8': Python's codec names are case-insensitive, the same codec and bytes"
    ),
    "transforms.core.foundation.random_stream.xǁRandomStreamǁuniform_below__mutmut_6": (
        "dtype.kind not in 'XXiuXX' for 'iu': a kind is one character and numpy has no kind 'X', so the test is"
        " true for exactly the same kinds (i and u)"
    ),
    "transforms.core.foundation.random_stream.xǁRandomStreamǁbernoulli__mutmut_2": (
        "np.asarray(..., dtype=None) for dtype=bool: the operand is already the bool array of the comparison "
        "uniform_below(den) < num, the same array"
    ),
    "transforms.core.foundation.samplers.x__geometric_exact__mutmut_55": (
        "100,001 walk steps for 100,000: the walk from the float guess ends within a few steps (the guess is "
        "within one of X: the 2^-30 band of geometric_inversion), so the cap (pragma: no cover) is never "
        "reached"
    ),
    "transforms.core.foundation.samplers.x__geometric_inversion_small__mutmut_49": (
        "the floor of the midpoint 2^-71 for 2^-70: u_hi = u_lo + 2^-64 * 1.0000001, so the midpoint is >= "
        "2^-65 > 2^-70 and the max never takes the floor"
    ),
    "transforms.core.foundation.samplers.x_bernoulli_exp__mutmut_29": (
        "np.array of the Python floats int(a) / int(b) without dtype=float: numpy infers float64 for a list of "
        "floats, the same array"
    ),
    "transforms.core.foundation.samplers.x__geometric_exact__mutmut_77": (
        "k += 2 where U <= q^(k+1) is decided: the walk returns only at the unique k with U <= q^k and U > "
        "q^(k+1) both decided (X); a step to k + 2 past X comes back by k -= 1 to X (U <= q^(k+1) decided), and"
        " the undecided k are only X or X + 1 (q^k 's relative spacing s/t >= 2^-52 is far above the "
        "10^(5-prec) band), which both walks must evaluate before returning, so they refine (draw words) at the"
        " same points: the same X and the same words drawn"
    ),
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_53": (
        "the delete fast path never taken: a delete goes through _resolve_one / resolve, which without a "
        "mutation limit removes the live entry and appends (item, insertion tick) as the fast path does, or "
        "refuses an unknown entry as unknown_entry (where the fast path falls through to it anyway): the same "
        "batch and rejections, speed only (as resolve_tick__mutmut_16)"
    ),
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_14": (
        "the fast path never taken (type(None) is never Update): every update goes through resolve, whose "
        "decisions the fast path copies (as resolve_tick__mutmut_16, mutation_core_survivors): the same batch "
        "and rejections, speed only"
    ),
    "transforms.core.foundation.aggregates.x_resolve_entry__mutmut_8": (
        "plain_id always False: both shortcuts (insert of a new entry, delete of a live one) skipped, every "
        "update goes through resolve, which the shortcuts copy (as resolve_entry__mutmut_24, "
        "mutation_survivors_43a: the same aggregates, rejections and count; resolve's own state, read by "
        "resolve the same way); speed only"
    ),
    "transforms.core.foundation.bounds.x__packed__mutmut_15": (
        "the double-checked lookup under the lock made with the key None (never found): single-threaded the "
        "outer lookup already missed, the same registration; under a race a term may get a second id, which "
        "maps to the same term: a cache key differs, the computed bound is the same; speed only"
    ),
    "transforms.core.foundation.noise.xǁNoiseSourceǁstream_at__mutmut_23": (
        "the per-source memo of head states cleared past 1,025 heads instead of 1,024: a kept state is only "
        "copied, a dropped one rebuilt from the same key and head: the same seeds; memory only"
    ),
    "transforms.core.foundation.state.x__instances__mutmut_36": (
        "'or' for 'and': a {'$nd': ...} or {'$r': ...} node is walked too; as _instances__mutmut_37 "
        "(mutation_survivors_43a), their values are a dtype string, a shape tuple of ints and bytes, or an int "
        "reference, none a dict: no instance is created from them, speed only"
    ),
    "transforms.core.foundation.state.xǁ_Restoreǁinstance__mutmut_10": (
        "indexed = None for True: a later forward reference walks the data again with _instances, which creates"
        " an instance only for an id not yet in the memo: the same objects, speed only"
    ),
    "transforms.core.foundation.bounds.x_tail_bounds__mutmut_34": (
        "'|' for '&' with the row's count sum == 1: a sum of 1 over non-negative counts is one term of count 1 "
        "(already single or, for a Gaussian term, already scalar), so the change is a row of one Laplace term "
        "of count > 1 taking NoiseProfile.tail_bound: its _newton_rows on that one column instead of on all "
        "columns, where the row's other columns have count 0 and weight 0 and add exact zeros to every row sum "
        "(a sum with one non-zero element is that element in any grouping): the same bound"
    ),
    "transforms.core.foundation.accounting.ledger.xǁScopeǁ__init____mutmut_10": (
        "closed = None for False: the flag is only read for its truth (if self.closed, in child and charge) and "
        "close() sets it True; the state holds None for False and restores it, read the same way (as lattice "
        "_encode__mutmut_25's _float_mode, mutation_core_survivors)"
    ),
}

_K = "tests/test_mutation_kills_sample44a.py::"

KILLED_BY: dict[str, str] = {
    "transforms.core.foundation.accounting.budgets.xǁApproxDPǁas_zcdp__mutmut_6": _K
    + "test_an_eps_zero_delta_cost_is_charged_to_a_zcdp_ledger_as_the_pure_step_it_is",
    "transforms.core.foundation.accounting.ledger.xǁScopeǁcharge__mutmut_13": _K
    + "test_a_ledger_accepts_a_charge_up_to_its_cap_plus_the_tolerance_and_refuses_one_ulp_more",
    "transforms.core.foundation.bounds.x_tail_bounds__mutmut_3": _K
    + "test_tail_bounds_refuses_a_failure_probability_outside_zero_one_whatever_the_rows",
    "transforms.core.foundation.bounds.x__packed__mutmut_20": _K
    + "test_a_profile_with_more_terms_than_the_cache_key_holds_still_states_its_sub_gaussian_bound",
    "transforms.core.foundation.entries.x_update_order__mutmut_2": _K
    + "test_update_order_is_a_total_order_on_the_items_too",
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_keyed__mutmut_21": _K
    + "test_resolve_keyed_rejects_a_malformed_pair_and_applies_the_rest_of_the_tick",
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_keyed__mutmut_6": _K
    + "test_resolve_keyed_rejects_a_malformed_pair_and_applies_the_rest_of_the_tick",
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_29": _K
    + "test_resolve_tick_refuses_an_item_of_the_wrong_length",
    "transforms.core.foundation.entries.xǁDeletionsRefusedǁ__eq____mutmut_6": _K
    + "test_deletions_refused_equals_false_and_the_refusal_of_the_same_reason",
    "transforms.core.foundation.noise.xǁNoiseSourceǁfrom_file__mutmut_4": _K
    + "test_a_key_file_is_read_as_ascii_hex_whatever_the_locale",
    "transforms.core.foundation.noise.xǁReleaseIdentityǁnew__mutmut_1": _K
    + "test_a_release_continued_by_its_id_alone_draws_the_noise_of_the_release_it_continues",
    "transforms.core.foundation.accounting.units.xǁSeriesSplitǁ__post_init____mutmut_19": _K
    + "test_a_finite_split_over_one_use_gives_it_the_whole_budget",
    "transforms.core.foundation.accounting.units.xǁSeriesSplitǁ__post_init____mutmut_20": _K
    + "test_a_finite_split_over_one_use_gives_it_the_whole_budget",
    "transforms.core.foundation.accounting.budgets.x_zcdp_to_approx__mutmut_5": _K
    + "test_a_zcdp_conversions_refusal_names_rho",
    "transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_1": _K
    + "test_a_zero_tight_gaussian_spend_states_delta_zero_at_every_epsilon",
    "transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_14": _K
    + "test_a_tight_gaussian_delta_includes_the_lattice_factor_and_the_float_margin",
    "transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_15": _K
    + "test_a_tight_gaussian_delta_includes_the_lattice_factor_and_the_float_margin",
    "transforms.core.foundation.accounting.calibration.x_tight_gaussian_epsilon__mutmut_4": _K
    + "test_a_tight_gaussian_epsilon_is_stated_only_for_a_delta_inside_zero_one",
    "transforms.core.foundation.samplers.x__band__mutmut_14": _K
    + "test_bernoulli_exp_decides_the_lowest_word_exactly_where_exp_minus_x_is_tiny",
    "transforms.core.foundation.state.x_encode__mutmut_5": _K + "test_state_bytes_are_the_pickle_protocol_4_stream",
    "transforms.core.foundation.accounting.budgets.x_to_approx__mutmut_1": _K
    + "test_to_approx_states_a_zcdp_budget_at_the_target_delta",
    "transforms.core.foundation.accounting.budgets.x_zcdp_to_approx__mutmut_9": _K
    + "test_a_zcdp_conversion_is_refused_at_delta_zero_or_one",
    "transforms.core.foundation.accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_54": _K
    + "test_a_person_unit_needs_a_number_of_mutations_even_with_a_window",
    "transforms.core.foundation.accounting.units.xǁPrivacyUnitǁdescribe__mutmut_19": _K
    + "test_an_entry_units_description_states_its_mutation_window",
    "transforms.core.foundation.accounting.units.xǁSeriesSplitǁ__post_init____mutmut_9": _K
    + "test_only_a_zeta_split_needs_a_positive_eta",
    "transforms.core.foundation.aggregates.x_fold__mutmut_8": _K
    + "test_folding_two_batches_of_one_tick_adds_their_inserts_deletions_and_counts",
    "transforms.core.foundation.entries.x_static_reason__mutmut_11": _K
    + "test_an_unknown_op_is_refused_as_such_even_without_an_entry_id",
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_15": _K
    + "test_resolve_tick_refuses_a_look_alike_update_and_a_delete_of_an_unknown_entry",
    "transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_58": _K
    + "test_resolve_tick_refuses_a_look_alike_update_and_a_delete_of_an_unknown_entry",
    "transforms.core.foundation.samplers.x_geometric_inversion__mutmut_68": _K
    + "test_geometric_inversion_is_exact_for_a_word_just_above_q",
    "transforms.core.foundation.state.x_state_class__mutmut_6": _K
    + "test_a_state_class_registered_later_round_trips_its_plain_fields_as_they_are",
}

# killed in the run by a crash only and in a privacy or bound function: the property test that kills it by an
# assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
