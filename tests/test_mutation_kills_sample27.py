"""Tests written for the survivors of the sampled mutation run of 2026-11-27 (``benchmarks/mutation_fast.py``,
issue 27). Each asserts a property of the module (released values, their fields, the accounting, a bound, a
configuration the user asked for), never a pinned value, and names in a comment the mutant it kills (checked with
``python -m benchmarks.mutation_fast confirm NAME TEST``: fails on the mutant, passes without it). Fast: in memory,
no Beam."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from transforms.core import DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.config import BudgetProfile
from transforms.core.continual.consistency import Consistency, make_consistent
from transforms.core.continual.fully_dynamic import FullyDynamicRelease
from transforms.core.continual.fully_dynamic_node import node_level
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
from transforms.core.contribution.bounding import PersonLimit, bound_person
from transforms.core.contribution.harness import neighbour_loss, record
from transforms.core.contribution.loss import TOLERANCE as LOSS_TOLERANCE
from transforms.core.contribution.loss import Draw, PrivacyLoss, privacy_loss
from transforms.core.contribution.toeplitz import (
    LATTICE_BITS,
    histogram_bound,
    layer_cake_bound,
    toeplitz_model,
)
from transforms.core.contribution.units import ContributionUnit
from transforms.core.counters import COUNTERS, make_counter
from transforms.core.counters.factorization import anytime as anytime_mod
from transforms.core.counters.factorization.anytime import anytime_coefficients, anytime_sensitivity_sq
from transforms.core.counters.factorization.kary_signed import signed_nodes, signed_shape
from transforms.core.forecast import forecast
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import (
    DISCRETE_TAU2,
    ZCDP,
    ApproxDP,
    gaussian_rho_for_approx_tight,
    rho_for_approx,
)
from transforms.core.foundation.accounting.calibration import zcdp_epsilon
from transforms.core.foundation.accounting.units import PrivacyUnit
from transforms.core.foundation.outputs import Answer
from transforms.core.foundation.random_stream import encode_coordinates
from transforms.core.foundation.samplers import discrete_gaussian, discrete_laplace
from transforms.core.foundation.state import StateError
from transforms.core.plans import PlanEntry
from transforms.core.selection import KeyLimit, SelectionParams, answer_calibration
from transforms.core.static import HistogramMechanism


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


def _anytime_tail_bound_exact(n: int, profile: int):
    """``anytime_tail_bound`` written out again from ``docs/counters.md`` in 60-digit arithmetic."""
    with mp.workdps(60):
        return _anytime_tail_bound_mp(n, profile)


def _anytime_tail_bound_mp(n: int, profile: int):
    x = mp.mpf(n - 1)
    if profile == 1:
        a, k0, e = mp.mpf(anytime_mod.A), mp.mpf(anytime_mod.K0), mp.mpf(anytime_mod.EPS)
        out = (1 + k0 / x) * (1 + a * mp.log1p(x / k0)) ** (-e) / (mp.pi * a * e)
        if x >= k0:
            out = min(out, (1 + a * mp.log(x / k0)) ** (-e) / (mp.pi * a * e))
        return out
    a2, k02, p2 = mp.mpf(anytime_mod.A2), mp.mpf(anytime_mod.K02), mp.mpf(anytime_mod.P2)
    n2, b2, q2 = mp.mpf(anytime_mod.N2), mp.mpf(anytime_mod.B2), mp.mpf(anytime_mod.Q2)
    h2n = (1 + a2 * mp.log1p(n2 / k02)) ** (-p2)
    out = h2n * (1 + b2 * mp.log(max(x, n2) / n2)) ** (1 - q2) / (mp.pi * b2 * (q2 - 1))
    if x < n2:
        ua, ub = mp.log1p(x / k02), mp.log1p(n2 / k02)
        out += (1 + k02 / x) * ((1 + a2 * ub) ** (1 - p2) - (1 + a2 * ua) ** (1 - p2)) / (a2 * (1 - p2)) / mp.pi
    return out


# kills transforms.core.counters.factorization.anytime.x_anytime_sensitivity_sq__mutmut_20 (the float tail bound's
# margin divided out instead of added: the column norm the noise is calibrated to rounded down)
@pytest.mark.parametrize("profile", [1, 2])
def test_anytime_sensitivity_rounds_the_tail_bound_up_past_its_exact_value(profile):
    k = anytime_coefficients(anytime_mod.EXACT_TERMS, profile)
    head = int(np.sum(k * k))
    with mp.workdps(60):
        exact_tail = _anytime_tail_bound_exact(anytime_mod.EXACT_TERMS, profile) * mp.mpf(2) ** (2 * LATTICE_BITS)
        assert anytime_sensitivity_sq(profile) - head >= int(mp.ceil(exact_tail))


# kills transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_tables__mutmut_6 (a counter restored as
# profile 1 calibrated with the current profile's tables)
def test_an_anytime_counter_of_profile_1_calibrates_to_profile_1s_column_norm():
    c = make_counter("anytime_sqrt", HistogramMechanism(2, "gaussian"), ZCDP(1.0), coords=("p1",))
    plain = state_mod.to_plain(c)
    plain["f"].pop("profile")
    old = state_mod.restore(plain)
    assert (old.profile, c.profile) == (1, anytime_mod.PROFILE)
    assert old._tables().n2 == anytime_sensitivity_sq(1) != anytime_sensitivity_sq(anytime_mod.PROFILE)
    assert c._tables().n2 == anytime_sensitivity_sq(anytime_mod.PROFILE)


# kills transforms.core.counters.factorization.anytime.xǁAnytimeSqrtCounterǁ_encode__mutmut_16 (a batch answer of
# exactly 2^62 accepted by the wide encoder, which is exact below it only)
def test_the_wide_anytime_encoder_refuses_a_batch_answer_of_2_to_the_62():
    c = make_counter("anytime_sqrt", HistogramMechanism(2, "gaussian"), ZCDP(1.0), coords=("wide",))
    c.narrow_s1 = 1  # the wide-limb path from the first step
    with pytest.raises(ValueError, match="2\\^62"):
        c.step(np.array([1 << 62, 0]), NoiseSource(bytes(range(32))))


# kills transforms.core.counters.factorization.kary_signed.xǁKarySignedCounterǁ_node_noise__mutmut_59 (a node first
# drawn after some of its items arrived logs its noise minus those items: the harness reads a wrong release)
@pytest.mark.parametrize("noise_kind", ["laplace", "gaussian"])
def test_kary_signed_node_releases_are_their_noise_plus_their_range_sums(noise_kind):
    """Two runs under the same key, one on the data and one on zeros: every logged node release differs by the
    node's exact range sum (the noise cancels)."""
    horizon = 60
    rng = np.random.default_rng(7)
    batches = [rng.integers(-3, 4, size=2) for _ in range(horizon)]
    logs = []
    for data in (batches, [np.zeros(2, np.int64)] * horizon):
        budget = PureDP(1.0) if noise_kind == "laplace" else ZCDP(1.0)
        c = make_counter("kary_signed", HistogramMechanism(2, noise_kind), budget, horizon=horizon, coords=("ks",))
        c.release_log = []
        noise = NoiseSource(bytes(range(32)))
        for b in data:
            c.step(b, noise)
        logs.append({coords: np.asarray(vals) for coords, _cost, vals in c.release_log})
    prefix = np.cumsum([np.zeros(2, np.int64), *batches], axis=0)
    assert logs[0].keys() == logs[1].keys()
    late = 0
    for coords, vals in logs[0].items():
        j, i = coords[-2:]
        lo, hi = (i - 1) * c.k**j, min(i * c.k**j, horizon)
        late += j > 0
        np.testing.assert_array_equal(vals - logs[1][coords], (prefix[hi] - prefix[lo]) * c.unit)
    assert late  # nodes above the leaves: drawn after some of their items arrived


# kills transforms.core.counters.factorization.kary_signed.x_signed_shape__mutmut_47 (a later shape of equal cost
# replaces the first: the plan the counter states is not the one its rule names)
@pytest.mark.parametrize("exponent", [1, 2])
def test_signed_shape_is_the_first_shape_of_least_mean_variance(exponent):
    """Brute force from the nodes themselves: a shape's cost is the mean over t = 1..T of its prefix's node count
    times the node variance, ~ h^exponent (the module docstring)."""

    def cost(horizon, k, h):
        return sum(len(signed_nodes(t, k, h)) for t in range(1, horizon + 1)) / horizon * h**exponent

    for horizon in range(1, 41):
        cands = [((3, 1), cost(horizon, 3, 1))]
        for h in range(2, max(2, horizon.bit_length()) + 2):
            cands += [((k, h), cost(horizon, k, h)) for k in range(3, 1002, 2) if k ** (h - 1) <= 4 * horizon]
        least = min(v for _, v in cands)
        first = next(s for s, v in cands if v <= least * (1 + 1e-12))
        assert signed_shape(horizon, exponent) == first, horizon


# kills transforms.core.counters.factorization.lattice.xǁ_LatticeToeplitzCounterǁ_encode__mutmut_13 (a batch answer
# of exactly 2^62 accepted by the exact encoder, which is exact below it only)
@pytest.mark.parametrize("name", ["sqrt_factorization", "blt"])
def test_lattice_counters_refuse_a_batch_answer_of_2_to_the_62(name):
    c = make_counter(name, HistogramMechanism(2, "gaussian"), ZCDP(1.0), horizon=8, coords=("big",))
    with pytest.raises(ValueError, match="2\\^62"):
        c.step(np.array([1 << 62, 0]), NoiseSource(bytes(range(32))))


# kills transforms.core.forecast.x_forecast__mutmut_19 (the forecast of a noise-off run states the noisy run's
# bounds)
def test_forecast_of_a_noise_off_run_states_zero_error_bounds_and_of_a_noisy_run_positive():
    cfg = DynamicConfig((QuerySet("n"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
    ticks = [1, 5, 16]
    off = forecast(NetChangeRelease, cfg, NetChangeOptions(), ticks, end_tick=16, noise_off=True)
    on = forecast(NetChangeRelease, cfg, NetChangeOptions(), ticks, end_tick=16)
    assert len(off) == len(on) == 6
    assert all(f.error_bound == 0 for f in off)  # the sd stays the configured noise's
    assert all(f.error_bound > 0 and f.sd > 0 for f in on)


# kills transforms.core.foundation.accounting.calibration.x_zcdp_epsilon__mutmut_3 (rho = 0 converted to eps = 1)
def test_zcdp_epsilon_of_no_loss_is_zero_and_grows_with_rho():
    delta = 1e-6
    assert zcdp_epsilon(0.0, delta) == 0.0
    eps = [zcdp_epsilon(r, delta) for r in (1e-6, 1e-3, 0.1, 1.0)]
    assert 0 < eps[0] < eps[1] < eps[2] < eps[3]
    assert eps[0] <= 1e-6 + 2 * math.sqrt(1e-6 * math.log(1 / delta))  # at most the classic conversion


# kills transforms.core.foundation.accounting.units.xǁPrivacyUnitǁgroup_size__mutmut_3 (the update unit's group
# size read from its max_mutations: an update is one update)
def test_group_size_of_each_unit():
    assert PrivacyUnit.update().group_size == 1
    assert PrivacyUnit("update", 3).group_size == 1  # a stated mutation limit does not make an update a group
    assert PrivacyUnit.entry(3).group_size == 5
    assert PrivacyUnit.person(2, 3).group_size == 10


# kills transforms.core.foundation.random_stream.x_encode_coordinates__mutmut_33 (an int coordinate of 64 digits or
# more cannot be encoded)
def test_long_int_coordinates_encode_injectively():
    big = 10**70
    codes = {encode_coordinates((c,)) for c in (big, big + 1, -big, str(big), 10**63, 10**64)}
    assert len(codes) == 6
    assert encode_coordinates((big, 1)) != encode_coordinates((big,)) != encode_coordinates((big * 10 + 1,))


# kills transforms.core.foundation.samplers.x_discrete_laplace__mutmut_1 (two draws by default: the next value of
# the stream is the second draw of the call, not the first of the next one)
def test_discrete_laplace_and_gaussian_draw_one_value_by_default():
    noise = NoiseSource(bytes(range(32)))
    one = discrete_laplace(noise.stream("dl"), Fraction(3))
    assert one.shape == (1,)
    assert one[0] == discrete_laplace(noise.stream("dl"), Fraction(3), 4)[0]
    assert discrete_gaussian(noise.stream("dg"), Fraction(9)).shape == (1,)


# kills transforms.core.plans.xǁPlanEntryǁtext__mutmut_19 (a weighted plan line without its query sets' shares: it
# crashes instead of stating them)
def test_a_weighted_plan_line_states_each_query_sets_share_of_the_budget():
    e = PlanEntry("net_change", ("a", "b"), 0.5, "why", weights=(3.0, 1.0))
    assert e.query_shares() == (0.375, 0.125)
    assert e.text() == "a, b -> net_change (50% of the budget): why; weights: a 3 (38%), b 1 (12%) of the budget"


# kills transforms.core.selection.answers.x_answer_calibration__mutmut_33 (the sequential route's account for the
# plan and manifest left out)
def test_open_key_answer_calibration_states_its_route_multiplier_and_group():
    limit = KeyLimit(2, 3, 3)
    for budget, route in ((ApproxDP(1.0, 1e-6), "sequential"), (PureDP(1.0), None)):
        cal = answer_calibration(SelectionParams(budget, 2, horizon=16), limit)
        assert route is None or cal.route == route
        assert isinstance(cal.method, str) and f"group {limit.group}" in cal.method or cal.route == "group"
        assert cal.multiplier <= limit.group  # the route taken is never worse than group privacy
        if cal.route != "group":
            assert f"x {cal.multiplier:.4g}" in cal.method


# kills transforms.core.selection.params.xǁSelectionParamsǁ__post_init____mutmut_32 (a failure probability of 1 or
# more accepted)
def test_selection_failure_probability_must_be_inside_zero_one():
    SelectionParams(PureDP(1.0), 2, failure=0.5)
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="failure must be in"):
            SelectionParams(PureDP(1.0), 2, failure=bad)


# kills transforms.core.counters.xǁCounterSpecǁplanned_cost__mutmut_2 (the spec's default noise kind not Laplace:
# the k-ary tree plans the Gaussian radices)
def test_counter_specs_plan_laplace_by_default():
    spec, differs = COUNTERS["kary_tree"], 0
    for horizon in (8, 100, 1000, 10**5):
        default = spec.planned_cost(PureDP(1.0), ("c",), horizon=horizon)
        assert default == spec.planned_cost(PureDP(1.0), ("c",), horizon=horizon, noise_kind="laplace"), horizon
        differs += default != spec.planned_cost(PureDP(1.0), ("c",), horizon=horizon, noise_kind="gaussian")
    assert differs  # the noise kind matters to this plan


# kills transforms.core.contribution.bounding.x__check__mutmut_23 (a malformed person state's message quotes its
# first element when it is record data: the state holds entry ids, and payloads are never logged)
def test_a_malformed_person_state_is_refused_without_quoting_its_contents():
    limit = PersonLimit(2)
    with pytest.raises(StateError) as e:
        bound_person(("entry-id-of-a-person", {}, {}, {}), [], limit)
    assert "entry-id-of-a-person" not in str(e.value) and "str" in str(e.value)
    with pytest.raises(StateError, match=r"\(99\)"):  # a wrong version number is named
        bound_person((99, {}, {}, {}), [], limit)


# kills transforms.core.contribution.harness.x_neighbour_loss__mutmut_45 (the with-unit recording dropped: a caller
# cannot audit the loss it is given)
def test_neighbour_loss_returns_both_recordings_and_their_loss():
    q = QuerySet("n")
    cfg = DynamicConfig((q,), PureDP(1.0))
    mine = [(2, [Update("insert", "me", (0,))]), (5, [Update("delete", "me")])]
    others = [(1, [Update("insert", "bg", (0,))])]

    def factory():
        return NetChangeRelease(cfg, stream="s", end_tick=8, every_ticks=1)

    with_unit = sorted(others + mine)
    nl = neighbour_loss(factory, with_unit, others, end_tick=8)
    assert nl.with_unit == record(factory, with_unit, end_tick=8)
    assert nl.without_unit == record(factory, others, end_tick=8)
    again = privacy_loss(nl.with_unit, nl.without_unit)
    assert (again.epsilon, again.differing) == (nl.loss.epsilon, nl.loss.differing) and nl.loss.epsilon > 0


# kills transforms.core.contribution.loss.x_privacy_loss__mutmut_69 (a Gaussian draw of variance exactly tau^2
# divides by zero instead of stating an infinite lattice loss)
def test_lattice_loss_of_a_draw_at_variance_tau2_or_below_is_infinite():
    for scale in (Fraction(DISCRETE_TAU2), Fraction(DISCRETE_TAU2) / 2):
        a = {("c", 1): Draw(("c", 1), "gaussian", scale, (1,))}
        b = {("c", 1): Draw(("c", 1), "gaussian", scale, (0,))}
        loss = privacy_loss(a, b)
        assert loss.rho_lattice == math.inf and loss.rho == float(Fraction(1, 2) / scale)


# kills transforms.core.contribution.toeplitz.x_histogram_bound__mutmut_20 (the BLT histogram's attaining lifecycle
# at fractional periods)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_blt_histogram_bound_attains_at_integer_periods_one_window_apart(k):
    m = toeplitz_model("blt")
    v, exact, pos = histogram_bound(m, k, 8, 2 * k)
    assert exact and v == (2 * k - 1) * m.n2
    assert len(pos) == k and all(type(p) is int and p >= 0 for p in pos)
    assert all(b - a == m.window for a, b in zip(pos, pos[1:]))


# kills transforms.core.contribution.units.xǁContributionUnitǁ__post_init____mutmut_28 (an entry unit accepted with a
# person's max_entries or window)
def test_entry_unit_refuses_the_person_units_fields():
    ContributionUnit("entry", max_mutations=2)
    for kw in ({"max_entries": 3}, {"entries_window": 5}):
        with pytest.raises(ValueError, match="belong to the person unit"):
            ContributionUnit("entry", max_mutations=2, **kw)


# kills transforms.core.contribution.units.xǁContributionUnitǁentries__mutmut_7 (a per-window person's entries over
# the release divided by the number of windows instead of multiplied: the group understated)
def test_a_per_window_persons_entries_over_a_release_are_the_limit_times_its_windows():
    unit = ContributionUnit("person", max_mutations=2, max_entries=3, entries_window=5)
    assert [unit.entries(t) for t in (1, 5, 6, 12)] == [3, 3, 6, 9]
    assert ContributionUnit("person", max_mutations=2, max_entries=3).entries(12) == 3
