"""Property tests for the crash-killed mutants of group e (``transforms/core/families/``, ``forecast.py``,
``mechanisms.py``, ``protocol.py``) that the differential trace (``benchmarks/mutation_trace.py``, session 45) showed
returning a wrong value, or leaving a wrong state, where they do not raise. Each asserts a property (never a pinned
value) and names in its docstring the mutants it kills, each confirmed with ``python -m benchmarks.mutation_fast
confirm`` (passes unmutated, fails on the mutant by an assertion; the broken twin is the mutant itself). The
judgements of every non-``raises`` mutant: ``benchmarks/mutation_trace_45e.py``. Fast: in memory, no Beam."""

from __future__ import annotations

import copy
import json

import pytest

from transforms.core import MECHANISMS, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.families.changelog import folds
from transforms.core.families.changelog_orders import generate, to_lines
from transforms.core.families.growing import (
    BBImproverOptions,
    BBImproverRelease,
    BBSchedulerOptions,
    BBSchedulerRelease,
    PMWGOptions,
    PMWGRelease,
)
from transforms.core.families.local_dp import (
    RandomizedResponseCollector,
    RROptions,
    bernstein_bound,
    in_memory,
    simulate,
)
from transforms.core.families.rr_client import (
    WEIGHT_BITS,
    AtMostK,
    Report,
    RRClient,
    SurveyDesign,
    randomize,
    symbol_of,
)
from transforms.core.foundation.accounting.units import PrivacyUnit
from transforms.core.foundation.state import StateError, restore

KEY = bytes(range(32))


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def test_each_constraint_alone_gives_its_theorems_fold():
    """Kills ``folds._min_fold__mutmut_2`` (the folds that are None kept instead of the given ones: a fold of
    None for one constraint alone). With only at most k mutations, or only mutations within B ticks, each fold
    is its theorem's count of the nodes one entry can affect: DCR k or ceil(B / W) + 1 (Thm 4.1, Cor. 4.1), HDCR
    h k or the per-layer sum (Thm 4.3), SWCR k ceil(W / P) or ceil((B + W) / P) (Thms 4.5, 4.6)."""
    for w in (1, 2, 5):
        for k in (1, 3):
            assert folds.dcr_fold(k=k, w=w) == k
            for c, h in ((2, 1), (3, 4)):
                assert folds.hdcr_fold(h, c, k=k, w=w) == h * k
            for p in (1, 2, 7):
                assert folds.swcr_fold(w, p, k=k) == k * _ceil(w, p)
        for b in (0, 1, 9):
            assert folds.dcr_fold(b=b, w=w) == _ceil(b, w) + 1
            for c, h in ((2, 1), (3, 4)):
                assert folds.hdcr_fold(h, c, b=b, w=w) == sum(_ceil(b, c**i * w) + 1 for i in range(h))
            for p in (1, 2, 7):
                assert folds.swcr_fold(w, p, b=b) == _ceil(b + w, p)


def _loads(line: str):
    try:
        return json.loads(line)
    except ValueError:
        return None


def test_each_orders_line_is_its_record_as_json():
    """Kills ``changelog_orders.to_lines__mutmut_6`` (the key separator ``XX: XX``: lines no JSON reader takes, a
    bundled input the pipelines would dead-letter line by line). Every line parses back to its record."""
    records = generate(orders=40, days=10.0, seed=3)
    lines = to_lines(records)
    assert len(lines) == len(records)
    assert [_loads(x) for x in lines] == records


def _growing(name: str, config: DynamicConfig, **kw):
    if name == "bb_scheduler":
        return BBSchedulerRelease(config, stream="s", options=BBSchedulerOptions(n0=10, eta=0.5), **kw)
    if name == "bb_improver":
        return BBImproverRelease(config, stream="s", options=BBImproverOptions(n0=10, step=10), **kw)
    return PMWGRelease(config, stream="s", options=PMWGOptions(n0=10), **kw)


@pytest.mark.parametrize("name", ["bb_scheduler", "bb_improver", "pmwg"])
@pytest.mark.parametrize("noise_on", [False, True])
def test_growing_closes_are_the_release_ticks_and_node_outputs_name_their_query(name, noise_on):
    """Kills ``growing.base.GrowingRelease._after_close__mutmut_45`` (``None`` recorded as the tick of a close)
    and ``GrowingRelease._log__mutmut_9`` (every node output released with query ``None``). Without periods a
    growing release answers at its epoch closes only: each call's ``closes`` are exactly the ticks of its
    answers; a size release (``n_hat``) names no query (``""``), a static re-run names the query set it answers."""
    config = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
    core = _growing(name, config, emit_nodes=True)
    noise = NoiseSource(KEY) if noise_on else NoiseSource.disabled()
    n_closes = 0
    for t in range(1, 80):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (0, j % 3)) for j in range(2)], noise)
        assert res.closes == sorted({a.tick for a in res.answers}), t
        n_closes += len(res.closes)
    assert n_closes >= 2 and not res.rejections
    outs = core.drain_node_outputs()
    assert any(o.kind == "n_hat" for o in outs)
    for o in outs:
        assert o.query in ({""} if o.kind == "n_hat" else {"n", "h"}), (o.kind, o.query)


# ---------------------------------------------------------------------------
# randomized response: the client's response law, the collector's counts, end and state
# ---------------------------------------------------------------------------


def test_the_randomized_response_law_is_p_for_the_truth_and_q_for_each_other_symbol():
    """Kills ``rr_client.randomize__mutmut_6`` (the bin index ``(u + P) // Q`` for ``(u - P) // Q``: most words
    map past the mutation space, the rest onto a few symbols only: some outputs impossible under one truth and
    likely under another, an unbounded privacy loss where the collector drops the out-of-range reports). The
    law (``docs/local_dp.md``): the 64-bit word ``u`` below ``P`` keeps the true symbol; ``[P, 2^64)`` is cut
    into ``m - 1`` bins of exactly ``Q`` words (``P + (m - 1) Q = 2^64``), one for each other symbol, so each
    has probability exactly ``q``; checked at both ends of every bin."""
    for z, eps, delta in ((2, 1.0, 0.0), (3, 0.3, 1e-6)):
        d = SurveyDesign.from_total(z, eps, delta, AtMostK(1))
        m, keep, other = d.num_symbols, d.keep_weight, d.other_weight
        assert keep + (m - 1) * other == 1 << WEIGHT_BITS
        for s in range(m):
            assert randomize(s, d, lambda bits: 0) == s
            assert randomize(s, d, lambda bits, u=keep - 1: u) == s
            outs = []
            for j in range(m - 1):
                lo, hi = keep + j * other, keep + (j + 1) * other - 1
                first, last = randomize(s, d, lambda bits, u=lo: u), randomize(s, d, lambda bits, u=hi: u)
                assert first == last, (s, j)
                outs.append(first)
            assert sorted(outs) == [x for x in range(m) if x != s], (z, s, outs)


def _rr_config(eps: float = 2.0):
    return DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(eps))


def test_a_collectors_release_counts_its_reports_and_bounds_them_by_bernstein():
    """Kills ``local_dp.RandomizedResponseCollector._node__mutmut_12`` (a node's report count subtracted: a
    release stating -n reports, negative variances, and a Bernstein bound at -n that is smaller than the true
    one where its square root exists: below about 144 reports at eps 16). Each release's ``reports`` is the
    number of reports summed into its estimate (every node so far, direct summation) and ``change_reports`` the
    period's; its bounds are the module's Bernstein bound at those counts, and the estimate is (#new - #old) /
    (p - q) per cell."""
    # eps 16: at -n reports the mutant's bound sqrt((b L / 3)^2 - 2 n V1 L) still exists (n < 144): silent
    coll = RandomizedResponseCollector(_rr_config(16.0), options=RROptions(), end_tick=6)
    d = coll.design
    m = d.num_symbols
    total = 0
    for t, n_new in ((1, 3), (2, 1), (4, 5)):
        counts = [0] * m
        counts[symbol_of(None, 1, 3)] = n_new  # n_new insertions of answer 1
        counts[symbol_of(None, None, 3)] = 2  # two unchanged entries
        rels = coll.apply(t, {0: counts})
        rel = rels[-1]
        total += n_new + 2
        assert rel.tick == t and rel.reports == total and rel.change_reports == n_new + 2
        assert rel.error_bound == bernstein_bound(d, total, coll.config.beta) > 0
        assert rel.change_bound == bernstein_bound(d, n_new + 2, coll.config.beta)
        assert all(v >= 0 for v in rel.variance + rel.change_variance)
        gap = float(d.p - d.q)
        assert rel.change[1] == pytest.approx(n_new / gap, rel=1e-12)
        assert all(r.reports == total - n_new - 2 for r in rels[:-1])  # periods without reports


def test_a_collector_releases_up_to_its_end_and_then_stops():
    """Kills ``local_dp.RandomizedResponseCollector.__init____mutmut_23`` (the configured end forgotten: releases
    every period for ever, past the release's public end). A collector with ``end_tick`` 6 advanced to 100
    releases periods 1-6 only, is finished, and has nothing more to wake for."""
    coll = RandomizedResponseCollector(_rr_config(), options=RROptions(), end_tick=6)
    rels = coll.advance(100)
    assert [r.tick for r in rels] == [1, 2, 3, 4, 5, 6]
    assert coll.finished and coll.next_wake is None and coll.last_tick == 6
    assert coll.advance(200) == []


def test_a_collectors_state_names_its_configuration_and_holds_its_partial_sums():
    """Kills ``local_dp.RandomizedResponseCollector.to_state__mutmut_7`` (the state's digest taken over no
    configuration: a checkpoint that can never be restored under its own) and ``to_state__mutmut_19`` (an
    empty body: the partial sums lost). The state names the digest of the configuration, options and end it was
    written under (another configuration's differs), and its body restores to a collector with the same partial
    sums and tick, which continues exactly as the uninterrupted one."""
    opts = RROptions(max_mutations=2, aggregation="hdcr", layers=3)
    cfg = _rr_config()
    coll = RandomizedResponseCollector(cfg, options=opts, end_tick=12)
    sim = simulate(coll.design, 30, 12, seed=5)
    early = [(e, r) for e, r in sim.reports if r.period <= 5]
    in_memory(coll, early, 5)
    state = copy.deepcopy(coll.to_state())  # a copy: the state's partial sums are the collector's (see below)
    assert state["mechanism"] == "randomized_response"
    assert state["config"] == RandomizedResponseCollector.state_digest(cfg, opts, 12)
    assert state["config"] != RandomizedResponseCollector.state_digest(_rr_config(3.0), opts, 12)
    body = restore(copy.deepcopy(state["body"]))  # a copy: two restores of one plain state share its lists
    assert type(body) is RandomizedResponseCollector
    assert body.partial == coll.partial and body.last_tick == coll.last_tick == 5
    again = RandomizedResponseCollector.from_state(cfg, state, options=opts, end_tick=12)
    late = [(e, r) for e, r in sim.reports if r.period > 5]
    assert in_memory(again, late, 12) == in_memory(coll, late, 12)


def test_a_collectors_state_is_a_snapshot_that_its_run_going_on_does_not_change():
    """A product defect the mutants' trace led to (fixed in ``local_dp.py``; this fails on the code before it):
    the collector's partial sums were declared a *plain* state field, which ``state.to_plain`` stores as a
    shallow copy because a plain field's elements must be immutable, but they are lists the collector adds to in
    place. So ``to_state()`` returned the live sums: a state taken in memory changed as the collector went on,
    and a collector restored from a state dict went on adding into the caller's dict (the Beam path encodes the
    state at once and was not affected). A state is a snapshot: unchanged by the run going on, unchanged by a
    run restored from it, and it restores to a collector that continues exactly as the uninterrupted one."""
    opts = RROptions(max_mutations=2, aggregation="hdcr", layers=3)
    cfg = _rr_config()
    coll = RandomizedResponseCollector(cfg, options=opts, end_tick=12)
    sim = simulate(coll.design, 30, 12, seed=5)
    in_memory(coll, [(e, r) for e, r in sim.reports if r.period <= 5], 5)
    state = coll.to_state()
    frozen = copy.deepcopy(state)
    late = [(e, r) for e, r in sim.reports if r.period > 5]
    again = RandomizedResponseCollector.from_state(cfg, state, options=opts, end_tick=12)
    continued = in_memory(again, late, 12)
    assert state == frozen  # a run restored from the state leaves it as it was
    assert in_memory(coll, late, 12) == continued  # the uninterrupted run: the same releases
    assert state == frozen  # the run going on leaves it as it was
    assert in_memory(RandomizedResponseCollector.from_state(cfg, state, options=opts, end_tick=12), late, 12) == (
        continued
    )


# ---------------------------------------------------------------------------
# the protocol: a state names the release it was written under; a plan states its calibration
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dcr", "bb_scheduler", "net_change"])
def test_a_periodic_releases_state_names_its_period_and_is_refused_under_another(name):
    """Kills ``protocol.ContinualRelease.to_state__mutmut_14`` (the state's digest taken without ``every_ticks``:
    a periodic release's checkpoint that its own configuration refuses, and that a release without periods, a
    different release, would accept). The state names the digest of the configuration, options, end and period
    it was written under; restored under them it continues; under another period it is refused."""
    spec = MECHANISMS[name]
    options = spec.options(**spec.checks.options)
    config = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(1.0))
    core = spec.core_cls(config, stream="s", end_tick=40, every_ticks=5, options=options)
    noise = NoiseSource(KEY)
    for t in range(1, 12):
        core.process_tick(t, [Update("insert", f"e{t}", (t % 3,))], noise)
    state = core.to_state()
    assert state["config"] == spec.core_cls.state_digest(config, options, 40, 5)
    again = spec.core_cls.from_state(config, state, options=options, end_tick=40, every_ticks=5)
    assert again.last_tick == core.last_tick
    for other in (None, 10):
        with pytest.raises(StateError):
            spec.core_cls.from_state(config, state, options=options, end_tick=40, every_ticks=other)


@pytest.mark.parametrize("name", ["fully_dynamic", "two_stream_baseline", "bb_scheduler", "pmwg"])
@pytest.mark.parametrize("unit", ["entry", "person"])
def test_a_plan_under_a_group_unit_states_how_each_query_sets_noise_is_calibrated(name, unit):
    """Kills ``protocol.ContinualRelease.plan__mutmut_13`` (the plan's calibrations dropped: the printed and
    recorded plan of an entry- or person-level release no longer says that its noise is scaled for group
    privacy over g updates, nor by how much). The plan's entry carries exactly the mechanism's calibrations
    (one per query set, non-empty under a group unit) and its text states each."""
    spec = MECHANISMS[name]
    options = spec.options(**spec.checks.options)
    u = PrivacyUnit.entry(max_mutations=3) if unit == "entry" else PrivacyUnit.person(max_entries=2, max_mutations=2)
    config = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0), unit=u)
    cal = spec.core_cls.calibrations(config, options, end_tick=100)
    assert len(cal) == 2 and all(c.multiplier > 1 for c in cal)
    (entry,) = spec.plan(config, options, end_tick=100)
    assert entry.calibrations == cal
    text = entry.text()
    assert all(c.text() in text for c in cal)


@pytest.mark.parametrize("track_loss", [False, True])
def test_a_frozen_client_never_sends_the_refused_mutation(track_loss):
    """Kills ``rr_client.RRClient.report__mutmut_10`` (``on_exceed="freeze"`` reporting the answer None, a
    deletion, instead of the last accepted answer: a mutation beyond the constraint sent, the entry's loss past
    its fold bound; raised only where the client keeps a ledger, silent in the simulator's clients, which keep
    none). At most one mutation, the truth always kept (``randbits`` 0): after the insertion, a refused change
    reports "no change" at every later node, and the client's answer, mutations and spend stay as they were."""
    d = SurveyDesign.from_total(3, 1.0, 0.0, AtMostK(1))
    client = RRClient(d, randbits=lambda bits: 0, track_loss=track_loss)
    assert client.report(1, 2) == [Report(1, 0, None, 2)]
    spent = client.spent
    for period, want in ((2, 0), (3, None), (4, 1)):
        assert client.report(period, want, on_exceed="freeze") == [Report(period, 0, None, None)], period
        assert client.current == 2 and client.mutations == 1
    assert client.spent == spent


class _SpyNoise(NoiseSource):
    """Records the coordinates of every stream drawn."""

    def __init__(self, key):
        super().__init__(key)
        self.drawn = []

    def stream(self, *coords):
        self.drawn.append(tuple(coords))
        return super().stream(*coords)


def _documented_growing_coordinate(c: tuple) -> bool:
    """docs/growing.md: ``growth, e, threshold | ticks, k | count``; ``rerun, i, name``; ``pmwg, name, phase, p,
    round, r`` (its threshold); ``pmwg, name, query, j, test | answer``; each after the stream."""
    rest = c[1:]
    if rest[0] == "growth":
        return rest[2:] in (("threshold",), ("count",)) or (len(rest) == 4 and rest[2] == "ticks")
    if rest[0] == "rerun":
        return len(rest) == 3
    if rest[0] == "pmwg" and rest[2] == "phase":
        return len(rest) == 7 and rest[4] == "round" and rest[6] == "threshold"
    if rest[0] == "pmwg" and rest[2] == "query":
        return len(rest) == 5 and rest[4] in ("test", "answer")
    return False


def test_every_pmwg_noise_draw_is_at_a_documented_coordinate():
    """Kills ``pmwg.OnlinePMW.answer__mutmut_56`` (the easy/hard test's noise drawn at ``query, j, TEST``: the
    same law, but not the coordinate docs/growing.md states, so a release of a key and release id no longer
    draws the noise its documentation says: counted as an output). Every stream a PMWG release draws, standing
    answers and streamed queries, is at one of the documented coordinates; the test noise is drawn."""
    config = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(4.0))
    core = PMWGRelease(config, stream="s", options=PMWGOptions(n0=10, hard_per_phase=2), end_tick=60)
    noise = _SpyNoise(KEY)
    for t in range(1, 61):
        core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(3)], noise)
        if t % 10 == 0:
            core.answer_query(t, f"q{t}", [1.0, 0.5, 0.0], noise)
    assert noise.drawn and core.started
    assert any(c[-1] == "test" for c in noise.drawn)
    bad = [c for c in noise.drawn if not _documented_growing_coordinate(c)]
    assert not bad, bad[:3]
