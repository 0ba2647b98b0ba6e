"""Kafka for the pipelines on Flink: a local broker, Beam's KafkaIO expansion service, and a topic tool.

Everything comes from Maven Central through Maven (cached in ``~/.m2``; the bundles :data:`BROKER` and
:data:`RUNNER`, ``pipelines/tools/maven.py``), as for the Flink job server (``pipelines.tools.flink_jobserver``),
and no Docker is needed:

* the **broker**: ``org.apache.kafka:kafka_2.13`` (:data:`BROKER_VERSION`), a single-node KRaft broker and
  controller on 127.0.0.1 with a temporary log directory (``kafka.tools.StorageTool format``, then
  ``kafka.Kafka``);
* the **runner**: a second job-server launcher jar, Beam's Flink runner (``beam-runners-flink-1.19:2.62.0``)
  plus ``beam-sdks-java-io-kafka:2.62.0`` and ``kafka-clients`` (:data:`CLIENTS_VERSION`): the Java KafkaIO runs
  inside the embedded Flink, in the runner's own JVM (Beam's ``EMBEDDED`` environment); pass it as
  ``--flink_job_server_jar``;
* the **expansion service**: ``org.apache.beam.sdk.expansion.service.ExpansionService`` from that same class
  path, with ``--defaultEnvironmentType=EMBEDDED`` and ``--experiments=use_deprecated_read`` (KafkaIO's
  unbounded reader: its watermark is the newest record time of each partition and follows the wall clock once a
  partition is caught up; Beam 2.62's splittable Kafka reader read nothing on the embedded Flink here);
* the **topic tool**: ``DpDynamicKafka.java`` (beside this module) over ``kafka-clients``, compiled once.

The broker and the expansion service run on Beam's process helpers (``pipelines/tools/jvm.py``). The Beam
transforms that read and write Kafka are ``pipelines/kafka_io.py``'s.

Command line::

    python -m pipelines.tools.kafka_tool fetch                  # mvn; prints the runner launcher
    python -m pipelines.tools.kafka_tool broker --port 9092     # a local broker until interrupted
    python -m pipelines.tools.kafka_tool expansion --port 8097  # the KafkaIO expansion service until interrupted
    python -m pipelines.tools.kafka_tool create --config CONFIG # the config's source and sink topics
    python -m pipelines.tools.kafka_tool publish --config CONFIG --input FILE.jsonl
    python -m pipelines.tools.kafka_tool consume --config CONFIG [--what releases|nodes|dead_letters] [--out FILE]

``publish`` writes the lines in event-time order, each with its event time (the config's ``time.field``) as
the record's timestamp (CreateTime); it never prints a record. ``consume`` prints releases and node outputs
(already private); dead letters (raw records: confidential operator data) only with ``--what dead_letters``.
``fetch`` (and importing this module) needs the standard library alone: ``.ci/run`` fetches with the system
Python, before the venv exists; ``broker`` and ``expansion`` need Beam, the commands on a configuration the
package.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.tools import backport, maven
from pipelines.tools.flink_jobserver import (
    BEAM_JAVA_VERSION,
    FLINK_VERSION,
    LOGGING_ARTIFACT,
    MAIN_CLASS,
    RUNNER_ARTIFACT,
)

if TYPE_CHECKING:
    from pipelines.tools.jvm import Service

__all__ = [
    "BROKER",
    "RUNNER",
    "Broker",
    "Jars",
    "consume",
    "create_topics",
    "decode_records",
    "encode_records",
    "fetch",
    "missing_prerequisites",
    "publish",
    "running_broker",
    "running_expansion_service",
    "start_broker",
    "start_expansion_service",
]

#: The broker (KRaft, Java 17): the newest ``kafka_2.13`` that resolves with its dependencies from Maven Central.
BROKER_VERSION = "4.4.0"
BROKER_ARTIFACT = f"org.apache.kafka:kafka_2.13:{BROKER_VERSION}"
#: The Kafka client of the Java KafkaIO (Beam 2.62 builds against 2.4; 3.9 is the newest 3.x line, and a 4.x
#: broker serves it).
CLIENTS_VERSION = "3.9.1"
KAFKA_IO_ARTIFACT = f"org.apache.beam:beam-sdks-java-io-kafka:{BEAM_JAVA_VERSION}"
#: The Java SDK harness that runs embedded in the job server needs jamm (a ``provided`` dependency of
#: ``beam-sdks-java-harness``): without it ``FnHarness startup failed`` (``NoClassDefFoundError:
#: org/github/jamm/MemoryMeter``).
RUNNER_EXTRAS = (
    KAFKA_IO_ARTIFACT,
    f"org.apache.kafka:kafka-clients:{CLIENTS_VERSION}",
    "com.github.jbellis:jamm:0.4.0",
)
EXPANSION_MAIN = "org.apache.beam.sdk.expansion.service.ExpansionService"
BROKER_MAIN = "kafka.Kafka"
#: The broker and its launcher (``java -jar``).
BROKER = maven.Bundle("kafka-broker-launcher", BROKER_VERSION, BROKER_MAIN, (BROKER_ARTIFACT, LOGGING_ARTIFACT))
#: The Flink job server with KafkaIO (the launcher is ``--flink_job_server_jar``; the expansion service runs from
#: its class path). ``beam-sdks-java-io-kafka`` depends on Confluent's schema-registry client, which Maven Central
#: does not serve (and which only a Confluent schema registry needs): excluded.
RUNNER = maven.Bundle(
    f"beam-flink-{FLINK_VERSION}-kafka-job-server-launcher",
    BEAM_JAVA_VERSION,
    MAIN_CLASS,
    (RUNNER_ARTIFACT, LOGGING_ARTIFACT, *RUNNER_EXTRAS),
    exclusions=((KAFKA_IO_ARTIFACT, "io.confluent"),),
    backports=(backport.SDF_RESIDUALS,),
)
#: The topic tool's source (compiled into ``~/.m2/repository/dp-dynamic/kafka-tool/DIGEST/``).
TOOL_SOURCE = Path(__file__).with_name("DpDynamicKafka.java")
NO_TIME = -(2**63)  # "no timestamp" in the topic tool's framing (Java's Long.MIN_VALUE)
JVM_HEAP = "-Xmx512m"  # broker and expansion service: small, the machine has 2 cores and other JVMs


def missing_prerequisites() -> list[str]:
    """The tools the Kafka pieces need that are not on ``PATH`` (empty when they can run)."""
    return maven.missing_tools("java", "javac", "mvn")


def _tool_classes(broker_jar: Path) -> Path:
    """The topic tool, compiled once against the broker's kafka-clients (cached beside the launchers)."""
    source = TOOL_SOURCE.read_bytes()
    out = broker_jar.parent.parent.parent / "kafka-tool" / hashlib.sha256(source).hexdigest()[:12]
    if (out / "DpDynamicKafka.class").exists():
        return out
    with tempfile.TemporaryDirectory(prefix="dp-dynamic-kafka-tool-") as tmp:
        classes = Path(tmp, "classes")
        proc = subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", str(broker_jar), str(TOOL_SOURCE)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"javac could not build the Kafka topic tool:\n{proc.stderr[-3000:]}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(classes, out, dirs_exist_ok=True)
    return out


@dataclass(frozen=True)
class Jars:
    """The fetched pieces: the broker's launcher, the runner's launcher (job server + KafkaIO), the topic tool."""

    broker: Path
    runner: Path
    tool: Path


def fetch(repo: Path | None = None) -> Jars:
    """Resolve the broker and the Flink runner with KafkaIO (Maven; cached), build the topic tool."""
    broker = maven.fetch(BROKER, repo, "the Kafka broker")
    runner = maven.fetch(RUNNER, repo, "the Flink runner with KafkaIO")
    return Jars(broker, runner, _tool_classes(broker))


# --- the broker and the expansion service (Beam's process helpers) ------------------------------------------


@dataclass
class Broker:
    """A running single-node KRaft broker on 127.0.0.1 (``service``: the process, on Beam's process helpers; its
    temporary directory goes when it stops)."""

    service: Service
    bootstrap_servers: str
    work_dir: Path
    tool: Path
    jar: Path

    @property
    def startup_seconds(self) -> float:
        return self.service.startup_seconds

    @property
    def log_path(self) -> Path:
        return self.service.log_path

    def stop(self) -> None:
        self.service.stop()


def broker_properties(work_dir: Path, port: int, controller: int) -> str:
    """The ``server.properties`` of a single-node broker + controller on 127.0.0.1."""
    return "".join(
        f"{line}\n"
        for line in (
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{controller}",
            f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={work_dir / 'data'}",
            "log.retention.ms=-1",  # event times may be old (the demo's are in 1970): never expire them
            "num.partitions=1",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
        )
    )


def start_broker(jars: Jars, port: int | None = None, timeout: float = 120.0) -> Broker:
    """Format a temporary log directory and start a broker + controller on ``port`` (default: a free one); returns
    once it accepts connections."""
    from apache_beam.utils.subprocess_server import pick_port

    from pipelines.tools import jvm

    port, controller = pick_port(port, None)
    work = Path(tempfile.mkdtemp(prefix="dp-dynamic-kafka-"))
    props = work / "server.properties"
    props.write_text(broker_properties(work, port, controller), encoding="utf-8")
    cluster_id = "-"
    while cluster_id.startswith("-"):  # a leading "-" would be read by StorageTool as an option (1 time in 64)
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    fmt = subprocess.run(
        [
            "java",
            "-cp",
            str(jars.broker),
            "kafka.tools.StorageTool",
            "format",
            f"--cluster-id={cluster_id}",
            "-c",
            str(props),
        ],
        capture_output=True,
        text=True,
    )
    if fmt.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"kafka StorageTool format failed ({fmt.returncode}):\n{fmt.stdout[-2000:]}{fmt.stderr}")
    address = f"127.0.0.1:{port}"
    cmd = ["java", JVM_HEAP, "-jar", str(jars.broker), str(props)]
    # the broker speaks Kafka, not gRPC: wait until its port accepts connections
    from pipelines.io.kafka import reachable  # the library's check (Beam is loaded by now: jvm.start needs it)

    ready = lambda: reachable(address)
    service = jvm.start(cmd, port, "the Kafka broker", ready=ready, timeout=timeout, temp_dirs=(work,))
    return Broker(service, address, work, jars.tool, jars.broker)


def start_expansion_service(jars: Jars, port: int | None = None) -> Service:
    """``ExpansionService PORT --defaultEnvironmentType=EMBEDDED --experiments=use_deprecated_read`` from the
    runner's class path; returns once it answers (``.address`` is its ``localhost:PORT``)."""
    from apache_beam.utils.subprocess_server import pick_port

    from pipelines.tools import jvm

    (port,) = pick_port(port)
    cmd = [
        "java",
        JVM_HEAP,
        "-cp",
        str(jars.runner),
        EXPANSION_MAIN,
        str(port),
        "--defaultEnvironmentType=EMBEDDED",
        "--experiments=use_deprecated_read",
    ]
    return jvm.start(cmd, port, "the KafkaIO expansion service")


@contextlib.contextmanager
def running_broker(jars: Jars | None = None, **kwargs) -> Iterator[Broker]:
    """:func:`start_broker` as a context manager (fetching first when ``jars`` is not given)."""
    broker = start_broker(jars or fetch(), **kwargs)
    try:
        yield broker
    finally:
        broker.stop()


@contextlib.contextmanager
def running_expansion_service(jars: Jars | None = None, **kwargs) -> Iterator[Service]:
    """:func:`start_expansion_service` as a context manager."""
    service = start_expansion_service(jars or fetch(), **kwargs)
    try:
        yield service
    finally:
        service.stop()


# --- the topic tool ---------------------------------------------------------------------------------------


def _tool(jars: Jars | None, *args: str, stdin: bytes | None = None, timeout: float = 300) -> bytes:
    jars = jars or fetch()
    cp = os.pathsep.join((str(jars.tool), str(jars.broker)))
    proc = subprocess.run(
        ["java", "-cp", cp, "DpDynamicKafka", *args], input=stdin, capture_output=True, timeout=timeout
    )
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace")
        raise RuntimeError(f"kafka {args[0]} failed ({proc.returncode}): {err[-3000:]}")
    return proc.stdout


def create_topics(bootstrap_servers: str, topics, partitions: int = 1, jars: Jars | None = None) -> list[str]:
    """Create ``topics`` (if missing; never-expiring); returns those created."""
    topics = [t for t in dict.fromkeys(topics) if t]
    if not topics:
        return []
    out = _tool(jars, "create", bootstrap_servers, str(partitions), *topics)
    return out.decode().split()


def _timestamp_ms(line: bytes, time_field: str) -> int | None:
    try:
        t = json.loads(line)[time_field]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    if isinstance(t, bool) or not isinstance(t, int | float):
        return None
    try:
        ms = round(float(t) * 1000)
    except (OverflowError, ValueError):
        return None
    return ms if 0 <= ms < 2**62 else None


def encode_records(path: str, time_field: str = "time") -> tuple[int, bytes]:
    """The non-blank lines of ``path`` framed for the topic tool, in event-time order, each with its event time as
    its timestamp (ms); a line without a usable time goes first, at 0, so that it never moves the watermark.
    Returns ``(count, frames)``."""
    records = []
    with open(path, "rb") as fh:
        for n, line in enumerate(fh):
            body = line.rstrip(b"\r\n")
            if not body.strip():
                continue
            ms = _timestamp_ms(body, time_field)
            records.append((0 if ms is None else ms, n, body))
    records.sort(key=lambda r: (r[0], r[1]))
    return len(records), b"".join(struct.pack(">qi", ms, len(body)) + body for ms, _, body in records)


def decode_records(raw: bytes) -> list[tuple[int, bytes]]:
    """``(timestamp ms, value)`` of the records framed in ``raw`` (the topic tool's framing)."""
    out, i = [], 0
    while i < len(raw):
        ts, n = struct.unpack(">qi", raw[i : i + 12])
        out.append((ts, raw[i + 12 : i + 12 + n]))
        i += 12 + n
    return out


def publish(bootstrap_servers: str, topic: str, path: str, time_field: str = "time", jars: Jars | None = None) -> int:
    """Publish the lines of ``path`` to ``topic`` in event-time order, each with its event time as the record's
    timestamp (CreateTime, ms; :func:`encode_records`). Returns the count; never prints a record."""
    _, frames = encode_records(path, time_field)
    out = _tool(jars, "publish", bootstrap_servers, topic, stdin=frames)
    return int(out.decode().strip() or 0)


def consume(
    bootstrap_servers: str,
    topic: str,
    max_records: int = 1_000_000,
    idle_seconds: float = 5.0,
    jars: Jars | None = None,
) -> list[tuple[int, bytes]]:
    """``(timestamp ms, value)`` of the records of ``topic`` from its start, until ``max_records`` were read or
    none arrived for ``idle_seconds``."""
    return decode_records(
        _tool(jars, "consume", bootstrap_servers, topic, str(max_records), str(int(idle_seconds * 1000)))
    )


# --- command line -----------------------------------------------------------------------------------------

WHAT = {"releases": "topic", "nodes": "nodes_topic", "dead_letters": "dead_letter_topic"}


def config_topics(cfg) -> list[tuple[str, str]]:
    """``[(bootstrap servers, topic)]`` of a configuration's Kafka source and sinks."""
    pairs = []
    if cfg.source_type == "kafka":
        pairs.append((cfg.kafka_bootstrap_servers, cfg.kafka_topic))
    for s in cfg.sinks:
        if s.type == "kafka":
            pairs += [(s.bootstrap_servers, t) for t in (s.topic, s.nodes_topic, s.dead_letter_topic) if t]
    return pairs


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m pipelines.tools.kafka_tool", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="resolve the Kafka jars with Maven (cached in ~/.m2); print the runner jar")
    f.add_argument("--what", choices=("runner", "broker"), default="runner")
    b = sub.add_parser("broker", help="run a single-node broker on 127.0.0.1 until interrupted")
    b.add_argument("--port", type=int, default=9092)
    e = sub.add_parser("expansion", help="run the KafkaIO expansion service until interrupted")
    e.add_argument("--port", type=int, default=8097)
    c = sub.add_parser("create", help="create the config's Kafka source and sink topics")
    c.add_argument("--config", required=True)
    c.add_argument("--partitions", type=int, default=1)
    p = sub.add_parser("publish", help="publish a JSON-lines file to the config's source topic")
    p.add_argument("--config", required=True)
    p.add_argument("--input", required=True)
    r = sub.add_parser("consume", help="print (or write) the records of one of the config's sink topics")
    r.add_argument("--config", required=True)
    r.add_argument("--what", choices=tuple(WHAT), default="releases")
    r.add_argument("--out", help="write the records here, one per line (default: standard output)")
    r.add_argument("--max", type=int, default=1_000_000)
    r.add_argument("--idle", type=float, default=5.0, help="stop when nothing arrived for this many seconds")
    return ap


def _serve(args, jars: Jars) -> int:
    if args.command == "broker":
        broker = start_broker(jars, port=args.port)
        what, where, service = "Kafka broker", broker.bootstrap_servers, broker.service
    else:
        service = start_expansion_service(jars, port=args.port)
        what, where = "KafkaIO expansion service", service.address
    print(f"{what} on {where} (started in {service.startup_seconds:.1f} s); log: {service.log_path}", flush=True)
    return service.serve()


def _on_config(args, jars: Jars) -> None:
    # the commands on a configuration need the package's dependencies; fetch runs with the standard library alone
    from pipelines.config import ConfigError, load_config

    cfg = load_config(args.config)
    pairs = config_topics(cfg)
    if args.command == "create":
        if not pairs:
            raise ConfigError("source / sinks: the configuration has no kafka source or sink")
        for srv in dict.fromkeys(s for s, _ in pairs):
            for t in create_topics(srv, [t for s2, t in pairs if s2 == srv], args.partitions, jars):
                print(f"created {t} on {srv}")
    elif args.command == "publish":
        if cfg.source_type != "kafka":
            raise ConfigError("source.type: must be kafka for this tool")
        n = publish(cfg.kafka_bootstrap_servers, cfg.kafka_topic, args.input, cfg.time_field, jars)
        print(f"published {n} records to {cfg.kafka_topic}")
    else:
        key = WHAT[args.what]
        sink = next((s for s in cfg.sinks if s.type == "kafka" and getattr(s, key)), None)
        if sink is None:
            raise ConfigError(f"sinks: no kafka sink with a {key} to consume {args.what} from")
        records = consume(sink.bootstrap_servers, getattr(sink, key), args.max, args.idle, jars)
        out = open(args.out, "wb") if args.out else sys.stdout.buffer  # noqa: SIM115
        try:
            for _, value in records:
                out.write(value + b"\n")
        finally:
            if args.out:
                out.close()
        print(f"{len(records)} records from {getattr(sink, key)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        jars = fetch()
        if args.command == "fetch":
            print(jars.runner if args.what == "runner" else jars.broker)
            return 0
        if args.command in ("broker", "expansion"):
            return _serve(args, jars)
        from pipelines.config import ConfigError

        try:
            _on_config(args, jars)
        except ConfigError as err:
            print(f"configuration error: {err}", file=sys.stderr)
            return 2
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
