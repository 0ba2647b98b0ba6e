"""Property tests for the crash-killed mutants of group c (``transforms/core/continual/``, ``static/``, ``config.py``)
that the differential trace (``benchmarks/mutation_trace.py``, issue 27) showed returning or leaving a wrong value
where they do not raise: each test asserts a property of the release (the published schedule and exact prefix counts
with the noise off, the budget split a profile documents, the stated bound, ...), never a pinned value, and names in
its docstring the mutant(s) it kills by an assertion (checked with ``python -m benchmarks.mutation_fast confirm
NAME TEST``: passes without the mutant, fails with it by an assertion). The verdicts are in
``benchmarks/mutation_trace_45c.py``. Fast: in memory, no Beam."""

from __future__ import annotations

import math

import numpy as np
import pytest

from transforms.core import MECHANISMS, ZCDP, ApproxDP, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.continual.consistency import Consistency, make_consistent, project_to_simplex
from transforms.core.counters import COUNTERS
from transforms.core.forecast import forecast
from transforms.core.foundation.accounting import PrivacyUnit, as_vector
from transforms.core.foundation.outputs import Answer

KEY = bytes(range(32))

QUERIES = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))


def _periods(lo: int, hi: int, every: int | None, end: int | None) -> list[int]:
    """The period ends in (lo, hi]: every tick, or the multiples of ``every`` and the end (if any)."""
    p = every or 1
    return [t for t in range(lo + 1, hi + 1) if t % p == 0 or t == end]


# ---------------------------------------------------------------------------------------------------------------------
# config.py
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["tuned", "tight"])
@pytest.mark.parametrize("budget", [PureDP(10.0), ZCDP(5.0)], ids=["pure", "zcdp"])
def test_a_tuned_familys_leaf_releases_its_static_answers_only_with_the_whole_round_budget(profile, budget):
    """``BudgetProfile.leaf_static_only`` (tuned, tight): a level-1 node is never queried after it is built, so it
    releases only ``M_Q`` with its whole round budget (``docs/fully_dynamic.md``): every charge at a leaf (an odd
    node) is a static release, one per query set, and they add up to the node's round budget.

    Kills ``config.xǁBudgetProfileǁtuned__mutmut_24`` (``leaf_static_only=None``: leaves also release ``n_hat`` and
    run counters, the round budget split four ways)."""
    cfg = DynamicConfig(QUERIES, budget, profile=profile)
    core = MECHANISMS["fully_dynamic"].core_cls(cfg, stream="s", end_tick=16)
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 17):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(40)], noise)
    leaves = [r for r in core.ledger.records if r.coordinates[1:3] == ("tree", "node") and r.coordinates[3] % 2 == 1]
    assert leaves
    by_node: dict = {}
    for r in leaves:
        assert r.coordinates[6] == "static", r.coordinates
        by_node.setdefault(r.coordinates[3], []).append(r)
    node_budget = core.tree_budget.part(
        cfg.budget_profile.level_split.weight(1), cfg.budget_profile.level_split.weight(1)
    )
    round1 = node_budget.part(cfg.budget_profile.round_split.weight(1), cfg.budget_profile.round_split.weight(1))
    for recs in by_node.values():
        assert sorted(r.coordinates[7] for r in recs) == sorted(q.name for q in QUERIES)
        total = np.sum([as_vector(r.cost) for r in recs], axis=0)
        assert total == pytest.approx(as_vector(round1), rel=1e-9)


@pytest.mark.parametrize(
    "budget", [PureDP(1.0), ZCDP(0.5), ApproxDP(1.0, 1e-6), ApproxDP(1.0, 0.0)], ids=["pure", "zcdp", "approx", "eps0"]
)
def test_the_tight_profile_is_of_the_tuned_family_its_noise_and_horizon_are_tuneds(budget):
    """``tight`` is ``tuned`` tightened (``BudgetProfile.tight``): the same noise for every budget kind (Gaussian under
    zCDP and (eps, delta > 0) budgets, ``DynamicConfig.tuned_family``), the same currency in the ledger, and the
    declared horizon of segments that only the tuned family takes.

    Kills ``config.xǁDynamicConfigǁtuned_family__mutmut_4`` (``tight`` out of the tuned family: Laplace noise under an
    (eps, delta > 0) budget, PMW deletion counters of another kind)."""
    tuned = DynamicConfig(QUERIES, budget, profile="tuned")
    tight = DynamicConfig(QUERIES, budget, profile="tight")
    assert tight.tuned_family and tuned.tuned_family
    gaussian = isinstance(budget, ZCDP) or (isinstance(budget, ApproxDP) and budget.delta > 0)
    assert tight.noise_kind == tuned.noise_kind == ("gaussian" if gaussian else "laplace")
    assert tight.ledger_budget == tuned.ledger_budget
    assert DynamicConfig(QUERIES, budget, profile="tight", max_segments=8).max_segments == 8


# ---------------------------------------------------------------------------------------------------------------------
# continual/baselines.py: the continual counter over ticks
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("counter", ["binary_tree", "honaker", "naive_prefix", "kary_tree"])
def test_the_keyword_form_of_continual_count_runs_the_counter_it_names(counter):
    """``ContinualCountRelease(config, counter=NAME, horizon=H)`` (the earlier keyword form) runs counter NAME over H
    timestamps: its options, every query set's counter and the bound each answer states are NAME's.

    Kills ``baselines.xǁContinualCountReleaseǁ__init____mutmut_10`` (``counter and "infinite_honaker"``: every named
    counter replaced by ``infinite_honaker``)."""
    cfg = DynamicConfig(QUERIES, PureDP(1.0))
    cls = MECHANISMS["continual_count"].core_cls
    core = cls(cfg, stream="s", end_tick=16, counter=counter, horizon=16)
    assert (core.options.counter, core.options.horizon) == (counter, 16)
    assert {type(c) for c in core.counters} == {COUNTERS[counter].cls}
    same = cls(cfg, stream="s", end_tick=16, options=cls.options_cls(counter, 16))
    noise = NoiseSource(KEY)
    a = core.process_tick(1, [Update("insert", "a", (0, 1))], noise).answers
    b = same.process_tick(1, [Update("insert", "a", (0, 1))], noise).answers
    assert [(x.query, x.error_bound) for x in a] == [(x.query, x.error_bound) for x in b]


@pytest.mark.parametrize("counter", ["binary_tree", "honaker", "naive_increments", "infinite_honaker", "kary_tree"])
@pytest.mark.parametrize("every", [3, None])
@pytest.mark.parametrize("end", [None, 20], ids=["no-end", "end"])
def test_a_continual_count_answers_each_period_end_once_with_the_exact_prefix_count(counter, every, end):
    """With the noise off, ``continual_count`` answers at every period end (every tick, or every ``every_ticks`` and the
    end), whatever the gaps in the data, each period once, in order, numbered 1, 2, ...: each answer carries its
    period end, the exact count (and histogram) of the insertions up to it, a finite stated bound at the configured
    beta. Checked on each call's own result (a wrong answer returned, not only a later crash).

    Kills ``baselines.xǁContinualCountReleaseǁ_advance__mutmut_10`` (the ticks of a gap released with tick ``None``),
    ``_apply__mutmut_34`` (a period end released with tick ``None``), ``_step__mutmut_19`` (the data of a tick that has
    data dropped: ``hists is not None`` inverted), ``_step__mutmut_12`` (estimate ``None``) and ``_start__mutmut_28``
    (the clock started at tick 1: a run whose first data comes later never releases tick 1)."""
    last_tick = 20
    cfg = DynamicConfig(QUERIES, PureDP(1.0), beta=0.1)
    core = MECHANISMS["continual_count"].core_cls(
        cfg, stream="s", end_tick=end, every_ticks=every, counter=counter, horizon=32
    )
    noise = NoiseSource(KEY, disabled=True)
    data = {2: 2, 3: 1, 5: 3, 6: 1, 7: 2, 11: 1, 12: 4, 16: 1, 20: 2}  # tick -> insertions: none at tick 1, gaps
    cells = np.zeros(3)
    by_tick: dict[int, np.ndarray] = {}
    for t in range(1, last_tick + 3):
        for i in range(data.get(t, 0)):
            cells[(t + i) % 3] += 1
        by_tick[t] = cells.copy()
    last, closes = 0, 0

    def check(results, upto):
        nonlocal last, closes
        due = _periods(last, upto, every, end)
        answers = [a for r in results for a in r.answers]
        assert [a.tick for a in answers] == [t for t in due for _ in QUERIES]
        for i, t in enumerate(due):
            n, h = answers[2 * i : 2 * i + 2]
            assert (n.query, h.query) == ("n", "h")
            assert n.segment == h.segment == closes + i + 1
            # Honaker's estimator is a float average of exact sums: its rounding only
            assert np.asarray(n.estimate, dtype=float) == pytest.approx([by_tick[t].sum()], rel=1e-12)
            assert np.asarray(h.estimate, dtype=float) == pytest.approx(by_tick[t], rel=1e-12, abs=1e-12)
            assert all(math.isfinite(a.error_bound) and a.beta == 0.1 for a in (n, h))
        closes += len(due)
        last = max(last, upto)

    for t in sorted(data):
        ups = [Update("insert", f"e{t}_{i}", (0, (t + i) % 3)) for i in range(data[t])]
        check([core.process_tick(t, ups, noise)], t)
    final = end or last_tick + 2  # without an end: periods go on, two ticks more
    check(core.run_to_end(noise) if end else [core.advance(final, noise)], final)
    assert closes == len(_periods(0, final, every, end))


@pytest.mark.parametrize("name", ["continual_count", "net_change", "auto"])
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_the_forecast_states_at_each_planned_tick_the_bound_the_run_states(name, budget):
    """The plan's bounds (``forecast``: the release run on no data with ``bound_ticks`` set, ``pipelines.plan``) are
    the bounds the run's answers carry at the same ticks: finite, equal up to float rounding.

    Kills ``baselines.xǁContinualCountReleaseǁ_step__mutmut_8`` (``or`` made ``and``: with ``bound_ticks`` set, every
    planned bound is NaN; a run without it raises)."""
    spec = MECHANISMS[name]
    cfg = DynamicConfig(QUERIES, budget)
    opts = spec.options(**spec.checks.options)
    ticks = [1, 4, 9, 16]
    planned = {(f.tick, f.query): f.error_bound for f in forecast(spec.core_cls, cfg, opts, ticks, end_tick=16)}
    assert set(planned) == {(t, q.name) for t in ticks for q in QUERIES}
    assert all(math.isfinite(b) and b > 0 for b in planned.values()), planned
    core = spec.core_cls(cfg, stream="s", end_tick=16, options=opts)
    noise = NoiseSource(KEY)
    stated = {}
    for t in range(1, 17):
        for a in core.process_tick(t, [Update("insert", f"e{t}", (0, t % 3))], noise).answers:
            stated[(a.tick, a.query)] = a.error_bound
    for key, bound in planned.items():
        assert bound == pytest.approx(stated[key], rel=1e-12), key


# ---------------------------------------------------------------------------------------------------------------------
# continual/consistency.py (post-processing of released answers)
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("round_answers", [False, True])
@pytest.mark.parametrize("threshold_bound", [False, True])
def test_a_paired_count_stays_a_count_the_sum_of_its_histogram_with_a_finite_bound(round_answers, threshold_bound):
    """``make_consistent`` with a (histogram, count) pair: the count comes back a one-value estimate equal to the sum
    of the projected histogram, and both carry a finite, non-negative bound (post-processing never drops the stated
    bound: a missing bound would read as "no bound").

    Kills ``consistency.x_make_consistent__mutmut_55`` (the count's estimate ``None``) and ``__mutmut_56`` (its bound
    ``None``)."""
    spent = PureDP(0.25)
    answers = [
        Answer("s", 3, 7, "n", np.asarray([5.0]), 1.5, 0.05, spent),
        Answer("s", 3, 7, "h", np.asarray([3.0, -1.0, 2.5]), 1.0, 0.05, spent),
    ]
    n, h = make_consistent(answers, Consistency((("h", "n"),), round_answers, threshold_bound=threshold_bound))
    assert n.estimate is not None and np.asarray(n.estimate, dtype=float).shape == (1,)
    assert float(np.sum(h.estimate)) == pytest.approx(float(np.asarray(n.estimate, dtype=float)[0]), abs=1e-9)
    for a in (n, h):
        assert isinstance(a.error_bound, float) and math.isfinite(a.error_bound) and a.error_bound >= 0


@pytest.mark.parametrize("x", [[3.0], [3.0, -1.0, 2.5]], ids=["one", "three"])
@pytest.mark.parametrize("total", [0.0, 4.0])
def test_a_projection_onto_the_simplex_keeps_the_shape_and_sums_to_the_total(total, x):
    """``project_to_simplex(x, total)``: cells >= 0, one per cell of ``x``, summing to ``total``.

    Kills ``consistency.x_project_to_simplex__mutmut_1`` (``x`` dropped: a 0-d array for ``total = 0``)."""
    p = project_to_simplex(x, total)
    assert np.shape(p) == (len(x),)
    assert np.all(p >= 0) and float(np.sum(p)) == pytest.approx(total, abs=1e-12)


# ---------------------------------------------------------------------------------------------------------------------
# continual/net_change.py
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", [PrivacyUnit.update(), PrivacyUnit.entry(2)], ids=["update", "entry"])
@pytest.mark.parametrize("weights", [(1.0, 1.0), (3.0, 1.0)], ids=["equal", "weighted"])
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_net_changes_plan_states_each_sets_weight_share_and_calibration_as_the_release_runs_them(budget, weights, unit):
    """The plan ``net_change`` states (printed by ``pipelines.plan``, recorded in the manifest): each query set's
    configured weight, shares of the budget in proportion to them summing to the whole, and each set's calibration
    for the unit: empty at update level, else the multipliers the release's counters are charged at
    (``counter_budgets``).

    Kills ``net_change.xǁNetChangeReleaseǁplan__mutmut_11`` (calibrations ``None``: the plan silently states none)
    and ``plan__mutmut_22`` (weights ``None``: no share stated)."""
    q = (QuerySet("n", "count", weight=weights[0]), QuerySet("h", "histogram", domain_size=3, weight=weights[1]))
    cfg = DynamicConfig(q, budget, unit=unit)
    cls = MECHANISMS["net_change"].core_cls
    (entry,) = cls.plan(cfg, cls.options_cls(), end_tick=24, every_ticks=1)
    assert entry.weights == weights
    shares = entry.query_shares()
    assert shares is not None and sum(shares) == pytest.approx(entry.share, rel=1e-12)
    assert [s / entry.share for s in shares] == pytest.approx([w / sum(weights) for w in weights], rel=1e-12)
    assert isinstance(entry.calibrations, tuple)
    used = [m for _, m in cls(cfg, stream="s", end_tick=24).counter_budgets()]
    if unit.kind == "update":
        assert entry.calibrations == () and used == [1.0, 1.0]
    else:
        assert [c.multiplier for c in entry.calibrations] == pytest.approx(used, rel=1e-12)
        assert all(c.text() in entry.text() for c in entry.calibrations)


# ---------------------------------------------------------------------------------------------------------------------
# static/linear.py
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [ZCDP(0.5), ApproxDP(1.0, 1e-6)], ids=["zcdp", "approx"])
@pytest.mark.parametrize("name", ["net_change", "continual_count"])
def test_a_gaussian_counters_answers_state_a_positive_bound_with_the_noise_on(name, budget):
    """With the noise on, every answer of a Gaussian counter states a finite bound > 0: its noise (discrete Gaussian,
    sigma^2 >= 1 here) is non-zero with probability far above beta, so a bound of 0 is exceeded more often than beta
    (a false claim).

    Kills ``linear.xǁ_AdditiveMechanismǁ__init____mutmut_4`` (the black box's noise kind ``None``: the noise is
    drawn, but the counter's law reads as none and every stated bound is 0)."""
    spec = MECHANISMS[name]
    core = spec.core_cls(DynamicConfig(QUERIES, budget), stream="s", end_tick=8, options=spec.options())
    noise = NoiseSource(KEY)
    bounds = []
    for t in range(1, 9):
        res = core.process_tick(t, [Update("insert", f"e{t}", (0, t % 3))], noise)
        bounds += [a.error_bound for a in res.answers]
    assert len(bounds) == 8 * len(QUERIES)
    assert all(math.isfinite(b) and b > 0 for b in bounds), bounds


@pytest.mark.parametrize("budget", [ApproxDP(4.0, 1e-6), ZCDP(2.0)], ids=["approx", "zcdp"])
def test_the_two_stream_baselines_answers_are_finite_numbers_within_their_bounds_scale(budget):
    """Every answer of ``two_stream_baseline`` (noise on, periodic, no end) is a finite number for each cell, as its
    counters' releases are (a missing release value must not become NaN in an answer).

    Kills ``linear.xǁ_AdditiveMechanismǁrelease__mutmut_52`` (a release's values ``None``: where it does not raise,
    the answers are NaN)."""
    core = MECHANISMS["two_stream_baseline"].core_cls(DynamicConfig(QUERIES, budget), stream="s", every_ticks=4)
    noise = NoiseSource(KEY)
    answers = []
    for t in range(1, 25):
        ups = [Update("insert", f"e{t}", (0, t % 3))] + ([Update("delete", f"e{t - 4}")] if t > 6 and t % 2 else [])
        answers += core.process_tick(t, ups, noise).answers
    answers += core.advance(28, noise).answers
    assert answers
    for a in answers:
        est = np.asarray(a.estimate, dtype=float)
        assert est.shape == ((1,) if a.query == "n" else (3,)) and np.all(np.isfinite(est)), (a.tick, a.query, est)
        assert math.isfinite(a.error_bound) and a.error_bound > 0
