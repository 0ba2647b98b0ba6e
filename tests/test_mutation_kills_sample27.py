"""Tests written for the survivors of the sampled mutation run of 2026-11-27 (``benchmarks/mutation_fast.py``,
issue 27). Each asserts a property of the module (released values, their fields, the accounting, a bound, a
configuration the user asked for), never a pinned value, and names in a comment the mutant it kills (checked with
``python -m benchmarks.mutation_fast confirm NAME TEST``: fails on the mutant, passes without it). Fast: in memory,
no Beam."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from transforms.core import DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.config import BudgetProfile
from transforms.core.continual.consistency import Consistency, make_consistent
from transforms.core.continual.fully_dynamic import FullyDynamicRelease
from transforms.core.continual.fully_dynamic_node import node_level
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
from transforms.core.contribution.loss import TOLERANCE as LOSS_TOLERANCE
from transforms.core.contribution.loss import Draw, PrivacyLoss, privacy_loss
from transforms.core.contribution.toeplitz import LATTICE_BITS, _check_kappa, layer_cake_bound, toeplitz_model
from transforms.core.contribution.units import ContributionUnit
from transforms.core.foundation.accounting import (
    DISCRETE_TAU2,
    ApproxDP,
    gaussian_rho_for_approx_tight,
    rho_for_approx,
)
from transforms.core.foundation.outputs import Answer


# kills transforms.core.continual.consistency.x__replace__mutmut_7 (the projected answer loses its segment)
def test_consistency_changes_only_the_estimate_its_bound_and_beta():
    spent = PureDP(0.25)
    answers = [
        Answer("s", 3, 7, "n", np.asarray([5.0]), 1.0, 0.05, spent),
        Answer("s", 3, 7, "h", np.asarray([3.0, -1.0, 2.5]), 1.0, 0.05, spent),
    ]
    out = make_consistent(answers, Consistency((("h", "n"),)))
    for a, b in zip(answers, out, strict=True):
        for f in ("stream", "tick", "segment", "query", "spent"):
            assert getattr(b, f) == getattr(a, f), f
    assert out[1].estimate.sum() == pytest.approx(5.0)


# kills transforms.core.config.xǁBudgetProfileǁtight__mutmut_6 (tight ignores the eta it is given)
@pytest.mark.parametrize("max_segments", [None, 64])
@pytest.mark.parametrize("eta", [0.25, 0.5, 1.5])
def test_tight_profile_is_tuned_with_the_same_eta_and_horizon(max_segments, eta):
    tight = BudgetProfile.tight(max_segments, eta)
    tuned = BudgetProfile.tuned(max_segments, eta)
    assert dataclasses.replace(tight, name="tuned", counter=tuned.counter, reuse_count=tuned.reuse_count) == tuned


# kills transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁstart_round__mutmut_38 (the n_hat piece
# released without its node's level)
def test_every_released_piece_names_its_node_and_the_nodes_fenwick_level():
    rel = FullyDynamicRelease(DynamicConfig((QuerySet("active", "count"),), PureDP(2.0)), emit_nodes=True)
    noise = NoiseSource(bytes(range(32)))
    outs = []
    for tick in range(1, 24):
        rel.process_tick(tick, [Update("insert", f"e{tick}", (0,))], noise)
        outs += rel.drain_node_outputs()
    assert {o.kind for o in outs} >= {"n_hat", "static"}
    for o in outs:
        assert isinstance(o.node, int) and o.node >= 1
        assert o.level == node_level(o.node), (o.kind, o.node, o.level)


# kills transforms.core.continual.net_change.xǁNetChangeReleaseǁcheck_settings__mutmut_1 (a default period of two
# ticks: a finite counter's horizon is checked against half the releases it must serve)
def test_net_change_horizon_must_cover_every_release_of_the_default_one_tick_period():
    cfg = DynamicConfig((QuerySet("active", "count"),), PureDP(1.0))
    NetChangeRelease.check_settings(cfg, NetChangeOptions(counter="binary_tree", horizon=10), end_tick=10)
    with pytest.raises(ValueError, match="runs out before time.end"):
        NetChangeRelease.check_settings(cfg, NetChangeOptions(counter="binary_tree", horizon=9), end_tick=10)
    # with a period of two ticks, five periods are enough
    NetChangeRelease.check_settings(cfg, NetChangeOptions(counter="binary_tree", horizon=5), end_tick=10, every_ticks=2)


# kills transforms.core.contribution.loss.x_privacy_loss__mutmut_68 (the lattice loss divided by sigma^2 + tau^2:
# the tight account's loss understated)
def test_exact_loss_of_a_gaussian_pair_counts_sigma2_and_the_lattice_sigma2_minus_tau2():
    scale = Fraction(40)  # sigma^2, lattice units
    a = {
        ("c", 1, "q"): Draw(("c", 1, "q"), "gaussian", scale, (3, 1)),
        ("c", 2, "q"): Draw(("c", 2, "q"), "gaussian", scale, (5,)),
    }
    b = {
        ("c", 1, "q"): Draw(("c", 1, "q"), "gaussian", scale, (0, 1)),
        ("c", 2, "q"): Draw(("c", 2, "q"), "gaussian", scale, (5,)),
    }
    loss = privacy_loss(a, b)
    assert (loss.draws, loss.differing, loss.epsilon) == (2, 1, 0.0)
    assert loss.rho == pytest.approx(9 / (2 * 40), rel=1e-15)
    assert loss.rho_lattice == pytest.approx(float(Fraction(9, 2) / (scale - DISCRETE_TAU2)), rel=1e-15)
    assert loss.rho_lattice > loss.rho  # the lattice statement counts less variance: a larger loss


# kills transforms.core.contribution.loss.xǁPrivacyLossǁwithin__mutmut_37 (a lattice loss equal to its allowance
# refused: every route of `within` is `<=`)
def test_a_lattice_loss_equal_to_its_allowance_is_within_and_one_ulp_more_is_not():
    eps, delta = 1.0, 1e-6
    allowance = gaussian_rho_for_approx_tight(eps, delta) * (1 + LOSS_TOLERANCE)
    big = rho_for_approx(ApproxDP(eps, delta)) * 10  # the zCDP route fails: only the lattice route decides
    assert PrivacyLoss(rho=big, rho_lattice=allowance).within(ApproxDP(eps, delta))
    assert not PrivacyLoss(rho=big, rho_lattice=math.nextafter(allowance, math.inf)).within(ApproxDP(eps, delta))


# kills transforms.core.contribution.toeplitz.x__check_kappa__mutmut_8 (a zero coefficient accepted by the lemmas'
# precondition: positive, non-increasing, from 2^LATTICE_BITS)
def test_lemmas_refuse_coefficients_that_are_not_positive_and_non_increasing():
    top = 1 << LATTICE_BITS
    _check_kappa(np.array([top, top // 2, 1], dtype=np.int64))
    for bad in ([top, top // 2, 0], [top, 0, 0], [top, -1], [top, top // 4, top // 2], [top - 1, 1]):
        with pytest.raises(AssertionError, match="positive and non-increasing"):
            _check_kappa(np.array(bad, dtype=np.int64))


# kills transforms.core.contribution.toeplitz.x_toeplitz_model__mutmut_97 (the BLT model without its column L1 norm)
@pytest.mark.parametrize(("name", "horizon"), [("sqrt_factorization", 16), ("blt", None), ("blt", 64)])
def test_toeplitz_models_carry_the_column_norms_of_the_counters_coefficients(name, horizon):
    m = toeplitz_model(name, horizon)
    cols = [int(v) for v in m.kappa[: m.horizon]] if m.horizon else [int(v) for v in m.kappa]
    assert m.n2 == sum(v * v for v in cols) and m.s1 == sum(cols)
    assert m.kappa[0] == 1 << LATTICE_BITS


# kills transforms.core.contribution.toeplitz.x_layer_cake_bound__mutmut_59 (a mixed-sign row's spread divided by
# N_k instead of multiplied: the entry-level sensitivity understated)
@pytest.mark.parametrize("k", [1, 3])
def test_layer_cake_bound_of_a_mixed_sign_row_is_its_spread_times_n_k(k):
    m = toeplitz_model("sqrt_factorization", 12)
    top = 1 << LATTICE_BITS
    mixed, _ = layer_cake_bound(m, np.array([[3 * top, -2 * top]]), k, 2 * k)
    one_signed, _ = layer_cake_bound(m, np.array([[0, 5 * top]]), k, 2 * k)
    assert mixed == one_signed  # (max+ + max-) N_k, as a one-signed row of the same spread from 0
    # and it covers one switch between the two items from the first period: ||K e_0|| times the spread
    assert mixed >= 5 * top * math.sqrt(m.n2)


# kills transforms.core.contribution.units.xǁContributionUnitǁdescribe__mutmut_11 (the plan's sensitivity line names
# the unit without its mutation limit)
def test_a_units_description_states_its_limits():
    assert ContributionUnit().describe() == "one update"
    assert ContributionUnit("entry", max_mutations=3).describe() == "one entry (<= 3 mutations)"
    person = ContributionUnit("person", max_mutations=2, max_entries=4, max_insertions=1, entries_window=7)
    assert person.describe() == "one person (<= 4 entries per 7 ticks, each <= 2 mutations, <= 1 insertion(s))"
