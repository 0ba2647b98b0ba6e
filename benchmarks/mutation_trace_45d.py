"""The differential trace of the crash-killed mutants of group d (``transforms/core/contribution/`` and
``transforms/core/selection/``; issue 27, session 45): every mutant of the group whose trace verdict
(``benchmarks/mutation_runs/s45/d/trace.json``, ``python -m benchmarks.mutation_trace``) is not ``raises``, judged.

``READ[name] = (category, reason)``, category one of

* ``asserted-existing``: a covering test fails on it by an assertion without the trace's wrapper (``--plain``,
  ``benchmarks/mutation_runs/s45/d/plain.json``);
* ``loud``: the wrong value cannot leave the library without raising (the reason says where and what);
* ``spurious``: an artefact of the trace (the reason says which);
* ``asserted``: a new test (``ASSERTED_BY``, in ``tests/test_mutation_kills_trace45d.py``) kills it by an assertion on
  the property, confirmed with ``python -m benchmarks.mutation_fast confirm``
  (``benchmarks/mutation_runs/s45/d/fast.confirmed.json``).

Traced: 312 of the group's 478 crash-killed mutants (every one of loss, sensitivity, toeplitz, trees, units, answers,
params and bounding, traced first as the privacy and bound functions); not traced in time: the 166 of harness,
candidate, release and keys (``benchmarks/mutation_runs/s45/d/untraced.txt``); one of them read ahead and asserted
(``OpenKeyRelease.__init____mutmut_49``). The lead aggregates this file with the other four groups'."""

from __future__ import annotations

_T = "tests/test_mutation_kills_trace45d.py::"
_B = "transforms.core.contribution.bounding."
_PB = _B + "xǁPersonBounderǁ"
_P = "transforms.core.selection.params.xǁSelectionParamsǁ"

READ: dict[str, tuple[str, str]] = {
    _PB + "__init____mutmut_4": (
        "loud",
        "persons None: bound_tick, its only reader, raises AttributeError at persons.get on the first tick (the"
        " protocol builds the bounder when it first calls bound_tick, so a state with None is never stored);"
        " PersonKeys replaces persons with a dict before every call",
    ),
    _PB + "bound_tick__mutmut_31": (
        "asserted",
        "a refused pair replaced by None in the dead letters: the protocol's and the Beam open-key step's unpacking"
        " raise, but OpenKeyRelease.step returns it in PeriodRelease.refused",
    ),
    "transforms.core.contribution.loss.x_privacy_loss__mutmut_31": (
        "asserted-existing",
        "by_query keyed by the whole coordinates instead of the query name (the totals right): killed by an"
        " assertion of tests/test_mutation_kills_sample44d.py::"
        "test_privacy_loss_takes_coordinates_of_any_types_in_a_canonical_order"
        " (written after round 44's test map, so not run by the trace; confirmed with mutation_fast confirm)",
    ),
    "transforms.core.contribution.sensitivity.x_calibrated_budget__mutmut_20": (
        "asserted",
        "a tight Gaussian account's share calibrated as a plain ZCDP of the same rho (less noise than the tight"
        " account's sigma^2 >= Delta^2 / (2 rho) + tau^2 states); the covering tests crashed later (ValueError)",
    ),
    _B + "x_bound_person__mutmut_27": (
        "loud",
        "an unknown-entry decision replaced by None (the state right): both callers unpack every decision"
        " (PersonBounder.bound_tick, transforms/person.py _DecideFn.decide): TypeError",
    ),
    _B + "x_bound_person__mutmut_47": (
        "loud",
        "an admitted insertion's decision replaced by None (the state right): both callers unpack every decision"
        " (PersonBounder.bound_tick, transforms/person.py _DecideFn.decide): TypeError",
    ),
    _B + "x_bound_person__mutmut_49": (
        "loud",
        "a bounded insertion's decision replaced by None (the state right): both callers unpack every decision"
        " (PersonBounder.bound_tick, transforms/person.py _DecideFn.decide): TypeError",
    ),
    "transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_18": (
        "asserted-existing",
        "an (eps, delta > 0) budget judged as pure (a Gaussian loss never within):"
        " tests/test_mutation_kills_sample27b.py::test_within_holds_each_budgets_route_at_its_allowance"
        " fails by an AssertionError (confirm, no wrapper)",
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_317": (
        "asserted",
        "Sensitivity.group_size None (the comparison figure of plans and manifests; method's text right): no library"
        " reader, so nothing raises where it is published",
    ),
    "transforms.core.contribution.toeplitz.x__point__mutmut_11": (
        "loud",
        "a None position: _point's only caller, chain_bound, passes the points to _Evaluator.value at once"
        " (t - None: TypeError) before any bound is returned",
    ),
    "transforms.core.contribution.toeplitz.x__split__mutmut_17": (
        "asserted",
        "interval cuts outside (lo, hi): IndexError past the coefficients on most horizons, but at T = 17 (two closed"
        " visits and an open one) a bound 9.5% above the truth, not exact: a larger multiplier, more noise",
    ),
    "transforms.core.contribution.toeplitz.x_alternating_bound__mutmut_74": (
        "loud",
        "returns None (r = 1; r >= 2 raises at best[0]): every caller unpacks the triple (contribution_sensitivity,"
        " histogram_bound's caller, layer_cake_bound) or indexes it ([2]): TypeError",
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_206": (
        "loud",
        "stop test upper <= best / (1 + rtol): the search refines past certification; once every interval is dropped"
        " max(ends) raises ValueError, and where it stops otherwise its bound is still certified (max of the"
        " remaining boxes and the dropped ones, Lemma M), only tighter: no wrong value leaves it",
    ),
    "transforms.core.contribution.trees.x__mass__mutmut_34": (
        "asserted",
        "the search's default (+1, 0): a count's change mass 0, its multiplier 0 in a"
        " Sensitivity and a plan; calibrated_budget raises only when a counter is built",
    ),
    "transforms.core.contribution.trees.x_change_costs__mutmut_8": (
        "asserted",
        "norm != 'l1': l1 raises, but l2sq returns the L1 norm (the Gaussian update level"
        " sqrt(n2 l2sq) of a linear query with entries above 1 wrong)",
    ),
    _P + "counter_budget__mutmut_12": (
        "asserted",
        "the tree test's node delta 2 s delta for s delta / 2: rho_for_approx of a larger"
        " delta, less selection noise; only the ledger's cap raised",
    ),
    _P + "event_delta__mutmut_10": (
        "asserted",
        "delta_event = delta / s / half: a larger event delta and key delta (lower"
        " thresholds); only the ledger's cap raised",
    ),
    _P + "level_weight__mutmut_10": (
        "asserted",
        "1 / ((l + 1)(l - 2)): negative weights at levels 0, 1 (raise), but levels >= 3"
        " get 1 / ((l + 1)(l - 2)) > 1 / ((l + 1)(l + 2)): at p = 8 (one level-3 node) less noise than the share",
    ),
    "transforms.core.contribution.toeplitz.x_chain_bound__mutmut_207": (
        "loud",
        "stop test upper <= best (1 - rtol), as _206: refines past certification, max(ends) of no interval raises"
        " ValueError, and a bound returned otherwise is still certified (only tighter)",
    ),
    "transforms.core.contribution.toeplitz.x_toeplitz_model__mutmut_39": (
        "loud",
        "a finite model's kappa None (n2, s1 right): every reader of kappa raises TypeError (_Evaluator's"
        " cumsum, window's len); the update unit and r = 0 read n2 only, which is right",
    ),
    "transforms.core.contribution.toeplitz.xǁ_Evaluatorǁ__init____mutmut_9": (
        "loud",
        "the evaluator's cache None: F's first call raises AttributeError (cache.get); S, the only method"
        " without it (chain(0, open)), is right",
    ),
    "transforms.core.contribution.trees.x_change_costs__mutmut_11": (
        "loud",
        "the L1 insert cost None: both readers raise TypeError (contribution_sensitivity's levels * l1,"
        " _mass's m + cost at the first insertion)",
    ),
    "transforms.core.contribution.trees.x_change_costs__mutmut_19": (
        "loud",
        "the l2sq insert cost None: its only reader, contribution_sensitivity's model.n2 * l2sq, raises TypeError",
    ),
    "transforms.core.contribution.trees.x_change_costs__mutmut_45": (
        "loud",
        "move None: two or more columns raise at max(None, int); for one column its only reader, _mass, raises"
        " at move > 0 in the first alive state, and a one-mutation entry (never alive before its last step)"
        " does not read it",
    ),
    "transforms.core.selection.answers.x_answer_calibration__mutmut_57": (
        "asserted",
        "the joint L1 route's AnswerCalibration.group None: no library reader (method's text"
        " right), so nothing raises where it is published",
    ),
    _P + "period_delta__mutmut_1": (
        "asserted",
        "over a horizon the unbounded split delta_key / (p (p + 1)) (without one: TypeError):"
        " thresholds of periods other than the stated ones, the event's delta not spent as stated",
    ),
    "transforms.core.selection.release.xǁOpenKeyReleaseǁ__init____mutmut_49": (
        "asserted",
        "(untraced, read ahead) the first period numbered 2: every release's period, threshold and node one period"
        " late, the horizon's last period refused",
    ),
    "transforms.core.contribution.units.xǁContributionUnitǁentry__mutmut_6": (
        "asserted-existing",
        "entry(k, 1) built as ContributionUnit('entry', 1, 1): k = 1, a multiplier for one mutation (less noise);"
        " tests/test_contribution_sensitivity.py::test_kary_is_exact_at_the_dense_horizon fails by an"
        " AssertionError (confirm, no wrapper; 49 covering tests by an assertion under the trace)",
    ),
    "transforms.core.contribution.units.xǁContributionUnitǁperson__mutmut_3": (
        "loud",
        "a person unit's max_entries None (no window: entries() returns None): every reader computes with it first"
        " (group_size's None * (2k - 1), contribution_sensitivity's g and multiplier): TypeError",
    ),
    "transforms.core.selection.answers.x__gaussian_key_multiplier__mutmut_20": (
        "loud",
        "m None over a horizon (lru-cached): its only caller, answer_calibration, computes sqrt(K) * m: TypeError",
    ),
    "transforms.core.selection.answers.x_answer_calibration__mutmut_47": (
        "loud",
        "the joint L1 route's budget None: read only by make_counter when a key is selected (AttributeError, not"
        " a counter without noise: checked); the ledger charges params.answers_budget, the plans read .method",
    ),
    _P + "__post_init____mutmut_50": (
        "loud",
        "the threshold cache set as _THRESHOLDS: threshold_at reads self._thresholds, AttributeError at the first"
        " derived threshold; a fixed threshold (tests with the noise off) never reads it",
    ),
    _P + "selection_noise__mutmut_1": (
        "asserted",
        "the sparse vector's noise stated as the answers' (gaussian under (eps, delta)): published in the plan's"
        " text (pipelines/open_keys.py) before key_share's rho_for_approx(PureDP) raises AttributeError",
    ),
    _P + "selection_noise__mutmut_5": (
        "asserted",
        "'SVT': as selection_noise__mutmut_1, the sparse vector stated as Gaussian under (eps, delta)",
    ),
}

ASSERTED_BY: dict[str, str] = {
    _PB + "bound_tick__mutmut_31": _T
    + "test_person_bounder_returns_every_update_once_accepted_or_refused_with_its_reason",
    "transforms.core.contribution.sensitivity.x_calibrated_budget__mutmut_20": _T
    + "test_calibrated_budget_keeps_the_accounts_kind_and_gives_at_most_the_share",
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_317": _T
    + "test_a_sensitivity_states_the_group_privacy_it_replaces",
    "transforms.core.contribution.toeplitz.x__split__mutmut_17": _T
    + "test_chain_bound_past_the_initial_intervals_is_the_exhaustive_chain",
    "transforms.core.contribution.trees.x__mass__mutmut_34": _T
    + "test_change_mass_of_counts_and_histograms_is_their_number_of_changes",
    "transforms.core.contribution.trees.x_change_costs__mutmut_8": _T
    + "test_change_costs_are_the_largest_column_norms_and_column_differences",
    _P + "counter_budget__mutmut_12": _T + "test_the_selection_and_the_answers_spend_exactly_the_stated_guarantee",
    _P + "event_delta__mutmut_10": _T + "test_the_selection_and_the_answers_spend_exactly_the_stated_guarantee",
    _P + "level_weight__mutmut_10": _T
    + "test_the_unbounded_selection_trees_level_weights_are_positive_and_sum_to_at_most_one",
    "transforms.core.selection.answers.x_answer_calibration__mutmut_57": _T
    + "test_the_answers_calibration_spends_the_answers_share_at_its_stated_multiplier",
    _P + "period_delta__mutmut_1": _T + "test_over_a_horizon_the_period_deltas_are_equal_and_spend_the_key_delta",
    "transforms.core.selection.release.xǁOpenKeyReleaseǁ__init____mutmut_49": _T
    + "test_an_open_key_release_with_noise_off_numbers_its_periods_and_answers_the_truth",
    _P + "selection_noise__mutmut_1": _T
    + "test_the_sparse_vector_test_states_discrete_laplace_noise_under_every_budget",
    _P + "selection_noise__mutmut_5": _T
    + "test_the_sparse_vector_test_states_discrete_laplace_noise_under_every_budget",
}
