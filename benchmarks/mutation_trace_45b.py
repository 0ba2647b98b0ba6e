"""The differential trace of group b's crash-killed mutants (issue 27; session 45, helper h45tb): every mutant of
``transforms/core/counters/`` and ``transforms/core/plans.py`` killed by a crash in rounds 43 + 44
(``benchmarks/mutation_runs/s44/*/fast.json``) whose trace verdict (``benchmarks/mutation_trace.py``, results in
``benchmarks/mutation_runs/s45/b/trace.json``, cap 10 s) is not ``raises``, judged one by one.

``READ``: mutant name -> (category, one-line reason). Categories (``/work/wt/briefs/h45t_common.md``):

* ``asserted-existing``: a covering test fails by an assertion on it WITHOUT the trace's wrapper too
  (``mutation_trace run --plain``: ``benchmarks/mutation_runs/s45/b/plain.json``, ``n_by_assertion > 0``);
* ``loud``: the wrong value cannot leave the library without raising (the reason says where and what);
* ``spurious``: an artefact of the trace (the reason says which);
* ``asserted``: a new property test kills it by an assertion (``ASSERTED_BY``; confirmed with
  ``mutation_fast confirm``: ``benchmarks/mutation_runs/s45/b/fast.confirmed.json``).

A trace artefact met often here: the trace's ``__init__`` wrapper runs the original on ``object.__new__(cls)``, so the
attributes a subclass sets BEFORE calling ``ContinualCounter.__init__`` (``horizon``, ``log2n``, ``design_horizon``,
``cap``, ``profile``, ``window_factor`` of the lattice counters) are missing from the original's instance: a "keys"
difference on every such call, whatever the mutant. Mutants whose only differences are of that kind are ``spurious``
(with what they really do on the covered inputs).
"""

from __future__ import annotations

_C = "transforms.core.counters."
_B = _C + "base.xǁContinualCounterǁ"
_T = _C + "trees."
_K = "tests/test_mutation_kills_trace45b.py::"

READ: dict[str, tuple[str, str]] = {
    # -- counters/__init__.py: the factory ------------------------------------------------------------------------
    _C + "x_make_counter__mutmut_6": (
        "asserted",
        "horizon=None passed on: finite counters refuse (ValueError), but blt (and anytime_sqrt under pure DP) runs at "
        "the default design horizon 2^12 instead of the planned one: another release and variance than the plan's",
    ),
    _C + "x_make_counter__mutmut_11": ("asserted", "the horizon dropped: as x_make_counter__mutmut_6"),
    _C + "xǁCounterSpecǁmake__mutmut_5": ("asserted", "horizon=None to the class: as x_make_counter__mutmut_6"),
    _C + "xǁCounterSpecǁmake__mutmut_10": ("asserted", "the horizon dropped: as x_make_counter__mutmut_6"),
    # -- counters/base.py -----------------------------------------------------------------------------------------
    _B + "__init____mutmut_2": (
        "loud",
        "mechanism None: every step reads self.mechanism (_batch: domain_size; lattice / kary_signed __init__: "
        "unit_sensitivities) and raises AttributeError; before a step the estimate is the original's zeros",
    ),
    _B + "__init____mutmut_4": (
        "loud",
        "coords None: every release builds self.coords + (...) (_release, lattice step's charge, kary_signed's "
        "noise.stream(*coords)): TypeError at the first step, before any charge or noise",
    ),
    _B + "__init____mutmut_6": (
        "loud",
        "scope None: every subclass's __init__ calls self.scope.child(...): AttributeError at construction",
    ),
    _B + "__init____mutmut_8": (
        "loud",
        "scope None kept when none is given: self.scope.child(...) in every subclass's __init__ raises "
        "AttributeError; with a scope the same object (the trace's differences: the __init__ keys artefact)",
    ),
    _B + "__init____mutmut_10": (
        "spurious",
        "Ledger(None) raises TypeError whenever no scope is given; with a scope the counter is the original's: the "
        "trace's only differences are the __init__ keys artefact (subclass attributes set before super().__init__)",
    ),
    _B + "__init____mutmut_12": ("spurious", "Ledger() without its budget: as __init____mutmut_10 (TypeError)"),
    _B + "__init____mutmut_15": (
        "loud",
        "t None: the first step's self.t += 1 / horizon check raises TypeError; before it the estimate and the bound "
        "(error_bound: not _terms -> 0.0) are the original's",
    ),
    _B + "__init____mutmut_19": (
        "loud",
        "release_log '' (not None): every release appends to it (AttributeError: str has no append), the infinite "
        "counter's trees inherit it; nothing is released before the raise",
    ),
    _B + "__init____mutmut_22": (
        "loud",
        "_terms None: every counter that reads _terms (the trees, naive, kary_tree) sets it at each step before any "
        "estimate leaves; before the first step error_bound returns 0.0 by t == 0 as the original, noise_profile "
        "raises TypeError; lattice and kary_signed never read it",
    ),
    _B + "_batch__mutmut_3": (
        "loud",
        "an empty batch as float64 zeros: the same values; int64 accumulators (binary_tree, kary_tree, infinite) "
        "raise UFuncTypeError on +=, the others reach a release only through _answers_units' int64 conversion "
        "(Count: int(sum), Histogram / Linear: asarray int64): the same release",
    ),
    _B + "_batch__mutmut_5": ("loud", "zeros without dtype (float64): as _batch__mutmut_3"),
    _B + "_batch__mutmut_6": (
        "loud",
        "astype(None) keeps float64 of the validated integer histogram: as _batch__mutmut_3 (UFuncTypeError in "
        "int64 accumulators, the same release after _answers_units' int64 conversion elsewhere)",
    ),
    # -- counters/trees.py ----------------------------------------------------------------------------------------
    _T + "xǁInfiniteCounterǁnoise_profile__mutmut_5": (
        "asserted",
        "the check inverted: after the first step infinite_honaker's noise profile is the closed ranges' alone (0 at "
        "t = 1, 4 instead of 7.43 at t = 7): its variance and (1 - beta) bound understated; raised only before a step",
    ),
    _T + "xǁInfiniteCounterǁstep__mutmut_57": (
        "asserted",
        "the range index set to 1 instead of incremented: from t = 4 a second range-1 tree releases at range 1's "
        "coordinates again (the same noise on other data), wrong estimates and variance at t = 4, 5; refused at t = 6",
    ),
}

ASSERTED_BY: dict[str, str] = {
    _C + "x_make_counter__mutmut_6": "tests/test_mutation_kills_trace45b.py::"
    "test_the_factory_builds_the_counter_for_the_horizon_it_is_given",
    _C + "x_make_counter__mutmut_11": "tests/test_mutation_kills_trace45b.py::"
    "test_the_factory_builds_the_counter_for_the_horizon_it_is_given",
    _C + "xǁCounterSpecǁmake__mutmut_5": "tests/test_mutation_kills_trace45b.py::"
    "test_the_factory_builds_the_counter_for_the_horizon_it_is_given",
    _C + "xǁCounterSpecǁmake__mutmut_10": "tests/test_mutation_kills_trace45b.py::"
    "test_the_factory_builds_the_counter_for_the_horizon_it_is_given",
    _T + "xǁInfiniteCounterǁnoise_profile__mutmut_5": _K
    + "test_infinite_honaker_states_the_plain_trees_noise_where_both_sum_the_same_nodes_and_never_more",
    _T + "xǁInfiniteCounterǁstep__mutmut_57": _K
    + "test_the_infinite_counter_releases_each_step_in_the_range_and_tree_of_its_time_and_never_reuses_a_coordinate",
}
