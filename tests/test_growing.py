"""Growing databases (``docs/growing.md``): BBScheduler, BBImprover and PMWG
with private growth, and the query stream in Beam.

* noise off: every re-run answers exactly; the scheduler re-runs at the
  paper's sizes ``ceil(n0 (1 + eta)^i)`` on a public-size stream (one
  insertion per tick), the improver at every growth step;
* budget: over 10^5 growth steps the ledger's total stays within the
  configured budget (and follows the docs' series);
* PMWG: under an adversarial query sequence on a growing database whose
  distribution drifts, the stated bounds hold with frequency >= 1 - beta and
  the answers are within alpha n; the number of hard queries stays within the
  potential bound, and each hard query decreases the potential as the
  multiplicative-weights lemma says (a twin with the wrong sign fails);
* empirical privacy of the easy/hard test's rounds (a twin whose noise does
  not follow the shrinking per-phase budget fails);
* Beam: queries that arrive before, between and after the data get the
  in-memory core's answers (TestStream, streaming DirectRunner).

Statistics (false-failure rates per test): exceedance counts are checked with
an exact binomial tail at 1e-6; the privacy test's per-round losses with
Clopper-Pearson bounds at 1e-6 (Bonferroni over rounds and directions).
"""

from __future__ import annotations

import math
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
import yaml
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER
from scipy import stats
from scipy.special import zeta as scipy_zeta

from transforms.core import (
    ZCDP,
    ApproxDP,
    DynamicConfig,
    NoiseSource,
    PureDP,
    QuerySet,
    ReleaseIdentity,
    Update,
)
from transforms.core.families.growing import (
    BBImproverOptions,
    BBImproverRelease,
    BBSchedulerOptions,
    BBSchedulerRelease,
    OnlinePMW,
    PMWGOptions,
    PMWGRelease,
    run_with_queries,
    scheduler_eta,
)
from transforms.core.foundation.accounting import Ledger, as_vector
from transforms.core.mechanisms import MECHANISMS
from transforms.records import NoiseKey, UpdateRecord
from transforms.spec import StreamSpec

ROOT = Path(__file__).resolve().parents[1]
KEY = bytes(range(32))
REL = ReleaseIdentity("growing-tests")
Q3 = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("lin", "linear", domain_size=3, matrix=((0.5, 0.25, 1.0), (1.0, 0.0, 0.75))),
)
BUDGETS = {"pure": PureDP(1.0), "zcdp": ZCDP(0.5), "approx": ApproxDP(1.0, 1e-6)}


def noise_on(tag="run"):
    return NoiseSource(KEY).for_release(ReleaseIdentity(f"growing-{tag}"))


def random_stream(ticks, per_tick, seed, domains=(1, 4, 3)):
    """Insert-only batches: tick -> [Update], items uniform over the domains."""
    rng = np.random.default_rng(seed)
    out, k = {}, 0
    for t in range(1, ticks + 1):
        n = int(rng.integers(per_tick[0], per_tick[1] + 1))
        out[t] = [Update("insert", f"e{k + i}", tuple(int(rng.integers(d)) for d in domains)) for i in range(n)]
        k += n
    return out


def truth_q3(hists):
    lin = np.asarray(Q3[2].matrix) @ hists[2]
    return {"n": [float(hists[0].sum())], "h": hists[1].astype(float).tolist(), "lin": lin.tolist()}


# ---------------------------------------------------------------------------
# BBScheduler / BBImprover: exact with noise off, the schedule, the budget
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bb_scheduler", "bb_improver"])
@pytest.mark.parametrize("budget", ["pure", "zcdp"])
def test_noise_off_every_rerun_is_exact(name, budget):
    opts = {"bb_scheduler": {"n0": 30, "eta": 0.2}, "bb_improver": {"n0": 30, "step": 25}}[name]
    core = MECHANISMS[name].core_cls(
        DynamicConfig(Q3, BUDGETS[budget]), stream="s", emit_nodes=True, options=MECHANISMS[name].options(**opts)
    )
    noise = NoiseSource.disabled()
    hists = [np.zeros(d, dtype=np.int64) for d in (1, 4, 3)]
    released = 0
    for t, ups in random_stream(300, (0, 9), seed=1).items():
        res = core.process_tick(t, ups, noise)
        for u in ups:
            for k, v in enumerate(u.item):
                hists[k][v] += 1
        want = truth_q3(hists)
        for a in res.answers:
            assert a.tick == t and a.error_bound == 0
            assert a.estimate.tolist() == pytest.approx(want[a.query], abs=1e-6), (t, a.query)
            released += 1
    runs = [n for n in core.drain_node_outputs() if n.kind == "static"]
    assert released == len(runs) and len(runs) >= 3 * 6  # every re-run answered, exactly


def test_scheduler_reruns_at_the_papers_sizes():
    """A public-size stream (one insertion per tick: the size is the tick, the
    paper's model): with noise off the tracker is exact, so re-run i happens
    at size ceil(n0 (1 + eta)^i), and its budget is eps_r eta / (1 + eta)^(i+1)."""
    n0, eta = 50, 0.1
    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = BBSchedulerRelease(config, stream="s", emit_nodes=True, options=BBSchedulerOptions(n0=n0, eta=eta))
    core.ledger.keep_records = True
    noise = NoiseSource.disabled()
    ticks = []
    for t in range(1, 3001):
        ticks += [a.tick for a in core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise).answers]
    sizes = [math.ceil(n0 * (1 + eta) ** i - 1e-9) for i in range(100) if n0 * (1 + eta) ** i <= 3000]
    assert ticks == sizes
    reruns = [r for r in core.ledger.records if r.coordinates[1] == "rerun"]
    for r in reruns:
        i = r.coordinates[2]
        assert r.cost.epsilon == pytest.approx(0.9 * eta / (1 + eta) ** (i + 1), rel=1e-12)
    assert core.spent.epsilon <= 1.0


def test_improver_reruns_at_every_growth_step():
    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = BBImproverRelease(config, stream="s", options=BBImproverOptions(n0=10, step=1))
    noise = NoiseSource.disabled()
    ticks = []
    for t in range(1, 201):
        ticks += [a.tick for a in core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise).answers]
    assert ticks == list(range(10, 201))


def test_scheduler_eta_default_is_the_papers_choice():
    config = DynamicConfig((QuerySet("n", "count"),), PureDP(2.0), beta=0.05)
    core = BBSchedulerRelease(config, options=BBSchedulerOptions(n0=200))
    assert core.eta == pytest.approx((math.log(20) / (1.8 * 200)) ** (1 / 3))
    assert scheduler_eta(1.0, 10**9, 0.05) == 0.05 and scheduler_eta(1.0, 1, 0.05) == 1.0


def _zeta_sum(decay, n):
    return sum(1 / (scipy_zeta(1 + decay) * j ** (1 + decay)) for j in range(1, n + 1))


@pytest.mark.parametrize("budget", ["pure", "zcdp", "approx"])
@pytest.mark.parametrize("name", ["bb_improver", "bb_scheduler"])
def test_total_budget_over_1e5_growth_steps(name, budget):
    """10^5 growth steps (one insertion per tick; the improver re-runs at
    every one, the scheduler at 1.0001^i growth; 10^4 for the zCDP and
    (eps, delta) ledgers): the spend stays within the
    configured budget, equals the docs' series, and no release is refused."""
    cfg = DynamicConfig((QuerySet("n", "count"),), BUDGETS[budget])
    opts = {"bb_improver": BBImproverOptions(n0=1, step=1), "bb_scheduler": BBSchedulerOptions(n0=1, eta=1e-4)}[name]
    core = MECHANISMS[name].core_cls(cfg, stream="s", options=opts)
    noise = NoiseSource.disabled()  # the spend does not depend on the noise; exact re-runs at every step
    events = []
    steps = 100_000 if budget == "pure" else 10_000  # the other currencies: the same series, shorter
    for t in range(1, steps + 1):
        events += core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise).events
    assert not events and not core.finished
    spent, cap = as_vector(core.spent), as_vector(cfg.ledger_budget)
    assert all(s <= c * (1 + 1e-12) for s, c in zip(spent, cap))
    runs = core.runs
    if name == "bb_improver":
        assert runs == steps
        w = _zeta_sum(0.5, runs)
    else:
        assert runs > steps // 2
        q = (1 + 1e-4) ** (2 if isinstance(cfg.ledger_budget, ZCDP) else 1)
        w = 1 - q ** (-runs)  # sum of (q - 1) / q^(i + 1), i < runs
    assert spent[0] == pytest.approx(cap[0] * (0.1 + 0.9 * w), rel=1e-9)


def test_pmwg_total_budget_over_1e5_insertions_with_queries():
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=8),), PureDP(1.0))
    core = PMWGRelease(cfg, stream="s", options=PMWGOptions(n0=100, hard_per_phase=8))
    noise = noise_on("budget")
    rng = np.random.default_rng(3)
    k, events = 0, []
    for t in range(1, 1001):
        ups = [Update("insert", f"e{k + i}", (int(rng.integers(8)),)) for i in range(100)]
        k += 100
        events += core.process_tick(t, ups, noise).events
        core.answer_query(t, f"q{t}", (rng.random(8) < 0.5).astype(float), noise)
    assert not events and core.spent.epsilon <= 1.0 + 1e-12 and core.pmw[0].hard > 0


def test_deletes_and_upserts_are_refused_with_deletion_not_supported():
    for name in ("bb_scheduler", "bb_improver", "pmwg"):
        core = MECHANISMS[name].core_cls(DynamicConfig(Q3, PureDP(1.0)), stream="s")
        assert not core.deletions_allowed and core.deletions_allowed == False  # noqa: E712
        res = core.process_tick(
            1, [Update("insert", "a", (0, 1, 2)), Update("delete", "a"), Update("upsert", "a", (0, 0, 0))], noise_on()
        )
        assert [r.reason for r in res.rejections] == ["deletion_not_supported"] * 2


# ---------------------------------------------------------------------------
# PMWG: accuracy under an adversary, the potential bound
# ---------------------------------------------------------------------------

D_ADV = 16


def adversarial_run(alpha=0.2, eps=8.0, ticks=300, per_tick=400, drift=100, queries=3, update="adaptive", seed=0):
    """A growing database whose distribution drifts (every ``drift`` ticks the
    data move to other cells: adversarial growth) and an adversary that, at
    every step, asks the query of a pool (random 0/1 rows) on which the public
    histogram is currently furthest from the truth (it knows the data)."""
    cfg = DynamicConfig((QuerySet("x", "count", domain_size=D_ADV),), PureDP(eps))
    opts = PMWGOptions(alpha=alpha, n0=2000, hard_per_phase=128, update=update)
    core = PMWGRelease(cfg, stream="s", options=opts)
    noise = noise_on(f"adv{seed}")
    rng = np.random.default_rng(seed)
    pool = (rng.random((300, D_ADV)) < 0.5).astype(float)
    out, k = [], 0
    for t in range(1, ticks + 1):
        center = 3 * (t // drift)
        cells = (center + rng.integers(0, 4, per_tick)) % D_ADV
        ups = [Update("insert", f"e{k + i}", (int(c),)) for i, c in enumerate(cells)]
        k += per_tick
        core.process_tick(t, ups, noise)
        h = core.hists[0]
        p = core.pmw[0]
        for _ in range(queries):
            j = int(np.argmax(np.abs(p.n_hat * (pool @ p.y) - pool @ h)))
            a = core.answer_query(t, f"q{len(out)}", pool[j], noise)
            out.append((t, int(h.sum()), abs(a.answer - float(pool[j] @ h)), a.bound, a.hard))
    return core, out


def binomial_ok(k, n, p, level=1e-6):
    """False iff k exceedances of n are implausible (exact tail < level) at rate p."""
    return stats.binom.sf(k - 1, n, p) >= level


@pytest.mark.statistical
def test_pmwg_accuracy_under_an_adversarial_query_sequence():
    """900 adaptively chosen queries on a database growing to 1.2 x 10^5 with
    a drifting distribution: (a) every answer's stated (1-beta) bound holds
    with frequency >= 1 - beta (binomial tail, 1e-6); (b) once the database
    has reached 4 n0, the answers are within alpha n with frequency >= 1 - beta."""
    beta = 0.05
    core, out = adversarial_run()
    n = len(out)
    over_bound = sum(err > bound for _, _, err, bound, _ in out)
    assert binomial_ok(over_bound, n, beta), (over_bound, n)
    late = [(size, err) for _, size, err, _, _ in out if size >= 4 * core.options.n0]
    over_alpha = sum(err > core.options.alpha * size for size, err in late)
    assert over_alpha <= beta * len(late), (over_alpha, len(late))
    assert core.pmw[0].hard >= 10  # the adversary did force hard queries


def _kl(x, y):
    m = x > 0
    return float(np.sum(x[m] * np.log(x[m] / y[m])))


def test_pmwg_hard_queries_within_the_potential_bound():
    """The paper's update (rate alpha / 6): each hard query lowers RE(x || y)
    by at least mu |x(f) - y(f)| - mu^2 (the multiplicative-weights lemma,
    x the true normalised database at that time), and the number of hard
    queries stays within the potential bound (36 / alpha^2) ln N (1 + sum of
    the mixing weights) (Corollary 7 with growth in epochs)."""
    core, checks = potential_run()
    bad = [c for c in checks if c[0] > -c[1] + 1e-9]
    assert not bad, bad[:3]
    alpha, N = core.options.alpha, D_ADV
    lam = sum(core.lams)
    bound = 36 / alpha**2 * math.log(N) * (1 + lam)
    assert 0 < core.pmw[0].hard <= bound


def potential_run():
    alpha = 0.2
    cfg = DynamicConfig((QuerySet("x", "count", domain_size=D_ADV),), PureDP(1e5))  # noise negligible
    core = PMWGRelease(
        cfg,
        stream="s",
        options=PMWGOptions(alpha=alpha, n0=2000, hard_per_phase=1000, update="paper", growth_fraction=1e-4),
    )
    noise = noise_on("potential")
    rng = np.random.default_rng(7)
    pool = (rng.random((300, D_ADV)) < 0.5).astype(float)
    p, checks, k = core.pmw[0], [], 0
    core.lams = []
    mu = alpha / 6
    for t in range(1, 151):
        cells = (3 * (t // 50) + rng.integers(0, 4, 300)) % D_ADV
        ups = [Update("insert", f"e{k + i}", (int(c),)) for i, c in enumerate(cells)]
        k += 300
        before = p.n_hat
        core.process_tick(t, ups, noise)
        if before > 0 and p.n_hat > before:
            core.lams.append((p.n_hat - before) / p.n_hat)
        h = core.hists[0]
        x = h / h.sum()
        for _ in range(4):
            j = int(np.argmax(np.abs(p.n_hat * (pool @ p.y) - pool @ h)))
            y0 = p.y.copy()
            a = core.answer_query(t, f"q{t}-{_}", pool[j], noise)
            if a.hard:
                gap = abs(float(pool[j] @ x) - float(pool[j] @ y0))
                checks.append((_kl(x, p.y) - _kl(x, y0), mu * gap - mu**2))
    return core, checks


def test_potential_check_catches_a_wrong_sign_twin(monkeypatch):
    """Twin: the update moves the histogram away from the noisy answer."""
    orig = np.sign
    monkeypatch.setattr("transforms.core.families.growing.pmwg.np.sign", lambda v: -orig(v))
    _, checks = potential_run()
    assert any(c[0] > -c[1] + 1e-9 for c in checks)


# ---------------------------------------------------------------------------
# empirical privacy of the easy/hard test's rounds
# ---------------------------------------------------------------------------

PRIV_EPS, PRIV_DECAY, PRIV_ROUNDS, PRIV_RUNS = 2.0, 3.0, 4, 5000


def round_outcomes(side: int, r: int, runs: int):
    """Round r (in phase r - 1, one round per phase) of the test on D (side 0:
    h0 = 560) or its neighbour D' (side 1: one more insertion in cell 0),
    asked the count of cell 0, far above the threshold: the round ends hard
    and releases a noisy answer. Returns (hard, answer >= h0 + 1) per run."""
    h = np.array([560 + side, 440])
    led = Ledger(PureDP(1e9), keep_records=False)
    p = OnlinePMW(
        2, PureDP(PRIV_EPS), decay=PRIV_DECAY, alpha=0.05, rate=0.0, n0=100, hard_per_phase=1, coords=(), scope=led.root
    )
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("growing-privacy"))
    row = np.array([1.0, 0.0])
    out = np.zeros((runs, 2), dtype=bool)
    for i in range(runs):
        p.coords = ("priv", side, r, i)
        p.n_hat = 100.0 * 2 ** (r - 1)  # the public size estimate of phase r - 1
        p.y = np.array([0.5, 0.5])
        p.open, p.phase, p.phase_rounds = False, r - 2, 0
        est, _, hard = p.answer(row, h, 0.05, noise, 1e9)
        out[i] = (hard, hard and est >= 561)
    return out


def privacy_problems(runs=PRIV_RUNS):
    """Rounds 1..R, each a fresh AboveThreshold instance with fresh noise, so
    the event {every round hard with answer >= h0 + 1} has probability the
    product of the rounds' and loss the sum of theirs. Its budget (docs): round
    r (phase r - 1) has eps_r = eps w(r), w(r) = 1/(zeta(1 + decay) r^(1+decay));
    the answer alone (DLap(2 / eps_r)) has loss exactly eps_r / 2 on
    {answer >= h0 + 1}. Problems: a one-sided lower confidence bound on the
    summed loss above the rounds' budget sum, or the summed loss more than
    z_crit SE from the calibration's sum_r eps_r / 2."""
    level = 1e-6 / (2 * PRIV_ROUNDS)
    z = stats.norm.isf(level)
    total, var, lower, expected, budget = 0.0, 0.0, 0.0, 0.0, 0.0
    for r in range(1, PRIV_ROUNDS + 1):
        eps_r = PRIV_EPS / (scipy_zeta(1 + PRIV_DECAY) * r ** (1 + PRIV_DECAY))
        budget += eps_r
        expected += eps_r / 2
        a = round_outcomes(0, r, runs)[:, 1].sum()
        b = round_outcomes(1, r, runs)[:, 1].sum()
        pa, pb = a / runs, b / runs
        loss = math.log(pb / pa)
        se2 = (1 - pa) / a + (1 - pb) / b
        total += loss
        var += se2
        lower += loss - z * math.sqrt(se2)
    problems = []
    if lower > budget:
        problems.append(f"summed loss >= {lower:.3f} > the rounds' budget {budget:.3f}")
    if abs(total - expected) > z * math.sqrt(var):
        problems.append(f"summed loss {total:.3f} +- {math.sqrt(var):.3f}, the calibration implies {expected:.3f}")
    return problems


@pytest.mark.statistical
def test_easy_hard_rounds_privacy_loss():
    """4 rounds x 2 inputs x 5,000 runs: the summed loss (about 1.0) is the
    calibration's sum_r eps_r / 2 and below the rounds' budget (2.17)."""
    problems = privacy_problems()
    assert not problems, problems


@pytest.mark.statistical
def test_privacy_check_catches_a_twin_without_the_shrinking_budget(monkeypatch):
    """Twin: every phase's rounds drawn at phase 0's budget (the noise does not
    grow with the phase while the ledger's plan shrinks): the summed loss
    (about 3.7) exceeds the budget."""
    monkeypatch.setattr(OnlinePMW, "round_weight", lambda self, phase: 1 / (scipy_zeta(1 + self.decay)))
    assert privacy_problems()


# ---------------------------------------------------------------------------
# Beam: queries before, between and after the data
# ---------------------------------------------------------------------------


def _beam_case():
    from transforms.queries import QueryRecord

    cfg = DynamicConfig((QuerySet("x", "histogram", domain_size=4),), PureDP(4.0))
    opts = PMWGOptions(alpha=0.2, n0=20, hard_per_phase=4)
    spec = StreamSpec(streams=("a", "b"), tick_seconds=1.0, end_time=60.0)
    rng = np.random.default_rng(11)
    updates = []
    for t in range(10, 41):  # data in ticks 10..40 only
        for j in range(int(rng.integers(0, 6))):
            updates.append(UpdateRecord(t - 0.5, "insert", f"e{t}-{j}", (int(rng.integers(4)),), "a", j))
    rows = [tuple(float(v) for v in (rng.random(4) < 0.5)) for _ in range(12)]
    times = [2.2, 5.7, 12.1, 12.9, 20.5, 25.5, 33.3, 39.9, 44.4, 50.0, 58.5, 59.9]  # before, during, after
    queries = [QueryRecord(f"q{i}", tm, rows[i], "a" if i % 3 else "b") for i, tm in enumerate(times)]
    return cfg, opts, spec, updates, queries


def _expected(cfg, opts, spec, updates, queries, release):
    noise = NoiseSource(KEY).for_release(release)
    out = []
    for stream in spec.streams:
        core = PMWGRelease(cfg, stream=stream, options=opts, end_tick=spec.end_tick)
        by_tick = {}
        for r in sorted((r for r in updates if r.stream == stream), key=lambda r: (spec.tick_of(r.event_time), r.seq)):
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
        asked = [(spec.tick_of(q.event_time), q.event_time, q.query_id, q.row) for q in queries if q.stream == stream]
        _, answered = run_with_queries(core, by_tick, asked, noise)
        out += [(a.query_id, a.stream, a.tick, round(a.answer, 6), round(a.bound, 6), a.hard) for a in answered]
    return sorted(out)


@pytest.mark.parametrize("path", ["streaming", "bounded"])
def test_query_stream_equals_the_core(path):
    from transforms.queries import AnswerQueries

    cfg, opts, spec, updates, queries = _beam_case()
    t = AnswerQueries(cfg, spec, NoiseKey.fixed(KEY.hex()), options=opts, release=REL)
    expect = _expected(cfg, opts, spec, updates, queries, t.release)
    assert len(expect) == len(queries) and any(e[5] for e in expect)  # some hard
    assert {e[2] for e in expect} >= {3, 6, 13, 45, 60}  # before, between and after the data
    if path == "streaming":
        opts_p = PipelineOptions(runner="BundleBasedDirectRunner")
        opts_p.view_as(StandardOptions).streaming = True
    else:
        opts_p = PipelineOptions(runner=FNAPI_RUNNER)
    with TestPipeline(options=opts_p) as p:
        if path == "streaming":
            events = sorted(
                [(r.event_time, 0, r) for r in updates] + [(q.event_time, 1, q) for q in queries], key=lambda e: e[:2]
            )
            ts = TestStream(output_tags={"updates", "queries"})
            wm = 0.0
            for tm, kind, rec in events:  # in event-time order, the watermark trailing by a tick or two
                if tm - wm >= 3:
                    wm = math.floor(tm) - 1.0
                    ts = ts.advance_watermark_to(wm, tag="updates").advance_watermark_to(wm, tag="queries")
                ts = ts.add_elements([beam.window.TimestampedValue(rec, tm)], tag=("updates", "queries")[kind])
            for wm2 in range(int(wm) + 1, 130, 3):
                ts = ts.advance_watermark_to(float(wm2), tag="updates").advance_watermark_to(float(wm2), tag="queries")
            both = p | ts.advance_watermark_to_infinity()
            u, q = both["updates"], both["queries"]
        else:
            u = (
                p
                | "Updates" >> beam.Create(updates)
                | "StampU" >> beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
            )
            q = (
                p
                | "Queries" >> beam.Create(queries)
                | "StampQ" >> beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
            )
        out = (u, q) | t
        got = out["query_answers"] | beam.Map(
            lambda a: (a.query_id, a.stream, a.tick, round(a.answer, 6), round(a.bound, 6), a.hard)
        )
        assert_that(got, equal_to(expect))


def test_query_stream_dead_letters():
    from transforms.queries import AnswerQueries, QueryRecord

    cfg, opts, spec, _, _ = _beam_case()
    bad = [
        QueryRecord("z1", 5.0, (1.0, 0.0), "a"),  # wrong length
        QueryRecord("z2", 5.0, (1.0, 0.0, 2.0, 0.0), "a"),  # weight outside [0, 1]
        QueryRecord("z3", 5.0, (1.0, 0.0, 0.0, 0.0), "nowhere"),
        QueryRecord("z4", -5.0, (1.0, 0.0, 0.0, 0.0), "a"),
        QueryRecord("z5", 500.0, (1.0, 0.0, 0.0, 0.0), "a"),
    ]
    ups = [UpdateRecord(1.0, "insert", "x", (1,), "a", 0), UpdateRecord(2.0, "delete", "x", None, "a", 1)]
    t = AnswerQueries(cfg, spec, NoiseKey.disabled(), options=opts, release=REL)
    with TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER)) as p:
        u = p | "U" >> beam.Create(ups) | "SU" >> beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        q = p | "Q" >> beam.Create(bad) | "SQ" >> beam.Map(lambda r: beam.window.TimestampedValue(r, 1.0))
        out = (u, q) | t
        assert_that(
            out["dead_letters"] | beam.Map(lambda d: d.reason),
            equal_to(
                ["malformed", "malformed", "undeclared_stream", "before_origin", "after_end"]
                + ["deletion_not_supported"]
            ),
        )
        assert_that(out["query_answers"], equal_to([]), label="NoAnswers")


# ---------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------


def test_growing_yaml_and_bare_kinds_validate():
    from pipelines.config import ConfigError, check_mechanism, parse_config

    raw = yaml.safe_load((ROOT / "configs" / "growing.yaml").read_text())
    cfg = parse_config(raw, ROOT)
    assert cfg.mechanism == "pmwg"
    for kind, cls in (("bb_scheduler", BBSchedulerOptions), ("bb_improver", BBImproverOptions), ("pmwg", PMWGOptions)):
        raw2 = {**raw, "mechanism": {"kind": kind}}
        if kind != "pmwg":  # only PMWG answers streamed queries
            with pytest.raises(ConfigError, match="queries_source"):
                parse_config(raw2, ROOT)
            raw2.pop("queries_source")
        c = parse_config(raw2, ROOT)
        assert c.mechanism == kind and c.mechanism_options() == cls()
        check_mechanism(c)
    with pytest.raises(ConfigError, match="first query must be a histogram"):
        parse_config({**raw, "queries": [{"name": "n", "type": "count"}]}, ROOT)


def test_cli_answers_streamed_queries(tmp_path):
    """The CLI on a small growing stream and queries file (noise off: every
    answer exact): releases, query answers and the dead letters of a delete
    and a malformed query are written."""
    import json

    from pipelines.release import main

    data = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"time": 10.0 * i + 1, "op": "insert", "id": f"o{i}", "item": {"c": "ab"[i % 2]}}) for i in range(60)
    ]
    lines.append(json.dumps({"time": 300.5, "op": "delete", "id": "o3"}))
    data.write_text("\n".join(lines) + "\n")
    qfile = tmp_path / "q.jsonl"
    qs = [{"id": f"q{j}", "time": 100.0 * j + 50, "weights": {"a": 1, "b": 0.5}} for j in range(6)]
    qfile.write_text("\n".join(json.dumps(q) for q in qs) + "\n" + json.dumps({"id": "bad", "time": 5}) + "\n")
    out = tmp_path / "out"
    cfg = {
        "privacy": {"epsilon": 1.0, "disable_noise": True},
        "time": {"field": "time", "tick_seconds": 10, "origin": 0, "end": 700},
        "mechanism": {"kind": "pmwg", "n0": 10},
        "release": {"every_ticks": 10},
        "queries": [{"name": "c", "type": "histogram", "field": "c", "domain": ["a", "b"]}],
        "source": {"type": "file", "path": str(data)},
        "queries_source": {"type": "file", "path": str(qfile)},
        "sinks": [{"type": "file", "path": str(out) + "/"}],
    }
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump(cfg))
    assert main(["--config", str(conf)]) == 0
    answers = [json.loads(x) for f in sorted(out.glob("query_answers*.jsonl")) for x in f.read_text().splitlines()]
    assert sorted(a["query_id"] for a in answers) == [f"q{j}" for j in range(6)]
    for a in answers:  # noise off: exact as of the end of the query's tick
        j = int(a["query_id"][1:])
        n = min(60, int((100 * j + 50 + 10) // 10))  # insertions in ticks up to the query's
        live_a = len([i for i in range(n) if i % 2 == 0])
        assert a["answer"] == pytest.approx(live_a + 0.5 * (n - live_a)), a
    dead = [
        json.loads(x)
        for f in (tmp_path / "out-confidential").glob("dead_letters*.jsonl")
        for x in f.read_text().splitlines()
    ]
    assert sorted(d["reason"] for d in dead) == ["deletion_not_supported", "missing_field"]


# ---------------------------------------------------------------------------
# the query driver, epochs, option ranges, PMWG's scope and bounds
# (each test names the mutants of the mutation benchmark it kills, benchmarks/mutation_config.py;
# the numbers are those of the last run, docs/testing.md)
# ---------------------------------------------------------------------------


def test_growing_query_driver_answers_in_time_then_id_order_with_their_ids():
    """``run_with_queries`` (the reference of the Beam query join) answers a
    tick's queries in (time, id) order, each under its own id, and equals the
    core driven by hand. Two queries share a tick and a time, their rows
    ordered against their ids. Kills growing.pmwg.run_with_queries__mutmut_1 (no
    query table), _9 (sorted by row instead of id) and _39 (answers without
    their ids)."""
    from transforms.core.families.growing import PMWGOptions, PMWGRelease, run_with_queries

    config = DynamicConfig((QuerySet("x", "histogram", domain_size=3),), PureDP(4.0))
    opts = PMWGOptions(alpha=0.2, n0=5, hard_per_phase=3)
    rows = {"qa": (1.0, 1.0, 0.0), "qb": (0.0, 0.0, 1.0), "qc": (0.0, 1.0, 0.0)}
    queries = [(4, 3.5, "qb", rows["qb"]), (4, 3.5, "qa", rows["qa"]), (2, 1.2, "qc", rows["qc"])]
    by_tick = {t: [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(4)] for t in (1, 3, 4)}
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-growing-queries"))

    _, answered = run_with_queries(PMWGRelease(config, stream="s", options=opts, end_tick=6), by_tick, queries, noise)
    assert [a.query_id for a in answered] == ["qc", "qa", "qb"]

    core = PMWGRelease(config, stream="s", options=opts, end_tick=6)
    want = []
    for t in (1, 2, 3, 4):
        if t in by_tick:
            core.process_tick(t, by_tick[t], noise)
        elif t > core.last_tick:
            core.advance(t, noise)
        for qid in {2: ["qc"], 4: ["qa", "qb"]}.get(t, []):
            want.append(core.answer_query(t, qid, rows[qid], noise))
    assert [(a.query_id, a.tick, a.answer, a.bound, a.hard) for a in answered] == [
        (a.query_id, a.tick, a.answer, a.bound, a.hard) for a in want
    ]


def test_growing_node_outputs_carry_their_epoch():
    """Every node output of a growing release names the epoch it belongs to
    (``segment``: the closes so far); a size release (``n_hat``) is epoch e's
    close, so its segment equals its node; the static re-runs after it share it.
    Kills growing.base.GrowingRelease._log__mutmut_4 (no epoch)."""
    from transforms.core.families.growing import BBSchedulerOptions, BBSchedulerRelease

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = BBSchedulerRelease(config, stream="s", emit_nodes=True, options=BBSchedulerOptions(n0=10, eta=0.5))
    noise = NoiseSource.disabled()
    for t in range(1, 80):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
    outs = core.drain_node_outputs()
    sizes = [o for o in outs if o.kind == "n_hat"]
    assert len(sizes) >= 3 and all(o.segment == o.node for o in sizes)
    closes = 0
    for o in outs:
        closes += o.kind == "n_hat"
        assert o.segment == closes, (o.kind, o.tick)


def test_growing_options_refuse_values_outside_their_open_intervals():
    """alpha and growth_fraction in (0, 1), eta and decay in (0, 10), each
    refused at and beyond the ends with a message that starts with its name.
    Kills growing.base.check_fraction__mutmut_3 (``and``: nothing refused),
    _8 (the upper end allowed) and black_box.BBImproverOptions.__post_init____mutmut_20
    (the message's name)."""
    from transforms.core.families.growing import BBImproverOptions, BBSchedulerOptions, PMWGOptions

    cases = [
        (PMWGOptions, "alpha", (0.0, 1.0, 1.5, -0.2), 0.999),
        (BBSchedulerOptions, "growth_fraction", (0.0, 1.0, 2.0), 0.5),
        (BBSchedulerOptions, "eta", (0.0, 10.0, 11.0), 9.99),
        (BBImproverOptions, "decay", (0.0, 10.0, 12.5), 9.99),
    ]
    for cls, field, bad, good in cases:
        for v in bad:
            with pytest.raises(ValueError, match=rf"^{field} must be a number in"):
                cls(**{field: v})
        assert getattr(cls(**{field: good}), field) == good


def test_pmwg_charges_its_own_scope_and_answers_exactly_without_noise():
    """PMWG's rounds are charged under the ledger scope ``pmwg``; with noise
    off a streamed query is answered exactly (row . histogram), and the
    periodic releases between closes (``every_ticks``) are the exact answers
    at every period end. Kills growing.pmwg.PMWGRelease._start (was __init____mutmut_16, scope
    name), answer_query__mutmut_32 (no noiseless answer), _between__mutmut_6
    (the noiseless rows without the domain), base.GrowingRelease._apply__mutmut_11
    and _periods__mutmut_6 (periods never or always skipped)."""
    from transforms.core.families.growing import PMWGOptions, PMWGRelease

    config = DynamicConfig((QuerySet("x", "histogram", domain_size=3),), PureDP(2.0))
    opts = PMWGOptions(alpha=0.2, n0=6, hard_per_phase=3)
    on = PMWGRelease(config, stream="s", options=opts, end_tick=30)
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-pmwg-scope"))
    for t in range(1, 31):
        on.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 3,)) for j in range(2)], noise)
    assert "pmwg" in on.ledger.root.children and on.spent.epsilon > 0

    core = PMWGRelease(config, stream="s", options=opts, end_tick=30, every_ticks=5)
    off = NoiseSource.disabled()
    hist, hists, periodic = np.zeros(3), {}, {}
    for t in range(1, 31):
        ups = [Update("insert", f"e{t}-{j}", ((t + j) % 3,)) for j in range(t % 3 + 1)]
        res = core.process_tick(t, ups, off)
        periodic.update({a.tick: a.estimate.tolist() for a in res.answers})
        for u in ups:
            hist[u.item[0]] += 1
        hists[t] = hist.tolist()
        if t == 17:
            q = core.answer_query(t, "q", (1.0, 0.0, 1.0), off)
            assert (q.answer, q.bound, q.hard) == (hist[0] + hist[2], 0.0, False)
    assert set(periodic) == {5, 10, 15, 20, 25, 30} and all(periodic[t] == hists[t] for t in periodic), periodic


def test_black_box_bound_of_a_pmw_set_uses_the_released_size():
    """``bb_scheduler`` over a ``pmw`` query set with noise on: its bound comes
    from the noisy size released with the run (finite, positive). Kills
    growing.black_box._BlackBoxRelease._bound__mutmut_13 (the size dropped)."""
    from transforms.core.families.growing import BBSchedulerOptions, BBSchedulerRelease

    config = DynamicConfig((QuerySet("r", "pmw", domain_size=4, ranges=True),), PureDP(2.0))
    core = BBSchedulerRelease(config, stream="s", options=BBSchedulerOptions(n0=20, eta=0.5))
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-bb-pmw-bound"))
    bounds = []
    for t in range(1, 60):
        res = core.process_tick(t, [Update("insert", f"e{t}-{j}", (j % 4,)) for j in range(3)], noise)
        bounds += [a.error_bound for a in res.answers]
    assert bounds and all(0 < b < math.inf for b in bounds)
