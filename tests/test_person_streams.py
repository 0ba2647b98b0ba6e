"""A person across streams (``privacy.max_streams_per_person``): the rule ``bound_person_streams`` against a
declarative reference (hypothesis), whatever the order of lines and the batching by tick; never more than
``max_streams`` streams per person, never half an entry; its state is versioned plain data; and the
configuration that sets it (each stream at ``1 / n`` of the budget, refused where it cannot hold).

The Beam step and the CLI: ``tests/test_person_streams_beam.py``."""

from __future__ import annotations

import itertools
from collections import defaultdict

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.config import ConfigError, check_mechanism, parse_config
from pipelines.manifest import release_manifest
from pipelines.outputs import unit_statement
from pipelines.plan import plan_report, render
from transforms.core import ZCDP, ApproxDP, DynamicConfig, PureDP
from transforms.core.contribution import (
    CONTRIBUTION_BOUNDED,
    PersonLimit,
    bound_person,
    bound_person_streams,
    new_streams_state,
    order_key,
)
from transforms.core.contribution.loss import PrivacyLoss
from transforms.core.foundation.accounting import stream_share
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.core.foundation.state import StateError, decode, encode

OPS = ("insert", "upsert", "delete")
STREAMS = ("eu", "us", "ap")


def value(tick, op, item=(0,), seq=0, event=None, raw=None):
    return (tick, seq, op, item, float(tick) if event is None else event, raw)


update_st = st.tuples(
    st.sampled_from(STREAMS),
    st.sampled_from([f"e{i}" for i in range(5)]),
    st.integers(1, 10),
    st.sampled_from(OPS),
    st.integers(0, 2),
    st.integers(0, 3),
    st.floats(0, 0.99),
)


def to_updates(raw):
    return [
        (s, eid, value(t, op, (x,), seq, t + frac, f"{s}-{eid}-{t}-{op}-{x}-{seq}"))
        for s, eid, t, op, x, seq, frac in raw
    ]


def reference(updates, limit: PersonLimit) -> list:
    """The rule, stated declaratively: in the total order (``order_key``, then the stream), the streams
    admitted are those of the first ``max_streams`` *first insertions into a stream*; in an admitted stream
    the per-stream rule ``bound_person`` decides (its updates before the stream's admission have no entry
    inserted before them: the rule refuses them as unknown); in any other stream an update is refused,
    ``contribution_bounded`` once ``max_streams`` streams are admitted, ``unknown_entry`` before."""
    key = lambda u: (order_key(u[1], u[2]), u[0])  # noqa: E731
    ordered = sorted(updates, key=key)
    first: dict = {}
    for i, (s, _, v) in enumerate(ordered):
        if v[2] == "insert" and s not in first:
            first[s] = i
    admitted = sorted(first, key=first.get)[: limit.max_streams]
    full_at = first[admitted[-1]] if len(admitted) == limit.max_streams else len(ordered)
    per_stream = {s: dict() for s in admitted}
    for s in admitted:
        mine = [(eid, v) for t, eid, v in ordered if t == s]
        _, dec = bound_person(None, mine, PersonLimit(limit.max_entries, limit.window))
        # the decisions come in the stream's order, which is the order of ``ordered`` restricted to it
        per_stream[s] = iter(dec)
    out = []
    for i, (s, eid, v) in enumerate(ordered):
        if s in per_stream:
            e, w, reason = next(per_stream[s])
            assert (e, w) == (eid, v)
            out.append((s, eid, v, reason))
        else:
            out.append((s, eid, v, CONTRIBUTION_BOUNDED if i >= full_at else "unknown_entry"))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(update_st, max_size=40), st.integers(1, 3), st.integers(1, 3), st.sampled_from([None, 4]), st.randoms())
def test_rule_equals_the_reference_whatever_the_order_and_the_batching(raw, streams, cap, window, rnd):
    limit = PersonLimit(cap, window, streams)
    ups = to_updates(raw)
    want = reference(ups, limit)
    shuffled = list(ups)
    rnd.shuffle(shuffled)
    assert bound_person_streams(None, shuffled, limit)[1] == want
    # tick by tick (each tick's updates in any order), the state carried between batches, through its encoding
    state, got = None, []
    for _, grp in itertools.groupby(sorted(ups, key=lambda u: u[2][0]), key=lambda u: u[2][0]):
        grp = list(grp)
        rnd.shuffle(grp)
        state, dec = bound_person_streams(state, grp, limit)
        state = decode(encode(state))
        got += dec
    assert got == want


@settings(max_examples=200, deadline=None)
@given(st.lists(update_st, max_size=40), st.integers(1, 3), st.integers(1, 2))
def test_never_more_than_max_streams_and_never_half_an_entry(raw, streams, cap):
    limit = PersonLimit(cap, None, streams)
    state, dec = bound_person_streams(None, to_updates(raw), limit)
    accepted = [(s, eid) for s, eid, _, reason in dec if reason is None]
    assert len({s for s, _ in accepted}) <= streams
    assert set(state[3]) >= {s for s, _ in accepted} and len(state[3]) <= streams
    per_stream = defaultdict(set)
    for s, eid in accepted:
        per_stream[s].add(eid)
    assert all(len(e) <= cap for e in per_stream.values())
    # from an entry's first insertion on, every update of it has one verdict (admitted or not)
    verdicts, inserted = defaultdict(set), set()
    for s, eid, v, reason in dec:
        if v[2] == "insert":
            inserted.add((s, eid))
        if (s, eid) in inserted:
            verdicts[(s, eid)].add(reason is None)
    assert all(len(r) == 1 for r in verdicts.values())


def test_limit_at_least_the_streams_decides_as_the_per_stream_rule():
    """With ``max_streams`` at the number of streams the person uses, every stream is admitted at its first
    insertion and each decides as ``bound_person`` alone (what a person gets without the limit)."""
    ups = to_updates(
        [(s, f"e{i % 4}", 1 + i % 7, OPS[i % 3], i % 2, i % 3, 0.1 * (i % 5)) for i, s in enumerate(STREAMS * 9)]
    )
    _, dec = bound_person_streams(None, ups, PersonLimit(2, None, 3))
    for s in STREAMS:
        _, alone = bound_person(None, [(eid, v) for t, eid, v in ups if t == s], PersonLimit(2))
        assert [(e, v, r) for t, e, v, r in dec if t == s] == alone


def test_a_person_in_three_streams_keeps_the_first_two_it_inserts_into():
    ups = [
        ("ap", "x", value(1, "upsert")),  # ap not admitted yet, no entry: unknown
        ("us", "a", value(2, "insert")),  # us admitted (first insertion)
        ("eu", "b", value(3, "insert", event=3.5)),  # eu admitted
        ("ap", "c", value(3, "insert", event=3.7)),  # two streams admitted: refused for good
        ("ap", "c", value(4, "delete")),
        ("us", "a", value(5, "delete")),
        ("eu", "b", value(6, "upsert", (1,))),
    ]
    state, dec = bound_person_streams(None, list(reversed(ups)), PersonLimit(1, None, 2))
    assert [(s, r) for s, _, _, r in dec] == [
        ("ap", "unknown_entry"),
        ("us", None),
        ("eu", None),
        ("ap", CONTRIBUTION_BOUNDED),
        ("ap", CONTRIBUTION_BOUNDED),
        ("us", None),
        ("eu", None),
    ]
    assert state[3] == ("us", "eu") and set(state[2]) == {"us", "eu"}
    # ties on everything but the stream: the stream name decides
    _, tie = bound_person_streams(
        None, [("us", "a", value(1, "insert")), ("eu", "a", value(1, "insert"))], PersonLimit(1, None, 1)
    )
    assert [(s, r) for s, _, _, r in tie] == [("eu", None), ("us", CONTRIBUTION_BOUNDED)]


def test_state_is_versioned_and_the_input_state_is_not_modified():
    state = new_streams_state()
    new, _ = bound_person_streams(state, [("eu", "a", value(1, "insert"))], PersonLimit(1, None, 1))
    assert state == ("streams", 1, {}, ()) and new[3] == ("eu",)
    assert decode(encode(new)) == new
    with pytest.raises(StateError, match="not a person state across streams"):
        bound_person_streams((1, {}, {}, {}), [], PersonLimit(1, None, 1))  # a per-stream state
    with pytest.raises(ValueError, match="needs a limit with max_streams"):
        bound_person_streams(None, [], PersonLimit(1))
    with pytest.raises(ValueError, match="max_streams must be an integer >= 1"):
        PersonLimit(1, None, 0)


# ---------------------------------------------------------------------------
# The configuration
# ---------------------------------------------------------------------------


def config(privacy: str, streams: str = "{field: region, keys: [eu, us]}"):
    text = (
        f"privacy: {privacy}\n"
        "time: {field: time, tick_seconds: 600, origin: 0, end: 6000}\n"
        f"streams: {streams}\n"
        "mechanism: {kind: auto}\n"
        "release: {every_ticks: 1}\n"
        "queries:\n  - {name: active, type: count}\n"
        "source: {type: file, path: data/demo_person.jsonl, format: jsonl}\n"
    )
    cfg = parse_config(yaml.safe_load(text))
    check_mechanism(cfg)
    return cfg


PERSON = "unit: person, person_field: customer, max_entries_per_person: 2, max_mutations_per_entry: 3"


@pytest.mark.parametrize(
    "budget, per_stream, whole",
    [
        ("epsilon: 1.0", PureDP(0.5), PureDP(1.0)),
        # auto's tight Gaussian account: the share of rho(1, 1e-6), stated at the same delta (0.6889 < 1, > 0.5)
        ("epsilon: 1.0, delta: 1.0e-6", ApproxDP(0.6889108311592187, 1e-6), ApproxDP(1.0, 1e-6)),
        ("rho: 0.5", ZCDP(0.25), ZCDP(0.5)),
    ],
)
def test_each_stream_runs_at_its_share_and_the_person_gets_the_configured_budget(budget, per_stream, whole):
    cfg = config(f"{{{budget}, {PERSON}, max_streams_per_person: 2}}")
    assert cfg.dynamic_config().budget == cfg.stream_budget()
    got = cfg.stream_budget()
    assert type(got) is type(per_stream) and vars(got) == pytest.approx(vars(per_stream), rel=1e-12)
    assert cfg.target_budget() == whole  # what the ledger charges (pipelines/ledger/launch.py)
    # the streams' ledgers add up to the whole budget's, never more (rho under Gaussian noise, else eps)
    plain = config(f"{{{budget}, {PERSON}, max_streams_per_person: per_stream}}")
    led, full = cfg.ledger_budget(), plain.ledger_budget()
    total = 2 * (led.rho if isinstance(led, ZCDP) else led.epsilon)
    assert total <= (full.rho if isinstance(full, ZCDP) else full.epsilon) * (1 + 1e-12)
    assert total == pytest.approx(full.rho if isinstance(full, ZCDP) else full.epsilon, rel=1e-9)
    assert cfg.privacy_unit.max_streams == 2 and cfg.unit_text().endswith(", in at most 2 streams")
    manifest = release_manifest(cfg, ReleaseIdentity("rel-streams-01", cfg.release_digest()))
    assert manifest["budget_per_stream"] == pytest.approx(dict(vars(per_stream)), rel=1e-12)
    assert manifest["budget_per_person_all_streams"] == {k: v for k, v in cfg.target_budget().__dict__.items()}
    assert "across all streams: admitted in at most 2 streams" in manifest["privacy_unit_protects"]
    plan = plan_report(cfg, "x.yaml")
    assert plan["budget_per_stream"] == pytest.approx({k: v for k, v in vars(per_stream).items() if v}, rel=1e-12)
    assert plan["budget_per_person"] == {k: v for k, v in cfg.target_budget().__dict__.items() if v}
    assert "per person across all streams" in render(plan)
    # without the limit: the per-stream budget is the configured one, and nothing new in the manifest
    assert plain.stream_budget() == plain.target_budget() == whole
    assert "budget_per_person_all_streams" not in release_manifest(plain, ReleaseIdentity("rel-streams-02"))
    assert plain.release_digest() != cfg.release_digest()


@pytest.mark.parametrize(
    "privacy, streams, message",
    [
        (f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: 3}}", None, "more than the 2 declared streams"),
        (f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: 2}}", "{}", "more than the 1 declared stream "),
        (f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: 0}}", None, "max_streams_per_person"),
        (
            "{epsilon: 1.0, unit: entry, max_mutations_per_entry: 2, max_streams_per_person: 1}",
            None,
            "set unit: person",
        ),
        (f"{{epsilon: 1.0e-6, {PERSON}, max_streams_per_person: 2}}", None, "below the 1e-06"),
        (
            f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: 1}}",
            "{field: region, keys: open, max_keys: 4, max_keys_per_person: 1}",
            "bounds a person with streams.max_keys_per_person",
        ),
    ],
)
def test_a_limit_that_cannot_hold_is_refused_before_the_run(privacy, streams, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        config(privacy, streams or "{field: region, keys: [eu, us]}")


def test_with_several_streams_the_person_config_must_say_who_is_protected():
    """Unit person over two declared streams: without ``max_streams_per_person`` the run is refused, naming the
    two choices (a person could book in both regions and be protected by twice the budget without anyone having
    chosen it); ``per_stream`` states that choice and changes nothing else (no limit, the whole budget a stream,
    the digest of a configuration without the key); one declared stream or open keys need no choice."""
    with pytest.raises(
        ConfigError,
        match=r"required when privacy.unit is person and 2 streams are declared.*"
        r"1 to 2.*or per_stream .*protected by 2 times the budget",
    ) as err:
        config(f"{{epsilon: 1.0, {PERSON}}}")
    assert "privacy.max_streams_per_person" in str(err.value)
    each = config(f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: per_stream}}")
    assert each.max_streams_per_person is None and each.privacy_unit.max_streams is None
    assert each.stream_budget() == each.target_budget() == PureDP(1.0)
    assert "max_streams_per_person" not in repr(each._unit_digest_tail())
    assert not each.unit_text().endswith("streams")
    # the guarantee line (summary, plan, manifest) says it was chosen and what it protects a person in both by
    assert unit_statement(each).endswith(
        "per stream, as chosen (privacy.max_streams_per_person: per_stream): a person in all 2 streams is "
        "protected by 2 times the budget"
    )
    assert "across all streams" in unit_statement(config(f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: 1}}"))
    one = config(f"{{epsilon: 1.0, {PERSON}}}", "{field: region, keys: [eu]}")
    assert one.max_streams_per_person is None
    assert "as chosen" not in unit_statement(one) and unit_statement(one).startswith("privacy unit person")
    open_keys = "{field: region, keys: open, max_keys: 4, max_keys_per_person: 1}"
    opened = config(f"{{epsilon: 1.0, {PERSON}}}", open_keys)
    assert opened.max_streams_per_person is None
    # open keys bound a person's keys over the whole release: the guarantee line says so, not "per stream"
    assert unit_statement(opened).endswith("in at most the keys streams.max_keys_per_person allows")
    assert "across the whole release" in unit_statement(opened) and "per stream" not in unit_statement(opened)
    with pytest.raises(ConfigError, match="bounds a person with streams.max_keys_per_person"):
        config(f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: per_stream}}", open_keys)
    for bad in ("each", "per-stream", 1.5, True):
        with pytest.raises(ConfigError, match="an integer >= 1 .*or per_stream"):
            config(f"{{epsilon: 1.0, {PERSON}, max_streams_per_person: {bad}}}")


def test_an_open_histogram_refuses_the_limit_naming_its_own():
    text = (
        f"privacy: {{epsilon: 1.0, delta: 1.0e-9, {PERSON}, max_streams_per_person: 1}}\n"
        "time: {field: time, tick_seconds: 600, origin: 0, end: 6000}\n"
        "streams: {field: region, keys: [eu, us]}\n"
        "queries:\n  - {name: by_carrier, type: histogram, field: carrier, domain: open, max_cells: 10, "
        "max_cells_per_person: 1}\n"
        "source: {type: file, path: data/demo_person.jsonl, format: jsonl}\n"
    )
    with pytest.raises(ConfigError, match=r"bounds a person with queries\[\]\.max_cells_per_person"):
        parse_config(yaml.safe_load(text))
    # without it: the guarantee line names the person's cells, over (stream, cell) pairs of the whole release
    line = unit_statement(parse_config(yaml.safe_load(text.replace(", max_streams_per_person: 1", ""))))
    assert "across the whole release" in line and line.endswith("the cells queries[].max_cells_per_person allows")


# ---------------------------------------------------------------------------
# The exact privacy loss of a whole release over two streams
# ---------------------------------------------------------------------------


def _two_stream_loss(budget, n: int):
    """The exact loss (``neighbour_loss``, noise on and off with one key) of each stream's ``auto`` core between
    the inputs with and without the person ``alice``, who does the count's worst lifecycle (4 entries) in both
    streams; the pipeline's share: each core at ``budget / n``; alice's updates through the rule across streams
    (``bound_person_streams``, ``max_streams = n``) first, as the person step does."""
    from test_person_core import QUERIES as CORE_QUERIES
    from test_person_core import T, background, batches, scenario

    from transforms.core.continual.auto import AutoRelease
    from transforms.core.contribution.harness import neighbour_loss
    from transforms.core.foundation.accounting import PrivacyUnit

    unit = PrivacyUnit.person(4, 3, max_streams=n)
    # the pipeline's share (PipelineConfig.stream_budget: stream_share by the mechanism's own ledger)
    share = stream_share(budget, n, lambda b: AutoRelease.ledger_cap(DynamicConfig(CORE_QUERIES, b, unit=unit)))
    alice = {s: scenario("worst", share, 1) for s in ("eu", "us")}
    limit = PersonLimit(4, None, n)
    triples = [
        (s, u.entry_id, (t, i, u.op, u.item, float(t), None)) for s in alice for i, (t, _, u) in enumerate(alice[s])
    ]
    _, decisions = bound_person_streams(None, triples, limit)
    admitted = {(s, v[1]) for s, _, v, reason in decisions if reason is None}
    losses = {}
    for s in ("eu", "us"):
        mine = [u for i, u in enumerate(alice[s]) if (s, i) in admitted]
        bg = background(seed=1 if s == "us" else 0)
        core = lambda s=s: AutoRelease(DynamicConfig(CORE_QUERIES, share, unit=unit), stream=s, end_tick=T)  # noqa: E731
        losses[s] = neighbour_loss(core, batches(mine, bg), batches(bg), end_tick=T).loss
    return losses, admitted


@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.05), ApproxDP(1.0, 1e-6)], ids=["pure", "zcdp", "approx"])
def test_the_whole_release_over_two_streams_is_within_the_budget_for_a_person_in_both(budget):
    """``n = 2``: alice in both streams, each at half the budget: the two streams' losses add up to at most the
    budget (sequential composition over the streams), and each reaches its count's share (the bound is exact, so
    a stream run at the whole budget, the limit's share skipped, would add up to about twice that). ``n = 1``: her
    second stream's updates are refused, that stream's outputs do not depend on her (loss 0), and the first is
    within the whole budget. Under (eps, delta) (auto's tight Gaussian account) the streams' rhos (the lattice
    proof's) add up to the account of (eps, delta), so the whole release is (eps, delta) by the analytic curve,
    though each stream states (0.69, delta): basic composition's (0.5, delta / 2) each would be valid and noisier."""
    from test_person_core import ledger_rho_or_eps

    losses, admitted = _two_stream_loss(budget, 2)
    assert {s for s, _ in admitted} == {"eu", "us"}
    pure, approx = isinstance(budget, PureDP), isinstance(budget, ApproxDP)
    total = sum(
        loss.epsilon if pure else loss.rho_lattice if approx else loss.rho + loss.epsilon**2 / 2
        for loss in losses.values()
    )
    assert total <= ledger_rho_or_eps(budget) * (1 + 1e-9)
    if approx:  # the composed loss read as one release's: within (eps, delta) by the tight account's route
        assert PrivacyLoss(rho_lattice=total, rho=sum(x.rho for x in losses.values())).within(budget)
    for loss in losses.values():  # each stream's count at its share of half the budget, exactly
        rho, eps = loss.by_query["n"]
        assert (eps if pure else rho) == pytest.approx(ledger_rho_or_eps(budget) / 2 / 3, rel=2e-3)
    losses, admitted = _two_stream_loss(budget, 1)
    assert {s for s, _ in admitted} == {"eu"} and losses["us"].differing == 0
    assert losses["eu"].within(budget) and losses["eu"].differing > 0


# ---------------------------------------------------------------------------
# In memory, without Beam: PersonStreamsBounder ahead of each stream's core
# ---------------------------------------------------------------------------


def test_in_memory_across_streams_equals_the_rule_and_releases_the_truth_over_the_admitted_entries():
    """``PersonStreamsBounder`` (the in-memory rule across streams, tick by tick, its state through its encoding)
    decides as ``bound_person_streams`` over the whole input when each tick's updates have no finer order; each
    stream's core, fed the admitted updates as ``(person, Update)`` pairs, re-admits them all and, noise off,
    releases the truth over them."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_person_beam import QUERIES as BEAM_QUERIES
    from test_person_beam import person_workload

    from transforms.core import NoiseSource, Update
    from transforms.core.continual.auto import AutoRelease
    from transforms.core.contribution import PersonStreamsBounder
    from transforms.core.foundation.accounting import PrivacyUnit
    from transforms.core.foundation.state import from_plain, to_plain

    streams, limit = ("a", "b", "c"), PersonLimit(2, None, 2)
    recs = person_workload(streams, n=300, seed=5, ids=4)
    by_tick: dict = {}
    for r in recs:
        by_tick.setdefault(int(r.event_time) // 5 + 1, []).append(r)
    bounder = PersonStreamsBounder(limit)
    unit = PrivacyUnit.person(2, 3, max_streams=2)
    cfg = DynamicConfig(BEAM_QUERIES, PureDP(1.0), unit=unit)  # a count and a 4-cell histogram
    cores = {s: AutoRelease(cfg, stream=s, end_tick=max(by_tick)) for s in streams}
    got, truth, compared = [], {s: {} for s in streams}, 0
    for tick in sorted(by_tick):
        items = [(r.stream, r.person, Update(r.op, r.entry_id, r.item)) for r in by_tick[tick]]
        accepted, refused = bounder.bound_tick(tick, items)
        bounder = from_plain(to_plain(bounder))  # the in-memory state round trip
        got += [(s, p, u.entry_id, u.op, None) for s, p, u in accepted]
        got += [(s, p, u.entry_id, u.op, reason) for (s, p, u), reason in refused]
        # the registry's canonical order, the rule's within a tick (op rank, item, entry id)
        accepted.sort(key=lambda x, t=tick: order_key(x[2].entry_id, (t, 0, x[2].op, x[2].item, float(t), None)))
        for s in streams:
            res = cores[s].process_tick(tick, [(p, u) for t, p, u in accepted if t == s], NoiseSource.disabled())
            # the core re-admits every admitted entry (its registry may still refuse an update: a re-insertion)
            assert not [x for x in res.rejections if x.reason == "contribution_bounded"]
            for t, p, u in accepted:  # the truth: alive admitted entries (the registry's other refusals aside)
                if t == s and not any(x.update == (p, u) for x in res.rejections):
                    key = (p, u.entry_id)
                    truth[s][key] = u.op != "delete"
            (answer,) = [a for a in res.answers if a.query == "n"] or [None]
            if answer is not None:
                assert answer.estimate[0] == sum(truth[s].values()), (s, tick)
                compared += 1
    # the rule over the whole input, each tick's updates in the in-memory order (no seq or event time)
    want = []
    for person in {r.person for r in recs}:
        mine = [(r, int(r.event_time) // 5 + 1) for r in recs if r.person == person]
        triples = [(r.stream, r.entry_id, (t, 0, r.op, r.item, float(t), None)) for r, t in mine]
        _, decisions = bound_person_streams(None, triples, limit)
        want += [(s, person, e, v[2], reason) for s, e, v, reason in decisions]
    assert sorted(map(repr, got)) == sorted(map(repr, want))
    assert compared >= 3 * 3  # every stream's releases
    assert any(x[4] == CONTRIBUTION_BOUNDED for x in got) and len({x[0] for x in got if x[4] is None}) == 3
    with pytest.raises(ValueError, match="needs a limit with max_streams"):
        PersonStreamsBounder(PersonLimit(2))


def test_the_share_follows_the_mechanisms_calibration_option():
    """``net_change`` with ``calibration: zcdp`` keeps a zCDP ledger under (eps, delta) (not the tight account):
    the share is solved on that ledger, so the two streams' ledgers add up to the whole budget's, in it."""
    from transforms.core.continual.net_change import NetChangeRelease

    text = (
        f"privacy: {{epsilon: 1.0, delta: 1.0e-6, {PERSON}, max_streams_per_person: 2}}\n"
        "time: {field: time, tick_seconds: 600, origin: 0, end: 6000}\n"
        "streams: {field: region, keys: [eu, us]}\n"
        "mechanism: {kind: net_change, calibration: zcdp}\n"
        "queries:\n  - {name: active, type: count}\n"
        "source: {type: file, path: data/demo_person.jsonl, format: jsonl}\n"
    )
    cfg = parse_config(yaml.safe_load(text))
    options = cfg.mechanism_options()
    share = NetChangeRelease.ledger_cap(cfg.dynamic_config(), options)
    whole = NetChangeRelease.ledger_cap(cfg.core_config_at(cfg.target_budget()), options)
    assert type(share) is ZCDP and 2 * share.rho == pytest.approx(whole.rho, rel=1e-9) and 2 * share.rho <= whole.rho
    assert cfg.stream_budget().epsilon == pytest.approx(0.69053, abs=1e-5)  # the tight account's share: 0.68891
