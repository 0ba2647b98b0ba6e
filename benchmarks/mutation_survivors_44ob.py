"""Judged open survivors of the mutation round of 2026-11-27 (session 44, issue 27; helper h44ob: the mutants left
open in ``transforms/core/foundation/`` by group a), merged into ``benchmarks/mutation_core_survivors.py``: each is
killed by a test that asserts a property (file::test, checked with ``python -m benchmarks.mutation_fast confirm
--sync``: passes unmutated, fails on the mutant)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {}

_K = "tests/test_mutation_kills_sample44ob.py::"

KILLED_BY: dict[str, str] = {
    # the exact decision: at 120 digits the margin 11^-117 is below the decimal error of exp(-num/den)
    "transforms.core.foundation.samplers.x_resolve_exactly__mutmut_19": _K
    + "test_resolve_exactly_decides_only_what_the_words_it_read_make_certain",
    # the words a decision reads (the stream's later draws): a lower end exactly at target + err decides; the first
    # precision is 60 digits (margin 10^-57), the next 120
    "transforms.core.foundation.samplers.x_resolve_exactly__mutmut_52": _K
    + "test_resolve_exactly_reads_a_word_exactly_while_undecided_at_its_stated_margin",
    "transforms.core.foundation.samplers.x_resolve_exactly__mutmut_5": _K
    + "test_resolve_exactly_reads_a_word_exactly_while_undecided_at_its_stated_margin",
    # np.asarray(n) without dtype=object: [2^63 - 1, 3.0] becomes float64 and 2^63 - 1 rounds up to 2^63, so a bound
    # below 2^63 takes the Python-integer sampler (other draws, an object array). _3 (dtype=None) is the same code:
    # its EQUIVALENT reason in mutation_core_survivors ("the same numbers") misses a list mixing ints and floats;
    # killed by the same test (confirmed), this entry overrides it in the merge
    "transforms.core.foundation.random_stream.x__needs_big__mutmut_5": _K
    + "test_bounds_below_2_63_given_with_a_float_draw_as_the_same_integers",
    "transforms.core.foundation.random_stream.x__needs_big__mutmut_3": _K
    + "test_bounds_below_2_63_given_with_a_float_draw_as_the_same_integers",
    # the forward index walks plain fields: a dangling reference answered by a made-up object
    "transforms.core.foundation.state.x__instances__mutmut_26": _K
    + "test_a_plain_field_that_looks_like_a_definition_defines_nothing",
}

ASSERTED_BY: dict[str, str] = {}
