"""Published figures against the configuration (issue 27, item 4).

Every guarantee a release record or a release manifest carries must equal the configured one (or
be refused): for every registry entry x budget kind x unit it supports,

* the stated total (``MechanismSpec.stated_total``: the manifest's and summary's target) carries
  the configured numbers (plus the ledger's rho where it composes in zCDP under an (eps, delta)
  target);
* a record's spend fields after the whole ledger is spent (``MechanismSpec.spend_fields`` of the
  ledger's cap) equal the configured budget, and after a real run to the end (noise on) are within
  it: ``epsilon_spent`` / ``delta_spent`` / ``rho_spent`` are the configured unit's figures;
* randomized response: the per-entry guarantee its records carry (``epsilon_entry``,
  ``delta_entry``: the design's fold x each report's (eps, delta)) equals the configured one;
* every bundled configuration (``configs/*.yaml``): the manifest's ``budget_per_stream`` is the
  configured privacy section, its privacy unit is the configured one.

Exact arithmetic up to float: relative tolerance 1e-12 (the figures are products and quotients of
the configured floats by small integers). One figure may be below the configuration: an (eps,
delta) entry-level guarantee from group privacy in zCDP states eps(g^2 rho, delta) <= eps (tighter,
true). Broken twins: an entry-level figure stated at the update level (group privacy dropped in the
statement), a delta not split over the reports (the collector then publishes fold x delta), a
manifest that publishes the update-level budget instead of the configured unit's.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import privacy_harness as H
import pytest
import yaml

from transforms.core import MECHANISMS, NoiseSource, QuerySet
from transforms.core.config import DynamicConfig
from transforms.core.families import rr_client
from transforms.core.families.local_dp import RandomizedResponseCollector, RROptions, design_for
from transforms.core.foundation.accounting import PrivacyUnit, as_vector
from transforms.core.protocol import CONTRACT_BUDGETS

REL = 1e-12
ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
UPDATE_ENTRIES = sorted(n for n, s in MECHANISMS.items() if s.input_kind == "updates")
SETTINGS = [dataclasses.replace(s, end_tick=8) for s in H.settings(UPDATE_ENTRIES)]


def figure_problems(setting) -> list[str]:
    spec, config = setting.spec, setting.config()
    configured = dataclasses.asdict(config.budget)
    problems = []
    total = spec.stated_total(config)
    for k, v in configured.items():
        if not math.isclose(total.get(k, math.nan), v, rel_tol=REL):
            problems.append(f"stated total {k} = {total.get(k)} != configured {v}")
    extra = set(total) - set(configured)
    if extra - {"rho"}:
        problems.append(f"stated total carries {sorted(extra)} the configuration does not")
    cap = as_vector(spec.ledger_budget(config))
    fields = spec.spend_fields(config, cap)
    # an (eps, delta) entry-level figure from group privacy in zCDP may be tighter than the
    # configured eps (the ledger composes in rho; stated: eps(g^2 rho, delta) <= eps): the one case a
    # figure may be below the configuration; every other figure equals it
    tighter_ok = setting.unit.kind != "update" and "delta" in configured and "rho" in total
    for k, v in configured.items():
        got = fields.get(f"{k}_spent")
        ok = got is not None and (
            math.isclose(got, v, rel_tol=REL) or (tighter_ok and k == "epsilon" and 0 < got <= v * (1 + REL))
        )
        if not ok:
            problems.append(f"the whole ledger spent states {k}_spent = {got}, configured {v}")
    core, _, _ = H.drive(setting, H.merge(H.background(8, deletions=False)), NoiseSource(H.KEY))
    fields = spec.spend_fields(config, as_vector(core.spent))
    for k, v in configured.items():
        got = fields.get(f"{k}_spent")
        if got is None or got > v * (1 + REL):
            problems.append(f"a run states {k}_spent = {got} > configured {v}")
    return problems


@pytest.mark.parametrize("setting", SETTINGS, ids=H.setting_id)
def test_record_and_total_figures_equal_the_configuration(setting):
    assert not figure_problems(setting)


def test_twin_group_privacy_dropped_from_the_statement_is_caught(monkeypatch):
    """The ledger's update-level charge published as the entry-level figure."""
    monkeypatch.setattr(PrivacyUnit, "guarantee", lambda self, update_level: update_level)
    bad = [H.setting_id(s) for s in SETTINGS if s.unit.kind == "entry" and figure_problems(s)]
    assert bad


# ---------------------------------------------------------------------------------------------
# randomized response: the clients' per-entry guarantee on every record
# ---------------------------------------------------------------------------------------------


def rr_figure_problems(budget_name: str, variant: dict) -> list[str]:
    b, profile = CONTRACT_BUDGETS[budget_name]
    config = DynamicConfig((QuerySet("a", "histogram", domain_size=3),), b, profile=profile)
    eps, delta = b.to_approx().vector()
    options = RROptions(**variant)
    design = design_for(config, options)
    problems = []
    got = design.entry_guarantee()
    if not (math.isclose(got[0], eps, rel_tol=REL) and math.isclose(got[1], delta, rel_tol=REL, abs_tol=0)):
        problems.append(f"design states {got}, configured {(eps, delta)}")
    collector = RandomizedResponseCollector(config, stream="s", end_tick=4, options=options)
    for rel in collector.run_to_end():
        if not (
            math.isclose(rel.epsilon_entry, eps, rel_tol=REL) and math.isclose(rel.delta_entry, delta, rel_tol=REL)
        ):
            problems.append(f"record at {rel.tick} states ({rel.epsilon_entry}, {rel.delta_entry})")
            break
    return problems


RR_CASES = [
    (b, v)
    for name in sorted(n for n, s in MECHANISMS.items() if s.input_kind == "reports")
    for b in MECHANISMS[name].checks.budgets
    if b in ("pure-tuned", "approx")
    for v in ({}, *MECHANISMS[name].checks.variants)
]


@pytest.mark.parametrize(("budget", "variant"), RR_CASES, ids=str)
def test_randomized_response_records_state_the_configured_guarantee(budget, variant):
    assert not rr_figure_problems(budget, variant)


def test_twin_rr_delta_not_split_is_published_and_caught(monkeypatch):
    real = rr_client.SurveyDesign.from_total.__func__

    def unsplit(cls, z, epsilon, delta, constraint, layers=1, branching=2):
        d = real(cls, z, epsilon, delta, constraint, layers, branching)
        return cls(z, d.epsilon, delta, constraint, layers, branching)

    monkeypatch.setattr(rr_client.SurveyDesign, "from_total", classmethod(unsplit))
    assert rr_figure_problems("approx", {"max_mutations": 2})


# ---------------------------------------------------------------------------------------------
# the bundled configurations' manifests
# ---------------------------------------------------------------------------------------------


def manifest_problems(path: Path) -> list[str]:
    from pipelines.config.load import load_config
    from pipelines.manifest import release_manifest
    from transforms.core.foundation.noise import ReleaseIdentity

    raw = yaml.safe_load(path.read_text())
    privacy = raw.get("privacy", {})
    cfg = load_config(path)
    m = release_manifest(cfg, ReleaseIdentity("r", "d"))
    problems = []
    budget = m["budget_per_stream"]
    for k in ("epsilon", "delta", "rho"):
        if k in privacy and privacy[k] is not None:
            default = 0.0 if k == "delta" else math.nan  # a pure budget carries no delta
            if not math.isclose(float(budget.get(k, default)), float(privacy[k]), rel_tol=REL):
                problems.append(f"{path.name}: manifest {k} = {budget.get(k)}, configured {privacy[k]}")
    if privacy.get("delta", 0) == 0 and budget.get("delta", 0) not in (0, None):
        problems.append(f"{path.name}: manifest delta {budget['delta']} with no configured delta")
    unit = privacy.get("unit", "update")
    if not str(m["privacy_unit"]).startswith(unit):
        problems.append(f"{path.name}: manifest unit {m['privacy_unit']!r}, configured {unit!r}")
    return problems


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_manifest_states_the_configured_budget(path):
    assert not manifest_problems(path)


def test_twin_manifest_publishing_the_update_level_budget_is_caught(monkeypatch):
    from pipelines.config.pipeline import PipelineConfig

    real = PipelineConfig.target_budget

    def update_level(self):  # the update-level budget published as the configured unit's
        k = self.max_mutations_per_entry
        return real(self).ungroup(2 * k - 1) if self.unit != "update" and k else real(self)

    monkeypatch.setattr(PipelineConfig, "target_budget", update_level)
    assert any(manifest_problems(p) for p in CONFIGS)
