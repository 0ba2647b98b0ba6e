"""The project's import graph, read from the source with ``ast`` (nothing is imported or run).

Every ``import`` statement counts, at module level or inside a function: an import inside a function still
ties the two modules together, and moving it there only hides a circle. ``python tests/architecture.py``
prints the circles and the private names imported across modules.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("transforms", "pipelines", "benchmarks")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def source_files(packages=PACKAGES) -> dict[str, Path]:
    out = {}
    for pkg in packages:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            out[module_name(path)] = path
    return out


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, list[str], int]]:
    """``(imported module, names taken from it, line)`` for every import of a project module in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    out.append((alias.name, [], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(name, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:  # ``from package import module``
                    out.append((sub, [], node.lineno))
                elif target in modules:
                    out.append((target, [alias.name], node.lineno))
    return out


def graph(packages=PACKAGES) -> dict[str, set[str]]:
    """module -> the project modules it imports. A package's ``__init__`` that re-exports its own submodules
    is an edge like any other."""
    modules = source_files(packages)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, _, _ in imports_of(name, path, modules):
            if target != name:
                edges[name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def private_names(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[int, str, str]]:
    """``(line, _name, other.module)`` for every leading-underscore name ``path`` takes from another project
    module (dunder names excepted)."""
    out = []
    for target, names, line in imports_of(name, path, modules):
        for n in names:
            if n.startswith("_") and not n.startswith("__") and target != name:
                out.append((line, n, target))
    return out


def private_imports(packages=PACKAGES + ("tests",)) -> list[str]:
    """``file:line imports _name from other.module`` over the project's packages and tests."""
    modules = source_files(PACKAGES)
    out = []
    for pkg in packages:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for line, n, target in private_names(module_name(path), path, modules):
                out.append(f"{path.relative_to(ROOT)}:{line} imports {n} from {target}")
    return out


if __name__ == "__main__":
    for comp in cycles(graph()):
        print("circle:", " <-> ".join(comp))
    for line in private_imports():
        print("private:", line)
