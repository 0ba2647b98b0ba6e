"""Judged survivors of the mutation round of session 44, the open mutants of group b in the offline optimiser of
``transforms/core/counters/factorization/scaled.py`` (``optimize_scaled``, ``polish_scaled``; left OPEN in
``mutation_survivors_44b.py``), merged into ``benchmarks/mutation_core_survivors.py``: each is killed by a test that
watches the optimiser run (a spy on ``scipy.optimize.minimize`` and on ``lattice_max_variance``) and asserts the stage
its docstring states, not a reproduction of a table row (file::test, checked with
``python -m benchmarks.mutation_fast confirm --sync``: passes unmutated, fails mutated with an AssertionError)."""

from __future__ import annotations

_S = "transforms.core.counters.factorization.scaled."
_K = "tests/test_mutation_kills_sample44oc.py::"

EQUIVALENT: dict[str, str] = {}

KILLED_BY: dict[str, str] = {
    # the polish's continuation at p = 101 instead of 100: the L-BFGS stage is optimize_scaled's stated
    # continuation (20, 100, 1000, 10000) carried on to 30000
    _S + "x_polish_scaled__mutmut_42": _K + "test_polish_scaled_runs_the_continuation_it_states",
    # the Nelder-Mead stages with scipy's default options: no initial simplex of the stated scales 3e-3 .. 1e-4
    _S + "x_polish_scaled__mutmut_117": _K + "test_polish_scaled_starts_each_nelder_mead_stage_from_its_stated_simplex",
    # one common normal draw for every selected coefficient instead of one each
    _S + "x_polish_scaled__mutmut_148": _K + "test_polish_scaled_perturbs_each_selected_coefficient_independently",
    # the continuation from p = 21 instead of the stated 20
    _S + "x_optimize_scaled__mutmut_26": _K + "test_optimize_scaled_runs_the_continuation_it_states",
}

ASSERTED_BY: dict[str, str] = {}
