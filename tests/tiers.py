"""Which tests run pipelines (the full tier only) and which are the fast tier: the core and the in-memory paths
(README, "Quickstart"; ``docs/testing.md``). ``tests/conftest.py`` marks each test ``pipeline`` from this reading,
so that no test file has to remember a marker, and checks the reading while the tests run (a test left in the
fast tier that starts a Beam pipeline or a subprocess fails, naming the marker to add).

A test runs pipelines when its function, a fixture it requests or a function or class it names (in its module,
or imported from any module of the project: tests, ``transforms``, ``pipelines``), transitively, names something
of ``apache_beam`` or ``subprocess`` (or a whole project module that imports them). Read from the source with
:mod:`ast`; nothing is imported. Calls through an object's attributes are not followed: the check while the tests
run (``tests/conftest.py``) catches what the reading misses."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
PIPELINE_MODULES = ("apache_beam", "subprocess")


@cache
def _source_runs(path: Path) -> bool:
    """Whether a project module's source imports Beam or subprocess anywhere (the module, used whole, may run
    one)."""
    text = path.read_text(encoding="utf-8")
    return any(f"import {m}" in text or f"from {m}" in text for m in PIPELINE_MODULES)


@cache
def _project_path(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    if (TESTS / f"{module}.py").is_file():  # a test helper module (tests/ is on sys.path)
        return TESTS / f"{module}.py"
    return None


class _Module:
    """A test module's top-level functions (and class methods, as ``Class.name``) and where its names come from."""

    def __init__(self, path: Path):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        self.path = path
        self.defs: dict[str, ast.AST] = {}
        self.direct: set[str] = set()  # names bound to Beam / subprocess
        self.imported: dict[str, tuple[str, str]] = {}  # name -> (module, name there)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.defs[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.defs[node.name] = node
                for sub in node.body:
                    if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                        self.defs[f"{node.name}.{sub.name}"] = sub
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] in PIPELINE_MODULES:
                        self.direct.add((a.asname or a.name).split(".")[0])
                    elif a.asname:
                        self.imported[a.asname] = (a.name, None)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    if node.module.split(".")[0] in PIPELINE_MODULES:
                        self.direct.add(a.asname or a.name)
                    else:
                        self.imported[a.asname or a.name] = (node.module, a.name)


@cache
def _module(path: Path) -> _Module:
    return _Module(path)


_NAMES: dict[int, tuple[str, ...]] = {}  # id of a definition's node (kept alive by the cached _Module) -> its names
_RUNS: set[tuple[Path, str]] = set()  # (module, name) found to run pipelines: true whatever the walk that found it
# (module, name) found not to: every definition a whole walk visited when that walk found nothing (what it reaches
# was visited too, so none of it runs one); a "no" inside a walk that found something may only mean "seen before"
_QUIET: set[tuple[Path, str]] = set()


def _names(node: ast.AST) -> tuple[str, ...]:
    """The names a definition uses (and its functions' parameters), sorted (the walk visits them in the same order
    whatever the hash seed), read once per node: every test that reaches a helper walked its whole tree again,
    which made collecting the suite take about 100 s of each worker's CPU (stop 54's profile: 160,000 walks)."""
    names = _NAMES.get(id(node))
    if names is None:
        names = _NAMES[id(node)] = tuple(
            sorted(
                {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                | {a.arg for n in ast.walk(node) if isinstance(n, ast.FunctionDef) for a in n.args.args}
            )
        )
    return names


def _runs(path: Path, name: str, seen: set) -> bool:
    """Whether ``name`` (a function, class or method of the module at ``path``, or a name it imports) runs
    pipelines."""
    if (path, name) in _RUNS:
        return True
    if (path, name) in seen or (path, name) in _QUIET:
        return False
    seen.add((path, name))
    mod = _module(path)
    node = mod.defs.get(name)
    if node is None:
        found = name in mod.imported and _name_runs(mod, name, seen)
    else:
        found = any(_name_runs(mod, n, seen) for n in _names(node))
    if found:  # a "no" is not kept: it may only mean that the walk had already been there (a cycle)
        _RUNS.add((path, name))
    return found


def _name_runs(mod: _Module, n: str, seen: set) -> bool:
    if n in mod.direct:
        return True
    if n in mod.defs:
        return _runs(mod.path, n, seen)
    if n in mod.imported:
        module, there = mod.imported[n]
        target = _project_path(module)
        if target is None:
            return False
        if there is None:  # ``import pipelines.cli as cli``: anything of the module may be used
            return _source_runs(target)
        sub = _project_path(f"{module}.{there}")
        if sub is not None:  # ``from pipelines import wiring``
            return _source_runs(sub)
        return _runs(target, there, seen)
    return False


def runs_pipelines(path: Path, function: str, cls: str | None, fixtures) -> bool:
    """Whether the test ``function`` (of class ``cls``) in the module at ``path``, with the fixtures it requests,
    runs a Beam pipeline or a subprocess."""
    seen: set = set()
    mod = _module(Path(path))
    name = f"{cls}.{function}" if cls else function
    if _runs(mod.path, name, seen):
        return True
    conftest = TESTS / "conftest.py"
    for f in fixtures:
        if f == "_tier_check":  # conftest's own check: it refuses pipelines, it runs none
            continue
        for where in (mod.path, conftest):
            if f in _module(where).defs and _runs(where, f, seen):
                return True
    _QUIET.update(seen)  # nothing this walk visited runs one
    return False
