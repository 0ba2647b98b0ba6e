"""The person unit on the in-memory core (issue 28): the exact privacy loss of the whole output of
``auto`` (its additive part: ``net_change``) between two inputs that differ in every update of
one person, calibrated by the core itself (``PrivacyUnit.person``: sensitivity by contribution per
counter, the person rule ahead of a registry keyed by person); the update-level twin fails it;
noise off, the releases are the truth over the admitted entries; the registry's insertion limit;
the ledger and the stated spend hold the unit's guarantee.

The privacy-loss tests are exact, not statistical: the harness records every release's pre-noise
value and noise scale (noise on and off with one fixed key) and adds up the loss
(``transforms/core/contribution/loss.py``); no false-failure rate to state.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from transforms.core import MECHANISMS, ApproxDP, DynamicConfig, PureDP, QuerySet, Update
from transforms.core.continual.auto import AutoRelease
from transforms.core.contribution import ContributionUnit, contribution_sensitivity
from transforms.core.contribution.harness import neighbour_loss
from transforms.core.foundation.accounting import ZCDP, PrivacyUnit, gaussian_rho_for_approx_tight
from transforms.core.foundation.entries import EntryRegistry, MutationLimit
from transforms.core.foundation.noise import NoiseSource

T = 60
LEVELS = tuple(b / 100 for b in range(101))  # a sum over [0, 1] in 101 levels, as the pipelines
QUERIES = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=5),
    QuerySet("s", "linear", domain_size=101, matrix=(LEVELS,)),
)
BUDGETS = [ApproxDP(1.0, 1e-6), ZCDP(0.05), PureDP(1.0)]
IDS = ["approx", "zcdp", "pure"]
L, K = 4, 3
PERSON = PrivacyUnit.person(L, K)


def ledger_rho_or_eps(budget) -> float:
    if isinstance(budget, PureDP):
        return budget.epsilon
    if isinstance(budget, ZCDP):
        return budget.rho
    return gaussian_rho_for_approx_tight(budget.epsilon, budget.delta)  # the tight Gaussian account (issue 31)


def batches(*streams, person: bool = True):
    """``(tick, [(person, Update)])`` (or plain updates) in tick order from ``(tick, person, Update)``."""
    by_tick: dict[int, list] = {}
    for stream in streams:
        for t, p, u in stream:
            by_tick.setdefault(int(t), []).append((p, u) if person else u)
    return [(t, by_tick[t]) for t in sorted(by_tick)]


def background(seed: int = 0) -> list:
    """Other people's churn: one entry each, inserted, sometimes deleted 10 ticks later."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(1, T, 2):
        out.append((t, f"bg{t}", Update("insert", f"b{t}", (0, int(rng.integers(5)), int(rng.integers(101))))))
        if t > 10 and rng.random() < 0.5:
            out.append((t, f"bg{t - 10}", Update("delete", f"b{t - 10}")))
    return out


def lifecycle(entry: str, steps) -> list:
    """One entry of the person ``alice``: ``steps`` are ``(tick, op, item)``."""
    return [(t, "alice", Update(op, entry, None if op == "delete" else item)) for t, op, item in steps]


def count_worst(budget, every: int) -> tuple[int, int]:
    """The ticks of the count's worst insertion and deletion for the configured counter."""
    counter, horizon = MECHANISMS["net_change"].core_cls.counter_choice(
        DynamicConfig(QUERIES, budget), MECHANISMS["net_change"].options_cls(), T, every
    )
    noise = "laplace" if isinstance(budget, PureDP) else "gaussian"
    unit = ContributionUnit.person(L, K, 1)
    (a, _, _), (b, _, _) = contribution_sensitivity(QUERIES[0], counter, noise, unit, horizon=horizon).pattern
    return a * every + 1, b * every + 1  # the first tick of each period


def scenario(name: str, budget, every: int) -> list:
    """The person's updates (``alice``: four entries, and a fifth the person rule refuses) at
    adversarial ticks: the count's worst pair of periods; the tree's / period's boundaries; several
    mutations of several entries in one period."""
    if name == "worst":
        a, b = count_worst(budget, every)
        mid = a + ((b - a) // (2 * every)) * every
        steps = [[(a, "insert", (0, 0, 100)), (mid, "upsert", (0, 1, 0)), (b, "delete", None)]] * L
    elif name == "boundaries":  # the last tick of a period, the first of the next; half-way; the end
        steps = [
            [(every, "insert", (0, 4, 100)), (every + 1, "upsert", (0, 3, 0)), (T // 2, "delete", None)],
            [(T // 2, "insert", (0, 2, 100)), (T // 2 + 1, "upsert", (0, 1, 50)), (T, "delete", None)],
            [(1, "insert", (0, 0, 0)), (T - every + 1, "upsert", (0, 4, 100))],
            [(T, "insert", (0, 1, 100))],
        ]
    else:  # "one_period": every entry inserted, moved and deleted inside one period, two periods
        steps = [
            [(11, "insert", (0, e, 100)), (11, "upsert", (0, (e + 1) % 5, 0)), (12, "delete", None)] for e in range(2)
        ] + [[(21, "insert", (0, e, 100)), (22, "upsert", (0, (e + 2) % 5, 70))] for e in range(2, 4)]
    out = [u for i, s in enumerate(steps) for u in lifecycle(f"a{i}", s)]
    first = min(t for t, _, _ in out)
    return out + lifecycle("a_extra", [(first, "insert", (0, 4, 100)), (T, "delete", None)])  # refused: L reached


def person_core(budget, every: int, unit=PERSON):
    return AutoRelease(DynamicConfig(QUERIES, budget, unit=unit), stream="s", end_tick=T, every_ticks=every)


@pytest.mark.parametrize("budget", BUDGETS, ids=IDS)
@pytest.mark.parametrize("name,every", [("worst", 1), ("worst", 3), ("boundaries", 4), ("one_period", 10)])
def test_person_loss_is_within_the_configured_budget_and_the_update_level_twin_is_not(budget, name, every):
    """Two inputs differing in every update of one person (4 admitted entries, one refused):
    ``auto`` under ``unit: person`` (L = 4, k = 3) loses at most the configured budget (pure eps;
    zCDP rho; (eps, delta) through its zCDP ledger); the same core calibrated at update level (the
    twin: sensitivity of one update) loses more than the budget on the same pair. The worst case
    reaches the count's share (its bound is exact): the test is not vacuous."""
    person = scenario(name, budget, every)
    bg = background()
    loss = neighbour_loss(lambda: person_core(budget, every), batches(person, bg), batches(bg), end_tick=T).loss
    assert loss.differing > 0
    assert loss.within(budget), (loss.rho, loss.epsilon)
    twin = neighbour_loss(
        lambda: person_core(budget, every, PrivacyUnit.update()),
        batches([u for u in person if u[2].entry_id != "a_extra"], bg, person=False),
        batches(bg, person=False),
        end_tick=T,
    ).loss
    assert not twin.within(budget), (twin.rho, twin.epsilon)
    if name == "worst" and every == 1:
        rho, eps = loss.by_query["n"]
        share = ledger_rho_or_eps(budget) / 3
        assert (eps if isinstance(budget, PureDP) else rho) == pytest.approx(share, rel=2e-3)


def test_person_releases_with_noise_off_are_the_truth_over_the_admitted_entries():
    """Noise off: every release of ``auto`` under ``unit: person`` equals the truth over the entries
    the person rule admits (each person's first L entries by first insertion: tick, then item,
    then entry id), whatever the order of the lines within a tick; every update of a refused entry
    is a rejection ``contribution_bounded``; a refused re-insertion ``constraint_exceeded``."""
    rng = random.Random(7)
    stream, admitted = [], set()
    firsts: dict[str, list] = {}
    for e in range(40):
        p = f"p{rng.randrange(6)}"
        t0 = rng.randrange(1, T - 10)
        item = (0, rng.randrange(5), rng.randrange(101))
        ups = [(t0, p, Update("insert", f"e{e}", item))]
        if rng.random() < 0.5:
            ups.append((t0 + 3, p, Update("upsert", f"e{e}", (0, rng.randrange(5), rng.randrange(101)))))
        if rng.random() < 0.6:
            ups.append((t0 + 6, p, Update("delete", f"e{e}")))
            ups.append((t0 + 8, p, Update("insert", f"e{e}", item)))  # a deleted id never comes back
        stream += ups
        firsts.setdefault(p, []).append((t0, item, f"e{e}"))
    for entries in firsts.values():
        admitted |= {eid for _, _, eid in sorted(entries)[:L]}
    assert 0 < len(admitted) < 40  # some persons are over the limit
    out = {}
    for order in range(2):
        core = person_core(PureDP(1.0), 1)
        noise = NoiseSource.disabled()
        live: dict[str, tuple] = {}
        seen: set[str] = set()
        reasons: dict[str, set] = {}
        for t, pairs in batches(stream):
            if order:
                rng.shuffle(pairs)
            res = core.process_tick(t, pairs, noise)
            for r in res.rejections:
                reasons.setdefault(r.update[1].entry_id, set()).add(r.reason)
            for _, u in pairs:  # the truth (one update of an entry per tick in this stream)
                if u.entry_id not in admitted or (u.op == "insert" and u.entry_id in seen):
                    continue
                seen.add(u.entry_id)
                if u.op == "delete":
                    del live[u.entry_id]
                else:
                    live[u.entry_id] = u.item
            truth = {
                "n": [len(live)],
                "h": [sum(1 for i in live.values() if i[1] == c) for c in range(5)],
                "s": [sum(i[2] / 100 for i in live.values())],
            }
            got = {a.query: list(a.estimate) for a in res.answers if a.tick == t}
            assert set(got) == set(truth)
            for q in truth:
                assert got[q] == pytest.approx(truth[q], abs=1e-6), (t, q)
        out[order] = reasons
        for eid, rs in reasons.items():
            assert rs == ({"contribution_bounded"} if eid not in admitted else {"constraint_exceeded"}), eid
    assert out[0] == out[1]


def test_registry_refuses_a_second_insertion_by_default():
    """Entry and person units: a deleted entry id never comes back (``constraint_exceeded``), the
    default state stays as it was (no count for a limit of 1); a limit of 2 keeps the count, and a
    state stored without it counts one insertion; a window alone lets an id come back."""
    for limit in (3, MutationLimit(3)):
        reg = EntryRegistry((3,), max_mutations=limit)
        assert reg.resolve_tick(1, [Update("insert", "a", (0,)), Update("delete", "a")])[1] == []
        assert reg.tombstones == {"a": 2}
        assert [r.reason for r in reg.resolve_tick(2, [Update("insert", "a", (1,))])[1]] == ["constraint_exceeded"]
    reg = EntryRegistry((3,), max_mutations=MutationLimit(5, None, 2))
    assert reg.resolve_tick(1, [Update("insert", "a", (0,)), Update("delete", "a")])[1] == []
    assert reg.tombstones == {"a": (2, None, 1)}
    assert reg.resolve_tick(2, [Update("insert", "a", (1,)), Update("delete", "a")])[1] == []
    assert [r.reason for r in reg.resolve_tick(3, [Update("insert", "a", (1,))])[1]] == ["constraint_exceeded"]
    reg.tombstones = {"b": 2}  # stored before the limit existed: one insertion
    assert reg.resolve_tick(4, [Update("insert", "b", (1,)), Update("delete", "b")])[1] == []
    assert [r.reason for r in reg.resolve_tick(5, [Update("insert", "b", (1,))])[1]] == ["constraint_exceeded"]
    reg = EntryRegistry((3,), max_mutations=MutationLimit(None, 10))
    assert reg.resolve_tick(1, [Update("insert", "a", (0,)), Update("delete", "a")])[1] == []
    assert reg.resolve_tick(2, [Update("insert", "a", (1,))])[1] == []
    assert DynamicConfig(QUERIES, PureDP(1.0), unit=PrivacyUnit.entry(3)).max_mutations == 3
    assert DynamicConfig(QUERIES, PureDP(1.0), unit=PERSON).max_mutations == 3
    unlimited = PrivacyUnit.entry(3, max_insertions=2)
    assert DynamicConfig(QUERIES, PureDP(1.0), unit=unlimited).max_mutations == MutationLimit(3, None, 2)
    assert repr(PrivacyUnit.entry(3)) == "PrivacyUnit(kind='entry', max_mutations=3)"  # noise keys unchanged


@pytest.mark.parametrize("budget", BUDGETS, ids=IDS)
@pytest.mark.parametrize("unit", [PrivacyUnit.entry(K), PERSON], ids=["entry", "person"])
def test_the_ledger_and_the_stated_spend_hold_the_units_guarantee(budget, unit):
    """Run to the end: the ledger's total is the configured budget itself (in its currency: zCDP
    for Gaussian noise), the stated spend for the unit is the configured budget, no update-level
    figure is stated (the ledger charges the unit's guarantee directly), and the plan states a
    calibration per query set whose multiplier is the one the counter's budget was divided by."""
    config = DynamicConfig(QUERIES, budget, unit=unit)
    spec = MECHANISMS["auto"]
    core = AutoRelease(config, stream="s", end_tick=T, every_ticks=1)
    noise = NoiseSource(b"k" * 32)
    core.process_tick(1, [("p", Update("insert", "x", (0, 1, 2)))] if unit.kind == "person" else [], noise)
    list(core.run_to_end(noise))
    target = AutoRelease.ledger_cap(config)  # (eps, delta): the tight Gaussian account of the configured budget
    spent = core.spent
    assert type(spent) is type(target)
    assert spent.vector() == pytest.approx(target.vector(), rel=1e-9)
    assert all(s <= t * (1 + 1e-12) for s, t in zip(spent.vector(), target.vector()))
    fields = spec.spend_fields(config, spent.vector())
    if isinstance(budget, ApproxDP):
        assert fields["epsilon_spent"] == pytest.approx(1.0, rel=1e-6) and fields["delta_spent"] == 1e-6
    elif isinstance(budget, ZCDP):
        assert fields["rho_spent"] == pytest.approx(budget.rho, rel=1e-9)
    else:
        assert fields["epsilon_spent"] == pytest.approx(1.0, rel=1e-9)
    assert fields["update_level_spent"] is None
    (part,) = spec.plan(config, spec.options_cls(), end_tick=T, every_ticks=1)
    assert [c.query for c in part.calibrations] == ["n", "h", "s"]
    assert all(c.method == "contribution" and 1 < c.multiplier <= unit.group_size for c in part.calibrations)
    assert "noise x" in part.text()
    (net,) = core.parts
    for counter, c in zip(net.counters, part.calibrations):
        assert counter.scope.sensitivity == pytest.approx(c.multiplier)
    line = unit.describe("customer_id")
    assert line.startswith(f"privacy unit {unit.kind}: protects every update of ")
    assert ("'customer_id'" in line) == (unit.kind == "person") and "inserted once" in line


def test_mechanisms_that_cannot_serve_the_person_unit_refuse_it_naming_the_key():
    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), unit=PERSON)
    for name in ("dcr", "hdcr", "swcr", "randomized_response"):
        with pytest.raises(ValueError, match=r"^privacy\.unit: person is not served by mechanism\.kind"):
            MECHANISMS[name].check(config, MECHANISMS[name].options_cls(), end_tick=T)
    for name in ("net_change", "auto"):
        MECHANISMS[name].check(config, MECHANISMS[name].options_cls(), end_tick=T)
        assert "person" in MECHANISMS[name].units
    windowed = dataclasses.replace(config, unit=PrivacyUnit.person(L, K, per_window=20))
    with pytest.raises(ValueError, match=r"^time\.end"):
        MECHANISMS["net_change"].check(windowed, MECHANISMS["net_change"].options_cls(), end_tick=None)
    with pytest.raises(ValueError, match=r"^privacy\.unit: a person limit per window"):
        MECHANISMS["fully_dynamic"].check(windowed, MECHANISMS["fully_dynamic"].options_cls(), end_tick=T)


def test_two_persons_entry_ids_never_meet():
    """Under the person unit the registry keys entries by (person, entry id): the same id brought by
    two persons is two entries (each person's own records decide its entries); a malformed pair (no
    person) is refused ``malformed``."""
    core = person_core(PureDP(1.0), 1)
    noise = NoiseSource.disabled()
    res = core.process_tick(
        1, [("a", Update("insert", "x", (0, 1, 50))), ("b", Update("insert", "x", (0, 2, 50)))], noise
    )
    assert not res.rejections and {a.query: a.estimate[0] for a in res.answers}["n"] == pytest.approx(2)
    res = core.process_tick(2, [("b", Update("delete", "x")), ("", Update("insert", "y", (0, 1, 1)))], noise)
    assert [r.reason for r in res.rejections] == ["malformed"]
    got = {a.query: list(a.estimate) for a in res.answers}
    assert got["n"] == pytest.approx([1]) and got["h"] == pytest.approx([0, 1, 0, 0, 0])


@pytest.mark.parametrize("budget", [ApproxDP(1.0, 1e-6), PureDP(1.0)], ids=["approx", "pure"])
def test_person_state_restores_and_continues_identically(budget):
    """``to_state`` / ``from_state`` half-way (the person rule's states, the registry keyed by
    person, the ledger's scopes at their sensitivity) and on: the same releases, the same
    rejections, the same spend as a run without the restart."""
    person = scenario("boundaries", budget, 4)
    stream = batches(person, background())
    config = DynamicConfig(QUERIES, budget, unit=PERSON)
    noise = NoiseSource(b"r" * 32)

    def run(restart: bool):
        core, out = AutoRelease(config, stream="s", end_tick=T, every_ticks=4), []
        for i, (t, pairs) in enumerate(stream):
            if restart and i == len(stream) // 2:
                core = AutoRelease.from_state(config, core.to_state(), end_tick=T, every_ticks=4)
            res = core.process_tick(t, pairs, noise)
            out.append(([(a.tick, a.query, list(a.estimate)) for a in res.answers], [r.reason for r in res.rejections]))
        out.append([(a.tick, list(a.estimate)) for r in core.run_to_end(noise) for a in r.answers])
        return out, core.spent.vector()

    a, b = run(False), run(True)
    assert a == b
    assert any("contribution_bounded" in rej for _, rej in a[0][:-1])
