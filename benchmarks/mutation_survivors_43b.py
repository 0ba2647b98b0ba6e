"""Judged survivors of the mutation round of 2026-11-27 (session 43, part b; ``benchmarks/mutation_fast.py``,
seed 20261127), merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is
either equivalent (the reason in one line) or killed since by a test that asserts a property (file::test, checked
with ``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {
    "transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_40": (
        "np.asarray(start) without dtype=float64 (offline; no test runs it): a table entry is Python floats, the same "
        "float64 array; any other start is only passed to minimize as x0, which makes an integer x0 float (scipy "
        "1.17 _minimize: AllInteger -> float) and L-BFGS-B copies it as float64 (array(x0, dtype=np.float64)), and "
        "a is then minimize's float64 result: the same iterates"
    ),
    "transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_23": (
        "np.asarray(tab.b[:n]) without dtype=float64: tab.b is np.cumsum of series_inverse's float64 array (float64 "
        "for every table), the same array"
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_11": (
        "a counter's own ledger (no scope given) with keep_records=None for False: the ledger reads it only for its "
        "truth (Scope.charge: if self.ledger.keep_records; pipelines/dp_events.py: if not ledger.keep_records), the "
        "same records (none) and the same charges and refusals"
    ),
    "transforms.core.contribution.harness.x_neighbour_loss__mutmut_22": (
        "the noisy values (a tuple of Python ints: _run's tuple(int(v) ...)) as numpy's own dtype instead of object: "
        "int64 (uint64 or object past int64) minus the object array of the pre-noise values runs numpy's object loop "
        "on Python ints, the same exact noise (checked up to +-2^64); as neighbour_loss__mutmut_36 for run b"
    ),
}

_K = "tests/test_mutation_kills_sample43b.py::"
KILLED_BY: dict[str, str] = {
    # open from the earlier round (h27mut2): the same mutant in this copy (j == h - 2 for j == h - 1 in _prune)
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_prune__mutmut_9": _K
    + "test_kary_signed_logs_each_node_release_once_and_its_estimate_is_their_signed_sum",
    # polish_scaled (offline) had no test: one now runs it (T = 2^3); _19 by its assertion, the others by a crash
    **{
        f"transforms.core.counters.factorization.scaled.x_polish_scaled__mutmut_{n}": _K
        + "test_polish_scaled_returns_its_lattice_figure_and_never_ends_above_its_start"
        for n in (13, 19, 76, 91, 92, 160)
    },
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_109": _K
    + "test_an_exact_gaussian_histogram_bound_is_attained_by_its_pattern",
    "transforms.core.counters.factorization.scaled.x_max_column_norm_sq__mutmut_34": _K
    + "test_max_column_norm_sq_is_exact_where_it_answers_and_refuses_past_its_range",
    "transforms.core.contribution.harness.x_calibrated_factories__mutmut_12": _K
    + "test_calibrated_factories_build_every_core_on_the_stream_given",
    # a product bug found by _58 (infinite_honaker's noise profile before its first step raised; fixed in trees.py)
    "transforms.core.counters.trees.xǁInfiniteCounterǁ__init____mutmut_58": _K
    + "test_every_counter_before_its_first_step_states_the_empty_prefix_without_noise",
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_17": _K
    + "test_every_counter_before_its_first_step_states_the_empty_prefix_without_noise",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
