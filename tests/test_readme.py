"""The README's commands and CI stay in step."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    m = re.search(r"^TEST_COMMAND='(.+)'$", ci, re.M)
    assert m, "CI must define TEST_COMMAND"
    readme = (ROOT / "README.md").read_text()
    assert m.group(1) in readme, "README must show the exact test command CI runs"


def test_ci_runs_exactly_the_readme_run_command():
    ci = (ROOT / ".ci" / "run").read_text()
    m = re.search(r"^RUN_COMMAND='(.+)'$", ci, re.M)
    assert m, "CI must define RUN_COMMAND"
    assert m.group(1) in (ROOT / "README.md").read_text(), "README must show the exact run command CI runs"
