"""Judged survivors of the mutation round of 2026-11-27 (session 43, part c; ``benchmarks/mutation_fast.py``,
seed 20261127), merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is
either equivalent (the reason in one line) or killed since by a test that asserts a property (file::test, checked
with ``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

_K = "tests/test_mutation_kills_sample43c.py::"

EQUIVALENT: dict[str, str] = {
    # ---- open from the round of 2026-11-27 (h27mut2), judged again ----
    "transforms.core.families.growing.base.xǁGrowingReleaseǁ_next_wake__mutmut_9": (
        "period_tick <= end_tick for <: they differ only at period_tick == end_tick, which is set only by _released(t) "
        "with t >= end_tick, whose _after_release finishes the release (finished_reason set, never cleared); the "
        "only reader of _next_wake is ContinualRelease.next_wake, which returns None once finished"
    ),
}

KILLED_BY: dict[str, str] = {
    # ---- open from the round of 2026-11-27 (h27mut2), killed now ----
    "transforms.core.continual.segmented.xǁSegmentedReleaseǁ_closes__mutmut_21": _K
    + "test_a_segmented_period_answer_is_the_latest_close_at_or_before_its_tick",
    "transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_24": _K
    + "test_pmwg_answers_from_the_public_histogram_once_the_phases_rounds_are_used_up",
    # ---- this round ----
    "transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_27": _K
    + "test_net_change_under_an_entry_unit_charges_what_it_plans_at_the_units_sensitivity",
}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
