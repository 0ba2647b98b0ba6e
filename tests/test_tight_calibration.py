"""The tight Gaussian account (issue 31): under an (eps, delta > 0) budget with Gaussian noise,
``net_change`` (and ``auto`` with additive query sets only) calibrates the whole release once by
the analytic Gaussian curve, ``rho = gaussian_rho_for_approx_tight(eps, delta)``, split over the
counters in rho, each adding ``DISCRETE_TAU2`` to its sigma^2 (proof: ``docs/accounting.md``, "The
tight Gaussian account").

The exact privacy-loss harness (``tests/privacy_harness.py``) computes, for the whole release on
adversarial neighbours, ``mu_total^2 = sum Delta_j^2 / (sigma_j^2 - tau^2)`` over every noise draw
and checks the proof's statement ``tight_gaussian_delta(eps, mu_total^2 / 2) <= delta``; each
broken twin below must fail. All tests are deterministic (no statistical tolerance); about 3 s.
"""

from __future__ import annotations

import dataclasses

import privacy_harness as H
import pytest

from transforms.core.config import DynamicConfig, QuerySet
from transforms.core.continual.auto import AutoRelease
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease, lattice_counter
from transforms.core.foundation import accounting
from transforms.core.foundation.accounting import (
    DISCRETE_TAU2,
    ZCDP,
    ApproxDP,
    Ledger,
    PrivacyUnit,
    PureDP,
    TightGaussian,
    gaussian_rho_for_approx_tight,
    rho_for_approx,
    stated_share,
    tight_gaussian_delta,
    tight_gaussian_epsilon,
)
from transforms.core.foundation.noise import NoiseSource
from transforms.core.foundation.state import restore, to_plain

SETTINGS = [
    s
    for s in H.settings(["net_change", "auto"])
    if H.budget_kind(s.budget) == "approx" and s.unit.kind in ("update", "entry", "person")
]
UPDATE = [s for s in SETTINGS if s.unit.kind == "update"]


def test_the_settings_cover_every_unit_and_are_tight_accounts():
    assert {(s.name, s.unit.kind) for s in SETTINGS} >= {
        (n, u) for n in ("net_change", "auto") for u in ("update", "entry", "person")
    }
    assert all(H.tight_account(s) for s in SETTINGS)


@pytest.mark.parametrize("setting", UPDATE, ids=H.setting_id)
def test_update_level_reaches_the_configured_budget_and_not_more(setting):
    """At update level the worst adversarial pair spends the whole account: its exact lattice loss
    is the configured (eps, delta) (ratio 1 up to the calibration's 1e-12 rounding), never more,
    and the ledger states the configured budget and the rho spent."""
    v = H.check_setting(setting)
    assert not v.problems, v.problems
    eps, delta = setting.config().budget.epsilon, setting.config().budget.delta
    assert 0.999 < v.ratio <= 1 + H.TOL
    rho = gaussian_rho_for_approx_tight(eps, delta)
    assert v.stated["rho"] == pytest.approx(rho, rel=1e-9) and v.stated["delta"] == delta
    assert eps * (1 - 1e-9) <= v.stated["epsilon"] <= eps


def _whole_rho_twin(monkeypatch):
    """Each counter calibrated to the whole account, not its share (3 query sets of equal weight),
    while the ledger still charges the share."""
    orig = TightGaussian.gaussian_calibration

    def whole(self, method="zcdp"):
        rho, tau2 = orig(self, method)
        return rho * len(H.QUERIES), tau2

    monkeypatch.setattr(TightGaussian, "gaussian_calibration", whole)


@pytest.mark.parametrize("setting", SETTINGS, ids=H.setting_id)
def test_twin_counter_calibrated_to_the_whole_rho_is_caught(monkeypatch, setting):
    _whole_rho_twin(monkeypatch)
    assert H.check_setting(setting).problems


def test_twin_account_above_the_tight_rho_is_caught(monkeypatch):
    """A twin account 1.2x the tight rho (the ledger and the stated spend follow it, so only the
    exact loss against the configured budget can tell) fails the proof's statement."""
    from transforms.core.continual import net_change

    monkeypatch.setattr(
        net_change, "gaussian_rho_for_approx_tight", lambda e, d: 1.2 * gaussian_rho_for_approx_tight(e, d)
    )
    s = next(s for s in UPDATE if s.name == "net_change")
    problems = H.check_setting(s).problems
    assert any("(configured)" in p for p in problems), problems


@pytest.mark.parametrize("unit", [PrivacyUnit.update(), PrivacyUnit.entry(3), PrivacyUnit.person(2, 2)])
def test_the_ledger_total_is_the_configured_budget(unit):
    """The ledger's cap is the tight rho of the configured (eps, delta); after a whole run the
    counters' charges (at their sensitivity for the unit) add up to it, and the stated spend is
    the configured (eps, delta), never more."""
    budget = ApproxDP(1.0, 1e-6)
    config = DynamicConfig(H.QUERIES, budget, unit=unit)
    core = NetChangeRelease(config, end_tick=16)
    core.run_to_end(NoiseSource(b"\x01" * 32))
    rho = gaussian_rho_for_approx_tight(1.0, 1e-6)
    assert core.ledger.budget == TightGaussian(rho)
    assert isinstance(core.ledger.spent, TightGaussian)
    assert rho * (1 - 1e-9) <= core.ledger.spent.rho <= rho * (1 + 1e-12)
    stated, charged = NetChangeRelease.stated_spend(config, core.ledger.spent.vector())
    assert stated["delta"] == 1e-6 and 1 - 1e-9 <= stated["epsilon"] <= 1.0
    assert charged == {"rho": core.ledger.spent.rho}
    assert NetChangeRelease.stated_total(config) == {"epsilon": 1.0, "delta": 1e-6, "rho": rho}


def test_every_counter_adds_the_lattice_term_to_its_share():
    """sigma^2 = n2 l2^2 / (2 rho_share) + DISCRETE_TAU2 (lattice units): against the zCDP route of
    the same configuration, (sigma^2 - tau^2) shrinks by rho_cks / rho_tight (0.869 at (1, 1e-6))."""
    config = DynamicConfig(H.QUERIES, ApproxDP(1.0, 1e-6))
    tight = NetChangeRelease(config, end_tick=16)
    old = NetChangeRelease(config, end_tick=16, options=NetChangeOptions(calibration="zcdp"))
    assert isinstance(old.ledger.budget, ZCDP) and type(old.ledger.budget) is ZCDP
    ratio = rho_for_approx(ApproxDP(1.0, 1e-6)) / gaussian_rho_for_approx_tight(1.0, 1e-6)
    for a, b in zip(tight.counters, old.counters):
        assert float(a.noise_param - DISCRETE_TAU2) / float(b.noise_param) == pytest.approx(ratio, rel=1e-9)


def test_the_options_repr_is_unchanged():
    """The calibration switch is not in the options' repr (the noise keyed by it is unchanged)."""
    assert repr(NetChangeOptions()) == "NetChangeOptions(counter='auto', horizon=None)"
    assert NetChangeOptions(calibration="zcdp") != NetChangeOptions()
    with pytest.raises(ValueError, match="calibration"):
        NetChangeOptions(calibration="cks")


def test_mixed_auto_keeps_the_zcdp_route():
    """Beside a fully_dynamic (PMW) part the additive part keeps today's calibration (the two parts
    compose as (w eps, w delta) + ((1 - w) eps, (1 - w) delta))."""
    queries = (QuerySet("n", "count"), QuerySet("r", "pmw", domain_size=8, ranges=True))
    config = DynamicConfig(queries, ApproxDP(1.0, 1e-6))
    assert [p.mechanism for p, *_ in AutoRelease.parts_of(config, AutoRelease.options_cls(), 16)] == [
        "net_change",
        "fully_dynamic",
    ]
    auto = AutoRelease(config, end_tick=16)
    assert all(type(p.ledger.budget) is ZCDP for p in auto.parts)
    assert type(AutoRelease.ledger_cap(config)) is ZCDP
    only = DynamicConfig(queries[:1], ApproxDP(1.0, 1e-6))
    assert AutoRelease.ledger_cap(only) == TightGaussian(gaussian_rho_for_approx_tight(1.0, 1e-6))


def test_a_non_lattice_counter_is_refused_under_the_tight_account():
    config = DynamicConfig(H.QUERIES, ApproxDP(1.0, 1e-6))
    opts = NetChangeOptions(counter="honaker", horizon=16)
    with pytest.raises(ValueError, match="^mechanism.counter: honaker is not a lattice counter"):
        NetChangeRelease.check_settings(config, opts, end_tick=16)
    with pytest.raises(ValueError, match="^mechanism.counter"):
        NetChangeRelease(config, end_tick=16, options=opts)
    NetChangeRelease(config, end_tick=16, options=dataclasses.replace(opts, calibration="zcdp"))
    NetChangeRelease(DynamicConfig(H.QUERIES, ZCDP(0.5)), end_tick=16, options=opts)  # zCDP: as before
    assert [c for c in ("sqrt_factorization", "blt", "scaled_sqrt", "anytime_sqrt") if lattice_counter(c)] == [
        "sqrt_factorization",
        "blt",
        "scaled_sqrt",
        "anytime_sqrt",
    ]
    assert not any(lattice_counter(c) for c in ("honaker", "kary_tree", "infinite_honaker", "naive_prefix", "x"))


def test_the_tight_gaussian_budget():
    """Its arithmetic keeps its type; it refuses any other cost and the calibration without the
    lattice term; its (eps, delta) inverts the calibration; it round-trips through stored state."""
    b = TightGaussian(0.5)
    assert b.part(0.25, 0.9) == TightGaussian(0.125) and b.at_sensitivity(2) == TightGaussian(2.0)
    assert b.for_sensitivity(2) == TightGaussian(0.125) and b.group(3) == TightGaussian(4.5)
    assert b.ungroup(2) == TightGaussian(0.125) and b.as_zcdp() == ZCDP(0.5) and b != ZCDP(0.5)
    assert b.gaussian_calibration() == (0.5, DISCRETE_TAU2) == b.gaussian_calibration("tight")
    for cost in (ZCDP(0.1), PureDP(0.1), ApproxDP(0.1, 1e-9)):
        with pytest.raises(ValueError, match="tight Gaussian account"):
            Ledger(b).root.charge(cost)
    with pytest.raises(ValueError, match="lattice"):
        b.gaussian_rho()
    led = Ledger(b)
    led.root.child("q0").charge(TightGaussian(0.2))
    led.root.child("q1").charge(TightGaussian(0.3))
    assert led.spent == TightGaussian(0.5)
    with pytest.raises(accounting.BudgetExceededError):
        led.root.child("q2").charge(TightGaussian(1e-6))
    assert restore(to_plain(led)).spent == TightGaussian(0.5)
    for eps, delta in ((0.5, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (4.0, 1e-6), (8.0, 1e-9), (1.0, 1e-3)):
        rho = gaussian_rho_for_approx_tight(eps, delta)
        assert eps * (1 - 1e-9) <= tight_gaussian_epsilon(rho, delta) <= eps
        assert tight_gaussian_delta(eps, rho) <= delta < tight_gaussian_delta(eps, rho * (1 + 1e-6))
        assert TightGaussian(rho).to_approx(delta) == ApproxDP(tight_gaussian_epsilon(rho, delta), delta)
        assert rho > rho_for_approx(ApproxDP(eps, delta))  # the gain over the CKS route


def test_a_share_of_a_tight_account_is_stated_in_rho():
    """The plan's per-query budget: a share of a tight account is its share of rho, not (w eps, w delta)."""
    target = ApproxDP(1.0, 1e-6)
    tight = TightGaussian(gaussian_rho_for_approx_tight(1.0, 1e-6))
    assert stated_share(tight, target, 1 / 4) == TightGaussian(tight.rho / 4)
    assert stated_share(ZCDP(0.5), target, 1 / 4) == ApproxDP(0.25, 2.5e-7)
    assert tight_gaussian_epsilon(tight.rho / 4, 2.5e-7) > 0.25  # what (w eps, w delta) would misstate


def test_a_pairs_loss_is_within_an_approx_budget_by_the_tight_route_or_the_cks_route():
    """``PrivacyLoss.within`` for (eps, delta): a pair whose noise is calibrated by the tight account to the
    whole budget (sigma^2 = Delta^2 / (2 rho_tight) + DISCRETE_TAU2) is within it, although its rho is above the
    CKS conversion's; with 1.2x the tight rho (less noise) it is not; and stated against the tight account
    itself (``TightGaussian``) the comparison counts sigma^2 - DISCRETE_TAU2."""
    from fractions import Fraction

    from transforms.core.contribution.loss import Draw, privacy_loss
    from transforms.core.foundation.accounting import (
        DISCRETE_TAU2,
        ApproxDP,
        TightGaussian,
        gaussian_rho_for_approx_tight,
        rho_for_approx,
    )

    budget = ApproxDP(1.0, 1e-6)
    rho = gaussian_rho_for_approx_tight(1.0, 1e-6)
    diff = (3 << 20, 4 << 20)  # |Delta|^2 = 25 * 2^40, lattice units

    def pair(r):
        scale = Fraction(25 << 40, 1) / (2 * Fraction(r)) + DISCRETE_TAU2
        a = {("s", "c", "q", 1): Draw(("s", "c", "q", 1), "gaussian", scale, diff)}
        b = {("s", "c", "q", 1): Draw(("s", "c", "q", 1), "gaussian", scale, (0, 0))}
        return privacy_loss(a, b)

    ok, twin = pair(rho), pair(1.2 * rho)
    assert ok.rho > rho_for_approx(budget)  # the CKS route alone would refuse it
    assert ok.within(budget) and ok.within(TightGaussian(rho))
    assert not twin.within(budget) and not twin.within(TightGaussian(rho))
