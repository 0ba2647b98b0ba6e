"""Kafka on Flink: a local broker (Maven's ``kafka_2.13``), Beam's Java KafkaIO through an expansion service, and the
release CLI with a Kafka source and a Kafka sink on an embedded Flink (``pipelines.tools.kafka_tool``,
``docs/kafka.md``).

The configuration tests need no Java. The end-to-end test skips, naming what is missing, without java, javac or
mvn or when the jars cannot be fetched; with ``DP_DYNAMIC_KAFKA_JAR`` set (``.ci/run`` sets it after fetching) a
broker, expansion service or job that cannot run is a failure instead.
"""

import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import yaml

from pipelines.config import ConfigError, check_environment, check_kafka_runner, parse_config
from pipelines.tools import kafka_tool

ROOT = pathlib.Path(__file__).resolve().parents[1]
KEY_HEX = bytes(range(32, 64)).hex()
DEMO = yaml.safe_load((ROOT / "configs" / "demo.yaml").read_text())
TIMINGS: dict[str, float] = {}


def _kafka_config(**source):
    raw = json.loads(json.dumps(DEMO))
    raw["time"].pop("end")
    raw["source"] = {
        "type": "kafka",
        "bootstrap_servers": "127.0.0.1:9092",
        "topic": "updates",
        "expansion_service": "localhost:8097",
        **source,
    }
    raw["sinks"] = [
        {
            "type": "kafka",
            "bootstrap_servers": "127.0.0.1:9092",
            "expansion_service": "localhost:8097",
            "topic": "releases",
            "dead_letter_topic": "dead-letters",
        }
    ]
    return raw


def test_kafka_config_is_streaming_with_its_settings():
    cfg = parse_config(_kafka_config(consumer_config={"group.id": "dp"}, max_records=10))
    assert cfg.streaming and cfg.source_type == "kafka"
    assert (cfg.kafka_bootstrap_servers, cfg.kafka_topic, cfg.kafka_expansion_service) == (
        "127.0.0.1:9092",
        "updates",
        "localhost:8097",
    )
    assert cfg.kafka_consumer_config == (("group.id", "dp"),) and cfg.kafka_max_records == 10
    (sink,) = cfg.sinks
    assert (sink.type, sink.topic, sink.nodes_topic, sink.dead_letter_topic) == (
        "kafka",
        "releases",
        None,
        "dead-letters",
    )
    assert sink.takes_dead_letters


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda c: c["source"].pop("topic"), "source.topic: missing"),
        (lambda c: c["source"].pop("expansion_service"), "source.expansion_service: missing"),
        (lambda c: c["source"].update(bootstrap_servers="kafka"), "source.bootstrap_servers: must be host:port"),
        (lambda c: c["source"].update(topic="a/b"), "source.topic: must be a Kafka topic name"),
        (lambda c: c["source"].update(expansion_service="a:1,b:2"), "source.expansion_service: must be one"),
        (lambda c: c["source"].update(max_records=0), "source.max_records: must be an integer >= 1"),
        (lambda c: c["source"].update(subscription="x"), "source: unknown key(s) subscription"),
        (lambda c: c["source"].update(format="csv"), "source.format: must be one of jsonl"),
        (
            lambda c: c["source"].update(consumer_config={"bootstrap.servers": "x:1"}),
            "source.consumer_config.bootstrap.servers: set by the pipeline",
        ),
        (lambda c: c["time"].pop("origin"), "time.origin: required with a kafka source"),
        (lambda c: c["sinks"][0].pop("expansion_service"), "sinks[0].expansion_service: missing"),
        (lambda c: c["sinks"][0].update(nodes_topic="bad topic"), "sinks[0].nodes_topic: must be a Kafka topic"),
        (lambda c: c["sinks"][0].update(window_seconds=5), "sinks[0]: unknown key(s) window_seconds"),
        (lambda c: c["sinks"][0].pop("dead_letter_topic"), "sinks: no sink takes the dead letters"),
        (lambda c: c["privacy"].update(disable_noise=True), "sinks[0].type: privacy.disable_noise"),
    ],
)
def test_kafka_config_errors_name_the_key(mutate, message):
    raw = _kafka_config()
    mutate(raw)
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(raw)


def test_kafka_needs_a_runner_that_runs_java_and_a_reachable_expansion_service():
    from apache_beam.utils.subprocess_server import pick_port

    (free,) = pick_port(None)  # nothing listens there
    raw = _kafka_config(expansion_service=f"localhost:{free}")
    raw["sinks"] = [{"type": "file", "path": "/tmp/dp-dynamic-kafka-test-out/"}]
    cfg = parse_config(raw)
    with pytest.raises(ConfigError, match="needs a runner that runs Java transforms.*got DirectRunner"):
        check_kafka_runner(cfg, "DirectRunner")
    check_kafka_runner(cfg, "FlinkRunner")
    check_kafka_runner(cfg, "PortableRunner")
    with pytest.raises(ConfigError, match=f"source.expansion_service: nothing answers at localhost:{free}"):
        check_environment(cfg, local=False)


def test_cli_refuses_kafka_on_the_direct_runner(tmp_path):
    raw = _kafka_config()
    cfg = tmp_path / "kafka.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.release", "--config", str(cfg)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "needs a runner that runs Java transforms" in proc.stderr


def test_publish_orders_by_event_time_and_stamps_records(tmp_path):
    """``publish`` frames (timestamp ms, line) in event-time order; a line without a time goes first at 0."""
    data = tmp_path / "in.jsonl"
    data.write_bytes(b'{"time": 2.5, "id": "b"}\n{"time": 1, "id": "a"}\n{not json\n\n{"time": -5, "id": "c"}\n')
    count, frames = kafka_tool.encode_records(str(data))
    assert count == 4
    assert kafka_tool.decode_records(frames) == [
        (0, b"{not json"),
        (0, b'{"time": -5, "id": "c"}'),
        (1000, b'{"time": 1, "id": "a"}'),
        (2500, b'{"time": 2.5, "id": "b"}'),
    ]


# --- end to end on Flink -----------------------------------------------------------------------------------


def _required() -> bool:
    return bool(os.environ.get("DP_DYNAMIC_KAFKA_JAR"))


@pytest.fixture(scope="module")
def kafka_jars():
    missing = kafka_tool.missing_prerequisites()
    if missing:
        msg = f"the Kafka tests need {' and '.join(missing)} on PATH (a JDK 17 and Maven)"
        if _required():
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        t0 = time.perf_counter()
        jars = kafka_tool.fetch()
        TIMINGS["fetch"] = time.perf_counter() - t0
        return jars
    except RuntimeError as e:
        if _required():
            raise
        pytest.skip(
            f"could not fetch the Kafka jars ({kafka_tool.BROKER_ARTIFACT}, {kafka_tool.KAFKA_IO_ARTIFACT}): {e}"
        )


LOCAL = yaml.safe_load((ROOT / "configs" / "kafka_local.yaml").read_text())


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the JVM's server sockets: TIME_WAIT is free
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def kafka(kafka_jars):
    """A broker and a KafkaIO expansion service for the module, where ``configs/kafka_local.yaml`` says they
    listen (127.0.0.1:9092, localhost:8097), so that the test runs that file itself. Ports already taken here
    skip the test (fail it under ``.ci/run``), naming them."""
    ports = [int(LOCAL["source"]["bootstrap_servers"].rsplit(":", 1)[1])]
    ports.append(int(LOCAL["source"]["expansion_service"].rsplit(":", 1)[1]))
    taken = [p for p in ports if not _port_free(p)]
    if taken:
        msg = f"configs/kafka_local.yaml names ports {ports}; {taken} already in use here"
        if _required():
            pytest.fail(msg)
        pytest.skip(msg)
    with (
        kafka_tool.running_broker(kafka_jars, port=ports[0]) as broker,
        kafka_tool.running_expansion_service(kafka_jars, port=ports[1]) as exp,
    ):
        TIMINGS["broker_start"] = broker.startup_seconds
        TIMINGS["expansion_start"] = exp.startup_seconds
        yield broker, exp


def _demo_lines(end: int) -> list[str]:
    """The demo's first ``end`` seconds in time order, plus bad lines (dead letters to compare)."""

    def time_of(line):
        try:
            t = json.loads(line)["time"]
        except (ValueError, KeyError, TypeError):
            return None
        return t if isinstance(t, int | float) else None

    lines = [ln for ln in (ROOT / "data" / "demo.jsonl").read_text().splitlines() if (time_of(ln) or 0) < end]
    lines = [ln for ln in lines if time_of(ln) is not None]
    lines.sort(key=time_of)
    bad = [
        "{not json",
        json.dumps({"time": 50.0, "op": "explode", "id": "x1", "region": "eu", "seq": 0}),
        json.dumps(
            {"time": 60.0, "op": "insert", "id": "x2", "item": {"carrier": "AA", "amount": 1}, "region": "mars"}
        ),
        json.dumps({"time": 70.0, "op": "delete", "id": "never-inserted", "region": "us", "seq": 0}),
    ]
    return bad + lines


def _records(path: pathlib.Path, pattern: str) -> list[str]:
    """The records of the files matching ``pattern`` under ``path``, sorted (none: an empty output)."""
    return sorted(line for f in sorted(path.glob(pattern)) for line in f.read_text().splitlines())


def _watermarks(jars, tmp_path, backlog: int, stamps: list[int]) -> list[tuple[int, int, int, int]]:
    """``tests/java/KafkaWatermarkCheck.java`` against the runner's KafkaIO: per record, (element timestamp,
    watermark after it, the clock before, the clock after), ms."""
    src = ROOT / "tests" / "java" / "KafkaWatermarkCheck.java"
    subprocess.run(["javac", "-cp", str(jars.runner), "-d", str(tmp_path), str(src)], check=True, timeout=120)
    out = subprocess.run(
        ["java", "-cp", f"{jars.runner}{os.pathsep}{tmp_path}", "KafkaWatermarkCheck", str(backlog), *map(str, stamps)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    return [tuple(int(v) for v in line.split()) for line in out.splitlines()]


@pytest.mark.xdist_group("services")  # with test_flink.py and test_pubsub.py: one worker
@pytest.mark.parametrize("backlog", [5, 0])
def test_the_create_time_watermark_never_passes_the_readers_clock(kafka_jars, tmp_path, backlog):
    """The Kafka source's watermark (KafkaIO's ``CreateTime`` policy, ``withCreateTime(Duration.ZERO)``: Beam's
    ``CustomTimestampPolicyWithLimitedDelay``) is the newest record time read, capped at the reader's clock: a
    record stamped ten years ahead keeps its timestamp but moves the watermark to the clock, never past it
    (``docs/kafka.md``). So it cannot make the periods of a live stream close early; in a replay of past records
    it moves the watermark from the replay's time to the present, which makes every later replayed record late.
    Caught up (backlog 0) the watermark is the clock whatever the records say."""
    now = int(time.time() * 1000)
    day, year = 86_400_000, 365 * 86_400_000
    stamps = [now - day, now + 10 * year, now - 3_600_000]
    rows = _watermarks(kafka_jars, tmp_path, backlog, stamps)
    assert [r[0] for r in rows] == stamps  # element timestamps: the records' own
    assert all(wm <= after for _, wm, _, after in rows)  # never past the reader's clock
    if backlog:
        assert rows[0][1] == stamps[0]  # behind: the newest record time read (the data's)
        assert rows[1][2] <= rows[1][1] and rows[2][2] <= rows[2][1]  # after the future record: the clock
    else:
        assert all(before <= wm for _, wm, before, _ in rows)  # caught up: the clock


@pytest.mark.xdist_group("services")  # with test_flink.py and test_pubsub.py: one worker
@pytest.mark.flink
@pytest.mark.slow
def test_kafka_local_config_on_flink_equals_the_bounded_run(kafka, kafka_jars, tmp_path):
    """``configs/kafka_local.yaml`` itself, through the README's command: the demo's first half day (and 4 bad
    lines) published to its topic with event-time timestamps; ``python -m pipelines.release --config
    configs/kafka_local.yaml`` on FlinkRunner (streaming, the Java KafkaIO embedded in the job server); the
    releases, node outputs and dead letters read back from the configuration's topics equal, line for line, a
    DirectRunner bounded run of the same configuration with a file source and sink, the same key and release id:
    every query of both streams at every tick to ``time.end``, each once. The test waits on the data (each topic
    read until the bounded run's count arrived), then interrupts the CLI, which cancels the job, prints its
    summary and exits 0."""
    broker, exp = kafka
    servers, source, sink = broker.bootstrap_servers, LOCAL["source"], LOCAL["sinks"][0]
    end = LOCAL["time"]["end"]  # half a day: 432 releases
    config = "configs/kafka_local.yaml"
    if os.environ.get("DP_DYNAMIC_KAFKA_END"):  # a longer run (issue 30's "Kafka demo day": 86400), by hand
        end = int(os.environ["DP_DYNAMIC_KAFKA_END"])
        longer = json.loads(json.dumps(LOCAL))
        longer["time"]["end"] = end
        config = str(tmp_path / "kafka_longer.yaml")
        pathlib.Path(config).write_text(yaml.safe_dump(longer))
    lines = _demo_lines(end)
    data = tmp_path / "updates.jsonl"
    data.write_text("\n".join(lines) + "\n")
    topics = {"rel": sink["topic"], "nodes": sink["nodes_topic"], "dead": sink["dead_letter_topic"]}
    t0 = time.perf_counter()
    kafka_tool.create_topics(servers, [source["topic"], *topics.values()], jars=kafka_jars)
    assert kafka_tool.publish(servers, source["topic"], str(data), jars=kafka_jars) == len(lines)
    TIMINGS["create_and_publish"] = time.perf_counter() - t0

    direct = json.loads(json.dumps(LOCAL))
    direct["time"]["end"] = end
    direct["source"] = {"type": "file", "path": str(data), "format": "jsonl"}
    direct["sinks"] = [{"type": "file", "path": str(tmp_path / "direct" / "out") + "/"}]
    env = dict(os.environ, DP_NOISE_KEY=KEY_HEX, MPLBACKEND="Agg")
    cmd = [sys.executable, "-m", "pipelines.release", "--release-id", "kafka-cli-test-01"]
    (tmp_path / "direct.yaml").write_text(yaml.safe_dump(direct))
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd + ["--config", str(tmp_path / "direct.yaml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    TIMINGS["cli_direct"] = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    expect = {
        "rel": _records(tmp_path / "direct" / "out", "releases*.jsonl"),
        "nodes": _records(tmp_path / "direct" / "out", "nodes*.jsonl"),
        "dead": _records(tmp_path / "direct" / "out-confidential", "dead_letters*.jsonl"),
    }
    assert len(expect["rel"]) == 2 * 3 * (end // LOCAL["time"]["tick_seconds"]) and len(expect["dead"]) >= 4

    flink = [
        "--runner=FlinkRunner",
        "--flink_master=[local]",
        f"--flink_job_server_jar={kafka_jars.runner}",
        "--environment_type=LOOPBACK",
        "--parallelism=2",
        "--duration=900",  # a ceiling only: the test interrupts the CLI once the outputs are in
    ]
    log = tmp_path / "kafka_cli.log"
    t0 = time.perf_counter()
    with open(log, "w") as out:
        run = subprocess.Popen(cmd + ["--config", config, *flink], cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        got = {}
        for what in ("rel", "nodes", "dead"):
            # the topics fill while the job runs: read until as many records as the bounded run wrote arrived
            # (each read stops there, or after 10 s without a record); then the releases once more: no duplicate
            deadline = time.monotonic() + 420
            records = []
            while len(records) < len(expect[what]) and time.monotonic() < deadline and run.poll() is None:
                records = kafka_tool.consume(servers, topics[what], len(expect[what]), 10, kafka_jars)
            got[what] = sorted(v.decode() for _, v in records)
            TIMINGS[f"kafka_{what}_seen"] = time.perf_counter() - t0
        extra = kafka_tool.consume(servers, topics["rel"], len(expect["rel"]) + 50, 2, kafka_jars)
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)  # the CLI cancels the streaming job and prints its summary
            try:
                run.wait(90)  # the CLI ends a stopped run within 75 s (runner.STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait(10)
    TIMINGS["cli_kafka_flink"] = time.perf_counter() - t0
    text = log.read_text(errors="replace")
    assert "release id: kafka-cli-test-01" in text, text[-3000:]
    assert run.returncode == 0 and "releases written:" in text, text[-3000:]
    assert len(extra) == len(expect["rel"]), "the releases topic holds more records than the bounded run wrote"
    for what in ("rel", "nodes", "dead"):
        assert got[what] == expect[what], f"{what}: {len(got[what])} records on Kafka, {len(expect[what])} expected"


@pytest.mark.xdist_group("services")  # on the worker that ran the Kafka tests: their timings are in its process
def test_report_timings():
    """Prints what the module measured (``-s`` shows it)."""
    if TIMINGS:
        print("\nKafka timings (s): " + ", ".join(f"{k}={v:.1f}" for k, v in sorted(TIMINGS.items())))


def test_fetch_tools_need_only_the_standard_library():
    """``.ci/run`` fetches the Flink and Kafka jars with the system Python, before the venv (and Beam, numpy)
    exist: both tools must import with the standard library alone (``-S``: no site-packages). The Beam
    transforms live in ``pipelines/io/kafka.py``, the process handling (Beam's) in ``pipelines/tools/jvm.py``."""
    proc = subprocess.run(
        [sys.executable, "-S", "-c", "import pipelines.tools.kafka_tool, pipelines.tools.flink_jobserver"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for beam_module in ("pipelines.io.kafka", "pipelines.tools.jvm"):
        proc = subprocess.run([sys.executable, "-S", "-c", f"import {beam_module}"], cwd=ROOT, capture_output=True)
        assert proc.returncode != 0  # the check can fail: Beam is not importable under -S
