"""The pipelines on a real Flink: Beam's Flink job server (from Maven Central) with an embedded Flink.

One job server for the session (``pipelines.flink_jobserver``); every test compares what Flink released
with the DirectRunner or the in-memory core, record for record. Skips, saying what is missing, when Java or
Maven is not installed or the job server cannot be fetched; with ``DP_DYNAMIC_FLINK_JAR`` set (``.ci/run``
sets it after fetching the jar) a job server that cannot be used is a failure instead. ``docs/flink.md``.
"""

import json
import os
import pathlib
import subprocess
import sys
import time

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to
from test_beam_releases import workload  # the same random update stream

from pipelines import flink_jobserver
from transforms.core import DynamicConfig, FullyDynamicRelease, NoiseSource, PureDP, QuerySet, ReleaseIdentity, Update
from transforms.records import NoiseKey, UpdateRecord
from transforms.releases import ReleaseFullyDynamic, StreamSpec

pytestmark = [pytest.mark.flink, pytest.mark.slow]

ROOT = pathlib.Path(__file__).resolve().parents[1]
KEY_HEX = bytes(range(32, 64)).hex()
CFG = DynamicConfig((QuerySet("n", "count"), QuerySet("h", "histogram", domain_size=4)), PureDP(2.0))
TIMINGS: dict[str, float] = {}


def _required() -> bool:
    return bool(os.environ.get("DP_DYNAMIC_FLINK_JAR"))


@pytest.fixture(scope="session")
def flink_jar():
    """The job server's launcher jar (fetched with Maven, cached in ~/.m2)."""
    missing = flink_jobserver.missing_prerequisites()
    if missing:
        msg = f"Flink tier needs {' and '.join(missing)} on PATH (install a JDK 11+ and Maven)"
        if _required():
            pytest.fail(msg)
        pytest.skip(msg)
    env_jar = os.environ.get("DP_DYNAMIC_FLINK_JAR")
    if env_jar and pathlib.Path(env_jar).exists():
        return pathlib.Path(env_jar)
    try:
        t0 = time.perf_counter()
        jar = flink_jobserver.fetch()
        TIMINGS["fetch"] = time.perf_counter() - t0
        return jar
    except RuntimeError as e:
        if _required():
            raise
        pytest.skip(f"could not fetch Beam's Flink job server ({flink_jobserver.RUNNER_ARTIFACT}) from Maven: {e}")


@pytest.fixture(scope="session")
def flink(flink_jar, tmp_path_factory):
    """One job server with an embedded Flink (``[local]``, parallelism 2) for the whole session."""
    log = tmp_path_factory.mktemp("flink") / "jobserver.log"
    server = flink_jobserver.start(flink_jar, parallelism=2, log_path=log)
    TIMINGS["jobserver_start"] = server.startup_seconds
    print(f"\nFlink job server {flink_jobserver.RUNNER_ARTIFACT} listening after {server.startup_seconds:.1f} s")
    yield server
    server.stop()


def _flink_options(server, *extra, streaming=False):
    opts = PipelineOptions(server.options("--parallelism=2", *extra))
    if streaming:
        opts.view_as(beam.options.pipeline_options.StandardOptions).streaming = True
    return opts


def _in_memory(records, spec, noise):
    """The reference: the core driven tick by tick, then to the first close at or after the end tick."""
    out = []
    for s in spec.streams:
        core = FullyDynamicRelease(CFG, stream=s)
        by_tick = {}
        for r in sorted((r for r in records if r.stream == s), key=lambda r: (spec.tick_of(r.event_time), r.seq)):
            by_tick.setdefault(spec.tick_of(r.event_time), []).append(Update(r.op, r.entry_id, r.item))
        results = [core.process_tick(t, ups, noise) for t, ups in sorted(by_tick.items())]
        while not (core.closed and core.last_close_tick >= spec.end_tick):
            results.append(core.advance(core.next_close, noise))
        for res in results:
            out += [(a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate)) for a in res.answers]
    return sorted(out)


def _key_answers(a):
    return (a.stream, a.tick, a.segment, a.query, tuple(float(x) for x in a.estimate))


def test_streaming_state_and_timers_on_flink_equal_the_core(flink):
    """A ``--streaming`` pipeline on Flink takes the stateful path (entry registry, stateful per-tick merge,
    per-stream release; Flink's keyed state and event-time timers): its answers equal the in-memory core's,
    exactly, with noise off and with a fixed key and release id (then they are the noise every runner draws).
    Both releases run in one Flink job (one job's start-up instead of two)."""
    recs = workload(n=200, seed=3)
    spec = StreamSpec(streams=("a", "b", "idle"), tick_seconds=5.0, end_time=200.0)
    p = beam.Pipeline(options=_flink_options(flink, streaming=True))
    updates = p | beam.Create(recs) | beam.Map(lambda r: beam.window.TimestampedValue(r, r.event_time))
    for noise in ("off", "fixed_key"):
        key = NoiseKey.disabled() if noise == "off" else NoiseKey.fixed(KEY_HEX)
        t = ReleaseFullyDynamic(CFG, spec, key, release=ReleaseIdentity("flink-test-0001"))
        source = NoiseSource.disabled() if noise == "off" else NoiseSource.from_hex(KEY_HEX).for_release(t.release)
        expect = _in_memory(recs, spec, source)
        assert any(a[0] == "idle" for a in expect) and len(expect) > 10
        out = updates | f"Release_{noise}" >> t
        assert_that(out["answers"] | f"Key_{noise}" >> beam.Map(_key_answers), equal_to(expect), label=f"Check_{noise}")
        assert_that(
            out["dead_letters"] | f"Reasons_{noise}" >> beam.Map(lambda d: d.reason),
            equal_to([]),
            label=f"Dead_{noise}",
        )
    t0 = time.perf_counter()
    state = p.run().wait_until_finish()
    TIMINGS["streaming_two_releases"] = time.perf_counter() - t0
    assert state == "DONE", state
    names = {x.unique_name for x in p.to_runner_api().components.transforms.values()}
    assert any(n.endswith("/MergePerTick") for n in names)  # not the DirectRunner's bundle merge


def _as_json_line(r):
    item = list(r.item) if r.item is not None else None
    return json.dumps(
        {"time": r.event_time, "op": r.op, "id": r.entry_id, "item": item, "stream": r.stream, "seq": r.seq}
    )


def _to_update(line: bytes):
    d = json.loads(line)
    item = tuple(d["item"]) if d["item"] is not None else None
    return beam.window.TimestampedValue(
        UpdateRecord(d["time"], d["op"], d["id"], item, d["stream"], d["seq"]), d["time"]
    )


class _AppendLines(beam.DoFn):
    """A test sink: one line per answer, appended to a local file as soon as it is released."""

    def __init__(self, path):
        self.path = path

    def process(self, answer):
        line = json.dumps(
            [answer.stream, answer.tick, answer.segment, answer.query, [float(x) for x in answer.estimate]]
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)


def _read_answers(path):
    if not path.exists():
        return []
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return sorted((s, t, g, q, tuple(e)) for s, t, g, q, e in rows)


def test_unbounded_followed_file_on_flink_equals_the_core(flink, tmp_path):
    """The unbounded source (``pipelines.follow_source``: a file followed as it grows, watermark from the
    event times) on Flink in streaming: releases come out while the input is still being written (the rest of
    the file is appended only after the first releases were seen), and all of them equal the core's."""
    from pipelines.follow_source import END_MARKER, ReadFollowing

    recs = workload(n=160, seed=11)
    spec = StreamSpec(streams=("a", "b"), tick_seconds=5.0, end_time=150.0)
    t = ReleaseFullyDynamic(CFG, spec, NoiseKey.fixed(KEY_HEX), release=ReleaseIdentity("flink-follow-0001"))
    expect = _in_memory(recs, spec, NoiseSource.from_hex(KEY_HEX).for_release(t.release))
    first = [r for r in recs if r.event_time < 50.0]
    rest = [r for r in recs if r.event_time >= 50.0]
    data, sink = tmp_path / "updates.jsonl", tmp_path / "answers.jsonl"
    data.write_text("".join(_as_json_line(r) + "\n" for r in first))
    p = beam.Pipeline(options=_flink_options(flink, streaming=True))
    # the workload's event times are out of order by less than 1 s (t_i in [0.7 i, 0.7 i + 1)): with a
    # watermark at the newest time read, an update could reach the registry late whenever Flink cuts a bundle
    out = (
        p
        | ReadFollowing(str(data), poll_seconds=0.2, max_disorder_seconds=1.0)
        | "ToUpdates" >> beam.Map(_to_update)
        | t
    )
    out["answers"] | beam.ParDo(_AppendLines(str(sink)))
    t0 = time.perf_counter()
    result = p.run()
    deadline = time.monotonic() + 120
    while not _read_answers(sink):  # the job is live and has released from the first part alone
        assert time.monotonic() < deadline, "no release from the first part within 120 s"
        time.sleep(0.2)
    seen_before_rest = _read_answers(sink)
    with data.open("a") as f:
        f.write("".join(_as_json_line(r) + "\n" for r in rest))
        f.write(END_MARKER.decode() + "\n")
    state = result.wait_until_finish()
    TIMINGS["follow_unbounded"] = time.perf_counter() - t0
    assert state == "DONE", state
    assert seen_before_rest and all(a[1] * spec.tick_seconds <= 50.0 for a in seen_before_rest)
    assert _read_answers(sink) == expect


def _demo_subset(tmp: pathlib.Path, end: int) -> pathlib.Path:
    """The first ``end`` seconds of the demo input, plus a few bad lines (dead letters to compare)."""

    def early(line):
        try:
            return float(json.loads(line)["time"]) < end
        except (ValueError, KeyError, TypeError):
            return False

    lines = [ln for ln in (ROOT / "data" / "demo.jsonl").read_text().splitlines() if early(ln)]
    lines += [
        "{not json",
        json.dumps({"time": 50.0, "op": "explode", "id": "x1", "region": "eu", "seq": 0}),
        json.dumps(
            {"time": 60.0, "op": "insert", "id": "x2", "item": {"carrier": "AA", "amount": 1}, "region": "mars"}
        ),
        json.dumps({"time": 70.0, "op": "delete", "id": "never-inserted", "region": "us", "seq": 0}),
    ]
    data = tmp / "updates.jsonl"
    data.write_text("\n".join(lines) + "\n")
    return data


def _run_cli(config: pathlib.Path, release_id: str, *beam_args: str) -> tuple[str, float]:
    env = dict(os.environ, DP_NOISE_KEY=KEY_HEX, MPLBACKEND="Agg")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.release", "--config", str(config), "--release-id", release_id, *beam_args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    took = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout + proc.stderr, took


def _records(path: pathlib.Path, pattern: str) -> list[str]:
    files = sorted(path.glob(pattern))
    assert files, f"no {pattern} under {path}"
    return sorted(line for f in files for line in f.read_text().splitlines())


def test_release_cli_on_flink_is_byte_identical_to_direct_runner(flink_jar, tmp_path):
    """``python -m pipelines.release`` with the README's Flink options (FlinkRunner, an embedded Flink started
    from the fetched job server jar): releases, node outputs and dead letters byte-identical (as sets of lines;
    Flink shards differently) to the DirectRunner's for the same noise key and release id."""
    end = 3 * 86400
    data = _demo_subset(tmp_path, end)
    demo = (ROOT / "configs" / "demo.yaml").read_text()
    outs = {}
    for runner in ("direct", "flink"):
        cfg = tmp_path / f"{runner}.yaml"
        out = tmp_path / runner / "out"
        cfg.write_text(
            demo.replace("data/demo.jsonl", str(data))
            .replace("path: output/", f"path: {out}/")
            .replace("end: 691200", f"end: {end}")
            .replace("kind: auto", "kind: fully_dynamic")  # node outputs too
        )
        args = []
        if runner == "flink":
            args = [
                "--runner=FlinkRunner",
                "--flink_master=[local]",
                f"--flink_job_server_jar={flink_jar}",
                "--environment_type=LOOPBACK",
                "--parallelism=2",
            ]
        log, TIMINGS[f"cli_{runner}"] = _run_cli(cfg, "flink-cli-test-01", *args)
        assert "releases written:" in log, log[-3000:]
        outs[runner] = out
    for pattern, sub in (("releases*.jsonl", "out"), ("nodes*.jsonl", "out"), ("dead_letters*.jsonl", "conf")):
        got = {}
        for runner, out in outs.items():
            where = out if sub == "out" else out.parent / "out-confidential"
            got[runner] = _records(where, pattern)
        assert got["flink"] == got["direct"], pattern
        assert got["direct"], pattern
    dead = [json.loads(x)["reason"] for x in got["direct"]]
    assert len(dead) >= 4, dead
    releases = _records(outs["direct"], "releases*.jsonl")
    assert len(releases) > 100 and len({json.loads(x)["stream"] for x in releases}) == 2


def _time_of(line):
    try:
        t = json.loads(line)["time"]
    except (ValueError, KeyError, TypeError):
        return None
    return t if isinstance(t, int | float) else None


def test_release_cli_with_a_followed_source_on_flink_equals_the_bounded_run(flink_jar, tmp_path):
    """``source: {type: follow}`` through ``python -m pipelines.release`` on Flink (streaming: the job follows
    the file until its ``#END`` line): release lines byte-identical to the DirectRunner's bounded run of the same
    lines under the same key and release id."""
    end = 86400
    lines = [ln for ln in _demo_subset(tmp_path, end).read_text().splitlines() if _time_of(ln) is not None]
    lines.sort(key=_time_of)  # a log is written in time order
    (tmp_path / "bounded.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "followed.jsonl").write_text("\n".join(lines) + "\n#END\n")
    demo = (ROOT / "configs" / "demo.yaml").read_text().replace("end: 691200", f"end: {end}")
    outs = {}
    for name, source, args in (
        ("direct", f"{{type: file, path: {tmp_path / 'bounded.jsonl'}, format: jsonl}}", []),
        (
            "flink",
            f"{{type: follow, path: {tmp_path / 'followed.jsonl'}}}",
            [
                "--runner=FlinkRunner",
                "--flink_master=[local]",
                f"--flink_job_server_jar={flink_jar}",
                "--environment_type=LOOPBACK",
                "--parallelism=2",
            ],
        ),
    ):
        out = tmp_path / name / "out"
        cfg = tmp_path / f"{name}.yaml"
        cfg.write_text(
            demo.replace("source: {type: file, path: data/demo.jsonl, format: jsonl}", f"source: {source}").replace(
                "path: output/", f"path: {out}/"
            )
        )
        _, TIMINGS[f"cli_follow_{name}"] = _run_cli(cfg, "flink-follow-test-01", *args)
        outs[name] = _records(out, "releases*.jsonl")
    assert len(outs["direct"]) == 2 * 3 * (end // 600)
    assert outs["flink"] == outs["direct"]


def test_report_timings(flink):
    """Prints what the tier measured (``-s`` shows it); always passes once the job server ran."""
    print("\nFlink tier timings (s): " + ", ".join(f"{k}={v:.1f}" for k, v in sorted(TIMINGS.items())))
