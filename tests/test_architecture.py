"""The shape of the code: no import circle, no private name taken across modules, no file over 600 lines,
few repeated blocks (issue 26's "Done when"). Read from the source (``tests/architecture.py``: every
``import`` counts, module level or inside a function)."""

import shutil
import subprocess
import textwrap

import pytest
from architecture import ROOT, cycles, graph, private_imports, private_names

MAX_LINES = 600


def test_no_import_circle():
    found = cycles(graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_circle_check_finds_a_circle():
    """Twin: a planted circle of three modules (and a self-import, which is not one) is reported once."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d", "a"}}
    assert cycles(edges) == [["a", "b", "c"]]


LAYERS = ("transforms.core", "transforms", "pipelines", "benchmarks")  # each may import only those before it


def layer_violations(edges) -> list[str]:
    """Imports against the layering: ``transforms.core`` imports nothing of the project outside itself,
    ``transforms`` nothing of ``pipelines`` or ``benchmarks``, ``pipelines`` nothing of ``benchmarks``."""

    def layer(module: str) -> int:
        for i in range(len(LAYERS)):
            if module == LAYERS[i] or module.startswith(LAYERS[i] + "."):
                return i
        raise AssertionError(module)

    return sorted(f"{a} -> {b}" for a, targets in edges.items() for b in targets if layer(b) > layer(a))


def test_dependencies_point_one_way():
    """``pipelines`` -> ``transforms`` -> ``transforms.core`` (README, "Layout")."""
    assert layer_violations(graph()) == []


def test_the_layer_check_finds_an_upward_import():
    """Twin: a core module importing the Beam layer, and a transform importing a pipeline, are reported."""
    edges = {"transforms.core.x": {"transforms.spec"}, "transforms.spec": {"pipelines.cli", "transforms.core.x"}}
    assert layer_violations(edges) == ["transforms.core.x -> transforms.spec", "transforms.spec -> pipelines.cli"]


def test_no_private_name_is_imported_across_modules():
    found = private_imports()
    assert found == [], "\n".join(found)


def test_the_private_import_check_reads_function_level_and_relative_imports(tmp_path):
    """Twin: ``from .b import _x`` inside a function is found; ``__version__`` and a module's own names are
    not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("_x = 1\n__version__ = '1'\n")
    (pkg / "a.py").write_text(
        textwrap.dedent(
            """
            from pkg.b import __version__

            def f():
                from .b import _x
                return _x
            """
        )
    )
    modules = {"pkg": pkg / "__init__.py", "pkg.a": pkg / "a.py", "pkg.b": pkg / "b.py"}
    assert [(n, t) for _, n, t in private_names("pkg.a", pkg / "a.py", modules)] == [("_x", "pkg.b")]


def test_no_source_file_over_600_lines():
    long = []
    for pkg in ("transforms", "pipelines", "benchmarks"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            n = len(path.read_text().splitlines())
            if n > MAX_LINES:
                long.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert long == [], long


@pytest.mark.skipif(
    shutil.which("duplicates") is None, reason="the `duplicates` command (the tool library's) is not on PATH"
)
def test_transforms_repeats_itself_in_at_most_ten_places():
    """``duplicates`` (pairs of places sharing six or more lines, alike or of the same shape) under
    ``transforms/``: at most 10 pairs (45 at stop 24), none of them between the per-stream stateful steps."""
    out = subprocess.run(
        ["duplicates", "--repo", str(ROOT / "transforms"), "--most", "200", "--seconds", "120"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "incomplete" not in out, out
    rows = [line for line in out.splitlines() if line.startswith("D")]
    assert len(rows) <= 10, out
