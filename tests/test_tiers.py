"""The reading that marks the ``pipeline`` tier (``tests/tiers.py``): its answers do not depend on which test asked
first. It keeps what it found between tests (collecting the suite used to walk the same helpers 160,000 times, about
100 s of each worker's CPU); a "no" found inside a cycle may only mean "visited already", and keeping it would
leave a test that runs a pipeline in the fast tier."""

from __future__ import annotations

import itertools

import tiers

MODULE = """
import subprocess

def runner():
    subprocess.run(["true"])

def a():
    b()

def b():
    a()

def c():
    b()

def e():
    a()
    runner()

def f():
    g()

def g():
    f()
    runner()

class K:
    def m(self):
        c()
"""
# what each definition reaches: a, b, c and K.m only the quiet cycle; f and g the cycle through ``runner``
EXPECTED = {"runner": True, "a": False, "b": False, "c": False, "e": True, "f": True, "g": True, "K.m": False}


def _fresh(monkeypatch):
    monkeypatch.setattr(tiers, "_RUNS", set())
    monkeypatch.setattr(tiers, "_QUIET", set())
    monkeypatch.setattr(tiers, "_NAMES", {})


def test_every_order_of_questions_gets_the_same_answers(tmp_path, monkeypatch):
    """The definitions asked in every order (each alone first, with nothing kept): the answers equal the reading's
    (the walk visits names in sorted order, so asking ``g`` first visits ``f`` before ``runner``: ``f`` comes back
    "no" only because ``g`` is being visited, the answer a kept "no" of the cycle would get wrong)."""
    path = tmp_path / "helpers_mod.py"
    path.write_text(MODULE)

    def ask(name):
        cls, _, fn = name.rpartition(".")
        return tiers.runs_pipelines(path, fn, cls or None, [])

    names = ("a", "c", "e", "f", "g", "K.m")
    for order in itertools.permutations(names):
        _fresh(monkeypatch)
        got = {name: ask(name) for name in order}
        assert got == {n: EXPECTED[n] for n in names}, order
    _fresh(monkeypatch)
    assert {name: ask(name) for name in EXPECTED} == EXPECTED


def test_a_fixture_that_runs_pipelines_marks_the_test(tmp_path, monkeypatch):
    path = tmp_path / "helpers_fix.py"
    path.write_text(MODULE + "\ndef test_x():\n    c()\n\ndef fixture_g():\n    g()\n")
    _fresh(monkeypatch)
    assert not tiers.runs_pipelines(path, "test_x", None, [])
    assert tiers.runs_pipelines(path, "test_x", None, ["fixture_g"])
    assert not tiers.runs_pipelines(path, "test_x", None, ["_tier_check"])
