"""The registry of sources and sinks: one module per type, each with its configuration model, its launch
checks and its Beam steps (``pipelines.io.base`` says what each provides).

``SOURCES``, ``SINKS`` and ``QUERY_SOURCES`` map a configuration's ``type`` to its model; ``SourceConfig``,
``SinkConfig`` and ``QueriesSourceConfig`` are the discriminated unions the configuration validates with (a
missing ``type`` is ``file``). Adding a type is one module and one line here.
"""

from __future__ import annotations

from pipelines.io.base import OUTPUTS, Elements, Sink, Source
from pipelines.io.files import FileQueries, FileSink, FileSource
from pipelines.io.follow import FollowSource
from pipelines.io.kafka import KafkaSink, KafkaSource
from pipelines.io.pubsub import PubsubQueries, PubsubSink, PubsubSource
from pipelines.model import tagged_union

__all__ = [
    "SOURCES",
    "SINKS",
    "QUERY_SOURCES",
    "SourceConfig",
    "SinkConfig",
    "QueriesSourceConfig",
    "Source",
    "Sink",
    "Elements",
    "OUTPUTS",
]

SOURCES = {"file": FileSource, "pubsub": PubsubSource, "follow": FollowSource, "kafka": KafkaSource}
SINKS = {"file": FileSink, "pubsub": PubsubSink, "kafka": KafkaSink}
QUERY_SOURCES = {"file": FileQueries, "pubsub": PubsubQueries}

SourceConfig = tagged_union(SOURCES, "file")
SinkConfig = tagged_union(SINKS, "file")
QueriesSourceConfig = tagged_union(QUERY_SOURCES, "file")
