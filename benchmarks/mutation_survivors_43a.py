"""Judged survivors of the mutation round of 2026-11-27 (session 43, part a; ``benchmarks/mutation_fast.py``,
seed 20261127), merged into ``benchmarks/mutation_core_survivors.py``: each sampled mutant the run did not kill is
either equivalent (the reason in one line) or killed since by a test that asserts a property (file::test, checked
with ``python -m benchmarks.mutation_fast confirm``)."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {}

KILLED_BY: dict[str, str] = {}

# killed in the run by a crash only (no assertion of a covering test failed: ``mutation_fast recheck``) and in a
# privacy or bound function: the property test that now kills it by an assertion (checked with ``confirm``)
ASSERTED_BY: dict[str, str] = {}
