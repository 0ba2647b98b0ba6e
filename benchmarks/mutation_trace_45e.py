"""Group e's reading of the differential trace (issue 27, session 45, helper h45te): every crash-killed mutant of
``transforms/core/families/``, ``forecast.py``, ``mechanisms.py`` and ``protocol.py`` (rounds 43 and 44, the
``fast.json`` of ``benchmarks/mutation_runs/s44/``) whose trace verdict is not ``raises``
(``benchmarks/mutation_runs/s45/e/trace.json``, ``python -m benchmarks.mutation_trace run --cap 10``).

``READ``: mutant -> (category, one-line reason). Categories: ``asserted-existing`` (a covering test of that day
fails by an assertion without the wrapper: ``s45/e/plain.json``, ``n_by_assertion > 0``), ``loud`` (the wrong value
cannot leave the library without raising: where and what is said), ``spurious`` (an artefact of the trace),
``asserted`` (a test now kills it by an assertion on the property: ``ASSERTED_BY``, each confirmed with
``python -m benchmarks.mutation_fast confirm``, verdicts in ``s45/e/fast.confirmed.json``)."""

from __future__ import annotations

_T = "tests/test_mutation_kills_trace45e.py::"
_T44F = "tests/test_mutation_kills_sample44f.py::"

READ: dict[str, tuple[str, str]] = {
    "transforms.core.families.changelog.folds.x__int_option__mutmut_4": (
        "asserted-existing",
        (
            "a non-None option unchecked and None refused: without the wrapper 4 of its 50 failing covering tests"
            " fail by an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog.folds.x__int_option__mutmut_5": (
        "asserted-existing",
        (
            "an integer below the minimum accepted: without the wrapper 1 of its 2 failing covering tests fail by"
            " an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog.folds.x__min_fold__mutmut_2": (
        "asserted",
        (
            "None kept for the given fold: dcr/hdcr/swcr_fold of one constraint alone return None (every library "
            "caller then raises in arithmetic, but the exported folds return it): asserted against each theorem's"
            " fold"
        ),
    ),
    "transforms.core.families.changelog.folds.x_cover__mutmut_24": (
        "asserted-existing",
        (
            "a node past the range's end taken: without the wrapper 3 of its 39 failing covering tests fail by an"
            " assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog.folds.x_cover__mutmut_31": (
        "asserted-existing",
        (
            "node index pos // s - 1: without the wrapper 1 of its 40 failing covering tests fail by an assertion"
            " (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog.folds.x_most_span__mutmut_13": (
        "loud",
        (
            "b < 1 for b < 0: only raises ValueError for 0 <= B < 1; every other B takes the original's path to "
            "the same value"
        ),
    ),
    "transforms.core.families.changelog.folds.x_swcr_fold__mutmut_25": (
        "asserted",
        (
            "ceil((B - W) / P) for Thm 4.6's ceil((B + W) / P): a fold too small, the loss under-counted; killed "
            "by the lead's test of round 44 (added after this copy's test map, so not run by the trace): "
            "confirmed again here"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁDCRReleaseǁ_plan__mutmut_5": (
        "loud",
        (
            "h = 2 with one layer fold: the first unit's answer, bound and charge are the original's (acc only "
            "gets an unused second row); the second unit's close raises IndexError (layer_folds[1]) before that "
            "unit's answer"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_close_unit__mutmut_1": (
        "asserted-existing",
        (
            "direct and derived SWCR swapped: without the wrapper 2 of its 44 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_close_unit__mutmut_10": (
        "loud",
        (
            "None stored as a unit's exact change: assigning None into the int64 ring row raises TypeError at the"
            " first unit close of a direct SWCR, before any charge or noise (the trace's differences were its "
            "own: plain, no assertion and the same TypeError)"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_close_unit__mutmut_26": (
        "loud",
        (
            "the window's released values dropped (nodes = None): the answer at the same unit reads nodes[q][(0, "
            "u)]: TypeError before that answer is released (the answer and the release share the condition u % "
            "answer_every == 0)"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_close_unit__mutmut_27": (
        "loud",
        (
            "the window stored under key (1, u): the answer at the same unit reads (0, u): KeyError before it is "
            "released"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_close_unit__mutmut_31": (
        "loud",
        (
            "the static mechanism given hist None: it raises (ValueError) in release, after the charge, before "
            "any value or answer leaves"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_close_unit__mutmut_34": (
        "loud",
        (
            "coordinates None for the window: the noise stream is drawn at *None (TypeError) after the charge, "
            "before any value or answer leaves"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁSWCRReleaseǁ_plan__mutmut_166": (
        "loud",
        (
            "total_fold None: _setup divides by it right after _plan (share.scale(1.0 / None)): TypeError at "
            "construction and restore, before any charge or noise"
        ),
    ),
    "transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_answer__mutmut_63": (
        "loud",
        (
            "None appended to res.answers instead of each Answer: every consumer (the Beam layer's records, auto,"
            " the in-memory API) reads its fields: AttributeError; the charges and noise behind it are the "
            "original's"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_119": (
        "asserted-existing",
        (
            "a returned order's key STATUS: without the wrapper 1 of its 4 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_151": (
        "asserted-existing",
        (
            "a late change's key XXstatusXX: without the wrapper 1 of its 2 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_152": (
        "asserted-existing",
        (
            "a late change's key STATUS: without the wrapper 1 of its 2 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_200": (
        "asserted-existing",
        (
            "the record's key XXitemXX: without the wrapper 1 of its 5 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_24": (
        "asserted-existing",
        ("amount None: without the wrapper 1 of its 4 failing covering tests fail by an assertion (s45/e/plain.json)"),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_44": (
        "asserted-existing",
        (
            "the insertion's key AMOUNT: without the wrapper 1 of its 4 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_65": (
        "asserted-existing",
        ("op DELETE: without the wrapper 4 of its 5 failing covering tests fail by an assertion (s45/e/plain.json)"),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_78": (
        "asserted-existing",
        (
            "the shipped upsert's key XXstatusXX: without the wrapper 1 of its 5 failing covering tests fail by "
            "an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_generate__mutmut_98": (
        "asserted-existing",
        (
            "the delivered upsert's key XXstatusXX: without the wrapper 1 of its 4 failing covering tests fail by"
            " an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.changelog_orders.x_to_lines__mutmut_6": (
        "asserted",
        (
            "key separator 'XX: XX': lines that are not JSON (a generated input every line of which would be "
            "dead-lettered): asserted that each line parses back to its record"
        ),
    ),
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_after_close__mutmut_45": (
        "asserted",
        (
            "None recorded in TickResult.closes for the close tick (public, counted by the Beam metric): asserted"
            " closes == the answers' ticks"
        ),
    ),
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_log__mutmut_9": (
        "asserted",
        (
            "node outputs released with query None (the wire records of emit_nodes): asserted each names its "
            "query set ('' for n_hat)"
        ),
    ),
    "transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_4": (
        "loud",
        (
            "eps None: read only by the three scale properties (4/eps, 8/eps, 2/eps): TypeError at the first "
            "epoch's threshold draw and in every bound (open_bound, closed_bound); nothing released"
        ),
    ),
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_78": (
        "loud",
        (
            "carried answers None: read only by _between (answers at period ends and the end between re-runs), "
            "which unpacks each: TypeError before that answer is released; without periods and end they are never"
            " read (the re-runs' own answers are out, unchanged)"
        ),
    ),
    "transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_start__mutmut_1": (
        "loud",
        (
            "runs None: read first by _on_close (run = self.runs; self.runs += 1): TypeError at the first re-run,"
            " before its charge or noise"
        ),
    ),
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_56": (
        "asserted",
        (
            "the test noise drawn at 'query, j, TEST': the same law, but not the coordinate docs/growing.md "
            "states (a release of a key no longer draws its documented noise: an output): asserted every PMWG "
            "draw is at a documented coordinate"
        ),
    ),
    "transforms.core.families.local_dp.x_in_memory__mutmut_17": (
        "asserted-existing",
        (
            "symbol counts decremented: without the wrapper 1 of its 3 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ__init____mutmut_23": (
        "asserted",
        (
            "the configured end forgotten: the collector releases every period past the release's public end and "
            "never finishes: asserted it releases up to its end and stops"
        ),
    ),
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ_node__mutmut_12": (
        "asserted",
        (
            "a node's report count subtracted: releases state -n reports, negative variances and a Bernstein "
            "bound at -n (smaller than the true one where the square root exists): asserted reports, "
            "change_reports and both bounds at the true counts"
        ),
    ),
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ_release__mutmut_71": (
        "loud",
        (
            "None released instead of the RRRelease: the Beam step timestamps each output by r.tick and "
            "release_dict reads its fields (AttributeError); in memory every reader reads its fields; the "
            "collector spends nothing"
        ),
    ),
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁto_state__mutmut_19": (
        "asserted",
        (
            "a state envelope with no body: a checkpoint whose partial sums are lost (refused only at restore): "
            "asserted the body restores to the same partial sums and tick"
        ),
    ),
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁto_state__mutmut_7": (
        "asserted",
        (
            "the state's digest over no configuration: a checkpoint that cannot be restored under its own "
            "configuration: asserted it names the digest of its configuration, options and end"
        ),
    ),
    "transforms.core.families.rr_client.x_randomize__mutmut_6": (
        "asserted",
        (
            "the other-symbol bin (u + P) // Q: most words map outside the mutation space and the rest onto a few"
            " symbols (outputs impossible under one truth, likely under another: unbounded loss where out-of-"
            "range reports are dropped): asserted the law, P for the truth and exactly Q words per other symbol"
        ),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁ__init____mutmut_2": (
        "loud",
        (
            "design None: every report() reads self.design (layers_ending_at, randomize): AttributeError at the "
            "first call, nothing sent or charged"
        ),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁ__init____mutmut_4": (
        "loud",
        ("period None: check() computes self.period + 1 on every report: TypeError at the first call, nothing sent"),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁ__init____mutmut_6": (
        "asserted-existing",
        (
            "the initial answer '' (the first None period a mutation): without the wrapper 3 of its 13 failing "
            "covering tests fail by an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁ__init____mutmut_9": (
        "loud",
        (
            "charged None: read only where the client charges its ledger (track_loss), at the first mutation, "
            "before any charge or report: TypeError; without a ledger it is never read (the same reports)"
        ),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_10": (
        "asserted",
        (
            "freeze reports the answer None (a deletion) instead of the last accepted one: a mutation beyond the "
            "constraint sent, the entry's loss past its fold bound; raised only by a client's ledger, silent in "
            "the simulator's (no ledger): asserted a refused change is never sent"
        ),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_34": (
        "asserted-existing",
        (
            "each mutation counted twice: without the wrapper 1 of its 9 failing covering tests fail by an "
            "assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_56": (
        "loud",
        (
            "None returned for each report: the library's readers of a client's reports (local_dp.in_memory, "
            "pipelines/rr_simulate.write_reports) read rep.period first: AttributeError before anything is "
            "counted or written"
        ),
    ),
    "transforms.core.forecast.x_forecast__mutmut_87": (
        "loud",
        (
            "None for a forecast: its one caller (pipelines/plan.py plan_rows) reads f.tick and f.query at once: "
            "AttributeError before any row is printed"
        ),
    ),
    "transforms.core.mechanisms.x_option_fields__mutmut_1": (
        "asserted-existing",
        (
            "no option fields for mechanisms with options: without the wrapper 4 of its 40 failing covering tests"
            " fail by an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_14": (
        "asserted-existing",
        (
            "the horizon not checked against the end: without the wrapper 1 of its 2 failing covering tests fail "
            "by an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_3": (
        "asserted-existing",
        (
            "a served unit refused, an unserved one let through: without the wrapper 7 of its 31 failing covering"
            " tests fail by an assertion (s45/e/plain.json)"
        ),
    ),
    "transforms.core.protocol.xǁContinualReleaseǁperson_bounder__mutmut_7": (
        "loud",
        (
            "the in-memory person rule None: its only reader, _resolve_persons, calls bound_tick on it at the "
            "first person tick: AttributeError before the registry, any charge or noise (the Beam layer bounds "
            "persons itself)"
        ),
    ),
    "transforms.core.protocol.xǁContinualReleaseǁplan__mutmut_13": (
        "asserted",
        (
            "the plan's calibrations None: PlanEntry.text() reads None as none, so the printed and recorded plan "
            "of an entry- or person-level release drops its group-privacy noise multiplier: asserted the plan "
            "carries the mechanism's calibrations and states each"
        ),
    ),
    "transforms.core.protocol.xǁContinualReleaseǁprocess_tick__mutmut_10": (
        "loud",
        (
            "the registry resolves the tick as None: the batch's tick None is compared with last_tick in apply: "
            "TypeError before any release (only the raising mechanism's registry holds the entries at tick None)"
        ),
    ),
    "transforms.core.protocol.xǁContinualReleaseǁrun_to_end__mutmut_13": (
        "spurious",
        (
            "advance(noise) lacks its tick: TypeError whenever the loop runs, else the original's code exactly; "
            "the trace's differences are the test's: a spy bound to the real partitioner "
            "(test_mutation_kills_sample43c) and a shared noise recorder survive the deep copy, so the original's"
            " copy drove the real objects"
        ),
    ),
    "transforms.core.protocol.xǁContinualReleaseǁto_state__mutmut_14": (
        "asserted",
        (
            "the state digest without every_ticks: a periodic release's checkpoint refused under its own "
            "configuration and accepted under one without periods (another release): asserted the digest names "
            "the period and another period is refused"
        ),
    ),
}

ASSERTED_BY: dict[str, str] = {
    "transforms.core.families.changelog.folds.x__min_fold__mutmut_2": _T
    + "test_each_constraint_alone_gives_its_theorems_fold",
    "transforms.core.families.changelog.folds.x_swcr_fold__mutmut_25": _T44F
    + "test_a_time_bounded_swcr_fold_is_ceil_of_b_plus_w_over_p_and_the_smaller_of_both",
    "transforms.core.families.changelog_orders.x_to_lines__mutmut_6": _T
    + "test_each_orders_line_is_its_record_as_json",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_after_close__mutmut_45": _T
    + "test_growing_closes_are_the_release_ticks_and_node_outputs_name_their_query",
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_log__mutmut_9": _T
    + "test_growing_closes_are_the_release_ticks_and_node_outputs_name_their_query",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_56": _T
    + "test_every_pmwg_noise_draw_is_at_a_documented_coordinate",
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ__init____mutmut_23": _T
    + "test_a_collector_releases_up_to_its_end_and_then_stops",
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ_node__mutmut_12": _T
    + "test_a_collectors_release_counts_its_reports_and_bounds_them_by_bernstein",
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁto_state__mutmut_19": _T
    + "test_a_collectors_state_names_its_configuration_and_holds_its_partial_sums",
    "transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁto_state__mutmut_7": _T
    + "test_a_collectors_state_names_its_configuration_and_holds_its_partial_sums",
    "transforms.core.families.rr_client.x_randomize__mutmut_6": _T
    + "test_the_randomized_response_law_is_p_for_the_truth_and_q_for_each_other_symbol",
    "transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_10": _T
    + "test_a_frozen_client_never_sends_the_refused_mutation",
    "transforms.core.protocol.xǁContinualReleaseǁplan__mutmut_13": _T
    + "test_a_plan_under_a_group_unit_states_how_each_query_sets_noise_is_calibrated",
    "transforms.core.protocol.xǁContinualReleaseǁto_state__mutmut_14": _T
    + "test_a_periodic_releases_state_names_its_period_and_is_refused_under_another",
}
