"""Tests written for the survivors of the mutation round of session 43, group c (``transforms/core/continual/``,
``families/``, ``selection/``; ``benchmarks/mutation_fast.py``, seed 20261127, 30 mutants a module). Each asserts a
property of the module (released values and their fields, the accounting, a stated bound, a configuration the user
asked for), never a pinned value, and names in a comment the mutant it kills (checked with ``python -m
benchmarks.mutation_fast confirm NAME TEST``: passes without the mutant, fails with it). Fast: in memory, no Beam."""

from __future__ import annotations

import numpy as np
import pytest

from transforms.core import MECHANISMS, ZCDP, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.continual.net_change import NetChangeRelease
from transforms.core.families.growing.pmwg import _UNIT, OnlinePMW
from transforms.core.foundation.accounting import Ledger, as_vector
from transforms.core.foundation.accounting.units import PrivacyUnit

KEY = bytes(range(32))


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
