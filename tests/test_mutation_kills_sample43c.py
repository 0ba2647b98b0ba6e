"""Tests written for the survivors of the mutation round of session 43, group c (``transforms/core/continual/``,
``families/``, ``selection/``; ``benchmarks/mutation_fast.py``, seed 20261127, 30 mutants a module). Each asserts a
property of the module (released values and their fields, the accounting, a stated bound, a configuration the user
asked for), never a pinned value, and names in a comment the mutant it kills (checked with ``python -m
benchmarks.mutation_fast confirm NAME TEST``: passes without the mutant, fails with it). Fast: in memory, no Beam."""

from __future__ import annotations

import math

import numpy as np
import pytest

from transforms.core import MECHANISMS, ZCDP, ApproxDP, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.continual.baselines import ContinualCountOptions
from transforms.core.continual.net_change import NetChangeRelease
from transforms.core.families.changelog import HDCROptions, folds
from transforms.core.families.growing import base as growing_base
from transforms.core.families.growing import pmwg as pmwg_mod
from transforms.core.families.growing.base import CHUNK, GrowthTracker
from transforms.core.families.growing.black_box import scheduler_weight
from transforms.core.families.growing.pmwg import OnlinePMW
from transforms.core.families.local_dp import RROptions
from transforms.core.families.rr_client import AtMostK, RRClient, SurveyDesign
from transforms.core.foundation.accounting import Ledger, as_vector
from transforms.core.foundation.accounting.units import PrivacyUnit
from transforms.core.foundation.bounds import NoiseProfile
from transforms.core.foundation.noise import as_ratio_up
from transforms.core.selection import SelectionParams
from transforms.core.selection.candidate import key_coords, select_coords, svt_coords
from transforms.core.selection.release import KeyContext
from transforms.core.static.linear import LATTICE_BITS

KEY = bytes(range(32))
_UNIT = 2.0**-LATTICE_BITS  # PMWG's lattice unit (docs/growing.md: 2^-20 lattice units)
_DELTA = 2**LATTICE_BITS  # a row with entries in [0, 1] moves by at most this many lattice units


# kills transforms.core.continual.segmented.xǁSegmentedReleaseǁ_closes__mutmut_21 (the period ending just before a
# close is not released before it: released after it, from the new close's answer and under its segment number)
@pytest.mark.parametrize("name", ["insertion_only", "fully_dynamic"])
def test_a_segmented_period_answer_is_the_latest_close_at_or_before_its_tick(name):
    """A period every tick, noise on, a gap in the data (the partitioner closes at its public deadlines inside the
    gap, several closes in one call): every answer names the segments closed at or before its tick, and between
    closes carries the estimate of the latest close (post-processing of a released answer, never a later one)."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS[name].core_cls(cfg, stream="s", end_tick=40, every_ticks=1)
    closes: list[int] = []
    advance = core.partitioner.advance  # every close comes out of advance (observe calls it too)

    def spy(tick, noise):
        out = advance(tick, noise)
        closes.extend(out)
        return out

    core.partitioner.advance = spy
    noise = NoiseSource(KEY)
    answers = []
    for t in (1, 2, 30):
        answers += core.process_tick(t, [Update("insert", f"e{t}_{i}", (0,)) for i in range(3)], noise).answers
    for res in core.run_to_end(noise):
        answers += res.answers
    assert [a.tick for a in answers] == list(range(1, 41))
    assert len([c for c in closes if c > 4]) >= 1  # a close inside the gap, after a period end not yet released
    by_tick = {a.tick: a for a in answers}
    for a in answers:
        before = [c for c in closes if c <= a.tick]
        assert a.segment == len(before), (a.tick, a.segment, closes)
        if before:  # the fresh answer of the latest close (every close tick is a period end here)
            np.testing.assert_array_equal(a.estimate, by_tick[before[-1]].estimate)


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_24 (the used-up phase's answer, the public
# histogram's, divided by the lattice unit instead of multiplied)
def test_pmwg_answers_from_the_public_histogram_once_the_phases_rounds_are_used_up():
    """One round a phase: a far-off query ends it hard (a noisy answer); the phase's later queries get the public
    histogram's answer ``n_hat * <row, y>`` (to the 2^-20 lattice) with the size bound they are given, and no
    charge (post-processing of released values)."""
    led = Ledger(PureDP(1e9), keep_records=False)
    p = OnlinePMW(
        3, PureDP(1.0), decay=1.0, alpha=0.05, rate=0.0, n0=100, hard_per_phase=1, coords=("t",), scope=led.root
    )
    noise = NoiseSource(KEY)
    p.mix(150.0)
    hist = np.array([150, 0, 0])
    _, _, hard = p.answer(np.array([1.0, 0.0, 0.0]), hist, 0.05, noise, 777.0)
    assert hard and not p.open
    spent = led.spent
    for row in (np.array([1.0, 0.0, 0.0]), np.array([0.5, 0.25, 1.0])):
        est, bound, hard = p.answer(row, hist, 0.05, noise, 777.0)
        assert not hard and bound == 777.0
        assert abs(est - p.n_hat * float(row @ p.y)) <= _UNIT, (est, p.n_hat * float(row @ p.y))
    assert led.spent == spent


# kills transforms.core.continual.baselines.xǁContinualCountReleaseǁplanned_cost__mutmut_27 (a counter charged at a
# sensitivity ratio other than 1 planned at sensitivity None)
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_net_change_under_an_entry_unit_charges_what_it_plans_at_the_units_sensitivity(budget):
    """An entry unit of 3 updates: each counter is calibrated to its share over its multiplier and charged at that
    multiplier (a ratio other than 1). Every ledger record costs what ``planned_cost`` states at its coordinates, and
    the spend stays within the cap."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = NetChangeRelease(DynamicConfig(q, budget, unit=PrivacyUnit.entry(3)), stream="s", end_tick=12, every_ticks=1)
    assert all(ratio != 1.0 for _, ratio in core.counter_budgets())
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 13):
        ups = [Update("insert", f"e{t}", (0, t % 3))]
        if t % 2:
            ups.append(Update("delete", f"e{t - 1}", (0, (t - 1) % 3)))
        core.process_tick(t, ups if t > 1 else ups[:1], noise)
    assert core.ledger.records
    for rec in core.ledger.records:
        plan = as_vector(core.planned_cost(rec.coordinates))
        assert plan == pytest.approx(as_vector(rec.cost), rel=1e-12), rec.coordinates
    assert all(s <= c * (1 + 1e-12) for s, c in zip(as_vector(core.spent), as_vector(budget), strict=True))


# kills transforms.core.families.changelog.folds.x_hdcr_fold__mutmut_1 (the default leaf width W of 2 ticks: the
# time-bounded fold, the entry's group size, about halved)
@pytest.mark.parametrize("k,b", [(None, 7), (3, 7), (2, None), (None, 0)])
def test_hdcr_fold_defaults_to_leaves_of_one_tick_like_its_layers_and_the_dcr(k, b):
    """The fold (how many released nodes one entry can touch: its group size) of an HDCR with the default W is the
    fold at W = 1 tick, layer by layer (``hdcr_layer_folds``' default), and a one-layer HDCR is the DCR (W = 1)."""
    for h, c in ((1, 2), (3, 2), (2, 4)):
        assert folds.hdcr_fold(h, c, k, b) == folds.hdcr_fold(h, c, k, b, 1) == sum(folds.hdcr_layer_folds(h, c, k, b))
    assert folds.hdcr_fold(1, 2, k, b) == folds.dcr_fold(k, b)
    if b is not None:  # Thm 4.3 at W = 1: ceil(B / c^i) + 1 per layer (k not smaller)
        assert folds.hdcr_fold(3, 2, None, b) == sum(-(-b // 2**i) + 1 for i in range(3))


class _Owner:
    """What a growth tracker calls back: the epoch threshold (public), the closes (recorded)."""

    finished = False

    def __init__(self, theta: int):
        self.theta, self.closes = theta, []

    def _threshold(self, e, total_hat):
        return self.theta

    def _before_close(self, t, noise):
        pass

    def _after_close(self, t, released, noise):
        self.closes.append(t)


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁadvance__mutmut_14 (after a chunk of 2^20 ticks without a
# halt, the next draw starts two ticks before the chunk's end instead of just after it: chunks overlap)
@pytest.mark.parametrize("noisy", [False, True])
def test_growth_tracker_chunks_tile_the_ticks_without_overlap(noisy):
    """A threshold far above the count: no epoch closes, and each fresh draw of the skip covers the CHUNK ticks just
    after the previous chunk (the geometric law is memoryless only if no tick is drawn twice)."""
    noise = NoiseSource(KEY) if noisy else NoiseSource.disabled()
    owner = _Owner(10**9)
    tracker = GrowthTracker(0.5, PureDP(0.5), coords=("g",), scope=Ledger(PureDP(1e9)).root)
    tracker.advance(0, noise, owner)
    assert (tracker.next_close, tracker.chunk_end) == (CHUNK, True)
    for m in range(1, 4):
        tracker.advance(m * CHUNK, noise, owner)
        assert (tracker.next_close, tracker.chunk_end) == ((m + 1) * CHUNK, True)
    assert owner.closes == []


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁthreshold_scale__mutmut_2 (the epoch's threshold noise
# DLap(5 / eps) for DLap(4 / eps): the sparse vector spends less than its half of the charge)
def test_growth_tracker_noise_spends_exactly_its_charge_half_on_the_test_half_on_the_count(monkeypatch):
    """The scales the tracker actually draws with, per epoch: the sparse vector (threshold ``b1``, per-tick test
    ``b2``, sensitivity 1) costs ``1/b1 + 2/b2`` and the released count ``1/b3``; each is half of the epsilon charged
    for the epoch (docs/growing.md: ``eps_s = eps / 2``), so together exactly the charge (no more: private; no less:
    no noise the budget did not buy)."""
    scales: dict[str, set[float]] = {"threshold": set(), "count": set(), "ticks": set()}
    dlap, geo = growing_base.discrete_laplace, growing_base.geometric_capped
    noise = NoiseSource(KEY)
    made, label = noise.stream, {}

    def stream(*coords):  # each stream labelled by its last name coordinate: threshold, count, ticks
        out = made(*coords)
        label[id(out)] = next(c for c in reversed(coords) if isinstance(c, str))
        return out

    def spy_dlap(stream, scale, n):
        scales[label[id(stream)]].add(float(scale))
        return dlap(stream, scale, n)

    def spy_geo(stream, k0, scale, cap):
        scales[label[id(stream)]].add(float(scale))
        return geo(stream, k0, scale, cap)

    monkeypatch.setattr(noise, "stream", stream)

    monkeypatch.setattr(growing_base, "discrete_laplace", spy_dlap)
    monkeypatch.setattr(growing_base, "geometric_capped", spy_geo)
    eps = 0.8
    led = Ledger(PureDP(1e9), keep_records=True)
    owner = _Owner(3)
    tracker = GrowthTracker(eps, PureDP(eps), coords=("g",), scope=led.root)
    for t in range(1, 60):
        tracker.observe(t, 2, noise, owner)
    assert len(owner.closes) >= 2 and all(r.cost == PureDP(eps) for r in led.records)
    (b1,), (b2,), (b3,) = scales["threshold"], scales["ticks"], scales["count"]
    assert 1 / b1 + 2 / b2 == pytest.approx(eps / 2, rel=1e-12)
    assert 1 / b3 == pytest.approx(eps / 2, rel=1e-12)


# kills transforms.core.families.growing.pmwg.x__rows__mutmut_3 (a count query set over a domain of several cells
# read as all its ranges: d (d + 1) / 2 answers instead of the one total)
def test_pmwg_noise_off_answers_a_count_over_several_cells_with_the_one_total():
    core = MECHANISMS["pmwg"].core_cls(
        DynamicConfig((QuerySet("n", "count", domain_size=3),), PureDP(1.0)), stream="s", end_tick=12
    )
    total, answered = 0, 0
    for t in range(1, 13):
        ups = [Update("insert", f"e{t}_{i}", ((t + i) % 3,)) for i in range(t % 3 + 1)]
        total += len(ups)
        for a in core.process_tick(t, ups, NoiseSource.disabled()).answers:
            np.testing.assert_array_equal(a.estimate, [total])
            answered += 1
    assert answered


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁ_start__mutmut_35 (the epoch's threshold noise drawn at
# (..., "growth", e, "THRESHOLD"): not the documented coordinate, so a replay or a restored state of an earlier
# version draws other noise)
def test_growth_tracker_draws_only_at_its_documented_coordinates(monkeypatch):
    """docs/growing.md: every noise coordinate of the tracker is ``(stream, "growth", e, threshold | ticks, k |
    count)``, each drawn once (coordinates are the replay contract: the same key and coordinates, the same noise)."""
    noise = NoiseSource(KEY)
    made, drawn = noise.stream, []

    def stream(*coords):
        drawn.append(coords)
        return made(*coords)

    monkeypatch.setattr(noise, "stream", stream)
    owner = _Owner(3)
    tracker = GrowthTracker(0.8, PureDP(0.8), coords=("s",), scope=Ledger(PureDP(1e9)).root)
    for t in range(1, 40):
        tracker.observe(t, 2, noise, owner)
    assert len(owner.closes) >= 2 and len(set(drawn)) == len(drawn)
    for c in drawn:
        assert c[:2] == ("s", "growth") and isinstance(c[2], int) and c[2] >= 1, c
        assert c[3:] in (("threshold",), ("count",)) or (c[3] == "ticks" and isinstance(c[4], int) and len(c) == 5), c
    epochs = {c[2] for c in drawn}
    assert all(("s", "growth", e, "threshold") in drawn for e in epochs)
    assert all(("s", "growth", e, "count") in drawn for e in epochs if e <= len(owner.closes))


# kills transforms.core.selection.candidate.x_key_coords__mutmut_4 (an open histogram's (stream, cell) pair drawn
# under the marker "CELL": not the documented coordinates, so a replay or a restore by another version draws other
# noise)
def test_open_key_coordinates_are_the_documented_marker_then_the_pair_and_never_coincide():
    """docs/open_keys.md: a pair's noise is drawn at the marker ``"cell"`` then the stream and the cell; a stream key
    is its one string. Distinct keys (pairs, or strings, even the string "cell") never share a coordinate."""
    pairs = [("s", "a"), ("s", "b"), ("t", "a"), ("cell", "s")]
    for stream, cell in pairs:
        assert key_coords((stream, cell)) == ("cell", stream, cell)
        assert select_coords((stream, cell), 2, 5) == ("open_keys", "select", "cell", stream, cell, 2, 5)
        assert svt_coords((stream, cell)) == ("open_keys", "svt", "cell", stream, cell, "threshold")
    strings = ["a", "cell", "s"]
    assert [key_coords(k) for k in strings] == [(k,) for k in strings]
    keys = pairs + strings
    for make in (lambda k: select_coords(k, 1, 3), lambda k: svt_coords(k), lambda k: svt_coords(k, 4)):
        assert len({make(k) for k in keys}) == len(keys)


# kills transforms.core.selection.params.xǁSelectionParamsǁlevel_weight__mutmut_6 (the unbounded tree's level weights
# 2 / ((l + 1)(l + 2)): they sum to 2, each key's selection counter spends twice its share) and _7 ((l + 2) / (l + 1)
# for 1 / ((l + 1)(l + 2)): every level more than the whole share)
@pytest.mark.parametrize("horizon", [None, 100])
@pytest.mark.parametrize("budget", [PureDP(1.0), ApproxDP(1.0, 1e-6)], ids=["laplace", "gaussian"])
def test_a_keys_selection_tree_spends_at_most_its_key_share_over_all_levels(budget, horizon):
    """The tree test: one person moves one node per level of a key's tree (L1 and L2^2 sensitivity 2). The nodes'
    costs, from the scales actually used (``node_param``: eps = 2 / b, or rho = 2 / (2 sigma^2)), summed over every
    level, are within ``eps_key`` (``rho_key``): all of it over a horizon's levels, and over 64 levels of the unbounded
    tree all but the tail 1 / 65 of its weights (sum 1 over all levels)."""
    p = SelectionParams(budget, 3, horizon=horizon, test="tree")
    levels = p.levels or 64
    laplace = isinstance(budget, PureDP)
    spent = sum(2 / p.node_param(lvl) if laplace else 2 / (2 * p.node_param(lvl)) for lvl in range(levels))
    share = p.key_share
    assert spent <= share * (1 + 1e-12)
    assert spent >= share * (1 - (0 if horizon else 1 / (levels + 1))) * (1 - 1e-9)


# kills transforms.core.continual.segmented.xǁSegmentedReleaseǁ_apply__mutmut_12 (before a batch, the partitioner
# advanced to tick - 2 only: a close due at tick - 1 happens after the batch is absorbed, its answer counting them)
@pytest.mark.parametrize("every_ticks", [None, 1])
@pytest.mark.parametrize("name", ["insertion_only", "fully_dynamic"])
def test_a_segmented_close_just_before_a_batch_never_counts_the_batch(name, every_ticks):
    """Noise off (answers exact), batches right after the partitioner's public deadlines (ticks 2, 4, 16): every
    answer, at a close or a period end, is the true count at its own tick, never with the next tick's updates."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS[name].core_cls(cfg, stream="s", end_tick=20, every_ticks=every_ticks)
    noise, count, truth, answers = NoiseSource.disabled(), 0, {}, []
    batches = {1: 1, 3: 2, 5: 4, 17: 3}
    for t in range(1, 21):
        count += batches.get(t, 0)
        truth[t] = count
    for t, n in batches.items():
        answers += core.process_tick(t, [Update("insert", f"e{t}_{i}", (0,)) for i in range(n)], noise).answers
    for res in core.run_to_end(noise):
        answers += res.answers
    assert {a.tick for a in answers} >= {4, 16}  # the deadline closes answer
    for a in answers:  # without periods the last close may fall after the end (no update after tick 17)
        assert float(a.estimate[0]) == truth.get(a.tick, count), (a.tick, a.estimate)


# kills transforms.core.continual.baselines.xǁContinualCountReleaseǁcounter_budgets__mutmut_10 (each of the k counters
# given 2 delta / k: the counters' deltas add up to twice the budget's)
@pytest.mark.parametrize(
    "budget,profile",
    [(ApproxDP(1.0, 1e-6), "paper"), (PureDP(1.0), "paper"), (ApproxDP(1.0, 1e-6), "tuned"), (ZCDP(0.5), "tuned")],
)
def test_continual_count_splits_the_ledger_budget_exactly_over_its_counters(budget, profile):
    """k query sets: k counter budgets that add up to the ledger's budget, every component (eps, delta or rho); the
    run spends within it and ends at its end (not refused by the ledger)."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS["continual_count"].core_cls(DynamicConfig(q, budget, profile=profile), stream="s", end_tick=8)
    shares = core.counter_budgets()
    assert all(ratio == 1.0 for _, ratio in shares)
    total = [sum(c) for c in zip(*(as_vector(b) for b, _ in shares), strict=True)]
    assert total == pytest.approx(list(as_vector(core.ledger.budget)), rel=1e-12)
    noise = NoiseSource(KEY)
    for t in range(1, 9):
        core.process_tick(t, [Update("insert", f"e{t}", (0, t % 3))], noise)
    core.run_to_end(noise)
    assert core.finished_reason == "ended"
    assert all(s <= c * (1 + 1e-12) for s, c in zip(as_vector(core.spent), as_vector(core.ledger.budget), strict=True))


# kills transforms.core.continual.baselines.xǁContinualCountReleaseǁ_step__mutmut_57 (the horizon reached, finished
# with reason None: the release is not finished and its finite counter runs past the horizon it is calibrated for)
@pytest.mark.parametrize("counter", ["binary_tree", "naive_prefix"])
def test_a_finite_counter_stops_at_its_horizon_for_good(counter):
    """A finite counter's noise covers ``horizon`` ticks: after the last one the release is finished (reason
    ``horizon_reached``, once), releases nothing more, spends nothing more and has no wake."""
    core = MECHANISMS["continual_count"].core_cls(
        DynamicConfig((QuerySet("n", "count"),), PureDP(1.0)), stream="s", options=ContinualCountOptions(counter, 4)
    )
    noise, ticks, events = NoiseSource(KEY), [], []
    for t in range(1, 9):
        res = core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
        ticks += [a.tick for a in res.answers]
        events += res.events
        if t == 4:
            spent = core.spent
    assert ticks == [1, 2, 3, 4] and events == [(4, "horizon_reached")]
    assert core.finished and core.finished_reason == "horizon_reached" and core.next_wake is None
    assert core.spent == spent


# kills transforms.core.continual.baselines.xǁTwoStreamBaselineǁ_close__mutmut_22 (the deletion stream's bound taken
# at 2 beta: the stated bound holds with probability 1 - 2.5 beta only)
@pytest.mark.parametrize("profile", ["paper", "tuned"])
def test_two_stream_bound_is_the_union_of_both_streams_at_half_beta(profile):
    """An answer is ``ins - del``: it is within ``B_ins + B_del`` whenever each stream is within its own bound, so
    with probability ``1 - beta`` when each stream's bound is its (1 - beta/2) bound. The two counters share one
    structure (the same budget, the same closes): the stated bound is twice either stream's (1 - beta/2) bound."""
    cfg = DynamicConfig(
        (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0), profile=profile
    )
    core = MECHANISMS["two_stream_baseline"].core_cls(cfg, stream="s")
    noise, answered = NoiseSource(KEY), 0
    for t in range(1, 30):
        ups = [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(3)]
        ups += [Update("delete", f"e{t - 1}_0", (0, 0))] if t > 1 else []
        for a in core.process_tick(t, ups, noise).answers:
            k = [q.name for q in cfg.queries].index(a.query)
            half = cfg.beta / 2
            assert core.ins[k].error_bound(half) == core.dels[k].error_bound(half)
            assert a.error_bound == pytest.approx(2 * core.ins[k].error_bound(half), rel=1e-12)
            answered += 1
    assert answered >= 4


# kills transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁsize_bound__mutmut_7 (a node's size bound from a
# released size below 1 taken as if it were 1: the stated PMW bound built on it inflated)
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["pure", "zcdp"])
def test_a_nodes_size_bound_moves_one_for_one_with_its_released_size_above_zero(budget):
    """``size_bound(beta)`` is the node's released size ``n_hat`` (public), never taken below 0, plus the
    (1 - beta) tail of its noise: the same tail at every ``n_hat``, so the bound moves exactly with ``n_hat`` above 0
    and stays put below it."""
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig((QuerySet("n", "count"),), budget), stream="s")
    noise = NoiseSource(KEY)
    for t in range(1, 30):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0,)) for i in range(3)], noise)
    nodes = [n for n in core.nodes.values() if n.n_hat_profile is not None]
    assert nodes
    for node in nodes:
        node.n_hat = 0.0
        base = node.size_bound(0.05)
        assert base == node.n_hat_profile.tail_bound(0.05)
        for v in (-3.0, -0.5):
            node.n_hat = v
            assert node.size_bound(0.05) == base
        for v in (0.25, 0.5, 1.0, 7.0):
            node.n_hat = v
            assert node.size_bound(0.05) == pytest.approx(base + v, rel=1e-12)


# kills transforms.core.families.changelog.folds.x_variance_weight__mutmut_6 (the Laplace and Gaussian weights swapped:
# the branching and direct-or-derived choices scored with the other noise's growth)
@pytest.mark.parametrize("kind,budget", [("laplace", PureDP(0.01)), ("gaussian", ZCDP(0.5))])
def test_variance_weight_is_how_a_nodes_noise_variance_grows_with_its_fold(kind, budget):
    """``variance_weight(kind, F)`` is a node's noise variance at an F-fold split of its budget, up to a common
    factor: measured on the static mechanism's own calibration at ``budget / F`` (Laplace: scale ~ F, so F^2, to
    1e-4 at scales of 100 and more, where the discrete law's variance is 2 b^2 to that precision; Gaussian: F)."""
    mech = QuerySet("n", "count").mechanism(kind)
    one = mech.noise_profile(budget).variance()
    for f in (2, 3, 5, 8):
        ratio = mech.noise_profile(budget.part(1 / f, 1 / f)).variance() / one
        assert folds.variance_weight(kind, f) / folds.variance_weight(kind, 1) == pytest.approx(ratio, rel=1e-4)


# kills transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_start__mutmut_1 (the refusal of query sets
# that are not additive skipped: a PMW query set summed over nodes as if it were linear)
@pytest.mark.parametrize("name", ["dcr", "hdcr", "swcr"])
def test_changelog_releases_refuse_query_sets_that_are_not_additive(name):
    """The changelog releases sum node releases: only count, histogram and linear query sets add up over disjoint
    parts; a PMW query set is refused at construction, naming its kind."""
    q = (QuerySet("n", "count"), QuerySet("r", "pmw", domain_size=4, ranges=True))
    with pytest.raises(ValueError, match=r"answers count, histogram and linear query sets, not \['pmw'\]"):
        MECHANISMS[name].core_cls(DynamicConfig(q, PureDP(1.0)), stream="s", end_tick=16)


def _dlap_exceeds(scale: float, a: float) -> float:
    """P(|Z| > a) for Z discrete Laplace of the (rounded-up) scale the sampler uses: 2 q^(floor(a)+1) / (1 + q)."""
    q = math.exp(-1 / float(as_ratio_up(scale)))
    return 2 * q ** (math.floor(a) + 1) / (1 + q)


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁclosed_bound__mutmut_9 (the bound on the released total's
# error 0 once an epoch has closed)
@pytest.mark.parametrize("beta", [0.2, 0.05, 1e-3])
def test_growth_tracker_closed_bound_covers_a_closed_epochs_count_noise(beta):
    """Before any close the released total is exact (bound 0); after one close it is off by one count noise
    ``DLap(2 / eps)``, and the stated (1 - beta) bound must hold for that law: P(|Z| > bound) <= beta, exactly."""
    tracker = GrowthTracker(0.8, PureDP(0.8), coords=("s",), scope=Ledger(PureDP(1e9)).root)
    owner, noise = _Owner(3), NoiseSource(KEY)
    assert tracker.closed_bound(beta) == 0.0
    t = 0
    while tracker.e < 2:
        t += 1
        tracker.observe(t, 2, noise, owner)
    bound = tracker.closed_bound(beta)
    assert _dlap_exceeds(tracker.count_scale, bound) <= beta, bound


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_149 (a hard answer's bound taken for a
# Laplace noise of scale 1, not of the answer's scale)
@pytest.mark.parametrize("beta", [0.2, 0.05, 1e-3])
def test_pmwg_hard_answers_bound_holds_for_its_noise(beta):
    """A hard query is answered with ``DLap(1 / eps_b)`` (an integer row), ``eps_b = eps_r / 2``: its stated (1 - beta)
    bound must hold for that law: P(|Z| > bound) <= beta, exactly."""
    led = Ledger(PureDP(1e9), keep_records=False)
    p = OnlinePMW(
        3, PureDP(1.0), decay=1.0, alpha=0.05, rate=0.0, n0=100, hard_per_phase=1, coords=("t",), scope=led.root
    )
    p.mix(150.0)
    _, bound, hard = p.answer(np.array([1.0, 0.0, 0.0]), np.array([150, 0, 0]), beta, NoiseSource(KEY), 777.0)
    assert hard
    assert _dlap_exceeds(1 / (p.eps_r / 2), bound) <= beta, bound


# kills transforms.core.families.growing.base.xǁGrowingReleaseǁ_answers__mutmut_3 (answers without their epoch number)
@pytest.mark.parametrize("name", ["bb_scheduler", "pmwg"])
def test_a_growing_releases_answers_name_the_epochs_closed_by_their_tick(name):
    q = (QuerySet("n", "count"),)
    core = MECHANISMS[name].core_cls(DynamicConfig(q, PureDP(1.0)), stream="s", end_tick=40, every_ticks=1)
    noise, closes, answers = NoiseSource(KEY), [], []
    for t in range(1, 41):
        res = core.process_tick(t, [Update("insert", f"e{t}_{i}", (0,)) for i in range(5)], noise)
        closes += res.closes
        answers += res.answers
    assert closes and [a.tick for a in answers] == list(range(1, 41))
    for a in answers:
        assert a.segment == sum(c <= a.tick for c in closes), (a.tick, a.segment, closes)


# kills transforms.core.selection.params.xǁSelectionParamsǁ__post_init____mutmut_26 (a selection share of 1 accepted:
# the answers left a zero budget)
@pytest.mark.parametrize("share", [0.0, 1.0, 1.5, -0.2])
def test_selection_share_must_leave_both_the_selection_and_the_answers_a_budget(share):
    with pytest.raises(ValueError, match=r"selection_share must be in \(0, 1\)"):
        SelectionParams(PureDP(1.0), 2, selection_share=share)
    ok = SelectionParams(PureDP(1.0), 2, selection_share=0.999)
    assert ok.answers_budget.epsilon > 0 and ok.counter_budget.epsilon > 0


# kills transforms.core.selection.release.xǁKeyContextǁ__init____mutmut_7 (a bound's failure probability of 1 or more
# accepted)
@pytest.mark.parametrize("beta", [0.0, 1.0, 1.5])
def test_a_key_context_refuses_a_failure_probability_outside_0_1(beta):
    params = SelectionParams(PureDP(1.0), 2)
    with pytest.raises(ValueError, match=r"beta must be in \(0, 1\)"):
        KeyContext(params, params.answers_budget, NoiseSource(KEY), beta=beta)


# kills transforms.core.continual.segmented.xǁSegmentedReleaseǁ_start__mutmut_13 (the partitioning built with its
# default beta 0.05, not the configured one: its thresholds and its stated failure probability differ from the
# configuration's)
@pytest.mark.parametrize("name", ["insertion_only", "fully_dynamic", "two_stream_baseline"])
@pytest.mark.parametrize("beta", [0.2, 0.01])
def test_the_partitioning_runs_at_the_configured_beta(name, beta):
    """ALGORITHMS.md §2: segment j's threshold is ``(7 / eps_p) ln(2 T_j / beta_j)``, ``beta_j = 6 beta / (pi^2 j^2)``,
    ``T_1 = 2``, with the configured beta (the release's stated failure probability) and the partitioning's eps_p."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), beta=beta)
    core = MECHANISMS[name].core_cls(cfg, stream="s")
    eps_p = cfg.split()[0]
    want = (7 / eps_p) * math.log(2 * 2 / (6 * beta / math.pi**2))
    assert core.partitioner.params.theta(1, 0) == pytest.approx(want, rel=1e-12)


# kills transforms.core.continual.baselines.xǁInsertionOnlyReleaseǁ_start__mutmut_10 (each of the k counters given k
# times the tree's delta, not 1 / k of it)
@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), PureDP(1.0)], ids=["approx", "pure"])
def test_insertion_only_charges_its_plan_and_stays_within_the_budget_over_several_query_sets(budget):
    """The paper profile (Laplace; an (eps, delta) budget keeps its delta in the ledger), two query sets: every
    ledger record costs what ``planned_cost`` states, the spend (eps and delta) is within the budget and the release
    ends at its end, not refused by the ledger."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS["insertion_only"].core_cls(
        DynamicConfig(q, budget, profile="paper"), stream="s", end_tick=20, emit_nodes=True
    )
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 21):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(2)], noise)
    core.run_to_end(noise)
    nodes = core.drain_node_outputs()
    assert core.finished_reason == "ended" and len(core.ledger.records) > 2
    for rec in core.ledger.records:
        plan = as_vector(core.planned_cost(rec.coordinates, nodes))
        assert plan == pytest.approx(as_vector(rec.cost), rel=1e-12), rec.coordinates
    assert all(s <= c * (1 + 1e-12) for s, c in zip(as_vector(core.spent), as_vector(budget), strict=True))


PLAN_CASES = [
    ("insertion_only", "paper", PureDP(1.0)),
    ("insertion_only", "tuned", ZCDP(0.5)),
    ("two_stream_baseline", "paper", ApproxDP(1.0, 1e-6)),
    ("fully_dynamic", "paper", PureDP(1.0)),
    ("fully_dynamic", "tuned", ZCDP(0.5)),
    ("fully_dynamic", "tight", PureDP(1.0)),
    ("continual_count", "tuned", PureDP(1.0)),
    ("net_change", "tuned", ZCDP(0.5)),
    ("dcr", "tuned", PureDP(1.0)),
    ("hdcr", "tuned", PureDP(1.0)),
    ("swcr", "tuned", PureDP(1.0)),
    ("bb_scheduler", "tuned", PureDP(1.0)),
    ("bb_improver", "tuned", PureDP(1.0)),
    ("pmwg", "tuned", PureDP(1.0)),
]


# the recheck of crash kills (issue 27: privacy mutants killed by an assertion): the planned-cost mutants of group c
# that make the plan refuse a coordinate it must state (ValueError "no planned release at ..."), e.g.
# segmented.planned_cost__mutmut_7 ("SVT"), growing.base.planned_cost__mutmut_3, _infinite_counter_cost__mutmut_7,
# fully_dynamic._planned_cost__mutmut_169, changelog.releases.planned_cost__mutmut_33,
# black_box._planned_weight__mutmut_6 and _planned_share__mutmut_6: here a refusal fails the property (pytest.fail),
# not the test by a crash
@pytest.mark.parametrize("name,profile,budget", PLAN_CASES, ids=[f"{n}-{p}" for n, p, _ in PLAN_CASES])
def test_every_charge_has_its_stated_plan(name, profile, budget):
    """Every ledger record of a run (partitioning, trees, counters, epochs, re-runs, layers) has a planned cost (its
    docs page's formulas, ``planned_cost``) at its coordinates, equal to what was charged."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    cfg = DynamicConfig(q, budget, profile=profile)
    core = MECHANISMS[name].core_cls(cfg, stream="s", end_tick=40, emit_nodes=True)
    core.ledger.keep_records = True
    noise = NoiseSource(KEY)
    for t in range(1, 41):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (i % 2, i % 3)) for i in range(3)], noise)
    core.run_to_end(noise)
    nodes = core.drain_node_outputs()
    assert core.ledger.records
    for rec in core.ledger.records:
        try:
            plan = core.planned_cost(rec.coordinates, nodes)
        except ValueError as e:
            pytest.fail(f"charged at {rec.coordinates} with no stated plan: {e}")
        assert as_vector(plan) == pytest.approx(as_vector(rec.cost), rel=1e-9), rec.coordinates


# kills transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁhalted_bound__mutmut_23 (a halted node's bound
# taken at beta / share_r, not beta share_r: the union over the rounds at which it can halt exceeds beta)
@pytest.mark.parametrize("rnd", [2, 3, 6])
def test_a_halted_nodes_bound_is_a_union_over_its_possible_halting_rounds(rnd):
    """A node halts at some round r >= 2 on the n_hat drawn then; its bound takes that n_hat's noise at
    ``beta 6 / (pi^2 (r - 1)^2)``, shares summing to 1 over r >= 2, so the bound fails with probability at most beta
    whatever the round (and it is never below the bound at beta itself)."""
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig((QuerySet("n", "count"),), PureDP(1.0)), stream="s")
    noise = NoiseSource(KEY)
    for t in range(1, 10):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
    node = next(iter(core.nodes.values()))
    law = NoiseProfile.single("laplace", 3.0)
    node.round, node.halt_nhat, node.halt_nhat_profile = rnd, 4.0, law
    share = 6 / (math.pi**2 * (rnd - 1) ** 2)
    assert sum(6 / (math.pi**2 * (r - 1) ** 2) for r in range(2, 10**4)) < 1
    for beta in (0.2, 0.05):
        assert node.halted_bound(beta) == pytest.approx(4.0 + law.tail_bound(beta * share), rel=1e-12)
        assert node.halted_bound(beta) >= 4.0 + law.tail_bound(beta)


# recheck (a crash kill made an assertion kill): transforms.core.continual.fully_dynamic_node.xǁFullyDynamicNodeǁ
# noise_profile__mutmut_1 (the static release's law and n_hat's swapped: it crashed where n_hat is absent, but under
# the paper profile, where every node draws n_hat, the bound silently took n_hat's smaller noise)
@pytest.mark.parametrize("profile", ["paper", "tuned", "tight"])
def test_a_nodes_noise_law_holds_its_static_releases_noise(profile):
    """The law the bound uses for query set k at a node is at least the noise its answer actually carries: the static
    release's (at its budget, ``mechanism.noise_profile``), or n_hat's where a count set reuses it (tight), plus any
    deletion counter's; with no counter, exactly that."""
    q = (QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3))
    core = MECHANISMS["fully_dynamic"].core_cls(DynamicConfig(q, PureDP(1.0), profile=profile), stream="s")
    noise = NoiseSource(KEY)
    for t in range(1, 30):
        core.process_tick(t, [Update("insert", f"e{t}_{i}", (0, i % 3)) for i in range(3)], noise)
    checked = 0
    for node in core.nodes.values():
        for k, mech in enumerate(core.mechanisms):
            b = node.static_budgets[k]
            own = node.n_hat_profile if b is None else mech.noise_profile(b)
            got = node.noise_profile(core, k).variance()
            assert got >= own.variance() * (1 - 1e-12), (node.index, k, got, own.variance())
            if not node.q_counters:
                assert got == pytest.approx(own.variance(), rel=1e-12)
                checked += 1
    assert checked


# recheck (crash kills made assertion kills):
# transforms.core.selection.params.xǁSelectionParamsǁcounter_budget__mutmut_12 (the tree test's counters given
# delta s 2, not delta s / 2) and event_delta__mutmut_10 (delta / share, not times): both were caught only by the
# ledger refusing the over-budget charge (BudgetExceededError)
@pytest.mark.parametrize("test", ["svt", "tree"])
@pytest.mark.parametrize("share", [0.3, 0.5, 0.8])
def test_the_selection_and_the_answers_split_the_open_key_budget_exactly(test, share):
    """Under (eps, delta): the selection's charge (its counters and delta_event) and the answers' budget add up to the
    configured budget, eps and delta each (the sparse-vector test's counters are pure: delta_event takes the whole
    selection delta; the tree test halves it between the Gaussian counters and the event)."""
    budget = ApproxDP(1.0, 1e-6)
    p = SelectionParams(budget, 3, selection_share=share, test=test)
    sel, ans = p.selection_cost, p.answers_budget
    assert sel.epsilon + ans.epsilon == pytest.approx(budget.epsilon, rel=1e-12)
    assert sel.delta + ans.delta == pytest.approx(budget.delta, rel=1e-12)
    assert p.event_delta == pytest.approx(budget.delta * share / (1 if test == "svt" else 2), rel=1e-12)


# kills transforms.core.families.changelog.folds.x_entry_sensitivity_ratio__mutmut_23 (a mechanism without a linear
# query matrix reaches an AttributeError instead of the refusal naming the query kinds the changelogs answer)
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_entry_sensitivity_ratio_refuses_a_mechanism_that_is_not_linear(noise):
    pmw = QuerySet("r", "pmw", domain_size=4, ranges=True).mechanism(noise)
    with pytest.raises(ValueError, match="answer count, histogram and linear query sets"):
        folds.entry_sensitivity_ratio(pmw)
    assert folds.entry_sensitivity_ratio(QuerySet("h", "histogram", domain_size=3).mechanism(noise)) > 1


# kills transforms.core.families.changelog.releases.xǁ_PrefixReleaseǁ_prune__mutmut_3 (the layer below the top never
# pruned: a prefix release's kept nodes grow with the horizon)
@pytest.mark.parametrize("c,h", [(2, 4), (3, 3)])
def test_an_hdcr_keeps_only_the_nodes_a_prefix_can_still_need(c, h):
    """A prefix is the top layer's running sum plus at most c - 1 closed nodes per lower layer, and a node is needed
    only until its parent closes: the kept nodes never exceed (c - 1)(h - 1) per query set, at any horizon."""
    core = MECHANISMS["hdcr"].core_cls(
        DynamicConfig((QuerySet("n", "count"),), PureDP(1.0)),
        stream="s",
        end_tick=200,
        options=HDCROptions(branching=c, height=h),
    )
    noise, most = NoiseSource(KEY), 0
    for t in range(1, 201):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
        most = max(most, len(core.nodes[0]))
    assert 0 < most <= (c - 1) * (h - 1)


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁ_draw_from__mutmut_34 (the skip's halting level
# theta_hat - c - 1 for theta_hat - c + 1: epochs close two insertions early, off the documented test)
def test_growth_tracker_skip_halts_exactly_when_the_documented_test_fires(monkeypatch):
    """The epoch closes at the first tick with ``c_t + Z_t >= theta + Z_0``, i.e. ``Z_t >= theta_hat + 1 - c_t``
    (``theta_hat = theta - 1 + Z_0``): the skip draws the first tick with ``Z_t`` at or above that level (the level
    it passes to ``geometric_capped``)."""
    calls = []
    geo = growing_base.geometric_capped
    tracker = GrowthTracker(0.8, PureDP(0.8), coords=("s",), scope=Ledger(PureDP(1e9)).root)

    def spy(stream, k0, scale, cap):
        calls.append((k0, tracker.theta_hat, tracker.count))
        return geo(stream, k0, scale, cap)

    monkeypatch.setattr(growing_base, "geometric_capped", spy)
    owner, noise = _Owner(5), NoiseSource(KEY)
    for t in range(1, 40):
        tracker.observe(t, 1, noise, owner)
    assert len(owner.closes) >= 2 and calls
    for k0, theta_hat, count in calls:
        assert k0 == theta_hat + 1 - count, (k0, theta_hat, count)


# kills transforms.core.families.growing.black_box.x_scheduler_weight__mutmut_1 (the default power 2: a caller without
# the budget's scale_power gets the rho weights under an eps budget)
@pytest.mark.parametrize("eta", [0.25, 1.0])
def test_scheduler_weights_default_to_the_eps_shares_and_sum_to_one(eta):
    """Re-run i's share of an eps budget is ``eta / (1 + eta)^(i + 1)`` (the default), of a rho budget (power 2, the
    budget's scale_power) ``((1 + eta)^2 - 1) / (1 + eta)^(2 (i + 1))``; either sums to 1 over i = 0, 1, ..."""
    for i in range(6):
        assert scheduler_weight(i, eta) == pytest.approx(eta / (1 + eta) ** (i + 1), rel=1e-12)
        assert scheduler_weight(i, eta, 2) == pytest.approx(((1 + eta) ** 2 - 1) / (1 + eta) ** (2 * i + 2), rel=1e-12)
    for power in (1, 2):
        assert math.fsum(scheduler_weight(i, eta, power) for i in range(400)) == pytest.approx(1.0, rel=1e-9)


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_99 (the hard answer's noise at eps_r / 3: a
# round spends less than it is charged, and the answer is noisier than the budget bought)
def test_a_pmwg_round_spends_exactly_its_charge_half_on_the_test_half_on_the_answer(monkeypatch):
    """docs/growing.md: a round's eps_r is half for the easy/hard test (threshold ``DLap(2 Delta / eps_a)``, test
    ``DLap(4 Delta / eps_a)``, ``eps_a = eps_r / 2``, sensitivity Delta lattice units) and half for the hard answer
    (``DLap(1 / eps_b)`` on an integer row, sensitivity 1): from the scales actually drawn with."""
    scales: dict[str, set[float]] = {}
    dlap = pmwg_mod.discrete_laplace
    noise = NoiseSource(KEY)
    made, label = noise.stream, {}

    def stream(*coords):
        out = made(*coords)
        label[id(out)] = coords[-1]
        return out

    def spy(st, scale, n):
        scales.setdefault(label[id(st)], set()).add(float(scale))
        return dlap(st, scale, n)

    monkeypatch.setattr(noise, "stream", stream)
    monkeypatch.setattr(pmwg_mod, "discrete_laplace", spy)
    p = OnlinePMW(
        3,
        PureDP(1.0),
        decay=1.0,
        alpha=0.05,
        rate=0.0,
        n0=100,
        hard_per_phase=1,
        coords=("t",),
        scope=Ledger(PureDP(1e9)).root,
    )
    p.mix(150.0)
    _, _, hard = p.answer(np.array([1.0, 0.0, 0.0]), np.array([150, 0, 0]), 0.05, noise, 777.0)
    assert hard
    (b_thr,), (b_test,), (b_ans,) = scales["threshold"], scales["test"], scales["answer"]
    assert _DELTA / b_thr + 2 * _DELTA / b_test == pytest.approx(p.eps_r / 2, rel=1e-12)
    assert 1 / b_ans == pytest.approx(p.eps_r / 2, rel=1e-12)


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁthreshold__mutmut_4 (T = alpha n_hat for (2 alpha / 3) n_hat:
# the potential argument of docs/growing.md needs a hard query's gap >= alpha / 3 at T - alpha / 3)
@pytest.mark.parametrize("alpha,n_hat", [(0.05, 150.0), (0.3, 1000.0)])
def test_pmwg_threshold_is_two_thirds_alpha_of_the_public_size(alpha, n_hat):
    p = OnlinePMW(
        3,
        PureDP(1.0),
        decay=1.0,
        alpha=alpha,
        rate=0.0,
        n0=100,
        hard_per_phase=1,
        coords=(),
        scope=Ledger(PureDP(1e9)).root,
    )
    p.mix(n_hat)
    assert p.threshold() == pytest.approx(2 * alpha * n_hat / 3, rel=1e-12)


# kills transforms.core.families.local_dp.xǁRROptionsǁ__post_init____mutmut_32 (an integer branching outside [2, 1000]
# accepted with hdcr aggregation)
@pytest.mark.parametrize("c", [1, 0, 1001])
def test_rr_options_refuse_a_branching_outside_2_to_1000(c):
    with pytest.raises(ValueError, match=r"branching must be an integer in \[2, 1000\]"):
        RROptions(aggregation="hdcr", layers=3, branching=c)
    assert RROptions(aggregation="hdcr", layers=3, branching=1000).num_branching == 1000


# kills transforms.core.families.rr_client.xǁRRClientǁreport__mutmut_29 (a client's charge recorded at ("layer", i,
# "XXnodeXX", node): not the node it pays for)
def test_an_rr_clients_ledger_charges_each_node_holding_a_mutation_once_at_its_coordinates():
    """Thm 5.1: twice the report cost for each node (per layer) that holds a mutation, recorded at ``("layer", i,
    "node", node)``, node ``(period - 1) // c^i + 1``: one record per such node, none for a node without one."""
    d = SurveyDesign.from_total(3, 6.0, 0.0, AtMostK(3), layers=2, branching=2)
    c = RRClient(d, randbits=lambda n: 0)
    for period, answer in ((1, 0), (2, 0), (3, 1), (4, 1), (5, 1), (6, 2)):
        c.report(period, answer)
    want = {("layer", i, "node", (t - 1) // 2**i + 1) for t in (1, 3, 6) for i in range(2)}
    got = [tuple(r.coordinates) for r in c.ledger.records]
    assert sorted(got) == sorted(want) and len(got) == len(set(got))
