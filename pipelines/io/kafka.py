"""Kafka: ``source: {type: kafka}`` and the kafka sink, Beam's Java KafkaIO 2.62 through an expansion service
(``pipelines.tools.kafka_tool`` starts it and the broker; ``docs/kafka.md``). A Java transform: Flink (or another
portable runner) runs it, the Python DirectRunner does not.

``ReadKafkaRecords`` and ``WriteKafkaJson`` are the Beam transforms; :class:`KafkaSource` and :class:`KafkaSink`
their configuration, launch checks and wiring. The tool (``kafka_tool``: fetch, broker, topics) runs with the
standard library alone, before Beam is installed, so it is not imported here.
"""

from __future__ import annotations

import json
import re
import socket
import typing
from typing import Annotated, ClassVar, Literal

import apache_beam as beam
import numpy as np
from pydantic import BeforeValidator

from pipelines.io.base import OUTPUTS, PUBLIC_SCHEDULE, DeduplicateFn, Elements, Fraction, Sink, Source
from pipelines.model import ConfigError, choice, integer, issue, number, span

__all__ = [
    "KafkaSource",
    "KafkaSink",
    "READ_WITH_METADATA",
    "ReadFromKafka262Schema",
    "ReadKafkaRecords",
    "WriteKafkaJson",
    "reachable",
]

BYTES = "org.apache.kafka.common.serialization.ByteArrayDeserializer"
BYTES_OUT = "org.apache.kafka.common.serialization.ByteArraySerializer"
_KAFKA_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")  # Kafka's legal topic names
_HOST_PORT = re.compile(r"^[A-Za-z0-9.\-]+:[0-9]{1,5}$|^\[[0-9A-Fa-f:]+\]:[0-9]{1,5}$")
_SERVERS = "host:port of the brokers, comma-separated (e.g. 127.0.0.1:9092)"
_EXPANSION = (
    "host:port of the KafkaIO expansion service (python -m pipelines.tools.kafka_tool expansion; Beam's default "
    "would download a jar that Maven Central does not serve for this runner, docs/kafka.md)"
)


def reachable(address: str, timeout: float = 1.0) -> bool:
    """Whether ``host:port`` accepts a TCP connection."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout).close()
        return True
    except (OSError, ValueError):
        return False


def _address(what: str, one: bool = False):
    def check(value) -> str:
        if not isinstance(value, str) or not all(_HOST_PORT.match(a.strip()) for a in value.split(",")):
            raise issue(f"must be {what}; got {value!r}")
        value = ",".join(a.strip() for a in value.split(","))
        if one and "," in value:
            raise issue(f"must be one host:port; got {value!r}")
        return value

    return BeforeValidator(check)


def _topic(value) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not _KAFKA_TOPIC.match(value) or value in (".", ".."):
        raise issue(f"must be a Kafka topic name (1 to 249 of A-Z a-z 0-9 . _ -); got {value!r}")
    return value


Servers = Annotated[str, _address(_SERVERS)]
Expansion = Annotated[str, _address(_EXPANSION, one=True)]
Topic = Annotated[str, BeforeValidator(_topic)]


def _consumer_config(value) -> tuple:
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise issue(f"must be a mapping such as {{group.id: dp-dynamic}}; got {value!r}")
    for key, v in value.items():
        if not isinstance(key, str) or isinstance(v, (dict, list)) or v is None:
            raise issue(f"Kafka consumer properties (name: value); got {key!r}: {v!r}")
        if key in ("bootstrap.servers", "key.deserializer", "value.deserializer"):
            raise issue(
                "set by the pipeline (bootstrap.servers from source.bootstrap_servers; records are read as bytes); "
                "remove it",
                key,
            )
    return tuple(sorted((str(k), str(v)) for k, v in value.items()))


def _runner_runs_java(runner: str, key: str) -> None:
    if not any(r in runner for r in ("Flink", "Portable", "Dataflow")):
        raise ConfigError(
            f"{key}: Kafka (Beam's cross-language KafkaIO) needs a runner that runs Java transforms, in streaming "
            "mode: FlinkRunner (--flink_job_server_jar from python -m pipelines.tools.kafka_tool fetch) or "
            f"PortableRunner; got {runner} (docs/kafka.md)"
        )


def _check_services(key: str, expansion: str, servers: str, local: bool) -> None:
    """A Kafka source or sink is expanded while the pipeline is built: its expansion service must answer now; on
    a local runner (an embedded Flink) its brokers must be reachable from here too."""
    if not reachable(expansion):
        raise ConfigError(
            f"{key}.expansion_service: nothing answers at {expansion}; start the KafkaIO expansion service "
            "first (python -m pipelines.tools.kafka_tool expansion --port PORT, docs/kafka.md)"
        )
    if local and not any(reachable(a) for a in servers.split(",")):
        raise ConfigError(f"{key}.bootstrap_servers: no Kafka broker answers at {servers}")


class KafkaSource(Source):
    """``{type: kafka, bootstrap_servers, topic, expansion_service, consumer_config, max_records, dedup_seconds,
    max_dead_letter_fraction}``: JSON-lines records of one Kafka topic, read by the Java KafkaIO through an
    expansion service; streaming, so ``time.origin`` is required and ``time.end`` optional, as for Pub/Sub. A
    record the reader delivers twice (same partition and offset) is dropped, as a Pub/Sub redelivery is."""

    EXAMPLE: ClassVar[str] = "{type: kafka, bootstrap_servers: 127.0.0.1:9092, topic: T, expansion_service: H:P}"
    DEDUPLICATES: ClassVar[bool] = True

    type: Literal["kafka"]
    bootstrap_servers: Servers
    topic: Topic
    expansion_service: Expansion
    format: Annotated[Literal["jsonl"], BeforeValidator(lambda v: choice(v, ("jsonl",)))] = "jsonl"
    consumer_config: Annotated[tuple[tuple[str, str], ...], BeforeValidator(_consumer_config)] = ()
    max_records: Annotated[
        int | None, BeforeValidator(lambda v: integer(v, "an integer >= 1 (stop after that many records)"))
    ] = None
    dedup_seconds: Annotated[float, BeforeValidator(lambda v: span(number(v, positive=True)))] = 600.0
    max_dead_letter_fraction: Fraction = 1.0

    def check_config(self, cfg) -> None:
        self.require_origin(cfg, PUBLIC_SCHEDULE)

    def check_launch(self, cfg, local: bool, required: tuple | None = None) -> None:
        _check_services("source", self.expansion_service, self.bootstrap_servers, local)

    def check_runner(self, runner: str) -> None:
        _runner_runs_java(runner, "source.type / sinks")

    def read(self, p, cfg) -> Elements:
        elements = (
            p
            | "ReadKafka"
            >> ReadKafkaRecords(
                self.bootstrap_servers,
                [self.topic],
                self.expansion_service,
                dict(self.consumer_config),
                self.max_records,
            )
            | "Deduplicate" >> beam.ParDo(DeduplicateFn(self.dedup_seconds))
        )
        return Elements(elements)


class KafkaSink(Sink):
    """``{type: kafka, bootstrap_servers, expansion_service, topic, nodes_topic, dead_letter_topic}``: one JSON
    document per record, as the pubsub sink publishes them."""

    type: Literal["kafka"]
    bootstrap_servers: Servers
    expansion_service: Expansion
    topic: Topic
    nodes_topic: Topic | None = None
    dead_letter_topic: Topic | None = None

    answers_topic: ClassVar[None] = None
    path: ClassVar[None] = None

    def check_config(self, cfg, index: int) -> None:
        if cfg.privacy.disable_noise:
            raise issue(
                "privacy.disable_noise releases exact, non-private answers and is for tests only; it refuses "
                "kafka sinks (use a file sink, or turn disable_noise off)",
                f"sinks[{index}].type",
            )

    def check_launch(self, cfg, index: int, local: bool) -> None:
        _check_services(f"sinks[{index}]", self.expansion_service, self.bootstrap_servers, local)

    def check_runner(self, runner: str, index: int) -> None:
        _runner_runs_java(runner, "source.type / sinks")

    def write(self, records, output: str, *, label: str, streaming: bool, schema: str | None) -> str | None:
        where = getattr(self, OUTPUTS[output][1])
        records | f"Kafka{label}" >> WriteKafkaJson(self.bootstrap_servers, where, self.expansion_service)
        return f"kafka:{where}"


#: The configuration of ``beam:transform:org.apache.beam:kafka_read_with_metadata:v1`` as Beam 2.62's
#: ``KafkaIO.Read.External.Configuration`` has setters for it (Python 2.77 adds three fields that 2.62 refuses;
#: with the SDK pinned at 2.62 this is what its ReadFromKafka sends, kept explicit so the read does not move with it).
# (the functional form: this module's postponed annotations would reach Beam's schema inference as strings)
ReadFromKafka262Schema = typing.NamedTuple(  # noqa: UP014
    "ReadFromKafka262Schema",
    [
        ("consumer_config", typing.Mapping[str, str]),
        ("topics", list[str]),
        ("key_deserializer", str),
        ("value_deserializer", str),
        ("start_read_time", typing.Optional[int]),  # noqa: UP045
        ("stop_read_time", typing.Optional[int]),  # noqa: UP045
        ("max_num_records", typing.Optional[int]),  # noqa: UP045
        ("max_read_time", typing.Optional[int]),  # noqa: UP045
        ("commit_offset_in_finalize", bool),
        ("timestamp_policy", str),
        ("consumer_polling_timeout", typing.Optional[int]),  # noqa: UP045
        ("redistribute", typing.Optional[bool]),  # noqa: UP045
        ("redistribute_num_keys", typing.Optional[np.int32]),  # noqa: UP045
        ("allow_duplicates", typing.Optional[bool]),  # noqa: UP045
    ],
)
READ_WITH_METADATA = "beam:transform:org.apache.beam:kafka_read_with_metadata:v1"


def _record_key(row) -> tuple[str, bytes]:
    """A Kafka record (a row with its metadata) -> ``(topic:partition:offset, value)``: the offset names the
    record, so a record the reader delivers twice is dropped downstream (``_DeduplicateFn``)."""
    value = row.value
    return (f"k:{row.topic}:{row.partition}:{row.offset}", bytes(value) if value is not None else b"")


class ReadKafkaRecords(beam.PTransform):
    """The records of Kafka ``topics`` as ``(record id, value bytes)``, stamped with the record's timestamp.

    The Java ``KafkaIO`` read (``CreateTime`` policy: the element timestamp is the record's timestamp, the
    watermark of a partition the newest record timestamp read from it, and the wall clock once the reader has
    caught up with the partition), expanded by ``expansion_service`` (``host:port``). ``max_records``: stop after
    that many records (a bounded read). The record id is ``k:topic:partition:offset``.
    """

    def __init__(
        self,
        bootstrap_servers: str,
        topics: list[str],
        expansion_service: str,
        consumer_config: dict | None = None,
        max_records: int | None = None,
    ):
        super().__init__()
        config = {"bootstrap.servers": bootstrap_servers, "auto.offset.reset": "earliest"}
        config.update({str(k): str(v) for k, v in (consumer_config or {}).items()})
        self.payload = ReadFromKafka262Schema(
            consumer_config=config,
            topics=list(topics),
            key_deserializer=BYTES,
            value_deserializer=BYTES,
            start_read_time=None,
            stop_read_time=None,
            max_num_records=max_records,
            max_read_time=None,
            commit_offset_in_finalize=False,
            timestamp_policy="CreateTime",
            consumer_polling_timeout=2,
            redistribute=False,
            redistribute_num_keys=np.int32(0),
            allow_duplicates=False,
        )
        self.expansion_service = expansion_service

    def expand(self, pbegin):
        from apache_beam.transforms.external import ExternalTransform, NamedTupleBasedPayloadBuilder

        rows = pbegin | "KafkaIO" >> ExternalTransform(
            READ_WITH_METADATA, NamedTupleBasedPayloadBuilder(self.payload), self.expansion_service
        )
        return rows | "RecordId" >> beam.Map(_record_key).with_output_types(tuple[str, bytes])


class WriteKafkaJson(beam.PTransform):
    """Dicts to a Kafka topic, one JSON document per record (the key: the dict's ``stream``, else empty)."""

    def __init__(self, bootstrap_servers: str, topic: str, expansion_service: str):
        super().__init__()
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.expansion_service = expansion_service

    def expand(self, pcoll):
        from apache_beam.io.kafka import WriteToKafka

        def to_kv(d: dict) -> tuple[bytes, bytes]:
            stream = d.get("stream")
            return ((stream if isinstance(stream, str) else "").encode(), json.dumps(d).encode())

        return (
            pcoll
            | "ToRecord" >> beam.Map(to_kv).with_output_types(tuple[bytes, bytes])
            | "KafkaIO"
            >> WriteToKafka(
                producer_config={"bootstrap.servers": self.bootstrap_servers},
                topic=self.topic,
                key_serializer=BYTES_OUT,
                value_serializer=BYTES_OUT,
                expansion_service=self.expansion_service,
            )
        )
