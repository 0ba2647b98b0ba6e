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


def test_readme_runs_the_person_level_demo_and_names_its_keys():
    """The person-level demo runs from the README (the command names a bundled configuration whose unit is
    person), and the README names every key of the person unit and which unit protects whom."""
    import yaml

    from pipelines.config.sections import PERSON_KEYS

    readme = (ROOT / "README.md").read_text()
    m = re.search(r"^\.venv/bin/python -m pipelines\.release --config (configs/demo_person\.yaml)\b", readme, re.M)
    assert m, "README must show the person-level demo command"
    assert yaml.safe_load((ROOT / m.group(1)).read_text())["privacy"]["unit"] == "person"
    for key in (*PERSON_KEYS, "max_mutations_per_entry", "max_insertions_per_entry", "contribution_bounded"):
        assert key in readme, key
    assert "Which unit protects whom" in readme
