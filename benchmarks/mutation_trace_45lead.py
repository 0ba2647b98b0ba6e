"""The lead's part of round 45's differential trace (issue 27): group d's 166 crash kills its helper had no time to
trace (``benchmarks/mutation_runs/s45/d/untraced.txt``: ``contribution/harness.py`` 51, ``selection/candidate.py``
42, ``release.py`` 37, ``keys.py`` 36; traced in ``s45/d2/``, their 35 non-``raises`` re-run without the wrapper in
``s45/d2/plain.json``) and group c's 29 ``segmented.py`` crash kills left untraced with the 4 its helper left
unsettled (``s45/c2/``). Categories as in ``benchmarks/mutation_trace_45a.py``."""

from __future__ import annotations

_H = "transforms.core.contribution.harness.x_calibrated_factories__mutmut_"
_C = "transforms.core.selection.candidate."
_K = "transforms.core.selection.keys."
_R = "transforms.core.selection.release."
_S = "transforms.core.continual.segmented.xǁSegmentedReleaseǁ"
_FD = "transforms.core.continual.fully_dynamic.xǁFullyDynamicReleaseǁ"

ASSERTED_BY: dict[str, str] = {
    _R + "xǁOpenKeyReleaseǁstep__mutmut_105": "tests/test_mutation_kills_trace45lead.py::"
    "test_selected_keys_answers_and_bounds_agree_at_every_period",
}

_FACTORY = (
    "loud",
    "the privacy harness's factory (test tooling, not a release path): the lambda it returns builds a release from "
    "None / a dropped argument and raises when the harness calls it (plain run: {})",
)


def _factory(n: int, exc: str) -> tuple[str, str]:
    return (_FACTORY[0], _FACTORY[1].format(exc))


_STATE_KEY = (
    "loud",
    "a versioned state dict written with a renamed key: the next read of that key (every period's apply_event / "
    "decide_person, and from_plain's version check) raises KeyError / StateError before anything is released",
)

READ: dict[str, tuple[str, str]] = {
    **{_H + str(n): _factory(n, e) for n, e in ((7, "TypeError"), (102, "TypeError"), (103, "TypeError"))},
    **{_H + str(n): _factory(n, e) for n, e in ((114, "TypeError"), (76, "ValueError"), (83, "TypeError"))},
    **{_H + str(n): _factory(n, e) for n, e in ((88, "TypeError"), (90, "AttributeError"))},
    _H + "10": (
        "loud",
        "the harness's releases built without an end: AutoRelease refuses the harness's run to its end "
        "(ValueError, plain run), test tooling only",
    ),
    _H + "23": (
        "loud",
        "choose_counter(None, ...): make_counter raises UnsupportedCounter for the unknown noise kind (plain run)",
    ),
    _H + "75": ("asserted-existing", "test_calibrated_factories_build_every_core_on_the_... (plain run)"),
    _H + "113": ("asserted-existing", "test_calibrated_factories_build_every_core_on_the_... (plain run)"),
    "transforms.core.contribution.harness.x_record__mutmut_32": (
        "loud",
        "the harness's recorded draws without their noisy value (None): the exact-loss computation reads it and "
        "raises TypeError (plain run); test tooling",
    ),
    _C + "x_apply_event__mutmut_29": _STATE_KEY,
    _C + "x_apply_event__mutmut_33": _STATE_KEY,
    _C + "x_apply_event__mutmut_34": _STATE_KEY,
    _C + "x_new_candidate_state__mutmut_4": _STATE_KEY,
    _C + "x_new_candidate_state__mutmut_7": _STATE_KEY,
    _K + "xǁPersonKeysǁdecide_person__mutmut_155": _STATE_KEY,
    _K + "xǁPersonKeysǁdecide_person__mutmut_157": _STATE_KEY,
    _C + "xǁNodeNoiseǁ__init____mutmut_2": (
        "loud",
        "the node-noise cache None: the first node noise asked (before any test) raises AttributeError",
    ),
    _K + "xǁKeyLimitǁgroup__mutmut_1": (
        "asserted-existing",
        "group size L / (2k - 1) instead of L (2k - 1) (less answer noise): 17 assertions without the wrapper, "
        "among them test_gaussian_answers_are_calibrated_below_group_privacy and test_laplace_answers_attain_the_"
        "joint_mass",
    ),
    _K + "xǁPersonKeysǁ__init____mutmut_2": (
        "loud",
        "the person bounder None: the first decision raises AttributeError",
    ),
    _K + "xǁPersonKeysǁdecide_person__mutmut_153": (
        "loud",
        "an accepted (person, update) appended as None: every caller unpacks the accepted pairs (TypeError)",
    ),
    _K + "xǁPersonKeysǁdecide_person__mutmut_165": (
        "loud",
        "the refused list None: the release's dead-letter loop iterates it and raises TypeError (plain run) before "
        "the period's release is returned",
    ),
    _R + "x_advance_key__mutmut_47": (
        "loud",
        "a candidate that failed its test reported as selected (a key published without crossing its threshold): "
        "both callers raise before anything is released: OpenKeyRelease.step builds its answer from the candidate "
        "dict (AttributeError, confirmed by test_selected_keys_answers_and_bounds_agree_at_every_period: killed by "
        "that AttributeError) and the Beam step asks ctx.bound of the dict",
    ),
    _R + "x_advance_key__mutmut_62": (
        "asserted-existing",
        "test_noise_off_threshold_zero_releases_every_live_key_exactly (10 assertions, plain run)",
    ),
    _R + "xǁKeyContextǁ__init____mutmut_15": ("loud", "node_noise None: the first test raises AttributeError"),
    _R + "xǁOpenKeyReleaseǁ__init____mutmut_12": (
        "asserted-existing",
        "answer budget None: test_published_figures_equal_the_configured_ones (6 assertions, plain run)",
    ),
    _R + "xǁOpenKeyReleaseǁ__init____mutmut_22": (
        "loud",
        "the selection charged without coordinates: the ledger's record then lacks the ('open_keys', 'select') "
        "scope that the plan and the published figures look up (KeyError, plain run); the amount is the same",
    ),
    _R + "xǁOpenKeyReleaseǁ__init____mutmut_34": (
        "loud",
        "the answers charged under ('open_keys', 'ANSWERS'): the lookup of ('open_keys', 'answers') raises KeyError "
        "(plain run); the amount is the same",
    ),
    _R + "xǁOpenKeyReleaseǁ__init____mutmut_39": (
        "loud",
        "the key context None: the first period raises AttributeError",
    ),
    _R + "xǁOpenKeyReleaseǁ__init____mutmut_49": (
        "asserted-existing",
        "the first period numbered 2: 6 assertions without the wrapper (plain run), and group d's new test",
    ),
    _R + "xǁOpenKeyReleaseǁstep__mutmut_105": ("asserted", "a period's bounds None (answers without their bound)"),
    _R + "xǁOpenKeyReleaseǁstep__mutmut_53": (
        "loud",
        "each key tested at period None: the threshold and dyadic-node lookups at None raise TypeError before the "
        "first test decides (confirmed: test_a_sparse_vector_selection_at_p_is_decided_by_the_query_noise_of_p "
        "fails by that TypeError)",
    ),
}

# group c's last ones (s45/c2: the 29 segmented.py crash kills, 23 raises; plus the helper's 4 unsettled), each
# re-run without the wrapper (s45/c2/plain.json)
READ.update(
    {
        _S + "_start__mutmut_16": (
            "loud",
            "the closed-segment count None: the first close's `closed += 1` raises TypeError (plain run); before "
            "it, segment 0's coordinates carry None instead of 0, still one coordinate per segment",
        ),
        _S + "_log__mutmut_1": (
            "loud",
            "None logged in place of a node output: every reader of node_outputs unpacks it (AttributeError / "
            "TypeError, plain run); the releases themselves do not read the log",
        ),
        _S + "_start__mutmut_14": ("loud", "mechanisms None: the first answer iterates it (TypeError)"),
        _S + "_start__mutmut_18": (
            "loud",
            "the every-period state (carried answers, exact histograms) set only WITHOUT periods: with periods the "
            "first period end reads it and raises AttributeError (plain run); without, unused",
        ),
        _S + "_start__mutmut_21": (
            "loud",
            "an exact histogram of shape () instead of (d,): its first cell read raises IndexError (plain run) "
            "before any answer",
        ),
        _S + "_start__mutmut_3": (
            "loud",
            "the partitioner None: the first tick's advance raises AttributeError before any close or charge",
        ),
        _FD + "_start__mutmut_9": (
            "loud",
            "a PMW set's deletion counter kept as PMW in the tuned family: a counter's noise profile refuses a "
            "mechanism that is not additive (ValueError, counters/base.py) at the first stated bound, in every "
            "covering test (plain run)",
        ),
        _FD + "reuse__mutmut_9": (
            "asserted-existing",
            "count sets reuse n_hat outside the tight profile: test_every_charge_has_its_stated_plan (8 assertions, "
            "plain run)",
        ),
        _S + "_advance__mutmut_16": (
            "loud",
            "the partitioner advanced with noise None: its first draw raises AttributeError (plain run)",
        ),
        _S + "_closes__mutmut_22": (
            "loud",
            "n0 None: the period answers appended before the close are carried with it; carried answer k then "
            "asks _bound(k) past the last mechanism (IndexError, plain run) exactly when they differ (with no "
            "period answer before the close the fresh answers are the original's)",
        ),
    }
)
