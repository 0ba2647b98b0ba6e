"""Google Cloud Pub/Sub: ``source: {type: pubsub}`` (JSON payloads, streaming, deduplicated), the pubsub sink
(one JSON message per record on each configured topic), and ``queries_source: {type: pubsub}``.

Beam's Python ``ReadFromPubSub`` runs on the DirectRunner and Dataflow only (``docs/flink.md``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, ClassVar, Literal

import apache_beam as beam
from pydantic import BeforeValidator

from pipelines.io.base import OUTPUTS, DeduplicateFn, Elements, Fraction, Sink, Source
from pipelines.model import Section, choice, in_range, issue, number, subscription, topic
from pipelines.parse import PubsubElement

__all__ = ["PubsubSource", "PubsubSink", "PubsubQueries", "DedupKey", "source_topic"]

Subscription = Annotated[str, BeforeValidator(subscription)]
Topic = Annotated[str | None, BeforeValidator(topic)]
Attribute = Annotated[str | None, BeforeValidator(lambda v: v if isinstance(v, str) and v else _bad_attribute(v))]


def _bad_attribute(v):
    raise issue(f"must be a non-empty attribute name; got {v!r}")


def source_topic(subscription: str) -> str:
    """The topic of a subscription named after it (``pipelines.tools.pubsub_tool`` makes them so: the name without
    its ``-subscription`` or ``-sub`` suffix, in the same project)."""
    project, name = subscription.split("/")[1], subscription.rsplit("/", 1)[1]
    for suffix in ("-subscription", "-sub"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return f"projects/{project}/topics/{name}"


class PubsubSource(Source):
    """``{type: pubsub, subscription, timestamp_attribute, id_attribute, dedup_seconds, max_future_seconds,
    max_dead_letter_fraction}``: JSON payloads of a subscription, unbounded. The event time is the
    ``timestamp_attribute`` (when set) or the time field; repeated deliveries of one update are dropped
    (:class:`DedupKey`)."""

    EXAMPLE: ClassVar[str] = "{type: pubsub, subscription: projects/P/subscriptions/S}"
    DEDUPLICATES: ClassVar[bool] = True

    type: Literal["pubsub"]
    subscription: Subscription
    format: Annotated[Literal["jsonl"], BeforeValidator(lambda v: choice(v, ("jsonl",)))] = "jsonl"
    timestamp_attribute: Attribute = None
    id_attribute: Attribute = None
    dedup_seconds: Annotated[float, BeforeValidator(lambda v: number(v, positive=True))] = 600.0
    max_future_seconds: Annotated[
        float, BeforeValidator(lambda v: in_range(number(v, positive=True), 0, 1e9, "at most 30 years"))
    ] = 86400.0
    max_dead_letter_fraction: Fraction = 1.0

    @property
    def dead_letter_format(self) -> str:
        return "pubsub"

    def check_config(self, cfg) -> None:
        self.require_origin(
            cfg,
            ", e.g. when the deployment starts); the partitioning schedules its closes in ticks counted from it",
        )

    def read(self, p, cfg) -> Elements:
        # no timestamp_attribute for the reader: a message whose attribute is not a time would fail the reader
        # for ever; the parse step reads the attribute and dead-letters what is not a time (the element keeps
        # its publish time until then)
        messages = p | "ReadPubSub" >> beam.io.ReadFromPubSub(subscription=self.subscription, with_attributes=True)
        elements = (
            messages
            | "DedupKey" >> beam.ParDo(_PubsubElementFn(self.id_attribute))
            | "Deduplicate" >> beam.ParDo(DeduplicateFn(self.dedup_seconds))
        )
        return Elements(elements, None, self.timestamp_attribute, self.max_future_seconds)


class DedupKey:
    """``PubsubMessage -> (dedup key, payload)``: the ``id_attribute`` attribute if configured and present, else
    the payload's ``update_id`` field, else nothing, each with the SHA-256 of the payload (a redelivery, or a
    publisher's retry, carries the same bytes). The payload is part of the key so that a message that only
    shares an id is not dropped for another: keyed by the id alone, one person's messages could remove other
    people's updates (the earliest delivered wins), which no privacy unit bounds."""

    def __init__(self, id_attribute: str | None):
        self.id_attribute = id_attribute

    def __call__(self, msg):
        attrs = msg.attributes or {}
        digest = hashlib.sha256(msg.data or b"").hexdigest()
        if self.id_attribute and attrs.get(self.id_attribute):
            return ("a:" + str(attrs[self.id_attribute]) + ":" + digest, msg.data)
        try:
            d = json.loads(msg.data)
            uid = d.get("update_id") if isinstance(d, dict) else None
        except (ValueError, UnicodeDecodeError, RecursionError, TypeError):
            uid = None
        if isinstance(uid, (str, int)) and not isinstance(uid, bool) and uid != "":
            return ("f:" + str(uid) + ":" + digest, msg.data)
        return ("h:" + digest, msg.data)


class _PubsubElementFn(beam.DoFn):
    """``PubsubMessage`` -> ``(dedup key, PubsubElement)``: the payload, the attributes and the publish time (the
    element's timestamp: no ``timestamp_attribute`` is given to the reader, so a message whose attribute is not
    a time reaches the parse step and its dead letters instead of failing the reader for ever)."""

    def __init__(self, id_attribute: str | None):
        self.key = DedupKey(id_attribute)

    def process(self, msg, ts=beam.DoFn.TimestampParam):
        key, data = self.key(msg)
        attrs = tuple(sorted((str(k), str(v)) for k, v in (msg.attributes or {}).items()))
        yield (key, PubsubElement(bytes(data or b""), attrs, float(ts)))


class PubsubSink(Sink):
    """``{type: pubsub, topic, nodes_topic, dead_letter_topic, answers_topic}``: releases to ``topic``, node
    outputs to ``nodes_topic``, dead letters to ``dead_letter_topic`` and the answers to streamed queries to
    ``answers_topic`` (each optional but the first), one JSON message per record."""

    type: Literal["pubsub"]
    topic: Annotated[str, BeforeValidator(topic)]
    nodes_topic: Topic = None
    dead_letter_topic: Topic = None
    answers_topic: Topic = None

    path: ClassVar[None] = None  # no folder

    def check_config(self, cfg, index: int) -> None:
        if cfg.privacy.disable_noise:
            raise issue(
                "privacy.disable_noise releases exact, non-private answers and is for tests only; it refuses "
                "pubsub sinks (use a file sink, or turn disable_noise off)",
                f"sinks[{index}].type",
            )

    def write(self, records, output: str, *, label: str, streaming: bool, schema: str | None) -> str | None:
        where = getattr(self, OUTPUTS[output][1])
        (
            records
            | f"Encode{label}" >> beam.Map(lambda d: json.dumps(d).encode()).with_output_types(bytes)
            | f"Publish{label}" >> beam.io.WriteToPubSub(where)
        )
        return where


class PubsubQueries(Section):
    """``queries_source: {type: pubsub, subscription}``: streamed queries, one JSON object per message (the run
    is a streaming one)."""

    EXAMPLE: ClassVar[str] = "{type: pubsub, subscription: projects/P/subscriptions/S}"
    STREAMING: ClassVar[bool] = True

    type: Literal["pubsub"]
    subscription: Annotated[
        str,
        BeforeValidator(
            lambda v: (
                v
                if isinstance(v, str) and _subscription_ok(v)
                else _raise(f"must be projects/PROJECT/subscriptions/NAME; got {v!r}")
            )
        ),
    ]

    def read(self, p):
        """The query payloads, as bytes."""
        return p | "ReadQueriesPubSub" >> beam.io.ReadFromPubSub(subscription=self.subscription)

    def submit(self, line: str) -> str:
        """Publish one query to the subscription's topic; returns the topic."""
        from google.cloud import pubsub_v1

        where = source_topic(self.subscription)
        pubsub_v1.PublisherClient().publish(where, line.encode()).result(timeout=60)
        return where


def _subscription_ok(v: str) -> bool:
    try:
        subscription(v)
    except Exception:  # noqa: BLE001 - the check's own error: reworded by the caller
        return False
    return True


def _raise(message: str):
    raise issue(message)
