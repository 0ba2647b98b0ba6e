"""Tests written for open survivors of the mutation round of session 44 (issue 27, 2026-11-27, helper h44ob:
``random_stream._needs_big``, ``samplers.resolve_exactly``, ``state._instances``). As in
``test_mutation_kills_sample44a.py``: each asserts a property of the module (the exact decision against
high-precision arithmetic, the words a decision reads, the sampler a bound uses, the refusal of a dangling
reference), never a pinned float, and names the mutant(s) it kills (checked with
``python -m benchmarks.mutation_fast confirm --sync NAME TEST``: fails on the mutant, passes without it).
Fast: in memory, no Beam."""

from __future__ import annotations

import decimal

import numpy as np
import pytest

from transforms.core.foundation.random_stream import RandomStream
from transforms.core.foundation.samplers import resolve_exactly
from transforms.core.foundation.state import StateError, from_plain, state_class, to_plain

SEED = bytes(range(32))


class _Scripted(RandomStream):
    """A RandomStream that hands out the given 64-bit words in order (then zero words), counting those read."""

    def __init__(self, words):
        super().__init__(b"\0" * 32)
        self.left = list(words)
        self.read = 0

    def words(self, n):
        out = [self.left.pop(0) if self.left else 0 for _ in range(n)]
        self.read += n
        return np.asarray(out, dtype=np.uint64)


def _exp_minus(num: int, den: int, prec: int) -> decimal.Decimal:
    with decimal.localcontext() as ctx:
        ctx.prec = prec
        return (-(decimal.Decimal(num) / decimal.Decimal(den))).exp()


def _split(u: int, nwords: int) -> tuple[int, list[int]]:
    """``U = u / 2^(63 + 64 nwords)`` as resolve_exactly's (w, the words that follow)."""
    mask = (1 << 64) - 1
    return u >> (64 * nwords), [(u >> (64 * (nwords - 1 - i))) & mask for i in range(nwords)]


# kills transforms.core.foundation.samplers.x_resolve_exactly__mutmut_19 (the decimal margin 11^(3 - prec) for
# 10^(3 - prec): at 120 digits the margin 1.4e-122 is below the error of exp(-num/den) computed there (num/den
# rounded to 120 digits), so a U within that error of exp(-x) is decided on the wrong side: the Bernoulli(exp(-x))
# law is no longer exact)
@pytest.mark.parametrize(("num", "den"), [(1, 1), (1, 3), (5, 11)])
@pytest.mark.parametrize("side", [1, -1])
def test_resolve_exactly_decides_only_what_the_words_it_read_make_certain(num, den, side):
    nwords = 16
    with decimal.localcontext() as ctx:
        ctx.prec = 600
        e = _exp_minus(num, den, 600)  # error ~1e-600
        # U 1e-140 above / below exp(-x): undecidable at 60 digits (margin 1e-57), decided at 240
        u_at = (e + side * decimal.Decimal("1e-140")) * decimal.Decimal(2) ** (63 + 64 * nwords)
        w, words = _split(int(u_at.to_integral_value(rounding=decimal.ROUND_FLOOR)), nwords)
    s = _Scripted(words)
    below = resolve_exactly(s, w, num, den)
    assert below is (side < 0)  # the true answer: U < exp(-x) iff U is placed below it
    # and certain given the words read: every U with those leading bits is on the decided side
    k = s.read
    u = w
    for x in words[:k]:
        u = (u << 64) | x
    with decimal.localcontext() as ctx:
        ctx.prec = 2000  # lo, hi exact
        scale = decimal.Decimal(2) ** (63 + 64 * k)
        lo, hi = decimal.Decimal(u) / scale, decimal.Decimal(u + 1) / scale
        assert (hi <= e) if below else (lo >= e)


# kills transforms.core.foundation.samplers.x_resolve_exactly__mutmut_52 (a lower end exactly at target + err not
# taken as decided: U >= exp(-x) is certain there, since the decimal error is strictly below err, yet another word
# is read) and x_resolve_exactly__mutmut_5 (the first precision 61 digits for 60: a U between 1e-58 and 1e-57 from
# exp(-x) decided at the first precision instead of the second). Both keep the law exact; what they change is the
# words a decision reads, so every later draw of the same stream (the release's noise for its seed: a change of
# noise coordinates, state.py / docs/state.md). The rule checked: the first comparison is made at 60 digits with
# the margin err = 10^-57 (|decimal exp - exp| < err), a U interval outside the OPEN band (target - err, target +
# err) is decided, one inside it reads another word, and the next precision is 120 digits.
@pytest.mark.parametrize(("num", "den"), [(1, 1), (1, 3), (2, 3)])
def test_resolve_exactly_reads_a_word_exactly_while_undecided_at_its_stated_margin(num, den):
    err = decimal.Decimal(10) ** -57
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        edge = _exp_minus(num, den, 60) + err  # target + err, as computed at 60 digits
    # U at the band's upper edge (lower end of the 3-word interval rounds to it at 60 digits): decided, False
    n, d = edge.as_integer_ratio()
    scale = 1 << (63 + 64 * 3)
    w, words = _split(-((-n * scale) // d), 3)
    s = _Scripted(words + [0] * 8)
    assert resolve_exactly(s, w, num, den) is False
    assert s.read <= 3  # no word read past the one that put the lower end on the edge
    # U 5e-58 above / below exp(-x): inside the 60-digit band (undecided for its 4 words), outside the 120-digit
    # band (decided by the fifth word)
    e = _exp_minus(num, den, 600)
    for side in (1, -1):
        with decimal.localcontext() as ctx:
            ctx.prec = 600
            u_at = (e + side * decimal.Decimal("5e-58")) * decimal.Decimal(2) ** (63 + 64 * 8)
            w, words = _split(int(u_at.to_integral_value(rounding=decimal.ROUND_FLOOR)), 8)
        s = _Scripted(words)
        assert resolve_exactly(s, w, num, den) is (side < 0)
        assert s.read == 5


# kills transforms.core.foundation.random_stream.x__needs_big__mutmut_5 (the bounds looked at as np.asarray(n)
# instead of as the Python objects: a list mixing an int just below 2^63 with a float becomes float64, the int
# rounds up to 2^63 and the bound below 2^63 is sent to the Python-integer sampler: other words accepted, other
# draws, an object array)
@pytest.mark.parametrize("big", [(1 << 63) - 1, (1 << 63) - 100])
def test_bounds_below_2_63_given_with_a_float_draw_as_the_same_integers(big):
    ints = RandomStream(SEED).uniform_below([big, 3, 10])
    mixed = RandomStream(SEED).uniform_below([big, 3.0, 10])  # numpy would make this list float64
    assert ints.dtype == mixed.dtype == np.int64  # the vectorised uint64 sampler, as documented for < 2^63
    assert mixed.tolist() == ints.tolist()
    assert 0 <= mixed[0] < big and 0 <= mixed[1] < 3


@state_class("test44ob.leaf", plain=("meta",))
class _Leaf:
    def __init__(self, v, meta=None):
        self.v = v
        self.meta = meta


# kills transforms.core.foundation.state.x__instances__mutmut_26 (the forward index walks the plain fields too: data
# in a plain field that looks like an object definition is taken for one, so a reference to an object the state
# never defines is answered with an object made up from that data, and data naming an unregistered class makes a
# good state unreadable)
def test_a_plain_field_that_looks_like_a_definition_defines_nothing():
    fake = {"$o": "test44ob.leaf", "$i": 99, "f": {"v": 0, "meta": None}}
    leaf = _Leaf(1, {"x": fake})
    # a reference to 99 before anything: only the plain field "defines" 99
    with pytest.raises(StateError, match="undefined object 99"):
        from_plain({"a": {"$r": 99}, "b": to_plain(leaf)})
    # a good state, its use of the leaf before the leaf's definition, the plain field naming an unregistered class
    odd = _Leaf(2, [{"$o": "test44ob.not_registered", "$i": 7, "f": {}}])
    plain = to_plain({"first": odd, "again": odd})
    back = {"again": plain["again"], "first": plain["first"]}  # {"$r": 0} now comes before the definition
    assert back["again"] == {"$r": 0}
    g = from_plain(back)
    assert g["again"] is g["first"] and g["first"].meta == odd.meta and g["first"].v == 2
