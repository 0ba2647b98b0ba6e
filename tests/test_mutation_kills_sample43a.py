"""Tests written for the survivors of the mutation round of session 43, group a (``benchmarks/mutation_fast.py``,
issue 27, 2026-11-27, helper h43ma: the foundation, the static mechanisms and the small top-level core modules). As in
``test_mutation_kills_sample27.py``: each asserts a property of the module (a calibration against the budget it
spends, a stated bound, a refusal the contract states, a state round trip), never a pinned value, and names the
mutant(s) it kills (checked with ``python -m benchmarks.mutation_fast confirm NAME TEST``: fails on the mutant, passes
without it). Fast: in memory, no Beam."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from transforms.core.config import BudgetProfile, DynamicConfig, QuerySet
from transforms.core.continual.consistency import Consistency
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
from transforms.core.forecast import forecast
from transforms.core.foundation import state as state_mod
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP, SeriesSplit, TightGaussian
from transforms.core.foundation.accounting.budgets import BudgetExceededError
from transforms.core.foundation.accounting.ledger import Ledger
from transforms.core.foundation.accounting.units import PrivacyUnit, zeta
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.entries import MutationLimit, Update, resolve
from transforms.core.foundation.noise import NoiseSource, config_digest
from transforms.core.foundation.random_stream import RandomStream
from transforms.core.foundation.samplers import as_ratio_up
from transforms.core.foundation.state import StateError
from transforms.core.limits import MAX_PERIODS, periods_limit
from transforms.core.mechanisms import MECHANISMS
from transforms.core.static.linear import CountMechanism, HistogramMechanism, LinearQueryMechanism
from transforms.core.static.pmw import PMWMechanism


# kills transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_7 (the refusal of bad round weights names
# another setting)
@pytest.mark.parametrize("field", ["round_weights", "delta_weights"])
@pytest.mark.parametrize("bad", [(0.5, 0.5, 0.5, 0.0), (0.25, 0.25, 0.25), (-0.1, 0.4, 0.4, 0.1)])
def test_a_budget_profiles_refusal_of_bad_weights_names_the_weights_it_refuses(field, bad):
    good = BudgetProfile.tuned()
    with pytest.raises(ValueError, match=f"^{field} must be 4 non-negative weights summing to <= 1"):
        dataclasses.replace(good, **{field: bad})


# kills transforms.core.config.xǁDynamicConfigǁbudget_profile__mutmut_14 (the tuned profile built without the
# configured eta: the levels' zeta split ignores it)
@pytest.mark.parametrize("profile", ["tuned", "tight"])
@pytest.mark.parametrize("eta", [0.25, 1.5])
def test_a_configs_level_split_uses_its_eta_when_no_horizon_is_declared(profile, eta):
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), profile=profile, eta=eta)
    levels = cfg.budget_profile.level_split
    assert levels == SeriesSplit("zeta", eta)
    # the weights it charges level l are 1 / (zeta(1 + eta) l^(1 + eta)): they sum to at most 1
    assert levels.weight(2) == pytest.approx(1 / (zeta(1 + eta) * 2 ** (1 + eta)), rel=1e-12)
    assert levels.partial_sum(10_000) <= 1


# kills transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_18 (weights summing to exactly 1 + 1e-12, the
# float tolerance, refused)
@pytest.mark.parametrize("field", ["round_weights", "delta_weights"])
def test_a_budget_profile_accepts_weights_up_to_one_plus_its_tolerance_and_refuses_one_ulp_more(field):
    good = BudgetProfile.tuned()
    edge = 1 + 1e-12
    assert getattr(dataclasses.replace(good, **{field: (edge, 0.0, 0.0, 0.0)}), field)[0] == edge
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(good, **{field: (math.nextafter(edge, 2.0), 0.0, 0.0, 0.0)})


# kills transforms.core.config.xǁBudgetProfileǁpaper__mutmut_32 (the paper profile's static delta share 1/4 instead of
# 1/3: its delta no longer split in thirds, a twelfth of it never charged)
def test_the_paper_profile_splits_a_round_as_the_seed_eps_in_quarters_delta_in_thirds_n_hat_pure():
    p = BudgetProfile.paper()
    assert p.round_weights[0] == p.round_weights[1] == p.round_weights[2] == p.round_weights[3]
    assert math.fsum(p.round_weights) == pytest.approx(1.0, abs=1e-15)
    assert p.delta_weights[0] == 0.0  # n_hat is pure
    assert p.delta_weights[1] == p.delta_weights[2] == p.delta_weights[3]
    assert math.fsum(p.delta_weights) == pytest.approx(1.0, abs=1e-15)


class _Scripted(RandomStream):
    """A RandomStream that hands out the given 64-bit words in order (then the top word, 2^64 - 1)."""

    def __init__(self, words):
        super().__init__(b"\0" * 32)
        self.left = list(words)

    def words(self, n):
        out = [self.left.pop(0) if self.left else (1 << 64) - 1 for _ in range(n)]
        return np.asarray(out, dtype=np.uint64)


# kills transforms.core.foundation.random_stream.xǁRandomStreamǁuniform_below__mutmut_41 (the word 2^64 mod n
# rejected: the accepted range is no longer a multiple of n, and the law is no longer exactly uniform) and
# uniform_below__mutmut_42 (the accepted words written to every bound, not to the accepted ones)
@pytest.mark.parametrize("n", [1, 3, 7, 8, 10, 1 << 20, (1 << 32) + 1, (1 << 62) + 3, (1 << 63) - 1])
def test_uniform_below_accepts_exactly_the_words_from_2_to_the_64_mod_n(n):
    thr = (1 << 64) % n
    # the accepted words [thr, 2^64) number a multiple of n: each residue is drawn by exactly (2^64 - thr) / n words
    assert (2**64 - thr) % n == 0
    # so the first accepted word is thr itself (its residue thr); thr - 1, where thr > 0, is rejected
    words = [thr - 1, thr] if thr else [thr]
    s = _Scripted(words)
    assert s.uniform_below(np.array([n], dtype=np.int64)).tolist() == [thr % n]
    assert s.left == []  # the word after thr is never read
    # the same in a vector of bounds (the rejection loop over the pending ones)
    s = _Scripted([thr, (1 << 64) - 1])
    assert s.uniform_below(np.array([n, n], dtype=np.int64)).tolist() == [thr % n, ((1 << 64) - 1) % n]
    if thr:  # the first bound's word rejected: only that bound draws again (the next word, 2^64 - 1)
        s = _Scripted([thr - 1, thr])
        assert s.uniform_below(np.array([n, n], dtype=np.int64)).tolist() == [((1 << 64) - 1) % n, thr % n]


# kills transforms.core.foundation.state.x_open_envelope__mutmut_21 (a migration handed None instead of the state:
# an old schema's state could never be read after a schema bump)
def test_an_old_schemas_state_is_migrated_step_by_step_to_the_current_schema(monkeypatch):
    def step(n):
        def migrate(state):
            assert state["schema"] == n  # each migration receives the state of its own schema
            return {**state, "schema": n + 1, "body": [*state["body"], f"{n}->{n + 1}"]}

        return migrate

    monkeypatch.setattr(state_mod, "SCHEMA", 3)
    monkeypatch.setattr(state_mod, "MIGRATIONS", {1: step(1), 2: step(2)})
    old = {"schema": 1, "mechanism": "m", "config": "c", "body": ["v1"]}
    assert state_mod.open_envelope(old, "m", "c") == ["v1", "1->2", "2->3"]
    assert state_mod.open_envelope(state_mod.envelope("m", "c", ["now"]), "m", "c") == ["now"]
    with pytest.raises(StateError, match="cannot restore"):  # the migrated state still names its mechanism
        state_mod.open_envelope(old, "other", "c")


# kills transforms.core.static.pmw.xǁPMWMechanismǁ_range_of__mutmut_26 (the first row start computed as a float,
# a (a - 1) / 2: rounded past 2^53, the range of an index near a row's start is misplaced at large domains)
@pytest.mark.parametrize("d", [2, 9, 1 << 27])
def test_pmw_range_index_maps_to_the_row_major_range_it_enumerates(d):
    mech = PMWMechanism(d, ranges=True)
    if d < 100:  # every index against the enumeration range_answers uses (row-major over a <= b)
        idx = np.arange(mech.query_count)
        want_a, want_b = np.triu_indices(d)
    else:  # the indices around the starts of the last rows: start(a) = a d - a (a - 1) / 2
        rows = np.arange(d - 2000, d, dtype=np.int64)
        start = rows * d - rows * (rows - 1) // 2
        idx = np.concatenate([start, start + 1, start[1:] - 1])
        want_a = np.concatenate([rows, rows, rows[:-1]])  # start(a + 1) - 1 is the last range of row a
        ok = idx < mech.query_count
        idx, want_a = idx[ok], want_a[ok]
        row_start = want_a * d - want_a * (want_a - 1) // 2
        want_b = want_a + (idx - row_start)
    a, b = mech._range_of(idx)
    assert np.array_equal(a, want_a) and np.array_equal(b, want_b)
    assert np.all((0 <= a) & (a <= b) & (b < d))


# kills transforms.core.static.pmw.xǁPMWMechanismǁalpha__mutmut_63 (the stated bound with (M + E) * 2 for
# (M + E)^2 under its square root: below the measurement noise's own bound)
@pytest.mark.parametrize(("budget", "kind"), [(PureDP(1.0), "laplace"), (ZCDP(0.5), "gaussian")])
@pytest.mark.parametrize("n", [0.0, 50.0, 1e5])
@pytest.mark.parametrize("k", [1, 3])
def test_pmw_alpha_is_its_stated_bound_from_the_budget_split(budget, kind, n, k):
    """docs/pmw.md: 10% of a release's budget for the count, the rest evenly over T iterations, each half selection
    and half measurement; with probability 1 - beta / k, every query of a release is within
    sqrt(4 (n + E)^2 ln d / T + (M + E)^2) + S + 3 E, E, M, S the (beta / 3k)-bounds of the count noise, of the T
    measurements and of the T selections' shortfall; k releases by the union bound."""
    d, t, beta = 8, 5, 0.1
    mech = PMWMechanism(d, ranges=True, iterations=t, noise=kind)
    m = d * (d + 1) // 2
    b = beta / k
    if kind == "laplace":
        eps_it = 0.9 * budget.epsilon / t
        eps_sel, count_p, meas_p = eps_it / 2, 1 / (0.1 * budget.epsilon), 2 / eps_it
    else:  # rho: an eps-EM is eps^2 / 8-zCDP, a Gaussian measurement of sensitivity 1 is 1 / (2 sigma^2)-zCDP
        rho_it = 0.9 * budget.rho / t
        eps_sel, count_p, meas_p = math.sqrt(8 * rho_it / 2), 1 / (2 * 0.1 * budget.rho), 1 / (2 * rho_it / 2)
    big_e = NoiseProfile.single(kind, float(as_ratio_up(count_p))).tail_bound(b / 3)
    big_m = NoiseProfile.single(kind, float(as_ratio_up(meas_p))).tail_bound(b / (3 * t))
    sel = 2 * (1 + 2.0**-20) / eps_sel * (math.log(m) + math.log(3 * t / b))
    one = math.sqrt(4 * (n + big_e) ** 2 * math.log(d) / t + (big_m + big_e) ** 2) + sel + 3 * big_e
    got = mech.alpha(budget, beta, k=k, n=n)
    assert got == pytest.approx(k * one, rel=1e-12)
    assert got >= k * (big_m + big_e + sel + 3 * big_e) * (1 - 1e-12)  # never below the measurement noise's bound


# kills transforms.core.forecast.x_forecast__mutmut_75 (a histogram projected with the threshold bound forecast
# without its query's name)
@pytest.mark.parametrize("rounded", [False, True])
@pytest.mark.parametrize(
    "consistency",
    [Consistency((("h", "n"),), threshold_bound=True), Consistency(own_total=("h",))],
    ids=["threshold", "own_total"],
)
def test_a_projected_histograms_forecast_names_its_query_and_states_its_bound_plus_tau(consistency, rounded):
    consistency = dataclasses.replace(consistency, round_answers=rounded)
    cfg = DynamicConfig((QuerySet("n"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
    plain = forecast(NetChangeRelease, cfg, NetChangeOptions(), [4, 8], end_tick=8)
    post = forecast(NetChangeRelease, cfg, NetChangeOptions(), [4, 8], end_tick=8, consistency=consistency)
    assert len(post) == len(plain) and {(f.tick, f.query) for f in post} == {(f.tick, f.query) for f in plain}
    raw = {(f.tick, f.query): f.error_bound for f in plain}
    for f in post:
        assert f.plus_tau == (f.query == "h")
        if f.plus_tau:  # B_h of the raw answer (+1 when rounded); |tau| is added at release
            assert f.error_bound == raw[(f.tick, "h")] + (1.0 if rounded else 0.0)


# kills transforms.core.limits.x_periods_limit__mutmut_2 (the reason of the general period limit garbled: the
# refusal of a too-long time.end says why in it)
@pytest.mark.parametrize("counters", [[], [None], [None, "kary_tree", "binary_tree"]])
def test_a_release_without_a_limited_counter_states_the_general_period_limit_and_why(counters):
    limit, why = periods_limit(counters)
    assert limit == MAX_PERIODS
    assert why.startswith("the largest bounded release (every stream steps through every period")


# kills transforms.core.static.pmw.xǁPMWMechanismǁ__init____mutmut_2 (a PMW built without iterations runs T = 1
# instead of choosing T per release from its public noisy size)
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_pmw_without_iterations_chooses_t_per_release_within_one_and_twenty(kind):
    mech = PMWMechanism(16, ranges=True, noise=kind)
    budget = PureDP(1.0) if kind == "laplace" else ZCDP(0.5)
    assert mech.fixed_iterations == 0 and mech.iterations == 20
    ts = [mech.choose_iterations(budget, n_hat) for n_hat in (0.0, 10.0, 1e3, 1e5, 1e9)]
    assert ts == sorted(ts) and ts[0] == 1 and ts[-1] == 20  # grows with the public size, clamped to [1, 20]
    assert PMWMechanism(16, ranges=True, iterations=7, noise=kind).choose_iterations(budget, 1e9) == 7


# kills transforms.core.static.pmw.xǁPMWMechanismǁ_split__mutmut_31 (a Gaussian measurement's sigma^2 doubled: the
# split no longer spends the budget it is given)
@pytest.mark.parametrize("external", [False, True])
@pytest.mark.parametrize("t", [1, 4, 20])
@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_pmw_gaussian_split_composes_to_its_budgets_rho(external, t, rho):
    """zCDP: the count (sensitivity 1, sigma_c^2) costs 1 / (2 sigma_c^2); each of T iterations an eps_sel-EM
    (eps_sel^2 / 8) and a measurement of sensitivity 1 (1 / (2 sigma_m^2)): they add up to the budget's rho."""
    count_p, eps_sel, meas_p = PMWMechanism(16, ranges=True, noise="gaussian")._split(ZCDP(rho), external, t)
    assert (count_p is None) == external
    total = (0.0 if external else 1 / (2 * count_p)) + t * (eps_sel**2 / 8 + 1 / (2 * meas_p))
    assert total == pytest.approx(rho, rel=1e-12)
    if not external:  # the count's share is 10%
        assert 1 / (2 * count_p) == pytest.approx(0.1 * rho, rel=1e-12)


# kills transforms.core.foundation.entries.xǁMutationLimitǁ__post_init____mutmut_16 and
# transforms.core.foundation.accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_24 (a window of 0 ticks refused by
# the registry's limit or by the unit: every mutation at the first insertion's own tick is a valid constraint)
def test_a_mutation_window_of_zero_ticks_is_accepted_and_enforced():
    limit = MutationLimit(None, 0)
    assert limit.window == 0 and PrivacyUnit.entry(None, 0).mutation_window == 0
    with pytest.raises(ValueError, match="^window must be an integer >= 0"):
        MutationLimit(None, -1)
    with pytest.raises(ValueError, match="^mutation_window must be an integer >= 0"):
        PrivacyUnit.entry(None, -1)
    # enforced: a mutation at the insertion's tick is accepted, one a tick later is refused
    state, ins, _, n, reason = resolve(None, Update("insert", "e", (0,)), 5, (2,), True, limit)
    assert (ins, n, reason) == ((0,), 1, None)
    assert resolve(state, Update("upsert", "e", (1,)), 5, (2,), True, limit)[4] is None
    assert resolve(state, Update("upsert", "e", (1,)), 6, (2,), True, limit)[4] == "constraint_exceeded"


# kills transforms.core.foundation.entries.x_resolve__mutmut_96 (a delete or upsert under a mutation limit carries
# the entry's mutation count instead of its insertion tick: the deletion is attributed to another tick's insertion)
@pytest.mark.parametrize("limit", [3, 5, MutationLimit(3, 10), MutationLimit(4, None, 2)])
@pytest.mark.parametrize("op", ["delete", "upsert"])
def test_a_deletion_carries_the_insertion_tick_of_the_item_it_removes(limit, op):
    state, *_ = resolve(None, Update("insert", "e", (1,)), 3, (4,), True, limit)
    new_item = None if op == "delete" else (2,)
    new, ins, deleted, n, reason = resolve(state, Update(op, "e", new_item), 7, (4,), True, limit)
    assert reason is None and deleted == ((1,), 3)
    assert (ins, n) == ((None, 1) if op == "delete" else ((2,), 2))
    if op == "upsert":  # the new item's insertion tick is the upsert's
        assert resolve(new, Update("delete", "e"), 9, (4,), True, limit)[2] == ((2,), 7)


# kills transforms.core.static.linear.xǁStaticMechanismǁanswer__mutmut_2 (the answers of an integer release left as
# int64: a count's answers then differ in type from a real matrix's, and a counter's node values are stored so)
@pytest.mark.parametrize(
    "mech",
    [CountMechanism(3), HistogramMechanism(3), LinearQueryMechanism([[1, 0, 1]]), LinearQueryMechanism([[0.5, 0, 1]])],
    ids=["count", "histogram", "linear01", "linear_real"],
)
def test_static_answers_are_real_numbers_in_answer_units_whatever_the_lattice(mech):
    rel = mech.release(np.array([2, 0, 5]), PureDP(1.0), NoiseSource(bytes(range(32))).stream("a"))
    ans = mech.answer(rel)
    assert ans.dtype == np.float64
    assert np.array_equal(ans, np.asarray(rel.values, dtype=float))
    off = mech.answer(mech.release(np.array([2, 0, 5]), PureDP(1.0), NoiseSource.disabled().stream("a")))
    assert ans.dtype == off.dtype and np.array_equal(off, mech.exact(np.array([2, 0, 5])))


# kills transforms.core.config.xǁBudgetProfileǁ__post_init____mutmut_4 (a partition fraction of 1 accepted: the whole
# budget to the partitioning and none left for the tree that answers the queries)
@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.5, 1.5])
def test_a_budget_profiles_partition_fraction_is_strictly_between_zero_and_one(fraction):
    good = BudgetProfile.tuned()
    for ok in (1e-9, 0.5, math.nextafter(1.0, 0.0)):
        assert dataclasses.replace(good, partition_fraction=ok).partition_fraction == ok
    with pytest.raises(ValueError, match="partition_fraction must be in"):
        dataclasses.replace(good, partition_fraction=fraction)


# kills transforms.core.foundation.accounting.budgets.xǁZCDPǁ__post_init____mutmut_1 (a zCDP budget's refusal names
# None instead of rho)
@pytest.mark.parametrize("cls", [ZCDP, TightGaussian])
def test_a_zcdp_budgets_refusals_name_rho(cls):
    with pytest.raises(ValueError, match=r"^rho must be >= 0, got -0\.5$"):
        cls(-0.5)
    for bad in (float("nan"), float("inf"), "1"):
        with pytest.raises(ValueError, match="^rho must be a finite number"):
            cls(bad)
    assert cls(0.0).rho == 0.0 and cls(2).rho == 2


# asserts what transforms.core.foundation.accounting.units.xǁPrivacyUnitǁ__post_init____mutmut_47 breaks by accepting
# an entry or update unit with per_window (then ignored: the guarantee stated without the window it names)
@pytest.mark.parametrize("kind", ["update", "entry"])
def test_per_window_is_refused_outside_a_person_unit_and_bounds_a_persons_group(kind):
    with pytest.raises(ValueError, match=r"^per_window bounds a person's entries \(unit person\)$"):
        PrivacyUnit(kind, 1, per_window=3)
    unit = PrivacyUnit.person(2, 2, per_window=5)  # L = 2 entries per window of 5 ticks, k = 2 mutations each
    assert unit.group_size_until(12) == 2 * 3 * (2 * 2 - 1)  # ceil(12 / 5) windows


# kills transforms.core.protocol.xǁContinualReleaseǁstate_digest__mutmut_21 (a periodic release's state digest
# without the mechanism's name: two mechanisms' states under one configuration carry the same digest)
@pytest.mark.parametrize("every", [None, 3])
def test_a_state_digest_names_the_mechanism_the_configuration_the_end_and_the_period(every):
    cfg = DynamicConfig((QuerySet("n"),), PureDP(1.0))
    classes = sorted({spec.core_cls for spec in MECHANISMS.values() if spec.input_kind == "updates"}, key=str)
    digests = {cls.state_digest(cfg, None, 20, every) for cls in classes}
    assert len(digests) == len(classes) > 5
    cls = classes[0]
    others = {
        cls.state_digest(DynamicConfig((QuerySet("n"),), PureDP(2.0)), None, 20, every),
        cls.state_digest(cfg, None, 21, every),
        cls.state_digest(cfg, None, 20, 4 if every else 2),
    }
    assert len(others) == 3 and not others & digests


# kills transforms.core.static.pmw.xǁPMWMechanismǁ_units_param__mutmut_11 (a Gaussian measurement of a real query
# matrix calibrated with sigma^2 unit^2 instead of sigma^2 / unit^2 in lattice units: 2^80 times too little noise)
@pytest.mark.parametrize(("kind", "budget"), [("laplace", PureDP(0.7)), ("gaussian", ZCDP(0.3))])
@pytest.mark.parametrize("t", [1, 6])
def test_pmw_measurements_of_a_real_matrix_cost_their_share_in_lattice_units(kind, budget, t):
    """A matrix with entries on the 2^-20 lattice is measured in lattice units, where one item moves a query by up to
    1 / unit: the noise parameter there must cost (Laplace: (1 / unit) / b; Gaussian: (1 / unit)^2 / (2 sigma^2))
    at most the measurement's share of an iteration, and it is the parameter added in answer units, rounded up."""
    mech = PMWMechanism(4, matrix=[[0.5, 0.25, 1.0, 0.0], [1.0, 0.0, 0.75, 0.3]], noise=kind, iterations=t)
    unit = mech.unit
    assert unit == 2.0**-20
    _, _, meas_p = mech._split(budget, False, t)
    p = mech._units_param(meas_p, unit)
    if kind == "laplace":
        share, cost = 0.9 * budget.epsilon / t / 2, (1 / unit) / p
    else:
        share, cost = 0.9 * budget.rho / t / 2, (1 / unit) ** 2 / (2 * p)
    assert cost <= share and cost == pytest.approx(share, rel=1e-9)
    assert mech._answer_param(meas_p) == pytest.approx(meas_p, rel=1e-9) and mech._answer_param(meas_p) >= meas_p


# kills transforms.core.foundation.entries.x_resolve__mutmut_84 (with an insertion limit above 1, the state forgets
# the first insertion's tick: the window is then counted from the last upsert, and mutations past it are accepted)
@pytest.mark.parametrize("max_insertions", [1, 2, 5])
def test_a_mutation_window_counts_from_the_first_insertion_whatever_the_insertion_limit(max_insertions):
    limit = MutationLimit(6, 3, max_insertions)
    state, *_ = resolve(None, Update("insert", "e", (0,)), 1, (4,), True, limit)
    state, _, _, _, reason = resolve(state, Update("upsert", "e", (1,)), 3, (4,), True, limit)
    assert reason is None
    assert resolve(state, Update("upsert", "e", (2,)), 4, (4,), True, limit)[4] is None  # 4 - 1 <= 3
    assert resolve(state, Update("upsert", "e", (2,)), 5, (4,), True, limit)[4] == "constraint_exceeded"  # 5 - 1 > 3
    deleted, *_ = resolve(state, Update("delete", "e"), 4, (4,), True, limit)
    # a deleted entry coming back (where insertions allow it) is still bound by its first insertion's window
    assert resolve(deleted, Update("insert", "e", (3,)), 5, (4,), True, limit)[4] == "constraint_exceeded"


# kills transforms.core.static.linear.x__calibrated__mutmut_3 (a zero epsilon no longer refused by the calibration:
# it divides by zero instead of saying why)
@pytest.mark.parametrize("mech", [CountMechanism(), HistogramMechanism(3), LinearQueryMechanism([[0.5, 1.0]])])
def test_a_laplace_release_at_zero_epsilon_is_refused_with_its_reason(mech):
    stream = NoiseSource(bytes(range(32))).stream("zero")
    for budget in (PureDP(0.0), ApproxDP(0.0, 1e-6)):
        with pytest.raises(ValueError, match="^epsilon must be > 0 to release$"):
            mech.release(np.zeros(mech.domain_size, dtype=np.int64), budget, stream)
        with pytest.raises(ValueError, match="^epsilon must be > 0 to release$"):
            mech.noise_profile(budget)


# kills transforms.core.foundation.accounting.ledger.xǁScopeǁcharge__mutmut_11 (an (eps, delta) ledger checks only
# epsilon against its cap: a charge that takes delta over the budget is recorded instead of refused)
@pytest.mark.parametrize("kind", ["sequential", "parallel"])
def test_an_approx_ledger_refuses_a_charge_over_its_delta_with_epsilon_to_spare(kind):
    ledger = Ledger(ApproxDP(1.0, 1e-6))
    scope = ledger.scope("s", kind=kind)
    scope.charge(ApproxDP(0.1, 6e-7), ("a",))
    over = ApproxDP(0.1, 6e-7) if kind == "sequential" else ApproxDP(0.1, 1.2e-6)  # delta over, epsilon far under
    with pytest.raises(BudgetExceededError):
        scope.child("b").charge(over, ("b",))
    assert ledger.spent.vector() == pytest.approx((0.1, 6e-7)) and ledger.num_releases == 1
    scope.child("c").charge(ApproxDP(0.1, 4e-7), ("c",))  # up to the cap (and its float tolerance) is allowed
    assert ledger.spent.delta <= 1e-6 * (1 + 1e-12)


# kills transforms.core.protocol.xǁContinualReleaseǁstate_digest__mutmut_29 (the period's tag in a periodic state's
# digest renamed: every periodic state written before would be refused on restore). A format pin, stated: no periodic
# state is in tests/golden/, and a state's digest is part of the versioned format (docs/state.md)
def test_a_periodic_state_digest_is_the_unperiodic_ones_parts_and_the_tagged_period():
    cfg = DynamicConfig((QuerySet("n"),), PureDP(1.0))
    for spec in MECHANISMS.values():
        if spec.input_kind != "updates":  # a report collector has its own contract (no periods)
            continue
        cls, opts = spec.core_cls, spec.options()
        base = ("mechanism-state", cls.name, cfg, opts, 20)
        assert cls.state_digest(cfg, opts, 20) == config_digest(*base)
        assert cls.state_digest(cfg, opts, 20, 3) == config_digest(*base, ("every_ticks", 3))


# asserts what transforms.core.foundation.bounds.xǁNoiseProfileǁtail_bound__mutmut_1 breaks (the beta check inverted:
# a bound "with probability 1 - beta" for beta outside (0, 1) stated instead of refused)
@pytest.mark.parametrize("beta", [0.0, 1.0, 1.5, -0.1, float("nan")])
def test_a_tail_bound_is_stated_only_for_a_failure_probability_inside_zero_one(beta):
    for prof in (
        NoiseProfile.zero(),
        NoiseProfile.single("laplace", 3.0),
        NoiseProfile.single("gaussian", 4.0).times(3),
    ):
        with pytest.raises(ValueError, match=r"^beta must be in \(0, 1\)"):
            prof.tail_bound(beta)
    prof = NoiseProfile.single("laplace", 3.0) + NoiseProfile.single("gaussian", 4.0)
    assert 0 < prof.tail_bound(0.3) < prof.tail_bound(0.01)  # inside: a bound, growing as beta shrinks
