"""Audits of the privacy promises (the audit findings, each with a broken twin).

1. Fresh noise for every release, identical noise for a replay of one release.
2. Public time only: a stream's releases never depend on other streams' data
   or on where the data ends (bounded runs end at the configured end).
3. The entry-level unit's mutation limit is enforced, so its stated loss holds
   for every input (empirically, through the real pipeline).
4. Confidential outputs apart; the release manifest refuses a reused id.
5. ``bernoulli_exp`` is exact at ``exp(-0) = 1``.

Every check is written as a function and run twice: on the real code (it must
pass) and on a broken twin (it must fail), so none of them can pass vacuously.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import apache_beam as beam
import numpy as np
import pytest
import yaml
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.test_stream import TestStream
from beam_runners import FNAPI_RUNNER
from dp_harness import assert_within_loss, run_bounded_trials

from transforms.core import DynamicConfig, PrivacyUnit, PureDP, QuerySet
from transforms.core.foundation.noise import NoiseSource, ReleaseIdentity, bernoulli_exp
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import (
    CountContinually,
    ReleaseFullyDynamic,
    ReleaseInsertionOnly,
    ReleaseTwoStreamBaseline,
    StreamSpec,
)

ROOT = Path(__file__).resolve().parents[1]
KEY = NoiseKey.fixed(bytes(range(32)).hex())
CFG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(1.0))
FNAPI = PipelineOptions(runner=FNAPI_RUNNER)


# ---------------------------------------------------------------------------
# 1. release identity
# ---------------------------------------------------------------------------


def test_release_identity_separates_noise_and_replays_it():
    key = NoiseSource(bytes(range(32)))
    a, b = ReleaseIdentity("release-a"), ReleaseIdentity("release-b")
    draw = lambda src: src.stream("s", "svt", 1).words(4).tolist()  # noqa: E731
    assert draw(key.for_release(a)) == draw(key.for_release(ReleaseIdentity("release-a")))  # a replay
    assert draw(key.for_release(a)) != draw(key.for_release(b))
    assert draw(key.for_release(a)) != draw(key.for_release(a.with_digest("other config")))
    assert draw(key.for_release(a)) != draw(key)  # the release's sub-key is not the key
    assert ReleaseIdentity.new().release_id != ReleaseIdentity.new().release_id
    assert NoiseSource.disabled().for_release(a).is_disabled
    # a transform fixes its identity at construction, with its configuration in the digest
    spec = StreamSpec(streams=("a",), end_time=100.0)
    t1 = ReleaseFullyDynamic(CFG, spec, KEY, release=a)
    t2 = ReleaseFullyDynamic(CFG, spec, KEY, release=a)
    t3 = ReleaseFullyDynamic(CFG, StreamSpec(streams=("a",), end_time=200.0), KEY, release=a)
    assert t1.release == t2.release and t1.release.release_id == "release-a" and t3.release != t1.release
    assert (
        ReleaseFullyDynamic(CFG, spec, KEY).release.release_id != ReleaseFullyDynamic(CFG, spec, KEY).release.release_id
    )


def _first_count_noise(releases: dict, truth: float) -> np.ndarray:
    """Per trial: the first released count minus the truth."""
    return np.array([next(r.estimate[0] for r in rel if r.query == "n") - truth for rel in releases.values()])


def check_independent_noise_across_releases(trials=300):
    """Two releases (two launches, one key, no release id given) on neighbouring
    inputs: their noises are uncorrelated. Under independence the sample
    correlation of ``trials`` pairs is about N(0, 1/trials); |r| < 5/sqrt(n)
    fails with probability < 6e-7. Shared noise gives r = 1."""
    base = [UpdateRecord(1.0, "insert", f"e{i}", (0, i % 3), "x", i) for i in range(20)]
    neighbour = base[1:]  # one record removed (an erasure request, say)
    spec = lambda streams: StreamSpec(streams=streams, tick_seconds=1.0, end_time=5.0)  # noqa: E731
    first = run_bounded_trials(lambda s: ReleaseFullyDynamic(CFG, spec(s), KEY), base, trials, FNAPI)
    second = run_bounded_trials(lambda s: ReleaseFullyDynamic(CFG, spec(s), KEY), neighbour, trials, FNAPI)
    x, y = _first_count_noise(first, 20.0), _first_count_noise(second, 19.0)
    assert x.std() > 0 and y.std() > 0
    r = float(np.corrcoef(x, y)[0, 1])
    assert abs(r) < 5 / np.sqrt(trials), f"noise of two releases is correlated: r = {r:.3f}"


@pytest.mark.statistical
def test_two_releases_on_one_key_draw_independent_noise():
    """Finding 1 (false-failure rate < 6e-7); failed before (r = 1: the audit's
    answers differed by exactly the removed record)."""
    check_independent_noise_across_releases()


@pytest.mark.statistical
def test_independent_noise_check_catches_shared_noise(monkeypatch):
    """The broken twin: a noise source that ignores the release identity."""
    monkeypatch.setattr(NoiseSource, "for_release", lambda self, release: self)
    with pytest.raises(AssertionError, match="correlated"):
        check_independent_noise_across_releases(trials=60)


# ---------------------------------------------------------------------------
# 2. public time only
# ---------------------------------------------------------------------------

MECHANISMS = {
    "fully_dynamic": lambda spec: ReleaseFullyDynamic(CFG, spec, KEY, release=ReleaseIdentity("schedule-audit")),
    "insertion_only": lambda spec: ReleaseInsertionOnly(CFG, spec, KEY, release=ReleaseIdentity("schedule-audit")),
    "two_stream": lambda spec: ReleaseTwoStreamBaseline(CFG, spec, KEY, release=ReleaseIdentity("schedule-audit")),
    "continual_count": lambda spec: CountContinually(
        CFG, spec, KEY, counter="honaker", horizon=256, release=ReleaseIdentity("schedule-audit")
    ),
}
_EU = [UpdateRecord(float(t), "insert", f"eu{t}", (0, t % 3), "eu", t) for t in range(1, 20)]
_US = [UpdateRecord(float(t), "insert", f"us{t}", (0, 1), "us", t) for t in range(1, 6)]
_US_LATE = _US + [UpdateRecord(150.0, "insert", "us-late", (0, 2), "us", 99)]


def _streaming_options():
    opts = PipelineOptions(runner="BundleBasedDirectRunner")
    opts.view_as(StandardOptions).streaming = True
    return opts


def _run(make, spec, records, streaming):
    key = f"sched{len(_RESULTS)}"
    _RESULTS[key] = []
    with TestPipeline(options=_streaming_options() if streaming else FNAPI) as p:
        if streaming:
            ts = TestStream().add_elements([beam.window.TimestampedValue(r, r.event_time) for r in records])
            wm = 0.0
            while wm < 2000:
                wm += 2.0 if wm < 300 else 100.0
                ts = ts.advance_watermark_to(wm)
            src = p | ts.advance_watermark_to_infinity()
        else:
            src = p | beam.Create(records) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
        out = src | make(spec)
        out["answers"] | beam.Map(_keep, key)
    return sorted((r.stream, r.tick, r.query, r.estimate) for r in _RESULTS.pop(key))


_RESULTS: dict = {}


def _keep(rec, key):
    _RESULTS[key].append(rec)


def check_streams_do_not_see_each_other(make, streaming, spec_for=None):
    """A late update on stream ``us`` changes nothing of stream ``eu``: not its
    answers, not its release ticks, not where it ends."""
    spec_for = spec_for or (lambda records: StreamSpec(streams=("eu", "us"), tick_seconds=1.0, end_time=200.0))
    without = _run(make, spec_for(_EU + _US), _EU + _US, streaming)
    with_late = _run(make, spec_for(_EU + _US_LATE), _EU + _US_LATE, streaming)
    eu = lambda rel: [r for r in rel if r[0] == "eu"]  # noqa: E731
    assert eu(without), "no release of eu at all"
    assert eu(without) == eu(with_late), "stream eu's releases depend on stream us's data"


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_bounded_release_schedule_is_public(name):
    """Finding 2, bounded path: failed before for every mechanism (eu released up
    to tick 4,294,967,296 once us had an update at tick 100,000)."""
    check_streams_do_not_see_each_other(MECHANISMS[name], streaming=False)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_streaming_release_schedule_is_public(name):
    check_streams_do_not_see_each_other(MECHANISMS[name], streaming=True)


def test_schedule_check_catches_a_data_derived_end():
    """The broken twin: the end of the run taken from the data's last time (the
    landed behaviour before the fix)."""

    def data_end(records):
        return StreamSpec(streams=("eu", "us"), tick_seconds=1.0, end_time=max(r.event_time for r in records) + 1)

    with pytest.raises(AssertionError, match="depend on stream us"):
        check_streams_do_not_see_each_other(MECHANISMS["fully_dynamic"], False, data_end)


def test_public_schedule_is_identical_on_neighbouring_inputs():
    """A mechanism that releases every tick: one more update anywhere changes no
    release tick (the schedule is configuration only)."""
    make = MECHANISMS["continual_count"]
    spec = StreamSpec(streams=("eu",), tick_seconds=1.0, end_time=40.0)
    a = _run(make, spec, _EU, False)
    b = _run(make, spec, _EU + [UpdateRecord(7.5, "insert", "extra", (0, 0), "eu", 50)], False)
    assert [r[:3] for r in a] == [r[:3] for r in b] and len(a) == 2 * 40


def test_bounded_input_without_an_end_is_refused():
    with pytest.raises(ValueError, match="bounded input needs a configured end"):
        with TestPipeline(options=FNAPI) as p:
            _ = p | beam.Create(_EU) | ReleaseFullyDynamic(CFG, StreamSpec(streams=("eu",)), KEY)


# ---------------------------------------------------------------------------
# 3. the entry-level unit
# ---------------------------------------------------------------------------

ENTRY_CFG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=3)), PureDP(3.0))
ENTRY_CFG = DynamicConfig(ENTRY_CFG.queries, PureDP(3.0), profile="paper", unit=PrivacyUnit.entry(2))


def _busy_entry(upserts=49):
    """One entry inserted and then upserted ``upserts`` times within tick 1."""
    recs = [UpdateRecord(0.5, "insert", "x", (0, 0), "s", 0)]
    recs += [UpdateRecord(0.5, "upsert", "x", (0, (i + 1) % 3), "s", i + 1) for i in range(upserts)]
    return recs


def test_mutation_limit_is_enforced_in_the_pipeline():
    """Finding 3: with unit entry and k = 2, an entry's updates past its second
    mutation are dead-lettered (``constraint_exceeded``) and the releases are
    those of its first two mutations (failed before: all 50 were accepted)."""
    spec = StreamSpec(streams=("s",), tick_seconds=1.0, end_time=10.0)
    rel = ReleaseIdentity("entry-audit")
    assert ENTRY_CFG.max_mutations == 2 and ENTRY_CFG.ledger_budget == PureDP(1.0)  # 3 / (2k - 1)
    dead = []
    got = {}
    for name, recs in (("all", _busy_entry()), ("first_two", _busy_entry(1))):
        key = f"entry-{name}"
        _RESULTS[key] = []
        _RESULTS[key + "-dead"] = []
        with TestPipeline(options=FNAPI) as p:
            out = (
                p
                | beam.Create(recs)
                | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
                | ReleaseFullyDynamic(ENTRY_CFG, spec, KEY, release=rel)
            )
            out["answers"] | "Keep" >> beam.Map(_keep, key)
            out["dead_letters"] | "KeepDead" >> beam.Map(_keep, key + "-dead")
        got[name] = sorted((r.tick, r.query, r.estimate) for r in _RESULTS.pop(key))
        dead.append(sorted(d.reason for d in _RESULTS.pop(key + "-dead")))
    assert dead[0] == ["constraint_exceeded"] * 48 and dead[1] == []
    assert got["all"] == got["first_two"] and got["all"]


def check_entry_loss(trials=500):
    """Neighbouring inputs for unit entry: one whole entry's mutations (here 50)
    present or absent. The stated loss is eps = 3 for the entry; the event is
    "the first segment closes at tick 1" (the sparse vector sees the entry's
    update count). False-failure rate <= 1e-6 (dp_harness). Power for the twin (the limit not enforced: the
    event has probability near 1 with the entry, near 0 without): with no event in 500 trials without it, the
    1e-6 upper bound on its probability is about ln(1e6) / 500 = 0.028, a ratio of at least 30 > e^3 = 20."""
    spec = lambda streams: StreamSpec(streams=streams, tick_seconds=1.0, end_time=3.0)  # noqa: E731
    rel = ReleaseIdentity("entry-loss")
    make = lambda s: ReleaseFullyDynamic(ENTRY_CFG, spec(s), KEY, release=rel)  # noqa: E731
    with_entry = run_bounded_trials(make, _busy_entry(), trials, FNAPI)
    without = run_bounded_trials(make, [], trials, FNAPI)
    closes_at_one = lambda rel: any(r.tick == 1 for r in rel)  # noqa: E731
    return assert_within_loss(with_entry, without, [closes_at_one], epsilon=3.0, alpha=1e-6)


@pytest.mark.statistical
def test_entry_level_loss_holds_empirically():
    check_entry_loss()


@pytest.mark.statistical
def test_entry_loss_check_catches_an_unenforced_limit(monkeypatch):
    """The broken twin: the registry does not enforce the mutation limit."""
    monkeypatch.setattr(DynamicConfig, "max_mutations", property(lambda self: None))
    with pytest.raises(AssertionError, match="privacy loss on an event is at least"):
        check_entry_loss()


# ---------------------------------------------------------------------------
# 4. outputs apart; the manifest
# ---------------------------------------------------------------------------


def _demo_config(tmp_path, data_lines, release_id=None, out="out"):
    raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    data = tmp_path / f"in-{abs(hash(tuple(data_lines)))}.jsonl"
    data.write_text("\n".join(data_lines) + "\n")
    raw["source"]["path"] = str(data)
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / out), "format": "jsonl"}]
    if release_id:
        raw["privacy"]["release_id"] = release_id
    path = tmp_path / f"cfg-{abs(hash((tuple(data_lines), release_id)))}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return str(path)


def _releases(dirpath):
    return sorted(x for f in Path(dirpath).glob("releases*.jsonl") for x in f.read_text().splitlines())


def test_manifest_replays_a_release_and_refuses_a_reused_id(tmp_path, monkeypatch, capsys):
    from pipelines.demo_data import generate
    from pipelines.release import main

    monkeypatch.setenv("DP_NOISE_KEY", bytes(range(32)).hex())
    lines = generate(120, seed=1)
    cfg = _demo_config(tmp_path, lines, "audit-release-1")
    assert main(["--config", cfg]) == 0
    first = _releases(tmp_path / "out")
    manifest = json.loads((tmp_path / "out-confidential" / "release_manifest.json").read_text())
    assert manifest["release_id"] == "audit-release-1" and manifest["budget_per_stream"] == {"epsilon": 1.0}
    assert not (tmp_path / "out" / "release_manifest.json").exists()  # derived from data: confidential
    assert main(["--config", cfg]) == 0  # a replay of the same release: identical outputs
    assert _releases(tmp_path / "out") == first
    other = _demo_config(tmp_path, lines[:-3], "audit-release-1")  # the same id on other data
    assert main(["--config", other]) == 2
    assert "release audit-release-1 was already made with another input" in capsys.readouterr().err
    fresh = _demo_config(tmp_path, lines)  # no id: a new release, new noise
    assert main(["--config", fresh]) == 2  # into the folder of another release: refused before it runs
    assert "already holds the outputs of release audit-release-1" in capsys.readouterr().err
    assert main(["--config", fresh, "--overwrite"]) == 0
    assert _releases(tmp_path / "out") != first


def test_bounded_run_without_origin_or_end_fails_fast_with_the_input_times(tmp_path, capsys):
    from pipelines.release import main

    raw = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
    raw["time"] = {"field": "time", "tick_seconds": 600}
    raw["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "time.origin and time.end: required for a file (bounded) source" in err
    times = [
        json.loads(x)["time"]
        for x in (ROOT / "data" / "demo.jsonl").read_text().splitlines()
        if x[:1] == "{" and x[1] == '"'
    ]
    assert f"the input's event times run from {min(times)!r} to {max(times)!r}" in err and "never uses them" in err


def test_update_needs_the_release_id(tmp_path, capsys):
    from pipelines.release import main

    cfg = copy.deepcopy(yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text()))
    cfg["source"]["path"] = str(ROOT / "data" / "demo.jsonl")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    assert main(["--config", str(path), "--update"]) == 2
    assert "--update replaces a running job: pass its release id" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# 5. bernoulli_exp at exp(-0)
# ---------------------------------------------------------------------------


class _TopWords:
    """A stream whose words are all 2**64 - 1: the 63-bit word is 2**63 - 1."""

    disabled = False

    def words(self, n):
        return np.full(n, np.uint64(2**64 - 1))


def test_bernoulli_exp_of_zero_is_always_true():
    """exp(-0) = 1: failed before for the top 4,096 words (clamped band)."""
    assert bernoulli_exp(_TopWords(), [0, 0, 0], [1, 5, 7]).all()
    from transforms.core.foundation.noise import bernoulli_exp_float

    assert bernoulli_exp_float(_TopWords(), np.zeros(3)).all()
