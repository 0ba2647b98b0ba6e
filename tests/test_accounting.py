"""Budgets, conversions, composition, series splits, ledger, privacy units."""

import math
import random

import numpy as np
import pytest
from scipy.stats import norm

from transforms.core.foundation.accounting import (
    DISCRETE_TAU2,
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    Ledger,
    PrivacyUnit,
    PureDP,
    Scope,
    SeriesSplit,
    cks_epsilon,
    compose_parallel,
    compose_sequential,
    gaussian_rho_for_approx_tight,
    rho_for_approx,
    stated_spend,
    to_approx,
    zcdp_delta_for_epsilon,
    zcdp_to_approx,
    zeta,
)


def gaussian_delta(eps, sigma):
    """Exact delta(eps) of the Gaussian mechanism, sensitivity 1 (Balle-Wang 2018)."""
    return norm.cdf(1 / (2 * sigma) - eps * sigma) - math.exp(eps) * norm.cdf(-1 / (2 * sigma) - eps * sigma)


@pytest.mark.parametrize("rho,delta", [(0.5, 1e-6), (0.01, 1e-5), (2.0, 1e-9), (1 / 8, 1e-3)])
def test_zcdp_conversion_is_valid_and_tight(rho, delta):
    eps = zcdp_to_approx(rho, delta).epsilon
    classic = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert eps <= classic
    # brute-force minimum of the same CKS expression over a fine alpha grid
    grid = np.exp(np.linspace(math.log(1 + 1e-6), math.log(1e6), 200_000))
    brute = min(cks_epsilon(rho, delta, a) for a in grid)
    assert eps <= brute + 1e-6
    # validity: the Gaussian mechanism with this rho (sigma^2 = 1/(2 rho)) satisfies it
    sigma = math.sqrt(1 / (2 * rho))
    assert gaussian_delta(eps, sigma) <= delta
    # tightness: the Gaussian needs at least 90% of that epsilon at this delta
    assert gaussian_delta(0.8 * eps, sigma) > delta


def test_known_conversion_values():
    # rho=0.5, delta=1e-6: classic bound 5.7565; CKS Cor. 13 gives about 5.2215
    assert zcdp_to_approx(0.5, 1e-6).epsilon == pytest.approx(5.22153, abs=1e-4)
    assert compose_sequential([PureDP(1.0), ZCDP(0.25)]) == ZCDP(0.75)
    assert zcdp_delta_for_epsilon(0.5, zcdp_to_approx(0.5, 1e-6).epsilon) == pytest.approx(1e-6, rel=1e-3)


def test_composition():
    assert compose_sequential([PureDP(0.2), PureDP(0.3)]) == PureDP(0.5)
    assert compose_sequential([PureDP(0.2), ApproxDP(0.3, 1e-6)]) == ApproxDP(0.5, 1e-6)
    assert compose_parallel([ApproxDP(0.2, 1e-7), ApproxDP(0.1, 1e-6)]) == ApproxDP(0.2, 1e-6)
    assert compose_parallel([ZCDP(0.2), ZCDP(0.5)]) == ZCDP(0.5)
    with pytest.raises(ValueError):
        compose_sequential([ZCDP(0.1), ApproxDP(0.1, 1e-6)])
    assert to_approx(PureDP(1.0)) == ApproxDP(1.0, 0.0)


def test_zeta_known_values():
    assert zeta(2) == pytest.approx(math.pi**2 / 6, abs=1e-12)
    assert zeta(4) == pytest.approx(math.pi**4 / 90, abs=1e-12)
    assert zeta(1.5) == pytest.approx(2.612375348685488, abs=1e-12)
    assert zeta(1.1) == pytest.approx(10.584448464950810, abs=1e-10)


def _zeta_points() -> list[float]:
    rng = random.Random(57)  # fixed points: s - 1 log-uniform in [1e-6, 20]
    return [1 + 10 ** rng.uniform(-6, 1.3) for _ in range(400)] + [1.001, 1.1, 1.25, 1.5, 2.0, 2.5, 3.0]


def _rel_to_mpmath(f, points) -> list[float]:
    import mpmath

    mpmath.mp.dps = 40
    return [float((mpmath.mpf(f(s)) - mpmath.zeta(mpmath.mpf(s))) / mpmath.zeta(mpmath.mpf(s))) for s in points]


def test_zeta_is_rounded_up_within_1e_12():
    """A series split's weights ``1 / (zeta(s) j^s)`` must sum to at most 1: the value is never below the true
    zeta (mpmath at 40 digits), by a margin of more than the 2 ulps of a weight's own rounding, and within 1e-12
    of it."""
    rel = _rel_to_mpmath(zeta, _zeta_points())
    assert min(rel) > 4 * 2.0**-52 and max(rel) < 1e-12


def test_the_unrounded_zeta_fails_the_side_check():
    """The broken twin: the Euler-Maclaurin value without the final rounding up (before stop 57) is below the
    true zeta at some of the points."""
    rel = _rel_to_mpmath(lambda s: zeta(s) / (1 + 2.0**-48), _zeta_points())
    assert min(rel) < 0


@pytest.mark.parametrize("split", [SeriesSplit("pi2"), SeriesSplit("zeta", 0.5), SeriesSplit("zeta", 0.1)])
def test_series_splits_sum_to_at_most_one(split):
    n = 200_000
    s = split.partial_sum(n)
    assert s < 1.0
    if split.kind == "pi2":
        # tail sum_{j>n} 6/(pi^2 j^2) is between 6/(pi^2 (n+1)) and 6/(pi^2 n)
        assert 6 / (math.pi**2 * (n + 1)) <= 1 - s <= 6 / (math.pi**2 * n)
    else:
        eta = split.eta
        tail_hi = n ** (-eta) / (eta * zeta(1 + eta))
        tail_lo = (n + 1) ** (-eta) / (eta * zeta(1 + eta))
        assert tail_lo - 1e-9 <= 1 - s <= tail_hi + 1e-9


def test_finite_split_refuses_beyond_horizon():
    s = SeriesSplit("finite", horizon=4)
    assert s.partial_sum(4) == pytest.approx(1.0)
    with pytest.raises(BudgetExceededError):
        s.weight(5)
    with pytest.raises(ValueError, match="kind"):
        SeriesSplit("harmonic")


def test_ledger_refuses_before_changing_anything():
    led = Ledger(PureDP(1.0))
    led.charge(PureDP(0.6), ("a",))
    with pytest.raises(BudgetExceededError, match="over the configured budget"):
        led.charge(PureDP(0.5), ("b",))
    assert led.spent == PureDP(0.6)
    assert [r.coordinates for r in led.records] == [("a",)]
    led.charge(PureDP(0.4), ("c",))
    assert led.spent.epsilon == pytest.approx(1.0)


def test_ledger_parallel_and_nested_scopes():
    led = Ledger(ApproxDP(1.0, 1e-6))
    tree = led.scope("tree")
    for level in range(4):
        par = tree.child(f"level{level}", Scope.PARALLEL)
        for node in range(10):
            par.charge(ApproxDP(0.25, 2.5e-7), ("node", level, node))
    assert led.spent.epsilon == pytest.approx(1.0)
    assert led.spent.delta == pytest.approx(1e-6)
    assert led.num_releases == 40
    # a parallel member that is itself sequential (a node with rounds)
    led2 = Ledger(PureDP(1.0))
    par = led2.scope("level", kind=Scope.PARALLEL)
    node = par.child("n1")
    node.charge(PureDP(0.5))
    node.charge(PureDP(0.4))
    par.child("n2").charge(PureDP(0.9))
    assert led2.spent.epsilon == pytest.approx(0.9)
    with pytest.raises(BudgetExceededError):
        node.charge(PureDP(0.2))
    node.close()
    assert "n1" not in par.children and led2.spent.epsilon == pytest.approx(0.9)


def test_zcdp_ledger_takes_pure_costs_as_eps_squared_over_two():
    led = Ledger(ZCDP(0.5))
    led.charge(PureDP(0.6))
    assert led.spent.rho == pytest.approx(0.18)
    with pytest.raises(ValueError):
        led.charge(ApproxDP(0.1, 1e-6))


@pytest.mark.parametrize("k,g", [(1, 1), (2, 3), (3, 5), (10, 19)])
def test_entry_level_group_privacy(k, g):
    unit = PrivacyUnit.entry(k)
    assert unit.group_size == g
    assert unit.guarantee(PureDP(0.1)).epsilon == pytest.approx(g * 0.1)
    assert unit.guarantee(ZCDP(0.01)).rho == pytest.approx(g * g * 0.01)
    a = unit.guarantee(ApproxDP(0.1, 1e-8))
    assert a.epsilon == pytest.approx(g * 0.1)
    assert a.delta == pytest.approx(g * math.exp((g - 1) * 0.1) * 1e-8)
    for target in (PureDP(1.0), ZCDP(0.5), ApproxDP(1.0, 1e-6)):
        back = unit.guarantee(unit.update_level_budget(target))
        assert _close(back, target)


def _close(a, b):
    return all(math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-300) for x, y in zip(vars(a).values(), vars(b).values()))


def test_update_unit_is_identity():
    assert PrivacyUnit.update().group_size == 1
    assert PrivacyUnit.update().guarantee(PureDP(1.0)) == PureDP(1.0)
    with pytest.raises(ValueError, match="max_mutations"):
        PrivacyUnit.entry(0)


@pytest.mark.parametrize(
    "bad", [lambda: PureDP(-1), lambda: ApproxDP(1, 1.5), lambda: ZCDP(float("nan")), lambda: PureDP(float("inf"))]
)
def test_invalid_budgets_rejected(bad):
    with pytest.raises(ValueError):
        bad()


# ---------------------------------------------------------------------------
# ledgers, scopes and the tight calibration, at their edges
# (each test names the mutants of the mutation benchmark it kills, benchmarks/mutation_config.py;
# the numbers are those of the last run, docs/testing.md)
# ---------------------------------------------------------------------------


def test_pure_ledger_refuses_a_delta_and_takes_a_zero_delta():
    """A pure-DP ledger must refuse an (eps, delta > 0) cost (charging it as
    eps would silently drop delta) and take (eps, 0) as eps.
    Kills accounting.budgets ApproxDP.as_pure_cost (was _to_currency__mutmut_4, ``delta != 0``)."""
    ledger = Ledger(PureDP(1.0))
    with pytest.raises(ValueError):
        ledger.charge(ApproxDP(0.25, 1e-6), ("a",))
    assert ledger.spent == PureDP(0.0) and ledger.num_releases == 0
    ledger.charge(ApproxDP(0.25, 0.0), ("b",))
    assert ledger.spent == PureDP(0.25)


def test_closed_scope_refuses_charges_and_children_and_closes_twice():
    """A closed scope's spend stays counted, but it takes no more charges and no
    new children (its bookkeeping is gone); closing again is harmless.
    Kills accounting.ledger.Scope.close mutants 1 (``closed = None``) and 6 (``pop``
    without a default)."""
    ledger = Ledger(PureDP(1.0))
    par = ledger.root.child("p", Scope.PARALLEL)
    s = par.child("a")
    s.charge(PureDP(0.5), ("x",))
    s.close()
    with pytest.raises(RuntimeError):
        s.charge(PureDP(0.1), ("y",))
    with pytest.raises(RuntimeError):
        s.child("c")
    s.close()
    assert "a" not in par.children
    assert ledger.spent == PureDP(0.5)


def test_would_spend_is_the_total_after_the_charge():
    """``would_spend`` equals the ledger's total after the same charge, whether
    the charge raises the root (sequential) or not (a parallel member below
    the current maximum), and charges nothing.
    Kills accounting.ledger.Scope.would_spend mutants 6, 10, 17."""
    ledger = Ledger(ApproxDP(4.0, 1e-5))
    par = ledger.root.child("p", Scope.PARALLEL)
    par.child("a").charge(PureDP(1.0))
    seq = ledger.root.child("s")
    for scope, cost in [(par.child("b"), PureDP(0.5)), (seq, ApproxDP(0.5, 1e-6)), (par.child("c"), PureDP(2.0))]:
        before = (ledger.spent, ledger.num_releases)
        predicted = scope.would_spend(cost)
        assert (ledger.spent, ledger.num_releases) == before
        assert isinstance(predicted, ApproxDP)
        scope.charge(cost)
        assert predicted == ledger.spent


def test_zero_budgets_and_the_root_scope():
    """``is_zero`` of each budget type; ``Ledger.scope()`` with no names is the root.
    Kills accounting.budgets.Budget.is_zero (was ZCDP.is_zero__mutmut_2) and ledger.Ledger.scope__mutmut_9."""
    assert ZCDP(0.0).is_zero and not ZCDP(1.0).is_zero and not ZCDP(0.5).is_zero
    assert PureDP(0.0).is_zero and not PureDP(1.0).is_zero
    assert ApproxDP(0.0, 0.0).is_zero and not ApproxDP(0.0, 1e-9).is_zero
    ledger = Ledger(ZCDP(1.0))
    assert ledger.scope() is ledger.root
    assert ledger.scope("a", "b", kind=Scope.PARALLEL).path == ("a", "b")


def test_gaussian_delta_curve_and_tight_calibration_hold_their_target():
    """delta(eps) of the continuous Gaussian is 0 without signal (mu = 0), and the
    tight calibration's rho gives at most the target delta, with the slack the
    docstring states (the rounding goes down, never up).
    Kills accounting.calibration.analytic_gaussian_delta (was factorization's __mutmut_3) and
    gaussian_rho_for_approx_tight (was __mutmut_47, rounded up by 1e-12)."""
    from transforms.core.foundation.accounting import analytic_gaussian_delta, gaussian_rho_for_approx_tight
    from transforms.core.foundation.accounting.calibration import (
        TIGHT_DELTA_FACTOR,
        TIGHT_EPS_SLACK,
        TIGHT_FLOAT_MARGIN,
    )

    assert analytic_gaussian_delta(1.0, 0.0) == 0.0
    for eps, delta in ((0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (4.0, 1e-5), (0.1, 1e-3)):
        gaussian_rho_for_approx_tight.cache_clear()
        rho = gaussian_rho_for_approx_tight(eps, delta)
        target = delta / TIGHT_DELTA_FACTOR / (1 + TIGHT_FLOAT_MARGIN)
        assert analytic_gaussian_delta(eps - TIGHT_EPS_SLACK, math.sqrt(2 * rho)) <= target
        # and the bisection is tight: 1e-9 more rho breaks the target
        assert analytic_gaussian_delta(eps - TIGHT_EPS_SLACK, math.sqrt(2 * rho * (1 + 1e-9))) > target


# ---------------------------------------------------------------------------
# what a budget does (every kind-dependent step is a method of the budget)
# ---------------------------------------------------------------------------


def test_budget_shares_in_every_currency():
    """part weights eps (or rho) and delta apart; pure_part pays a share as pure DP
    where the currency allows (Laplace under (eps, delta): its delta unused);
    pure_step is an eps-DP step's (eps, cost): eps = w eps, or sqrt(2 w rho) at
    cost w rho; for_sensitivity divides eps by the ratio, rho by its square."""
    assert PureDP(2.0).part(0.25, 0.5) == PureDP(0.5)
    assert ApproxDP(2.0, 1e-6).part(0.25, 0.5) == ApproxDP(0.5, 5e-7)
    assert ZCDP(2.0).part(0.25, 0.5) == ZCDP(0.5)
    assert ApproxDP(2.0, 1e-6).scale(0.5) == ApproxDP(1.0, 5e-7)
    assert ApproxDP(2.0, 1e-6).pure_part(0.5) == PureDP(1.0)
    assert ZCDP(2.0).pure_part(0.5) == ZCDP(1.0) and PureDP(2.0).pure_part(0.5) == PureDP(1.0)
    eps, cost = PureDP(2.0).pure_step(0.1)
    assert eps == pytest.approx(0.2) and cost.vector() == pytest.approx((0.2,)) and type(cost) is PureDP
    eps, cost = ZCDP(2.0).pure_step(0.1)
    assert eps == pytest.approx(math.sqrt(0.4)) and cost.vector() == pytest.approx((0.2,)) and type(cost) is ZCDP
    eps, cost = ApproxDP(2.0, 1e-6).pure_step(0.1)
    assert eps == pytest.approx(0.2) and cost.vector() == pytest.approx((0.2, 0.0)) and type(cost) is ApproxDP
    assert PureDP(1.0).for_sensitivity(2.0) == PureDP(0.5)
    assert ApproxDP(1.0, 1e-6).for_sensitivity(2.0) == ApproxDP(0.5, 1e-6)
    assert ZCDP(1.0).for_sensitivity(2.0) == ZCDP(0.25)


def test_budget_currencies_and_calibration():
    """vector / from_vector round-trip; a cost in a ledger's currency (pure as
    eps^2/2 in zCDP; (eps, delta>0) refused by pure and zCDP ledgers; zCDP by
    an (eps, delta) ledger); the noise families each kind can pay for; the rho a
    Gaussian mechanism is calibrated to (zCDP: rho; (eps, delta): CKS, or the
    tight analytic curve plus DISCRETE_TAU2; pure: refused)."""
    for b in (PureDP(1.5), ApproxDP(1.5, 1e-7), ZCDP(0.75)):
        assert type(b).from_vector(b.vector()) == b and b.primary == b.vector()[0]
    assert ZCDP(1.0).express(PureDP(1.0)) == ZCDP(0.5)
    assert ApproxDP(1.0, 1e-6).express(PureDP(0.5)) == ApproxDP(0.5, 0.0)
    assert PureDP(1.0).express(ApproxDP(0.5, 0.0)) == PureDP(0.5)
    for ledger, cost in (
        (PureDP(1.0), ApproxDP(0.5, 1e-9)),
        (ZCDP(1.0), ApproxDP(0.5, 1e-9)),
        (ApproxDP(1.0, 1e-6), ZCDP(0.1)),
    ):
        with pytest.raises(ValueError):
            ledger.express(cost)
    assert (PureDP(1.0).noise_families, ZCDP(1.0).noise_families) == (("laplace",), ("gaussian",))
    assert set(ApproxDP(1.0, 1e-6).noise_families) == {"laplace", "gaussian"}
    assert ZCDP(0.3).gaussian_rho() == 0.3 and ZCDP(0.3).gaussian_calibration("tight") == (0.3, 0)
    b = ApproxDP(1.0, 1e-6)
    assert b.gaussian_rho() == rho_for_approx(b) and b.gaussian_calibration() == (rho_for_approx(b), 0)
    assert b.gaussian_calibration("tight") == (gaussian_rho_for_approx_tight(1.0, 1e-6), DISCRETE_TAU2)
    assert not ApproxDP(1.0, 0.0).gaussian_calibrated and ApproxDP(1.0, 1e-9).gaussian_calibrated
    with pytest.raises(ValueError, match="delta > 0"):
        PureDP(1.0).gaussian_rho()
    with pytest.raises(ValueError, match="delta > 0"):
        ApproxDP(1.0, 0.0).gaussian_rho()
    assert (PureDP(1.0).scale_power, ApproxDP(1.0, 1e-6).scale_power, ZCDP(1.0).scale_power) == (1, 1, 2)


# ---------------------------------------------------------------------------
# the guarantee a spend states (what every release record says)
# ---------------------------------------------------------------------------


def test_stated_spend_is_the_group_guarantee_in_the_configured_currency():
    """A ledger's spend vector as the guarantee for the unit (group privacy over
    2k - 1 updates) in the configured currency, and as charged: pure and
    (eps, delta) ledgers state their own kind; a zCDP ledger under an
    (eps, delta) target states epsilon at the target's delta (CKS) and rho."""
    entry3 = PrivacyUnit.entry(3)  # g = 5
    configured, charged = stated_spend((0.3,), ledger=PureDP(0.5), unit=entry3, target=PureDP(2.5))
    assert configured == {"epsilon": pytest.approx(1.5)} and charged == {"epsilon": 0.3}
    configured, charged = stated_spend((0.2, 1e-8), ledger=ApproxDP(0.4, 1e-7), unit=entry3, target=ApproxDP(2.0, 1e-5))
    assert list(configured) == ["epsilon", "delta"] and charged == {"epsilon": 0.2, "delta": 1e-8}
    assert configured["epsilon"] == pytest.approx(1.0)
    assert configured["delta"] == pytest.approx(5 * math.exp(4 * 0.2) * 1e-8)
    configured, charged = stated_spend((0.1,), ledger=ZCDP(0.2), unit=PrivacyUnit.entry(2), target=ApproxDP(3.0, 1e-6))
    assert list(configured) == ["epsilon", "delta", "rho"] and charged == {"rho": 0.1}
    assert configured["rho"] == pytest.approx(0.9) and configured["delta"] == 1e-6
    assert configured["epsilon"] == zcdp_to_approx(configured["rho"], 1e-6).epsilon
    configured, _ = stated_spend((0.1,), ledger=ZCDP(0.2), unit=PrivacyUnit.update(), target=ZCDP(0.2))
    assert configured == {"rho": 0.1}


@pytest.mark.parametrize("budget", [PureDP(2.0), ApproxDP(2.0, 1e-6), ZCDP(0.5)], ids=["pure", "approx", "zcdp"])
def test_at_sensitivity_inverts_for_sensitivity(budget):
    """``at_sensitivity(r)``: eps * r, rho * r^2 (delta kept); the inverse of ``for_sensitivity``."""
    r = 2.5
    up = budget.at_sensitivity(r)
    assert up.primary == pytest.approx(budget.primary * (r * r if isinstance(budget, ZCDP) else r))
    assert up.for_sensitivity(r).vector() == pytest.approx(budget.vector())
    if isinstance(budget, ApproxDP):
        assert up.delta == budget.delta


def test_a_scope_at_a_sensitivity_charges_the_units_cost():
    """A scope of sensitivity m records every charge at m (children multiply): a release
    calibrated to rho / m^2 charges rho, so the ledger's total is the unit's guarantee; the
    budget still caps it; a scope asked again at another sensitivity is refused; a sensitivity
    below 1 is refused; a scope at 1 keeps no attribute (stored ledgers restore unchanged)."""
    ledger = Ledger(ZCDP(1.0))
    q = ledger.root.child("q0", sensitivity=2.0)
    inner = q.child("node", sensitivity=1.5)
    assert inner.sensitivity == 3.0 and "sensitivity" not in ledger.root.child("q1").__dict__
    q.charge(ZCDP(0.1), ("a",))
    assert ledger.spent.rho == pytest.approx(0.4)
    inner.charge(ZCDP(0.05), ("b",))
    assert ledger.spent.rho == pytest.approx(0.4 + 0.45)
    assert q.would_spend(ZCDP(0.01)).rho == pytest.approx(0.89)
    with pytest.raises(BudgetExceededError):
        q.charge(ZCDP(0.1), ("c",))
    with pytest.raises(ValueError, match="sensitivity"):
        ledger.root.child("q0", sensitivity=3.0)
    with pytest.raises(ValueError, match=">= 1"):
        ledger.root.child("q2", sensitivity=0.5)
    pure = Ledger(PureDP(1.0))
    pure.root.child("q", sensitivity=4.0).charge(PureDP(0.25), ("a",))
    assert pure.spent.epsilon == pytest.approx(1.0)


def test_person_unit_group_size_insertion_limit_and_describe():
    """A person of L entries of k mutations is L (2k - 1) updates (per window: times the windows);
    the insertion limit defaults to 1 with a mutation limit (none for a window alone, none at update
    level); the one line names the unit, whom it protects and the person field, never a value."""
    p = PrivacyUnit.person(4, 3)
    assert p.group_size == 20 and p.insertion_limit == 1
    w = PrivacyUnit.person(2, 2, per_window=100)
    assert w.group_size_until(250) == 2 * 3 * 3
    assert PrivacyUnit.entry(3).insertion_limit == 1 and PrivacyUnit.entry(3, max_insertions=2).insertion_limit == 2
    assert PrivacyUnit.entry(None, 10).insertion_limit is None and PrivacyUnit.update().insertion_limit is None
    assert repr(PrivacyUnit.entry(3)) == "PrivacyUnit(kind='entry', max_mutations=3)"
    line = p.describe("customer_id")
    assert line == (
        "privacy unit person: protects every update of one person (the records sharing one value of "
        "'customer_id'): at most 4 entries, each at most 3 mutations, inserted once (a deleted id never comes back); "
        "per stream (a person in several streams spends each stream's budget; privacy.max_streams_per_person bounds "
        "it)"
    )
    # across streams (privacy.max_streams_per_person): said in the line, in the repr (noise keys) only when set
    across = PrivacyUnit.person(4, 3, max_streams=2)
    assert across.describe("customer_id") == (
        "privacy unit person: protects every update of one person (the records sharing one value of "
        "'customer_id') across all streams: admitted in at most 2 streams (the first the person inserts into; "
        "each stream runs at a 1/2 share of the budget), in each at most 4 entries, each at most 3 mutations, "
        "inserted once (a deleted id never comes back)"
    )
    assert repr(across).endswith(", max_entries=4, max_insertions=1, max_streams=2)")
    assert "max_streams" not in repr(p)
    with pytest.raises(ValueError, match="max_streams bounds the streams of a person"):
        PrivacyUnit("entry", 2, max_streams=2)
    with pytest.raises(ValueError, match="max_streams must be an integer >= 1"):
        PrivacyUnit.person(4, 3, max_streams=0)
    assert PrivacyUnit.update().describe().startswith("privacy unit update: protects one update")
    assert PrivacyUnit.entry(2).describe().endswith("; not a person")


def test_remaining_fraction_is_the_unspent_share_of_the_primary_figure():
    """``Ledger.remaining_fraction``: 1 - spent / budget in the budget's own primary figure (epsilon, rho);
    0 for a zero budget (issue 27: no fast test read it)."""
    led = Ledger(PureDP(2.0))
    assert led.remaining_fraction == 1.0
    led.charge(PureDP(0.5))
    assert led.remaining_fraction == pytest.approx(0.75, rel=1e-15)
    led.charge(PureDP(1.5))
    assert led.remaining_fraction == pytest.approx(0.0, abs=1e-15)
    z = Ledger(ZCDP(0.5))
    z.charge(ZCDP(0.1))
    assert z.remaining_fraction == pytest.approx(0.8, rel=1e-12)
    z.charge(PureDP(0.2))  # eps^2 / 2 = 0.02 of rho
    assert z.remaining_fraction == pytest.approx(1 - 0.12 / 0.5, rel=1e-12)
    assert Ledger(PureDP(0.0)).remaining_fraction == 0.0


def test_budget_sum_and_the_to_approx_conversions():
    """``a + b`` is sequential composition (the sum in the most general currency present); ``to_approx`` of a
    pure budget is (eps, 0), of an (eps, delta) budget itself, of zCDP the tight CKS conversion at the given
    delta (and it needs one) (issue 27: no fast test called ``ZCDP.to_approx`` or ``+``)."""
    assert PureDP(0.25) + PureDP(0.5) == PureDP(0.75)
    assert PureDP(0.25) + ApproxDP(0.5, 1e-6) == ApproxDP(0.75, 1e-6)
    assert ZCDP(0.1) + PureDP(0.2) == ZCDP(0.1 + 0.02)
    assert PureDP(0.7).to_approx() == ApproxDP(0.7, 0.0)
    a = ApproxDP(0.7, 1e-7)
    assert a.to_approx() is a and a.to_approx(1e-3) is a
    z = ZCDP(0.5).to_approx(1e-6)
    assert z == zcdp_to_approx(0.5, 1e-6) and z.delta == 1e-6
    assert z.epsilon == pytest.approx(5.22153, abs=1e-4)
    with pytest.raises(ValueError, match="needs a target delta"):
        ZCDP(0.5).to_approx()
