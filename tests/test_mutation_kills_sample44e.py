"""Tests written for the survivors of the mutation round of session 44, group e (``transforms/core/families/``,
``forecast.py``, ``mechanisms.py``, ``protocol.py``; ``benchmarks/mutation_fast.py``, seed 20261127, 70 mutants a
module). Each asserts a property of the module (a refusal of bad input, the releases the contract promises, the
accounting, a stated bound), never a pinned value, and names in a comment the mutant(s) it kills (checked with
``python -m benchmarks.mutation_fast confirm NAME TEST``: passes without the mutant, fails with it). Fast: in memory,
no Beam."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from transforms.core import MECHANISMS, ZCDP, ApproxDP, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.continual.consistency import Consistency
from transforms.core.continual.net_change import NetChangeOptions, NetChangeRelease
from transforms.core.families import changelog_orders
from transforms.core.families.changelog import HDCROptions, HDCRRelease, SWCROptions, folds
from transforms.core.families.growing import (
    BBImproverOptions,
    BBSchedulerOptions,
    BBSchedulerRelease,
    PMWGOptions,
    PMWGRelease,
)
from transforms.core.families.growing.base import GrowthTracker
from transforms.core.families.growing.pmwg import OnlinePMW
from transforms.core.families.local_dp import RandomizedResponseCollector, RROptions, report_variance
from transforms.core.families.rr_client import AtMostK, SurveyDesign, TimeBounded, mutation_of
from transforms.core.families.rr_client import fold as rr_fold
from transforms.core.forecast import forecast, release_ticks
from transforms.core.foundation.accounting import Ledger, Scope
from transforms.core.foundation.accounting.units import PrivacyUnit
from transforms.core.foundation.noise import discrete_laplace

KEY = bytes(range(32))


# kills transforms.core.families.changelog.folds.xǁSWCROptionsǁ__post_init____mutmut_6 (a window of None accepted:
# the sliding window has no length)
@pytest.mark.parametrize("field", ["window", "period"])
def test_swcr_options_refuse_a_missing_window_or_period(field):
    with pytest.raises(ValueError, match=f"^{field} must be an integer >= 1, got None"):
        SWCROptions(**{field: None})


# kills transforms.core.families.growing.base.x_check_fraction__mutmut_4 (a bool or a string let through to the
# range test: True taken as eta = 1, a string failing with a TypeError instead of the refusal naming the setting)
@pytest.mark.parametrize(
    "cls,field",
    [(BBSchedulerOptions, "eta"), (BBImproverOptions, "decay"), (PMWGOptions, "eta"), (PMWGOptions, "alpha")],
)
@pytest.mark.parametrize("bad", [True, "0.5", None])
def test_growing_options_refuse_a_fraction_that_is_not_a_number(cls, field, bad):
    if bad is None and field == "eta":
        assert getattr(cls(**{field: None}), field) is None  # eta None: the documented default
        return
    with pytest.raises(ValueError, match=rf"^{field} must be a number in"):
        cls(**{field: bad})


# kills transforms.core.families.growing.base.xǁGrowingReleaseǁ_advance__mutmut_12 (the period ends that fall due
# in an advance without data, after the tracker's last close, released into nowhere)
@pytest.mark.parametrize("name", ["bb_scheduler", "pmwg"])
@pytest.mark.parametrize("noise_on", [False, True])
def test_a_growing_release_answers_every_period_end_when_time_passes_without_data(name, noise_on):
    """Data at ticks 1-3 only, then ``advance`` to the end: a release at every period end (every_ticks = 5),
    each answering every query set, exact with noise off (the contract: a release at every period end, data or
    not)."""
    cls = BBSchedulerRelease if name == "bb_scheduler" else PMWGRelease
    opts = BBSchedulerOptions(n0=40) if name == "bb_scheduler" else PMWGOptions(n0=40)
    config = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(2.0))
    core = cls(config, stream="s", options=opts, end_tick=30, every_ticks=5)
    noise = NoiseSource(KEY) if noise_on else NoiseSource.disabled()
    answers = []
    hist = np.zeros(3)
    for t in (1, 2, 3):
        ups = [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(2)]
        for u in ups:
            hist[u.item[0]] += 1
        answers += core.process_tick(t, ups, noise).answers
    answers += core.advance(30, noise).answers
    assert [a.tick for a in answers] == [5, 10, 15, 20, 25, 30]
    assert all(a.query == "h" for a in answers)
    if not noise_on:
        assert all(a.estimate.tolist() == hist.tolist() and a.error_bound == 0.0 for a in answers)
    assert core.finished


# kills transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_choose_branching__mutmut_47 (a branching
# replaces the best so far only when its score is lower by more than 1: a larger mean variance kept)
@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["laplace", "gaussian"])
@pytest.mark.parametrize("end", [50, 1000])
def test_an_hdcrs_default_branching_has_the_smallest_mean_variance_over_its_horizon(budget, end):
    """docs/changelog.md: without a configured branching, the c in 2..32 (height: the base-c digits of the
    horizon) whose mean number of nodes per current value times the node variance at its fold is the smallest."""
    cfg = DynamicConfig((QuerySet("n", "count"),), budget)
    core = HDCRRelease(cfg, stream="s", end_tick=end)
    samples = sorted({max(1, round(end * (i + 1) / 256)) for i in range(256)})

    def mean_variance(c):
        h = max(1, folds.num_digits(end, c))
        nodes = sum(len(folds.cover(0, p % c ** (h - 1), c, h)) + p // c ** (h - 1) for p in samples) / len(samples)
        return nodes * folds.variance_weight(cfg.noise_kind, sum(folds.hdcr_layer_folds(h, c, 1, None, 1)))

    scores = {c: mean_variance(c) for c in range(2, folds.MAX_BRANCHING + 1)}
    assert core.h == max(1, folds.num_digits(end, core.c))
    assert scores[core.c] <= min(scores.values()) * (1 + 1e-12)


# kills transforms.core.families.growing.base.xǁGrowingReleaseǁ_clamp__mutmut_2 (time past the configured end let
# into the growth tracker: epochs closed, charged and released after the end)
@pytest.mark.parametrize("name", ["bb_scheduler", "pmwg"])
@pytest.mark.parametrize("key", [0, 1, 2])
def test_a_growing_release_decides_nothing_after_its_configured_end(name, key):
    """A release with ``end_tick`` 10 advanced far past it: its last answer is at tick 10, no answer and no charge
    after it (the end is public configuration; nothing is decided after it), and it stops at the end."""
    if name == "bb_scheduler":
        cls, opts = BBSchedulerRelease, BBSchedulerOptions(n0=40)
    else:
        cls, opts = PMWGRelease, PMWGOptions(n0=40)
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(1.0))
    core = cls(cfg, stream="s", options=opts, end_tick=10)
    noise = NoiseSource(bytes([key]) * 32)
    answers = core.process_tick(1, [Update("insert", f"e{j}", (j % 3,)) for j in range(35)], noise).answers
    at_end = cls(cfg, stream="s", options=opts, end_tick=10)
    at_end.process_tick(1, [Update("insert", f"e{j}", (j % 3,)) for j in range(35)], noise)
    answers += core.advance(100_000, noise).answers
    at_end.advance(10, noise)
    assert max(a.tick for a in answers) == answers[-1].tick == 10
    assert core.finished_reason == "ended" and core.last_tick == 10
    assert core.spent == at_end.spent  # advancing past the end charges nothing more than advancing to it


# kills transforms.core.families.changelog_orders.x_main__mutmut_6 (the usage line names another command), _5 (no
# description) and _9 (the whole docstring as the description)
def test_the_orders_generators_help_names_the_command_that_runs_it(capsys):
    with pytest.raises(SystemExit) as exit_:
        changelog_orders.main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m transforms.core.families.changelog_orders [-h] [--out OUT]")
    # then the first paragraph of the module's docstring as the description, and nothing more of it
    description = out.split("\n\n")[1]
    assert description.split() == changelog_orders.__doc__.split("\n\n")[0].split()


# kills transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_bound__mutmut_31 (a PMW re-run's bound stated
# at beta / 3 for its answers: a failure probability of 5 beta / 6, not the configured beta split in halves)
def test_a_pmw_reruns_bound_is_its_alpha_at_half_beta_at_the_public_size_bound_of_half_beta():
    """docs/growing.md: a PMW black box's re-run states ``alpha(beta/2)`` at the public size bound ``n_hat +
    E(beta/2)`` of its own noisy count (a union bound over the two: beta in all)."""
    config = DynamicConfig((QuerySet("r", "pmw", domain_size=4, ranges=True),), PureDP(2.0))
    core = BBSchedulerRelease(config, stream="s", options=BBSchedulerOptions(n0=20, eta=0.5))
    m = core.mechanisms[0]
    runs = []
    release = m.release

    def spy(hist, budget, stream):
        rel = release(hist, budget, stream)
        runs.append((budget, rel))
        return rel

    m.release = spy
    noise = NoiseSource(KEY)
    stated = []
    for t in range(1, 40):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 4,)) for j in range(3)], noise)
        if res.closes:
            stated.append([a.error_bound for a in res.answers if a.tick == res.closes[-1]][-1])
    assert len(runs) == len(stated) >= 2
    beta = config.beta
    for (budget, rel), bound in zip(runs, stated):
        n_up = max(rel.n_hat, 0.0) + rel.n_hat_noise.tail_bound(beta / 2)
        assert bound == pytest.approx(m.alpha(budget, beta / 2, n=n_up, iterations=rel.alpha_params[0]), rel=1e-12)


# kills transforms.core.forecast.x_forecast__mutmut_51 (the forecast's post-processing run without the pipeline's
# consistency: a paired histogram forecast with its raw bound and beta instead of the bound its records state)
@pytest.mark.parametrize("rounded", [False, True])
def test_a_paired_histograms_forecast_states_the_consistent_pairs_bound_and_beta(rounded):
    """A histogram made consistent with a count (no threshold bound): its records state ``max(2 B_h, B_c)`` (+1 when
    rounded) with ``beta_h + beta_c``, and the count ``B_c`` (+0.5 when rounded): the forecast states the same."""
    cfg = DynamicConfig((QuerySet("n"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
    consistency = Consistency((("h", "n"),), round_answers=rounded)
    plain = {(f.tick, f.query): f for f in forecast(NetChangeRelease, cfg, NetChangeOptions(), [4, 8], end_tick=8)}
    post = forecast(NetChangeRelease, cfg, NetChangeOptions(), [4, 8], end_tick=8, consistency=consistency)
    assert {(f.tick, f.query) for f in post} == set(plain)
    for f in post:
        h, n = plain[(f.tick, "h")], plain[(f.tick, "n")]
        b_c = n.error_bound + (0.5 if rounded else 0.0)
        if f.query == "h":
            assert f.error_bound == pytest.approx(max(2 * h.error_bound, b_c) + (1.0 if rounded else 0.0), rel=1e-12)
            assert f.beta == pytest.approx(h.beta + n.beta, rel=1e-12) and not f.plus_tau
        else:
            assert f.error_bound == pytest.approx(b_c, rel=1e-12) and f.beta == n.beta


# kills transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_7 (the refusal of a unit a mechanism does not serve
# names the mechanisms that do not serve it either, as the ones to use)
@pytest.mark.parametrize(
    "name,unit",
    [("dcr", PrivacyUnit.person(2, 3)), ("randomized_response", PrivacyUnit.entry(2))],
    ids=["person", "entry"],
)
def test_a_refused_privacy_unit_names_exactly_the_mechanisms_that_serve_it(name, unit):
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(1.0), unit=unit)
    serving = [n for n, s in MECHANISMS.items() if unit.kind in s.units]
    assert serving and name not in serving
    with pytest.raises(ValueError, match=r"^privacy\.unit: ") as err:
        spec.check(cfg, spec.options())
    listed = str(err.value).split("mechanisms that serve it: ")[1]
    assert listed.split(", ") == serving
    for n in serving:  # each one named does serve it
        MECHANISMS[n].check(cfg, MECHANISMS[n].options(), end_tick=20)


# kills transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_answer__mutmut_44 (a changelog answer's node
# records named "NODE_ANSWER": the recompute, which reads kind node_answer, finds none), _answer__mutmut_25 (their
# level None) and xǁ_ChangelogReleaseǁ_node_coords__mutmut_5 (their coordinates not their node's)
@pytest.mark.parametrize(
    "name,options", [("dcr", {}), ("hdcr", {"branching": 2, "height": 3}), ("swcr", {"window": 3})]
)
def test_a_changelog_answer_is_the_sum_of_its_node_answer_records(name, options):
    """NodeOutput (outputs.py): the answer of a query is the sum of the ``node_answer`` values recorded with it
    (post-processing: ``pipelines/recompute.py`` rebuilds every answer from them)."""
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
    core = spec.core_cls(cfg, stream="s", emit_nodes=True, end_tick=12, options=spec.options(**options))
    noise = NoiseSource(KEY)
    answers, nodes = [], []
    for t in range(1, 13):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(t % 3)], noise)
        answers += res.answers
        nodes += core.drain_node_outputs()
    assert len(answers) == 24
    for a in answers:
        parts = [o.values for o in nodes if o.kind == "node_answer" and (o.tick, o.query) == (a.tick, a.query)]
        assert parts and np.allclose(np.sum(parts, axis=0), a.estimate, rtol=0, atol=1e-9), (a.tick, a.query)
    for o in nodes:  # each record names its node: the layer and index of its noise coordinates
        if o.kind == "node_answer" and name != "swcr":
            assert (o.level, o.node) == (o.coordinates[4], o.coordinates[-1]), o
    released = {o.coordinates for o in nodes if o.kind == "static"}  # a node's record names its release's coordinates
    assert all(o.coordinates in released for o in nodes if o.kind == "node_answer" and "nodes" not in o.coordinates)


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_43 (a query's test and answer noise drawn at
# (..., "QUERY", j, ...): not the documented coordinates, so a replay or a restore by another version draws other noise)
def test_pmwg_draws_only_at_its_documented_coordinates(monkeypatch):
    """docs/growing.md: every noise coordinate starts with the stream and names the epoch (``growth, e, threshold |
    ticks, k | count``) or the query set, phase and round (``pmwg, name, phase, p, round, r``) and the query's index
    (``pmwg, name, query, j, test | answer``); none repeats."""
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(2.0))
    core = PMWGRelease(cfg, stream="s", options=PMWGOptions(n0=6, alpha=0.2), end_tick=40)
    noise = NoiseSource(KEY)
    made, drawn = noise.stream, []

    def stream(*coords):
        drawn.append(coords)
        return made(*coords)

    monkeypatch.setattr(noise, "stream", stream)
    for t in range(1, 41):
        core.process_tick(t, [Update("insert", f"e{t}-{j}", ((t * j) % 3,)) for j in range(3)], noise)
    assert len(set(drawn)) == len(drawn)
    pmwg = [c for c in drawn if c[1] == "pmwg"]
    assert pmwg and {c[1] for c in drawn} == {"growth", "pmwg"} and all(c[0] == "s" for c in drawn)
    queries = [c for c in pmwg if c[3] == "query"]
    assert queries and all(len(c) == 6 and c[2] == "h" and c[5] in ("test", "answer") for c in queries), queries
    tested = sorted(c[4] for c in queries if c[5] == "test")  # the queries' indices: 0, 1, 2, ... in order
    assert tested == list(range(len(tested)))
    rounds = [c for c in pmwg if c[3] != "query"]
    assert rounds and all(c[2:4] == ("h", "phase") and c[5] == "round" and c[7:] == ("threshold",) for c in rounds)


# kills transforms.core.families.local_dp.x_report_variance__mutmut_14 (a report whose true mutation does not change
# the cell given the variance of one that does)
@pytest.mark.parametrize("eps,delta,z", [(1.0, 0.0, 3), (0.3, 1e-6, 4), (4.0, 0.0, 2)])
def test_one_reports_variance_is_the_exact_variance_of_its_contribution_under_the_implemented_response(eps, delta, z):
    """local_dp's module docstring: one report contributes ``f in {-1, 0, 1} / (p - q)`` to a cell, with mean the
    cell's true change and variance ``2 z q / (p-q)^2`` plus ``1/(p-q) - 1`` if its true mutation changes the cell.
    Checked exactly (Fractions) over the implemented response distribution, every true mutation and every cell."""
    d = SurveyDesign(z, eps, delta, AtMostK(1))
    p, q, gap = d.p, d.q, d.p - d.q
    effects = [mutation_of(s, z) for s in range(d.num_symbols)]

    def contribution(s, r):
        old, new = effects[s]
        return Fraction(0) if old == new else (Fraction(new == r) - Fraction(old == r)) / gap

    for true in range(d.num_symbols):
        for r in range(z):
            law = [(p if s == true else q, contribution(s, r)) for s in range(d.num_symbols)]
            mean = sum(w * f for w, f in law)
            var = sum(w * f * f for w, f in law) - mean**2
            assert mean == contribution(true, r) * gap  # unbiased: the true change of cell r
            touches = mean != 0
            assert float(var) == pytest.approx(report_variance(d, touches), rel=1e-9), (true, r)


# kills transforms.core.families.changelog.folds.x_hdcr_layer_folds__mutmut_2 (k not checked: k = 0 gives folds of
# 0, a node budget of share / 0)
@pytest.mark.parametrize("k", [0, -2, True])
def test_the_fold_counts_refuse_a_mutation_limit_below_one(k):
    for call in (
        lambda: folds.hdcr_layer_folds(3, 2, k, 7),
        lambda: folds.hdcr_fold(3, 2, k),
        lambda: folds.dcr_fold(k, 7),
        lambda: folds.swcr_fold(4, 2, k),
    ):
        with pytest.raises(ValueError, match="^k must be an integer >= 1 or None"):
            call()


# kills transforms.core.families.changelog_orders.x_main__mutmut_36 (the command's default period 91 days, not the
# generator's 90: the bundled file is no longer what the command writes by default)
def test_the_orders_command_writes_the_generators_default_output_by_default(tmp_path):
    out = tmp_path / "orders.jsonl"
    assert changelog_orders.main(["--out", str(out)]) == 0
    assert out.read_text() == "\n".join(changelog_orders.to_lines(changelog_orders.generate())) + "\n"


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


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁobserve__mutmut_8 (observe at tick t advances only to
# t - 2 before adding the insertions: a close due at t - 1 is skipped and the halting tick drawn again)
def test_a_growth_trackers_observe_first_lets_time_pass_through_the_tick_before():
    """GrowthTracker.observe(t, n): n insertions at t, no insertion in the ticks since the last call: the same closes
    as advancing through t - 1 first, then observing (data every other tick, noise on)."""
    noise = NoiseSource(KEY)
    a, b = _Owner(4), _Owner(4)
    ta = GrowthTracker(0.5, PureDP(0.5), coords=("s",), scope=Ledger(PureDP(1e9)).root)
    tb = GrowthTracker(0.5, PureDP(0.5), coords=("s",), scope=Ledger(PureDP(1e9)).root)
    for t in range(2, 400, 2):
        ta.observe(t, 1, noise, a)
        tb.advance(t - 1, noise, b)
        tb.observe(t, 1, noise, b)
    assert len(b.closes) >= 20 and any(t % 2 for t in b.closes)  # closes between the data ticks happen
    assert a.closes == b.closes


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_10 (the epochs charged to a scope
# without the documented name "growth")
@pytest.mark.parametrize("name", ["bb_scheduler", "bb_improver", "pmwg"])
def test_a_growing_releases_epochs_are_charged_to_one_parallel_growth_scope(name):
    """GrowthTracker: ``cost`` per epoch to one parallel scope (the epochs' data are disjoint), named ``growth``
    under the ledger's root, at ``(stream, "growth", e)``: its total is one epoch's cost, however many closed."""
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(2.0))
    core = spec.core_cls(cfg, stream="s", end_tick=60, options=spec.options(n0=10))
    noise = NoiseSource(KEY)
    for t in range(1, 61):
        core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(2)], noise)
    if name != "pmwg":  # the re-runs: one sequential scope "reruns" (pmwg's rounds: "pmwg")
        assert core.ledger.root.children["reruns"].kind == Scope.SEQUENTIAL
    growth = core.ledger.root.children["growth"]
    assert growth.kind == Scope.PARALLEL and core.tracker.e >= 3
    assert growth.total.epsilon == pytest.approx(core.tracker.cost.epsilon, rel=1e-12)


# kills transforms.core.families.local_dp.xǁRandomizedResponseCollectorǁ_release__mutmut_14 (a layer whose node ends at
# the tick but received no report: its counts taken as None instead of zero reports)
def test_an_rr_collector_reads_a_layer_without_reports_as_zero_reports():
    """With ``hdcr`` (layers 0 and 1 end at even ticks), counts for layer 0 only: the same release as with layer 1's
    counts given as zeros (no report is zero reports)."""
    cfg = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(8.0))
    opts = RROptions(max_mutations=2, aggregation="hdcr", layers=2)
    one, zeros = RandomizedResponseCollector(cfg, options=opts), RandomizedResponseCollector(cfg, options=opts)
    m = one.design.num_symbols
    for t in range(1, 7):
        counts = {0: [(s * t) % 3 for s in range(m)]}
        got = one.apply(t, counts)
        want = zeros.apply(t, {**counts, **({1: [0] * m} if t % 2 == 0 else {})})
        assert got == want


# kills transforms.core.protocol.xǁContinualReleaseǁapply__mutmut_15 (a ledger refusal during apply raised out of the
# error handler instead of finishing the stream with budget_exhausted)
@pytest.mark.parametrize("name", ["dcr", "net_change", "bb_scheduler"])
def test_a_ledger_refusal_during_apply_finishes_the_stream_with_budget_exhausted(name):
    """protocol.py: a BudgetExceededError during a call finishes the mechanism with ``budget_exhausted`` (one event,
    no exception, nothing released after), so the other streams go on."""
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    opts = spec.options(n0=2) if name == "bb_scheduler" else spec.options()
    core = spec.core_cls(cfg, stream="s", end_tick=20, options=opts)
    core.ledger.charge(core.ledger.budget, ("spent elsewhere",))  # the whole budget is gone
    noise = NoiseSource(KEY)
    res = core.process_tick(1, [Update("insert", f"e{j}", (0,)) for j in range(5)], noise)
    assert res.events == [(1, "budget_exhausted")] and not res.answers
    assert core.finished and core.next_wake is None
    assert core.process_tick(2, [Update("insert", "x", (0,))], noise).answers == []


# kills transforms.core.protocol.xǁContinualReleaseǁ_after_release__mutmut_4 (the end event reported at tick None)
# protocol.py: the end is reported once, as an event at the tick of the release that ends the stream (end_tick with
# periods; without, the first release at or after it)
@pytest.mark.parametrize("name", ["bb_scheduler", "insertion_only", "fully_dynamic", "continual_count"])
@pytest.mark.parametrize("every_ticks", [None, 4])
def test_a_release_reports_its_end_once_at_the_end_tick(name, every_ticks):
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    opts = spec.options(n0=5) if name == "bb_scheduler" else spec.options()
    core = spec.core_cls(cfg, stream="s", end_tick=10, every_ticks=every_ticks, options=opts)
    noise = NoiseSource(KEY)
    events = []
    for t in range(1, 4):
        events += core.process_tick(t, [Update("insert", f"e{t}-{j}", (0,)) for j in range(3)], noise).events
    results = core.run_to_end(noise)
    events += [e for r in results for e in r.events]
    last = max(a.tick for r in results for a in r.answers)  # without periods: the first release at or after the end
    assert last == 10 or (every_ticks is None and last > 10)
    assert events == [(last, "ended")] and core.finished_reason == "ended"


# kills transforms.core.families.changelog.folds.x_ceil_log__mutmut_7 (h steps by 2: a height past the smallest one)
@pytest.mark.parametrize("c", [2, 3, 10])
def test_ceil_log_is_the_smallest_height_whose_span_covers_n(c):
    for n in range(1, 200):
        h = folds.ceil_log(n, c)
        assert h >= 1 and c**h >= n and (h == 1 or c ** (h - 1) < n), (n, c, h)


# kills transforms.core.families.changelog.folds.x__check_shape__mutmut_19 (the refusal of a bad height named
# "HEIGHT"), growing.black_box.xǁBBImproverOptionsǁ__post_init____mutmut_6 (a bad step's refusal names None)
def test_a_bad_height_or_step_is_refused_by_its_own_name():
    for cls in (HDCROptions, SWCROptions):
        with pytest.raises(ValueError, match="^height must be an integer >= 1 or None, got 0"):
            cls(height=0)
    with pytest.raises(ValueError, match="^step must be an integer >= 1, got 0"):
        BBImproverOptions(step=0)


# kills transforms.core.families.changelog_orders.x_main__mutmut_14 (no default output path: the command without
# --out fails instead of writing the bundled file's path)
def test_the_orders_command_writes_to_the_bundled_files_path_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    assert changelog_orders.main(["--orders", "20", "--days", "10", "--seed", "3"]) == 0
    want = changelog_orders.to_lines(changelog_orders.generate(20, 10.0, 3))
    assert (tmp_path / "data" / "changelog_orders.jsonl").read_text() == "\n".join(want) + "\n"


# kills transforms.core.families.growing.base.xǁGrowingReleaseǁ_after_close__mutmut_8 (an epoch's n_hat record
# without its tick)
@pytest.mark.parametrize("name", ["bb_scheduler", "pmwg"])
def test_a_growing_releases_n_hat_records_carry_the_tick_of_their_close(name):
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(2.0))
    core = spec.core_cls(cfg, stream="s", emit_nodes=True, end_tick=40, options=spec.options(n0=8))
    noise = NoiseSource(KEY)
    seen = 0
    for t in range(1, 41):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(2)], noise)
        n_hat = [o for o in core.drain_node_outputs() if o.kind == "n_hat"]
        assert all(o.tick in res.closes for o in n_hat), (t, [o.tick for o in n_hat], res.closes)
        seen += len(n_hat)
    assert seen >= 2


# kills transforms.core.families.rr_client.xǁSurveyDesignǁ__post_init____mutmut_9 (any number taken as a report's
# epsilon) and xǁAtMostKǁ__post_init____mutmut_2 (a bool or a float taken as k)
def test_a_survey_refuses_an_epsilon_outside_0_700_and_a_k_that_is_not_an_integer():
    for eps in (0.0, -1.0, 700.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match=r"^a report's epsilon must be in \(0, 700\]"):
            SurveyDesign(3, eps, 0.0, AtMostK(1))
    for k in (True, 1.5, "2", 0):
        with pytest.raises(ValueError, match="^max_mutations must be an integer >= 1"):
            AtMostK(k)


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_124 (a hard answer's noise the first of two
# draws at its coordinates instead of the one draw: the same law, other values, so a replay draws other noise)
def test_a_pmwg_hard_answer_is_the_true_answer_plus_the_one_draw_at_its_coordinates():
    """docs/growing.md: the hard answer of an integer row is ``true + DLap(1 / eps_b)``, ``eps_b = eps_r / 2``, drawn
    at ``(..., "query", j, "answer")`` (the replay contract: the same key and coordinates, the same noise)."""
    p = OnlinePMW(3, PureDP(1.0), decay=1.0, alpha=0.05, rate=0.0, n0=100, hard_per_phase=1, coords=("t",),
                  scope=Ledger(PureDP(1e9)).root)  # fmt: skip
    p.mix(150.0)
    noise = NoiseSource(KEY)
    est, _, hard = p.answer(np.array([1.0, 0.0, 0.0]), np.array([150, 0, 0]), 0.05, noise, 777.0)
    assert hard
    z = int(discrete_laplace(noise.stream("t", "query", 0, "answer"), 1 / (p.eps_r / 2), 1)[0])
    assert est == 150 + z


# kills transforms.core.protocol.xǁContinualReleaseǁ__init____mutmut_10 (an end at tick 1 refused)
@pytest.mark.parametrize("name", ["net_change", "dcr", "bb_scheduler"])
def test_a_release_may_end_at_tick_one(name):
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = spec.core_cls(cfg, stream="s", end_tick=1, options=spec.options())
    res = core.process_tick(1, [Update("insert", "a", (0,))], NoiseSource.disabled())
    assert [(a.tick, a.estimate.tolist()) for a in res.answers] == [(1, [1.0])] and core.finished
    for bad in (0, -3, True):
        with pytest.raises(ValueError, match="^end_tick must be a tick >= 1 or None"):
            spec.core_cls(cfg, stream="s", end_tick=bad, options=spec.options())


# kills transforms.core.families.growing.pmwg.xǁPMWGReleaseǁ_planned_share__mutmut_3 (a coordinate that is no PMWG
# round given a planned cost when its last field is in 1..hard_per_phase)
@pytest.mark.parametrize("coords", [("pmwg", "h", "phase", 0, "turn", 1), ("pmwg", "h", "stage", 0, "round", 2)])
def test_pmwg_plans_no_cost_for_a_coordinate_that_is_not_one_of_its_rounds(coords):
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(1.0))
    core = PMWGRelease(cfg, stream="s", options=PMWGOptions(n0=10))
    assert core.planned_cost(("s", "pmwg", "h", "phase", 0, "round", 1)).epsilon > 0
    with pytest.raises(ValueError, match="^no planned release at"):
        core.planned_cost(("s", *coords))


# kills transforms.core.families.growing.pmwg.xǁPMWGOptionsǁ__post_init____mutmut_40 (the refusal names another key)
# and rr_client.xǁSurveyDesignǁ__post_init____mutmut_16 (any number taken as a report's delta)
def test_pmwg_rounds_per_phase_and_a_reports_delta_are_refused_by_name():
    for bad in (0, True, 2.5):
        with pytest.raises(ValueError, match="^hard_per_phase must be an integer >= 1"):
            PMWGOptions(hard_per_phase=bad)
    for delta in (-0.1, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"^a report's delta must be in \[0, 1\)"):
            SurveyDesign(3, 1.0, delta, AtMostK(1))


# kills transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_release_node__mutmut_48 (a node's release
# recorded as its round 2: each node's change is released once, in one round)
@pytest.mark.parametrize("name", ["dcr", "hdcr", "swcr"])
def test_a_changelog_nodes_release_is_recorded_as_its_one_round(name):
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = spec.core_cls(cfg, stream="s", emit_nodes=True, end_tick=8, options=spec.options())
    noise = NoiseSource(KEY)
    for t in range(1, 9):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
    records = core.drain_node_outputs()
    static = [o for o in records if o.kind == "static"]
    assert static and all(o.round == 1 for o in records)  # its release and its answers' node records
    assert len({o.coordinates for o in static}) == len(static)  # each node released once


# kills transforms.core.families.rr_client.xǁSurveyDesignǁfrom_total__mutmut_9 (the fold of a time-bounded HDCR survey
# counted with branching 2 whatever its branching: each report gets the share of another survey)
@pytest.mark.parametrize("c", [2, 3, 5])
@pytest.mark.parametrize("constraint", [TimeBounded(7), TimeBounded(2.5), AtMostK(2)])
def test_a_surveys_entry_guarantee_over_all_its_reports_is_the_configured_total(constraint, c):
    """SurveyDesign.from_total: each report gets 1 / fold of the entry's total, fold = Pan's count for the survey's
    own layers and branching; so fold reports compose to the configured (eps, delta) again."""
    d = SurveyDesign.from_total(3, 2.0, 1e-6, constraint, layers=3, branching=c)
    assert d.fold == rr_fold(constraint, 3, c)
    eps, delta = d.entry_guarantee()
    assert eps == pytest.approx(2.0, rel=1e-12) and delta == pytest.approx(1e-6, rel=1e-12)
    assert d.epsilon * d.fold == pytest.approx(2.0, rel=1e-12)


# kills transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_21 (a re-run's delta share
# None: an (eps, delta) ledger, the paper profile's Laplace under ApproxDP, cannot even split it)
@pytest.mark.parametrize("name", ["bb_scheduler", "bb_improver"])
def test_a_black_box_under_an_approx_ledger_charges_every_rerun_its_planned_eps_and_delta(name):
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), ApproxDP(1.0, 1e-6), profile="paper")
    core = spec.core_cls(cfg, stream="s", emit_nodes=True, end_tick=40, options=spec.options(n0=5))
    assert isinstance(core.ledger.budget, ApproxDP)
    noise = NoiseSource(KEY)
    for t in range(1, 41):
        core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(2)], noise)
    reruns = [o for o in core.drain_node_outputs() if o.kind == "static"]
    assert len(reruns) >= 2
    for o in reruns:
        assert o.cost == core.planned_cost(o.coordinates)
    assert core.spent.epsilon <= 1.0 * (1 + 1e-12) and core.spent.delta <= 1e-6 * (1 + 1e-12)


# kills transforms.core.forecast.x__counters__mutmut_15 (a part without counters, auto's PMW part, read for them)
def test_an_autos_forecast_states_no_sd_for_its_pmw_part_and_the_counters_sd_for_the_others():
    spec = MECHANISMS["auto"]
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("r", "pmw", domain_size=4, ranges=True)), PureDP(1.0))
    fs = forecast(spec.core_cls, cfg, spec.options(), [4, 8], end_tick=8)
    assert {(f.tick, f.query) for f in fs} >= {(4, "n"), (8, "n"), (4, "r")}  # r on its part's own schedule
    assert all((f.sd is None) == (f.query == "r") for f in fs)
    assert all(f.sd > 0 and f.error_bound > f.sd for f in fs if f.query == "n")


# kills transforms.core.families.growing.pmwg.xǁOnlinePMWǁanswer__mutmut_96 (the hard-query count steps by 2: the
# potential bound of docs/growing.md is checked against this count)
def test_pmwgs_hard_count_is_the_number_of_answers_it_gave_as_hard():
    p = OnlinePMW(3, PureDP(1.0), decay=1.0, alpha=0.05, rate=0.0, n0=100, hard_per_phase=4, coords=("t",),
                  scope=Ledger(PureDP(1e9)).root)  # fmt: skip
    p.mix(150.0)
    noise = NoiseSource(KEY)
    hard = [p.answer(np.eye(3)[i % 3], np.array([150, 0, 0]), 0.05, noise, 777.0)[2] for i in range(12)]
    assert any(hard) and p.hard == sum(hard)


# kills transforms.core.forecast.x_release_ticks__mutmut_3 (without periods, every other tick taken as a release tick)
def test_release_ticks_are_every_tick_without_periods_and_the_period_ends_with_them():
    assert release_ticks(5, None) == [1, 2, 3, 4, 5]
    assert release_ticks(10, 4) == [4, 8, 10] and release_ticks(8, 4) == [4, 8]


# kills transforms.core.families.growing.base.xǁGrowthTrackerǁ__init____mutmut_2 (a tracker with eps 0 accepted: its
# noise scales 4 / eps are infinite)
def test_a_growth_tracker_refuses_a_budget_of_zero():
    for eps in (0.0, -1.0):
        with pytest.raises(ValueError, match="^the growth tracker needs eps > 0"):
            GrowthTracker(eps, PureDP(1.0), coords=("s",), scope=Ledger(PureDP(1.0)).root)


# kills transforms.core.mechanisms.xǁMechanismSpecǁcheck__mutmut_1 (a release period of 2 ticks assumed when none is
# given: a horizon half the periods of the end accepted)
def test_a_horizon_shorter_than_the_release_is_refused_with_the_default_period_of_one_tick():
    spec = MECHANISMS["net_change"]
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    with pytest.raises(ValueError, match="^mechanism.horizon: 6 runs out before time.end"):
        spec.check(cfg, spec.options(counter="binary_tree", horizon=6), end_tick=10)
    spec.check(cfg, spec.options(counter="binary_tree", horizon=10), end_tick=10)


# kills transforms.core.forecast.x_forecast__mutmut_11 and _6 (the forecast's release run without the configured
# period: bounds of a release every tick instead of every period)
@pytest.mark.parametrize("name", ["net_change", "continual_count"])
def test_a_forecast_with_periods_states_the_bounds_a_real_run_with_those_periods_carries(name):
    """forecast.py: for a data-independent mechanism the forecast bounds are exactly the records' bounds of a run
    with the same configuration (its periods included), whatever the data."""
    spec = MECHANISMS[name]
    cfg = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
    opts = spec.options(counter="binary_tree", horizon=40) if name == "continual_count" else spec.options()
    ticks = release_ticks(24, 4)
    fs = forecast(spec.core_cls, cfg, opts, ticks, end_tick=24, every_ticks=4)
    core = spec.core_cls(cfg, stream="x", end_tick=24, every_ticks=4, options=opts)
    noise = NoiseSource(KEY)
    got = {}
    for t in range(1, 25):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (0, j % 3)) for j in range(t % 4)], noise)
        got.update({(a.tick, a.query): float(a.error_bound) for a in res.answers})
    assert {(f.tick, f.query): f.error_bound for f in fs} == got


# kills transforms.core.families.growing.black_box.xǁ_BlackBoxReleaseǁ_on_close__mutmut_88 (the carried answers'
# bound at beta / 3: between re-runs the stated bound no longer splits beta in halves)
def test_between_reruns_a_black_boxs_bound_is_its_alpha_at_half_beta_plus_the_open_epochs_bound_at_half_beta():
    """docs/growing.md: between re-runs, ``alpha(beta/2)`` of the latest re-run plus ``open_bound(beta/2)`` (the
    insertions since the re-run are those of the open epoch): a union bound, beta in all."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(2.0))
    core = BBSchedulerRelease(cfg, stream="s", every_ticks=1, options=BBSchedulerOptions(n0=10, eta=0.5))
    m = core.mechanisms[0]
    budgets = []
    release = m.release

    def spy(hist, budget, stream):
        budgets.append(budget)
        return release(hist, budget, stream)

    m.release = spy
    noise = NoiseSource(KEY)
    beta, checked = cfg.beta, 0
    for t in range(1, 60):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (0,)) for j in range(2)], noise)
        if budgets and not res.closes:
            (a,) = res.answers
            want = float(m.alpha(budgets[-1], beta / 2)) + core.tracker.open_bound(beta / 2)
            assert a.error_bound == pytest.approx(want, rel=1e-12)
            checked += 1
    assert checked >= 10


# kills transforms.core.families.changelog.releases.xǁ_ChangelogReleaseǁ_choose_branching__mutmut_8 (a branching of 33
# chosen: past MAX_BRANCHING, the largest the options and the docs allow)
@pytest.mark.parametrize("end", [3000])
def test_an_hdcrs_chosen_branching_stays_within_2_and_max_branching(end):
    """A low configured height over a long horizon pushes the best c up: it stops at MAX_BRANCHING (32)."""
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = HDCRRelease(cfg, stream="s", end_tick=end, options=HDCROptions(height=2))
    assert core.c == folds.MAX_BRANCHING and core.h == 2


# kills transforms.core.protocol.xǁContinualReleaseǁ_resolve_persons__mutmut_20 (the person path's static check run as
# if deletions were allowed: a delete of an unknown entry dead-lettered unknown_entry, not deletion_not_supported)
def test_under_a_person_unit_a_release_without_deletions_refuses_every_delete_as_deletion_not_supported():
    spec = MECHANISMS["bb_scheduler"]
    cfg = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), unit=PrivacyUnit.person(2, 1))
    core = spec.core_cls(cfg, stream="s", end_tick=10, options=spec.options(n0=5))
    noise = NoiseSource(KEY)
    assert core.process_tick(1, [("p", Update("insert", "a", (0,)))], noise).rejections == []
    res = core.process_tick(2, [("p", Update("delete", "a", None)), ("q", Update("delete", "b", None))], noise)
    assert [(r.update[0], r.reason) for r in res.rejections] == [
        ("p", "deletion_not_supported"),
        ("q", "deletion_not_supported"),
    ]
