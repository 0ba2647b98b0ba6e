"""The streaming path when the watermark jumps several ticks at once (a starved process, a backlog, a
restart): every update is applied at its own tick, on the DirectRunner too.

The DirectRunner holds no watermark for a stateful stage's pending timers
(``apache_beam/runners/direct/direct_userstate.py``: "TODO(ccy): add corresponding watermark holds after the
DirectRunner allows for keyed watermark holds"; ``transform_evaluator._ParDoEvaluator`` returns no holds):
when the watermark passes the close of tick t and the release time of tick t in one step, the registry
step's close of t and the per-stream release of t fire in the same round, and the release missed the
updates still being resolved (one to four ticks late under a CPU hog in the Pub/Sub test). The registry step
now sends per-tick update counts, and the per-stream step waits until a tick's count is back to 0
(``transforms.streaming.counts_gate``). A TestStream makes the jump deterministic; the twin turns the counts
off and must fail the same way the old code did."""

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from apache_beam.testing.util import BeamAssertException, assert_that, equal_to
from test_beam_releases import CFG, KEY_HEX, REL, in_memory, noise_of, streaming_options, workload

import transforms.releases as releases_module
import transforms.streaming as streaming_module
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseFullyDynamic, StreamSpec
from transforms.streaming import counts_gate

SPEC = StreamSpec(streams=("a", "b"), tick_seconds=10.0, end_time=400.0)


def _jumping(recs, jump: float) -> TestStream:
    """Every update on time (added before the watermark moves), then the watermark in steps of ``jump``
    seconds (a tick is 10 s; the release of tick t is due one tick after its close)."""
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in recs])
    wm = 0.0
    while wm < 3000.0:
        wm += jump
        stream = stream.advance_watermark_to(wm)
    return stream.advance_watermark_to_infinity()


def _run(recs, jump: float) -> None:
    t = ReleaseFullyDynamic(CFG, SPEC, NoiseKey.fixed(KEY_HEX), release=REL)
    expect = in_memory(recs, SPEC, CFG, noise_of(t))
    with TestPipeline(options=streaming_options()) as p:
        out = p | _jumping(recs, jump) | t
        answers = out["answers"] | beam.Map(lambda a: (a.stream, a.tick, a.segment, a.query, a.estimate))
        assert_that(answers, equal_to(expect))


RECS = [r for r in workload(streams=("a", "b"), n=120, seed=5) if r.event_time < 80.0]


@pytest.mark.parametrize("jump", [35.0, 1000.0])
def test_watermark_jumps_of_several_ticks_release_every_update_at_its_tick(jump):
    """Jumps of 3.5 ticks and of 100 ticks: the releases equal the core's, update for update (the old code
    released ticks 2 and 4 without their last updates here)."""
    _run(RECS, jump)


def test_watermark_jump_twin_without_the_counts_fails(monkeypatch):
    """The twin: the registry step and the per-stream step built without the counts (the old wiring) give
    releases that miss updates at a jump of 3.5 ticks, so the test above can fail."""
    monkeypatch.setattr(releases_module, "counts_gate", lambda choice, pipeline: False)  # the registry step's
    monkeypatch.setattr(streaming_module, "counts_gate", lambda choice, pipeline: False)  # the per-stream step's
    with pytest.raises(BeamAssertException, match="unexpected elements"):
        _run(RECS, 35.0)


def test_late_update_under_the_counts_still_applied_at_the_current_tick():
    """An update that arrives after its tick was resolved (truly late: the watermark passed it) is
    counted and resolved at the entry's next tick like before; the counts never hold a release
    forever (the run ends, the later releases include it)."""
    spec = StreamSpec(streams=("a",), tick_seconds=10.0, late_policy="current", end_time=300.0)
    early = [UpdateRecord(1.0 + i, "insert", f"x{i}", (0, 1), "a", i) for i in range(5)]
    stream = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in early])
    stream = stream.advance_watermark_to(40.0)
    late = UpdateRecord(2.0, "delete", "x0", None, "a", 99)  # its tick (1) is long over
    stream = stream.add_elements([beam.window.TimestampedValue(late, 2.0)]).advance_watermark_to(5000.0)
    stream = stream.advance_watermark_to_infinity()
    with TestPipeline(options=streaming_options()) as p:
        out = p | stream | ReleaseFullyDynamic(CFG, spec, NoiseKey.disabled())
        last = out["answers"] | beam.Filter(lambda a: a.query == "n" and a.tick >= 16) | beam.Map(lambda a: a.estimate)
        assert_that(last, equal_to([(4.0,), (4.0,)]))  # closes at ticks 16 and 256


def test_counts_only_where_the_runner_holds_no_watermark_for_timers():
    """The counts are the DirectRunner's (per-stream output); Flink, Dataflow and the portable runners hold
    the watermark for the registry step's timers and keep their graph and state names unchanged."""

    class FakePipeline:
        def __init__(self, runner):
            self.runner = runner

    direct = type("BundleBasedDirectRunner", (), {})()
    portable = type("FlinkRunner", (), {})()
    assert counts_gate("auto", FakePipeline(direct)) and counts_gate("bundle", FakePipeline(direct))
    assert not counts_gate("stateful", FakePipeline(direct))
    assert not any(counts_gate(c, FakePipeline(portable)) for c in ("auto", "stateful", "bundle"))
