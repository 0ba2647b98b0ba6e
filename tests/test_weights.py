"""``queries[].weight``: each query set's share of the stream's budget under ``auto`` and ``net_change``
(``transforms/core/plans.py::weighted_shares``, ``auto.plan``, ``NetChangeRelease.counter_budgets``).

The shares still sum to the budget, for every budget kind (pure: eps; zCDP: rho, linear; (eps, delta): the parts'
(eps, delta) add up, each part's ledger then holds the zCDP its share calibrates to, split linearly over its query
sets); the reprs and digests of configurations without weights are unchanged; the mechanisms that split their
budget their own way refuse a weight; the plan, the summary and the manifest show the weights."""

import copy
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from pipelines.config import ConfigError, check_mechanism, parse_config
from pipelines.manifest import release_identity, release_manifest
from pipelines.outputs import mechanism_plan
from transforms.core.config import DynamicConfig, QuerySet
from transforms.core.continual.auto import AutoOptions, AutoRelease, plan
from transforms.core.forecast import forecast
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP, as_vector, compose_sequential
from transforms.core.foundation.noise import NoiseSource
from transforms.core.plans import weighted_shares

ROOT = Path(__file__).resolve().parent.parent
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
BUDGETS = [PureDP(1.0), ZCDP(0.5), ApproxDP(1.0, 1e-6)]


def _queries(weights, pmw: bool = False):
    qs = [
        QuerySet("active", "count", weight=weights[0]),
        QuerySet("by_carrier", "histogram", domain_size=3, weight=weights[1]),
        QuerySet("amount", "linear", domain_size=3, matrix=((0.0, 0.5, 1.0),), weight=weights[2]),
    ]
    if pmw:
        qs.append(QuerySet("ranges", "pmw", domain_size=4, ranges=True, weight=2.0))
    return tuple(qs)


def _close(a, b):
    return np.allclose(as_vector(a), as_vector(b), rtol=1e-12, atol=0)


def test_default_reprs_are_unchanged_and_a_weight_shows_only_when_set():
    # the dataclass repr these query sets had before weights (part of the digests that key the noise)
    assert repr(QuerySet("a")) == (
        "QuerySet(name='a', kind='count', domain_size=1, matrix=None, ranges=False, pmw_iterations=0)"
    )
    assert repr(QuerySet("a", weight=1)) == repr(QuerySet("a"))
    assert repr(QuerySet("a", weight=3.0)).endswith("pmw_iterations=0, weight=3.0)")
    demo = parse_config(copy.deepcopy(DEMO))
    explicit = copy.deepcopy(DEMO)
    explicit["queries"][0]["weight"] = 1
    assert parse_config(explicit).release_digest() == demo.release_digest()
    assert parse_config(explicit).queries[0].legacy_repr() == demo.queries[0].legacy_repr()
    assert "weight" not in demo.queries[0].legacy_repr()
    weighted = copy.deepcopy(DEMO)
    weighted["queries"][0]["weight"] = 3
    assert parse_config(weighted).release_digest() != demo.release_digest()  # a new release: its own noise


def test_equal_weights_split_exactly_as_before():
    """Without weights every share is the float 1 / k (and an auto part's its count / k) as before weights."""
    for k in (1, 2, 3, 7):
        assert weighted_shares([QuerySet(f"q{i}") for i in range(k)]) == (1.0 / k,) * k
    pmw = QuerySet("r", "pmw", domain_size=4, ranges=True)
    config = DynamicConfig(_queries((1, 1, 1)) + (pmw,), PureDP(1))
    assert [p.share for p in plan(config)] == [3 / 4, 1 / 4]


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: type(b).__name__)
def test_the_shares_sum_to_the_budget_for_every_budget_kind(budget):
    config = DynamicConfig(_queries((3, 1, 1), pmw=True), budget)
    parts = AutoRelease.parts_of(config, AutoOptions())
    assert [p.share for p, *_ in parts] == [5 / 7, 2 / 7]
    # the parts' budgets compose (sequentially) to the configured one: eps, rho and delta are split linearly
    assert _close(compose_sequential([sub.budget for _, _, sub, _ in parts]), budget)
    core = AutoRelease(config, end_tick=8, every_ticks=1)
    net = core.parts[0]
    shares = net.counter_budgets()
    # within the additive part: the query sets' shares of its ledger (its currency: zCDP for Gaussian noise)
    assert _close(compose_sequential([b for b, _ in shares]), net.ledger_cap(net.config))
    cap = as_vector(net.ledger_cap(net.config))[0]  # eps, or rho
    assert [as_vector(b)[0] for b, _ in shares] == pytest.approx([cap * 3 / 5, cap / 5, cap / 5], rel=1e-12)


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: type(b).__name__)
def test_the_ledger_charges_follow_the_weights_and_never_exceed_the_budget(budget):
    """Run the additive release to its end (every counter spends its whole share by then): each query set's
    scope holds its weight's share of the ledger, and the spend (stated for the unit) is the configured budget."""
    config = DynamicConfig(_queries((3, 1, 1)), budget)
    core = AutoRelease(config, end_tick=16, every_ticks=1)
    core.run_to_end(NoiseSource(bytes(range(32))))
    net = core.parts[0]
    spent = [as_vector(net.ledger.root.child(f"q{i}").total)[0] for i in range(3)]
    cap = as_vector(net.ledger_cap(net.config))[0]
    assert spent == pytest.approx([cap * 3 / 5, cap / 5, cap / 5], rel=1e-12)
    assert sum(spent) <= cap * (1 + 1e-12)
    # the whole spend: the configured budget in the ledger's currency ((eps, delta) with Gaussian noise: the tight
    # Gaussian account's rho, issue 31; else the zCDP it calibrates to)
    assert _close(core.spent, AutoRelease.ledger_cap(config))


def test_weights_three_one_one_give_the_count_five_ninths_of_the_equal_bound():
    """Laplace noise scales as 1 / eps: the count's share goes from 1/3 to 3/5, its bound (and sd) to 5/9 of the
    equal split's (the discrete Laplace lattice rounds a bound up to an integer count: within 1; its variance is
    within 1% of the continuous law's)."""
    at = dict(end_tick=1152, every_ticks=1)
    ticks = [1, 576, 1152]

    def bounds(weights):
        config = DynamicConfig(_queries(weights), PureDP(1.0))
        fs = forecast(AutoRelease, config, AutoOptions(), ticks, **at)
        return {f.tick: f for f in fs if f.query == "active"}

    equal, weighted = bounds((1, 1, 1)), bounds((3, 1, 1))
    for t in ticks:
        assert weighted[t].error_bound == pytest.approx(equal[t].error_bound * 5 / 9, abs=1.0)
        assert weighted[t].sd == pytest.approx(equal[t].sd * 5 / 9, rel=0.01)  # discrete Laplace: nearly linear


def test_a_weight_must_be_positive_and_only_mechanisms_that_split_by_weight_take_one():
    for bad, msg in ((0, "must be > 0"), (-1, "must be > 0"), ("x", "must be a number"), (1e9, "must be between")):
        raw = copy.deepcopy(DEMO)
        raw["queries"][0]["weight"] = bad
        with pytest.raises(ConfigError, match=f"queries\\[0\\].weight: {msg}"):
            parse_config(raw)
    raw = copy.deepcopy(DEMO)
    raw["queries"][1]["weight"] = 2
    raw["mechanism"] = {"kind": "fully_dynamic"}
    with pytest.raises(ConfigError, match=r"queries\[1\].weight: mechanism.kind fully_dynamic splits its budget"):
        check_mechanism(parse_config(raw))  # (load_config runs it)
    raw["mechanism"] = {"kind": "net_change"}
    check_mechanism(parse_config(raw))
    assert parse_config(raw).dynamic_config().queries[1].weight == 2.0
    with pytest.raises(ValueError, match="weight must be a positive finite number"):
        QuerySet("a", weight=math.inf)
    # auto's fully_dynamic part splits its share its own way: unequal weights there are refused
    config = DynamicConfig(
        (QuerySet("a", "pmw", domain_size=4, ranges=True), QuerySet("b", "pmw", domain_size=4, ranges=True, weight=2)),
        PureDP(1),
    )
    with pytest.raises(ValueError, match="weight: fully_dynamic splits its share"):
        AutoRelease.check_settings(config, AutoOptions(), end_tick=8)


def test_the_plan_summary_and_manifest_line_show_the_weights():
    raw = copy.deepcopy(DEMO)
    raw["queries"][0]["weight"] = 3
    cfg = parse_config(raw)
    (line,) = mechanism_plan(cfg)  # the summary's and the manifest's mechanisms line
    assert "weights: active 3 (60%), by_carrier 1 (20%), total_amount 1 (20%) of the budget" in line
    assert release_manifest(cfg, release_identity(cfg))["mechanism_plan"] == [line]
    (line,) = mechanism_plan(parse_config(copy.deepcopy(DEMO)))
    assert "weights" not in line  # unchanged without weights
