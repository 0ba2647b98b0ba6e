"""Kafka for the pipelines on Flink: a local broker, Beam's KafkaIO expansion service, and the KafkaIO transforms.

Everything comes from Maven Central through ``mvn dependency:build-classpath`` (cached in ``~/.m2``), as for the
Flink job server (``pipelines.flink_jobserver``), and no Docker is needed:

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
  partition is caught up; Beam 2.62's splittable Kafka reader read nothing on the embedded Flink here).

Python's ``apache_beam.io.kafka.ReadFromKafka`` of newer releases (2.77) sends configuration fields that the
2.62 expansion does not know (``dynamic_read_poll_interval_seconds`` first: ``The configuration class ... is
missing a setter setDynamicReadPollIntervalSeconds``), so ``pipelines.kafka_io.ReadKafkaRecords`` sends the 2.62
schema itself, whatever the SDK (``setup.py`` pins 2.62.0); ``WriteToKafka``'s schema is the same in both.

Command line::

    python -m pipelines.kafka_tool fetch                  # mvn; prints the runner launcher (--flink_job_server_jar)
    python -m pipelines.kafka_tool broker --port 9092     # a local broker until interrupted
    python -m pipelines.kafka_tool expansion --port 8097  # the KafkaIO expansion service until interrupted
    python -m pipelines.kafka_tool create --config CONFIG # the config's source and sink topics
    python -m pipelines.kafka_tool publish --config CONFIG --input FILE.jsonl
    python -m pipelines.kafka_tool consume --config CONFIG [--what releases|nodes|dead_letters] [--out FILE]

``publish`` writes the lines in event-time order, each with its event time (the config's ``time.field``) as
the record's timestamp (CreateTime); it never prints a record. ``consume`` prints releases and node outputs
(already private); dead letters (raw records: confidential operator data) only with ``--what dead_letters``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipelines.flink_jobserver import (
    BEAM_JAVA_VERSION,
    FLINK_VERSION,
    LOGGING_ARTIFACT,
    RUNNER_ARTIFACT,
    build_launcher,
    free_port,
    m2_repository,
)

__all__ = [
    "Broker",
    "ExpansionService",
    "consume",
    "create_topics",
    "fetch",
    "missing_prerequisites",
    "publish",
    "reachable",
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
#: ``beam-sdks-java-io-kafka`` depends on Confluent's schema-registry client, which Maven Central does not serve
#: (and which only a Confluent schema registry needs): excluded.
EXCLUDED_GROUPS = {KAFKA_IO_ARTIFACT: ("io.confluent",)}
FLINK_MAIN = "org.apache.beam.runners.flink.FlinkJobServerDriver"
EXPANSION_MAIN = "org.apache.beam.sdk.expansion.service.ExpansionService"
BROKER_MAIN = "kafka.Kafka"
BYTES = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
BYTES_OUT = "org.apache.kafka.common.serialization.ByteArraySerializer"
_NO_TIME = -(2**63)  # "no timestamp" in the helper's framing (Java's Long.MIN_VALUE)
JVM_HEAP = "-Xmx512m"  # broker and expansion service: small, the machine has 2 cores and other JVMs


def missing_prerequisites() -> list[str]:
    """The tools the Kafka pieces need that are not on ``PATH`` (empty when they can run)."""
    return [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]


def _launcher(name: str, version: str, repo: Path) -> Path:
    return repo / "dp-dynamic" / name / version / f"{name}-{version}.jar"


def broker_launcher_path(repo: Path | None = None) -> Path:
    """Where the broker's launcher jar is cached (inside the local Maven repository)."""
    return _launcher("kafka-broker-launcher", BROKER_VERSION, repo or m2_repository())


def runner_launcher_path(repo: Path | None = None) -> Path:
    """Where the Flink-with-KafkaIO job server launcher jar is cached."""
    return _launcher(
        f"beam-flink-{FLINK_VERSION}-kafka-job-server-launcher", BEAM_JAVA_VERSION, repo or m2_repository()
    )


def _pom(artifacts) -> str:
    deps = []
    for coords in artifacts:
        group, artifact, version = coords.split(":")
        excl = "".join(
            f"<exclusion><groupId>{g}</groupId><artifactId>*</artifactId></exclusion>"
            for g in EXCLUDED_GROUPS.get(coords, ())
        )
        deps.append(
            f"<dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{version}</version>"
            + (f"<exclusions>{excl}</exclusions>" if excl else "")
            + "</dependency>"
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
        "<groupId>dp-dynamic</groupId><artifactId>kafka-launcher</artifactId><version>1</version>"
        f"<packaging>pom</packaging><dependencies>{''.join(deps)}</dependencies></project>\n"
    )


def _build_launcher(target: Path, main_class: str, artifacts, repo: Path) -> Path:
    """Resolve ``artifacts`` with Maven and write a launcher jar whose manifest names ``main_class`` and them."""
    return build_launcher(target, main_class, _pom(artifacts), ", ".join(artifacts), repo, "the Kafka jars")


# The topic tool: create, publish, consume with kafka-clients (no Python Kafka client is needed). Records cross
# stdin/stdout framed as int64 timestamp ms (Long.MIN_VALUE: none), int32 length, bytes; never printed.
_TOOL_SOURCE = r"""
import java.io.*;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.*;

public class DpDynamicKafka {
  public static void main(String[] a) throws Exception {
    String cmd = a[0];
    Properties p = new Properties();
    p.put("bootstrap.servers", a[1]);
    if (cmd.equals("create")) {
      int partitions = Integer.parseInt(a[2]);
      try (Admin admin = Admin.create(p)) {
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 3; i < a.length; i++) {
          topics.add(new NewTopic(a[i], partitions, (short) 1).configs(Map.of("retention.ms", "-1")));
        }
        Map<String, org.apache.kafka.common.KafkaFuture<Void>> made = admin.createTopics(topics).values();
        for (Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> e : made.entrySet()) {
          try { e.getValue().get(); System.out.println(e.getKey()); }
          catch (java.util.concurrent.ExecutionException x) {
            if (!(x.getCause() instanceof TopicExistsException)) throw x;
          }
        }
      }
    } else if (cmd.equals("publish")) {
      p.put("acks", "all");
      p.put("enable.idempotence", "true");
      DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
      long n = 0;
      ByteArraySerializer ser = new ByteArraySerializer();
      try (Producer<byte[], byte[]> prod = new KafkaProducer<>(p, ser, ser)) {
        while (true) {
          long ts;
          try { ts = in.readLong(); } catch (EOFException e) { break; }
          byte[] value = new byte[in.readInt()];
          in.readFully(value);
          prod.send(new ProducerRecord<>(a[2], null, ts == Long.MIN_VALUE ? null : ts, null, value));
          n++;
        }
        prod.flush();
      }
      System.out.println(n);
    } else if (cmd.equals("consume")) {
      long max = Long.parseLong(a[3]);
      long idleMs = Long.parseLong(a[4]);
      p.put("enable.auto.commit", "false");
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out));
      ByteArrayDeserializer de = new ByteArrayDeserializer();
      try (Consumer<byte[], byte[]> c = new KafkaConsumer<>(p, de, de)) {
        List<TopicPartition> parts = new ArrayList<>();
        c.partitionsFor(a[2], Duration.ofSeconds(30)).forEach(i -> parts.add(new TopicPartition(a[2], i.partition())));
        c.assign(parts);
        c.seekToBeginning(parts);
        long n = 0, last = System.currentTimeMillis();
        while (n < max && System.currentTimeMillis() - last < idleMs) {
          ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
          if (!rs.isEmpty()) last = System.currentTimeMillis();
          for (ConsumerRecord<byte[], byte[]> r : rs) {
            byte[] v = r.value() == null ? new byte[0] : r.value();
            out.writeLong(r.timestamp());
            out.writeInt(v.length);
            out.write(v);
            n++;
          }
        }
      }
      out.flush();
    } else {
      throw new IllegalArgumentException("unknown command " + cmd);
    }
  }
}
"""


def _tool_classes(broker_jar: Path) -> Path:
    """The topic tool, compiled once against the broker's kafka-clients (cached beside the launchers)."""
    digest = hashlib.sha256(_TOOL_SOURCE.encode()).hexdigest()[:12]
    out = broker_jar.parent.parent.parent / "kafka-tool" / digest
    if (out / "DpDynamicKafka.class").exists():
        return out
    with tempfile.TemporaryDirectory(prefix="dp-dynamic-kafka-tool-") as tmp:
        src = Path(tmp, "DpDynamicKafka.java")
        src.write_text(_TOOL_SOURCE, encoding="utf-8")
        classes = Path(tmp, "classes")
        proc = subprocess.run(
            ["javac", "-nowarn", "-d", str(classes), "-cp", str(broker_jar), str(src)], capture_output=True, text=True
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
    repo = repo or m2_repository()
    broker = _build_launcher(broker_launcher_path(repo), BROKER_MAIN, (BROKER_ARTIFACT, LOGGING_ARTIFACT), repo)
    runner = _build_launcher(
        runner_launcher_path(repo), FLINK_MAIN, (RUNNER_ARTIFACT, LOGGING_ARTIFACT, *RUNNER_EXTRAS), repo
    )
    return Jars(broker, runner, _tool_classes(broker))


def _wait_listening(proc: subprocess.Popen, port: int, timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-4000:]}")
        if reachable(f"127.0.0.1:{port}"):
            return
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(10)
            raise RuntimeError(f"{what} did not listen on {port} in {timeout:.0f} s")
        time.sleep(0.2)


def reachable(address: str, timeout: float = 1.0) -> bool:
    """Whether ``host:port`` accepts a TCP connection."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout).close()
        return True
    except (OSError, ValueError):
        return False


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@dataclass
class Broker:
    """A running single-node KRaft broker on 127.0.0.1."""

    process: subprocess.Popen
    bootstrap_servers: str
    log_dir: Path
    log_path: Path
    startup_seconds: float
    tool: Path
    jar: Path

    def stop(self) -> None:
        _stop(self.process)
        shutil.rmtree(self.log_dir, ignore_errors=True)


def start_broker(jars: Jars, port: int | None = None, timeout: float = 120.0) -> Broker:
    """Format a temporary log directory and start a broker + controller on ``port`` (default: a free one)."""
    port = port or free_port()
    controller = free_port()
    work = Path(tempfile.mkdtemp(prefix="dp-dynamic-kafka-"))
    props = work / "server.properties"
    props.write_text(
        "\n".join(
            (
                "process.roles=broker,controller",
                "node.id=1",
                f"controller.quorum.voters=1@127.0.0.1:{controller}",
                f"listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}",
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{port}",
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                f"log.dirs={work / 'data'}",
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
        + "\n",
        encoding="utf-8",
    )
    log_path = work / "broker.log"
    cluster_id = uuid.uuid4().bytes
    import base64

    cid = base64.urlsafe_b64encode(cluster_id).decode().rstrip("=")
    t0 = time.perf_counter()
    fmt = subprocess.run(
        ["java", "-cp", str(jars.broker), "kafka.tools.StorageTool", "format", "-t", cid, "-c", str(props)],
        capture_output=True,
        text=True,
    )
    if fmt.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"kafka StorageTool format failed ({fmt.returncode}):\n{fmt.stdout[-2000:]}{fmt.stderr}")
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - owned by the process for its life
    proc = subprocess.Popen(["java", JVM_HEAP, "-jar", str(jars.broker), str(props)], stdout=log, stderr=log)
    try:
        _wait_listening(proc, port, timeout, "the Kafka broker", log_path)
    except RuntimeError:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Broker(proc, f"127.0.0.1:{port}", work, log_path, time.perf_counter() - t0, jars.tool, jars.broker)


@dataclass
class ExpansionService:
    """A running Java expansion service with KafkaIO (EMBEDDED environment, KafkaIO's unbounded reader)."""

    process: subprocess.Popen
    address: str
    log_path: Path
    startup_seconds: float

    def stop(self) -> None:
        _stop(self.process)


def start_expansion_service(jars: Jars, port: int | None = None, timeout: float = 120.0) -> ExpansionService:
    """``ExpansionService PORT --defaultEnvironmentType=EMBEDDED --experiments=use_deprecated_read``."""
    port = port or free_port()
    log_path = Path(tempfile.mkstemp(prefix="dp-dynamic-kafka-expansion-", suffix=".log")[1])
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
    t0 = time.perf_counter()
    log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - owned by the process for its life
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    _wait_listening(proc, port, timeout, "the KafkaIO expansion service", log_path)
    return ExpansionService(proc, f"localhost:{port}", log_path, time.perf_counter() - t0)


@contextlib.contextmanager
def running_broker(jars: Jars | None = None, **kwargs) -> Iterator[Broker]:
    """:func:`start_broker` as a context manager (fetching first when ``jars`` is not given)."""
    broker = start_broker(jars or fetch(), **kwargs)
    try:
        yield broker
    finally:
        broker.stop()


@contextlib.contextmanager
def running_expansion_service(jars: Jars | None = None, **kwargs) -> Iterator[ExpansionService]:
    """:func:`start_expansion_service` as a context manager."""
    service = start_expansion_service(jars or fetch(), **kwargs)
    try:
        yield service
    finally:
        service.stop()


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


def publish(bootstrap_servers: str, topic: str, path: str, time_field: str = "time", jars: Jars | None = None) -> int:
    """Publish the lines of ``path`` to ``topic`` in event-time order, each with its event time as the record's
    timestamp (CreateTime, ms). A line without a usable time (a future dead letter) goes first, with timestamp
    0, so that it never moves the watermark. Returns the count; never prints a record."""
    records = []
    with open(path, "rb") as fh:
        for n, line in enumerate(fh):
            body = line.rstrip(b"\r\n")
            if not body.strip():
                continue
            ms = _timestamp_ms(body, time_field)
            records.append((0 if ms is None else ms, n, body))
    records.sort(key=lambda r: (r[0], r[1]))
    frames = b"".join(struct.pack(">qi", ms, len(body)) + body for ms, _, body in records)
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
    raw = _tool(jars, "consume", bootstrap_servers, topic, str(max_records), str(int(idle_seconds * 1000)))
    out, i = [], 0
    while i < len(raw):
        ts, n = struct.unpack(">qi", raw[i : i + 12])
        out.append((ts, raw[i + 12 : i + 12 + n]))
        i += 12 + n
    return out


# --- the Beam transforms (cross-language, through the expansion service) -----------------------------------


# --- command line -----------------------------------------------------------------------------------------

WHAT = {"releases": "topic", "nodes": "nodes_topic", "dead_letters": "dead_letter_topic"}


def _config_topics(cfg) -> tuple[str | None, list[tuple[str, str]]]:
    """``(bootstrap servers, [(servers, topic)])`` of a config's Kafka source and sinks."""
    pairs = []
    if cfg.source_type == "kafka":
        pairs.append((cfg.kafka_bootstrap_servers, cfg.kafka_topic))
    for s in cfg.sinks:
        if s.type == "kafka":
            pairs += [(s.bootstrap_servers, t) for t in (s.topic, s.nodes_topic, s.dead_letter_topic) if t]
    return (pairs[0][0] if pairs else None), pairs


def _serve(start, jars: Jars, port: int, what: str) -> int:
    server = start(jars, port=port)
    where = getattr(server, "bootstrap_servers", None) or server.address
    print(f"{what} on {where} (started in {server.startup_seconds:.1f} s); log: {server.log_path}", flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.kafka_tool", description=__doc__.split("\n\n")[0])
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
    args = ap.parse_args(argv)
    try:
        jars = fetch()
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.command == "fetch":
        print(jars.runner if args.what == "runner" else jars.broker)
        return 0
    if args.command == "broker":
        return _serve(start_broker, jars, args.port, "Kafka broker")
    if args.command == "expansion":
        return _serve(start_expansion_service, jars, args.port, "KafkaIO expansion service")
    # the commands on a configuration need the package's dependencies; fetch, broker and expansion run with the
    # standard library alone (.ci/run fetches with the system Python, before the venv exists)
    from pipelines.config import ConfigError, load_config

    try:
        cfg = load_config(args.config)
        _, pairs = _config_topics(cfg)
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
    except ConfigError as err:
        print(f"configuration error: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
