"""The differential trace of group c's crash-killed mutants, read (issue 27; helper h45tc, 2026-11-27).

Group c is ``transforms/core/continual/``, ``transforms/core/static/`` and ``transforms/core/config.py``; the trace is
``benchmarks/mutation_runs/s45/c/trace.json`` (``python -m benchmarks.mutation_trace run --only ... --cap 10`` on the
round-44 copy, the lead's probe of ``config.py``, ``continual/auto.py`` and ``continual/baselines.py`` included), its
run without the wrapper ``plain.json`` and the new tests' confirmations ``fast.confirmed.json`` beside it.

``READ``: every mutant of the group whose trace verdict is not ``raises``, as ``(category, reason)``:

* ``asserted-existing``: a covering test fails on it by an assertion without the wrapper (``plain.json``);
* ``loud``: the wrong value cannot leave the library without raising (the reason says where and what);
* ``spurious``: the difference is the trace's own (the reason says which artefact), the mutant itself only raises;
* ``asserted``: a test now kills it by an assertion on the property (``ASSERTED_BY``; confirmed: passes
  unmutated, fails mutated by an assertion).

"The sweep" in a reason: every registry entry's settings of the privacy harness (``tests/privacy_harness.py``:
each budget kind and unit, periodic and unbounded variants, every counter of ``continual_count`` / ``net_change``,
a PMW query set beside the additive ones) run with the noise on and off under the mutant and unmutated, their
answers, bounds, spend and ledger records compared: "raised or same" means that in no setting the mutant returned
something the original does not.
"""

from __future__ import annotations

_T = "tests/test_mutation_kills_trace45c.py::"

READ: dict[str, tuple[str, str]] = {
    "transforms.core.config.xǁBudgetProfileǁpaper__mutmut_3": (
        "loud",
        (
            "level_split None in the paper profile: its only reader, FullyDynamicNode.__init__ (node budget = "
            "tree_budget.part(level_split.weight(level))), raises AttributeError when the first node is built, before"
            " its first charge or draw (sweep: every paper fully_dynamic run raises)"
        ),
    ),
    "transforms.core.config.xǁBudgetProfileǁtuned__mutmut_24": (
        "asserted",
        (
            "leaf_static_only None (falsy): tuned/tight leaves also release n_hat and run counters, the round budget "
            "split four ways instead of M_Q with the whole budget (sweep: fully_dynamic tuned/tight spends less, "
            "other answers); no raise"
        ),
    ),
    "transforms.core.config.xǁDynamicConfigǁnoise_kind__mutmut_6": (
        "loud",
        (
            "'LAPLACE' for 'laplace': every release path builds its black boxes from config.noise_kind (q.mechanism, "
            "CountMechanism(noise=...)), whose StaticMechanism.__init__ raises ValueError for it at the core's start,"
            " before any charge (sweep: every Laplace setting raises, the Gaussian ones unchanged)"
        ),
    ),
    "transforms.core.config.xǁDynamicConfigǁtuned_family__mutmut_4": (
        "asserted",
        (
            "'tight' out of the tuned family: under zCDP it raises, but under (eps, delta > 0) it silently draws "
            "Laplace noise, and PMW's deletion counters change kind (sweep: a fully_dynamic tight PMW answer differs)"
        ),
    ),
    "transforms.core.config.xǁQuerySetǁmechanism__mutmut_7": (
        "loud",
        (
            "a count set's black box built without the noise kind (Laplace): under every Gaussian configuration its "
            "calibration raises ValueError ('count uses Laplace noise (pure DP); give it a PureDP budget') at the "
            "first charge; under Laplace configurations it is the original (sweep: raised or same in all 806 runs)"
        ),
    ),
    "transforms.core.continual.auto.x__calibration__mutmut_8": (
        "loud",
        (
            "'ZCDP' for 'zcdp' (auto with a PMW part): NetChangeOptions refuses it (ValueError 'calibration must be "
            "tight or zcdp') in parts_of, before plan, check or start; additive-only configurations return 'tight' "
            "unchanged"
        ),
    ),
    "transforms.core.continual.auto.x_auto_counter__mutmut_15": (
        "loud",
        (
            "an unknown counter name where scaled_sqrt is picked (Gaussian, update unit, horizon >= 2): "
            "NetChangeOptions refuses it (ValueError 'unknown counter') in parts_of before anything runs (sweep: "
            "those auto runs raise, the rest unchanged)"
        ),
    ),
    "transforms.core.continual.auto.x_plan__mutmut_11": (
        "loud",
        (
            "Part None for the additive part: every consumer reads p.queries / p.mechanism (parts_of, plan, "
            "check_settings, _start): AttributeError before any charge (sweep: every auto setting raises)"
        ),
    ),
    "transforms.core.continual.auto.x_plan__mutmut_14": (
        "loud",
        (
            "the additive part's share None: parts_of scales the budget by it (TypeError) before plan, check or start"
            " can use it; no consumer reads the share without parts_of (sweep: every auto setting raises)"
        ),
    ),
    "transforms.core.continual.auto.x_plan__mutmut_30": (
        "loud",
        (
            "the PMW part's queries None: parts_of tests q.name in None (TypeError) for every configuration with a "
            "PMW set, before anything runs; additive-only configurations unchanged"
        ),
    ),
    "transforms.core.continual.auto.x_plan__mutmut_31": (
        "loud",
        (
            "the PMW part's share None: parts_of scales the budget by it (TypeError) before plan, check or start; "
            "additive-only configurations unchanged"
        ),
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁ_restore_config__mutmut_6": (
        "loud",
        (
            "a restored part's config = _configure(None): the restored core's first use (process_tick / advance / "
            "spent) dereferences part.config (AttributeError) before any release; nothing is stored from it"
        ),
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁparts_of__mutmut_29": (
        "loud",
        (
            "None appended for the PMW part: every consumer unpacks (p, cls, sub, opts) (TypeError) in plan, "
            "check_settings and start, before anything runs; additive-only configurations unchanged"
        ),
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁparts_of__mutmut_9": (
        "loud",
        (
            "each part's sub-configuration keeps every query set: with a PMW set, the net_change part refuses it "
            "(ValueError 'net_change answers additive query sets only') in check_settings and at start, before any "
            "charge; with additive sets only there is one part whose sub-configuration is the configuration's "
            "(unchanged; sweep: raised or same)"
        ),
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁplan__mutmut_19": (
        "asserted",
        (
            "the counter choice asked of the non-net_change parts: with additive query sets only, the plan states "
            "counter and horizon None for the net_change part it runs (with a PMW part it raises); killed by an "
            "existing assertion written after round 44's test map"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ__init____mutmut_10": (
        "asserted",
        (
            "the keyword form counter=NAME runs infinite_honaker whatever NAME (a silently different counter and "
            "bound than asked); the options= form is unchanged"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_advance__mutmut_10": (
        "asserted",
        (
            "the ticks of a gap are released with tick None (the estimates right, the state recovers at the next "
            "step): a wrong answer returned (sweep: net_change without an end returns tick None answers)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_advance__mutmut_17": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself compares "
            "the first due period end with None (TypeError) on every periodic advance (sweep: raised or same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_advance__mutmut_21": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself raises "
            "AttributeError (answer appended to None) in the first periodic step, the call returns nothing (sweep: "
            "raised or same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_advance__mutmut_23": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself calls _step"
            " with 3 arguments (TypeError) on every periodic advance with a period end due (sweep: raised or same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_advance__mutmut_31": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself raises "
            "TypeError (max of one int) at the end of every periodic advance that is not finished (sweep: raised or "
            "same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_apply__mutmut_2": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself passes "
            "noise None to _advance: AttributeError ('is_disabled') in the first step a gap makes due, and the "
            "original's path where none is due (sweep: raised or same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_apply__mutmut_28": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself zips the "
            "open period's batch with None (TypeError) at the second batch of a period (sweep: raised or same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_apply__mutmut_34": (
        "asserted",
        (
            "a period end reached by data released with tick None (the next call raises, but this call's answers "
            "leave): the schedule test checks each call's own answers"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_start__mutmut_28": (
        "asserted",
        (
            "the clock starts at tick 1: data at tick 1 is refused (ValueError), but a run whose first data comes "
            "later never releases tick 1 (a period missing from the published schedule)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_1": (
        "loud",
        (
            "self.tick = None after a step: that step's answers are right (they carry the tick argument); every next "
            "call (process_tick, advance, run_to_end, last_tick, a restored state) compares with None and raises "
            "TypeError before releasing (sweep: every continual_count / net_change / auto run raises)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_12": (
        "asserted",
        (
            "estimate None in every answer (the counter's step skipped, its noise never drawn): answers without an "
            "estimate"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_19": (
        "asserted",
        (
            "hists is not None inverted: a tick (or period) with data releases the counter's step on no data (its "
            "data lost for good, the count silently low; sweep: net_change / auto every=3 answers 0 for 2); raises "
            "only on a tick without data"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_20": (
        "loud",
        (
            "None appended for every answer: every consumer of TickResult.answers reads each answer's fields "
            "(forecast, make_consistent, the pipelines' records, auto's merge): AttributeError (sweep: every run "
            "raises)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_59": (
        "spurious",
        (
            "the trace's differences are its own: the privacy harness's samplers record into the active module-level "
            "Recorder (_ACTIVE), not the deep copy's, so the original's draws on the copy land in the mutant's "
            "recorder (draws: length 2n != n) on calls the mutant runs as the original; the mutant itself calls "
            "_finish without its tick (TypeError) when a finite counter reaches its horizon, so that call returns "
            "nothing; elsewhere the original (sweep: raised or same)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_8": (
        "asserted",
        (
            "or made and: a run raises (tick in None), but the plan's forecast (bound_ticks set) states NaN for every"
            " bound: pipelines.plan would print no bound"
        ),
    ),
    "transforms.core.continual.baselines.xǁTwoStreamBaselineǁ_reset__mutmut_6": (
        "loud",
        (
            "p_del None: every close steps the deletion counters on self.p_del[k] (TypeError) before any answer of "
            "the segment; every two_stream_baseline run raises at its first close (sweep)"
        ),
    ),
    "transforms.core.continual.consistency.x_make_consistent__mutmut_55": (
        "asserted",
        "a paired count's estimate None after the projection (a released count without a value)",
    ),
    "transforms.core.continual.consistency.x_make_consistent__mutmut_56": (
        "asserted",
        "a paired count's bound None after the projection: reads as 'no bound'",
    ),
    "transforms.core.continual.consistency.x_project_to_simplex__mutmut_1": (
        "asserted",
        "x dropped: a 0-d array for total 0 (AxisError for total > 0); a public post-processing function",
    ),
}

ASSERTED_BY: dict[str, str] = {
    "transforms.core.config.xǁBudgetProfileǁtuned__mutmut_24": (
        _T + "test_a_tuned_familys_leaf_releases_its_static_answers_only_with_the_whole_round_budget"
    ),
    "transforms.core.config.xǁDynamicConfigǁtuned_family__mutmut_4": (
        _T + "test_the_tight_profile_is_of_the_tuned_family_its_noise_and_horizon_are_tuneds"
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁplan__mutmut_19": (
        "tests/test_mutation_kills_sample44c.py::test_autos_plan_states_the_counter_horizon_and_calibrations_its_parts_run"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ__init____mutmut_10": (
        _T + "test_the_keyword_form_of_continual_count_runs_the_counter_it_names"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_advance__mutmut_10": (
        _T + "test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_apply__mutmut_34": (
        _T + "test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_start__mutmut_28": (
        _T + "test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_12": (
        _T + "test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_19": (
        _T + "test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_8": (
        _T + "test_the_forecast_states_at_each_planned_tick_the_bound_the_run_states"
    ),
    "transforms.core.continual.consistency.x_make_consistent__mutmut_55": (
        _T + "test_a_paired_count_stays_a_count_the_sum_of_its_histogram_with_a_finite_bound"
    ),
    "transforms.core.continual.consistency.x_make_consistent__mutmut_56": (
        _T + "test_a_paired_count_stays_a_count_the_sum_of_its_histogram_with_a_finite_bound"
    ),
    "transforms.core.continual.consistency.x_project_to_simplex__mutmut_1": (
        _T + "test_a_projection_onto_the_simplex_keeps_the_shape_and_sums_to_the_total"
    ),
}
