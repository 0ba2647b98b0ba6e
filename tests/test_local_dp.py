"""Continual randomized response (Pan §5-6): the client, the collector, the simulator.

Statistical tests use fixed seeds (deterministic); the stated false-failure
rate is that of a random seed on a correct implementation.
"""

from __future__ import annotations

import base64
import json
import math
import random
import subprocess
import sys
import time
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER
from scipy import stats

from pipelines.config import ConfigError, load_config
from transforms.core import (
    DynamicConfig,
    PureDP,
    QuerySet,
)
from transforms.core.families.local_dp import (
    RandomizedResponseCollector,
    RROptions,
    in_memory,
    node_estimate,
    report_variance,
    simulate,
)
from transforms.core.families.rr_client import (
    AtMostK,
    ConstraintExceeded,
    RRClient,
    SurveyDesign,
    TimeBounded,
    exp_decimal,
    mutation_of,
    num_symbols,
    randomize,
    symbol_of,
)
from transforms.core.foundation.accounting import ApproxDP, as_vector
from transforms.core.foundation.state import decode, encode
from transforms.local_dp import CollectRandomizedResponses, CollectStep, ReportParser, ReportRecord
from transforms.per_stream import START, PerStreamStepFn
from transforms.spec import StreamSpec

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "randomized_response_state_v1.json"


def config(eps=8.0, delta=0.0, z=3):
    budget = PureDP(eps) if delta == 0 else ApproxDP(eps, delta)
    return DynamicConfig((QuerySet("answer", "histogram", domain_size=z),), budget)


def seeded(seed):
    return random.Random(seed).getrandbits  # tests only: reproducible, so not private


# ---------------------------------------------------------------------------
# the response matrix: local (eps, delta)-DP exactly
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "z,eps,delta", [(2, 0.1, 0.0), (3, 1.0, 0.0), (3, 4.0, 0.0), (5, 0.5, 1e-3), (2, 2.0, 0.05), (4, 12.0, 0.0)]
)
def test_response_matrix_is_exactly_local_dp(z, eps, delta):
    """Over every pair of true mutations (a, b): sum over outputs of
    max(0, P[s|a] - e^eps P[s|b]) <= delta (the largest set S of Thm 6.1), in
    exact arithmetic against e^eps to 60 digits; for delta = 0 that is the
    ratio P[s|a] / P[s|b] <= e^eps for every output s. And the matrix is tight
    (Eq. 34 / its (eps, delta) form, up to the 2^-64 weight resolution)."""
    d = SurveyDesign(z, eps, delta, AtMostK(1))
    m = num_symbols(z)
    p, q = d.p, d.q
    assert p + (m - 1) * q == 1
    e = exp_decimal(eps)
    with localcontext() as ctx:
        ctx.prec = 60
        P, Q = Decimal(p.numerator) / p.denominator, Decimal(q.numerator) / q.denominator
        for a in range(m):
            for b in range(m):
                if a == b:
                    continue
                col = lambda s, t: P if s == t else Q  # noqa: E731
                worst = sum(max(Decimal(0), col(s, a) - e * col(s, b)) for s in range(m))
                assert worst <= Decimal(delta), (a, b)
                if delta == 0:
                    assert all(col(s, a) <= e * col(s, b) for s in range(m))
        # tight: the implemented q is the paper's (1 - delta) / (m - 1 + e^eps) rounded up by < 2^-60
        q_paper = (1 - Decimal(delta)) / (m - 1 + e)
        assert Decimal(0) <= Q - q_paper < Decimal(2) ** -60


def test_estimator_inverts_the_matrix_exactly():
    """E[node estimate] = M_dv P^-1 P m = dv for every true mutation m (Eq. 47),
    in exact rational arithmetic with the implemented p, q."""
    z = 3
    d = SurveyDesign(z, 1.3, 0.0, AtMostK(1))
    m = num_symbols(z)
    gap = d.p - d.q
    for true in range(m):
        expect = [d.p if s == true else d.q for s in range(m)]  # E[counts] for one report
        diff = [Fraction(0)] * z
        for s, w in enumerate(expect):
            old, new = mutation_of(s, z)
            if old == new:
                continue
            if new is not None:
                diff[new] += w
            if old is not None:
                diff[old] -= w
        old, new = mutation_of(true, z)
        dv = [0] * z
        if old != new:
            if new is not None:
                dv[new] += 1
            if old is not None:
                dv[old] -= 1
        assert [x / gap for x in diff] == dv


def test_symbols_round_trip():
    for z in (2, 3, 7):
        seen = set()
        for old in [None, *range(z)]:
            for new in [None, *range(z)]:
                s = symbol_of(old, new, z)
                assert mutation_of(s, z) == (old, new) and 0 <= s < num_symbols(z)
                seen.add(s)
        assert len(seen) == num_symbols(z)


# ---------------------------------------------------------------------------
# the client
# ---------------------------------------------------------------------------


def test_client_refuses_the_k_plus_1th_mutation():
    d = SurveyDesign.from_total(3, 6.0, 0.0, AtMostK(2))
    c = RRClient(d, randbits=seeded(1))
    c.report(1, 0)  # insertion: mutation 1
    c.report(2, 0)
    c.report(3, 1)  # mutation 2
    with pytest.raises(ConstraintExceeded):
        c.report(4, 2)  # the 3rd: refused, nothing sent, state unchanged
    assert c.period == 3 and c.current == 1 and c.mutations == 2
    assert len(c.report(4, 1)) == 1  # the unchanged answer is still reported
    assert c.report(5, None, on_exceed="freeze")  # a deletion past k: frozen, the true change never sent
    assert c.current == 1 and as_vector(c.spent)[0] == pytest.approx(6.0)


def test_client_refuses_after_the_time_bound():
    d = SurveyDesign.from_total(3, 5.0, 0.0, TimeBounded(2.5))  # b = 3 periods after the first mutation
    c = RRClient(d, randbits=seeded(2))
    c.report(1, None)
    c.report(2, 0)  # first mutation at period 2
    for t, a in ((3, 1), (4, 1), (5, 2)):  # within 2 + 3
        c.report(t, a)
    with pytest.raises(ConstraintExceeded):
        c.report(6, 0)
    assert as_vector(c.spent)[0] <= 5.0 + 1e-9


def test_client_validates_and_uses_the_os_csprng_by_default():
    import secrets

    d = SurveyDesign.from_total(3, 6.0, 0.0, AtMostK(2))
    c = RRClient(d)
    assert c._randbits is secrets.randbits
    with pytest.raises(ValueError, match="every period"):
        c.report(2, 0)
    with pytest.raises(ValueError, match="answer"):
        c.report(1, 3)
    c.report(1, 0)
    with pytest.raises(ValueError, match="every period"):
        c.report(1, 0)  # the same period twice: never re-randomize one node


def test_hdcr_client_reports_once_per_node_end():
    d = SurveyDesign.from_total(3, 12.0, 0.0, AtMostK(2), layers=3, branching=2)
    c = RRClient(d, randbits=seeded(3))
    layers = [[r.layer for r in c.report(t, 0 if t >= 2 else None)] for t in range(1, 9)]
    assert layers == [[0], [0, 1], [0], [0, 1, 2], [0], [0, 1], [0], [0, 1, 2]]


def test_client_core_needs_neither_numpy_nor_beam(tmp_path):
    """The client file (with the accounting package, its ledger) runs where
    numpy and Beam cannot even be imported."""
    import shutil

    pkg = tmp_path / "rrpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "rr_client.py").write_text((ROOT / "transforms" / "core" / "families" / "rr_client.py").read_text())
    shutil.copytree(ROOT / "transforms" / "core" / "foundation" / "accounting", pkg / "accounting")
    code = (
        "import sys; sys.modules['numpy'] = None; sys.modules['apache_beam'] = None\n"
        "from rrpkg.rr_client import RRClient, SurveyDesign, AtMostK\n"
        "c = RRClient(SurveyDesign.from_total(3, 4.0, 0.0, AtMostK(2)))\n"
        "print(len(c.report(1, 0)), c.spent)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.startswith("1 PureDP")


@pytest.mark.statistical
def test_randomize_has_the_law_of_the_matrix():
    """Chi-square goodness of fit of 60,000 client draws for one true mutation
    against the column of P (false failure 1e-6)."""
    d = SurveyDesign(2, 1.0, 0.0, AtMostK(1))
    bits = seeded(4)
    true = symbol_of(0, 1, 2)
    counts = np.bincount([randomize(true, d, bits) for _ in range(60_000)], minlength=9)
    expect = np.array([float(d.p) if s == true else float(d.q) for s in range(9)]) * 60_000
    assert stats.chisquare(counts, expect).pvalue > 1e-6


def _ratio_lower_bound(k_a, k_b, n, alpha):
    """A lower confidence bound (1 - alpha) on P[s|a] / P[s|b] from counts
    (Clopper-Pearson on each, alpha / 2 each)."""
    lo_a = stats.beta.ppf(alpha / 2, k_a, n - k_a + 1) if k_a else 0.0
    hi_b = stats.beta.ppf(1 - alpha / 2, k_b + 1, n - k_b) if k_b < n else 1.0
    return lo_a / hi_b


@pytest.mark.statistical
@pytest.mark.parametrize("twin", [False, True])
def test_empirical_local_dp_of_the_client(twin):
    """200,000 reports of the client for each of two true mutations: for every
    output, a (1 - 1e-6) lower confidence bound of the likelihood ratio must
    not exceed e^eps_r (false failure <= 1e-6 per output, Bonferroni). A
    mis-parameterised twin (its weights computed for 2 eps_r while it claims
    eps_r) fails."""
    eps = 1.0
    d = SurveyDesign(2, eps, 0.0, AtMostK(1))
    if twin:
        wrong = SurveyDesign(2, 2 * eps, 0.0, AtMostK(1))
        d = SurveyDesign(2, eps, 0.0, AtMostK(1), keep_weight=wrong.keep_weight, other_weight=wrong.other_weight)
    a, b = symbol_of(None, 0, 2), symbol_of(0, 1, 2)
    n = 200_000
    bits = seeded(5)
    ca = np.bincount([randomize(a, d, bits) for _ in range(n)], minlength=9)
    cb = np.bincount([randomize(b, d, bits) for _ in range(n)], minlength=9)
    worst = max(
        max(_ratio_lower_bound(ca[s], cb[s], n, 1e-6 / 18), _ratio_lower_bound(cb[s], ca[s], n, 1e-6 / 18))
        for s in range(9)
    )
    if twin:
        assert worst > math.exp(eps)
    else:
        assert worst <= math.exp(eps)


# ---------------------------------------------------------------------------
# the collector: unbiased, with the closed-form variance
# ---------------------------------------------------------------------------


def _sample_nodes(design, true_symbols, runs, rng):
    """Node counts of many independent runs: each report keeps its true symbol
    with probability p, else a uniform other symbol (the client's law, tested
    above), vectorised."""
    m = design.num_symbols
    n = len(true_symbols)
    keep = rng.random((runs, n)) < float(design.p)
    other = rng.integers(0, m - 1, (runs, n))
    true = np.broadcast_to(np.asarray(true_symbols), (runs, n))
    other = other + (other >= true)
    out = np.where(keep, true, other)
    return np.stack([np.bincount(r, minlength=m) for r in out])


@pytest.mark.statistical
@pytest.mark.parametrize("eps", [1.0, 3.0])
def test_node_estimate_is_unbiased_with_the_closed_form_variance(eps):
    """4,000 runs of one node over 300 entries with mixed true mutations: the
    mean estimate is within 5 standard errors of the true change (normal
    approximation of a mean of 4,000 i.i.d. runs, 5.7e-7 per cell), and the
    empirical variance is within 5 of its standard errors of the closed form
    (sum over entries of 2zq/(p-q)^2 + |dv_x[r]| (1/(p-q) - 1))."""
    z = 3
    d = SurveyDesign(z, eps, 0.0, AtMostK(1))
    rng = np.random.default_rng(20261123)
    py = random.Random(1)
    choices = [None, 0, 1, 2]
    true = []
    for _ in range(300):
        old, new = py.choice(choices), py.choice(choices)
        true.append(symbol_of(*((None, None) if old == new else (old, new)), z))
    dv = np.zeros(z)
    touch = np.zeros(z)
    for s in true:
        old, new = mutation_of(s, z)
        if new is not None:
            dv[new] += 1
            touch[new] += 1
        if old is not None:
            dv[old] -= 1
            touch[old] += 1
    runs = 4000
    counts = _sample_nodes(d, true, runs, rng)
    coll = RandomizedResponseCollector(config(), options=RROptions())
    coll.design = d
    est = np.array([node_estimate(coll._node(c)[0], d) for c in counts])
    var = np.array(
        [
            300 * report_variance(d, False) + touch[r] * (report_variance(d, True) - report_variance(d, False))
            for r in range(z)
        ]
    )
    se = np.sqrt(var / runs)
    assert np.all(np.abs(est.mean(0) - dv) < 5 * se), (est.mean(0), dv, se)
    emp = est.var(0, ddof=1)
    kurt = stats.kurtosis(est, axis=0, fisher=False)
    se_var = var * np.sqrt((kurt - (runs - 3) / (runs - 1)) / runs)
    assert np.all(np.abs(emp - var) < 5 * se_var), (emp, var)


@pytest.mark.statistical
@pytest.mark.parametrize("aggregation", ["direct", "hdcr"])
def test_collector_is_unbiased_over_simulated_runs(aggregation):
    """300 simulated surveys (200 entries, 8 periods, clients with their real
    sampler): the mean error of the final histogram estimate is within 5
    standard errors of 0 per cell (5.7e-7 per cell), and the released
    variance agrees with the spread (z-scores with standard deviation in
    [0.8, 1.2])."""
    opts = RROptions(max_mutations=2) if aggregation == "direct" else RROptions(max_mutations=2, aggregation="hdcr")
    errs, zs = [], []
    for seed in range(300):
        coll = RandomizedResponseCollector(config(), options=opts, end_tick=8)
        sim = simulate(coll.design, 200, 8, seed=seed)
        rel = in_memory(coll, sim.reports, 8)[-1]
        e = np.array(rel.estimate) - np.array(sim.truth[-1])
        errs.append(e)
        zs.append(e / np.sqrt(rel.variance))
        assert np.all(np.abs(e) <= rel.error_bound)  # the (1 - beta) bound, beta 0.05: holds here
    errs = np.array(errs)
    se = errs.std(0, ddof=1) / np.sqrt(len(errs))
    assert np.all(np.abs(errs.mean(0)) < 5 * se)
    assert np.all((np.array(zs).std(0) > 0.8) & (np.array(zs).std(0) < 1.2))


def test_hdcr_estimate_sums_the_c_ary_decomposition():
    """With exact reports (p = 1 - tiny), v_hat_t is the truth at every t, in
    both aggregations: the decomposition covers (0, t] exactly once."""
    for opts in (RROptions(max_mutations=3), RROptions(max_mutations=3, aggregation="hdcr", layers=3, branching=3)):
        coll = RandomizedResponseCollector(config(eps=600.0), options=opts, end_tick=20)
        sim = simulate(coll.design, 50, 20, seed=9)
        rels = in_memory(coll, sim.reports, 20)
        for rel, truth in zip(rels, sim.truth):
            assert np.allclose(rel.estimate, truth, atol=1e-6)


# ---------------------------------------------------------------------------
# state: versioned round trip and golden
# ---------------------------------------------------------------------------


def _golden_run(state=None):
    opts = RROptions(max_mutations=2, aggregation="hdcr", layers=3)
    coll = RandomizedResponseCollector(config(), stream="golden", options=opts, end_tick=16)
    sim = simulate(coll.design, 100, 16, seed=11)
    half = [r for r in sim.reports if r[1].period <= 7]
    rest = [r for r in sim.reports if r[1].period > 7]
    if state is None:
        in_memory(coll, half, 7)
        state = encode(coll.to_state())
    else:
        coll = RandomizedResponseCollector.from_state(config(), decode(state), options=opts, end_tick=16)
    return state, [list(map(lambda x: list(x) if isinstance(x, tuple) else x, r)) for r in in_memory(coll, rest, 16)]


@pytest.mark.parametrize(
    "options,expected_fold",
    [
        ({"max_mutations": 3}, 6),  # Cor. 5.1: 2k
        ({"constraint": "time_bounded", "bound_ticks": 4}, 10),  # Cor. 5.2 + 4.1: 2 (ceil(B/W) + 1)
        ({"max_mutations": 2, "aggregation": "hdcr", "layers": 3}, 12),  # Cor. 5.3: 2hk
        # Cor. 5.3, time-bounded, counted in nodes: 2 sum_i (ceil(5 / 2^i) + 1) = 2 (6 + 4 + 3)
        ({"constraint": "time_bounded", "bound_ticks": 5, "aggregation": "hdcr", "layers": 3}, 26),
    ],
)
def test_client_loss_matches_the_corollaries(options, expected_fold):
    """The clients' loss, charged by the ledger report by report (twice the
    per-report cost for each node holding a mutation, Thm 5.1), reaches the
    corollary's bound exactly for an entry that uses its whole constraint, and
    the next mutation is refused."""
    config = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(6.0))
    coll = RandomizedResponseCollector(config, options=RROptions(**options))
    design = coll.design
    assert design.fold == expected_fold and design.epsilon == pytest.approx(6.0 / expected_fold)
    client = RRClient(design, randbits=random.Random(0).getrandbits)  # a test: seeded
    c = design.constraint
    # mutations that hit as many distinct nodes per layer as the constraint allows
    if hasattr(c, "k"):
        step = design.branching ** (design.layers - 1)
        times = [1 + j * step for j in range(c.k)]
    else:
        times = list(
            range(design.branching ** (design.layers - 1), design.branching ** (design.layers - 1) + c.span + 1)
        )
    answer, t = None, 0
    for t in range(1, max(times) + 1):
        if t in times:
            answer = (0 if answer is None else answer + 1) % 3
        client.report(t, answer)
    assert as_vector(client.spent)[0] == pytest.approx(6.0, rel=1e-9)  # the corollary's fold x eps_r
    with pytest.raises(ConstraintExceeded):
        client.report(t + 1, (answer + 1) % 3)


def test_golden_collector_state_restores_and_continues_identically():
    """State written by this version (tests/golden/randomized_response_state_v1.json,
    regenerate with ``python tests/test_local_dp.py --golden``) restores and continues exactly."""
    golden = json.loads(GOLDEN.read_text())
    _, got = _golden_run(base64.b64decode(golden["state"]))
    assert got == golden["continuation"] and got


# ---------------------------------------------------------------------------
# Beam: the collector equals the in-memory computation
# ---------------------------------------------------------------------------

SPEC = StreamSpec(streams=("default", "other"), tick_seconds=10.0, end_time=120.0)


def _records(sim):
    return [ReportRecord((r.period - 0.5) * 10.0, e, r.layer, r.old, r.new) for e, r in sim.reports]


@pytest.mark.parametrize("aggregation", ["direct", "hdcr"])
def test_beam_bounded_equals_in_memory(aggregation):
    opts = RROptions(max_mutations=2) if aggregation == "direct" else RROptions(max_mutations=2, aggregation="hdcr")
    coll = RandomizedResponseCollector(config(), options=opts, end_tick=12)
    sim = simulate(coll.design, 150, 12, seed=21)
    expected = in_memory(coll, sim.reports, 12)
    other = RandomizedResponseCollector(config(), stream="other", options=opts, end_tick=12)
    expected += other.run_to_end()  # a declared stream without reports releases too
    recs = _records(sim)
    bad = [
        recs[0],  # duplicate of a report
        ReportRecord(45.0, "x", 1, 0, 1),  # no node of layer 1 ends at period 5 (nor exists with direct)
        ReportRecord(500.0, "x", 0, 0, 1),  # after the end
        ReportRecord(5.0, "x", 0, 0, 1, "nowhere"),  # undeclared stream
        ReportRecord(-5.0, "x", 0, 0, 1),  # before the origin
    ]
    with TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER)) as p:
        out = (
            p
            | beam.Create(recs + bad)
            | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
            | CollectRandomizedResponses(config(), SPEC, opts)
        )
        assert_that(out["estimates"], equal_to(expected), label="estimates")
        reasons = ["duplicate_report", "bad_layer", "after_end", "undeclared_stream", "before_origin"]
        assert_that(out["dead_letters"] | beam.Map(lambda d: d.reason), equal_to(reasons), label="dead")


def test_beam_streaming_equals_in_memory():
    """TestStream, one tick of reports at a time with the watermark behind:
    the stateful per-stream collector releases exactly the in-memory
    estimates; a report after its period's release is a dead letter (late)."""
    opts = RROptions(max_mutations=2, aggregation="hdcr", layers=2)
    coll = RandomizedResponseCollector(config(), options=opts, end_tick=12)
    sim = simulate(coll.design, 80, 12, seed=22)
    expected = in_memory(coll, sim.reports, 12)
    expected += RandomizedResponseCollector(config(), stream="other", options=opts, end_tick=12).run_to_end()
    recs = _records(sim)
    ts = TestStream()
    for tick in range(1, 13):
        batch = [r for r in recs if (tick - 1) * 10 <= r.event_time < tick * 10]
        ts = ts.add_elements([beam.window.TimestampedValue(r, r.event_time) for r in batch])
        ts = ts.advance_watermark_to(tick * 10.0)
    ts = ts.add_elements([beam.window.TimestampedValue(ReportRecord(15.0, "late", 0, 0, 1), 15.0)])
    ts = ts.advance_watermark_to(200.0).advance_watermark_to_infinity()
    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    with TestPipeline(options=options) as p:
        out = p | ts | CollectRandomizedResponses(config(), SPEC, opts)
        assert_that(out["estimates"], equal_to(expected), label="estimates")
        assert_that(out["dead_letters"] | beam.Map(lambda d: d.reason), equal_to(["late"]), label="dead")


class _CountedFirings(PerStreamStepFn):
    """The per-stream step, writing a line per timer firing to ``self.log`` (the DirectRunner runs it in this
    process)."""

    log = None

    def _fire(self, *args):
        with open(self.log, "a") as fh:
            fh.write("fire\n")
        yield from super()._fire(*args)


class _WriteWithTime(beam.DoFn):
    def __init__(self, path):
        self.path = path

    def process(self, rel, ts=beam.DoFn.TimestampParam):  # noqa: B008 (Beam idiom)
        with open(self.path, "a") as fh:
            fh.write(json.dumps([list(rel), float(ts)]) + "\n")


@pytest.mark.parametrize("start", [True, False], ids=["declared", "no_start_marker"])
def test_collector_step_stamps_every_release_with_its_ticks_time_whichever_firing(tmp_path, start):
    """The collector's per-stream step with 2,600 one-second ticks of counts waiting and the watermark
    jumping past them all (a replay, a job restarted after downtime): every release equals the in-memory
    collector's and carries its own tick's time (the end of tick + 1 + lateness), whichever firing computed
    it, and the catch-up timer computes the backlog in a few firings instead of one per tick. Without a
    start marker the first firing, for the first tick with counts (3), also releases ticks 1 and 2: they
    carry their own times too, not that firing's. (The step is fed its counts directly, as the release's
    catch-up test does: the transforms keep the catch-up timer off on the DirectRunner.)"""
    n_ticks, lateness = 2600, 1
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=float(n_ticks), allowed_lateness=1.0)
    opts = RROptions(max_mutations=2)
    m = RandomizedResponseCollector(config(), options=opts).design.num_symbols
    counts = [(t, 0, tuple((t * (s + 3)) % 5 for s in range(m))) for t in range(3, n_ticks + 1) if t % 7 != 2]
    core = RandomizedResponseCollector(config(), stream="a", end_tick=n_ticks, options=opts)
    expect = [rel for t, layer, c in counts for rel in core.apply(t, {layer: list(c)})] + core.run_to_end()
    assert [r.tick for r in expect] == list(range(1, n_ticks + 1))
    fn = _CountedFirings(CollectStep(config(), opts, spec))
    assert fn.catch_up  # on by default (the transforms turn it off on the DirectRunner)
    fn.log = str(tmp_path / "firings")
    out_path = str(tmp_path / "estimates.jsonl")
    ts = TestStream()
    if start:
        ts = ts.add_elements([beam.window.TimestampedValue(("a", START), spec.origin)])
    ts = ts.add_elements([beam.window.TimestampedValue(("a", (c,)), float(spec.closes_at(c[0]))) for c in counts])
    ts = ts.advance_watermark_to(float(n_ticks) + 10.0)  # the whole backlog is final at once
    for wm in range(n_ticks + 11, n_ticks + 30):
        ts = ts.advance_watermark_to(float(wm))
    options = PipelineOptions()
    options.view_as(StandardOptions).streaming = True
    with TestPipeline(options=options) as p:
        out = p | ts.advance_watermark_to_infinity() | beam.ParDo(fn).with_outputs(CollectStep.DEAD, main="estimates")
        out.estimates | beam.ParDo(_WriteWithTime(out_path))
    with open(out_path) as fh:
        got = [json.loads(line) for line in fh]
    assert sorted(g[0] for g in got) == sorted(json.loads(json.dumps([list(r) for r in expect])))
    late = [(g[0][1], g[1]) for g in got if g[1] != float(spec.tick_end(g[0][1] + 1 + lateness))]
    assert late == [], f"{len(late)} releases carry another time than their tick's, e.g. {late[:3]}"
    with open(fn.log) as fh:
        firings = len(fh.read().split())
    assert firings <= 20, f"{firings} firings for {n_ticks} ticks: the catch-up timer did not batch them"


# ---------------------------------------------------------------------------
# the simulator and the CLI
# ---------------------------------------------------------------------------


def _write_config(tmp_path, reports, **mech):
    mechanism = {"kind": "randomized_response", "max_mutations": 2, **mech}
    cfg = {
        "privacy": {"epsilon": 16.0},
        "time": {"field": "time", "tick_seconds": 3600, "origin": 0, "end": 10 * 3600},
        "mechanism": mechanism,
        "queries": [{"name": "answer", "type": "histogram", "field": "answer", "domain": ["A", "B", "C"]}],
        "source": {"type": "file", "path": str(reports), "format": "jsonl"},
        "sinks": [{"type": "file", "path": str(tmp_path / "out")}],
    }
    import yaml

    path = tmp_path / "rr.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_simulator_and_cli_equal_the_in_memory_computation(tmp_path):
    from pipelines.release import main
    from pipelines.rr_simulate import main as simulate_main

    reports, truth = tmp_path / "r.jsonl", tmp_path / "t.json"
    args = ["--entries", "120", "--periods", "10", "--epsilon", "16", "--seed", "5", "--out", str(reports)]
    assert simulate_main([*args, "--truth", str(truth)]) == 0
    with open(reports, "a") as fh:
        fh.write("not json\n")
        fh.write(json.dumps({"time": 100.0, "id": "z", "old": "Q", "new": None}) + "\n")
    path = _write_config(tmp_path, reports)
    assert main(["--config", str(path)]) == 0
    got = sorted(
        (json.loads(line) for f in (tmp_path / "out").glob("releases*.jsonl") for line in f.open()),
        key=lambda r: r["tick"],
    )
    cfg = load_config(path)
    coll = RandomizedResponseCollector(cfg.dynamic_config(), options=cfg.mechanism_options(), end_tick=10)
    sim = simulate(coll.design, 120, 10, seed=5, violate=0.02)
    expected = in_memory(coll, sim.reports, 10)
    assert [list(r["estimate"].values()) for r in got] == [list(e.estimate) for e in expected]
    assert [r["error_bound"] for r in got] == [e.error_bound for e in expected]
    assert json.loads(truth.read_text())["histograms"] == sim.truth
    dead = [json.loads(line) for f in (tmp_path / "out-confidential").glob("dead_letters*.jsonl") for line in f.open()]
    assert sorted(d["reason"] for d in dead) == ["not_in_domain", "unparseable"]


def test_rr_simulate_help():
    out = subprocess.run(
        [sys.executable, "-m", "pipelines.rr_simulate", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert "--entries" in out.stdout and "--constraint" in out.stdout


@pytest.mark.parametrize(
    "change,message",
    [
        ({"privacy": {"rho": 1.0}}, "privacy.rho"),
        ({"privacy": {"epsilon": 8.0, "unit": "entry", "max_mutations_per_entry": 2}}, "privacy.unit"),
        ({"mechanism": {"kind": "randomized_response", "constraint": "time_bounded"}}, "bound_ticks is required"),
        ({"mechanism": {"kind": "randomized_response", "layers": 3}}, "aggregation hdcr"),
        ({"mechanism": {"kind": "randomized_response", "max_mutations": 0}}, "max_mutations"),
        ({"release": {"every_ticks": 2}}, "release.every_ticks"),
        ({"queries": [{"name": "n", "type": "count"}]}, "exactly one histogram"),
        ({"mechanism": {"kind": "randomized_response", "profile": "tight"}}, "mechanism.profile"),
    ],
)
def test_config_is_validated_with_actionable_messages(tmp_path, change, message):
    import yaml

    path = _write_config(tmp_path, tmp_path / "r.jsonl")
    raw = yaml.safe_load(path.read_text())
    raw.update(change)
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=message):
        load_config(path)


def test_bundled_config_loads_and_its_data_exists():
    cfg = load_config(ROOT / "configs" / "local_dp.yaml")
    assert cfg.mechanism == "randomized_response" and (ROOT / cfg.source_path).is_file()


def test_parser_never_raises():
    p = ReportParser("time", ("A", "B", 3))
    assert p.parse(b'{"time": 1, "id": "a", "old": null, "new": "B"}') == (
        None,
        ReportRecord(1.0, "a", 0, None, 1, "default", b'{"time": 1, "id": "a", "old": null, "new": "B"}'),
    )
    assert p.parse(b'{"time": 1, "id": "a", "old": "3", "new": 3.0}')[1][3:5] == (2, 2)
    for bad, reason in [
        (b"\xff", "unparseable"),
        (b"[1]", "unparseable"),
        (b'{"time": 1, "id": "a", "old": null}', "missing_field"),
        (b'{"time": NaN, "id": "a", "old": null, "new": "A"}', "bad_time"),
        (b'{"time": 1, "id": "", "old": null, "new": "A"}', "malformed"),
        (b'{"time": 1, "id": "a", "layer": "x", "old": null, "new": "A"}', "malformed"),
        (b'{"time": 1, "id": "a", "old": "Z", "new": "A"}', "not_in_domain"),
    ]:
        assert p.parse(bad)[0] == reason, bad


if __name__ == "__main__" and "--golden" in sys.argv:
    state, continuation = _golden_run()
    GOLDEN.write_text(
        json.dumps({"state": base64.b64encode(state).decode("ascii"), "continuation": continuation}, indent=1) + "\n"
    )
    print(f"wrote {GOLDEN}")


def test_a_pubsub_message_may_carry_several_reports():
    """A Pub/Sub message with several reports, one JSON object per line (a
    gateway's batch): each line is parsed on its own, a bad line is
    dead-lettered alone with the message's attributes, the others pass; a
    one-line message and a file line are one report each."""
    from pipelines.parse import PubsubElement
    from pipelines.rr_collect import parse_reports, report_parser

    parser = report_parser(load_config(ROOT / "configs" / "local_dp.yaml"))
    good = [json.dumps({"time": 10.0 + i, "id": f"e{i}", "old": None, "new": "B"}).encode() for i in range(3)]
    attrs = (("src", "gw1"),)
    batch = PubsubElement(b"\n".join([good[0], b"{oops", good[1], b"", good[2]]) + b"\n", attrs, 5.0)
    out = parse_reports(parser, batch)
    dead = [(reason, rec) for reason, rec in out if reason]
    recs = [rec for reason, rec in out if not reason]
    assert [(r.entry_id, r.new, r.event_time) for r in recs] == [("e0", 1, 10.0), ("e1", 1, 11.0), ("e2", 1, 12.0)]
    assert dead == [("unparseable", (b"{oops", attrs))]
    assert len(parse_reports(parser, PubsubElement(good[0], attrs, 5.0))) == 1
    assert len(parse_reports(parser, good[1] + b"\n")) == 1  # a file line (bytes) is never split


def test_pubsub_tool_publishes_reports_in_batches(tmp_path, monkeypatch):
    """``pubsub_tool publish --lines-per-message N``: the reports already due go
    together, at most N lines a message, each line one report with its time
    moved to the wall clock; every report is sent once, in time order. The
    update pipeline's configs refuse it (one update per message)."""
    import yaml

    from pipelines.tools import pubsub_tool

    sent = []

    class FakePublisher:
        def publish(self, topic, data, **attrs):
            sent.append((topic, data, attrs))
            return type("F", (), {"result": lambda self: None})()

    monkeypatch.setattr(pubsub_tool, "_clients", lambda: (FakePublisher(), None))
    raw = yaml.safe_load((ROOT / "configs" / "local_dp.yaml").read_text())
    raw["source"] = {"type": "pubsub", "subscription": "projects/p/subscriptions/reports-sub"}
    cfg_path = tmp_path / "rr.yaml"
    cfg_path.write_text(yaml.safe_dump(raw))
    reports = tmp_path / "reports.jsonl"
    times = [0.5] * 7 + [1.5] * 3  # two periods: 7 reports, then 3
    rows = [json.dumps({"time": t, "id": f"e{i}", "old": None, "new": "A"}) for i, t in enumerate(times)]
    reports.write_text("\n".join(rows) + "\n")
    origin = time.time() - 100.0  # every report already due
    n = pubsub_tool.publish(load_config(cfg_path), str(reports), origin, 1.0, lines_per_message=4)
    assert n == 10 and [len(d.split(b"\n")) for _, d, _ in sent] == [4, 4, 2]
    assert {t for t, _, _ in sent} == {"projects/p/topics/reports"}
    lines = [json.loads(x) for _, d, _ in sent for x in d.split(b"\n")]
    assert [x["id"] for x in lines] == [f"e{i}" for i in range(10)]
    assert [x["time"] for x in lines] == pytest.approx([origin + t for t in times])
    demo = yaml.safe_load((ROOT / "configs" / "pubsub_local.yaml").read_text())
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(demo))
    with pytest.raises(ConfigError, match="only the randomized_response collector"):
        pubsub_tool.publish(load_config(tmp_path / "demo.yaml"), str(reports), origin, 1.0, lines_per_message=4)


# ---------------------------------------------------------------------------
# the client ledger, the reference collector and the simulator
# (each test names the mutants of the mutation benchmark it kills, benchmarks/mutation_config.py;
# the numbers are those of the last run, docs/testing.md)
# ---------------------------------------------------------------------------


def test_rr_client_ledger_holds_the_fold_of_an_approximate_report():
    """A client's ledger holds fold x (eps_r, delta_r) (Pan Cor. 5.1: 2k-fold for
    at most k mutations), under (eps, delta) reports as under pure ones.
    Kills rr_client.RRClient.__init____mutmut_28 (eps divided by the fold)."""
    from transforms.core.families.rr_client import AtMostK, RRClient, SurveyDesign

    for delta in (0.0, 1e-6):
        d = SurveyDesign(3, 0.5, delta, AtMostK(2))
        cap = RRClient(d).ledger.budget
        assert d.fold == 4
        assert cap == (PureDP(2.0) if delta == 0 else ApproxDP(2.0, 4e-6))


def test_local_dp_reference_runs_to_the_end_and_node_counts_count():
    """The in-memory collector releases every period up to the end even when the
    reports stop early, and ``node_counts`` gives #new=r - #old=r per cell, the
    cells each report's mutation touches and the report count.
    Kills local_dp.in_memory__mutmut_37 and node_counts__mutmut_12."""
    from transforms.core.families.local_dp import (
        RandomizedResponseCollector,
        RROptions,
        in_memory,
        node_counts,
        simulate,
    )
    from transforms.core.families.rr_client import symbol_of

    config = DynamicConfig((QuerySet("answer", "histogram", domain_size=3),), PureDP(16.0))
    coll = RandomizedResponseCollector(config, options=RROptions(max_mutations=2), end_tick=10)
    sim = simulate(coll.design, 40, 4, seed=2)  # reports for periods 1-4 only
    assert [r.tick for r in in_memory(coll, sim.reports, 10)] == list(range(1, 11))
    symbols = [symbol_of(None, 0, 3), symbol_of(0, 2, 3), symbol_of(1, 1, 3), symbol_of(2, None, 3)]
    diff, touch, n = node_counts(symbols, 3)
    assert n == 4 and diff == [1 - 1, 0, 1 - 1] and touch == [2, 0, 2]


def test_simulated_refused_mutation_comes_after_the_entry_starts():
    """The simulator's one mutation too many (``violate``) falls after the
    entry's insertion. Two periods, at most one mutation: an entry inserted in
    period 1 tries (and is refused) a second one in period 2; one inserted in
    period 2 has no room. So the refusals equal the entries present in period 1.
    Kills local_dp.simulate__mutmut_72 (the extra mutation drawn from any
    period, also before the insertion, or at a period 0 that never comes)."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.families.rr_client import AtMostK, SurveyDesign

    design = SurveyDesign(3, 1.0, 0.0, AtMostK(1))
    for seed in range(3):
        sim = simulate(design, 200, 2, seed=seed, violate=1.0)
        assert 0 < sim.refused == sum(sim.truth[0]) < 200


def test_simulator_keeps_time_bounded_entries_inside_their_bound():
    """Under a time bound, the simulated entries plan their mutations within the
    bound of their insertion, so without ``violate`` no client refuses anything
    (and with it, some do). Kills local_dp.simulate__mutmut_22 (mutations
    planned to the last period, past the bound)."""
    from transforms.core.families.local_dp import simulate
    from transforms.core.families.rr_client import SurveyDesign, TimeBounded

    design = SurveyDesign(3, 1.0, 0.0, TimeBounded(2))
    assert simulate(design, 200, 12, seed=4).refused == 0
    assert simulate(design, 200, 12, seed=4, violate=0.5).refused > 0


def test_collector_check_settings_refuses_what_design_for_refuses_and_plans_the_whole_budget():
    """The registry's ``check_settings`` refuses, before a run, every configuration the survey cannot be
    designed for (two query sets, a count, rho, a non-update unit), accepts the others; the plan is the
    collector over its one query set with the whole budget (issue 27: no fast test called them)."""
    import dataclasses

    from transforms.core import ZCDP, PrivacyUnit

    good = config()
    RandomizedResponseCollector.check_settings(good, RROptions())
    assert RandomizedResponseCollector.check_settings(good, RROptions(), end_tick=10, every_ticks=2) is None
    bad = [
        dataclasses.replace(good, queries=(*good.queries, QuerySet("other", "histogram", domain_size=2))),
        dataclasses.replace(good, queries=(QuerySet("n", "count"),)),
        dataclasses.replace(good, budget=ZCDP(0.5)),
        dataclasses.replace(good, unit=PrivacyUnit.entry(2)),
    ]
    for cfg in bad:
        with pytest.raises(ValueError, match="randomized_response"):
            RandomizedResponseCollector.check_settings(cfg, RROptions())
    (entry,) = RandomizedResponseCollector.plan(good, RROptions(), end_tick=10)
    assert entry.mechanism == RandomizedResponseCollector.name == "randomized_response"
    assert entry.queries == tuple(q.name for q in good.queries) and entry.share == 1.0 and entry.reason is None


def test_time_bound_accepts_every_number_from_zero():
    """``TimeBounded(periods)``: any finite number >= 0 (0: every mutation in the first one's period; a
    fraction: rounded up by ``span``) (issue 27: a bound refusing 0 to 1 survived the fast tier)."""
    from transforms.core.families.rr_client import TimeBounded

    assert TimeBounded(0).span == 0
    assert TimeBounded(0.5).span == 1
    assert TimeBounded(3).span == 3
    for bad in (-0.5, True, float("inf"), "2"):
        with pytest.raises(ValueError):
            TimeBounded(bad)
