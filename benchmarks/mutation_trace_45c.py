"""The differential trace of group c's crash-killed mutants, read (issue 27; helper h45tc, 2026-11-27).

Group c is ``transforms/core/continual/``, ``transforms/core/static/`` and ``transforms/core/config.py``; the trace is
``benchmarks/mutation_runs/s45/c/trace.json`` (``python -m benchmarks.mutation_trace run --only ... --cap 10`` on the
round-44 copy, the lead's probe of ``config.py``, ``continual/auto.py`` and ``continual/baselines.py`` included), its
run without the wrapper ``plain.json`` and the new tests' confirmations ``fast.confirmed.json`` beside it.

``READ``: every mutant of the group whose trace verdict is not ``raises``, as ``(category, reason)``, the
categories of ``benchmarks/mutation_trace_45a.py``; ``ASSERTED_BY``: the new tests (confirmed).

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
        "asserted-existing",
        (
            "2 covering test(s) fail on it by an assertion without the wrapper (plain.json); leaf_static_only None: "
            "tuned/tight leaves release n_hat and run counters (the round budget split four ways); also killed by tes"
            "ts/test_mutation_kills_trace45c.py::test_a_tuned_familys_leaf_releases_its_static_answers_only_with_the_"
            "whole_round_budget (confirmed)"
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
        "asserted-existing",
        (
            "2 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, "
            "NetChangeOptions refuses the unknown counter name before anything runs"
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
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, parts_of raises"
            " TypeError scaling the budget by None"
        ),
    ),
    "transforms.core.continual.auto.x_plan__mutmut_30": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, parts_of raises"
            " TypeError (q.name in None) with a PMW set"
        ),
    ),
    "transforms.core.continual.auto.x_plan__mutmut_31": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, parts_of raises"
            " TypeError scaling the budget by None with a PMW set"
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
        "asserted-existing",
        (
            "2 covering test(s) fail on it by an assertion without the wrapper (plain.json); the ticks of a gap "
            "released with tick None (unbounded runs); also killed by tests/test_mutation_kills_trace45c.py::test_a_c"
            "ontinual_count_answers_each_period_end_once_with_the_exact_prefix_count (confirmed)"
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
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); the clock started at "
            "tick 1 (tick 1 never released when the first data comes later); also killed by tests/test_mutation_kills"
            "_trace45c.py::test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count "
            "(confirmed)"
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
        "asserted-existing",
        (
            "40 covering test(s) fail on it by an assertion without the wrapper (plain.json); estimate None; also "
            "killed by the new schedule test (confirmed)"
        ),
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_19": (
        "asserted-existing",
        (
            "7 covering test(s) fail on it by an assertion without the wrapper (plain.json); a tick's data dropped; "
            "also killed by the new schedule test (confirmed)"
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
        "asserted-existing",
        (
            "6 covering test(s) fail on it by an assertion without the wrapper (plain.json); the forecast's bounds "
            "NaN; also killed by tests/test_mutation_kills_trace45c.py::test_the_forecast_states_at_each_planned_tick"
            "_the_bound_the_run_states (confirmed)"
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
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_close__mutmut_64": (
        "loud",
        (
            "the new node built with size None: its first reads raise TypeError before the node releases anything "
            "(n_hat releases [size]: int(None) in the black box; the next node's merge adds to it), as "
            "fully_dynamic_node's __init____mutmut_13"
        ),
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_hists__mutmut_15": (
        "spurious",
        (
            "the trace's difference is the dtype only: the histograms hold the same integer counts as float64 (the "
            "trace compares dtypes); every value that reaches a release is the same (sweep: same in all 200 "
            "fully_dynamic / auto settings) and where such an array is added in place to an int64 one it raises "
            "(UFuncTypeError)"
        ),
    ),
    "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ_hists__mutmut_17": (
        "loud",
        (
            "a batch's histogram only as long as its largest present cell + 1: where it is shorter than the domain "
            "its consumers raise ValueError on the shape mismatch before the segment's release; where it is not "
            "(count sets, a batch reaching the top cell) it is the original, and a batch filling only cell 0 gives "
            "the exact answers (checked with the noise off in the three profiles); sweep: every output the same in "
            "200 settings"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ__init____mutmut_13": (
        "loud",
        (
            "a new node's size None: its first reads raise TypeError before the node releases anything: n_hat "
            "releases [size] (int(None) in the black box) and the next node's merge adds to it (+=); sweep: every "
            "fully_dynamic run raises"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ__init____mutmut_14": (
        "loud",
        (
            "a new node's steps None: its first query step (steps vs its horizon) raises TypeError before the step's "
            "release; every tree's node 2 is stepped at segment 3 (sweep: every fully_dynamic run raises)"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ__init____mutmut_32": (
        "loud",
        (
            "every node of a level gets the ledger scope 'None': the second node of a level charges a scope its "
            "predecessor closed (RuntimeError 'scope ... is closed' from the ledger) before its release (sweep: every"
            " fully_dynamic run raises)"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ_round_budgets__mutmut_31": (
        "loud",
        (
            "a round's static budget None: the static release's charge (mech.cost(None)) raises AttributeError before"
            " the release, at the first non-leaf round; only a tight run whose every set is a count (answered from "
            "n_hat, never reading it) is unchanged (sweep: every fully_dynamic run raises)"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁnoise_profile__mutmut_1": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); the static release's law"
            " and n_hat's swapped: under the paper profile the stated bound silently took n_hat's smaller noise "
            "(sweep: bound 16 for 49); the assertion is "
            "tests/test_mutation_kills_sample43c.py::test_a_nodes_noise_law_holds_its_static_releases_noise"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_159": (
        "loud",
        (
            "a round's query counters None: the node's first step feeds its deletions through _counters() "
            "([del_counter] + None: TypeError) before its next release, and every non-leaf node is stepped at the "
            "next close; until then its answers are the original's (no deletion fed yet; sweep: every fully_dynamic "
            "run raises)"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_2": (
        "loud",
        (
            "round -= 1: the first round is round -1, whose budget weight the series refuses (ValueError 'series "
            "index starts at 1') before any charge or draw (sweep: every fully_dynamic run raises)"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_8": (
        "asserted-existing",
        (
            "7 covering test(s) fail on it by an assertion without the wrapper (plain.json); the n_hat release "
            "skipped where it is due (paper, non-leaf nodes): n_hat 0 drives restarts and halts, the spend differs "
            "(sweep); raises at tuned/tight leaves"
        ),
    ),
    "transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstep__mutmut_24": (
        "asserted-existing",
        (
            "7 covering test(s) fail on it by an assertion without the wrapper (plain.json); the query counters never"
            " stepped: deletions never subtracted from a node's answers (sweep: fully_dynamic answers differ); raises"
            " only where a set reuses n_hat (tight)"
        ),
    ),
    "transforms.core.continual.net_change.x_lattice_counter__mutmut_15": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, "
            "lattice_counter's only reader (net_change.py:243) refuses every counter under the tight account "
            "(ValueError) before any charge"
        ),
    ),
    "transforms.core.continual.net_change.x_lattice_counter__mutmut_4": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, "
            "lattice_counter's only reader (net_change.py:243) refuses every counter under the tight account "
            "(ValueError) before any charge"
        ),
    ),
    "transforms.core.continual.net_change.x_lattice_counter__mutmut_5": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, "
            "lattice_counter's only reader (net_change.py:243) refuses every counter under the tight account "
            "(ValueError) before any charge"
        ),
    ),
    "transforms.core.continual.net_change.xǁNetChangeOptionsǁ__post_init____mutmut_5": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); the horizon check "
            "inverted: the default horizon None raises TypeError (int(None)) and a horizon of 0 periods is accepted"
        ),
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcalibrations__mutmut_56": (
        "loud",
        (
            "a contribution calibration's multiplier None: its two readers raise TypeError: counter_budgets "
            "(float(None)) when the release starts, before any charge, and Calibration.text (format :.4g) when a plan"
            " is described; nothing else reads it (sweep: entry/person net_change runs raise)"
        ),
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁcounter_choice__mutmut_13": (
        "asserted-existing",
        (
            "8 covering test(s) fail on it by an assertion without the wrapper (plain.json); counter auto resolved "
            "for Laplace noise whatever the noise kind (a Gaussian run gets kary_tree / infinite_honaker, calibrated "
            "for its own noise: a worse counter, not a wrong guarantee; sweep: spends differ in the last digits)"
        ),
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁledger_cap__mutmut_5": (
        "asserted-existing",
        (
            "2 covering test(s) fail on it by an assertion without the wrapper (plain.json); besides, PureDP / ZCDP "
            "caps raise AttributeError and a non-lattice part under (eps, delta) is refused by the tight account "
            "(ValueError); the tight case is the original"
        ),
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁplan__mutmut_11": (
        "asserted",
        (
            "the plan's calibrations None: PlanEntry.text skips them (if self.calibrations), so the printed plan and "
            "the manifest silently state no calibration for an entry or person unit"
        ),
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁplan__mutmut_22": (
        "asserted",
        (
            "the plan's weights None: query_shares() returns None ('the mechanism splits its share its own way'), so "
            "pipelines.plan states no per-set share (text() raises)"
        ),
    ),
    "transforms.core.continual.net_change.xǁ_options_awareǁ__get____mutmut_10": (
        "spurious",
        (
            "the trace's difference is the descriptor itself (its deep copy has no __eq__: 'object at 0x... != object"
            " at 0x...'); the mutant calls getattr('options', None), a TypeError on every access through an instance "
            "(self.ledger_cap at every release's start), before anything runs"
        ),
    ),
    "transforms.core.continual.net_change.xǁ_options_awareǁ__get____mutmut_4": (
        "spurious",
        (
            "the trace's difference is the descriptor itself (its deep copy has no __eq__), and partials compare "
            "equal field-less; the mutant binds None for the class: ledger_cap(config) on the class (stated_spend, "
            "plans, auto's cap) reads None.options_cls() (AttributeError); with options given it is the original"
        ),
    ),
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ__init____mutmut_1": (
        "loud",
        (
            "the partitioner's params None: its first segment start reads params.epsilon (AttributeError) before the "
            "threshold noise is drawn; every partitioned release raises at its first tick (sweep: fully_dynamic, "
            "insertion_only, two_stream_baseline all raise)"
        ),
    ),
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ__init____mutmut_21": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); the open segment's index"
            " j None: the first start increments it (TypeError) before any draw; every partitioned release raises at "
            "its first tick (sweep)"
        ),
    ),
    "transforms.core.continual.partition.xǁInfinitePartitionerǁ__init____mutmut_22": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); j = 1 before the first "
            "segment: the first start is segment 2, whose deadline is t_1^2 = 0, and theta = (7/eps) ln(0) raises "
            "ValueError (math domain error) before the threshold noise is drawn; every partitioned release raises at "
            "its first tick (sweep)"
        ),
    ),
    "transforms.core.continual.partition.xǁPartitionParamsǁdeadline__mutmut_1": (
        "loud",
        (
            "T_1 = 0 (t_0^2) instead of 2: the first segment's threshold theta = (7/eps) ln(2 T_1 / beta_1) raises "
            "ValueError (math domain error) before any draw, and every partitioning starts with segment 1 (sweep: "
            "every partitioned release raises at its first tick); T_j for j > 1 unchanged"
        ),
    ),
    "transforms.core.static.linear.xǁLinearQueryMechanismǁ__init____mutmut_47": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); a linear query set's l2 "
            "None: its readers are Gaussian only and raise TypeError before any draw: _calibrated (l2**2) at the "
            "first Gaussian release, the changelog fold's ratio (best / l2); the lattice counters read the integer "
            "matrix _aq, not l2; Laplace paths read l1 (unchanged)"
        ),
    ),
    "transforms.core.static.linear.xǁ_AdditiveMechanismǁ__init____mutmut_4": (
        "asserted-existing",
        (
            "14 covering test(s) fail on it by an assertion without the wrapper (plain.json); the black box's noise "
            "kind None: its noise is still drawn, but under Gaussian budgets the counters read its law as none and "
            "every stated bound is 0.0 (sweep: net_change zCDP answers with bound 0); elsewhere it raises ('unknown "
            "noise kind None') (also killed by the new "
            "test_a_gaussian_counters_answers_state_a_positive_bound_with_the_noise_on, confirmed)"
        ),
    ),
    "transforms.core.static.linear.xǁ_AdditiveMechanismǁrelease__mutmut_52": (
        "asserted-existing",
        (
            "46 covering test(s) fail on it by an assertion without the wrapper (plain.json); a release's values "
            "None: most paths raise, but two_stream_baseline's periodic unbounded answers become NaN (sweep) (also "
            "killed by the new test_the_two_stream_baselines_answers_are_finite_numbers_within_their_bounds_scale, "
            "confirmed)"
        ),
    ),
    "transforms.core.static.linear.xǁ_CellsMechanismǁ__init____mutmut_6": (
        "asserted-existing",
        (
            "1 covering test(s) fail on it by an assertion without the wrapper (plain.json); a count or histogram "
            "box's domain size None: every release and every counter built on it makes arrays of that size "
            "(TypeError) or compares it, before any draw (sweep: every run with such a set raises, 556 of 564; the 8 "
            "others raise unmutated too)"
        ),
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁ_range_of__mutmut_33": (
        "loud",
        (
            "None where the float estimate of a range's row overshoots: the row array becomes an object array (None "
            "there: the next line's a * d raises TypeError); every range-PMW iteration first selects a query by "
            "indexing its scores with that object array (e[b + 1] - e[a]: IndexError), before its measurement and "
            "release; int(a[0]) elsewhere reads the right value"
        ),
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_64": (
        "asserted",
        (
            "a public size <= 0: the empty release's fields shifted by one (noise = (T,), alpha params = n_hat, n_hat"
            " = its noise law): the node then stores a noise law as the released size and a size as the alpha "
            "parameters (a bound read from them is wrong or raises); killed by an existing assertion written after "
            "round 44's test map (rel.n_hat == n_hat)"
        ),
    ),
}

ASSERTED_BY: dict[str, str] = {
    "transforms.core.config.xǁDynamicConfigǁtuned_family__mutmut_4": (
        _T + "test_the_tight_profile_is_of_the_tuned_family_its_noise_and_horizon_are_tuneds"
    ),
    "transforms.core.continual.auto.xǁAutoReleaseǁplan__mutmut_19": (
        "tests/test_mutation_kills_sample44c.py::test_autos_plan_states_the_counter_horizon_and_calibrations_its_parts_run"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ__init____mutmut_10": (
        _T + "test_the_keyword_form_of_continual_count_runs_the_counter_it_names"
    ),
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁ_apply__mutmut_34": (
        _T + "test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count"
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
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁplan__mutmut_11": (
        _T + "test_net_changes_plan_states_each_sets_weight_share_and_calibration_as_the_release_runs_them"
    ),
    "transforms.core.continual.net_change.xǁNetChangeReleaseǁplan__mutmut_22": (
        _T + "test_net_changes_plan_states_each_sets_weight_share_and_calibration_as_the_release_runs_them"
    ),
    "transforms.core.static.pmw.xǁPMWMechanismǁrelease__mutmut_64": (
        "tests/test_mutation_kills_sample44c.py::test_pmw_with_a_public_size_of_zero_releases_the_empty_histogram"
    ),
}

# the four traced too late to be read here were settled by the lead: benchmarks/mutation_trace_45lead.py
