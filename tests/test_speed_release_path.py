"""The release-record path's shortcuts (issue 30, round 8) change no byte: ``pipelines.outputs.ReleaseFormat``
is ``release_dict`` plus the release id, ``transforms.common.floats`` is ``tuple(map(float, ...))``,
``emit_results`` gives every record its own answer's spend, and ``consistency._replace`` of an ``Answer`` is
``dataclasses.replace``. Each test compares the shortcut with the former computation on cases that take it
(and the cases that must not). Cheap: no pipeline."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from pipelines.config.load import parse_config, read_raw
from pipelines.outputs import ReleaseFormat, release_dict
from transforms.common import emit_results, floats
from transforms.core.continual import consistency
from transforms.core.continual.consistency import Consistency, make_consistent
from transforms.core.foundation.accounting import PureDP
from transforms.core.foundation.outputs import Answer


def _cfg(release: dict):
    raw = copy.deepcopy(read_raw("configs/demo.yaml"))
    raw["release"] = {"every_ticks": 1, **release}
    raw["queries"] = raw["queries"] + [
        {"name": "signed", "type": "sum", "field": "amount", "lower": -50, "upper": 20},
        {"name": "wide", "type": "sum", "field": "amount", "lower": 0, "upper": 3},
    ]
    return parse_config(raw)


def _records():
    out = []
    for i, (query, est) in enumerate(
        [
            ("active", (3.0,)),
            ("active", (-2.5,)),
            ("active", (float("nan"),)),
            ("active", (-0.0,)),
            ("active", (7,)),  # an int: made a float
            ("by_carrier", (1.4, -0.6, 2.5)),
            ("by_carrier", (0.5, 1.5, -2.5)),
            ("total_amount", (0.123456789, 0.0)),
            ("signed", (0.7, 0.2)),
            ("signed", (-0.1, 1.3)),
            ("wide", (1.0 / 3.0,)),
        ]
    ):
        for bound in (1.25, None, float("nan")):
            spent = ((0.1 * (i % 3),), (0.25,), (1,))[i % 3]
            out.append(
                SimpleNamespace(
                    stream="eu",
                    tick=i,
                    segment=i + 1,
                    query=query,
                    estimate=est,
                    error_bound=bound,
                    beta=0.05,
                    spent=spent,
                    as_of=f"t{i}",
                )
            )
    return out


@pytest.mark.parametrize("release", [{}, {"clamp": False}, {"round": True}, {"clamp": False, "round": True}])
@pytest.mark.parametrize("release_id", [None, "r-1"])
def test_release_format_is_release_dict_plus_the_id(release, release_id):
    cfg = _cfg(release)
    fmt = ReleaseFormat(cfg, release_id)
    for rel in _records():
        try:
            want = dict(release_dict(cfg, rel))
        except ValueError:  # a NaN estimate rounded: both refuse it
            with pytest.raises(ValueError):
                fmt(rel)
            continue
        if release_id is not None:
            want["release_id"] = release_id
        got = fmt(rel)
        # the same keys in the same order, the same values and types: the same JSON text
        assert json.dumps(got) == json.dumps(want), rel
        assert list(got) == list(want)
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


def test_release_format_gives_each_record_its_own_spend_fields():
    cfg = _cfg({})
    fmt = ReleaseFormat(cfg)
    rel = _records()[0]
    a = fmt(rel)
    b = fmt(SimpleNamespace(**{**vars(rel), "spent": (0.5,)}))
    a2 = fmt(rel)
    assert a["epsilon_spent"] != b["epsilon_spent"] and a2 == a
    assert isinstance(a2["update_level_spent"], dict)
    a2["update_level_spent"]["epsilon"] = -1.0  # a sink that changed a record changes no other record
    assert fmt(rel)["update_level_spent"] == release_dict(cfg, rel)["update_level_spent"]


def test_floats_is_tuple_map_float():
    cases = [
        np.array([1.5, -0.0, float("nan"), 1e300, 2.0**-1074]),
        np.array([3, -4], dtype=np.int64),
        np.array([0.1, 2.5], dtype=np.float32),
        (1, 2.5),
        [np.float64(0.3), 7],
        np.zeros(0),
    ]
    for est in cases:
        got, want = floats(est), tuple(map(float, est))
        assert type(got) is tuple and all(type(x) is float for x in got)
        assert repr(got) == repr(want) and json.dumps(got) == json.dumps(want)


def _answer(query, est, spent, tick=1):
    return Answer("eu", tick, tick, query, np.asarray(est, dtype=float), 1.5, 0.05, spent)


def test_emit_results_gives_every_record_its_own_spend():
    a, b = PureDP(0.25), PureDP(0.5)
    answers = [
        _answer("active", [3.0], a, 1),
        _answer("by_carrier", [1.0, 2.0], a, 1),
        _answer("active", [4.0], b, 2),
        _answer("by_carrier", [1.0, 3.0], PureDP(0.5), 2),
        _answer("active", [5.0], a, 3),
    ]
    fn = SimpleNamespace(
        consistency=Consistency(()),
        emitted=0,
        PROGRESS_EVERY=10**9,
        spec=SimpleNamespace(as_of=lambda t: f"as-of-{t}"),
        emit_nodes=False,
    )
    core = SimpleNamespace(stream="eu", spent=b, drain_node_outputs=lambda: [])
    res = SimpleNamespace(closes=[1, 2, 3], events=[], answers=answers)
    out = [tv.value for tv in emit_results(fn, core, [res], lambda t: t * 60)]
    assert [r.spent for r in out] == [(0.25,), (0.25,), (0.5,), (0.5,), (0.25,)]
    assert [r.estimate for r in out] == [tuple(map(float, x.estimate)) for x in answers]
    assert [r.as_of for r in out] == ["as-of-1", "as-of-1", "as-of-2", "as-of-2", "as-of-3"]


def test_replace_of_an_answer_is_dataclasses_replace():
    a = _answer("by_carrier", [1.0, 2.0], PureDP(0.25))
    for kw in ({"estimate": np.array([0.5, 2.5])}, {"error_bound": 2.0, "beta": 0.01}, {"estimate": (1.0,)}, {}):
        got, want = consistency._replace(a, **kw), dataclasses.replace(a, **kw)
        assert type(got) is Answer and got is not a
        assert repr(got) == repr(want)
    moved = consistency._replace(a, tick=9)  # another field: dataclasses.replace's own path
    assert repr(moved) == repr(dataclasses.replace(a, tick=9))


def test_make_consistent_equals_it_with_dataclasses_replace(monkeypatch):
    rng = np.random.default_rng(5)
    answers = []
    for t in range(1, 30):
        answers.append(_answer("active", [rng.normal(20, 5)], PureDP(0.1 * t), t))
        answers.append(_answer("by_carrier", rng.normal(6, 4, size=3), PureDP(0.1 * t), t))
    for cons in (Consistency((("by_carrier", "active"),)), Consistency((("by_carrier", "active"),), True)):
        got = make_consistent(answers, cons)

        def slow(obj, **kw):
            return dataclasses.replace(obj, **kw) if dataclasses.is_dataclass(obj) else obj._replace(**kw)

        monkeypatch.setattr(consistency, "_replace", slow)
        want = make_consistent(answers, cons)
        monkeypatch.undo()
        assert repr(got) == repr(want)
        assert not any(math.isnan(x) for a in got for x in a.estimate)


def _former_simplex_projection(x, total):
    """``consistency.simplex_projection`` as it was written before (round 8), for comparison."""
    x = np.asarray(x, dtype=float)
    if total == 0:
        return np.zeros_like(x), max(float(x.max()), 0.0)
    u = np.sort(x)[::-1]
    css = np.cumsum(u) - total
    idx = np.arange(1, x.size + 1)
    hits = np.nonzero(u - css / idx > 0)[0]
    rho = int(hits[-1]) if hits.size else 0
    tau = css[rho] / (rho + 1)
    p = np.maximum(x - tau, 0.0)
    p[int(np.argmax(p))] += total - float(p.sum())
    return np.maximum(p, 0.0), float(tau)


def test_simplex_projection_is_the_former_computation_bit_for_bit():
    rng = np.random.default_rng(11)
    cases = [([3.0, 3.0, 3.0], 2.0), ([-1.0, 5.0], 0.0), ([0.5], 7.0), ([2.0, -2.0, 2.0, 0.0], 1.5)]
    for n in (1, 2, 3, 7, 8, 9, 16, 17, 40):
        for _ in range(40):
            x = rng.normal(rng.uniform(-5, 20), rng.uniform(0.1, 30), size=n)
            if rng.random() < 0.3:
                x = np.round(x)  # ties
            cases.append((x, float(abs(rng.normal(n * 5, 40)))))
    for x, total in cases:
        got, want = consistency.simplex_projection(x, total), _former_simplex_projection(x, total)
        assert got[0].tobytes() == want[0].tobytes() and repr(got[1]) == repr(want[1]), (x, total)
        assert got[0] is not consistency.simplex_projection(x, total)[0]  # a fresh array each call


def test_in_global_window_is_what_the_runner_makes_of_a_timestamped_value():
    from apache_beam.transforms.window import GlobalWindow, GlobalWindows, TimestampedValue, WindowFn
    from apache_beam.utils.windowed_value import WindowedValue

    from transforms.per_stream import in_global_window

    tagged = beam_tagged = object()
    records = [TimestampedValue(("a", 1), 60), beam_tagged, TimestampedValue(("b", 2), 120.5)]
    got = list(in_global_window(iter(records), GlobalWindow()))
    assert got[1] is tagged
    for r, g in zip(records[::2], got[::2]):
        want = WindowedValue(r.value, r.timestamp, GlobalWindows().assign(WindowFn.AssignContext(r.timestamp, r.value)))
        assert type(g) is WindowedValue
        assert (g.value, g.timestamp, tuple(g.windows), g.pane_info) == (
            want.value,
            want.timestamp,
            tuple(want.windows),
            want.pane_info,
        )


def test_auto_parts_noise_memo_follows_the_source_given():
    """``AutoRelease._noise`` keeps the parts' sources of the last source given: a run given one source object
    throughout equals a run given a fresh equal source every call with the memo cleared (never hit), and a run
    that switches to another key or release half-way draws that source's noise (the memo is not stale)."""
    from transforms.core import DynamicConfig, QuerySet, Update
    from transforms.core.continual.auto import AutoRelease
    from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity

    config = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(1.0))
    rng = np.random.default_rng(4)
    ticks = [
        (t, [Update("insert", f"e{t}-{j}", (0, int(rng.integers(4)))) for j in range(t % 3)]) for t in range(1, 25)
    ]
    k1, k2 = bytes(range(32)), bytes(range(1, 33))
    plans = [
        lambda t: (k1, "a"),
        lambda t: (k1, "a") if t <= 12 else (k2, "a"),
        lambda t: (k1, "a") if t <= 12 else (k1, "b"),
    ]
    for which in plans:
        made = {}

        def shared(t, which=which, made=made):
            key, rid = which(t)
            if (key, rid) not in made:
                made[key, rid] = NoiseSource(key).for_release(ReleaseIdentity(rid))
            return made[key, rid]

        def fresh(t, which=which):
            key, rid = which(t)
            return NoiseSource(key).for_release(ReleaseIdentity(rid))

        runs = []
        for source in (shared, fresh):
            core = AutoRelease(config, stream="s", end_tick=24, every_ticks=1)
            out = []
            for t, ups in ticks:
                if source is fresh:
                    core._noise_memo = None  # the reference: the parts' sources made anew every call
                out.append(core.process_tick(t, ups, source(t)))
            runs.append([(a.tick, a.query, tuple(a.estimate.tolist())) for r in out for a in r.answers])
        assert runs[0] == runs[1] and len(runs[0]) == 48
    assert len({k for k in made}) == 2
