"""Tests written for the survivors of the mutation round of session 44, group a (``benchmarks/mutation_fast.py``,
issue 27, 2026-11-27, helper h44ma: ``transforms/core/foundation/`` and ``limits.py``, 70 sampled mutants a module).
As in ``test_mutation_kills_sample43a.py``: each asserts a property of the module (a conversion, a stated bound, a
refusal the contract states, an order, a replay), never a pinned golden value, and names the mutant(s) it kills
(checked with ``python -m benchmarks.mutation_fast confirm NAME TEST``: fails on the mutant, passes without it).
Fast: in memory, no Beam."""

from __future__ import annotations

import decimal
import math
import pickletools
from types import SimpleNamespace

import numpy as np
import pytest

from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP, SeriesSplit
from transforms.core.foundation.accounting import calibration as cal
from transforms.core.foundation.accounting import ledger as ledger_mod
from transforms.core.foundation.accounting.budgets import BudgetExceededError, to_approx, zcdp_to_approx
from transforms.core.foundation.accounting.ledger import Ledger
from transforms.core.foundation.accounting.units import PrivacyUnit
from transforms.core.foundation.aggregates import fold
from transforms.core.foundation.bounds import GAUSSIAN, LAPLACE, NoiseProfile, tail_bounds
from transforms.core.foundation.entries import DeletionsRefused, EntryRegistry, Update, static_reason, update_order
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity
from transforms.core.foundation.samplers import bernoulli_exp, geometric_inversion
from transforms.core.foundation.state import decode, encode, restore, state_class, to_plain

KEY = bytes(range(32))


# kills transforms.core.foundation.accounting.budgets.xǁApproxDPǁas_zcdp__mutmut_6 (an (eps, 0) cost charged to a
# zCDP ledger as eps^3 / 2 instead of eps^2 / 2: a pure step under-counted for eps < 1)
@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
def test_an_eps_zero_delta_cost_is_charged_to_a_zcdp_ledger_as_the_pure_step_it_is(eps):
    assert ApproxDP(eps, 0.0).as_zcdp() == PureDP(eps).as_zcdp() == ZCDP(eps * eps / 2)
    a, b = Ledger(ZCDP(10.0)), Ledger(ZCDP(10.0))
    a.charge(ApproxDP(eps, 0.0))
    b.charge(PureDP(eps))
    assert a.spent == b.spent and a.spent.rho == pytest.approx(eps * eps / 2, rel=1e-15)


# kills transforms.core.foundation.accounting.ledger.xǁScopeǁcharge__mutmut_13 (a one-number ledger refuses a
# charge that brings it exactly to its cap plus the stated float tolerance)
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)])
def test_a_ledger_accepts_a_charge_up_to_its_cap_plus_the_tolerance_and_refuses_one_ulp_more(budget):
    cap = budget.primary
    edge = cap * (1 + ledger_mod._TOL) + 1e-300
    ledger = Ledger(budget)
    ledger.charge(type(budget)(edge))
    assert ledger.spent.primary == edge and ledger.num_releases == 1
    over = Ledger(budget)
    with pytest.raises(BudgetExceededError):
        over.charge(type(budget)(math.nextafter(edge, math.inf)))
    assert over.spent.primary == 0.0 and over.num_releases == 0


# kills transforms.core.foundation.bounds.x_tail_bounds__mutmut_3 (beta = 0 accepted: an all-zero row states the
# bound 0 at failure probability 0, other rows crash with a ZeroDivisionError instead of the refusal)
@pytest.mark.parametrize(
    "terms,counts",
    [
        ([(LAPLACE, 2.0, 1.0)], [[0]]),
        ([(LAPLACE, 2.0, 1.0), (LAPLACE, 3.0, 0.5)], [[2, 1]]),
        ([(GAUSSIAN, 4.0, 1.0)], [[0], [3]]),
    ],
)
@pytest.mark.parametrize("beta", [0.0, 1.0, -0.1])
def test_tail_bounds_refuses_a_failure_probability_outside_zero_one_whatever_the_rows(terms, counts, beta):
    with pytest.raises(ValueError, match="beta must be in"):
        tail_bounds(terms, np.array(counts), beta)


# kills transforms.core.foundation.bounds.x__packed__mutmut_20 (a count past the cache key's range packed anyway:
# struct.error instead of the bound)
@pytest.mark.parametrize("count", [2**64, 2**70])
def test_a_profile_with_more_terms_than_the_cache_key_holds_still_states_its_sub_gaussian_bound(count):
    beta = 0.05
    got = NoiseProfile({(GAUSSIAN, 2.0, 1.0): count}).tail_bound(beta)
    assert got == pytest.approx(math.sqrt(2 * (2.0 * count) * math.log(2 / beta)), rel=1e-12)
    assert got > NoiseProfile({(GAUSSIAN, 2.0, 1.0): 2**40}).tail_bound(beta)


# kills transforms.core.foundation.entries.x_update_order__mutmut_2 (the item dropped from the order: two updates
# of one entry equal but for their item keep the order they arrived in, so the file's line order decides which
# one is accepted)
def test_update_order_is_a_total_order_on_the_items_too():
    a = (3, 0, "insert", (1, 0), 10.0)
    b = (3, 0, "insert", (2, 0), 10.0)
    assert update_order(a) != update_order(b)
    assert sorted([a, b], key=update_order) == sorted([b, a], key=update_order)
    assert (update_order(a) < update_order(b)) == ((1, 0) < (2, 0))


def _reg():
    return EntryRegistry((4, 3))


# kills transforms.core.foundation.entries.xǁEntryRegistryǁresolve_keyed__mutmut_21 (a malformed pair ends the tick:
# every later pair silently dropped) and __mutmut_6 (a list pair or a 3-tuple taken as well formed)
@pytest.mark.parametrize("bad", [("p1", Update("insert", "e0", (0, 0)), "x"), ["p1", Update("insert", "e0", (0, 0))]])
def test_resolve_keyed_rejects_a_malformed_pair_and_applies_the_rest_of_the_tick(bad):
    reg = _reg()
    good = ("p2", Update("insert", "e1", (1, 2)))
    batch, rejected = reg.resolve_keyed(5, [bad, good])
    assert [(r.update, r.reason) for r in rejected] == [(bad, "malformed")]
    assert batch.inserts == [(1, 2)] and batch.n_updates == 1
    assert len(reg) == 1


# kills transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_29 (the fast path accepts an item
# whose length differs from the number of query dimensions, checking only the first coordinates)
@pytest.mark.parametrize("item", [(1, 2, 0), (1,)])
def test_resolve_tick_refuses_an_item_of_the_wrong_length(item):
    reg = _reg()
    batch, rejected = reg.resolve_tick(5, [Update("insert", "e0", item), Update("insert", "e1", (3, 2))])
    assert [r.reason for r in rejected] == ["malformed"]
    assert batch.inserts == [(3, 2)] and batch.n_updates == 1 and len(reg) == 1


# kills transforms.core.foundation.entries.xǁDeletionsRefusedǁ__eq____mutmut_6 (two refusals of the same reason no
# longer equal)
def test_deletions_refused_equals_false_and_the_refusal_of_the_same_reason():
    r = DeletionsRefused("deletion_not_supported")
    assert r == False  # noqa: E712 - a false deletions_allowed: it compares as False
    assert r == DeletionsRefused("deletion_not_supported")
    assert r != DeletionsRefused("deletion_not_allowed")
    assert hash(r) == hash(DeletionsRefused("deletion_not_supported"))


# kills transforms.core.foundation.noise.xǁNoiseSourceǁfrom_file__mutmut_4 (the key file read in the machine's
# locale encoding instead of ASCII: the same file loads or fails differently from one machine to the next)
def test_a_key_file_is_read_as_ascii_hex_whatever_the_locale(tmp_path):
    good = tmp_path / "key.hex"
    good.write_text(KEY.hex() + "\n", encoding="ascii")
    assert NoiseSource.from_file(str(good)) == NoiseSource(KEY)
    bad = tmp_path / "bad.hex"
    bad.write_bytes(("\u00a0" + KEY.hex()).encode("utf-8"))
    with pytest.raises(UnicodeDecodeError, match="ascii"):
        NoiseSource.from_file(str(bad))


# kills transforms.core.foundation.noise.xǁReleaseIdentityǁnew__mutmut_1 (a fresh release's default digest is not
# the empty one: continuing the release by its id alone draws other noise)
def test_a_release_continued_by_its_id_alone_draws_the_noise_of_the_release_it_continues():
    fresh = ReleaseIdentity.new()
    again = ReleaseIdentity(fresh.release_id)
    assert fresh == again
    src = NoiseSource(KEY)
    a = src.for_release(fresh).stream("s", 1).words(4)
    b = src.for_release(again).stream("s", 1).words(4)
    assert np.array_equal(a, b)


# kills transforms.core.foundation.accounting.units.xǁSeriesSplitǁ__post_init____mutmut_19 and __mutmut_20 (a finite
# split over a declared horizon of one use refused)
def test_a_finite_split_over_one_use_gives_it_the_whole_budget():
    s = SeriesSplit("finite", horizon=1)
    assert s.weight(1) == 1.0 and s.partial_sum(1) == 1.0
    with pytest.raises(BudgetExceededError):
        s.weight(2)
    with pytest.raises(ValueError, match="horizon >= 1"):
        SeriesSplit("finite", horizon=0)


# kills transforms.core.foundation.accounting.budgets.x_zcdp_to_approx__mutmut_5 (the refusal of a negative rho
# names another setting)
def test_a_zcdp_conversions_refusal_names_rho():
    with pytest.raises(ValueError, match="^rho must be >= 0"):
        zcdp_to_approx(-0.5, 1e-6)
    with pytest.raises(ValueError, match="^rho must be a finite number"):
        zcdp_to_approx(math.nan, 1e-6)


# kills transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_1 (a zero spend states
# delta 1 at an epsilon within the slack)
@pytest.mark.parametrize("eps", [0.0, cal.TIGHT_EPS_SLACK / 2, 0.5])
def test_a_zero_tight_gaussian_spend_states_delta_zero_at_every_epsilon(eps):
    assert cal.tight_gaussian_delta(eps, 0.0) == 0.0


# kills transforms.core.foundation.accounting.calibration.x_tight_gaussian_delta__mutmut_14 and __mutmut_15 (the
# stated delta divided by the float margin or by the lattice factor r^d instead of multiplied: below what the
# proof states)
@pytest.mark.parametrize("eps,rho", [(0.1, 0.5), (1.0, 0.05), (2.0, 1.0)])
def test_a_tight_gaussian_delta_includes_the_lattice_factor_and_the_float_margin(eps, rho):
    cont = cal.analytic_gaussian_delta(eps - cal.TIGHT_EPS_SLACK, math.sqrt(2 * rho))
    got = cal.tight_gaussian_delta(eps, rho)
    assert 0 < cont < got < 1
    # the proof's r^d (TIGHT_DELTA_FACTOR, ~1 + 1e-15) and the relative float margin (1 + 1e-9) both multiply it:
    # the ratio within a few ulps of their product, 2e-15 away from any other combination
    assert got / cont == pytest.approx(cal.TIGHT_DELTA_FACTOR * (1 + cal.TIGHT_FLOAT_MARGIN), rel=6e-16, abs=0)


# kills transforms.core.foundation.accounting.calibration.x_tight_gaussian_epsilon__mutmut_4 (delta = 1 accepted:
# an epsilon of 2^-200 stated for any spend)
@pytest.mark.parametrize("delta", [1.0, 0.0, 1.5])
def test_a_tight_gaussian_epsilon_is_stated_only_for_a_delta_inside_zero_one(delta):
    with pytest.raises(ValueError, match="delta must be in"):
        cal.tight_gaussian_epsilon(0.5, delta)


class _Words:
    """A stand-in stream that returns the given 64-bit words, then all-ones words."""

    disabled = False

    def __init__(self, first):
        self.first = list(first)

    def words(self, n):
        out = [self.first.pop(0) if self.first else 2**64 - 1 for _ in range(n)]
        return np.array(out, dtype=np.uint64)


# kills transforms.core.foundation.samplers.x__band__mutmut_14 (the float decision's lower edge floored at 1: the
# word 0 decides True without the exact comparison where exp(-x) < 2^-40)
@pytest.mark.parametrize("x", [50, 60])
def test_bernoulli_exp_decides_the_lowest_word_exactly_where_exp_minus_x_is_tiny(x):
    # U = (0 + V) / 2^63 with V's bits all ones: U ~ 2^-63 > exp(-50) ~ 2e-22, so the exact answer is False
    assert math.exp(-x) < 2.0**-63
    assert not bernoulli_exp(_Words([0]), [x], [1])[0]
    assert not bernoulli_exp(_Words([1]), [x], [1])[0]  # the word's top 63 bits are 0 too


# kills transforms.core.foundation.state.x_encode__mutmut_5 (state bytes written as pickle protocol 5: not the
# stable protocol 4 stream the format states)
@pytest.mark.parametrize("plain", [{"a": (1, 2.5, "x")}, [b"raw", None, True]])
def test_state_bytes_are_the_pickle_protocol_4_stream(plain):
    data = encode(plain)
    op, arg, _ = next(pickletools.genops(data))
    assert op.name == "PROTO" and arg == 4
    assert decode(data) == plain


# kills transforms.core.foundation.accounting.budgets.x_to_approx__mutmut_1 (the target delta dropped: a zCDP budget
# can no longer be stated as (eps, delta))
def test_to_approx_states_a_zcdp_budget_at_the_target_delta():
    assert to_approx(ZCDP(0.5), 1e-6) == zcdp_to_approx(0.5, 1e-6)
    assert to_approx(PureDP(1.0), 1e-6) == ApproxDP(1.0, 0.0)


# kills transforms.core.foundation.accounting.budgets.x_zcdp_to_approx__mutmut_9 (delta = 0 accepted: a
# ZeroDivisionError instead of the refusal)
@pytest.mark.parametrize("delta", [0.0, 1.0])
def test_a_zcdp_conversion_is_refused_at_delta_zero_or_one(delta):
    with pytest.raises(ValueError, match="delta must be in"):
        zcdp_to_approx(0.5, delta)


# kills transforms.core.foundation.accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_54 (a person unit without a
# number of mutations accepted with a mutation window only)
def test_a_person_unit_needs_a_number_of_mutations_even_with_a_window():
    with pytest.raises(ValueError, match="a person unit needs max_mutations_per_entry"):
        PrivacyUnit("person", max_mutations=None, mutation_window=3, max_entries=2)
    assert PrivacyUnit("entry", max_mutations=None, mutation_window=3).mutation_window == 3


# kills transforms.core.foundation.accounting.units.xǁPrivacyUnitǁdescribe__mutmut_19 (the mutation window left out of
# the unit's description: a crash joining None)
def test_an_entry_units_description_states_its_mutation_window():
    text = PrivacyUnit("entry", max_mutations=2, mutation_window=3).describe()
    assert "at most 2 mutations" in text and "all within 3 ticks of its first insertion" in text


# kills transforms.core.foundation.accounting.units.xǁSeriesSplitǁ__post_init____mutmut_9 (the eta check applied to
# the other kinds: a zeta split of eta <= 0, whose weights do not sum to at most 1, accepted)
def test_only_a_zeta_split_needs_a_positive_eta():
    for eta in (0.0, -1.0):
        with pytest.raises(ValueError, match="zeta split needs eta > 0"):
            SeriesSplit("zeta", eta=eta)
        assert SeriesSplit("pi2", eta=eta).weight(1) == pytest.approx(6 / math.pi**2)


# kills transforms.core.foundation.aggregates.x_fold__mutmut_8 (deletions folded into the update count's slot: a
# second batch of deletions at one tick crashes instead of adding up)
def test_folding_two_batches_of_one_tick_adds_their_inserts_deletions_and_counts():
    acc = {}
    fold(acc, 4, {(1,): 1}, {((0,), 2): 1}, 2)
    fold(acc, 4, {(1,): 2, (2,): 1}, {((0,), 2): 1, ((3,), 1): 1}, 5)
    assert acc == {4: [{(1,): 3, (2,): 1}, {((0,), 2): 2, ((3,), 1): 1}, 7]}


# kills transforms.core.foundation.entries.x_static_reason__mutmut_11 (an unknown op without an entry id refused as
# malformed instead of unknown_op)
def test_an_unknown_op_is_refused_as_such_even_without_an_entry_id():
    assert static_reason(Update("bogus", "", None), (4,)) == "unknown_op"
    assert static_reason(Update("insert", "", (1,)), (4,)) == "malformed"


# kills transforms.core.foundation.entries.xǁEntryRegistryǁresolve_tick__mutmut_15 (the fast path taken by anything
# but an Update: a look-alike object inserted unchecked) and __mutmut_58 (a delete of an unknown entry crashes the
# fast path instead of being refused)
def test_resolve_tick_refuses_a_look_alike_update_and_a_delete_of_an_unknown_entry():
    reg = _reg()
    fake = SimpleNamespace(op="insert", entry_id="e9", item=(1, 1))
    batch, rejected = reg.resolve_tick(5, [fake, Update("delete", "nobody"), Update("insert", "e1", (3, 2))])
    assert [r.reason for r in rejected] == ["malformed", "unknown_entry"]
    assert batch.inserts == [(3, 2)] and batch.deletes == [] and batch.n_updates == 1 and len(reg) == 1


# kills transforms.core.foundation.samplers.x_geometric_inversion__mutmut_68 (the float guess accepted where U lies
# just above q^x: X one too large, the law of the geometric changed at the boundaries)
@pytest.mark.parametrize("size", [4, 13])  # the scalar path and the vectorised one
def test_geometric_inversion_is_exact_for_a_word_just_above_q(size):
    # U in [w / 2^64, (w + 1) / 2^64) with w / 2^64 > q = e^-1 (decided with 80 exact digits): X = 0, not 1
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        w = int((decimal.Decimal(-1).exp() * 2**64).to_integral_value(decimal.ROUND_FLOOR)) + 1
    assert geometric_inversion(_Words([w] * size), 1, 1, size).tolist() == [0] * size


# kills transforms.core.foundation.state.x_state_class__mutmut_6 (a class registered with plain fields gets no plain
# set: its state cannot be written)
def test_a_state_class_registered_later_round_trips_its_plain_fields_as_they_are():
    @state_class("test_mutation_kills_sample44a.box", ("data",))
    class Box:
        def __init__(self, data, child):
            self.data, self.child = data, child

    try:
        box = restore(decode(encode(to_plain(Box({"$o": "not a class", "k": [1, 2]}, Box({}, None))))))
        assert type(box) is Box and box.data == {"$o": "not a class", "k": [1, 2]}
        assert type(box.child) is Box and box.child.data == {} and box.child.child is None
    finally:  # the registry as it was: no other test meets the class
        for table in (state_mod._CLASSES, state_mod._NAMES, state_mod._PLAIN, state_mod._INFO):
            for k in [k for k in table if k in ("test_mutation_kills_sample44a.box", Box)]:
                del table[k]
