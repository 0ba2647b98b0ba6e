"""``source: {type: follow}``: JSON lines followed as they are appended
(``pipelines.io.follow``), the streaming source that also runs on Flink
(``tests/test_flink.py``). Configuration, and the CLI on the DirectRunner
releasing exactly what the bounded file source releases on the same lines."""

import json

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


def test_a_person_unit_followed_source_is_refused_on_the_directrunner_only(tmp_path):
    """Stop 51's audit: under the person unit, one record at tick t then ``#END``, and the DirectRunner released
    ticks 1..t-1 only (the person step's last decisions lost at the watermark's jump to the end of time): how
    many periods are released depended on the data. Refused before anything runs there; Flink is not refused
    (it holds the watermark for the steps' timers)."""
    from pipelines.config import check_runner

    (tmp_path / "in.jsonl").write_text("")
    raw = _demo()
    raw["source"] = {"type": "follow", "path": str(tmp_path / "in.jsonl")}
    raw["privacy"].update(unit="person", person_field="customer", max_entries_per_person=2, max_mutations_per_entry=3)
    cfg = load_config(_write(tmp_path, "p.yaml", raw))
    for runner in ("DirectRunner", "BundleBasedDirectRunner"):
        with pytest.raises(ConfigError, match="does not run on the DirectRunner"):
            check_runner(cfg, runner)
    check_runner(cfg, "FlinkRunner")
    raw["privacy"] = {"epsilon": 1.0}  # the update unit: not refused
    check_runner(load_config(_write(tmp_path, "u.yaml", raw)), "DirectRunner")


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
