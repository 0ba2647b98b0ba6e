"""The SDK's state cache without its scan of every loaded module (``transforms/state_cache.py``): the same weights,
no scan, installed wherever our stateful steps are, and only over the helper it was written against."""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import apache_beam as beam
import numpy as np
import objsize.traverse
import pytest
from apache_beam.coders import VarIntCoder
from apache_beam.runners.worker import statecache
from apache_beam.testing.util import assert_that
from apache_beam.transforms.userstate import BagStateSpec, ReadModifyWriteStateSpec

from transforms import state_cache
from transforms.core.foundation.state import encode

ROOT = Path(__file__).resolve().parents[1]


@dataclasses.dataclass
class _Core:
    counts: np.ndarray
    ticks: list
    noise: dict
    fn: object = len  # a builtin, not measured
    kind: type = int  # a type, not measured


def _values():
    """What our steps keep in state: the core's encoded bytes, bags of tuples, a tick -> count map, arrays, and a
    decoded object holding arrays, lists, dicts, a function and a type."""
    core = {"v": 3, "counts": list(range(40)), "name": "eu", "spent": [0.5, 0.25]}
    return [
        encode(core),
        b"",
        [(t, 1.5 * t, f"id{t}", {"carrier": "AA"}) for t in range(50)],
        {t: t % 3 - 1 for t in range(100)},
        np.arange(1000, dtype=np.int64),
        [np.zeros(16), np.ones((4, 4))],
        _Core(np.arange(64), [(1, 2)] * 10, {"a": np.zeros(3)}),
        ("eu", 7, None, True, 2.5),
        json.dumps(core),
        [state_cache, statecache.StateCache, lambda x: x],  # a module, a class, a function: none measured
    ]


def test_the_weights_equal_the_sdks_own():
    """:func:`deep_size` weighs each value as Beam's helper does (the scan it drops excludes only what Beam's
    filter never reaches)."""
    for value in _values():
        assert state_cache.deep_size(value) == state_cache.SDK_DEEP_SIZE(value), type(value)
    assert state_cache.deep_size(*_values()) == state_cache.SDK_DEEP_SIZE(*_values())


def _count_scans(monkeypatch) -> list:
    calls = []
    real = objsize.traverse._iter_modules_globals

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setattr(objsize.traverse, "_iter_modules_globals", counted)
    return calls


def test_a_cached_write_scans_no_module(monkeypatch):
    """A put into the SDK's cache, as a state write makes it: no walk of ``sys.modules`` with the helper
    installed; the SDK's own helper walks it at every put (so the count can see it)."""
    assert state_cache.installed()
    calls = _count_scans(monkeypatch)
    cache = statecache.StateCache(1 << 20)
    for i in range(5):
        cache.put(("key", i), [(i, "x")] * 10)
    assert calls == []
    monkeypatch.setattr(statecache, "get_deep_size", state_cache.SDK_DEEP_SIZE)
    cache.put(("key", 9), [1])
    assert len(calls) == 1


class _Keep(beam.DoFn):
    TOTAL = ReadModifyWriteStateSpec("total", VarIntCoder())
    SEEN = BagStateSpec("seen", VarIntCoder())

    def process(self, element, total=beam.DoFn.StateParam(TOTAL), seen=beam.DoFn.StateParam(SEEN)):  # noqa: B008
        key, value = element
        seen.add(value)
        total.write((total.read() or 0) + value)
        yield key, total.read(), sorted(seen.read())


def _finals(outputs):
    """Each key's last output holds all its values (whatever order the runner gave a key's elements in)."""
    last = {}
    for key, total, seen in outputs:
        if len(seen) >= len(last.get(key, (0, 0, []))[2]):
            last[key] = (key, total, seen)
    assert sorted(last.values()) == [("a", 4, [1, 3]), ("b", 2, [2])], outputs


def test_a_stateful_step_on_the_directrunner_scans_no_module(monkeypatch):
    """Through the runner (the DirectRunner's FnApiRunner, whose embedded worker caches state, as it does for a
    followed file): a stateful step gives its outputs and the worker's cache never walks ``sys.modules``; with
    the SDK's helper put back the same run walks it (the count is live)."""

    def run():
        with beam.Pipeline(runner="DirectRunner") as p:
            out = p | beam.Create([("a", 1), ("b", 2), ("a", 3)]) | beam.ParDo(_Keep())
            assert_that(out, _finals)

    calls = _count_scans(monkeypatch)
    run()
    assert calls == []
    monkeypatch.setattr(statecache, "get_deep_size", state_cache.SDK_DEEP_SIZE)
    run()
    assert calls


def test_install_leaves_a_helper_it_does_not_know(monkeypatch):
    """A Beam whose helper changed keeps its own (correct, only slower); installing twice is harmless."""

    def other(*objs):
        return 8

    monkeypatch.setattr(statecache, "get_deep_size", other)
    assert not state_cache.install() and statecache.get_deep_size is other
    monkeypatch.setattr(statecache, "get_deep_size", state_cache.SDK_DEEP_SIZE)
    assert state_cache.install() and state_cache.install() and state_cache.installed()


def _declares_state(tree: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", "")).endswith("StateSpec")
        for n in ast.walk(tree)
    )


def test_every_module_that_declares_user_state_installs_it():
    """Each project module that declares user state imports ``transforms.state_cache``, so any worker that
    unpickles one of its steps weighs cached state without the scan (the module count is a floor: the reading
    finds the steps)."""
    declaring, missing = [], []
    for path in sorted([*ROOT.glob("transforms/**/*.py"), *ROOT.glob("pipelines/**/*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not _declares_state(tree):
            continue
        declaring.append(path.relative_to(ROOT).as_posix())
        imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        if "transforms.state_cache" not in imports:
            missing.append(declaring[-1])
    assert len(declaring) >= 7, declaring
    assert not missing, f"import transforms.state_cache in {missing}"


@pytest.mark.parametrize("module", ["transforms.per_stream", "transforms.streaming", "pipelines.io.base"])
def test_importing_a_stateful_module_installs_it(module):
    """In a fresh interpreter (a worker unpickling a step imports its module first)."""
    import subprocess
    import sys

    code = (
        f"import {module}; from apache_beam.runners.worker import statecache; "
        "from transforms.state_cache import deep_size; assert statecache.get_deep_size is deep_size; print('ok')"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
