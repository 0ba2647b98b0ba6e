"""The differential trace of the crash-killed mutants of group a, read (issue 27, 2026-11-27, fourth session, helper
h45ta: ``transforms/core/foundation/`` and ``limits.py``; ``benchmarks/mutation_trace.py``).

Round 44 (``benchmarks/mutation_runs/s44/*/fast.json``) killed these mutants by a crash of the first failing test.
``python -m benchmarks.mutation_trace run --only transforms/core/foundation/ transforms/core/limits.py --cap 10``
against the prepared copy of that round (its tests and test map) traced every call of each mutated function against
the original (``benchmarks/mutation_runs/s45/a/trace.json``). Every mutant whose verdict is not ``raises`` is in
``READ`` with one category and a reason a reviewer can check:

* ``asserted-existing``: a covering test fails on it by an assertion without the trace's wrapper too
  (``--plain``: ``benchmarks/mutation_runs/s45/a/plain.json``), or (said so in the reason) a test added after the
  copy's test map was recorded does, checked with ``mutation_fast confirm`` (``ASSERTED_BY`` names it);
* ``loud``: the wrong value cannot leave the library without raising (where, and what, in the reason);
* ``spurious``: an artefact of the trace (which, in the reason);
* ``asserted``: a new test kills it by an assertion on the property (``ASSERTED_BY``;
  ``tests/test_mutation_kills_trace45a.py``; confirmations in ``benchmarks/mutation_runs/s45/a/fast.confirmed.json``).
"""

from __future__ import annotations

_F = "transforms.core.foundation."
_T = "tests/test_mutation_kills_trace45a.py::"

READ: dict[str, tuple[str, str]] = {
    _F + "accounting.calibration.x__phi__mutmut_1": (
        "asserted-existing",
        (
            "differs (call[0]: 3.188072966036434e+109 != 7.841727672588751e-111); without the wrapper 1 of "
            "the 25 failing covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.calibration.x_rho_for_epsilon_delta__mutmut_23": (
        "asserted-existing",
        (
            "rho 0.0 for every (eps, delta): killed by an assertion of test_mutation_kills_sample44f.py::"
            "test_rho_for_epsilon_delta_is_the_largest_float_whose_zcdp_epsilon_is_within_epsilon (added "
            "after the copy's test map; confirm: KILLED, AssertionError)"
        ),
    ),
    _F + "accounting.ledger.xǁLedgerǁ__init____mutmut_6": (
        "loud",
        (
            "records None: the first charge of a ledger that keeps records appends to it (AttributeError), "
            "ledger_event iterates it (TypeError); a ledger with keep_records=False never reads it "
            "(protocol, counters' private ledgers)"
        ),
    ),
    _F + "accounting.ledger.xǁScopeǁ__init____mutmut_6": (
        "loud",
        (
            "a scope's _total None: its first charge (_propagated: len(None)), would_spend and total "
            "(from_vector(None)) raise TypeError before any noise; nothing reads _total otherwise"
        ),
    ),
    _F + "accounting.ledger.xǁScopeǁ__init____mutmut_9": (
        "loud",
        (
            "a scope's children None: child() (None.get) and close() (None.clear) raise AttributeError, as "
            "does pipelines.dp_events._kinds (None.values); every charge below the root goes through child()"
        ),
    ),
    _F + "accounting.ledger.xǁScopeǁ_propagated__mutmut_15": (
        "asserted-existing",
        (
            "differs (call[0]: length 2 != 1); without the wrapper 27 of the 62 failing covering tests fail "
            "by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.ledger.xǁScopeǁ_propagated__mutmut_31": (
        "asserted-existing",
        (
            "differs (call[0][0][1][0]: -0.1 != 0.1); without the wrapper 2 of the 11 failing covering tests "
            "fail by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.ledger.xǁScopeǁchild__mutmut_13": (
        "loud",
        (
            "child() returns None (and stores None): every consumer charges it or asks it for a child before "
            "any noise (AttributeError); a counter given None falls back to a private ledger, but its own "
            "child() is None too and its first _release calls None.charge"
        ),
    ),
    _F + "accounting.ledger.xǁScopeǁchild__mutmut_7": (
        "asserted-existing",
        (
            "differs (call[0]: attributes ['sensitivity']); without the wrapper 1 of the 164 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.units.x_stated_spend__mutmut_10": (
        "asserted-existing",
        (
            "differs_type (call[0][0]['epsilon']: type NoneType != float); without the wrapper 7 of the 27 "
            "failing covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.units.x_stated_spend__mutmut_20": (
        "loud",
        (
            "configured None: every reader dereferences it before publishing (spend_fields: None.items(), "
            "summary's budget_text: None.items(), dp_events.stated_epsilon: 'epsilon' in None) and raises"
        ),
    ),
    _F + "accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_47": (
        "asserted-existing",
        (
            "differs (returns where the original raises ValueError); without the wrapper 2 of the 6 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.units.xǁPrivacyUnitǁentry__mutmut_6": (
        "asserted-existing",
        (
            "differs (call[0].max_mutations: type int != NoneType); without the wrapper 20 of the 53 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "accounting.units.xǁPrivacyUnitǁgroup_size__mutmut_11": (
        "asserted-existing",
        (
            "differs (call[0]: 5 != 20); without the wrapper 4 of the 26 failing covering tests fail by an "
            "assertion (plain.json)"
        ),
    ),
    _F + "accounting.units.xǁPrivacyUnitǁgroup_size__mutmut_6": (
        "asserted-existing",
        (
            "differs_type (call[0]: type NoneType != int); without the wrapper 5 of the 26 failing covering "
            "tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "aggregates.x_resolve_entry__mutmut_31": (
        "asserted-existing",
        (
            "differs_type (call[0][0]: type NoneType != tuple); without the wrapper 1 of the 16 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "aggregates.x_resolve_entry__mutmut_50": (
        "asserted-existing",
        (
            "differs_type (call[0][0]: type NoneType != tuple); without the wrapper 1 of the 10 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "bounds.x__newton_rows__mutmut_239": (
        "asserted-existing",
        (
            "differs_type (call[0]: type NoneType != ndarray); without the wrapper 8 of the 74 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "bounds.xǁNoiseProfileǁscaled__mutmut_4": (
        "loud",
        (
            "the scaled profile's counts None: its only callers raise at once (counter.noise_profile: "
            ".times(c) does None * c; the Honaker level profiles of trees.py and kary.py add a scaled "
            "profile on the right: 0 + None), TypeError before any bound is stated"
        ),
    ),
    _F + "bounds.xǁNoiseProfileǁtail_bound__mutmut_1": (
        "asserted-existing",
        (
            "differs (returns where the original raises ValueError); without the wrapper 3 of the 132 "
            "failing covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "entries.x_resolve__mutmut_40": (
        "asserted-existing",
        (
            "differs (call[0][0]: length 3 != 4); without the wrapper 3 of the 79 failing covering tests "
            "fail by an assertion (plain.json)"
        ),
    ),
    _F + "entries.x_resolve__mutmut_98": (
        "asserted-existing",
        (
            "differs_type (call[0][0]: type NoneType != tuple); without the wrapper 6 of the 7 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "entries.xǁEntryRegistryǁ__init____mutmut_11": (
        "loud",
        (
            "entries None: every resolve (eid not in None, None.get, None.pop), validate and len raise "
            "TypeError / AttributeError before any batch is built"
        ),
    ),
    _F + "entries.xǁEntryRegistryǁ_resolve_one__mutmut_39": (
        "asserted-existing",
        (
            "differs (call[1][0].tombstones['a']: length 1 != 2); without the wrapper 1 of the 2 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "entries.xǁEntryRegistryǁ_state__mutmut_12": (
        "loud",
        (
            "a tombstone read the wrong way round: an int one is unpacked (*t: TypeError); a tuple one "
            "becomes the mutation count, and an insert then raises at 'mutations >= k' or 'mutations += 1' "
            "(TypeError); a delete or upsert of the dead id returns unknown_entry as the original does"
        ),
    ),
    _F + "entries.xǁEntryRegistryǁ_state__mutmut_7": (
        "loud",
        (
            "a tombstone read as None mutations: an insert of the dead id raises at 'None >= k' or "
            "'mutations += 1' (TypeError) whatever the limit; a delete or upsert of it returns unknown_entry "
            "as the original does"
        ),
    ),
    _F + "entries.xǁEntryRegistryǁresolve_tick__mutmut_13": (
        "asserted-existing",
        (
            "differs (call[0][0].deletes: length 1 != 0); without the wrapper 2 of the 3 failing covering "
            "tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "entries.xǁEntryRegistryǁresolve_tick__mutmut_9": (
        "loud",
        (
            "n_acc None: the first accepted update raises (None += n); a tick that accepts none gets "
            "n_updates None, and every mechanism's _apply adds it to num_updates (TypeError) before the "
            "partitioner sees it"
        ),
    ),
    _F + "entries.xǁTickBatchǁhistograms__mutmut_2": (
        "loud",
        (
            "None for the histograms: any insert or delete raises (None[q]); an empty batch's None is read "
            "as an empty tick (baselines: counter.step(None) = zeros, acc None = nothing accumulated; a "
            "non-empty acc + None raises; the changelog never asks an empty batch), the original's zeros"
        ),
    ),
    _F + "noise.xǁNoiseSourceǁ__getstate____mutmut_4": (
        "loud",
        (
            "state.pop(None) without a default: KeyError on every call (no attribute is named None); "
            "untraced because deepcopy goes through __getstate__ itself"
        ),
    ),
    _F + "noise.xǁNoiseSourceǁ__getstate____mutmut_5": (
        "spurious",
        (
            "the difference is the copy's: deepcopy goes through the original __getstate__, which leaves out "
            "_heads (hash states rebuilt on use), so the compared self lacks it; the mutant returns the "
            "original's state wherever _heads exists and raises KeyError where it does not"
        ),
    ),
    _F + "noise.xǁNoiseSourceǁ__getstate____mutmut_6": (
        "loud",
        (
            "the state keeps _heads (hash objects) where it exists: pickle and deepcopy raise TypeError "
            "(cannot pickle _hashlib.HASH); elsewhere the original's state"
        ),
    ),
    _F + "noise.xǁNoiseSourceǁ__getstate____mutmut_7": (
        "loud",
        (
            "as __getstate____mutmut_6 ('_HEADS'): _heads kept, pickle and deepcopy raise TypeError where it "
            "exists; elsewhere the original's state"
        ),
    ),
    _F + "random_stream.xǁRandomStreamǁ__init____mutmut_4": (
        "loud",
        (
            "_counter None: the first refill raises (8 << 3 * None: TypeError); a stream that never draws "
            "(noise off, size 0) never reads it"
        ),
    ),
    _F + "random_stream.xǁRandomStreamǁ__init____mutmut_6": (
        "loud",
        ("_buf None: the first words() raises (len(None): TypeError); a stream that never draws never reads it"),
    ),
    _F + "random_stream.xǁRandomStreamǁ_refill__mutmut_41": (
        "loud",
        ("_buf None after a refill: the words() that refilled slices it at once (TypeError); nothing else reads it"),
    ),
    _F + "random_stream.xǁRandomStreamǁ_refill__mutmut_46": (
        "loud",
        "_pos None after a refill: the words() that refilled computes _pos + n at once (TypeError)",
    ),
    _F + "random_stream.xǁRandomStreamǁ_refill__mutmut_47": (
        "asserted-existing",
        (
            "differs (call[1][0]._pos: 1 != 0); without the wrapper 1 of the 77 failing covering tests fail "
            "by an assertion (plain.json)"
        ),
    ),
    _F + "random_stream.xǁRandomStreamǁuniform_below__mutmut_31": (
        "loud",
        (
            "out None: any bound raises (out[idx] = ...: TypeError); for an empty bound array it returns "
            "None, read only by bernoulli (None < empty array: the right empty result); pmw draws min(m, "
            "4096) >= 1 bounds and dlap_integer_ratio >= 4"
        ),
    ),
    _F + "random_stream.xǁRandomStreamǁwords__mutmut_1": (
        "asserted-existing",
        (
            "differs (call[0]: array (0,) uint64 != (2,) uint64); without the wrapper 1 of the 48 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "random_stream.xǁRandomStreamǁwords__mutmut_4": (
        "loud",
        (
            "words() returns None: every sampler that draws a word raises at its first use (>> , "
            "int(None[0]), w >= thr: TypeError / AttributeError); a draw of size 0 never reads it (empty "
            "arrays, as the original)"
        ),
    ),
    _F + "random_stream.xǁRandomStreamǁwords__mutmut_5": (
        "asserted-existing",
        (
            "differs (call[0]: array (2,) uint64 != (6,) uint64); without the wrapper 3 of the 110 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "samplers.x__dgauss_normaliser__mutmut_16": (
        "asserted",
        (
            "the support arange(+lim, lim + 1), one point: discrete_gaussian_variance returns lim^2 (~1,600 "
            "sigma2) without raising (a reference moment for tests and benchmarks; only the pmf raised): "
            "asserted <= sigma2 (CKS Prop. 19)"
        ),
    ),
    _F + "samplers.x_discrete_gaussian__mutmut_10": (
        "asserted-existing",
        (
            "differs (call[0]: array differs (2 of 2 elements)); without the wrapper 1 of the 13 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "samplers.x_discrete_laplace__mutmut_2": (
        "asserted",
        (
            "noise off returns one 0-d zero for any size: it broadcasts where added (not x.any() holds) but "
            "changes the shape of a decoder times its noise; asserted: noise off draws exactly size int64 "
            "zeros"
        ),
    ),
    _F + "samplers.x_discrete_laplace_pmf__mutmut_9": (
        "asserted-existing",
        (
            "differs_type (call[0]: type float64 != ndarray); without the wrapper 12 of the 20 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "state.x__class_info__mutmut_12": (
        "asserted-existing",
        ("same (same); without the wrapper 7 of the 89 failing covering tests fail by an assertion (plain.json)"),
    ),
    _F + "state.x__class_info__mutmut_13": (
        "asserted-existing",
        ("same (same); without the wrapper 7 of the 89 failing covering tests fail by an assertion (plain.json)"),
    ),
    _F + "state.x__class_info__mutmut_15": (
        "loud",
        (
            "no slot names collected: the registered slotted classes (NoiseProfile, EntryRegistry: the only "
            "ones) are stored with no fields, and the restored object raises AttributeError at its first "
            "read (every method reads its slots directly; no getattr default or hasattr on them anywhere); "
            "'same' because the _INFO cache is shared: the original, run second, reads the mutant's entry"
        ),
    ),
    _F + "state.x__fields__mutmut_24": (
        "asserted-existing",
        (
            "differs (call[0]: keys [\"'_digest'\", \"'carried'\", \"'closes'\", \"'config'\", \"'emit... != "
            "[\"'carried'\", \"'closes'\", \"'emit); without the wrapper 7 of the 89 failing covering tests fail "
            "by an assertion (plain.json)"
        ),
    ),
    _F + "state.x__instances__mutmut_11": (
        "loud",
        (
            "'$O': the forward index registers nothing; its only caller, _Restore.instance for a reference "
            "before its definition, then raises StateError (undefined object) instead of restoring"
        ),
    ),
    _F + "state.x__instances__mutmut_21": (
        "loud",
        (
            "None for each forward-indexed object: _Restore.instance finds None after indexing and raises "
            "StateError (undefined object); a definition met later builds its own instance as the original"
        ),
    ),
    _F + "state.x__instances__mutmut_4": (
        "loud",
        (
            "type(None): nothing is walked, the index stays empty; _Restore.instance, its only caller, then "
            "raises StateError (undefined object)"
        ),
    ),
    _F + "state.x__to_plain__mutmut_10": (
        "spurious",
        (
            "the difference is the id()-keyed memo: the original ran on deep copies, so its keys are other "
            "ids; the mutant itself (memo None for a list's elements) gives the same plain data where a list "
            "holds no registered object and raises AttributeError (None.get) where it does"
        ),
    ),
    _F + "state.x__to_plain__mutmut_104": (
        "spurious",
        (
            "as _to_plain__mutmut_10, for an object's fields: the differences are the id()-keyed memo (a "
            "'$r' where the copy's object is new to the copied memo); the mutant raises AttributeError "
            "(None.get) at the first registered object below a field, the same plain data otherwise"
        ),
    ),
    _F + "state.x__to_plain__mutmut_11": (
        "spurious",
        (
            "the differences are the id()-keyed memo (the original ran on deep copies); the mutant itself "
            "calls _to_plain(memo) for a list's non-scalar element: TypeError (missing argument), the same "
            "list otherwise"
        ),
    ),
    _F + "state.x__to_plain__mutmut_13": (
        "asserted-existing",
        (
            "differs (returns where the original raises TypeError); without the wrapper 1 of the 97 failing "
            "covering tests fail by an assertion (plain.json)"
        ),
    ),
    _F + "state.x__to_plain__mutmut_29": (
        "loud",
        (
            "a dict's values kept unconverted: the differences shown are the id()-keyed memo (the original "
            "ran on deep copies); a value that is not builtins only (a registered object, an array, a "
            "Counter) stays a live object, and the state cannot come back: decode refuses the pickled global "
            "and restore / from_plain raise StateError (unexpected type), so the run stops at its next "
            "restore; builtins-only values are the same values ('or True')"
        ),
    ),
    _F + "state.x__to_plain__mutmut_30": (
        "loud",
        (
            "a dict's values kept unconverted: the differences shown are the id()-keyed memo (the original "
            "ran on deep copies); a value that is not builtins only (a registered object, an array, a "
            "Counter) stays a live object, and the state cannot come back: decode refuses the pickled global "
            "and restore / from_plain raise StateError (unexpected type), so the run stops at its next "
            "restore; builtins-only values are the same values (type(None) in _SCALARS)"
        ),
    ),
    _F + "state.x__to_plain__mutmut_43": (
        "spurious",
        (
            "the differences are the id()-keyed memo (the original ran on deep copies); the mutant differs "
            "only for a big-endian array, where newbyteorder(None) raises TypeError"
        ),
    ),
    _F + "state.x__to_plain__mutmut_44": (
        "spurious",
        (
            "the differences are the id()-keyed memo (the original ran on deep copies); the mutant differs "
            "only for a big-endian array, where newbyteorder('XX<XX') raises ValueError"
        ),
    ),
    _F + "state.x__to_plain__mutmut_94": (
        "spurious",
        (
            "the differences are the id()-keyed memo (the original ran on deep copies); the mutant converts "
            "every plain field by its own type: the same value for int, float, str, bytes, bool, tuple, "
            "TypeError for None (NoneType(v))"
        ),
    ),
    _F + "state.x_envelope__mutmut_5": (
        "loud",
        (
            "the digest stored under 'XXconfigXX': open_envelope, the only reader of an envelope's "
            "configuration, raises KeyError at every restore (never restores a state without checking its "
            "configuration)"
        ),
    ),
    _F + "state.x_restore__mutmut_4": (
        "loud",
        (
            "restore returns None: Protocol.from_state and the local-DP from_state refuse it (type(None) is "
            "not cls: TypeError); an open key's SelectedKey gets counter None, and its next period "
            "(counter.step) or bound (c.t) raises AttributeError"
        ),
    ),
    "transforms.core.limits.x_counter_limit__mutmut_12": (
        "asserted",
        (
            "blt gets None, read by pipelines/config/mechanism.py as 'no limit': a horizon past the BLT "
            "table is accepted at load and fails in the run; asserted: the limit is the table's largest "
            "design horizon, exactly"
        ),
    ),
    "transforms.core.limits.x_counter_limit__mutmut_13": (
        "asserted",
        "as counter_limit__mutmut_12 ('BLT')",
    ),
    "transforms.core.limits.x_periods_limit__mutmut_1": (
        "loud",
        (
            "best None: with a limited counter 'lim[0] < best[0]' raises TypeError; without one None is "
            "returned and its only caller (pipelines/config/mechanism.check_limits) unpacks it (TypeError) "
            "before the run"
        ),
    ),
}

ASSERTED_BY: dict[str, str] = {
    _F + "accounting.calibration.x_rho_for_epsilon_delta__mutmut_23": (
        "tests/test_mutation_kills_sample44f.py::"
        "test_rho_for_epsilon_delta_is_the_largest_float_whose_zcdp_epsilon_is_within_epsilon"
    ),
    _F + "random_stream.xǁRandomStreamǁ_refill__mutmut_47": (
        "tests/test_mutation_kills_trace45a.py::"
        "test_a_streams_words_are_its_shake_blocks_in_order_whatever_the_draw_sizes"
    ),
    _F + "random_stream.xǁRandomStreamǁwords__mutmut_1": (
        "tests/test_mutation_kills_trace45a.py::"
        "test_a_streams_words_are_its_shake_blocks_in_order_whatever_the_draw_sizes"
    ),
    _F + "random_stream.xǁRandomStreamǁwords__mutmut_5": (
        "tests/test_mutation_kills_trace45a.py::"
        "test_a_streams_words_are_its_shake_blocks_in_order_whatever_the_draw_sizes"
    ),
    _F + "samplers.x__dgauss_normaliser__mutmut_16": (
        "tests/test_mutation_kills_trace45a.py::test_discrete_gaussian_variance_is_at_most_sigma2_and_close_to_it"
    ),
    _F
    + "samplers.x_discrete_laplace__mutmut_2": "tests/test_mutation_kills_trace45a.py::test_noise_off_draws_int64_zeros_of_the_asked_size",  # noqa: E501
    "transforms.core.limits.x_counter_limit__mutmut_12": (
        "tests/test_mutation_kills_trace45a.py::"
        "test_the_blt_counters_horizon_limit_is_its_tables_largest_design_horizon"
    ),
    "transforms.core.limits.x_counter_limit__mutmut_13": (
        "tests/test_mutation_kills_trace45a.py::"
        "test_the_blt_counters_horizon_limit_is_its_tables_largest_design_horizon"
    ),
}
