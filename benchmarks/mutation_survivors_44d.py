"""Judged survivors of the mutation round of session 44, group d (``transforms/core/contribution/`` and
``transforms/core/selection/``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 sampled mutants a module, issue 27),
merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is either equivalent
(the reason in one line) or killed since by a test that asserts a property (file::test, checked with
``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

_K = "tests/test_mutation_kills_sample44d.py::"

EQUIVALENT: dict[str, str] = {
    "transforms.core.selection.candidate.xǁNodeNoiseǁnode__mutmut_7": (
        "the node's sampler called without its size 1: discrete_laplace and discrete_gaussian both default to size 1, "
        "the same one draw from the same stream (as candidate.xǁNodeNoiseǁat__mutmut_16, round 43)"
    ),
    "transforms.core.selection.keys.x__rank__mutmut_2": (
        "an op outside insert / upsert / delete ranked None instead of 3: the pairs sorted are those PersonBounder."
        "bound_tick accepted, whose contract is a known op (static_reason None; the Beam path refuses any other op as "
        "unknown_op in transforms/validate.py first), and _OP_RANK.get returns its default for no known op"
    ),
    "transforms.core.selection.release.x_advance_key__mutmut_72": (
        "the selected key's first batch called with d_live 1 for 0: the SelectedKey branch of advance_key reads "
        "d_entries only (a selected key's counter counts live entries; contributors are the candidate's test), the "
        "same batch, answer and state"
    ),
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_person__mutmut_24": (
        "the bounder's persons {person: None} instead of {} for a person without a bounder state: bound_person reads "
        "persons.get(person), None either way (a new person), bound_tick stores only a state with entries, and "
        "bound_state = persons.get(person, st['bound']) is that state or None both ways"
    ),
    "transforms.core.selection.candidate.xǁNodeNoiseǁat__mutmut_42": (
        "the tree test's node cache never read (every node drawn again): self.node draws from the node's own keyed "
        "coordinates (select_coords), a fresh stream each call, so the same value (as at__mutmut_37, round 43); the "
        "cache is rewritten with the same values: the same sums, slower"
    ),
    "transforms.core.contribution.sensitivity.x_contribution_sensitivity__mutmut_112": (
        "the histogram pattern's ops hint None for '': _lifecycle reads the hint only in ops_hint == 'alive', False "
        "for both: the same pattern"
    ),
}

KILLED_BY: dict[str, str] = {
    "transforms.core.selection.keys.xǁPersonKeysǁdecide_tick__mutmut_32": _K
    + "test_a_person_whose_updates_are_all_refused_keeps_no_key_state",
    "transforms.core.selection.release.xǁOpenKeyReleaseǁstep__mutmut_32": _K
    + "test_an_open_key_release_takes_keys_of_any_coordinate_type_in_the_canonical_order",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
