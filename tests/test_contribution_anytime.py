"""Sensitivity by contribution through ``anytime_sqrt`` (the counter of runs without an end): the
entry and person units get the BLT's multipliers, ``sqrt`` of the changes (Lemma A1,
``docs/contribution.md``), instead of group privacy.

Checked here: the model is the counter's own calibration and encoder, noise off, across the merged
start's hand-over (step ``MERGE_T1``); the encoder meets Lemma A1's premises on its first rows
(non-negative, non-decreasing along every row, every column within ``n2``); every lifecycle of one
entry (and of a person's two entries) at positions around the hand-over, valued through the
counter's matrix, is within the bound, and an update-level twin is not; the bound is near-tight (a
far-apart pattern reaches 0.95 of the multiplier, so a multiplier 6% lower would be refuted); the
exact privacy loss of ``auto`` without an end under the entry unit is within the configured budget
and its update-level twin's is not; ``auto`` picks ``anytime_sqrt`` for every unit without an end.
Exact integer arithmetic, no statistics: no false-failure rate.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from test_contribution_sensitivity import changes, lifecycles  # the same brute force, at other positions

from transforms.core import ApproxDP, DynamicConfig, QuerySet, Update
from transforms.core.continual.auto import AutoRelease, auto_counter
from transforms.core.contribution import ContributionUnit, contribution_sensitivity, query_columns
from transforms.core.contribution.harness import neighbour_loss
from transforms.core.contribution.toeplitz import alternating_bound, chain_bound, histogram_bound, toeplitz_model
from transforms.core.counters.factorization import LATTICE_BITS
from transforms.core.counters.factorization.anytime import (
    MERGE_T1,
    PROFILE,
    AnytimeSqrtCounter,
    anytime_coefficients,
    anytime_sensitivity_sq,
    merge_tables,
)
from transforms.core.foundation.accounting import ZCDP, PrivacyUnit, gaussian_rho_for_approx_tight
from transforms.core.foundation.noise import NoiseSource, as_ratio_up
from transforms.core.static.linear import CountMechanism, HistogramMechanism

T1 = MERGE_T1
COUNT = QuerySet("n", "count")
HIST3 = QuerySet("h", "histogram", domain_size=3)
SUM3 = QuerySet("s", "linear", domain_size=3, matrix=((0.0, 0.5, 1.0),))


def encoder(rows: int, cols=None, profile: int = PROFILE) -> np.ndarray:
    """Rows ``0..rows-1`` of the counter's integer encoder at columns ``cols`` (default: all): phase
    1's Toeplitz rows ``P_{t-a}`` before ``T1``; after it each first-phase column holds the merged
    item's ``K_{t-T1+1}`` and each later column ``a`` the Toeplitz ``K_{t-a}`` (int64, exact)."""
    cols = np.arange(rows) if cols is None else np.asarray(cols)
    t, a = np.arange(rows)[:, None], cols[None, :]
    lag = t - a
    p, k = merge_tables(T1, profile).cint, anytime_coefficients(rows + 1, profile)
    merged = k[np.clip(t - T1 + 1, 0, rows)]
    late = np.where(a < T1, merged, k[np.clip(lag, 0, rows)])
    out = np.where(t < T1, p[np.clip(lag, 0, T1 - 1)], late)
    return np.where(lag >= 0, out, 0).astype(np.int64)


ROWS = 2400  # past the hand-over (896) and the table's doublings (256 .. 2048 after it)
E = encoder(ROWS)


def test_model_is_the_counters_calibration():
    model = toeplitz_model("anytime_sqrt")
    assert model.horizon is None and not model.attained
    assert model.n2 == anytime_sensitivity_sq() and toeplitz_model("anytime_sqrt", 4096) is model
    for mech in (CountMechanism(noise="gaussian"), HistogramMechanism(3, noise="gaussian")):
        c = AnytimeSqrtCounter(mech, ZCDP(0.5))
        assert c.noise_param == as_ratio_up(Fraction(model.n2) / (2 * Fraction(0.5)))


@pytest.mark.parametrize("mode", ["float", "int64", "wide", "wide_int64"])
def test_model_matrix_is_what_the_counter_encodes(mode, monkeypatch):
    """Noise off, the counter's raw release at step t is row t of ``encoder`` times the changes, in
    lattice units, over ``ROWS`` steps (before, at and after the hand-over, through the tables'
    doublings), in each of its encoders: float (small batches), int64 (a batch of 2^30 at step 10 makes
    the float sums inexact: ``s1 2^30 >= 2^53``; every release stays below 2^51, exact in the log's
    floats), the wide path (forced from the first step: float sums where exact) and its int64 limbs."""
    rng = np.random.default_rng(5)
    if mode.startswith("wide"):
        monkeypatch.setattr(AnytimeSqrtCounter, "narrow_s1", 1)
    counter = AnytimeSqrtCounter(HistogramMechanism(2, noise="gaussian"), ZCDP(1.0))
    counter.release_log = []
    d = rng.integers(-3, 4, size=(ROWS, 2))
    big = 1 << 30 if mode.endswith("int64") else 0
    for t, row in enumerate(d):
        counter.step(row + (big if t == 10 else 0), NoiseSource.disabled())
    assert counter._float_mode == (not big)
    want = E @ d + E[:, [10]] * big  # int64: |E d| < 2^20 2400 3, |E big| <= 2^50
    got = np.array([np.rint(np.asarray(v, dtype=np.float64) * 2**LATTICE_BITS) for _, _, v in counter.release_log])
    assert got.shape == want.shape and np.array_equal(got.astype(np.int64), want)


@pytest.mark.parametrize("profile", [3, 4])
def test_lemma_a1_premises_on_the_encoder(profile):
    """On the counter's encoder (the first ``ROWS`` rows, checked above), for new counters (profile 4, the model's)
    and for stored profile-3 counters, which the same multipliers calibrate: every entry of a row positive
    and non-decreasing along it (the older column never weighs more). The columns' norms are the
    construction's (phase 1's ``sum P_k^2 <= K_0^2``, asserted by ``PhaseTables``, plus ``K_1, K_2, ...``;
    ``anytime_sensitivity_sq`` bounds the infinite Toeplitz column): here their first ``ROWS`` rows hold
    about half of ``n2``, and the largest is a first-phase column."""
    assert toeplitz_model("anytime_sqrt").n2 == anytime_sensitivity_sq(PROFILE) and PROFILE == 4
    n2 = anytime_sensitivity_sq(profile)
    e = E if profile == PROFILE else encoder(ROWS, profile=profile)
    for t in range(ROWS):
        row = e[t, : t + 1]
        assert row.min() > 0 and np.all(np.diff(row) >= 0), t
    norms = [sum(int(v) * int(v) for v in e[:, a]) for a in range(ROWS)]
    assert max(norms) <= n2 and int(np.argmax(norms)) < T1


# the positions an entry may change at: the start, phase 1, both sides of the hand-over, after it
POSITIONS = (0, 1, 400, T1 - 1, T1, T1 + 1, T1 + 40, 1500)
E_SUB = E[:, list(POSITIONS)]  # ROWS reach far enough past the last position for a pair to pass n2


def _value(e_sub: np.ndarray, delta: np.ndarray) -> int:
    """||E delta||^2, exact: |y| < 2^20 x 8 x 4 < 2^26, so every square and the sum of 2,400 fit int64."""
    y = e_sub @ delta
    assert np.abs(y).max(initial=0) < 1 << 26
    return int(np.sum(y * y))


def _columns(query: QuerySet) -> np.ndarray:
    """The query's integer columns divided by their common factor ``g`` (values scale by ``g^2``)."""
    cols = query_columns(query)
    g = math.gcd(*(int(v) for v in cols.ravel()))
    assert np.abs(cols // g).max() <= 2
    return cols // g


def _brute(query: QuerySet, k: int, lifetimes: int, entries: int = 1) -> int:
    """The largest ``||E Delta||^2`` over every lifecycle at ``POSITIONS``, in units of ``g^2``."""
    cols = _columns(query)
    lives = lifecycles(len(POSITIONS), k, cols.shape[1], lifetimes, canonical=False)
    if entries == 1:
        return max(_value(E_SUB, changes(lc, cols, len(POSITIONS))) for lc in lives)
    deltas = [changes(lc, cols, len(POSITIONS)) for lc in lives]
    return max(_value(E_SUB, a + b) for a, b in itertools.combinations_with_replacement(deltas, 2))


CASES = [(COUNT, 2, 1), (COUNT, 3, 2), (HIST3, 2, 1), (HIST3, 3, 1), (SUM3, 2, 1), (SUM3, 3, 1)]


@pytest.mark.parametrize("query,k,lifetimes", CASES, ids=[f"{q.name}-k{k}-l{f}" for q, k, f in CASES])
def test_entry_bound_covers_every_lifecycle_around_the_hand_over(query, k, lifetimes):
    unit = ContributionUnit.entry(k, lifetimes)
    s = contribution_sensitivity(query, "anytime_sqrt", "gaussian", unit)
    cols = _columns(query)
    base = toeplitz_model("anytime_sqrt").n2 * int(np.max(np.sum(cols**2, axis=0)))  # the update level, units g^2
    truth = _brute(query, k, lifetimes)
    assert s.multiplier**2 * base >= truth and not s.exact and s.pattern == ()
    assert truth > base  # the update-level twin (multiplier 1) does not cover it: the check can fail


def test_person_bound_covers_two_entries_and_the_entry_twin_does_not():
    unit = ContributionUnit.person(2, 2, 1)
    s = contribution_sensitivity(COUNT, "anytime_sqrt", "gaussian", unit)
    entry = contribution_sensitivity(COUNT, "anytime_sqrt", "gaussian", ContributionUnit.entry(2, 1))
    base = toeplitz_model("anytime_sqrt").n2
    truth = _brute(COUNT, 2, 1, entries=2)
    assert s.multiplier == pytest.approx(2 * entry.multiplier, rel=1e-12)
    assert s.multiplier**2 * base >= truth > entry.multiplier**2 * base


def test_unbounded_bounds_are_sqrt_of_the_changes_and_not_attained():
    model = toeplitz_model("anytime_sqrt")
    assert alternating_bound(model, 3) == (3 * model.n2, False, (0, model.window, 2 * model.window))
    assert histogram_bound(model, 3, 5, 2)[:2] == (5 * model.n2, False)
    cb = chain_bound(model, 2, True)
    assert (cb.upper, cb.lower, cb.exact) == (5 * model.n2, 0, False)
    blt = toeplitz_model("blt")
    assert alternating_bound(blt, 3)[1] and chain_bound(blt, 2, True).lower == 5 * blt.n2  # the BLT's are


def test_the_bound_is_near_tight_far_apart():
    """Insertion at 0, deletion at D = 2^20, rows to 2^21 (in floats: the value, 1.80 n2, is checked
    against 1.79 n2, far beyond their rounding): ``||E (e_0 - e_D)||^2 >= 1.79 n2``, so a count entry's
    multiplier is at least ``sqrt(1.79 / 2) = 0.946`` of ours; a twin 6% lower is refuted."""
    n2 = toeplitz_model("anytime_sqrt").n2
    rows, d = 1 << 21, 1 << 20
    k = anytime_coefficients(rows).astype(np.float64)
    c0 = np.empty(rows)
    c0[:T1] = merge_tables(T1).cint
    c0[T1:] = k[1 : rows - T1 + 1]
    cd = np.zeros(rows)
    cd[d:] = k[: rows - d]
    value = float(np.sum((c0 - cd) ** 2))
    assert value >= 1.79 * n2
    s = contribution_sensitivity(COUNT, "anytime_sqrt", "gaussian", ContributionUnit.entry(2, 1))
    assert (0.94 * s.multiplier) ** 2 * n2 < value <= s.multiplier**2 * n2


# ---------------------------------------------------------------------------------------------
# The core: auto without an end under the entry unit, exact loss
# ---------------------------------------------------------------------------------------------

BUDGET = ApproxDP(1.0, 1e-6)
TICKS = 1700


def test_auto_without_an_end_uses_anytime_sqrt_for_every_unit():
    for unit in ("update", "entry", "person"):
        assert auto_counter("gaussian", None, unit) == "anytime_sqrt"
    assert auto_counter("gaussian", 1000, "person") == "sqrt_factorization"
    assert auto_counter("gaussian", 1000, "update") == "scaled_sqrt"
    config = DynamicConfig((COUNT,), BUDGET, unit=PrivacyUnit.entry(2))
    core = AutoRelease(config, stream="s", end_tick=None, every_ticks=1)
    (counter,) = core.parts[0].counters
    assert counter.name == "anytime_sqrt"
    (cal,) = core.parts[0].calibrations(config, core.parts[0].options, end_tick=None, every_ticks=1)
    assert cal.method == "contribution" and cal.multiplier == pytest.approx(math.sqrt(2), rel=1e-12)


def test_entry_loss_without_an_end_is_within_the_budget_and_the_update_twin_is_not():
    """One entry inserted at tick 1 and deleted at tick 1501 (across the hand-over), beside other
    entries' churn: the loss of the whole output is within the configured budget under the entry
    unit, and above it for the same core at update level (this pattern is worth 1.136 n2 over the
    1,700 ticks)."""
    bg = [(t, Update("insert", f"b{t}", (0,))) for t in range(1, TICKS, 7)]
    bg += [(t + 300, Update("delete", f"b{t}")) for t in range(1, TICKS - 300, 14)]
    entry = [(1, Update("insert", "x", (0,))), (1501, Update("delete", "x"))]

    def batches(*streams):
        by: dict[int, list] = {}
        for s in streams:
            for t, u in s:
                by.setdefault(t, []).append(u)
        return [(t, by[t]) for t in sorted(by)]

    def core(unit):
        return AutoRelease(DynamicConfig((COUNT,), BUDGET, unit=unit), stream="s", end_tick=None, every_ticks=1)

    rho = gaussian_rho_for_approx_tight(BUDGET.epsilon, BUDGET.delta)
    loss = neighbour_loss(lambda: core(PrivacyUnit.entry(2)), batches(entry, bg), batches(bg)).loss
    assert loss.differing > 0 and loss.within(BUDGET)
    assert 0.5 * rho < loss.rho <= rho  # 1.136 / 2 of it: the loss is not vacuous
    twin = neighbour_loss(lambda: core(PrivacyUnit.update()), batches(entry, bg), batches(bg)).loss
    assert not twin.within(BUDGET) and twin.rho > rho


def test_a_state_written_with_blt_under_a_unit_restores_and_continues_with_blt(monkeypatch, caplog):
    """Before stop 49 a run without an end under an entry or person unit got ``blt``: such a state (a
    savepoint of the previous version) restores with its ``blt`` counters, at the same noise, with
    options naming them (so its planned costs and calibrations are the writer's: naming the new choice,
    ``planned_cost`` raised), and continues exactly as the object that wrote it; a new run gets
    ``anytime_sqrt``."""
    from transforms.core.continual import auto as auto_mod
    from transforms.core.foundation.noise import NoiseSource as Noise

    config = DynamicConfig((COUNT, HIST3), BUDGET, unit=PrivacyUnit.entry(3))
    noise = Noise(bytes(range(32)))
    current = auto_mod.auto_counter

    def before(noise_kind, horizon, unit_kind="update"):
        if noise_kind == "gaussian" and horizon is None and unit_kind != "update":
            return "blt"
        return current(noise_kind, horizon, unit_kind)

    def go(core, first):
        out = []
        for t in range(first, first + 12):
            res = core.process_tick(t, [Update("insert", f"e{t}", (0, t % 3))], noise)
            out += [(a.tick, a.query, tuple(a.estimate)) for a in res.answers]
        return out

    monkeypatch.setattr(auto_mod, "auto_counter", before)
    old = AutoRelease(config, stream="s", end_tick=None, every_ticks=1)
    assert [c.name for c in old.parts[0].counters] == ["blt", "blt"]
    go(old, 1)
    state = old.to_state()
    params = [c.noise_param for c in old.parts[0].counters]
    costs = [old.parts[0].planned_cost(c.coords + (c.name,)) for c in old.parts[0].counters]
    calibrations = old.parts[0].calibrations(config, old.parts[0].options, end_tick=None, every_ticks=1)
    expect = go(old, 13)
    monkeypatch.setattr(auto_mod, "auto_counter", current)
    with caplog.at_level("WARNING", logger=auto_mod.__name__):
        restored = AutoRelease.from_state(config, state, end_tick=None, every_ticks=1)
    # the operator is told what runs (the plan and manifest, computed before any state is read, name today's)
    (warned,) = [r.getMessage() for r in caplog.records if r.name == auto_mod.__name__]
    assert "holds blt counters" in warned and "name anytime_sqrt" in warned
    part = restored.parts[0]
    assert [c.name for c in part.counters] == ["blt", "blt"]
    assert [c.noise_param for c in part.counters] == params
    # its options name the counters it holds: its planned costs and calibrations are the old object's
    assert part.options.counter == "blt"
    assert [part.planned_cost(c.coords + (c.name,)) for c in part.counters] == costs
    assert part.calibrations(config, part.options, end_tick=None, every_ticks=1) == calibrations
    assert go(restored, 13) == expect
    fresh = AutoRelease(config, stream="s", end_tick=None, every_ticks=1)
    assert [c.name for c in fresh.parts[0].counters] == ["anytime_sqrt", "anytime_sqrt"]
    assert [c.noise_param for c in fresh.parts[0].counters] != params
