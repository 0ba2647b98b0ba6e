"""Tests written for the crash-killed mutants of group d (``transforms/core/contribution/`` and
``transforms/core/selection/``) that the differential trace (``benchmarks/mutation_trace.py``, issue 27) showed
returning a wrong value without raising on some input, with no covering test failing by an assertion.

Each asserts a property of the module (a partition of the input into accepted and refused updates with a reason,
a sensitivity against the pattern that reaches it, a stated figure equal to the configuration), never a pinned
value, and names the mutant(s) it kills in its docstring; each was checked with ``python -m
benchmarks.mutation_fast confirm``: passes unmutated, fails on the mutant by an assertion (the mutant is its broken
twin). The judgements of every non-``raises`` mutant: ``benchmarks/mutation_trace_45d.py``. Fast: in memory, no
Beam."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from transforms.core.config import QuerySet
from transforms.core.contribution import (
    ContributionUnit,
    PersonBounder,
    PersonLimit,
    calibrated_budget,
    contribution_sensitivity,
)
from transforms.core.contribution import toeplitz as toeplitz_mod
from transforms.core.contribution.toeplitz import toeplitz_model
from transforms.core.contribution.trees import change_costs, change_mass
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP, TightGaussian, rho_for_approx
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource
from transforms.core.selection import KeyLimit, OpenKeyRelease, SelectionParams, answer_calibration

_REASONS = {"contribution_bounded", "unknown_entry"}


def test_person_bounder_returns_every_update_once_accepted_or_refused_with_its_reason():
    """``PersonBounder.bound_tick`` partitions a tick's ``(person, Update)`` pairs: every pair comes back exactly
    once, either accepted or as ``(pair, reason)`` with a reason the rule names (the dead letters the protocol and
    the open-key step report); the accepted ones are the admitted entries' updates.

    Kills ``bounding.xǁPersonBounderǁbound_tick__mutmut_31`` (a refused pair replaced by None: the dead letter
    loses its update and its reason)."""
    bounder = PersonBounder(PersonLimit(1))
    tick1 = [
        ("p1", Update("insert", "a", (0,))),
        ("p1", Update("insert", "b", (1,))),  # over p1's limit of one entry
        ("p2", Update("delete", "c", None)),  # an entry p2 never inserted
        ("p2", Update("insert", "d", (0,))),
    ]
    tick2 = [("p1", Update("upsert", "b", (0,))), ("p1", Update("delete", "a", None))]
    for tick, pairs in ((1, tick1), (2, tick2)):
        accepted, refused = bounder.bound_tick(tick, pairs)
        assert all(type(r) is tuple and len(r) == 2 for r in refused), refused
        assert all(reason in _REASONS for _, reason in refused)
        back = [id(p) for p in accepted] + [id(p) for p, _ in refused]
        assert sorted(back) == sorted(id(p) for p in pairs)
    # the refusals name the rule: p1's second entry is bounded (then and later), p2's delete is unknown
    acc1, ref1 = PersonBounder(PersonLimit(1)).bound_tick(1, tick1)
    assert {(p[1].entry_id, r) for p, r in ref1} == {("b", "contribution_bounded"), ("c", "unknown_entry")}
    assert [p[1].entry_id for p in acc1] == ["a", "d"]


@pytest.mark.parametrize("m", [1.0, 1.5, 3.0, 7.25])
@pytest.mark.parametrize(
    "share, noise",
    [
        (TightGaussian(0.3), "gaussian"),
        (ZCDP(0.3), "gaussian"),
        (ApproxDP(1.0, 1e-6), "gaussian"),
        (PureDP(0.8), "laplace"),
        (ApproxDP(0.8, 1e-6), "laplace"),
    ],
)
def test_calibrated_budget_keeps_the_accounts_kind_and_gives_at_most_the_share(share, noise, m):
    """``calibrated_budget(share, m, noise)``: a counter built with it and whose unit changes it ``m`` updates' worth
    spends at most ``share``, and no less than the proof allows (rounded down by at most 1e-15 relative): Gaussian
    ``rho / m^2`` (an (eps, delta) share through ``rho_for_approx``), Laplace ``eps / m`` (its delta unchanged). A
    tight Gaussian account's share stays a ``TightGaussian`` (its counters calibrate ``sigma^2 >= Delta^2 / (2 rho) +
    DISCRETE_TAU2``, more than a zCDP budget of the same rho gives: a plain ZCDP there is less noise than the tight
    account states).

    Kills ``sensitivity.x_calibrated_budget__mutmut_20`` (the tight share turned into a plain ZCDP)."""
    out = calibrated_budget(share, m, noise)
    if noise == "gaussian":
        assert type(out) is (TightGaussian if isinstance(share, TightGaussian) else ZCDP)
        rho = share.rho if isinstance(share, ZCDP) else rho_for_approx(share)
        spent = out.rho * m * m
        assert spent <= rho * (1 + 1e-15) and spent >= rho * (1 - 1e-14)
    else:
        assert type(out) is type(share)
        assert out.epsilon * m <= share.epsilon * (1 + 1e-15) and out.epsilon * m >= share.epsilon * (1 - 1e-14)
        assert getattr(out, "delta", 0.0) == getattr(share, "delta", 0.0)


def _exhaustive_chain(model, closed: int, open_: bool) -> int:
    """``chain(closed, open)`` by brute force: every ``0 = s_0 <= s_1 <= ... <= s_c <= T`` (module docstring of
    ``toeplitz``), in exact integers."""
    t, k = int(model.horizon), [int(v) for v in model.kappa]

    def S(n: int) -> int:
        return sum(v * v for v in k[: max(n, 0)])

    def F(n: int, delta: int) -> int:
        if delta <= 0:
            return 0
        return S(delta) + sum((k[j] - k[j + delta]) ** 2 for j in range(max(n, 0)))

    return max(
        sum(F(t - s, s - p) for p, s in zip((0, *pos), pos)) + (S(t - pos[-1]) if open_ else 0)
        for pos in itertools.combinations_with_replacement(range(t + 1), closed)
    )


# the first case is where the mutant returns a looser bound without raising: first, so that its failure is the one
# ``confirm`` reports
@pytest.mark.parametrize("t, closed, open_", [(17, 2, True), (17, 1, True), (17, 2, False), (20, 1, False)])
def test_chain_bound_past_the_initial_intervals_is_the_exhaustive_chain(t, closed, open_):
    """On horizons above ``INITIAL_INTERVALS`` (16) the branch and bound halves its position intervals; its bound is
    certified, ``lower <= truth <= upper <= lower (1 + rtol)``, and on these short horizons it converges to the
    exhaustive maximum (``exact``): a wrong split of an interval (cuts outside it) leaves the search with a looser
    bound it cannot certify, a larger sensitivity multiplier and more noise than the proof needs.

    Kills ``toeplitz.x__split__mutmut_17`` (the cuts of ``(lo, hi)`` at ``lo + (hi + lo + 1) j / n``: at T = 17,
    two closed visits and an open one, an upper bound 9.5% above the truth, not exact)."""
    model = toeplitz_model("sqrt_factorization", t)
    want = _exhaustive_chain(model, closed, open_)
    toeplitz_mod.chain_bound.cache_clear()
    cb = toeplitz_mod.chain_bound(model, closed, open_)
    assert cb.lower <= want <= cb.upper
    assert cb.upper <= cb.lower * (1 + toeplitz_mod.DEFAULT_RTOL) and cb.exact


@pytest.mark.parametrize(
    "unit",
    [
        ContributionUnit.update(),
        ContributionUnit.entry(3),
        ContributionUnit.person(2, 2),
        ContributionUnit.person(2, 3, 1, 4),
    ],
    ids=["update", "entry", "person", "person-window"],
)
@pytest.mark.parametrize("counter, noise", [("sqrt_factorization", "gaussian"), ("kary_tree", "laplace")])
def test_a_sensitivity_states_the_group_privacy_it_replaces(unit, counter, noise):
    """A ``Sensitivity`` carries, for comparison in plans and manifests, ``group_size``: the updates the unit accounts
    for under group privacy (``unit.group_size(end_tick)``: 1, ``2k - 1``, ``L (2k - 1)`` per window), and its
    ``entries``; its multiplier is never above what group privacy would cost under a zCDP or pure budget.

    Kills ``sensitivity.x_contribution_sensitivity__mutmut_317`` (``group_size`` None)."""
    s = contribution_sensitivity(QuerySet("q", "count"), counter, noise, unit, horizon=16, end_tick=16)
    assert s.group_size == unit.group_size(16)
    assert s.entries == unit.entries(16)
    assert 1.0 <= s.multiplier <= s.group_size


@pytest.mark.parametrize("k, lifetimes", [(1, 1), (2, 1), (3, 2), (5, 3), (6, 2)])
def test_change_mass_of_counts_and_histograms_is_their_number_of_changes(k, lifetimes):
    """``change_mass`` (the L1 mass one entry moves through every level of an interval-release counter): a count's
    change is 1 per alive toggle, so ``min(k, 2 * lifetimes)`` (insertions and deletions alternate); a histogram of
    unit columns moves 1 at its insertion and 2 at each upsert into another cell, so ``2k - 1`` (insert then ``k - 1``
    moves, group privacy's figure), whatever the insertions allowed.

    Kills ``trees.x__mass__mutmut_34`` (the search's default ``(+1, 0)`` instead of ``(-1, 0)``: every first step of
    cost 1 is dropped, a count's mass 0 and its multiplier 0)."""
    count = np.array([[1]], dtype=np.int64)
    hist = np.eye(4, dtype=np.int64)
    assert change_mass(count, k, lifetimes)[0] == min(k, 2 * lifetimes)
    assert change_mass(hist, k, lifetimes)[0] == 2 * k - 1


def test_change_costs_are_the_largest_column_norms_and_column_differences():
    """``change_costs(columns, norm)`` is ``(insert, move)``: the largest norm of a column (an insertion or a deletion
    of that item) and of the difference of two columns (an upsert), ``l1`` the sum of absolute values, ``l2sq`` the sum
    of squares, exact ints; checked against the definitions on columns with entries above 1 (where the two norms
    differ).

    Kills ``trees.x_change_costs__mutmut_8`` (``norm != "l1"``: the L1 norm returned for ``l2sq``)."""
    cols = np.array([[3, -1, 0], [2, 2, 5]], dtype=np.int64)
    d = cols.shape[1]
    l1 = lambda v: int(np.abs(v).sum())  # noqa: E731
    l2sq = lambda v: int((v * v).sum())  # noqa: E731
    for norm, f in (("l2sq", l2sq), ("l1", l1)):
        ins = max(f(cols[:, x]) for x in range(d))
        move = max(f(cols[:, x] - cols[:, y]) for x in range(d) for y in range(d))
        assert change_costs(cols, norm) == (ins, move), norm


@pytest.mark.parametrize("test", ["svt", "tree"])
@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), PureDP(1.0)], ids=["approx", "pure"])
@pytest.mark.parametrize("share", [0.25, 0.5, 0.8])
def test_the_selection_and_the_answers_spend_exactly_the_stated_guarantee(budget, share, test):
    """An open-key release charges its ledger ``selection_cost`` and ``answers_budget``; together they are exactly its
    stated guarantee (``ledger_budget``: the budget, with ``delta_event = failure`` under pure eps), the selection
    spending its share: epsilon ``s eps`` and, under (eps, delta), delta ``s delta`` (the tree test: half for its
    Gaussian nodes, half for the event; the sparse vector: all for the event), tolerances of the float products.

    Kills ``params.xǁSelectionParamsǁcounter_budget__mutmut_12`` (the tree nodes' delta ``2 s delta`` for ``s delta /
    2``: less noise than the share allows) and ``params.xǁSelectionParamsǁevent_delta__mutmut_10`` (``delta / s``)."""
    p = SelectionParams(budget, 2, selection_share=share, test=test)
    sel, ans, cap = p.selection_cost, p.answers_budget, p.ledger_budget
    assert math.isclose(sel.epsilon + ans.epsilon, cap.epsilon, rel_tol=1e-12)
    assert math.isclose(sel.epsilon, share * budget.epsilon, rel_tol=1e-12)
    ans_delta = getattr(ans, "delta", 0.0)
    assert math.isclose(sel.delta + ans_delta, cap.delta, rel_tol=1e-12)
    if isinstance(budget, ApproxDP):
        assert math.isclose(sel.delta, share * budget.delta, rel_tol=1e-12)
        assert math.isclose(p.event_delta, share * budget.delta / (2 if test == "tree" else 1), rel_tol=1e-12)
    else:
        assert sel.delta == p.event_delta == p.failure
    assert p.guarantee() == cap


def test_the_unbounded_selection_trees_level_weights_are_positive_and_sum_to_at_most_one():
    """Without a horizon the selection tree has unboundedly many levels, level ``l`` spending ``w_l`` of the key's
    share: every ``w_l`` is above 0 and their sum over any number of levels is at most 1 (``1 / ((l + 1)(l + 2))``
    telescopes to ``1 - 1 / (L + 1)``), so a key's counter spends at most its share for ever; with a horizon the
    ``levels`` weights are equal and sum to 1.

    Kills ``params.xǁSelectionParamsǁlevel_weight__mutmut_10`` (``(l + 1)(l - 2)``: negative weights at levels 0 and
    1, and from level 3 on weights 5 times too large: less noise than the share allows)."""
    p = SelectionParams(ApproxDP(1.0, 1e-6), 1, test="tree")
    total = 0.0
    for level in range(40):
        w = p.level_weight(level)
        assert w > 0, level
        total += w
        assert total <= 1.0 + 1e-12, level
    h = SelectionParams(ApproxDP(1.0, 1e-6), 1, test="tree", horizon=20)
    ws = [h.level_weight(level) for level in range(h.levels)]
    assert len(set(ws)) == 1 and math.isclose(sum(ws), 1.0, rel_tol=1e-12)


@pytest.mark.parametrize("horizon", [16, None])
@pytest.mark.parametrize("kkl", [(1, 1, 1), (2, 4, 2), (1, 2, 3), (3, 1, 1)], ids=lambda v: "K{}-L{}-k{}".format(*v))
@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), PureDP(1.0)], ids=["approx", "pure"])
def test_the_answers_calibration_spends_the_answers_share_at_its_stated_multiplier(budget, kkl, horizon):
    """``answer_calibration``: every route states ``group = L (2k - 1)`` (what group privacy would cost, for the
    plans), a multiplier at most that, and a budget that spends exactly the answers' share at that multiplier:
    Gaussian ``rho m^2 = rho_for_approx((1 - s) B)`` (``m`` the whole answers' multiplier, ``sqrt(K)`` times the
    per-key one on the sequential route), Laplace ``eps m = (1 - s) eps``, rounded down by at most 1e-15 relative.

    Kills ``answers.x_answer_calibration__mutmut_57`` (the joint L1 route's ``group`` None)."""
    K, L, k = kkl
    params, limit = SelectionParams(budget, K, horizon=horizon), KeyLimit(K, L, k)
    c = answer_calibration(params, limit)
    assert c.group == limit.group == L * (2 * k - 1)
    assert c.route in ("sequential", "joint_l1", "group") and 1.0 <= c.multiplier <= c.group
    share = params.answers_budget
    if isinstance(budget, ApproxDP):
        spent, want = c.budget.rho * c.multiplier**2, rho_for_approx(share)
    else:
        spent, want = c.budget.epsilon * c.multiplier, share.epsilon
    assert want * (1 - 1e-12) <= spent <= want * (1 + 1e-12)


@pytest.mark.parametrize("horizon", [1, 2, 7, 32])
def test_over_a_horizon_the_period_deltas_are_equal_and_spend_the_key_delta(horizon):
    """The tree test's threshold at period ``p`` holds a key nobody has below it but with probability ``delta_p``;
    over a horizon of ``H`` periods ``delta_p = delta_key / H`` (module docstring of ``params``), equal at every
    period and summing to ``delta_key`` (what the event's delta is split into), each in ``(0, delta_key]``; without
    a horizon ``delta_key / (p (p + 1))``, whose partial sums stay below ``delta_key``.

    Kills ``params.xǁSelectionParamsǁperiod_delta__mutmut_1`` (the condition inverted: over a horizon the
    unbounded split, the thresholds of other periods than the stated ones)."""
    p = SelectionParams(ApproxDP(1.0, 1e-6), 2, test="tree", horizon=horizon)
    ds = [p.period_delta(t) for t in range(1, horizon + 1)]
    assert len(set(ds)) == 1 and 0 < ds[0] <= p.key_delta
    assert math.isclose(sum(ds), p.key_delta, rel_tol=1e-12)
    u = SelectionParams(ApproxDP(1.0, 1e-6), 2, test="tree")
    assert sum(u.period_delta(t) for t in range(1, 200)) < u.key_delta


def test_an_open_key_release_with_noise_off_numbers_its_periods_and_answers_the_truth():
    """With the noise off (and a fixed threshold, tests only) an open-key release is exact: its releases are numbered
    1, 2, ... up to the horizon (then it refuses), a key is selected at the first period its live contributors
    exceed the threshold, and every selected key's answer is its live entries, including the entries it had before
    its selection (the counter's first batch) and after deletions; the candidates' state counts contributors and
    entries exactly.

    Kills ``release.xǁOpenKeyReleaseǁ__init____mutmut_49`` (the first period numbered 2: every threshold, node and
    horizon check one period late)."""
    params = SelectionParams(ApproxDP(1.0, 1e-6), 2, horizon=4, threshold=1.5, test="tree")
    rel = OpenKeyRelease(params, KeyLimit(2, 3, 3), NoiseSource.disabled())
    ins = lambda person, e, key: (person, Update("insert", e, (key,)))  # noqa: E731
    r1 = rel.step([ins("p1", "e1", "a"), ins("p1", "e2", "a"), ins("p2", "e3", "b")])
    assert r1.period == 1 and r1.selected == () and r1.answers == {}
    assert rel.candidates["a"]["live"] == 1 and rel.candidates["a"]["entries"] == 2
    r2 = rel.step([ins("p2", "e4", "a"), ins("p3", "e5", "a")])
    assert r2.period == 2 and r2.selected == ("a",) and r2.answers == {"a": 4}
    r3 = rel.step([("p1", Update("delete", "e1", None)), ins("p3", "e6", "a"), ins("p3", "e7", "a")])
    assert r3.period == 3 and r3.answers == {"a": 5} == rel.truth()
    r4 = rel.step([])
    assert r4.period == 4 and r4.answers == {"a": 5}
    with pytest.raises(ValueError, match="horizon"):
        rel.step([])


@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), PureDP(1.0)], ids=["approx", "pure"])
def test_the_sparse_vector_test_states_discrete_laplace_noise_under_every_budget(budget):
    """The sparse-vector test draws discrete Laplace noise (threshold and query noise, ``svt_scales``) under pure eps
    and under (eps, delta) alike, and ``selection_noise`` (published in the plan's text and choosing the tree nodes'
    sampler) says so; the tree test's noise is the answers' (discrete Gaussian under (eps, delta)).

    Kills ``params.xǁSelectionParamsǁselection_noise__mutmut_1`` and ``__mutmut_5`` (the sparse vector stated as
    Gaussian under (eps, delta): a wrong published noise; the key share then raises)."""
    svt = SelectionParams(budget, 2, test="svt")
    tree = SelectionParams(budget, 2, test="tree")
    assert svt.selection_noise == "laplace"
    assert tree.selection_noise == tree.noise_kind == ("gaussian" if isinstance(budget, ApproxDP) else "laplace")
