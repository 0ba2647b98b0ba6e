"""Helper of ``benchmarks/mutation.sh``: the mutation benchmark over the privacy core.

Not part of the library nor of CI. ``mutation.sh`` calls it as a script:

* ``prepare WORKDIR MODULE``: in the *copy* of the repository at ``WORKDIR``
  (never in the real work tree), mark the lines that are excluded from
  mutation, let mutmut reach decorated functions, and write mutmut's
  ``setup.cfg`` for ``MODULE`` with the module's fast test subset;
* ``sample WORKDIR MODULE N SEED``: print ``N`` mutant names of ``MODULE``
  drawn uniformly at random with a fixed seed (all of them if ``N`` is 0 or at
  least their number);
* ``report WORKDIR MODULE OUT``: count the verdicts, write them as JSON to
  ``OUT`` and print the kill rate.

What is excluded from mutation, and why (everything else is mutated):

* docstrings (mutmut never mutates triple-quoted strings);
* ``raise`` statements: their only mutable parts are error-message strings
  and the values formatted into them, which change no released value, no
  charge and no control flow (the condition that raises is on its own line
  and *is* mutated);
* ``__repr__`` bodies (human-readable text, never released);
* ``__all__`` and other module-level assignments are not mutated by mutmut 3
  at all (it only mutates function bodies). This is a limit of the tool, not
  a choice; module constants that matter (scales, tolerances) are read by
  functions whose mutants are run.

Decorated functions: mutmut 3 skips every decorated function except
``@staticmethod`` / ``@classmethod``. In the privacy core that would skip
``PartitionParams.query_scale`` (the SVT query noise scale), the cached
``_tail_bound`` / ``rho_for_epsilon_delta`` / ``_scale_ratio`` /
``_as_ratio_up_float`` and every ``@property``. ``prepare`` therefore rewrites,
in the copy only, ``@deco def f(...)`` as ``def f(...)`` followed by
``f = deco(f)`` (same object, same behaviour: this is what the decorator
syntax means), so that mutmut mutates them like any other function.

Caches: mutmut forks every mutant from a process that already ran the tests
unmutated, so an ``functools.lru_cache`` filled there would hide a mutant of
the cached function (or of anything it calls). ``prepare`` appends a
session-scoped autouse fixture to the copy's ``tests/conftest.py`` that clears
every ``lru_cache`` of ``transforms.*`` before the tests of a mutant run.
"""

from __future__ import annotations

import ast
import io
import json
import random
import sys
import tokenize
from pathlib import Path


def _named(path: str, *names: str) -> list[str]:
    return [f"{path}::{n}" for n in names]


# tests/test_dynamic.py without its slow shape tests (utility over 100,000 updates: 45 s;
# memory growth: 6 s) and its Beam-driven ones, which pin no property of the core's code
DYNAMIC = _named(
    "tests/test_dynamic.py",
    "test_noise_off_exact_after_every_close",
    "test_drain_to_zero_and_regrow_and_in_segment_cancel",
    "test_rejections_change_nothing",
    "test_accounting_over_many_updates",
    "test_declared_horizon_stops_releases_cleanly",
    "test_fenwick_layout_matches_figure_3",
    "test_other_releases_noise_off",
    "test_insertion_only_rejects_deletions",
    "test_replay_identical",
    "test_config_validation_messages",
    "test_continual_count_release_noise_off",
    "test_ledger_plan_catches_broken_allocations",
    "test_noise_spy_catches_coordinates_without_the_round",
    "test_noise_spy_catches_tree_coordinates_without_the_level",
    "test_budget_exhaustion_finishes_cleanly",
    "test_non_additive_node_bound_is_the_union_bound_of_its_parts",
    "test_node_outputs_name_their_query_set_round_and_cost",
    "test_options_are_kept_and_restore_with_the_state",
    "test_answers_carry_their_segment_and_the_last_close_tick",
    "test_baselines_draw_and_charge_under_their_stream",
    "test_continual_count_keyword_form_and_update_count",
)
ENTRIES = _named(
    "tests/test_dynamic.py",
    "test_mutation_limit_counts_across_deletes_and_reinserts",
    "test_fast_path_rejects_out_of_range_items",
    "test_validate_gives_the_reason_against_the_current_state",
    "test_tick_batches_merge_with_their_update_counts",
)
# the contract checks over every registered mechanism (Beam left out)
CONTRACT = _named(
    "tests/test_contract.py",
    "test_registry_entry_is_complete",
    "test_noise_off_answers_are_exact",
    "test_interrupted_run_continues_identically",
    "test_ledger_charges_equal_the_plan",
    "test_noise_coordinates_never_repeat_in_memory",
)
ACCOUNTING = [
    "tests/test_accounting.py",
    "tests/test_static.py::test_gaussian_with_approx_budget_meets_it",
    "tests/test_static.py::test_budget_type_checks",
    "tests/test_counters.py::test_spend_within_budget_and_per_level",
    "tests/test_counters.py::test_counter_with_exhausted_ledger_refuses_before_noise",
    "tests/test_dynamic.py::test_accounting_over_many_updates",
]
NOISE = [
    "tests/test_noise.py",
    "tests/test_calibration.py::test_static_noise_variance_is_the_charged_one",
    "tests/test_calibration.py::test_sparse_vector_noise_scales",
    "tests/test_privacy_audit.py::test_bernoulli_exp_of_zero_is_always_true",
    "tests/test_partition.py",
]
COUNTERS = [
    *_named(
        "tests/test_counters.py",
        "test_noise_off_equals_prefix_sum",
        "test_linear_queries_counter_noise_off",
        "test_spend_within_budget_and_per_level",
        "test_counter_with_exhausted_ledger_refuses_before_noise",
        "test_horizon_is_enforced",
        "test_make_counter_validates",
        "test_replay_identical_and_coordinates_matter",
        "test_honaker_is_inverse_variance_weighting_measured",
        "test_honaker_reduces_variance",
        "test_infinite_counter_charges_the_callers_scope_as_planned",
        "test_counter_names_and_the_default_estimator",
        "test_infinite_counter_takes_a_non_additive_black_box",
        "test_binary_tree_node_coordinates_are_level_and_dyadic_index",
    ),
    "tests/test_coverage.py::test_counter_bound_covers",
]
FACTORIZATION = ["tests/test_factorization.py", "tests/test_fully_dynamic_tight.py"]
AUTO = [
    "tests/test_net_change.py::test_auto_plans_per_query_set_and_its_parts_never_share_noise",
    *_named(
        "tests/test_net_change.py",
        "test_auto_releases_exactly_what_its_parts_release_standalone",
        "test_auto_state_round_trip_with_a_pmw_part",
        "test_auto_options_are_checked_and_the_plan_says_why",
    ),
    *CONTRACT,
    "tests/test_state_golden.py",
]
CHANGELOG = [
    *_named(
        "tests/test_changelog.py",
        "test_noise_off_answers_are_exact_at_every_release",
        "test_default_options_run_alone",
        "test_most_span_equals_a_brute_force_sliding_window",
        "test_folds_match_the_papers_formulas",
        "test_folds_bound_the_nodes_one_entry_touches",
        "test_fold_composes_in_every_currency",
        "test_ledger_charges_the_fold_of_each_node",
        "test_sensitivity_ratios_of_an_entrys_change",
        "test_registry_enforces_k_and_the_window",
        "test_violations_are_dead_lettered_and_change_no_release",
        "test_state_with_a_mutation_window_continues_identically",
        "test_hdcr_covers_partition_ranges_from_at_most_2_c_minus_1_h_min_nodes",
        "test_variances_equal_the_closed_forms",
        "test_empirical_variance_matches_the_closed_form",
        "test_entry_level_loss_within_the_k_fold_bound",
        "test_new_families_validate_their_shapes",
        "test_changelog_releases_fall_due_inside_a_gap_of_the_data",
        "test_changelog_call_budget_divides_by_the_sensitivity_ratio",
        "test_changelog_entry_ratio_of_small_linear_queries",
        "test_changelog_plan_choices_and_top_layer_coordinates",
        "test_changelog_keeps_only_the_nodes_it_still_needs",
    ),
    *CONTRACT,
    "tests/test_state_golden.py",
]
GROWING = [
    *_named(
        "tests/test_growing.py",
        "test_noise_off_every_rerun_is_exact",
        "test_scheduler_reruns_at_the_papers_sizes",
        "test_improver_reruns_at_every_growth_step",
        "test_scheduler_eta_default_is_the_papers_choice",
        "test_deletes_and_upserts_are_refused_with_deletion_not_supported",
        "test_pmwg_accuracy_under_an_adversarial_query_sequence",
        "test_pmwg_hard_queries_within_the_potential_bound",
        "test_easy_hard_rounds_privacy_loss",
        "test_total_budget_over_1e5_growth_steps",
        "test_pmwg_total_budget_over_1e5_insertions_with_queries",
        "test_growing_query_driver_answers_in_time_then_id_order_with_their_ids",
        "test_growing_node_outputs_carry_their_epoch",
        "test_growing_options_refuse_values_outside_their_open_intervals",
        "test_pmwg_charges_its_own_scope_and_answers_exactly_without_noise",
        "test_black_box_bound_of_a_pmw_set_uses_the_released_size",
    ),
    *CONTRACT,
    "tests/test_state_golden.py",
]
LOCAL_DP = [
    *_named(
        "tests/test_local_dp.py",
        "test_response_matrix_is_exactly_local_dp",
        "test_estimator_inverts_the_matrix_exactly",
        "test_symbols_round_trip",
        "test_client_refuses_the_k_plus_1th_mutation",
        "test_client_refuses_after_the_time_bound",
        "test_client_validates_and_uses_the_os_csprng_by_default",
        "test_hdcr_client_reports_once_per_node_end",
        "test_randomize_has_the_law_of_the_matrix",
        "test_node_estimate_is_unbiased_with_the_closed_form_variance",
        "test_collector_is_unbiased_over_simulated_runs",
        "test_hdcr_estimate_sums_the_c_ary_decomposition",
        "test_client_loss_matches_the_corollaries",
        "test_golden_collector_state_restores_and_continues_identically",
        "test_rr_client_ledger_holds_the_fold_of_an_approximate_report",
        "test_local_dp_reference_runs_to_the_end_and_node_counts_count",
        "test_simulated_refused_mutation_comes_after_the_entry_starts",
        "test_simulator_keeps_time_bounded_entries_inside_their_bound",
    ),
    "tests/test_contract.py",
]

# The fast test subset of each module: what targets it, seconds not minutes.
# mutmut runs, for each mutant, only those tests of this subset that execute the
# mutated function (recorded in one unmutated run), with -x. The tests that were
# written to kill the survivors of earlier runs live with the behaviour tests of
# their module (each names the mutants it kills).
TESTS: dict[str, list[str]] = {
    "transforms/core/foundation/noise.py": NOISE,
    "transforms/core/foundation/random_stream.py": NOISE,
    "transforms/core/foundation/samplers.py": NOISE,
    "transforms/core/foundation/accounting/budgets.py": ACCOUNTING,
    "transforms/core/foundation/accounting/calibration.py": [
        *ACCOUNTING,
        "tests/test_static.py",
        "tests/test_factorization.py::test_tight_calibration_numbers",
    ],
    "transforms/core/foundation/accounting/units.py": [*ACCOUNTING, "tests/test_privacy_audit.py"],
    "transforms/core/foundation/accounting/ledger.py": ACCOUNTING,
    "transforms/core/continual/partition.py": [
        "tests/test_partition.py",
        "tests/test_calibration.py::test_sparse_vector_noise_scales",
    ],
    "transforms/core/counters/__init__.py": COUNTERS,
    "transforms/core/counters/trees.py": COUNTERS,
    "transforms/core/static/linear.py": [
        "tests/test_static.py",
        "tests/test_calibration.py::test_static_noise_variance_is_the_charged_one",
    ],
    "transforms/core/foundation/bounds.py": [
        "tests/test_static.py",
        "tests/test_counters.py::test_honaker_is_inverse_variance_weighting_measured",
        "tests/test_coverage.py::test_counter_bound_covers",
    ],
    "transforms/core/continual/fully_dynamic.py": [
        *DYNAMIC,
        "tests/test_alg3_reference.py",
        "tests/test_coverage.py::test_fully_dynamic_bound_covers",
    ],
    "transforms/core/continual/fully_dynamic_node.py": [
        *DYNAMIC,
        "tests/test_alg3_reference.py",
        "tests/test_coverage.py::test_fully_dynamic_bound_covers",
    ],
    "transforms/core/continual/segmented.py": [*DYNAMIC, "tests/test_alg3_reference.py"],
    "transforms/core/continual/baselines.py": [
        *DYNAMIC,
        "tests/test_coverage.py::test_insertion_only_bound_covers",
        "tests/test_coverage.py::test_two_stream_bound_covers",
    ],
    "transforms/core/foundation/entries.py": [*DYNAMIC, *ENTRIES, *CONTRACT],
    "transforms/core/protocol.py": [*DYNAMIC, *CONTRACT, "tests/test_net_change.py"],
    "transforms/core/mechanisms.py": [*CONTRACT, "tests/test_net_change.py"],
    "transforms/core/counters/factorization/coefficients.py": FACTORIZATION,
    "transforms/core/counters/factorization/blt.py": FACTORIZATION,
    "transforms/core/counters/factorization/lattice.py": FACTORIZATION,
    "transforms/core/counters/factorization/kary.py": FACTORIZATION,
    "transforms/core/continual/auto.py": AUTO,
    # the mechanism families of issues 16-18 (their Beam and slow statistical tests left out)
    "transforms/core/families/changelog/folds.py": CHANGELOG,
    "transforms/core/families/changelog/releases.py": CHANGELOG,
    "transforms/core/families/growing/base.py": GROWING,
    "transforms/core/families/growing/black_box.py": GROWING,
    "transforms/core/families/growing/pmwg.py": GROWING,
    "transforms/core/families/rr_client.py": [
        *LOCAL_DP,
        "tests/test_local_dp.py::test_empirical_local_dp_of_the_client",
    ],
    "transforms/core/families/local_dp.py": LOCAL_DP,
    "transforms/core/continual/consistency.py": _named(
        "tests/test_consistency.py",
        "test_projection_is_the_euclidean_projection",
        "test_projection_is_closest_among_random_feasible_points",
        "test_apportion_keeps_the_sum_and_moves_each_cell_less_than_one",
        "test_bound_holds_for_every_noise_inside_the_boxes",
        "test_bound_lemma_is_attained_with_all_mass_in_one_cell",
        "test_consistent_histogram_rounds_to_integers_summing_to_the_rounded_count",
        "test_make_consistent_pairs_by_stream_and_tick_and_keeps_order",
        "test_consistency_validates_its_pairs",
        "test_consistent_bound_covers_at_its_stated_rate",
        "test_rounding_reaches_the_releases_and_apportion_keeps_any_total",
    ),
    "transforms/core/continual/net_change.py": [
        *_named(
            "tests/test_net_change.py",
            "test_one_release_per_period_exact_with_noise_off_and_last_at_the_end",
            "test_the_counter_auto_picks",
            "test_signed_release_sensitivity_under_the_entry_unit",
            "test_net_change_bound_coverage",
            "test_auto_plans_per_query_set_and_its_parts_never_share_noise",
        ),
        *CONTRACT,
    ],
}

PRAGMA = "  # pragma: no mutate"

CONFTEST_ADDITION = '''

# ---- added by benchmarks/mutation.sh in the mutation copy only ----
import pytest as _mutation_pytest


@_mutation_pytest.fixture(autouse=True, scope="session")
def _mutation_clear_lru_caches():
    """mutmut forks each mutant from a process that ran the unmutated tests:
    clear every lru_cache of the package, or a warm cache hides the mutant."""
    import functools
    import sys as _sys

    for name, mod in list(_sys.modules.items()):
        if not name.startswith("transforms"):
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, functools._lru_cache_wrapper):
                obj.cache_clear()
    yield
'''

# Beam's ``userstate.get_dofn_specs`` collects the state and timer specs from the defaults of EVERY method of a
# DoFn (``dir``); mutmut adds copies of each method (``xǁBoundPersonsFnǁon_tick_end__mutmut_orig``, ...) that a
# subclass inherits with its parent's specs, and a subclass that declares its own timer of the same name
# (``GatedBoundPersonsFn``) was then refused ("the on_timer callback ... is not the specified method"). In the
# copy only, the collection skips mutmut's methods.
BEAM_CONFTEST_ADDITION = """

def _h57_dofn_specs_without_mutmut():
    import types as _types

    from apache_beam.runners.direct import transform_evaluator as _te
    from apache_beam.transforms import userstate as _us

    def get_dofn_specs(dofn):
        from apache_beam.runners.common import MethodWrapper
        from apache_beam.transforms.core import _StateDoFnParam, _TimerDoFnParam

        states, timers = set(), set()
        for name in dir(dofn):
            if "\u01c1" in name or "__mutmut_" in name:
                continue
            if not isinstance(getattr(dofn, name, None), _types.MethodType):
                continue
            for d in MethodWrapper(dofn, name).defaults:
                if isinstance(d, _StateDoFnParam):
                    states.add(d.state_spec)
                elif isinstance(d, _TimerDoFnParam):
                    timers.add(d.timer_spec)
        return states, timers

    _us.get_dofn_specs = get_dofn_specs
    _te.get_dofn_specs = get_dofn_specs


_h57_dofn_specs_without_mutmut()
"""


def _safe_comment_lines(source: str) -> set[int]:
    """Lines whose end is outside any string: a trailing comment can go there."""
    out = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.NEWLINE, tokenize.NL):
            out.add(tok.start[0])
        elif tok.type == tokenize.COMMENT:
            out.add(tok.start[0])
    return out


def excluded_lines(source: str) -> set[int]:
    """Lines of raise statements and ``__repr__`` bodies (see the module docstring)."""
    tree = ast.parse(source)
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            lines.update(range(node.lineno, node.end_lineno + 1))
        elif isinstance(node, ast.FunctionDef) and node.name == "__repr__":
            lines.update(range(node.body[0].lineno, node.end_lineno + 1))
    return lines


def add_pragmas(source: str) -> tuple[str, int]:
    lines = source.split("\n")
    safe = _safe_comment_lines(source)
    marked = 0
    for ln in sorted(excluded_lines(source)):
        if ln in safe:
            lines[ln - 1] = lines[ln - 1] + PRAGMA
            marked += 1
    return "\n".join(lines), marked


def undecorate(source: str) -> tuple[str, list[str]]:
    """``@d1 @d2 def f`` -> ``def f`` + ``f = d1(d2(f))`` (line by line, bottom up)."""
    tree = ast.parse(source)
    lines = source.split("\n")
    todo = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.decorator_list:
            continue
        decos = node.decorator_list
        if len(decos) == 1 and isinstance(decos[0], ast.Name) and decos[0].id in ("staticmethod", "classmethod"):
            continue
        todo.append(node)
    done = []
    for node in sorted(todo, key=lambda n: n.lineno, reverse=True):
        indent = " " * node.col_offset
        exprs = [ast.get_source_segment(source, d) for d in node.decorator_list]
        call = node.name
        for e in reversed(exprs):
            call = f"({e})({call})"
        lines.insert(node.end_lineno, f"{indent}{node.name} = {call}")
        for d in node.decorator_list:
            for ln in range(d.lineno, d.end_lineno + 1):
                lines[ln - 1] = ""
        done.append(f"{node.name} ({', '.join(exprs)})")
    return "\n".join(lines), done


def write_setup_cfg(workdir: Path, module: str) -> None:
    tests = [t for t in TESTS[module] if (workdir / t.split("::")[0]).exists()]
    cfg = [
        "[mutmut]",
        "source_paths = transforms/",
        f"only_mutate = {module}",
        "also_copy =",
        "    pipelines/",
        "    configs/",
        "    data/",
        "    docs/",
        "    benchmarks/",
        "pytest_add_cli_args_test_selection =",
        *(f"    {t}" for t in tests),
        "pytest_add_cli_args =",
        "    -p",
        "    no:cacheprovider",
        # per-mutant CPU-time limit: (time of its tests + 1 s) * 2 * 2.5
        "timeout_multiplier = 2.5",
        "timeout_constant = 1.0",
        "use_git_change_detection = false",
        "",
    ]
    (workdir / "setup.cfg").write_text("\n".join(cfg))


def prepare(workdir: str, module: str) -> None:
    wd = Path(workdir)
    if module not in TESTS:
        sys.exit(f"unknown module {module}; choose one of: {' '.join(TESTS)}")
    path = wd / module
    src = path.read_text()
    src, marked = add_pragmas(src)
    src, undecorated = undecorate(src)
    compile(src, str(path), "exec")
    path.write_text(src)
    conftest = wd / "tests" / "conftest.py"
    if "_mutation_clear_lru_caches" not in conftest.read_text():
        conftest.write_text(conftest.read_text() + CONFTEST_ADDITION)
    write_setup_cfg(wd, module)
    print(
        f"prepared {module}: {marked} excluded lines (raise / __repr__), undecorated: {', '.join(undecorated) or '-'}"
    )


def _meta(workdir: str, module: str) -> dict:
    return json.loads((Path(workdir) / "mutants" / (module + ".meta")).read_text())


def sample(workdir: str, module: str, n: str, seed: str) -> None:
    names = sorted(_meta(workdir, module)["exit_code_by_key"])
    k = int(n)
    if 0 < k < len(names):
        names = sorted(random.Random(int(seed)).sample(names, k))
    print("\n".join(names))


def report(workdir: str, module: str, out: str, sampled: str = "") -> None:
    from mutmut.stats import status_by_exit_code  # noqa: PLC0415

    meta = _meta(workdir, module)
    codes = meta["exit_code_by_key"]
    chosen = set(Path(sampled).read_text().split()) if sampled else set(codes)
    by_status: dict[str, list[str]] = {}
    for name, code in codes.items():
        if name not in chosen:
            continue
        status = "not checked" if code is None else status_by_exit_code[code]
        by_status.setdefault(status, []).append(name)
    killed = len(by_status.get("killed", []))
    survived = len(by_status.get("survived", []))
    timeout = len(by_status.get("timeout", []))
    no_tests = len(by_status.get("no tests", []))
    run = killed + survived + timeout + no_tests
    rate = (killed + timeout) / run if run else float("nan")
    res = {
        "module": module,
        "generated": len(codes),
        "sampled": len(chosen),
        "run": run,
        "killed": killed,
        "survived": survived,
        "timeout": timeout,
        "no_tests": no_tests,
        "other": {k: len(v) for k, v in by_status.items() if k not in ("killed", "survived", "timeout", "no tests")},
        "kill_rate": rate,
        "survivors": sorted(by_status.get("survived", []) + by_status.get("no tests", [])),
        "durations": {k: v for k, v in meta.get("durations_by_key", {}).items() if k in chosen},
    }
    Path(out).write_text(json.dumps(res, indent=1))
    print(
        f"{module}: generated {len(codes)}, run {run}, killed {killed}, survived {survived}, "
        f"timeout {timeout}, no tests {no_tests}, kill rate {100 * rate:.1f}% "
        "(killed + timeout over run; survivors and 'no tests' count as not killed)"
    )


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    {"prepare": prepare, "sample": sample, "report": report}[cmd](*args)
