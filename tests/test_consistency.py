"""Histograms consistent with the count (``release.consistent``): the
projection against brute force, its error bound (deterministic lemma and
coverage through a real mechanism), the Beam transform against the in-memory
core (batch and streaming), the pipeline and its configuration."""

import json

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from test_beam_releases import KEY_HEX, REL, RUNNERS, noise_of, streaming_options, workload

from pipelines.config import ConfigError, load_config
from transforms.core import MECHANISMS, DynamicConfig, NoiseSource, PureDP, QuerySet, Update
from transforms.core.continual.consistency import (
    Consistency,
    apportion,
    consistent_histogram,
    make_consistent,
    project_to_simplex,
)
from transforms.core.foundation.outputs import Answer
from transforms.records import NoiseKey
from transforms.releases import ReleaseContinually, StreamSpec

CFG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(2.0))
PAIRS = Consistency((("h", "n"),))


# -- the projection -----------------------------------------------------------------


def _project_bisect(x, total):
    """Reference: the threshold tau of max(x - tau, 0) found by bisection."""
    x = np.asarray(x, float)
    lo, hi = x.min() - total - 1.0, x.max() + 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if np.maximum(x - mid, 0).sum() > total:
            lo = mid
        else:
            hi = mid
    return np.maximum(x - (lo + hi) / 2, 0)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=30),
    st.floats(0, 1e5, allow_nan=False),
)
def test_projection_is_the_euclidean_projection(x, total):
    p = project_to_simplex(x, total)
    assert (p >= 0).all()
    assert p.sum() == pytest.approx(total, rel=1e-9, abs=1e-6)
    np.testing.assert_allclose(p, _project_bisect(x, total), atol=1e-6 * max(1.0, total, np.abs(x).max()))


def test_projection_is_closest_among_random_feasible_points():
    """No point of the simplex is closer to x than the projection (random search)."""
    rng = np.random.default_rng(1)
    for _ in range(50):
        d = int(rng.integers(2, 9))
        x = rng.normal(0, 10, d)
        total = float(rng.uniform(0, 50))
        p = project_to_simplex(x, total)
        for _ in range(200):
            q = rng.dirichlet(np.ones(d)) * total
            assert np.sum((q - x) ** 2) >= np.sum((p - x) ** 2) - 1e-9


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=1, max_size=20))
def test_apportion_keeps_the_sum_and_moves_each_cell_less_than_one(cells):
    total = int(round(sum(cells)))
    p = project_to_simplex(np.asarray(cells), float(total))
    a = apportion(p, total)
    assert a.sum() == total
    assert (a == np.round(a)).all() and (a >= 0).all()
    assert (np.abs(a - p) < 1).all()


def _worst_error(rng, d, bh, bc, trials=20000):
    """The largest cell error of the consistent histogram over random truths and
    noises inside the boxes |e_i| <= bh, |e_c| <= bc (corners favoured)."""
    worst = 0.0
    for _ in range(trials):
        h = rng.integers(0, 12, d).astype(float) * rng.integers(0, 2, d)
        n = h.sum()
        e = rng.choice([-1.0, 1.0, 0.0, rng.uniform(-1, 1)], d) * bh
        ec = rng.choice([-1.0, 1.0, rng.uniform(-1, 1)]) * bc
        _, _, p, _, _ = consistent_histogram(n + ec, bc, 0.0, h + e, bh, 0.0)
        worst = max(worst, float(np.abs(p - h).max()))
    return worst


@pytest.mark.parametrize("d,bh,bc", [(2, 1.0, 3.0), (3, 1.0, 0.5), (4, 2.0, 2.0), (8, 1.5, 6.0), (16, 3.0, 1.0)])
def test_bound_holds_for_every_noise_inside_the_boxes(d, bh, bc):
    """The lemma of ``transforms.core.continual.consistency``: inside the boxes every cell
    is within max(2 B_h, B_c); and the bound is nearly attained, so a twin
    that states less (max(B_h, B_c), or the histogram's own B_h) is broken by
    some input this search finds."""
    rng = np.random.default_rng(d)
    worst = _worst_error(rng, d, bh, bc)
    stated = max(2 * bh, bc)
    assert worst <= stated + 1e-9
    assert worst >= 0.7 * stated and worst > bh
    if 2 * bh > bc:
        assert worst > max(bh, bc)


def test_bound_lemma_is_attained_with_all_mass_in_one_cell():
    # the count too low by B_c, all mass in one cell: that cell loses B_c
    _, _, p, hb, beta = consistent_histogram(10 - 3.0, 3.0, 0.05, np.array([10.0, 1.0, 1.0]), 1.0, 0.05)
    assert np.abs(p - [10, 0, 0]).max() == pytest.approx(3.0)
    assert hb == pytest.approx(max(2 * 1.0, 3.0)) and beta == pytest.approx(0.1)


def test_consistent_histogram_rounds_to_integers_summing_to_the_rounded_count():
    c, cb, p, hb, beta = consistent_histogram(7.6, 2.0, 0.05, np.array([3.2, -1.0, 4.9]), 1.0, 0.05, True)
    assert c == 8.0 and cb == 2.5
    assert p.sum() == 8 and (p == np.round(p)).all() and (p >= 0).all()
    assert hb == pytest.approx(max(2 * 1.0, 2.5) + 1.0) and beta == pytest.approx(0.1)
    # a negative count: everything 0, the count's bound unchanged
    c, cb, p, hb, _ = consistent_histogram(-4.0, 5.0, 0.05, np.array([1.0, 2.0]), 1.0, 0.05)
    assert c == 0.0 and cb == 5.0 and (p == 0).all() and hb == 5.0
    # bounds not stated stay not stated
    assert consistent_histogram(3.0, None, 0.05, np.array([1.0, 2.0]), 1.0, 0.05)[3] is None


def _answer(q, tick, est, bound=1.0, stream="s"):
    return Answer(stream, tick, 0, q, np.asarray(est, float), bound, 0.05, PureDP(1.0))


def test_make_consistent_pairs_by_stream_and_tick_and_keeps_order():
    answers = [
        _answer("n", 1, [5.0]),
        _answer("h", 1, [3.0, -1.0, 2.5]),
        _answer("h", 2, [1.0, 1.0, 1.0]),  # no count at tick 2: left as released
        _answer("n", 1, [-2.0], stream="t"),
        _answer("h", 1, [1.0, 1.0, 1.0], stream="t"),
    ]
    out = make_consistent(answers, Consistency((("h", "n"),)))
    assert [(a.stream, a.tick, a.query) for a in out] == [(a.stream, a.tick, a.query) for a in answers]
    assert out[1].estimate.sum() == pytest.approx(5.0) and (out[1].estimate >= 0).all()
    assert out[1].error_bound == 2.0 and out[1].beta == pytest.approx(0.1)
    assert out[2] is answers[2]
    assert out[3].estimate[0] == 0.0 and (out[4].estimate == 0).all()
    assert make_consistent(answers, Consistency()) == answers


def test_consistency_validates_its_pairs():
    with pytest.raises(ValueError, match="one count only"):
        Consistency((("h", "n"), ("h", "m")))
    with pytest.raises(ValueError, match="both"):
        Consistency((("h", "n"), ("n", "m")))
    with pytest.raises(ValueError, match="exactly one count"):
        Consistency.for_config(DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(1.0)))
    assert Consistency.for_config(CFG).pairs == (("h", "n"),)


# -- coverage through a real mechanism ------------------------------------------------


def _truth_and_runs(seeds, ticks=40, end=40, consistent=True):
    """net_change (k-ary tree) on one random stream, under many keys: per key,
    the consistent releases; and the true count and histogram per tick."""
    rng = np.random.default_rng(7)
    live, truth, batches = {}, {}, []
    for t in range(1, ticks + 1):
        ups = []
        for _ in range(int(rng.integers(0, 5))):
            if live and rng.random() < 0.4:
                eid = list(live)[int(rng.integers(len(live)))]
                del live[eid]
                ups.append(Update("delete", eid))
            else:
                eid = f"e{t}-{len(ups)}"
                live[eid] = (0, int(rng.integers(4)))
                ups.append(Update("insert", eid, live[eid]))
        batches.append((t, ups))
        h = np.zeros(4)
        for item in live.values():
            h[item[1]] += 1
        truth[t] = (len(live), h)
    runs = []
    for seed in seeds:
        core = MECHANISMS["net_change"].core_cls(CFG, stream="s", end_tick=end, every_ticks=1)
        noise = NoiseSource.from_hex(f"{seed:064x}").for_release(REL)
        answers = []
        for t, ups in batches:
            answers += make_consistent(core.process_tick(t, ups, noise).answers, PAIRS if consistent else Consistency())
        runs.append(answers)
    return truth, runs


@pytest.mark.statistical
def test_consistent_bound_covers_at_its_stated_rate():
    """In 400 keyed runs of net_change, at 4 checkpoints, the consistent
    histogram's bound (max(2 B_h, B_c), stated with beta_h + beta_c) fails at most at
    its stated rate: one-sided exact binomial test at 1e-6 per checkpoint
    (Bonferroni: false failure <= 4e-6). Not vacuous: median error/bound >= 0.05.
    The histogram's sum equals the count in every release."""
    truth, runs = _truth_and_runs(range(400))
    checkpoints = (10, 20, 30, 40)
    ratios = []
    for tick in checkpoints:
        fails, beta = 0, None
        for answers in runs:
            got = {a.query: a for a in answers if a.tick == tick}
            n_true, h_true = truth[tick]
            h, n = got["h"], got["n"]
            assert h.estimate.sum() == pytest.approx(n.estimate[0]) and (h.estimate >= 0).all()
            err = np.abs(h.estimate - h_true).max()
            fails += err > h.error_bound
            ratios.append(err / h.error_bound)
            beta = h.beta
        assert beta == pytest.approx(2 * CFG.beta)
        assert stats.binom.sf(fails - 1, len(runs), beta) > 1e-6, (tick, fails)
    assert np.median(ratios) >= 0.05


def test_consistency_lowers_the_histogram_error_on_sparse_cells():
    """What users gain (measured, not assumed): on the same keys, the mean cell
    error of the consistent histogram is below that of the released one
    clamped at 0."""
    truth, cons = _truth_and_runs(range(60))
    _, raw = _truth_and_runs(range(60), consistent=False)

    def mean_err(runs, post):
        return np.mean([np.abs(post(a.estimate) - truth[a.tick][1]).mean() for r in runs for a in r if a.query == "h"])

    assert mean_err(cons, lambda e: e) < mean_err(raw, lambda e: np.maximum(e, 0))


# -- Beam ------------------------------------------------------------------------------


def _in_memory_consistent(records, spec, cfg, noise, mechanism="net_change"):
    out = []
    for s in spec.streams:
        core = MECHANISMS[mechanism].core_cls(cfg, stream=s, end_tick=spec.end_tick, every_ticks=spec.every_ticks)
        by_tick = {}
        for r in sorted((r for r in records if r.stream == s), key=lambda r: (spec.tick_of(r.event_time), r.seq)):
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
        results = [core.process_tick(t, ups, noise) for t, ups in sorted(by_tick.items())]
        results += core.run_to_end(noise)
        for res in results:
            for a in make_consistent(res.answers, PAIRS):
                out.append((a.stream, a.tick, a.query, tuple(float(x) for x in a.estimate), a.error_bound, a.beta))
    return sorted(out)


def _key(a):
    return (a.stream, a.tick, a.query, a.estimate, a.error_bound, a.beta)


@pytest.mark.parametrize("mechanism", ["net_change", "auto"])
def test_batch_transform_releases_the_in_memory_consistent_answers(mechanism):
    recs = workload(n=200, seed=3)
    spec = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=150.0, every_ticks=1)
    t = ReleaseContinually(mechanism, CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL, consistency=PAIRS)
    expect = _in_memory_consistent(recs, spec, CFG, noise_of(t), mechanism)
    assert len(expect) == 2 * 2 * spec.end_tick  # every tick, both queries, both streams
    with TestPipeline(options=RUNNERS["fnapi"]) as p:
        out = p | beam.Create(recs) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time)) | t
        assert_that(out["answers"] | beam.Map(_key), equal_to(expect))
    # the histogram sums to the count in every release, cells >= 0
    by = {}
    for s, tick, q, est, _, _ in expect:
        by.setdefault((s, tick), {})[q] = est
    for v in by.values():
        assert sum(v["h"]) == pytest.approx(v["n"][0]) and min(v["h"]) >= 0


def test_streaming_transform_releases_the_in_memory_consistent_answers():
    spec = StreamSpec(streams=("a", "b"), tick_seconds=10.0, end_time=300.0, every_ticks=1)
    recs = [r for r in workload(n=100, seed=4) if r.event_time < 60.0]
    stream = TestStream()
    by_tick = {}
    for r in recs:
        by_tick.setdefault(spec.tick_of(r.event_time), []).append(r)
    wm = 0.0
    for tick in sorted(by_tick):  # a tick's updates, then the watermark to its end (quarter-tick steps)
        stream = stream.add_elements([beam.window.TimestampedValue(r, r.event_time) for r in by_tick[tick]])
        while wm < spec.origin + tick * spec.tick_seconds:
            wm += spec.tick_seconds / 4
            stream = stream.advance_watermark_to(wm)
    while wm < 400:
        wm += spec.tick_seconds / 4
        stream = stream.advance_watermark_to(wm)
    stream = stream.advance_watermark_to_infinity()
    t = ReleaseContinually("net_change", CFG, spec, NoiseKey.fixed(KEY_HEX), release=REL, consistency=PAIRS)
    expect = _in_memory_consistent(recs, spec, CFG, noise_of(t))
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | t
        assert_that(out["answers"] | beam.Map(_key), equal_to(expect))


def test_transform_refuses_pairs_that_are_not_a_histogram_and_a_count():
    spec = StreamSpec(streams=("a",), end_time=100.0, every_ticks=1)
    with pytest.raises(ValueError, match="histogram and a count"):
        ReleaseContinually("net_change", CFG, spec, NoiseKey.fixed(KEY_HEX), consistency=Consistency((("n", "h"),)))
    with pytest.raises(TypeError, match="Consistency"):
        ReleaseContinually("net_change", CFG, spec, NoiseKey.fixed(KEY_HEX), consistency=(("h", "n"),))


# -- the pipeline ------------------------------------------------------------------------


def _demo_config(tmp_path, release):
    text = open("configs/demo.yaml").read().replace("release: {every_ticks: 1}", f"release: {release}")
    cfg_path = tmp_path / "demo.yaml"
    cfg_path.write_text(text)
    return cfg_path


@pytest.mark.parametrize(
    "release,match",
    [
        ("{consistent: true, clamp: false}", "remove release.clamp"),
        ("{consistent: yes please}", "true or false"),
    ],
)
def test_config_refuses_inconsistent_settings(tmp_path, release, match):
    with pytest.raises(ConfigError, match=match):
        load_config(_demo_config(tmp_path, release))


def test_config_needs_exactly_one_count(tmp_path):
    text = open("configs/demo.yaml").read().replace("release: {every_ticks: 1}", "release: {consistent: true}")
    text = text.replace("  - {name: active, type: count}\n", "")
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match="exactly 1 count"):
        load_config(p)
    p.write_text(text.replace("queries:\n", "queries:\n  - {name: a, type: count}\n  - {name: b, type: count}\n"))
    with pytest.raises(ConfigError, match="2 count"):
        load_config(p)


@pytest.mark.slow
def test_demo_pipeline_with_consistent_histograms(tmp_path, monkeypatch):
    """The demo with ``release: {consistent: true, round: true}``: every carrier
    histogram is integer, >= 0 and sums to the active count of its release."""
    from pipelines.release import main

    text = (
        open("configs/demo.yaml")
        .read()
        .replace("release: {every_ticks: 1}", "release: {every_ticks: 1, consistent: true, round: true}")
    )
    text = text.replace("path: output/", f"path: {tmp_path}/out/").replace("output-confidential/", f"{tmp_path}/conf/")
    cfg_path = tmp_path / "demo.yaml"
    cfg_path.write_text(text)
    monkeypatch.setenv("DP_NOISE_KEY", KEY_HEX)
    assert main(["--config", str(cfg_path)]) == 0
    rows = [json.loads(line) for f in (tmp_path / "out").glob("releases*.jsonl") for line in f.read_text().splitlines()]
    by = {}
    for r in rows:
        by.setdefault((r["stream"], r["tick"]), {})[r["query"]] = r
    assert len(by) > 1000
    for v in by.values():
        cells = list(v["by_carrier"]["estimate"].values())
        assert min(cells) >= 0 and all(c == int(c) for c in cells)
        assert sum(cells) == v["active"]["estimate"]
        assert v["by_carrier"]["beta"] == pytest.approx(2 * v["active"]["beta"])


def test_rounding_reaches_the_releases_and_apportion_keeps_any_total():
    """``round_answers`` travels from the configuration to every consistent pair
    (integer cells summing to the rounded count), and ``apportion`` meets its
    total from either side (it removes units when the floors already exceed it)."""
    cons = Consistency.for_config(CFG, round_answers=True)
    assert cons.round_answers is True and Consistency.for_config(CFG).round_answers is False
    out = make_consistent([_answer("n", 1, [4.6]), _answer("h", 1, [2.2, 1.7, 0.4, 0.1])], cons)
    assert out[0].estimate[0] == 5.0 and out[1].estimate.sum() == 5.0
    assert all(float(x).is_integer() for x in out[1].estimate)
    np.testing.assert_array_equal(apportion(np.array([1.0, 1.0]), 1), [0.0, 1.0])
    np.testing.assert_array_equal(apportion(np.array([2.0, 1.0, 1.0]), 3), [1.0, 1.0, 1.0])


def test_apportion_removes_a_floating_excess_from_the_largest_cells_first():
    """When the floors already exceed the total (the floating residue branch), the units come off the largest
    cells, ties at the lower index (issue 27: no fast test reached the branch)."""
    from transforms.core.continual.consistency import apportion

    assert apportion([1.0, 3.0, 2.0], 4).tolist() == [1.0, 2.0, 1.0]
    assert apportion([2.0, 2.0, 1.0], 4).tolist() == [1.0, 2.0, 1.0]
    assert apportion([0.0, 5.0], 4).tolist() == [0.0, 4.0]
