"""Moved to :mod:`pipelines.io.kafka` (the Kafka source and sink); kept so that the names docs/kafka.md shows
still import from here."""

from pipelines.io.kafka import READ_WITH_METADATA, ReadFromKafka262Schema, ReadKafkaRecords, WriteKafkaJson

__all__ = ["READ_WITH_METADATA", "ReadFromKafka262Schema", "ReadKafkaRecords", "WriteKafkaJson"]
