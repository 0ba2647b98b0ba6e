"""``transforms/core/foundation/state.py``: a plain state whose references come before their definitions (a
state rebuilt in another key order, e.g. through JSON with sorted keys) restores the same object graph: every
object once, shared objects shared, the plain fields as stored (issue 27: the fast tier never restored such a
state, so the index of forward definitions, ``from_plain``'s fallback, ran in no test)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from transforms.core.foundation.state import StateError, from_plain, restore, state_class, to_plain


@state_class("test27.leaf", plain=("meta",))
class Leaf:
    def __init__(self, v, meta=None):
        self.v = v
        self.meta = meta


@state_class("test27.holder")
class Holder:
    def __init__(self, *items):
        self.items = list(items)
        self.restored = 0

    def _after_restore(self):
        self.restored += 1


def _reversed_dicts(x):
    """The same plain data with every dict's keys in reverse order (the definitions now after their uses)."""
    if type(x) is dict:
        return {k: _reversed_dicts(v) for k, v in reversed(list(x.items()))}
    if type(x) is list:
        return [_reversed_dicts(v) for v in reversed(x)][::-1]
    if type(x) is tuple:
        return tuple(_reversed_dicts(v) for v in x)
    return x


def test_forward_references_restore_the_same_graph():
    a, b = Leaf(1, {"k": [1, 2]}), Leaf(2)
    inner = Holder(b, (a, [b]))
    graph = {"a_first": [a, (b,)], "b_holder": inner, "z_again": {"deep": [(a, inner)]}, "arr": np.arange(3)}
    plain = to_plain(graph)
    back = _reversed_dicts(plain)  # "z_again" then "b_holder" then "a_first": uses before definitions
    assert list(back) == ["arr", "z_again", "b_holder", "a_first"]
    g = restore(back)
    ra, rb = g["a_first"][0], g["a_first"][1][0]
    assert (type(ra), type(rb)) == (Leaf, Leaf) and (ra.v, rb.v) == (1, 2)
    assert ra.meta == {"k": [1, 2]} and rb.meta is None
    h = g["b_holder"]
    assert h.items[0] is rb and h.items[1][0] is ra and h.items[1][1][0] is rb
    assert g["z_again"]["deep"][0][0] is ra and g["z_again"]["deep"][0][1] is h
    assert h.restored == 1  # the hook ran once
    np.testing.assert_array_equal(g["arr"], np.arange(3))
    assert to_plain(from_plain(plain)) == plain  # and in the stored order, the same plain data again


def test_forward_index_skips_plain_fields_and_arrays_and_refuses_undefined_objects():
    # a plain field that happens to look like an object definition is data, not a definition
    fake = {"$o": "test27.leaf", "$i": 99, "f": {"v": 0, "meta": None}}
    leaf = Leaf(5, {"x": fake})
    plain = to_plain({"a": leaf, "b": [leaf], "c": Counter({"q": 2})})
    back = _reversed_dicts(plain)
    g = from_plain(back)
    assert g["a"] is g["b"][0] and g["a"].meta == {"x": fake} and g["c"] == Counter({"q": 2})
    with pytest.raises(StateError, match="undefined object 99"):
        from_plain({"x": {"$r": 99}, "y": [{"$o": "test27.leaf", "$i": 0, "f": {"v": 1, "f": {"$r": 99}}}]})
    with pytest.raises(StateError, match="unknown state class"):
        from_plain({"x": {"$r": 3}, "y": ({"$o": "test27.nope", "$i": 3, "f": {}},)})
