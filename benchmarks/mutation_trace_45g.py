"""Round 44's mutants that, among the fast tests, only a golden file or a pinned value killed (issue 27: "killed by
an assertion on the property, not by a crash or a golden file"): 28, all first killed by
``test_local_dp.py::test_golden_collector_state_restores_and_continues_identically`` (16) or by
``test_noise.py``'s pinned derivations (12). Re-run against every covering fast test without the golden ones
counting (``mutation_trace run --plain --names``; ``benchmarks/mutation_runs/s45/golden/plain.json``): 6 of the 16
randomized-response ones also fail ``test_hdcr_estimate_sums_the_c_ary_decomposition`` (an exact property); the
other 10 now fail the exact properties of ``tests/test_mutation_kills_golden45.py`` by an assertion (``confirm``:
``benchmarks/mutation_runs/s45/golden/fast.confirmed.json``). Of the 12 noise mutants, 5 now fail properties there
(two releases of a key draw different noise, one release the same; a digest mixes every part and keeps the id), 2
fail the property half of the pinned test (a fresh 128-bit id, two ids differ), and 5 change a derivation whose
value is itself the specification (the key's public fingerprint, the release sub-key's personalisation: a stored
format, a continued release must redraw the noise it started with in any version), so the pinned value is the
property."""

from __future__ import annotations

_T = "tests/test_mutation_kills_golden45.py::"
_RR = "transforms.core.families.local_dp."

ASSERTED_BY: dict[str, str] = {
    "transforms.core.families.rr_client.x_randomize__mutmut_10": _T
    + "test_randomize_maps_the_other_words_onto_every_other_symbol_once",
    _RR + "x_node_estimate__mutmut_3": _T + "test_the_node_estimate_of_the_expected_reports_is_the_true_change",
    **{
        _RR + f"x_variance_estimate__mutmut_{n}": _T
        + "test_the_variance_at_the_expected_touches_is_the_exact_variance_of_the_reports"
        for n in (19, 23, 25, 29)
    },
    _RR + "x_bernstein_bound__mutmut_6": _T
    + "test_the_bernstein_bound_is_taken_at_the_reports_true_range_and_largest_variance",
    "transforms.core.foundation.noise.xǁNoiseSourceǁfor_release__mutmut_7": _T
    + "test_each_release_of_a_key_draws_its_own_noise_and_a_release_always_the_same",
    **{
        f"transforms.core.foundation.noise.xǁReleaseIdentityǁwith_digest__mutmut_{n}": _T
        + "test_a_digest_mixes_every_part_and_keeps_the_release_id"
        for n in (6, 9, 10, 11)
    },
    **{
        _RR + name: _T + "test_every_release_adds_up_exactly_the_reports_of_its_decomposition"
        for name in (
            "xǁRandomizedResponseCollectorǁ_release__mutmut_31",
            "xǁRandomizedResponseCollectorǁ_release__mutmut_34",
            "x_in_memory__mutmut_15",
        )
    },
}

# every one of the 28, with how it stands
_PINNED = (
    "pinned: the derivation is a stored format (a continued or restored release must redraw the same noise, in any "
    "version); the golden value is its specification"
)
READ: dict[str, tuple[str, str]] = {
    **{name: ("asserted", "an exact property (tests/test_mutation_kills_golden45.py)") for name in ASSERTED_BY},
    **{
        _RR + name: ("asserted-existing", "test_hdcr_estimate_sums_the_c_ary_decomposition (exact reports: the truth)")
        for name in (
            "x__symbol_effects__mutmut_11",
            "xǁRandomizedResponseCollectorǁ_node__mutmut_9",
            "xǁRandomizedResponseCollectorǁ_node__mutmut_15",
            "xǁRandomizedResponseCollectorǁ_release__mutmut_13",
            "xǁRandomizedResponseCollectorǁ_release__mutmut_44",
            "xǁRandomizedResponseCollectorǁ_release__mutmut_45",
        )
    },
    **{
        f"transforms.core.foundation.noise.xǁNoiseSourceǁfingerprint__mutmut_{n}": (
            "pinned",
            "the key's public fingerprint (12 hex digits in outputs and logs) is a published format",
        )
        for n in (5, 6, 7, 9)
    },
    "transforms.core.foundation.noise.xǁNoiseSourceǁfor_release__mutmut_10": ("pinned", _PINNED),
    **{
        f"transforms.core.foundation.noise.xǁReleaseIdentityǁnew__mutmut_{n}": (
            "asserted-existing",
            "test_release_derivations_are_pinned asserts the property: a fresh id of 128 bits (32 hex digits), two "
            "new ids differ",
        )
        for n in (4, 7)
    },
}
