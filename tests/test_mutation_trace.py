"""The differential trace of crash-killed mutants (``benchmarks/mutation_trace.py``): its structural comparison and
its wrapper, on a hand-made mutants table shaped as mutmut writes one, each with a broken twin."""

from __future__ import annotations

import json
import os
import sys
import types

import numpy as np
import pytest

from benchmarks import mutation_trace as mt


class _Box:
    def __init__(self, sigma, rows):
        self.sigma, self.rows = sigma, rows


class _Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a, self.b = a, b


@pytest.mark.parametrize(
    "a, b",
    [
        (1, 1.0),
        (float("nan"), float("nan")),
        (np.array([1.0, np.nan]), np.array([1.0, np.nan])),
        ({"x": [1, (2, 3)]}, {"x": [1, (2, 3)]}),
        (_Box(2.0, np.arange(3)), _Box(2.0, np.arange(3))),
        (_Slotted(1, "s"), _Slotted(1, "s")),
        ({1, 2}, {2, 1}),
        (len, len),
    ],
)
def test_the_same_structures_have_no_difference(a, b):
    assert mt.difference(a, b) is None


@pytest.mark.parametrize(
    "a, b, where",
    [
        (1.0, 1.0000000000000002, ": 1.0 != 1.0000000000000002"),
        (np.array([1.0, 2.0]), np.array([1.0, 2.5]), "array differs (1 of 2"),
        (np.array([1, 2]), np.array([1, 2, 3]), "array (2,)"),
        ({"x": [1, (2, 3)]}, {"x": [1, (2, 4)]}, "['x'][1][1]"),
        (_Box(2.0, np.arange(3)), _Box(1.0, np.arange(3)), ".sigma"),
        (_Slotted(1, "s"), _Slotted(1, "t"), ".b"),
        (None, np.zeros(2), "type NoneType != ndarray"),
        (True, 1, "True != 1"),
        (len, abs, "len != abs"),
        ({"a": 1}, {"b": 1}, "keys"),
    ],
)
def test_a_difference_is_found_and_named_by_its_path(a, b, where):
    d = mt.difference(a, b)
    assert d is not None and where in d


def test_a_cycle_compares_without_recursing_for_ever():
    a, b = _Box(1.0, None), _Box(1.0, None)
    a.rows, b.rows = a, b
    assert mt.difference(a, b) is None
    b.sigma = 2.0
    assert mt.difference(a, b) is not None


def _table_module(monkeypatch, orig, mutant, name="x_f__mutmut_1"):
    """A module shaped as mutmut writes one: ``mutants_x_f__mutmut`` maps the original and a mutant."""
    mod = types.ModuleType("fake_mutated")
    table = {"_mutmut_orig": orig, name: mutant}
    setattr(mod, "mutants_" + name.rsplit("_", 1)[0], table)
    monkeypatch.setitem(sys.modules, "fake_mutated", mod)
    return table


def _events(fd_r):
    os.set_blocking(fd_r, False)
    data = b""
    try:
        while chunk := os.read(fd_r, 65536):
            data += chunk
    except BlockingIOError:
        pass
    return [json.loads(line) for line in data.decode().splitlines()]


def _shown(events):
    return [e for e in events if "differs" in e]


def _trace(monkeypatch, orig, mutant, calls, per_test=40):
    table = _table_module(monkeypatch, orig, mutant)
    r, w = os.pipe()
    tracer = mt.Tracer("fake_mutated.x_f__mutmut_1", w, per_test=per_test)
    tracer.install()
    tracer.begin("t::one")
    out = []
    for args in calls:
        try:
            out.append(table["x_f__mutmut_1"](*args))
        except ValueError:
            out.append("raised")
    tracer.flush()
    os.close(w)
    return tracer, out, _events(r)


def scale(sigma, rows):
    if sigma <= 0:
        raise ValueError("sigma")
    return [sigma * x for x in rows]


def scale_half(sigma, rows):  # a mutant that returns a wrong value (half the noise scale)
    if sigma <= 0:
        raise ValueError("sigma")
    return [sigma / 2 * x for x in rows]


def scale_raising(sigma, rows):  # a mutant that raises where it differs, and is right elsewhere
    if sigma <= 1:
        raise ValueError("sigma")
    return [sigma * x for x in rows]


def scale_none(sigma, rows):
    return None


def scale_accepts(sigma, rows):  # takes the input the original refuses
    return [sigma * x for x in rows]


def test_a_mutant_that_returns_a_wrong_value_is_traced_as_differs(monkeypatch):
    tracer, out, events = _trace(monkeypatch, scale, scale_half, [(2.0, [1, 2]), (4.0, [3])])
    assert out == [[1.0, 2.0], [6.0]]  # the caller sees the mutant's values
    assert tracer.counts["differs_value"] == 2 and mt.verdict(tracer.counts) == "differs"
    shown = _shown(events)
    assert shown[0]["test"] == "t::one" and "call[0][0]" in shown[0]["differs"]


def test_a_mutant_that_only_raises_where_it_differs_is_traced_as_raises(monkeypatch):
    tracer, out, events = _trace(monkeypatch, scale, scale_raising, [(1.0, [1]), (2.0, [1, 2])])
    assert out == ["raised", [2.0, 4.0]]
    assert tracer.counts == {"calls": 2, "raised": 1, "equal": 1}
    assert mt.verdict(tracer.counts) == "raises"
    assert events[-1] == {"stats": {"calls": 2, "raised": 1, "equal": 1}}


def test_a_wrong_type_and_a_refused_input_accepted_are_told_apart(monkeypatch):
    tracer, _out, _ = _trace(monkeypatch, scale, scale_none, [(2.0, [1])])
    assert mt.verdict(tracer.counts) == "differs_type"
    tracer, out, events = _trace(monkeypatch, scale, scale_accepts, [(-1.0, [1])])
    assert out == [[-1.0]] and mt.verdict(tracer.counts) == "differs"
    assert "returns where the original raises ValueError" in _shown(events)[0]["differs"]


def test_a_method_that_leaves_a_wrong_state_differs_even_when_it_returns_the_same(monkeypatch):
    def orig(self, x):
        self.sigma += x
        return 0

    def mutant(self, x):
        self.sigma += 2 * x
        return 0

    tracer, _out, events = _trace(monkeypatch, orig, mutant, [(_Box(1.0, None), 1.0)])
    assert mt.verdict(tracer.counts) == "differs" and ".sigma" in _shown(events)[0]["differs"]


def test_init_is_compared_on_a_fresh_instance(monkeypatch):
    def orig(self, x):
        self.sigma, self.rows = x, None

    def mutant(self, x):
        self.sigma, self.rows = x + 1, None

    table = _table_module(monkeypatch, orig, mutant, name="xǁBoxǁ__init____mutmut_1")
    tracer = mt.Tracer("fake_mutated.xǁBoxǁ__init____mutmut_1", None)
    tracer.install()
    table["xǁBoxǁ__init____mutmut_1"](object.__new__(_Box), 1.0)
    assert mt.verdict(tracer.counts) == "differs"


def test_the_trace_stops_at_its_call_limits_and_calls_the_mutant_beyond(monkeypatch):
    tracer, out, _ = _trace(monkeypatch, scale, scale_half, [(2.0, [1])] * 5, per_test=3)
    assert tracer.counts["calls"] == 3 and out == [[1.0]] * 5


def test_broken_twin_a_comparison_that_sees_nothing_would_call_every_mutant_raises(monkeypatch):
    """The twin: with ``difference`` blind, the half-scale mutant would pass as equal; the verdict depends on it."""
    monkeypatch.setattr(mt, "difference", lambda *a, **k: None)
    tracer, _out, _ = _trace(monkeypatch, scale, scale_half, [(2.0, [1])])
    assert mt.verdict(tracer.counts) == "same"  # not "differs": the real comparison is what tells them apart


class _Cached:
    _STATE_EXCLUDE = ("_memo", "config")

    def __init__(self, sigma, memo, config):
        self.sigma, self._memo, self.config = sigma, memo, config


def test_caches_a_class_leaves_out_of_its_state_are_not_compared_but_its_configuration_is():
    assert mt.difference(_Cached(1.0, {"a": 1}, "c"), _Cached(1.0, None, "c")) is None
    assert ".config" in mt.difference(_Cached(1.0, None, "c"), _Cached(1.0, None, "d"))
    assert ".sigma" in mt.difference(_Cached(1.0, None, "c"), _Cached(2.0, None, "c"))


def test_hash_objects_compare_by_their_state():
    import hashlib

    a, b = hashlib.blake2b(b"k"), hashlib.blake2b(b"k")
    assert mt.difference(a, b) is None
    b.update(b"x")
    assert mt.difference(a, b) == ": hash state"


def test_a_classmethod_mutant_is_wrapped_on_its_class(monkeypatch):
    class Made:
        @classmethod
        def orig(cls, x):
            return x * 2

        @classmethod
        def mut(cls, x):
            return x * 3

    name = "xǁMadeǁmake__mutmut_1"
    setattr(Made, name, Made.__dict__["mut"])
    table = _table_module(monkeypatch, Made.orig, getattr(Made, name), name=name)
    tracer = mt.Tracer("fake_mutated." + name, None)
    tracer.install()
    assert table[name] is not None and getattr(Made, name)(2) == 6  # the class attribute is what a trampoline calls
    assert mt.verdict(tracer.counts) == "differs"


def test_settle_takes_the_plain_runs_assertions_then_the_readers_judgement_and_leaves_the_rest_unsettled():
    traces = {
        "m.raise": {"verdict": "raises"},
        "m.plain": {"verdict": "differs"},
        "m.read": {"verdict": "differs_type"},
        "m.open": {"verdict": "same"},
    }
    plain = {"m.plain": {"n_by_assertion": 2}, "m.read": {"n_by_assertion": 0}}
    read = {"m.read": ("loud", "None: every caller dereferences it"), "m.raise": ("spurious", "")}
    assert mt.settle(traces, plain, read) == {
        "m.raise": "raises",
        "m.plain": "asserted-existing",
        "m.read": "loud",
        "m.open": "unsettled",
    }
