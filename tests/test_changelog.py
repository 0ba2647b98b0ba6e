"""Changelog releases (Pan 004 §4; ``transforms/core/families/changelog.py``,
``docs/changelog.md``): DCR, HDCR and SWCR, their accounting by constraint and
the enforcement of the constraints.

* noise off: exact answers on random changelogs (insert / modify / delete,
  several query sets) at every release, for every mechanism and shape;
* MostSpan against a brute-force sliding window on random time grids;
* the fold counts against the paper's formulas over a grid of (k, B, W, P, c,
  h), and against a brute force over the nodes one entry can touch;
* enforcement: the (k+1)-th mutation and a mutation after B are dead-lettered
  and the releases equal those of the input without them, in memory and
  through the Beam pipeline;
* HDCR covers: a partition of the range from at most 2(c-1)h_min nodes;
* variances against the closed forms (exact and empirical);
* an empirical privacy test: two changelogs differing by one entry of k
  mutations; a twin that charges 1-fold fails it.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
import yaml
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from beam_runners import FNAPI_RUNNER
from dp_harness import assert_within_loss

from pipelines.config import ConfigError, check_mechanism, load_config, parse_config
from transforms.core import (
    MECHANISMS,
    ZCDP,
    ApproxDP,
    DynamicConfig,
    NoiseSource,
    PureDP,
    QuerySet,
    Update,
)
from transforms.core.families import changelog as cl
from transforms.core.foundation.accounting import PrivacyUnit, as_vector
from transforms.core.foundation.entries import EntryRegistry, MutationLimit
from transforms.core.foundation.noise import (
    ReleaseIdentity,
)
from transforms.core.static import (
    LinearQueryMechanism,
)
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, StreamSpec

ROOT = Path(__file__).resolve().parents[1]
KEY = bytes(range(32))
REL = ReleaseIdentity("changelog-tests")
Q = (
    QuerySet("n", "count"),
    QuerySet("h", "histogram", domain_size=4),
    QuerySet("s", "linear", domain_size=5, matrix=((0.0, 0.25, 0.5, 0.75, 1.0),)),  # a sum
)


def changelog(ticks=60, seed=0, per_tick=(0, 5), p_modify=0.35, p_delete=0.2, ids=None):
    """A random changelog: per tick, inserts, modifications (upserts) and
    deletes of entries; items are (count cell, histogram cell, sum level)."""
    rng = np.random.default_rng(seed)
    live, out, n = [], [], 0
    for tick in range(1, ticks + 1):
        ups = []
        for _ in range(int(rng.integers(per_tick[0], per_tick[1] + 1))):
            item = (0, int(rng.integers(4)), int(rng.integers(5)))
            r = rng.random()
            if live and r < p_modify:
                ups.append(Update("upsert", live[int(rng.integers(len(live)))], item))
            elif live and r < p_modify + p_delete:
                ups.append(Update("delete", live.pop(int(rng.integers(len(live))))))
            else:
                eid = f"e{n}" if ids is None else ids[n % len(ids)]
                n += 1
                if eid in live:
                    continue
                live.append(eid)
                ups.append(Update("insert", eid, item))
        out.append((tick, ups))
    return out


def truth(batches, upto):
    """Exact answers on the data alive after tick ``upto`` (the accepted updates)."""
    live = {}
    for tick, ups in batches:
        if tick > upto:
            break
        for u in ups:
            if u.op == "delete":
                live.pop(u.entry_id, None)
            else:
                live[u.entry_id] = u.item
    items = list(live.values())
    hist = np.bincount([i[1] for i in items], minlength=4).astype(float)
    s = float(sum(Q[2].matrix[0][i[2]] for i in items))
    return {"n": np.array([float(len(items))]), "h": hist, "s": np.array([s])}


def run(core, batches, noise, advance=None):
    res = [core.process_tick(t, ups, noise) for t, ups in batches]
    if core.end_tick is not None:
        res += core.run_to_end(noise)
    elif advance is not None:
        res.append(core.advance(advance, noise))
    return [a for r in res for a in r.answers]


SHAPES = [
    ("dcr", {}, None, None),
    ("dcr", {"window": 3}, 2, 100),
    ("hdcr", {}, None, None),
    ("hdcr", {"branching": 2, "height": 3}, None, 77),
    ("hdcr", {"branching": 3, "window": 2}, 3, 95),
    ("hdcr", {"branching": 5, "height": 1}, None, None),
    ("swcr", {}, None, None),
    ("swcr", {"window": 6, "period": 4, "method": "direct"}, None, 103),
    ("swcr", {"window": 6, "period": 4, "method": "hdcr", "branching": 2}, 2, 101),
    ("swcr", {"window": 9, "method": "hdcr", "branching": 3}, None, 70),
    ("swcr", {"window": 1, "period": 3}, None, None),
]


@pytest.mark.parametrize("name,options,every,end", SHAPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_noise_off_answers_are_exact_at_every_release(name, options, every, end, seed):
    batches = changelog(ticks=60, seed=seed)
    cls = MECHANISMS[name].core_cls
    core = cls(
        DynamicConfig(Q, PureDP(1.0)),
        stream="s",
        options=MECHANISMS[name].options(**options),
        every_ticks=every,
        end_tick=end,
    )
    answers = run(core, batches, NoiseSource.disabled(), advance=120)
    n = every or 1
    unit = core.unit_ticks
    assert answers
    released_at = sorted({a.tick for a in answers})
    if name == "swcr":
        step = options.get("period", 1) * n
        expect_ticks = list(range(step, (end or 120) + 1, step))
    else:
        expect_ticks = list(range(unit, (end or 120) + 1, unit))
    if end is not None and end not in expect_ticks:
        expect_ticks.append(end)  # the last release is at the end tick exactly
    assert released_at == expect_ticks
    for a in answers:
        if name == "swcr":
            # the window (r - W, r] ending at the answer's right end r (at the end:
            # the next aligned end, no data can come after it)
            r = -(-a.tick // (options.get("period", 1) * n)) * options.get("period", 1) * n
            w = options.get("window", 7) * n
            expect = truth(batches, a.tick)[a.query] - truth(batches, r - w)[a.query]
        else:
            expect = truth(batches, a.tick)[a.query]
        assert a.estimate == pytest.approx(expect, abs=1e-6), (a.tick, a.query)
        assert a.error_bound == 0


def test_default_options_run_alone():
    """``mechanism: {kind: hdcr}`` alone runs: every option defaults."""
    for name in ("dcr", "hdcr", "swcr"):
        core = MECHANISMS[name].core_cls(DynamicConfig(Q, PureDP(1.0)), stream="s")
        assert core.total_fold >= 1 and core.h >= 1 and core.c >= 2
        res = core.process_tick(1, [Update("insert", "a", (0, 1, 2))], NoiseSource(KEY).for_release(REL))
        assert len(res.answers) == 3 and all(a.error_bound > 0 for a in res.answers)


# ---------------------------------------------------------------------------
# MostSpan and the folds
# ---------------------------------------------------------------------------


def brute_most_span(t, b):
    """Every integer window [s, s + B]: the number of ranges (t_{i-1}, t_i] it meets."""
    best = 0
    for s in range(t[0] - b - 2, t[-1] + 1):
        met = set()
        for tau in range(s, s + b + 1):
            if tau > t[-1]:
                break
            met.add(next(i for i, ti in enumerate(t) if tau <= ti))
        best = max(best, len(met))
    return best


def test_most_span_equals_a_brute_force_sliding_window():
    rng = np.random.default_rng(4)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        t = np.cumsum(rng.integers(1, 9, size=n)).tolist()
        b = int(rng.integers(0, 25))
        assert cl.most_span(t, b) == brute_most_span(t, b), (t, b)
    # a fixed period W: Cor. 4.1's ceil(B/W) + 1 (once the grid is long enough)
    for w in range(1, 7):
        for b in range(0, 30):
            assert cl.most_span(list(range(w, 60 * w + 1, w)), b) == math.ceil(b / w) + 1


GRID = [
    (k, b, w, p, c, h)
    for k in (None, 1, 2, 5)
    for b in (None, 0, 3, 10, 31)
    for w in (1, 2, 7)
    for p in (1, 3, 7)
    for c in (2, 3, 10)
    for h in (1, 2, 4)
    if k is not None or b is not None
]


def test_folds_match_the_papers_formulas():
    """Over a grid of (k, B, W, P, c, h): k, hk, k ceil(W/P) (at most k);
    ceil(B/W) + 1, the per-layer sum, ceil((B+W)/P) (time-bounded)."""
    assert len(GRID) > 1000
    for k, b, w, p, c, h in GRID:
        _check_folds(k, b, w, p, c, h)


def _check_folds(k, b, w, p, c, h):
    at_most = {"dcr": k, "hdcr": None if k is None else h * k, "swcr": None if k is None else k * math.ceil(w / p)}
    # time-bounded: Cor. 4.1, Thm 4.3 counted per layer (Cor. 4.1 at interval c^i W), Thm 4.6
    timed = (
        {
            "dcr": math.ceil(b / w) + 1,
            "hdcr": sum(math.ceil(b / (c**i * w)) + 1 for i in range(h)),
            "swcr": math.ceil((b + w) / p),
        }
        if b is not None
        else {"dcr": None, "hdcr": None, "swcr": None}
    )
    got = {"dcr": cl.dcr_fold(k, b, w), "hdcr": cl.hdcr_fold(h, c, k, b, w), "swcr": cl.swcr_fold(w, p, k, b)}
    for name in got:
        given = [x for x in (at_most[name], timed[name]) if x is not None]
        if name == "hdcr" and k is not None and b is not None:  # both enforced: per layer the smaller
            assert got[name] == sum(min(k, math.ceil(b / (c**i * w)) + 1) for i in range(h))
            assert got[name] <= min(given)
        else:
            assert got[name] == min(given), name
    if b is not None:  # the paper's printed Thm 4.3 sum (1/c^i) ceil(B/W) + 1 never exceeds the per-layer count
        assert cl.hdcr_fold(h, c, None, b, w) >= sum(math.ceil(b / w) / c**i + 1 for i in range(h)) - 1e-9
    assert cl.hybrid_fold(*given) == max(given)


def brute_nodes_touched(ticks, spans):
    """Distinct nodes ((t-1)//span per layer span) an entry mutating at ``ticks`` touches."""
    return sum(len({(t - 1) // s for t in ticks}) for s in spans)


def test_folds_bound_the_nodes_one_entry_touches():
    """Random mutation times within the constraint never touch more nodes (DCR,
    HDCR) or windows (SWCR) than the fold counts, and some reach them."""
    rng = np.random.default_rng(7)
    reached = set()
    for _ in range(3000):
        k = int(rng.integers(1, 5))
        b = int(rng.integers(0, 20))
        w, c, h = int(rng.integers(1, 5)), int(rng.integers(2, 4)), int(rng.integers(1, 4))
        t0 = int(rng.integers(1, 40))
        ticks = sorted({t0} | {int(x) for x in rng.integers(t0, t0 + b + 1, size=k - 1)})
        spans = [c**i * w for i in range(h)]
        touched = brute_nodes_touched(ticks, spans)
        assert touched <= cl.hdcr_fold(h, c, k, b, w)
        assert brute_nodes_touched(ticks, [w]) <= cl.dcr_fold(k, b, w)
        reached.add(touched == cl.hdcr_fold(h, c, k, b, w))
        p = int(rng.integers(1, 5))
        windows = {r for t in ticks for r in range(t, t + w) if r % p == 0}  # right ends r with t in (r - W, r]
        assert len(windows) <= cl.swcr_fold(w, p, k, b)
    assert reached == {True, False}


def test_fold_composes_in_every_currency():
    assert cl.fold(PureDP(0.25), 4) == PureDP(1.0)
    assert as_vector(cl.fold(ApproxDP(0.1, 1e-7), 3)) == pytest.approx((0.3, 3e-7))
    assert cl.fold(ZCDP(0.05), 6).rho == pytest.approx(0.3)
    with pytest.raises(ValueError):
        cl.fold(PureDP(1.0), 0)
    with pytest.raises(ValueError):
        cl.dcr_fold(None, None, 1)


# ---------------------------------------------------------------------------
# the ledger: the configured guarantee, charge by charge
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [PureDP(2.0), ZCDP(0.5), ApproxDP(2.0, 1e-6)])
@pytest.mark.parametrize("name,options", [("dcr", {}), ("hdcr", {"branching": 3}), ("swcr", {"window": 5})])
@pytest.mark.parametrize("k,b", [(3, None), (None, 4), (2, 6)])
def test_ledger_charges_the_fold_of_each_node(name, options, budget, k, b):
    unit = PrivacyUnit.entry(k, b)
    config = DynamicConfig(Q, budget, unit=unit)
    core = MECHANISMS[name].core_cls(config, stream="s", options=MECHANISMS[name].options(**options), end_tick=50)
    core.ledger.keep_records = True
    run(core, changelog(ticks=50, seed=2), NoiseSource(KEY).for_release(REL))
    cap = core.ledger_cap(config)
    share = cap.scale(1 / len(Q))
    folds = core.layer_folds
    for rec in core.ledger.records:
        layer = rec.coordinates[4] if rec.coordinates[3] == "layer" else 0
        expect = cl.fold(share.scale(1 / sum(folds)), folds[layer])
        assert as_vector(rec.cost) == pytest.approx(as_vector(expect), rel=1e-9), rec.coordinates
    assert as_vector(core.spent) == pytest.approx(as_vector(cap), rel=1e-9)  # the worst entry's loss: the budget
    if name == "dcr":
        assert folds == (cl.dcr_fold(k, b, 1),)
    if name == "swcr" and core.direct:
        assert folds == (cl.swcr_fold(5, 1, k, b),)


def test_sensitivity_ratios_of_an_entrys_change():
    lap = [q.mechanism("laplace") for q in Q]
    gau = [q.mechanism("gaussian") for q in Q]
    assert [cl.entry_sensitivity_ratio(m) for m in lap] == [1.0, 2.0, 1.0]
    assert [cl.entry_sensitivity_ratio(m) for m in gau] == pytest.approx([1.0, math.sqrt(2), 1.0])
    two = QuerySet("two", "linear", domain_size=2, matrix=((1.0, 0.0), (0.0, 1.0))).mechanism("laplace")
    assert cl.entry_sensitivity_ratio(two) == 2.0  # a change from one cell to the other moves both queries


# ---------------------------------------------------------------------------
# enforcement
# ---------------------------------------------------------------------------


def test_registry_enforces_k_and_the_window():
    reg = EntryRegistry((3,), max_mutations=MutationLimit(3, 10))
    ok = lambda t, u: reg.resolve_tick(t, [u])[1] == []  # noqa: E731
    assert ok(5, Update("insert", "a", (0,)))
    assert ok(9, Update("upsert", "a", (1,)))
    assert ok(15, Update("delete", "a"))  # 3 mutations, within 10 ticks of tick 5
    assert reg.resolve_tick(15, [Update("insert", "a", (2,))])[1][0].reason == "constraint_exceeded"  # k + 1
    reg2 = EntryRegistry((3,), max_mutations=MutationLimit(None, 10))
    assert reg2.resolve_tick(1, [Update("insert", "x", (0,))])[1] == []
    assert reg2.resolve_tick(11, [Update("delete", "x")])[1] == []
    assert reg2.resolve_tick(11, [Update("insert", "x", (1,))])[1] == []  # re-insert: the same entry, same age
    assert reg2.resolve_tick(12, [Update("upsert", "x", (2,))])[1][0].reason == "constraint_exceeded"  # after B
    assert reg2.tombstones == {} and reg2.entries["x"] == ((1,), 11, 3, 1)  # (item, tick, mutations, first tick)


def with_violations(batches, k, b, seed=0):
    """The changelog plus, for some entries, a (k+1)-th mutation or one more
    than B ticks after their first insertion (both must be dead-lettered)."""
    rng = np.random.default_rng(seed)
    first, count, last_tick, extra = {}, {}, {}, {}
    for t, ups in batches:
        for u in ups:
            first.setdefault(u.entry_id, t)
            count[u.entry_id] = count.get(u.entry_id, 0) + 1
            last_tick[u.entry_id] = t
    ticks = dict(batches)
    live_at_end = {}
    for _, ups in batches:
        for u in ups:
            live_at_end[u.entry_id] = u.op != "delete"
    n_bad = 0
    for eid in sorted(first):
        if not live_at_end[eid] or rng.random() > 0.3:
            continue
        if b is not None and first[eid] + b + 1 <= 60:
            t = max(first[eid] + b + 1, last_tick[eid] + 1)  # after the window
        elif k is not None and count[eid] >= k:
            t = last_tick[eid] + 1  # the (k+1)-th
        else:
            continue
        if t > 60:
            continue
        extra.setdefault(t, []).append(Update("upsert", eid, (0, int(rng.integers(4)), int(rng.integers(5)))))
        n_bad += 1
    out = [(t, ticks.get(t, []) + extra.get(t, [])) for t in range(1, 61)]
    return out, n_bad


def clean(batches, k, b):
    """The changelog restricted to what satisfies the constraint (each entry's
    first k mutations within B of its first insertion)."""
    first, count, out = {}, {}, []
    for t, ups in batches:
        keep = []
        for u in ups:
            t0 = first.setdefault(u.entry_id, t)
            if (k is not None and count.get(u.entry_id, 0) >= k) or (b is not None and t - t0 > b):
                continue
            count[u.entry_id] = count.get(u.entry_id, 0) + 1
            keep.append(u)
        out.append((t, keep))
    return out


@pytest.mark.parametrize("k,b", [(3, None), (None, 8), (4, 12)])
@pytest.mark.parametrize("name", ["dcr", "hdcr", "swcr"])
def test_violations_are_dead_lettered_and_change_no_release(name, k, b):
    config = DynamicConfig(Q, PureDP(1.0), unit=PrivacyUnit.entry(k, b))
    base = clean(changelog(ticks=60, seed=9, p_modify=0.5, p_delete=0.1), k, b)
    dirty, n_bad = with_violations(base, k, b)
    assert n_bad >= 3
    noise = NoiseSource(KEY).for_release(REL)
    outs = []
    for batches in (base, dirty):
        core = MECHANISMS[name].core_cls(config, stream="s", end_tick=60)
        rejected = []
        answers = []
        for t, ups in batches:
            res = core.process_tick(t, ups, noise)
            rejected += [r.reason for r in res.rejections]
            answers += [(a.tick, a.query, a.estimate.tolist(), a.error_bound) for a in res.answers]
        answers += [
            (a.tick, a.query, a.estimate.tolist(), a.error_bound) for r in core.run_to_end(noise) for a in r.answers
        ]
        outs.append((answers, rejected))
    assert outs[0][1] == [] and outs[1][1] == ["constraint_exceeded"] * n_bad
    assert outs[0][0] == outs[1][0]  # noise on, same release: identical releases


@pytest.mark.parametrize("name", ["dcr", "hdcr", "swcr"])
def test_state_with_a_mutation_window_continues_identically(name):
    """Entry states carry the first insertion tick and tombstones (mutations,
    first tick) under a window: through versioned state mid-stream, the run
    continues exactly (registry included)."""
    from transforms.core.foundation.state import decode, encode

    config = DynamicConfig(Q, PureDP(1.0), unit=PrivacyUnit.entry(3, 10))
    cls = MECHANISMS[name].core_cls
    noise = NoiseSource(KEY).for_release(REL)
    batches, _ = with_violations(clean(changelog(ticks=60, seed=5, p_modify=0.5), 3, 10), 3, 10, seed=2)
    whole = cls(config, stream="s", emit_nodes=True, end_tick=70)
    pieces = cls(config, stream="s", emit_nodes=True, end_tick=70)
    a, b = [], []
    for i, (t, ups) in enumerate(batches):
        a += [(x.tick, x.query, x.estimate.tolist()) for x in whole.process_tick(t, ups, noise).answers]
        b += [(x.tick, x.query, x.estimate.tolist()) for x in pieces.process_tick(t, ups, noise).answers]
        if i in (10, 30, 50):
            reg = pieces.registry
            assert any(len(v) == 4 for v in reg.entries.values())
            pieces = cls.from_state(config, decode(encode(pieces.to_state())), end_tick=70)
            assert pieces.registry.entries == reg.entries and pieces.registry.tombstones == reg.tombstones
    assert any(type(v) is tuple for v in pieces.registry.tombstones.values())
    a += [(x.tick, x.query, x.estimate.tolist()) for r in whole.run_to_end(noise) for x in r.answers]
    b += [(x.tick, x.query, x.estimate.tolist()) for r in pieces.run_to_end(noise) for x in r.answers]
    assert a == b and len(a) == 70 * 3  # every tick, three query sets


_DEAD: list = []
_ANS: list = []


def _dead(d):  # module-level (pickled by reference): the in-process runner shares the lists
    _DEAD.append(d.reason)


def _answer(a):
    _ANS.append((a.stream, a.tick, a.query, tuple(a.estimate)))


def _beam_run(name, config, records, spec, path="bounded"):
    _DEAD.clear()
    _ANS.clear()
    t = ReleaseContinually(name, config, spec, NoiseKey.fixed(KEY.hex()), release=REL)
    if path == "streaming":
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
        opts.view_as(StandardOptions).streaming = True
    else:
        opts = PipelineOptions(runner=FNAPI_RUNNER)
    with TestPipeline(options=opts) as p:
        if path == "streaming":
            ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in records])
            for wm in range(1, 60):
                ts = ts.advance_watermark_to(float(wm))
            src = p | ts.advance_watermark_to_infinity()
        else:
            src = p | beam.Create(records) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        out = src | t
        out["dead_letters"] | beam.Map(_dead)
        out["answers"] | beam.Map(_answer)
    return sorted(_ANS), sorted(_DEAD)


@pytest.mark.parametrize("name,path", [("dcr", "bounded"), ("swcr", "bounded"), ("hdcr", "streaming")])
def test_violations_are_dead_lettered_through_beam(name, path):
    k, b = 3, 8
    config = DynamicConfig(Q, PureDP(1.0), unit=PrivacyUnit.entry(k, b))
    base = clean(changelog(ticks=40, seed=3, p_modify=0.5, p_delete=0.1), k, b)
    dirty, n_bad = with_violations(base, k, b, seed=1)
    dirty = [(t, ups) for t, ups in dirty if t <= 40]
    n_bad = sum(1 for (t, ups), (_, ups0) in zip(dirty, base) for _ in ups[len(ups0) :])
    assert n_bad >= 2
    spec = StreamSpec(streams=("a",), tick_seconds=1.0, end_time=40.0)
    got = []
    for batches in (base, dirty):
        recs = [
            UpdateRecord(t - 0.5, u.op, u.entry_id, u.item, "a", j) for t, ups in batches for j, u in enumerate(ups)
        ]
        got.append(_beam_run(name, config, recs, spec, path))
    assert got[0][1] == [] and got[1][1] == ["constraint_exceeded"] * n_bad
    assert got[0][0] == got[1][0] and len(got[0][0]) >= 3 * 30


def test_pipeline_config_mutation_window(tmp_path):
    raw = yaml.safe_load((ROOT / "configs" / "changelog.yaml").read_text())
    cfg = parse_config(copy.deepcopy(raw))
    assert cfg.mutation_window == 30 * 86400 and cfg.mutation_window_ticks == 30
    assert cfg.privacy_unit == PrivacyUnit.entry(4, 30)
    assert cfg.dynamic_config().max_mutations == MutationLimit(4, 30)
    check_mechanism(cfg)
    # a window alone: k unlimited, for the changelog mechanisms only
    alone = copy.deepcopy(raw)
    del alone["privacy"]["max_mutations_per_entry"]
    cfg = parse_config(alone)
    assert cfg.privacy_unit == PrivacyUnit.entry(None, 30)
    check_mechanism(cfg)
    core = MECHANISMS["hdcr"].core_cls(cfg.dynamic_config(), end_tick=90)
    assert core.k is None and core.b == 30
    alone["mechanism"] = {"kind": "net_change"}
    with pytest.raises(ConfigError, match="privacy.max_mutations_per_entry: required with mechanism.kind net_change"):
        check_mechanism(parse_config(alone))
    for bad, msg in (
        ({"unit": "update", "mutation_window": 10}, "privacy.mutation_window: does not apply"),
        ({"mutation_window": -1}, "privacy.mutation_window"),
        ({"mutation_window": "30d"}, "privacy.mutation_window: must be a number"),
    ):
        r = copy.deepcopy(raw)
        r["privacy"].update(bad)
        if bad.get("unit") == "update":
            del r["privacy"]["max_mutations_per_entry"]
        with pytest.raises(ConfigError, match=msg):
            parse_config(r)
    for bad, msg in (
        ({"kind": "hdcr", "branching": 1}, "branching must be an integer >= 2"),
        ({"kind": "swcr", "method": "magic"}, "method must be one of"),
        ({"kind": "dcr", "branching": 2}, "mechanism.branching: does not apply to kind dcr"),
    ):
        r = copy.deepcopy(raw)
        r["mechanism"] = bad
        with pytest.raises(ConfigError, match=msg):
            parse_config(r)
    r = copy.deepcopy(raw)
    r["mechanism"] = {"kind": "hdcr"}
    check_mechanism(parse_config(r))


def test_bundled_changelog_config_runs(tmp_path, capsys):
    """configs/changelog.yaml on its bundled input (noise off: exact at every
    release), and pipelines.recompute rebuilds every release from the nodes."""
    from pipelines import recompute as rc
    from pipelines.release import main

    raw = yaml.safe_load((ROOT / "configs" / "changelog.yaml").read_text())
    raw["source"]["path"] = str(ROOT / raw["source"]["path"])
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out"), "format": "jsonl"}]
    raw["privacy"]["disable_noise"] = True
    raw["release"] = {"every_ticks": 1, "clamp": False}
    cfg_path = tmp_path / "cfg.yaml"
    cfg_path.write_text(yaml.safe_dump(raw))
    assert main(["--config", str(cfg_path), "--runner=DirectRunner"]) == 0
    out = capsys.readouterr().out
    assert "'constraint_exceeded'" in out
    import json

    releases = [json.loads(x) for f in (tmp_path / "out").glob("releases*.jsonl") for x in f.read_text().splitlines()]
    assert {r["tick"] for r in releases} == set(range(1, 91))
    # the truth: replay the bundled changelog under the constraint
    cfg = load_config(cfg_path)
    recs = [json.loads(x) for x in (ROOT / "data" / "changelog_orders.jsonl").read_text().splitlines()]
    first, count, live = {}, {}, {}
    by_tick = {}
    for rec in recs:
        by_tick.setdefault(math.ceil(rec["time"] / 86400), []).append(rec)
    expect = {}
    for tick in range(1, 91):
        for rec in by_tick.get(tick, []):
            t0 = first.setdefault(rec["id"], tick)
            if count.get(rec["id"], 0) >= 4 or tick - t0 > 30:
                continue
            count[rec["id"]] = count.get(rec["id"], 0) + 1
            if rec["op"] == "delete":
                live.pop(rec["id"])
            else:
                live[rec["id"]] = rec["item"]
        expect[tick] = len(live)
    for r in releases:
        if r["query"] == "open_orders":
            assert r["estimate"] == pytest.approx(expect[r["tick"]], abs=1e-6), r["tick"]
    # the ledger charges the configured entry-level guarantee: that is epsilon_spent, and there is no
    # update-level charge to label (neither in the records nor in the summary)
    last = max(releases, key=lambda r: r["tick"])
    assert 0 < last["epsilon_spent"] <= 1.0 + 1e-9
    assert all(r["update_level_spent"] is None for r in releases)
    assert "update-level equivalent" not in out
    assert (
        rc.main(
            [
                "--config",
                str(cfg_path),
                "--nodes",
                str(tmp_path / "out" / "nodes*.jsonl"),
                "--out",
                str(tmp_path / "re.jsonl"),
            ]
        )
        == 0
    )
    again = {
        (r["tick"], r["query"]): r["estimate"]
        for r in map(json.loads, (tmp_path / "re.jsonl").read_text().splitlines())
    }
    assert len(again) == len(releases)
    for r in releases:
        assert again[(r["tick"], r["query"])] == pytest.approx(r["estimate"], abs=1e-6)
    assert cfg.mechanism == "hdcr"


# ---------------------------------------------------------------------------
# covers and variances
# ---------------------------------------------------------------------------


def test_hdcr_covers_partition_ranges_from_at_most_2_c_minus_1_h_min_nodes():
    rng = np.random.default_rng(11)
    for _ in range(4000):
        c = int(rng.integers(2, 11))
        lo = int(rng.integers(0, 5000))
        hi = lo + int(rng.integers(2, 3000))
        h_min = math.ceil(math.log(hi - lo, c) - 1e-12)
        h = h_min + int(rng.integers(0, 3))
        nodes = cl.cover(lo, hi, c, h)
        assert len(nodes) <= 2 * (c - 1) * h_min, (lo, hi, c, h)
        spans = sorted(((j - 1) * c**i, j * c**i) for i, j in nodes)
        assert spans[0][0] == lo and spans[-1][1] == hi
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # disjoint, no gap
        assert all(i < h for i, _ in nodes)


def dlap_var(scale):
    q = math.exp(-1 / scale)
    return 2 * q / (1 - q) ** 2


def test_variances_equal_the_closed_forms():
    """HDCR: the current value at unit u sums digit_sum_c(u) lower nodes and
    the u // c^(h-1) top nodes (Cor. 4.2: at most 2(c-1)h node variances);
    SWCR from an HDCR: the nodes of the window's cover. A node is discrete
    Laplace of scale sensitivity * fold / eps_share."""
    eps = 3.0
    config = DynamicConfig(Q, PureDP(eps), unit=PrivacyUnit.entry(2))
    core = MECHANISMS["hdcr"].core_cls(config, stream="s", options=cl.HDCROptions(branching=3, height=4))
    assert core.total_fold == 8  # hk
    noise = NoiseSource(KEY).for_release(REL)
    for t in range(1, 200):
        res = core.advance(t, noise)
        n_nodes = sum(int(d) for d in np.base_repr(t % 27, 3)) + t // 27
        assert n_nodes <= 2 * (3 - 1) * 4 or t >= 27 * 9
        for a in res.answers:
            qi = [q.name for q in Q].index(a.query)
            ratio = [1, 2, 1][qi]
            scale = ratio * core.total_fold / (eps / 3)
            if qi == 2:
                scale = scale * core.mechanisms[2].l1 * core.mechanisms[2].unit  # the lattice sum: in answer units
            expect = (
                n_nodes
                * dlap_var(scale if qi != 2 else scale / core.mechanisms[2].unit)
                * (1 if qi != 2 else core.mechanisms[2].unit ** 2)
            )
            assert core.variance(qi, n_nodes) == pytest.approx(expect, rel=1e-9)
    sw = MECHANISMS["swcr"].core_cls(config, stream="s", options=cl.SWCROptions(window=20, method="hdcr", branching=2))
    assert (sw.c, sw.h) == (2, 5) and sw.total_fold == 10
    for r in range(1, 200):
        nodes = cl.cover(max(0, r - 20), r, 2, 5)
        assert len(nodes) <= 2 * (2 - 1) * 5
        assert sw.variance(0, len(nodes)) == pytest.approx(len(nodes) * dlap_var(sw.total_fold / (eps / 3)), rel=1e-9)


@pytest.mark.statistical
def test_empirical_variance_matches_the_closed_form():
    """Over 1200 independent releases (release identities), the sample variance
    of HDCR's current-value error and of SWCR-from-HDCR's window error equal
    the closed forms within 5 standard errors of a sample variance (kurtosis
    <= 6 for sums of discrete Laplace noises; false failure about 1e-6 each)."""
    n = 1200
    config = DynamicConfig((Q[1],), PureDP(2.0), unit=PrivacyUnit.entry(2))
    cases = (
        ("hdcr", {"branching": 3, "height": 3}, 17),
        ("swcr", {"window": 12, "method": "hdcr", "branching": 2}, 23),
    )
    for name, opts, tick in cases:
        errs = []
        for i in range(n):
            core = MECHANISMS[name].core_cls(config, stream="s", options=MECHANISMS[name].options(**opts))
            noise = NoiseSource(KEY).for_release(ReleaseIdentity(f"var-{name}-{i}"))
            core.advance(tick - 1, noise)
            a = core.advance(tick, noise).answers[0]
            errs.append(float(a.estimate[0]))
        if name == "hdcr":
            n_nodes = sum(int(d) for d in np.base_repr(tick % 9, 3)) + tick // 9
        else:
            n_nodes = len(cl.cover(tick - 12, tick, core.c, core.h))
        expect = core.variance(0, n_nodes)
        assert expect == pytest.approx(n_nodes * dlap_var(2 * core.total_fold / 2.0), rel=1e-9)  # histogram: L1 2
        got = float(np.var(errs, ddof=1))
        assert abs(got / expect - 1) < 5 * math.sqrt(5 / n), (name, got, expect)


# ---------------------------------------------------------------------------
# empirical privacy
# ---------------------------------------------------------------------------

K = 3
PRIV_Q = (QuerySet("v", "linear", domain_size=2, matrix=((0.0, 1.0),)),)


def _trial_releases(with_entry: bool, trials: int, tag: str):
    """Per trial, the node values of a DCR over 3 ticks (from its current values)."""
    config = DynamicConfig(PRIV_Q, PureDP(1.0), unit=PrivacyUnit.entry(K))
    out = {}
    for i in range(trials):
        core = MECHANISMS["dcr"].core_cls(config, stream="s", end_tick=3)
        noise = NoiseSource(KEY).for_release(ReleaseIdentity(f"priv-{tag}-{i}"))
        ups = {1: [Update("insert", "bg", (0,))]}
        if with_entry:  # one entry, k = 3 mutations, each changing its node by 1
            ups[1].append(Update("insert", "x", (1,)))
            ups[2] = [Update("upsert", "x", (0,))]
            ups[3] = [Update("upsert", "x", (1,))]
        vals = []
        for t in (1, 2, 3):
            vals += [float(a.estimate[0]) for a in core.process_tick(t, ups.get(t, []), noise).answers]
        out[i] = [vals[0], vals[1] - vals[0], vals[2] - vals[1]]
    return out


EVENTS = [lambda r, tau=tau: r[0] - r[1] + r[2] >= tau for tau in (2, 3, 4)]


def check_entry_privacy(trials):
    a = _trial_releases(True, trials, "a")
    b = _trial_releases(False, trials, "b")
    return assert_within_loss(a, b, EVENTS, epsilon=1.0, alpha=1e-6)


@pytest.mark.statistical
def test_entry_level_loss_within_the_k_fold_bound():
    """Two changelogs differing by one whole entry (k = 3 mutations, one per
    DCR node): the estimated loss on likelihood-ratio events stays within the
    configured entry-level eps = 1 (false failure <= 1e-6, dp_harness)."""
    check_entry_privacy(3000)


@pytest.mark.statistical
def test_entry_privacy_check_fails_on_a_twin_that_charges_one_fold(monkeypatch):
    """The broken twin: each node charged as if one entry touched one node
    (1-fold): the same check must find a loss > eps."""

    def one_fold(self):
        self.unit_ticks = self.options.window * self.n_per
        self.c, self.h, self.layer_folds, self.total_fold = 2, 1, (1,), 1
        self.answer_every, self.window_units, self.direct = 1, None, False

    monkeypatch.setattr(cl.DCRRelease, "_plan", one_fold)
    with pytest.raises(AssertionError, match="privacy loss on an event is at least"):
        check_entry_privacy(3000)


# ---------------------------------------------------------------------------
# shapes, gaps, call budgets, ratios, plan choices and pruning
# (each test names the mutants of the mutation benchmark it kills, benchmarks/mutation_config.py;
# the numbers are those of the last run, docs/testing.md)
# ---------------------------------------------------------------------------


def test_new_families_validate_their_shapes():
    """HDCR's branching must be >= 2 (and a bad window names the key); a survey
    needs at least two answers; a randomized-response design takes exactly one
    histogram query set.
    Kills changelog.HDCROptions.__post_init____mutmut_8, _11,
    rr_client.SurveyDesign.__post_init____mutmut_2, local_dp.design_for__mutmut_1."""
    from transforms.core.families.changelog import HDCROptions
    from transforms.core.families.local_dp import RROptions, design_for
    from transforms.core.families.rr_client import AtMostK, SurveyDesign

    with pytest.raises(ValueError, match="branching"):
        HDCROptions(branching=1)
    with pytest.raises(ValueError, match="^window"):
        HDCROptions(window=0)
    with pytest.raises(ValueError, match="at least 2 values"):
        SurveyDesign(1, 1.0, 0.0, AtMostK(1))
    two = DynamicConfig(
        (QuerySet("a", "histogram", domain_size=3), QuerySet("b", "histogram", domain_size=3)), PureDP(4.0)
    )
    with pytest.raises(ValueError, match="exactly one histogram"):
        design_for(two, RROptions())


@pytest.mark.parametrize("kind", ["dcr", "hdcr"])
def test_changelog_releases_fall_due_inside_a_gap_of_the_data(kind):
    """With a release every tick, data at ticks 1 and 6 only: the apply at tick 6
    returns the releases of ticks 2 to 5 (carried, noise off: exact) before tick
    6's. Kills changelog.releases._ChangelogRelease._apply__mutmut_3 (the gap's releases
    dropped)."""
    from transforms.core import MECHANISMS

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS[kind].core_cls(config, stream="s", end_tick=8, every_ticks=1)
    off = NoiseSource.disabled()
    first = core.process_tick(1, [Update("insert", "a", (0,)), Update("insert", "b", (0,))], off)
    later = core.process_tick(6, [Update("delete", "a")], off)
    assert [a.tick for a in first.answers] == [1]
    assert [(a.tick, float(a.estimate[0])) for a in later.answers] == [(2, 2.0), (3, 2.0), (4, 2.0), (5, 2.0), (6, 1.0)]


def test_changelog_call_budget_divides_by_the_sensitivity_ratio():
    """A node's static release of an entry's change (sensitivity ``ratio``
    items) is drawn at the node budget divided by the ratio (eps / r; rho /
    r^2), for every budget kind; a histogram's ratio is 2 (L1) or sqrt 2 (L2).
    Kills accounting.budgets ZCDP.for_sensitivity and ApproxDP.for_sensitivity
    (were changelog._call_budget__mutmut_4, rho multiplied, and _11, eps
    multiplied under (eps, delta)): privacy breaks."""
    from transforms.core import MECHANISMS

    assert PureDP(1.0).for_sensitivity(2.0) == PureDP(0.5)
    assert ApproxDP(1.0, 1e-6).for_sensitivity(2.0) == ApproxDP(0.5, 1e-6)
    assert ZCDP(1.0).for_sensitivity(2.0) == ZCDP(0.25)
    assert ZCDP(1.0).for_sensitivity(1.0) == ZCDP(1.0)
    for budget in (ZCDP(0.5), ApproxDP(1.0, 1e-6), PureDP(1.0)):
        config = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), budget)
        core = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=16)
        node, call = core.node_budget, core.call_budgets[0]
        assert type(call) is type(node)
        if config.gaussian:  # (eps, delta) budgets run as zCDP here (Gaussian noise)
            assert call.rho == pytest.approx(node.rho / 2)  # rho / sqrt(2)^2
        else:
            assert call.epsilon == pytest.approx(node.epsilon / 2)


def test_changelog_entry_ratio_of_small_linear_queries():
    """The entry sensitivity ratio of a linear query set, against the pairs of
    its columns and the absent entry: 1 when one column dominates, 2 for two
    disjoint rows (L1), sqrt 2 in L2, also when every entry is below 1. Kills
    changelog.folds.entry_sensitivity_ratio__mutmut_41 (the search started at 1)."""
    from transforms.core.families.changelog import entry_sensitivity_ratio

    assert entry_sensitivity_ratio(LinearQueryMechanism(((0.2, 0.1, 0.0),))) == pytest.approx(1.0)
    two = ((0.3, 0.0), (0.0, 0.3))
    assert entry_sensitivity_ratio(LinearQueryMechanism(two)) == pytest.approx(2.0)
    assert entry_sensitivity_ratio(LinearQueryMechanism(two, noise="gaussian")) == pytest.approx(math.sqrt(2))


def test_changelog_plan_choices_and_top_layer_coordinates():
    """SWCR's automatic choices: the branching c of the derived HDCR minimises
    (the most nodes any window needs) x (the node variance weight of its
    folds), checked against a brute force over windows; and the direct method
    is taken where it is no worse. HDCR over a horizon of one unit has one
    layer. The top layer's prefix sums have their own noise coordinates. Kills
    changelog.releases.SWCRRelease._plan__mutmut_111 (c never improved), _152 (direct
    never chosen), _ChangelogRelease._horizon_units__mutmut_6 (a one-unit
    horizon taken as two) and _PrefixRelease._node_coords__mutmut_5."""
    from transforms.core import MECHANISMS
    from transforms.core.families.changelog import HDCROptions, SWCROptions, cover, hdcr_layer_folds
    from transforms.core.families.changelog.folds import variance_weight
    from transforms.core.foundation.accounting import PrivacyUnit

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0), unit=PrivacyUnit.entry(4))
    core = MECHANISMS["swcr"].core_cls(config, stream="s", end_tick=400, options=SWCROptions(window=64, period=1))

    def score(c, h):
        most = max(len(cover(max(0, r - 64), r, c, h)) for r in range(1, 64 + 2 * c**h))
        return most * variance_weight("laplace", sum(hdcr_layer_folds(h, c, 4, None, 1)))

    best = min(score(c, max(1, math.ceil(math.log(64, c) - 1e-9))) for c in range(2, 33))
    assert not core.direct and core.c != 2 and score(core.c, core.h) == pytest.approx(best)
    short = MECHANISMS["swcr"].core_cls(config, stream="s", end_tick=400, options=SWCROptions(window=2, period=2))
    assert short.direct and short.h == 1
    one = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=1, options=HDCROptions(branching=2))
    assert (one.c, one.h) == (2, 1)
    tree = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=64, options=HDCROptions(branching=2, height=3))
    assert tree._node_coords(0, (2, 5), 0) == ("s", "hdcr", "n", "layer", 2, "nodes", 1, 5)


def test_changelog_keeps_only_the_nodes_it_still_needs():
    """A layer-i node is dropped once its parent closes: over 300 units of an
    HDCR (c = 2, h = 4) the stored nodes stay at most c per lower layer plus the
    top layer's. Kills changelog.releases._PrefixRelease._prune__mutmut_4 (never pruned:
    state grows with time)."""
    from transforms.core import MECHANISMS
    from transforms.core.families.changelog import HDCROptions

    config = DynamicConfig((QuerySet("n", "count"),), PureDP(1.0))
    core = MECHANISMS["hdcr"].core_cls(config, stream="s", end_tick=300, options=HDCROptions(branching=2, height=4))
    noise = NoiseSource(KEY).for_release(ReleaseIdentity("kill-changelog-prune"))
    most = 0
    for t in range(1, 301):
        core.process_tick(t, [Update("insert", f"e{t}", (0,))], noise)
        lower = [key for key in core.nodes[0] if key[0] < core.h - 1]
        most = max(most, len(lower))
    assert 0 < most <= 2 * (core.h - 1)


def test_the_changelog_ledger_charges_the_configured_guarantee_itself():
    """The changelog releases declare ``ledger_unit = "configured"``: their
    ledger's cap is the configured guarantee (the folds, not group privacy,
    account for an entry), so the spend states itself (the identity unit), and
    a release record has no update-level figure under an entry unit; under the
    update unit the two coincide and the record says so."""
    entry = DynamicConfig((QuerySet("n", "count"),), PureDP(2.0), unit=PrivacyUnit.entry(3))
    for name in ("dcr", "hdcr", "swcr"):
        spec = MECHANISMS[name]
        assert spec.core_cls.ledger_unit == "configured"
        assert spec.group_unit(entry) == PrivacyUnit.update() and spec.ledger_budget(entry) == PureDP(2.0)
        assert spec.spend_fields(entry, (0.5,)) == {"epsilon_spent": 0.5, "update_level_spent": None}
        update = dataclasses.replace(entry, unit=PrivacyUnit.update())
        assert spec.spend_fields(update, (0.5,)) == {"epsilon_spent": 0.5, "update_level_spent": {"epsilon": 0.5}}
    other = MECHANISMS["fully_dynamic"]  # group privacy: 2k - 1 = 5 updates (net_change calibrates by contribution)
    assert other.core_cls.ledger_unit == "update" and other.group_unit(entry) == PrivacyUnit.entry(3)
    assert other.ledger_budget(entry) == PureDP(0.4)
    assert other.spend_fields(entry, (0.4,)) == {"epsilon_spent": 2.0, "update_level_spent": {"epsilon": 0.4}}


def test_prefix_nodes_partition_the_prefix_from_zero():
    """``prefix_nodes(u, c, h)``: the nodes whose ranges partition (0, u] (issue 27: no fast test called it)."""
    from transforms.core.families.changelog.folds import prefix_nodes

    for c in (2, 3, 5):
        for h in (1, 2, 4):
            for u in range(0, 60):
                nodes = prefix_nodes(u, c, h)
                assert nodes == cl.cover(0, u, c, h)
                spans = sorted(((j - 1) * c**i, j * c**i) for i, j in nodes)
                if u == 0:
                    assert spans == []
                    continue
                assert spans[0][0] == 0 and spans[-1][1] == u
                assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
                assert all(i < h for i, _ in nodes)
