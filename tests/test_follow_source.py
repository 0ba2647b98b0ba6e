"""``source: {type: follow}``: JSON lines followed as they are appended
(``pipelines.io.follow``), the streaming source that also runs on Flink
(``tests/test_flink.py``). Configuration, and the CLI on the DirectRunner
releasing exactly what the bounded file source releases on the same lines."""

import json

import apache_beam as beam
import pytest
import yaml

from pipelines.config import ConfigError, load_config
from pipelines.release import main

ROOT_DEMO = "configs/demo.yaml"
KEY_HEX = bytes(range(32)).hex()


def _write(tmp_path, name, raw):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw))
    return p


def _demo():
    return yaml.safe_load(open(ROOT_DEMO).read())


def test_follow_source_is_streaming_and_takes_its_keys(tmp_path):
    (tmp_path / "in.jsonl").write_text("")
    raw = _demo()
    raw["source"] = {"type": "follow", "path": str(tmp_path / "in.jsonl"), "max_disorder_seconds": 2.5}
    cfg = load_config(_write(tmp_path, "f.yaml", raw))
    assert cfg.streaming and cfg.source_type == "follow" and cfg.max_disorder_seconds == 2.5
    raw["time"].pop("end")  # unbounded: no end needed
    assert load_config(_write(tmp_path, "g.yaml", raw)).end is None


@pytest.mark.parametrize(
    "change,match",
    [
        (lambda r: r["source"].update(subscription="projects/p/subscriptions/sub"), "subscription"),
        (lambda r: r["source"].update(format="csv"), "source.format"),
        (lambda r: r["source"].update(max_disorder_seconds=-1), "max_disorder_seconds"),
        (lambda r: r["source"].update(path="gs://bucket/x.jsonl"), "local files"),
        (lambda r: r["source"].pop("path"), "source.path"),
        (lambda r: r["time"].pop("origin"), "time.origin: required with a follow source"),
    ],
)
def test_follow_source_refuses_bad_settings(tmp_path, change, match):
    (tmp_path / "in.jsonl").write_text("")
    raw = _demo()
    raw["source"] = {"type": "follow", "path": str(tmp_path / "in.jsonl")}
    change(raw)
    with pytest.raises(ConfigError, match=match):
        load_config(_write(tmp_path, "f.yaml", raw))


def _lines(folder, pattern):
    return sorted(line for f in folder.glob(pattern) for line in f.read_text().splitlines())


@pytest.mark.slow
def test_followed_file_releases_what_the_bounded_file_releases(tmp_path, monkeypatch):
    """The same 1,500 demo lines (in time order, as a log is written), once as a
    bounded file and once followed (ending with ``#END``), under one release id
    and key: the release lines are byte-identical."""
    lines = [ln for ln in open("data/demo.jsonl").read().splitlines()[:1500] if ln.startswith('{"time"')]
    lines.sort(key=lambda ln: json.loads(ln)["time"])
    last = json.loads(lines[-1])["time"]
    (tmp_path / "bounded.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "followed.jsonl").write_text("\n".join(lines) + "\n#END\n")
    base = _demo()
    base["time"]["end"] = int(last // 600 + 1) * 600
    base["privacy"]["release_id"] = "follow-test-0001"
    outs = {}
    for kind in ("file", "follow"):
        raw = json.loads(json.dumps(base))
        name = "bounded" if kind == "file" else "followed"
        raw["source"] = {"type": kind, "path": str(tmp_path / f"{name}.jsonl")}
        raw["sinks"] = [{"type": "file", "path": str(tmp_path / name / "out"), "format": "jsonl"}]
        monkeypatch.setenv("DP_NOISE_KEY", KEY_HEX)
        assert main(["--config", str(_write(tmp_path, f"{name}.yaml", raw))]) == 0
        outs[kind] = _lines(tmp_path / name / "out", "releases*.jsonl")
    assert len(outs["file"]) == 2 * 3 * (base["time"]["end"] // 600)
    assert outs["follow"] == outs["file"]


#: two updates of entry x1 in tick 1 with another entry's line between them, and a line of tick 2
_BOUNDARY_LINES = [
    {"time": 10.0, "op": "insert", "id": "x1", "item": {"carrier": "AA", "amount": 40.0}, "region": "eu", "seq": 0},
    {"time": 15.0, "op": "insert", "id": "x3", "item": {"carrier": "B6", "amount": 7.0}, "region": "us", "seq": 3},
    {"time": 20.0, "op": "upsert", "id": "x1", "item": {"carrier": "AA", "amount": 110.0}, "region": "eu", "seq": 1},
    {"time": 700.0, "op": "insert", "id": "x2", "item": {"carrier": "DL", "amount": 5.0}, "region": "eu", "seq": 2},
]


def test_an_update_read_one_read_after_the_one_before_it_in_its_tick_is_not_late(tmp_path, monkeypatch, capsys):
    """Stop 55 (found by stop 54 on a slow run: one record of the demo's 6,912): the DirectRunner's FnApiRunner fused
    the followed read with the registry, whose stage's input watermark is the end of time from the start, so the
    tick-close timers one read set fired at the start of the next read's bundle, before its lines: an entry's upsert
    read after its insert's read, in the same tick, was late (applied a tick later). One line a read here (the read
    budget's clock advanced half a budget a call), the upsert two reads after the insert: the followed releases
    equal the bounded ones. Fails without the shuffle after the read (``ReadFollowing``, "FusionBreak"), and with
    a close timer that fires once more before it resolves (the upsert is two reads later)."""
    from pipelines.io import follow

    body = "\n".join(json.dumps(x) for x in _BOUNDARY_LINES) + "\n"
    (tmp_path / "bounded.jsonl").write_text(body)
    (tmp_path / "followed.jsonl").write_text(body + "#END\n")
    clock = iter(range(10**9))
    monkeypatch.setattr(follow, "_monotonic", lambda: next(clock) / 2)  # a read's budget ends after one line
    monkeypatch.setenv("DP_NOISE_KEY", KEY_HEX)
    base = _demo()
    base["time"]["end"] = 1200
    base["privacy"]["release_id"] = "follow-boundary-0001"
    outs = {}
    for kind, name in (("file", "bounded"), ("follow", "followed")):
        raw = json.loads(json.dumps(base))
        raw["source"] = {"type": kind, "path": str(tmp_path / f"{name}.jsonl")}
        raw["sinks"] = [{"type": "file", "path": str(tmp_path / name / "out"), "format": "jsonl"}]
        assert main(["--config", str(_write(tmp_path, f"{name}.yaml", raw))]) == 0
        outs[kind] = _lines(tmp_path / name / "out", "releases*.jsonl")
    # the FnApiRunner counts every bundle (a read each here): the summary's counts are exact, no under-count note
    captured = capsys.readouterr()
    printed = captured.out
    assert "counts of this run: exact" in printed and "under-reports" not in printed
    assert captured.err.count("note: on the DirectRunner a followed file is released when every file is finished") == 1
    assert "records read:        4 " in printed
    assert len(outs["file"]) == 2 * 3 * 2
    eu1 = [json.loads(r) for r in outs["file"] if '"stream": "eu"' in r and '"tick": 1,' in r]
    assert any(r["query"] == "total_amount" for r in eu1)  # the upsert's tick is released (the comparison bites)
    assert outs["follow"] == outs["file"]


#: stop 51's case: one person's record at tick 5 of 600 s ticks (in ``eu``), nothing in ``us``
_ONE_PERSON_LINE = {
    "time": 2705.0,
    "op": "insert",
    "id": "b1",
    "customer": 7,
    "region": "eu",
    "seq": 0,
    "item": {"carrier": "AA", "amount": 10.0},
}


def _person_lines(n):
    if not n:
        return [json.dumps(_ONE_PERSON_LINE)]
    lines = [ln for ln in open("data/demo_person.jsonl").read().splitlines() if ln.startswith('{"time"')][:n]
    return sorted(lines, key=lambda ln: json.loads(ln)["time"])


@pytest.mark.parametrize("n", [0, 120])
def test_a_person_unit_followed_file_on_the_directrunner_releases_what_the_bounded_file_releases(
    tmp_path, monkeypatch, n
):
    """Stop 55 (stop 51's audit, refused on the DirectRunner until then): under the person unit, one person's record
    at tick 5 then ``#END``, and the DirectRunner released ``eu``'s ticks 1-4 of 7 only; on 120 or 300 demo lines, or
    the whole demo, it released nothing. Its FnApiRunner fuses the person step (``GatedBoundPersonsFn``) with the
    registry (``ResolveEntriesFn``) and keeps a stage's timers in one buffer per timer family id, whatever the
    transform (apache/beam#21995): both timers were ``tick_end``, so the registry's were handed to the person step
    (an empty cell there: nothing done), the registry never resolved an update and the counts gate held the release
    of the first tick with one for ever. The person step's timer has a name of its own on the DirectRunner now, and
    the run is not refused: the followed releases equal the bounded ones (the CLI, no bypass; one line a read for
    the 120 lines: the watermark moves between reads, so the steps' timers fire while lines still come)."""
    from pipelines.config import check_runner
    from pipelines.io import follow

    lines = _person_lines(n)
    (tmp_path / "bounded.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "followed.jsonl").write_text("\n".join(lines) + "\n#END\n")
    if n:
        clock = iter(range(10**9))
        monkeypatch.setattr(follow, "_monotonic", lambda: next(clock) / 2)  # a read's budget ends after one line
    monkeypatch.setenv("DP_NOISE_KEY", KEY_HEX)
    base = yaml.safe_load(open("configs/demo_person.yaml").read())
    base["time"]["end"] = int(json.loads(lines[-1])["time"] // 600 + 3) * 600
    base["privacy"]["release_id"] = "follow-person-0001"
    outs = {}
    for kind, name in (("file", "bounded"), ("follow", "followed")):
        raw = json.loads(json.dumps(base))
        raw["source"] = {"type": kind, "path": str(tmp_path / f"{name}.jsonl")}
        raw["sinks"] = [{"type": "file", "path": str(tmp_path / name / "out"), "format": "jsonl"}]
        path = _write(tmp_path, f"{name}.yaml", raw)
        check_runner(load_config(path), "DirectRunner")  # no longer refused
        assert main(["--config", str(path)]) == 0
        outs[kind] = _lines(tmp_path / name / "out", "releases*.jsonl")
    ticks = base["time"]["end"] // 600
    assert len(outs["file"]) == 2 * 3 * ticks  # every period of both streams
    eu = {json.loads(r)["tick"] for r in outs["follow"] if '"stream": "eu"' in r}
    assert eu == set(range(1, ticks + 1))  # stop 51's loss: eu's ticks after the record's
    assert outs["follow"] == outs["file"]


class _Tracker:
    """The SDK's view of an offset tracker for ``FollowFileFn.process``: claims, and the deferral a call asked for."""

    def __init__(self, start):
        from apache_beam.io.restriction_trackers import OffsetRange, OffsetRestrictionTracker

        self.inner = OffsetRestrictionTracker(OffsetRange(start, 1 << 40))
        self.deferred = None

    def current_restriction(self):
        return self.inner.current_restriction()

    def try_claim(self, pos):
        return self.inner.try_claim(pos)

    def defer_remainder(self, delay):
        self.deferred = delay


class _Watermark:
    """A manual watermark estimator's view: the value set, never moved back."""

    value = None

    def current_watermark(self):
        return self.value

    def set_watermark(self, ts):
        assert self.value is None or ts >= self.value
        self.value = ts


def test_a_future_dated_line_does_not_move_the_watermark_past_the_wall_clock(tmp_path):
    """The followed source's watermark is the newest event time read (less ``max_disorder_seconds``), capped at
    the wall clock: one line dated a day ahead (one person's) would otherwise have made every later line of
    everyone else late (stop 51's audit). A line of the past moves it as before."""
    import time

    from pipelines.io.follow import FollowFileFn, json_time

    now = time.time()
    path = tmp_path / "f.jsonl"
    path.write_text(f'{{"time": {now - 7200}}}\n{{"time": {now + 86400}}}\n')
    wm = _Watermark()
    fn = FollowFileFn(json_time(), poll_seconds=1.0, max_disorder_seconds=5.0)
    out = list(fn.process(str(path), _Tracker(0), wm))
    assert len(out) == 2 and abs(out[1].timestamp.micros / 1e6 - (now + 86400)) < 1e-3  # the record keeps its time
    assert now - 5 <= wm.value.micros / 1e6 <= time.time()  # the watermark: the wall clock, not a day ahead
    path.write_text(f'{{"time": {now - 7200}}}\n')
    wm = _Watermark()
    list(fn.process(str(path), _Tracker(0), wm))
    assert abs(wm.value.micros / 1e6 - (now - 7205)) < 1e-3  # a past line: its time less the disorder


def test_one_read_hands_back_to_the_runner_after_its_time_budget_so_the_watermark_moves(tmp_path, monkeypatch):
    """A read that went on for as long as lines were there never returned while its file grew faster than it
    was read (or held a backlog): on Flink no later stage's watermark moved and no checkpoint completed until the
    writer paused (stop 52). One call now reads for ``max_seconds`` at most, then defers the rest to an immediate
    resumption that starts at the next line: the calls together read every line once, in order."""
    from pipelines.io import follow
    from pipelines.io.follow import END_MARKER, FollowFileFn, json_time

    clock = iter(range(10**6))  # each look at the clock: one second later
    monkeypatch.setattr(follow, "_monotonic", lambda: next(clock))
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps({"time": 100 + k, "id": k}) + "\n" for k in range(10)))
    fn = FollowFileFn(json_time(), poll_seconds=2.0, max_disorder_seconds=0.0, max_seconds=3)
    start, calls, seen, wm = 0, [], [], _Watermark()
    for _ in range(20):
        tracker = _Tracker(start)
        out = [json.loads(v.value)["id"] for v in fn.process(str(path), tracker, wm)]
        calls.append((out, tracker.deferred.micros if tracker.deferred is not None else None))
        seen += out
        if tracker.deferred is None:
            break
        start = tracker.inner.try_split(0)[1].start  # the residual the runner resumes
        if out == []:  # the file is read to its end: append the marker that finishes it
            with path.open("a") as f:
                f.write(END_MARKER.decode() + "\n")
    # the clock is read when a call starts and before each line: two lines in a 3-second budget, then a deferral
    # to an immediate resumption; at the end of the file the poll's delay; then the marker finishes the
    # restriction (no deferral)
    budget = [([2 * k, 2 * k + 1], 0) for k in range(5)]
    assert calls == [*budget, ([], 2_000_000), ([], None)]
    assert seen == list(range(10)) and wm.value.micros == 109 * 10**6
    with pytest.raises(ValueError, match="max_seconds must be positive"):
        FollowFileFn(json_time(), poll_seconds=1.0, max_disorder_seconds=0.0, max_seconds=0)


def test_on_the_directrunner_a_poll_brought_back_at_once_waits_out_its_delay(tmp_path, monkeypatch):
    """The FnApiRunner resumes a deferred read at once whatever delay it asked for: a file with nothing new was read
    some 200 times a second (half a core while idle; stop 55). With ``idle_wait`` (the DirectRunner's
    ``ReadFollowing``) a call that comes back sooner than ``poll_seconds`` after a read that reached the end of the
    file first waits the rest of it; a read that stopped on its time budget (lines left) is not waited for; the
    lines read are the same either way. Without ``idle_wait`` (the other runners, which honour the delay) no call
    waits."""
    from pipelines.io import follow
    from pipelines.io.follow import FollowFileFn, json_time

    pauses, ticks = [], iter(range(10**6))
    monkeypatch.setattr(follow, "_pause", pauses.append)
    monkeypatch.setattr(follow, "_poll_clock", lambda: next(ticks) / 100)  # 10 ms between two looks
    path = tmp_path / "f.jsonl"
    path.write_text("".join(json.dumps({"time": 100 + k, "id": k}) + "\n" for k in range(3)))
    for idle_wait in (True, False):
        pauses.clear()
        fn = FollowFileFn(json_time(), poll_seconds=0.5, max_disorder_seconds=0.0, idle_wait=idle_wait)
        wm, start, seen = _Watermark(), 0, []
        for _ in range(3):  # the first call reads the three lines and polls; the next two find nothing new
            tracker = _Tracker(start)
            seen += [json.loads(v.value)["id"] for v in fn.process(str(path), tracker, wm)]
            assert tracker.deferred.micros == 500_000  # the poll's delay, asked for as before
            start = tracker.inner.try_split(0)[1].start
        assert seen == [0, 1, 2]
        if idle_wait:
            assert pauses == pytest.approx([0.49, 0.49])  # the poll's 0.5 s less the 10 ms since it was asked for
        else:
            assert pauses == []
    # a read that stops on its budget (lines left) does not make the next call wait
    clock = iter(range(10**6))
    monkeypatch.setattr(follow, "_monotonic", lambda: next(clock))
    pauses.clear()
    fn = FollowFileFn(json_time(), poll_seconds=0.5, max_disorder_seconds=0.0, max_seconds=2, idle_wait=True)
    tracker = _Tracker(0)
    assert len(list(fn.process(str(path), tracker, _Watermark()))) == 1 and tracker.deferred.micros == 0
    list(fn.process(str(path), _Tracker(tracker.inner.try_split(0)[1].start), _Watermark()))
    assert pauses == []


def test_the_directrunners_followed_read_ends_its_stage_and_paces_its_polls_and_flinks_does_neither():
    """``ReadFollowing`` on the DirectRunner: a shuffle after the read (``FusionBreak``, the late update above) and
    ``idle_wait``; on Flink (which holds the watermark for timers and honours a poll's delay) the graph and the
    read are as before (savepoints match transforms by name)."""
    import apache_beam as beam
    from apache_beam.runners.portability.flink_runner import FlinkRunner

    from pipelines.io.follow import FollowFileFn, ReadFollowing

    def built(runner):
        p = beam.Pipeline(runner=runner)
        p | "Read" >> ReadFollowing("/nonexistent/*.jsonl")
        proto = p.to_runner_api()
        names = {t.unique_name for t in proto.components.transforms.values()}
        fns = [
            t.transform
            for t in p.transforms_stack[0].parts[0].parts
            if isinstance(getattr(t, "transform", None), beam.ParDo)
        ]
        return names, [f.fn for f in fns if isinstance(f.fn, FollowFileFn)]

    names, fns = built("DirectRunner")
    assert any(n.endswith("Read/FusionBreak") for n in names) and [f.idle_wait for f in fns] == [True]
    names, fns = built(FlinkRunner())
    assert not any("FusionBreak" in n for n in names) and [f.idle_wait for f in fns] == [False]


def test_only_the_bundle_based_runners_counts_are_said_to_undercount():
    """The summary's note (``pipelines.summary.counts_first_bundles``): the BundleBased DirectRunner (TestStream,
    Pub/Sub) counts the first bundle of each step only; the FnApiRunner's result (a followed file) counts all."""
    from apache_beam.runners.direct.direct_runner import DirectPipelineResult
    from apache_beam.runners.portability.fn_api_runner.fn_runner import RunnerResult

    from pipelines.summary import counts_first_bundles

    assert counts_first_bundles(object.__new__(DirectPipelineResult))
    assert not counts_first_bundles(object.__new__(RunnerResult))


@pytest.mark.parametrize(
    "name",
    ["changelog", "demo", "demo_person", "growing", "kafka_local", "open_histogram", "open_keys", "pubsub"],
)
def test_no_two_steps_share_a_timer_name_in_any_bundled_configuration_followed_on_the_directrunner(tmp_path, name):
    """Every bundled configuration's graph with a followed source on the DirectRunner (the FnApiRunner: it may fuse
    stateful steps into one stage and then buffers their timers by name, whatever the step, apache/beam#21995; the
    person step and the registry lost each other's timers so until stop 55): no timer name belongs to two steps."""
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
    from apache_beam.portability.api import beam_runner_api_pb2

    from pipelines.wiring import build_pipeline
    from transforms.records import NoiseKey

    (tmp_path / "in.jsonl").write_text("")
    raw = yaml.safe_load(open(f"configs/{name}.yaml").read())
    raw["source"] = {"type": "follow", "path": str(tmp_path / "in.jsonl")}
    raw["sinks"] = [{"type": "file", "path": str(tmp_path / "out") + "/", "format": "jsonl"}]
    cfg = load_config(_write(tmp_path, "c.yaml", raw))
    opts = PipelineOptions(runner="DirectRunner")
    opts.view_as(StandardOptions).streaming = True
    p = beam.Pipeline(options=opts)
    build_pipeline(p, cfg, NoiseKey.fixed(KEY_HEX))
    owners: dict = {}
    for t in p.to_runner_api().components.transforms.values():
        if t.spec.urn == "beam:transform:pardo:v1":
            for family in beam_runner_api_pb2.ParDoPayload.FromString(t.spec.payload).timer_family_specs:
                owners.setdefault(family, []).append(t.unique_name)
    assert owners  # stateful steps with timers are in the graph (the check bites)
    assert {f: names for f, names in owners.items() if len(names) > 1} == {}
