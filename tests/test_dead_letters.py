"""Every dead-letter reason is produced by a real input, with its counter; the
streaming spec's lateness is rounded up; the insertion-only paths refuse
deletes. (Each would have caught a bug planted by the review.)"""

from __future__ import annotations

import json

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import assert_that, equal_to
from beam_runners import FNAPI_RUNNER

from transforms.core import DynamicConfig, PrivacyUnit, PureDP, QuerySet
from transforms.core.foundation.entries import REASONS
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually, ReleaseInsertionOnly, StreamSpec

CFG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
SPEC = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=200.0)
_SEEN: dict = {}


def _keep(x, key):
    _SEEN.setdefault(key, []).append(x)


def _ts(r):
    """The element timestamp of a test record (0 for a time no Timestamp can hold)."""
    from transforms.spec import event_time_ok

    t = getattr(r, "event_time", 0.0)
    return t if event_time_ok(t) else 0.0


def _bounded(records, mechanism="fully_dynamic", config=CFG, spec=SPEC, key="run"):
    _SEEN.pop(key, None)
    p = TestPipeline(options=PipelineOptions(runner=FNAPI_RUNNER))
    out = (
        p
        | beam.Create(records)
        | beam.Map(lambda r: beam.window.TimestampedValue(r, _ts(r)))
        | ReleaseContinually(mechanism, config, spec, NoiseKey.disabled())
    )
    out["dead_letters"] | beam.Map(lambda d: _keep(d.reason, key))
    result = p.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    return sorted(_SEEN.pop(key, [])), counters


def _parsed(lines):
    """Dead letters of the pipelines' parser (reasons it alone can give)."""
    from pipelines.config import parse_config
    from pipelines.release import parse_line

    raw = {
        "privacy": {"epsilon": 1.0},
        "time": {"field": "time", "tick_seconds": 10, "origin": 0, "end": 200},
        "queries": [
            {"name": "n", "type": "count"},
            {"name": "h", "type": "histogram", "field": "c", "domain": ["x", "y"]},
            {"name": "s", "type": "sum", "field": "v", "lower": 0, "upper": 10},
        ],
        "source": {"type": "file", "path": "x.jsonl"},
    }
    cfg = parse_config(raw)
    return sorted(parse_line(cfg, line)[0] for line in lines)


def _too_far_in_future():
    """The Pub/Sub guard: an event time more than max_future_seconds past the
    message's publish time."""
    from pipelines.config import parse_config
    from pipelines.parse import PubsubElement, RecordParser

    raw = {
        "privacy": {"epsilon": 1.0},
        "time": {"tick_seconds": 10, "origin": 0},
        "queries": [{"name": "n", "type": "count"}],
        "source": {
            "type": "pubsub",
            "subscription": "projects/p/subscriptions/sub",
            "timestamp_attribute": "ts",
            "max_future_seconds": 60,
        },
        "sinks": [{"type": "file", "path": "out/"}],
    }
    cfg = parse_config(raw)
    parser = RecordParser(cfg, timestamp_attribute="ts", max_future_seconds=cfg.max_future_seconds)
    data = json.dumps({"op": "insert", "id": "a", "item": {}}).encode()
    near = parser.parse(PubsubElement(data, (("ts", "1000000"),), 990.0))  # 10 s ahead of its publish time
    far = parser.parse(PubsubElement(data, (("ts", "1000000"),), 900.0))  # 100 s ahead
    assert near.reason is None and near.record.event_time == 1000.0
    return [far.reason]


def _late():
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="dead_letter", end_time=100.0)
    stream = (
        TestStream()
        .add_elements([beam.window.TimestampedValue(UpdateRecord(12.0, "insert", "x", (0, 1), "a", 0), 12.0)])
        .advance_watermark_to(40.0)
        .add_elements([beam.window.TimestampedValue(UpdateRecord(11.0, "delete", "x", None, "a", 1), 11.0)])
        .advance_watermark_to_infinity()
    )
    _SEEN.pop("late", None)
    with TestPipeline(options=opts) as p:
        out = p | stream | ReleaseContinually("fully_dynamic", CFG, spec, NoiseKey.disabled())
        out["dead_letters"] | beam.Map(lambda d: _keep(d.reason, "late"))
    return sorted(_SEEN.pop("late", []))


def test_every_dead_letter_reason_is_produced_and_counted(monkeypatch):
    """Enumerates ``REASONS``: each is produced by a real input through the real
    steps (the parser, the Beam validation, person step and registries, streaming
    for ``late``), and counted as ``dead_letter_<reason>``."""
    produced = set()
    records = [
        UpdateRecord(1.0, "insert", "e1", (0, 1), "a", 0),
        UpdateRecord(2.0, "insert", "e1", (0, 2), "a", 1),  # duplicate_insert
        UpdateRecord(3.0, "delete", "ghost", None, "a", 0),  # unknown_entry
        UpdateRecord(4.0, "insert", "z", (0, 9), "a", 0),  # item_out_of_range
        UpdateRecord(5.0, "insert", "z", (0, 1), "mars", 0),  # undeclared_stream
        UpdateRecord(6.0, "truncate", "z", (0, 1), "a", 0),  # unknown_op
        UpdateRecord(-5.0, "insert", "early", (0, 1), "a", 0),  # before_origin
        UpdateRecord(900.0, "insert", "late-comer", (0, 1), "a", 0),  # after_end
        UpdateRecord(7.0, "insert", "", (0, 1), "a", 0),  # malformed
        UpdateRecord(float("nan"), "insert", "q", (0, 1), "a", 0),  # bad_time
        UpdateRecord(1e20, "insert", "q", (0, 1), "a", 0),  # bad_time (beyond any Beam timestamp)
    ]
    reasons, counters = _bounded(records)
    assert reasons == sorted(
        ["duplicate_insert", "unknown_entry", "item_out_of_range", "undeclared_stream", "unknown_op"]
        + ["before_origin", "after_end", "malformed", "bad_time", "bad_time"]
    )
    for r in set(reasons):
        assert counters[f"dead_letter_{r}"] == reasons.count(r)
    produced |= set(reasons)
    reasons, _ = _bounded(
        [UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0)]
        + [UpdateRecord(2.0, "upsert", "x", (0, i % 3), "a", i + 1) for i in range(4)],
        config=DynamicConfig(CFG.queries, PureDP(1.0), unit=PrivacyUnit.entry(3)),
    )
    assert reasons == ["constraint_exceeded"] * 2
    produced |= set(reasons)
    reasons, _ = _bounded(
        [UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0), UpdateRecord(2.0, "delete", "x", None, "a", 1)],
        mechanism="insertion_only",
    )
    assert reasons == ["deletion_not_allowed"]
    produced |= set(reasons)
    reasons, _ = _bounded(  # a growing-database mechanism (docs/growing.md): deletes are outside its model
        [UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0), UpdateRecord(2.0, "upsert", "x", (0, 2), "a", 1)],
        mechanism="bb_scheduler",
    )
    assert reasons == ["deletion_not_supported"]
    produced |= set(reasons)
    produced |= set(_late())
    reasons, counters = _bounded(  # the person step: P's third entry is refused with all its updates
        [UpdateRecord(1.0 + i, "insert", f"x{i}", (0, 1), "a", i, person="P") for i in range(3)]
        + [UpdateRecord(5.0, "delete", "x2", None, "a", 3, person="P")],
        config=DynamicConfig(CFG.queries, PureDP(1.0), unit=PrivacyUnit.person(2, 3)),
    )
    assert reasons == ["contribution_bounded"] * 2 and counters["dead_letter_contribution_bounded"] == 2
    produced |= set(reasons)
    ok = {"time": 5, "op": "insert", "id": "a", "item": {"c": "x", "v": 3}}
    parsed = _parsed(
        [
            "{not json",
            json.dumps({**ok, "time": "noon"}),
            json.dumps({k: v for k, v in ok.items() if k != "id"}),  # missing_field
            json.dumps({**ok, "item": {"c": "z", "v": 3}}),  # not_in_domain
            json.dumps({**ok, "item": {"c": "x", "v": "lots"}}),  # bad_value
            json.dumps({**ok, "seq": 1.5}),  # malformed
        ]
    )
    assert parsed == ["bad_time", "bad_value", "malformed", "missing_field", "not_in_domain", "unparseable"]
    produced |= set(parsed)
    produced |= set(_too_far_in_future())
    assert produced == set(REASONS), set(REASONS) ^ produced


def test_allowed_lateness_is_rounded_up_to_whole_ticks():
    assert StreamSpec(tick_seconds=10.0, allowed_lateness=15.0).lateness_ticks == 2
    assert StreamSpec(tick_seconds=10.0, allowed_lateness=20.0).lateness_ticks == 2
    assert StreamSpec(tick_seconds=10.0, allowed_lateness=0.5).lateness_ticks == 1
    assert StreamSpec(tick_seconds=10.0).lateness_ticks == 0


@pytest.mark.parametrize("path", ["bounded", "streaming"])
def test_insertion_only_transform_refuses_deletes(path):
    """``ReleaseInsertionOnly`` dead-letters deletes and upserts on both paths
    and releases the insertions only."""
    recs = [
        UpdateRecord(1.0, "insert", "x", (0, 1), "a", 0),
        UpdateRecord(2.0, "insert", "y", (0, 2), "a", 1),
        UpdateRecord(11.0, "delete", "x", None, "a", 2),
        UpdateRecord(12.0, "upsert", "y", (0, 0), "a", 3),
    ]
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, end_time=60.0)
    opts = PipelineOptions(runner=FNAPI_RUNNER)
    if path == "streaming":
        opts = PipelineOptions(runner="BundleBasedDirectRunner")
        opts.view_as(StandardOptions).streaming = True
    with TestPipeline(options=opts) as p:
        if path == "streaming":
            ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in recs])
            for wm in range(5, 200, 5):
                ts = ts.advance_watermark_to(float(wm))
            src = p | ts.advance_watermark_to_infinity()
        else:
            src = p | beam.Create(recs) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        out = src | ReleaseInsertionOnly(CFG, spec, NoiseKey.disabled())
        assert_that(out["dead_letters"] | beam.Map(lambda d: d.reason), equal_to(["deletion_not_allowed"] * 2))
        counts = out["answers"] | beam.Filter(lambda a: a.query == "n") | beam.Map(lambda a: a.estimate[0])
        assert_that(counts | beam.Filter(lambda v: v != 2.0), equal_to([]), label="AlwaysTwo")
