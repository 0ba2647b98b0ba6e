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
(with what they really do on the covered inputs). A second one: the privacy harness's samplers
(``tests/privacy_harness.py``) record to the module-level ``_ACTIVE`` recorder and check ``stream.recorder is`` it; a
deep-copied noise source is another object, so the original's draws are recorded as foreign and the exact-loss tests
fail under the trace (``n_by_assertion`` 1-11 that the plain run shows to be 0).

Beyond the trace: ``_calibrate__mutmut_4`` (lattice) was traced ``raises`` (no covering test within the cap runs a
Gaussian lattice counter under an (eps, delta) budget) yet releases almost without noise there; it was found by
running every counter x budget kind (pure, zCDP, (eps, delta)) x horizon x mechanism under each mutant against the
original, and is in ``READ`` as ``asserted``.
"""

from __future__ import annotations

READ: dict[str, tuple[str, str]] = {
    "transforms.core.counters.base.x_ctz__mutmut_1": (
        "asserted-existing",
        "ctz + 2: binary_tree's step 1 releases into level 2 and answers 0 (silent at t = 1); a noise-off prefix test"
        " fails by an assertion without the trace (plain: 20 of 49 failures)",
    ),
    "transforms.core.counters.base.x_ctz__mutmut_4": (
        "asserted-existing",
        "ctz - 1: -1 at odd t (t >> -1 raises ValueError), one level low at even t; plain: 14 of 50 failures by an "
        "assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_10": (
        "spurious",
        "Ledger(None) raises TypeError whenever no scope is given; with a scope the counter is the original's: the "
        "trace's only differences are the __init__ keys artefact (subclass attributes set before super().__init__)",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_12": (
        "spurious",
        "Ledger() without its budget: as __init____mutmut_10 (TypeError)",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_15": (
        "loud",
        "t None: the first step's self.t += 1 / horizon check raises TypeError; before it the estimate and the bound "
        "(error_bound: not _terms -> 0.0) are the original's",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_16": (
        "asserted-existing",
        "t starts at 1: the lattice / kary_signed counters never charge (their charge is at t == 0) and every counter"
        " refuses one step early; plain: 14 of 83 failures by an assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_19": (
        "loud",
        "release_log '' (not None): every release appends to it (AttributeError: str has no append), the infinite "
        "counter's trees inherit it; nothing is released before the raise",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_2": (
        "loud",
        "mechanism None: every step reads self.mechanism (_batch: domain_size; lattice / kary_signed __init__: "
        "unit_sensitivities) and raises AttributeError; before a step the estimate is the original's zeros",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_22": (
        "loud",
        "_terms None: every counter that reads _terms (the trees, naive, kary_tree) sets it at each step before any "
        "estimate leaves; before the first step error_bound returns 0.0 by t == 0 as the original, noise_profile "
        "raises TypeError; lattice and kary_signed never read it",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_4": (
        "loud",
        "coords None: every release builds self.coords + (...) (_release, lattice step's charge, kary_signed's "
        "noise.stream(*coords)): TypeError at the first step, before any charge or noise",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_6": (
        "loud",
        "scope None: every subclass's __init__ calls self.scope.child(...): AttributeError at construction",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_8": (
        "loud",
        "scope None kept when none is given: self.scope.child(...) in every subclass's __init__ raises "
        "AttributeError; with a scope the same object (the trace's differences: the __init__ keys artefact)",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ__init____mutmut_9": (
        "asserted-existing",
        "a given scope replaced by a private ledger (the caller's ledger never sees the charges); plain: 15 of 106 "
        "failures by an assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_batch__mutmut_1": (
        "asserted-existing",
        "the None test inverted: a real batch released as zeros; plain: 50 of 94 failures by an assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_batch__mutmut_3": (
        "loud",
        "an empty batch as float64 zeros: the same values; int64 accumulators (binary_tree, kary_tree, infinite) "
        "raise UFuncTypeError on +=, the others reach a release only through _answers_units' int64 conversion (Count:"
        " int(sum), Histogram / Linear: asarray int64): the same release",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_batch__mutmut_5": (
        "loud",
        "zeros without dtype (float64): as _batch__mutmut_3",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_batch__mutmut_6": (
        "loud",
        "astype(None) keeps float64 of the validated integer histogram: as _batch__mutmut_3 (UFuncTypeError in int64 "
        "accumulators, the same release after _answers_units' int64 conversion elsewhere)",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_release__mutmut_1": (
        "asserted-existing",
        "coords None: noise.stream() without coordinates (every release the same stream); plain: 7 of 30 failures by "
        "an assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_release__mutmut_27": (
        "asserted-existing",
        "values None returned; plain: 5 of 104 failures by an assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_release__mutmut_29": (
        "asserted-existing",
        "the release log test inverted (appends to None, or logs nothing when asked); plain: 14 of 112 failures by an"
        " assertion",
    ),
    "transforms.core.counters.base.xǁContinualCounterǁ_release__mutmut_30": (
        "loud",
        "None appended to the release log instead of (coords, cost, values): every reader unpacks its entries "
        "(fully_dynamic_node._flush_counter_logs, contribution.harness._run): TypeError; the counter's own estimate "
        "and charges are the original's",
    ),
    "transforms.core.counters.factorization.anytime.x_anytime_tail_bound__mutmut_83": (
        "asserted-existing",
        "profile 2's middle piece with exponent 1 + P2: the tail bound falls below the tail (17.2 against 18.9 at n ="
        " 100, -36 at n = 2^21: the sensitivity goes negative and the sampler raises ValueError). Plain: 2 of 4 "
        "failures by an assertion; also killed by the new test_the_anytime_tail_bound_is_at_least_the_tail_it_bounds",
    ),
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_11": (
        "loud",
        "the key 'THETA_HAT': runs at import (BLT_TABLE = _load_table()): importing transforms.core.counters (hence "
        "transforms.core) raises KeyError (untraced: import time)",
    ),
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_17": (
        "loud",
        "int(None) as the sort key: runs at import (BLT_TABLE = _load_table()): importing transforms.core.counters "
        "(hence transforms.core) raises TypeError (untraced: import time)",
    ),
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_2": (
        "loud",
        "json.loads(None): runs at import (BLT_TABLE = _load_table()): importing transforms.core.counters (hence "
        "transforms.core) raises TypeError; the trace cannot wrap an import-time call (untraced)",
    ),
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_6": (
        "loud",
        "tuple(None) for theta: runs at import (BLT_TABLE = _load_table()): importing transforms.core.counters (hence"
        " transforms.core) raises TypeError (untraced: import time)",
    ),
    "transforms.core.counters.factorization.blt.x__load_table__mutmut_8": (
        "loud",
        "the key 'THETA': runs at import (BLT_TABLE = _load_table()): importing transforms.core.counters (hence "
        "transforms.core) raises KeyError (untraced: import time)",
    ),
    "transforms.core.counters.factorization.coefficients.x_snap_coefficients__mutmut_16": (
        "asserted-existing",
        "the snap cut two terms early (nz[-1] - 1): the lattice square root of horizon T loses its last two "
        "coefficients (another mechanism); IndexError for T <= 2. Plain: 3 of 57 failures by an assertion; also "
        "killed by the new "
        "test_the_square_root_factor_squares_to_the_prefix_sum_and_its_lattice_snap_keeps_every_coefficient",
    ),
    "transforms.core.counters.factorization.coefficients.x_sqrt_coefficients__mutmut_17": (
        "asserted-existing",
        "c_k = c_{k-1} (2/k - 1)/(2k): 0 from k = 2, C = 1 + x/2 is not S's square root (another, still consistent "
        "factorization). Plain: 11 of 55 failures by an assertion; also killed by the new "
        "test_the_square_root_factor_squares_to_the_prefix_sum_and_its_lattice_snap_keeps_every_coefficient",
    ),
    "transforms.core.counters.factorization.kary.x__kary_level_variances__mutmut_1": (
        "loud",
        "returns None: every caller indexes it (KaryTreeCounter._honaker_weights v[j], kary_radices and "
        "kary_variance_path v[j] * ...): TypeError at the counter's construction or the radix search",
    ),
    "transforms.core.counters.factorization.kary.x__kary_level_variances__mutmut_2": (
        "loud",
        "None appended for each level above the leaves: every caller computes with v[j], j >= 1 (weights v[j] / s2, "
        "the radix search's v[j] * digit_total): TypeError; with one level (no radix) the list is the original's",
    ),
    "transforms.core.counters.factorization.kary.xǁKaryTreeCounterǁ__init____mutmut_41": (
        "loud",
        "sizes None: the first step computes t % self.sizes[j] (TypeError) before any release; before it the estimate"
        " and bound are the original's zeros",
    ),
    "transforms.core.counters.factorization.kary_signed.x_signed_nodes__mutmut_64": (
        "loud",
        "a float node index (pos / size) for added nodes: the node list equals the original's by value (the trace's "
        "'same'); its first use, noise.stream(..., j, i) with the float, raises TypeError (coordinates are ints) "
        "before any draw, at the first step with a positive digit",
    ),
    "transforms.core.counters.factorization.kary_signed.x_signed_shape__mutmut_9": (
        "asserted-existing",
        "the one-level default shape (4, 1) instead of (3, 1): where one level wins (short horizons) the counter "
        "refuses the even k (ValueError); signed_variance_path ignores k at h = 1 (the same path). Plain: 2 of 5 "
        "failures by an assertion",
    ),
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_node_noise__mutmut_4": (
        "loud",
        "the cache test inverted: a node never drawn returns None and the step's total += s * None raises TypeError "
        "before the estimate; a cached node is never reached (nothing is cached)",
    ),
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁstep__mutmut_11": (
        "asserted-existing",
        "t += 2 per step: every estimate answers the prefix of 2t nodes (twice the variance) and the counter refuses "
        "at T / 2; plain: 1 of 14 failures by an assertion (the noise-off variance test)",
    ),
    "transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁstep__mutmut_46": (
        "spurious",
        "signed_nodes(t, None, h): the same nodes when h = 1, TypeError (None ** (h - 1)) at the first step "
        "otherwise; the trace's differences are the privacy harness's recorder (its samplers record to the "
        "module-level _ACTIVE recorder and check stream.recorder is it: the deep copy is another object), plain: 0 of"
        " 14 failures by an assertion",
    ),
    "transforms.core.counters.factorization.lattice.xǁBLTCounterǁ__init____mutmut_23": (
        "asserted-existing",
        "horizon '' instead of None: the first step's horizon check (t >= '') raises TypeError; plain: 1 of 55 "
        "failures by an assertion",
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ__init____mutmut_47": (
        "loud",
        "_scope None: the first step's self._scope.charge(...) raises AttributeError before any noise is drawn or "
        "estimate returned; the trace's 'returns where the original raises' is the __init__ artefact (the original, "
        "on an instance without the subclass's horizon / log2n, raises AttributeError in _tables)",
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_calibrate__mutmut_4": (
        "asserted",
        "the noise-kind test inverted: under an (eps, delta) budget the Gaussian lattice counters "
        "(sqrt_factorization, blt, anytime_sqrt, scaled_sqrt) take the Laplace scale s1 l1 / eps as sigma^2: variance"
        " 6.5e-6 instead of 44 at (1, 1e-6), nearly noiseless releases charged as private; raises only under ZCDP (no"
        " epsilon) and pure DP. Trace verdict 'raises': no covering test within the 10 s cap runs a Gaussian lattice "
        "counter under an (eps, delta) budget; found by the counter x budget-kind probe",
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_draw__mutmut_39": (
        "asserted",
        "row 1 of the noise block taken instead of row 0: each step adds the next step's draw (the same law, but not "
        "the release its key and coordinates define: a recomputed or restored run differs), the block's first row "
        "never used; raises IndexError only at the block's last step",
    ),
    "transforms.core.counters.factorization.lattice.xǁ_RowWindowǁ__init____mutmut_19": (
        "loud",
        "n None: the first push compares None with len(arr), writes arr[None] (every row) and then n += 1 raises "
        "TypeError, inside the first step's encoder, before any noise or estimate",
    ),
    "transforms.core.counters.factorization.lattice.xǁ_RowWindowǁ__init____mutmut_9": (
        "loud",
        "arr None: the first push's len(self.arr) raises TypeError inside the first step's encoder, before any noise "
        "or estimate",
    ),
    "transforms.core.counters.factorization.scaled.x__basis__mutmut_27": (
        "loud",
        "14 cosine columns instead of 16: every use multiplies the basis by the table's 16 coefficients (_diagonal, "
        "the optimisers): ValueError (shapes) before any diagonal exists, at the scaled counter's construction",
    ),
    "transforms.core.counters.factorization.scaled.x_scaled_objective__mutmut_31": (
        "loud",
        "the objective's value None: offline optimisers only (optimize_scaled, polish_scaled; never in a release "
        "path: the table is data), whose L-BFGS raises TypeError on it",
    ),
    "transforms.core.counters.factorization.scaled.xǁScaledSqrtCounterǁ_encode__mutmut_6": (
        "asserted-existing",
        "the diagonal entry s[t + 1] instead of s[t - 1] in the encoder: wrong (and unequally scaled) releases until "
        "IndexError at t = T - 1; plain: 2 of 32 failures by an assertion (noise-off exactness)",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁ__init____mutmut_41": (
        "loud",
        "_acc None: the first step reads it (Honaker: self._acc += b; plain: self._acc[:i].sum) and raises TypeError "
        "before any release; the infinite counters' trees too",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁ_honaker_weights__mutmut_13": (
        "loud",
        "break for continue: the weights and level profiles hold level 0 only; a one-level tree is the original, "
        "otherwise the step that completes a level-1 node (t = 2) reads _weights[1] and raises IndexError before its "
        "estimate; at t = 1 estimate and profile are the original's (probe: 30 configurations equal, 24 raise, none "
        "silent)",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁstep__mutmut_10": (
        "spurious",
        "Honaker's path sets _acc = b (one row) and its first release gets a scalar histogram: ValueError at the "
        "first step (probe: every Honaker configuration raises, the plain tree is the original); the trace's only "
        "differences are the privacy harness's recorder (tests/privacy_harness.py: its samplers record to the "
        "module-level _ACTIVE recorder and check stream.recorder is it; the deep copy is another object), which also "
        "made test_exact_privacy_loss fail under the trace; plain: 0 of 74 failures by an assertion",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁstep__mutmut_15": (
        "spurious",
        "min(None, ...) on Honaker's path: TypeError at the first step, the plain tree untouched; the trace's only "
        "differences are the privacy harness's recorder (tests/privacy_harness.py: its samplers record to the "
        "module-level _ACTIVE recorder and check stream.recorder is it; the deep copy is another object), which also "
        "made test_exact_privacy_loss fail under the trace; plain: 0 of 74 failures by an assertion",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁstep__mutmut_18": (
        "spurious",
        "min(i) on Honaker's path: TypeError at the first step, the plain tree untouched; the trace's only "
        "differences are the privacy harness's recorder (tests/privacy_harness.py: its samplers record to the "
        "module-level _ACTIVE recorder and check stream.recorder is it; the deep copy is another object), which also "
        "made test_exact_privacy_loss fail under the trace; plain: 0 of 74 failures by an assertion",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁstep__mutmut_32": (
        "spurious",
        "Honaker's release without its level scope (the noise source taken as the scope): AttributeError at the first"
        " step, the plain tree untouched; the trace's only differences are the privacy harness's recorder "
        "(tests/privacy_harness.py: its samplers record to the module-level _ACTIVE recorder and check "
        "stream.recorder is it; the deep copy is another object), which also made test_exact_privacy_loss fail under "
        "the trace; plain: 0 of 74 failures by an assertion",
    ),
    "transforms.core.counters.trees.xǁBinaryTreeCounterǁstep__mutmut_74": (
        "spurious",
        "the plain tree's release without its noise source (the string 'node' taken as it): AttributeError (str has "
        "no is_disabled) at the first step, Honaker's path untouched; the trace's only differences are the privacy "
        "harness's recorder (module-level _ACTIVE, identity lost in the copy), which made the harness's tests fail "
        "under the trace (11); plain: 0 of 36 failures by an assertion",
    ),
    "transforms.core.counters.trees.xǁInfiniteCounterǁ__init____mutmut_48": (
        "loud",
        "_closed None: the first step's estimate self._closed + tree_est raises TypeError before it is returned",
    ),
    "transforms.core.counters.trees.xǁInfiniteCounterǁ_new_tree__mutmut_1": (
        "loud",
        "the tree's scope None: the tree charges a private ledger, but the first step ends range 0 (t = 1) and "
        "self._tree_scope.close() raises AttributeError before the step returns its estimate: nothing leaves",
    ),
    "transforms.core.counters.trees.xǁInfiniteCounterǁ_new_tree__mutmut_2": (
        "loud",
        "the tree scope named None instead of range0: the first step's releases, charges and estimate are the "
        "original's (only the scope's name differs); the second tree's child(None) raises RuntimeError (a scope name "
        "used twice) at t = 2",
    ),
    "transforms.core.counters.trees.xǁInfiniteCounterǁnoise_profile__mutmut_5": (
        "asserted-existing",
        "the check inverted: after the first step infinite_honaker's noise profile is the closed ranges' alone (0 at "
        "t = 1, 4 instead of 7.43 at t = 7): its variance and (1 - beta) bound understated; raised only before a "
        "step. Plain: 2 of 4 failures by an assertion; also killed by the new "
        "test_infinite_honaker_states_the_plain_trees_noise_where_both_sum_the_same_nodes_and_never_more",
    ),
    "transforms.core.counters.trees.xǁInfiniteCounterǁstep__mutmut_29": (
        "asserted-existing",
        "the range end computed as 1 >> (i + 1) - 1 = -1: no range ever closes; the estimate at t = 1 is the "
        "original's, t = 2 steps range 0's tree past its horizon 1 (BudgetExceededError). Plain: 38 of 55 failures by"
        " an assertion",
    ),
    "transforms.core.counters.trees.xǁInfiniteCounterǁstep__mutmut_57": (
        "asserted-existing",
        "the range index set to 1 instead of incremented: from t = 4 a second range-1 tree releases at range 1's "
        "coordinates again (the same noise on other data), wrong estimates and variance at t = 4, 5; refused at t = "
        "6. Plain: 13 of 29 failures by an assertion; also killed by the new "
        "test_the_infinite_counter_releases_each_step_in_the_range_and_tree_of_its_time_and_never_reuses_a_coordinate",
    ),
    "transforms.core.counters.trees.xǁNaivePrefixCounterǁ__init____mutmut_13": (
        "loud",
        "node_budget None: the first step's release charges mechanism.cost(None) and raises AttributeError before any"
        " noise; the harness's _scale reads it the same way",
    ),
    "transforms.core.counters.x_make_counter__mutmut_11": (
        "asserted",
        "the horizon dropped: as x_make_counter__mutmut_6",
    ),
    "transforms.core.counters.x_make_counter__mutmut_6": (
        "asserted",
        "horizon=None passed on: finite counters refuse (ValueError), but blt (and anytime_sqrt under pure DP) runs "
        "at the default design horizon 2^12 instead of the planned one: another release and variance than the plan's",
    ),
    "transforms.core.counters.xǁCounterSpecǁmake__mutmut_10": (
        "asserted",
        "the horizon dropped: as x_make_counter__mutmut_6",
    ),
    "transforms.core.counters.xǁCounterSpecǁmake__mutmut_5": (
        "asserted",
        "horizon=None to the class: as x_make_counter__mutmut_6",
    ),
    "transforms.core.plans.xǁPlanEntryǁtext__mutmut_14": (
        "asserted-existing",
        "a whole-budget plan line None: the summary would print and the manifest record None "
        "(pipelines/outputs.mechanism_plan); plain: 2 of 13 failures by an assertion",
    ),
}

ASSERTED_BY: dict[str, str] = {
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_calibrate__mutmut_4": (
        "tests/test_mutation_kills_trace45b.py::test_a_lattice_counters_gaussian_noise_spends_exactly_the_configured_"
        "budget"
    ),
    "transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_draw__mutmut_39": (
        "tests/test_mutation_kills_trace45b.py::test_each_lattice_step_adds_its_own_draw_of_its_blocks_noise_stream"
    ),
    "transforms.core.counters.x_make_counter__mutmut_11": (
        "tests/test_mutation_kills_trace45b.py::test_the_factory_builds_the_counter_for_the_horizon_it_is_given"
    ),
    "transforms.core.counters.x_make_counter__mutmut_6": (
        "tests/test_mutation_kills_trace45b.py::test_the_factory_builds_the_counter_for_the_horizon_it_is_given"
    ),
    "transforms.core.counters.xǁCounterSpecǁmake__mutmut_10": (
        "tests/test_mutation_kills_trace45b.py::test_the_factory_builds_the_counter_for_the_horizon_it_is_given"
    ),
    "transforms.core.counters.xǁCounterSpecǁmake__mutmut_5": (
        "tests/test_mutation_kills_trace45b.py::test_the_factory_builds_the_counter_for_the_horizon_it_is_given"
    ),
}
