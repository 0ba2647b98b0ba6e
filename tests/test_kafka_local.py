"""``configs/kafka_local.yaml`` through the README's own command, against a local Kafka broker on an embedded
Flink (Kafka runs on Flink only: Beam's KafkaIO is a Java transform; ``docs/kafka.md``).

The broker and the KafkaIO expansion service listen where the configuration says (127.0.0.1:9092 and
localhost:8097), started here with ``pipelines.tools.kafka_tool``. The test skips, naming what is missing, without java,
javac or mvn, when the jars cannot be fetched, or when those ports are taken; with ``DP_DYNAMIC_KAFKA_JAR`` set
(``.ci/run`` sets it after fetching) a missing piece is a failure instead.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipelines.tools import kafka_tool

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "configs" / "kafka_local.yaml").read_text())
KEY_HEX = bytes(range(32)).hex()


def _required() -> bool:
    return bool(os.environ.get("DP_DYNAMIC_KAFKA_JAR"))


def _skip(message: str):
    if _required():
        pytest.fail(message)
    pytest.skip(message)


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the JVM's server sockets: TIME_WAIT is free
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def services():
    missing = kafka_tool.missing_prerequisites()
    if missing:
        _skip(f"configs/kafka_local.yaml needs {' and '.join(missing)} on PATH (a JDK 17 and Maven)")
    servers = CONFIG["source"]["bootstrap_servers"]
    expansion = CONFIG["source"]["expansion_service"]
    ports = [int(servers.rsplit(":", 1)[1]), int(expansion.rsplit(":", 1)[1])]
    taken = [p for p in ports if not _port_free(p)]
    if taken:
        _skip(f"configs/kafka_local.yaml names ports {ports}; {taken} already in use here")
    try:
        jars = kafka_tool.fetch()
    except RuntimeError as e:
        _skip(f"could not fetch the Kafka jars ({kafka_tool.BROKER_ARTIFACT}, {kafka_tool.KAFKA_IO_ARTIFACT}): {e}")
    with (
        kafka_tool.running_broker(jars, port=ports[0]) as broker,
        kafka_tool.running_expansion_service(jars, port=ports[1]),
    ):
        yield jars, broker.bootstrap_servers


def _before(line: str, end: float) -> bool:
    """A demo line before ``end`` (its bad lines too: they become dead letters)."""
    try:
        return float(json.loads(line)["time"]) < end
    except (ValueError, KeyError, TypeError):
        return True


@pytest.mark.flink
@pytest.mark.slow
def test_kafka_local_config_runs_through_the_readme_command(services, tmp_path):
    """The demo's first half day published to the configuration's topic; ``python -m pipelines.release --config
    configs/kafka_local.yaml`` on FlinkRunner releases every query of both streams at every tick to
    ``time.end`` on the releases topic (each once), and exits 0 when its ``--duration`` is over (its summary
    printed)."""
    jars, servers = services
    sink = CONFIG["sinks"][0]
    topics = [CONFIG["source"]["topic"], sink["topic"], sink["nodes_topic"], sink["dead_letter_topic"]]
    kafka_tool.create_topics(servers, topics, jars=jars)
    end = CONFIG["time"]["end"]
    lines = [ln for ln in (ROOT / "data" / "demo.jsonl").read_text().splitlines() if _before(ln, end)]
    data = tmp_path / "updates.jsonl"
    data.write_text("\n".join(lines) + "\n")
    assert kafka_tool.publish(servers, CONFIG["source"]["topic"], str(data), jars=jars) == len(lines)
    expected = 2 * 3 * (end // CONFIG["time"]["tick_seconds"])
    for folder in ("configs", "data"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    command = [
        sys.executable,
        "-m",
        "pipelines.release",
        "--config",
        "configs/kafka_local.yaml",
        "--runner=FlinkRunner",
        "--flink_master=[local]",
        f"--flink_job_server_jar={jars.runner}",
        "--environment_type=LOOPBACK",
        "--parallelism=2",
        "--duration=200",  # then the CLI cancels the job, prints its summary and exits (0)
    ]
    log = tmp_path / "cli.log"
    env = dict(os.environ, DP_NOISE_KEY=KEY_HEX)
    with open(log, "w") as out:
        run = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=out, stderr=out)
    try:
        run.wait(600)  # the job's start (a minute or more on the shared cores), --duration, the summary
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGINT)
            try:
                run.wait(60)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait(10)
    records = kafka_tool.consume(servers, sink["topic"], expected + 50, 5, jars)
    text = log.read_text(errors="replace")
    assert run.returncode == 0, text[-3000:]
    assert "releases written:" in text, text[-3000:]
    releases = [json.loads(v) for _, v in records]
    ticks = {(r["stream"], r["tick"], r["query"]) for r in releases}
    assert len(ticks) == len(releases) == expected, (len(ticks), len(releases), expected, text[-2000:])
    assert {r["tick"] for r in releases} == set(range(1, end // CONFIG["time"]["tick_seconds"] + 1))
