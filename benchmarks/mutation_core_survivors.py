"""The judged survivors of ``benchmarks/mutation_core.py`` (issue 27): every sampled mutant that the first run did
not kill is either equivalent (no input changes any output, charge, bound or error path; the reason in one line)
or killed since by a test that asserts a property (the test's file and name). ``python -m
benchmarks.mutation_core summary`` reads both."""

from __future__ import annotations

EQUIVALENT: dict[str, str] = {}

KILLED_BY: dict[str, str] = {}
