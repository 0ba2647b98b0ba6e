"""Beam transforms for Kafka on Flink: ``ReadKafkaRecords`` and ``WriteKafkaJson``, Beam's Java KafkaIO 2.62
through an expansion service (``pipelines/kafka_tool.py`` starts it; ``docs/kafka.md``). Kept apart from
``kafka_tool`` so that the tool (fetch, broker, topics) runs with the standard library alone, before Beam is
installed (``.ci/run`` fetches the jars with the system Python).
"""

from __future__ import annotations

import json
import typing

import apache_beam as beam
import numpy as np

from pipelines.kafka_tool import BYTES, BYTES_OUT

__all__ = ["READ_WITH_METADATA", "ReadFromKafka262Schema", "ReadKafkaRecords", "WriteKafkaJson"]


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
