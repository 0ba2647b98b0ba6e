"""The DP core must import without Apache Beam; the package exports what it declares."""

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import types

import transforms.core

# Imports every module of transforms.core (found on disk, so modules added by a
# refactor are included), then reports the Beam modules that got loaded.
_PROBE = (
    "import importlib, json, pkgutil, sys\n"
    "{prelude}"
    "import transforms.core as core\n"
    "names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, 'transforms.core.'))\n"
    "for n in names:\n"
    "    importlib.import_module(n)\n"
    "beam = sorted(m for m in sys.modules if m == 'apache_beam' or m.startswith('apache_beam.'))\n"
    "print(json.dumps([len(names), beam]))\n"
)


def _probe(prelude: str = "") -> tuple[int, list]:
    out = subprocess.run([sys.executable, "-c", _PROBE.format(prelude=prelude)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    n, beam = json.loads(out.stdout)
    return n, beam


def test_core_does_not_import_beam():
    n_modules, beam = _probe()
    assert n_modules >= 30, "transforms.core should have its ~30 modules (subpackages walked)"
    assert beam == [], beam


def test_beam_probe_catches_a_beam_import():
    """Twin: a core that imports Beam (simulated by a module that does, loaded
    first) is reported."""
    fake = "import types; sys.modules['apache_beam'] = types.ModuleType('apache_beam')\n"
    _, beam = _probe(fake)
    assert beam == ["apache_beam"]


def export_problems(package: types.ModuleType) -> list[str]:
    """Every name of ``package.__all__`` resolves (lazily) to a value that is not
    None; a class or function must carry that name, be defined in a submodule of
    the package, and be the object of that name there."""
    problems = []
    for name in package.__all__:
        try:
            obj = getattr(package, name)
        except AttributeError as e:
            problems.append(f"{name}: {e}")
            continue
        if obj is None:
            problems.append(f"{name}: is None")
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            if obj.__name__ != name or not obj.__module__.startswith(package.__name__ + "."):
                problems.append(f"{name}: is {obj.__module__}.{obj.__name__}")
            elif getattr(importlib.import_module(obj.__module__), name, None) is not obj:
                problems.append(f"{name}: not the object of that name in {obj.__module__}")
    return problems


def test_public_transforms_are_exported():
    import transforms

    assert len(transforms.__all__) >= 5
    assert all(inspect.isclass(getattr(transforms, n)) for n in transforms.__all__)
    assert not export_problems(transforms)
    assert transforms.ReleaseFullyDynamic.__name__ == "ReleaseFullyDynamic"


def test_core_exports_resolve():
    assert not export_problems(transforms.core)
    modules = {m.name for m in pkgutil.walk_packages(transforms.core.__path__, "transforms.core.")}
    families = {"foundation", "counters", "static", "continual", "families"}
    assert modules >= {f"transforms.core.{f}" for f in families}


def test_export_check_catches_a_broken_export():
    """Twin: a package whose exports are missing, None, or another object."""
    stub = types.ModuleType("transforms")
    stub.__all__ = ["Gone", "Nothing", "Renamed"]
    stub.Nothing = None
    stub.Renamed = transforms.core.NoiseSource
    assert len(export_problems(stub)) == 3
