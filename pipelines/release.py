"""The main pipeline: ``python -m pipelines.release --config configs/NAME.yaml [Beam options]``.

With no arguments it runs ``configs/demo.yaml``: the bundled demo input on the
DirectRunner, releases under ``./output/``, and a summary at the end. Unknown
arguments are passed to Beam as pipeline options (``--runner``, ...).

Sources: JSON lines, CSV (with a header) and Avro files (globs, bounded), or a
Pub/Sub subscription (JSON payloads, streaming). Sinks: JSON lines and Avro
files (schemas in ``pipelines/schemas``) and Pub/Sub topics. See
``docs/pipelines.md``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import functools
import glob
import hashlib
import json
import logging
import os
import re
import sys
import threading
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.coders import BooleanCoder
from apache_beam.io import fileio
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions
from apache_beam.transforms import trigger, window
from apache_beam.transforms.timeutil import TimeDomain
from apache_beam.transforms.userstate import ReadModifyWriteStateSpec, TimerSpec, on_timer
from apache_beam.utils.timestamp import Duration

from pipelines.config import (
    ConfigError,
    MissingTimeError,
    PipelineConfig,
    SinkConfig,
    check_environment,
    check_kafka_runner,
    csv_header_of,
    load_config,
    source_files,
)
from pipelines.parse import PubsubElement, RecordParser, raw_fields, safe_json
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP
from transforms.core.foundation.noise import ReleaseIdentity
from transforms.records import DeadLetter, NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE, StreamSpec, event_time_ok

__all__ = ["main", "build_pipeline", "parse_line"]

_PROGRESS = logging.getLogger("dp_dynamic.progress")


class _StderrHandler(logging.Handler):
    """Progress lines to whatever ``sys.stderr`` is at the time of writing."""

    def emit(self, record):
        sys.stderr.write(f"progress: {record.getMessage()}\n")


DEFAULT_CONFIG = "configs/demo.yaml"


class _ParseFn(beam.DoFn):
    """An input element (a line of a JSON-lines or CSV file as bytes, an Avro
    record as a dict, or a :class:`~pipelines.parse.PubsubElement`) ->
    UpdateRecord with its item encoded for the query sets
    (:class:`pipelines.parse.RecordParser`).

    Whatever the element holds, it leaves as a record or as a dead letter with
    a reason and the element as received (never as an exception; the payload is
    never logged). With ``source.dedup`` the records leave keyed by their update
    id, for :class:`_DropDuplicatesFn`."""

    DEAD = "dead_letters"

    PROGRESS_EVERY = 100_000

    def __init__(self, cfg: PipelineConfig, csv_header: tuple | None = None, time_from_timestamp: bool = False):
        self.cfg = cfg
        self.csv_header = csv_header
        # Pub/Sub with a timestamp attribute: the event time is that attribute
        self.time_from_timestamp = time_from_timestamp
        self.read = Metrics.counter(NAMESPACE, "records_read")
        self.seen = 0
        self.parser = None

    def setup(self):
        cfg = self.cfg
        self.parser = RecordParser(
            cfg,
            self.csv_header,
            timestamp_attribute=cfg.timestamp_attribute if self.time_from_timestamp else None,
            max_future_seconds=cfg.max_future_seconds if cfg.streaming else None,
        )

    def process(self, element):
        self.read.inc()
        self.seen += 1
        if self.seen % self.PROGRESS_EVERY == 0:  # progress on long runs (counts only, never payloads)
            _PROGRESS.info("records read by this worker: %d", self.seen)
        if self.parser is None:
            self.setup()
        parsed = self.parser.parse(element)
        if parsed.reason:
            Metrics.counter(NAMESPACE, f"dead_letter_{parsed.reason}").inc()
            yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(parsed.reason, parsed.raw, "parse", parsed.stream))
            return
        for name in parsed.clamped:  # a sum value outside [lower, upper] (counts only)
            Metrics.counter(NAMESPACE, f"sum_clamped_{name}").inc()
        rec = parsed.record
        if self.cfg.dedup_field:
            yield beam.window.TimestampedValue((parsed.dedup_key, rec), rec.event_time)
        else:
            yield beam.window.TimestampedValue(rec, rec.event_time)

    def _parse(self, element, event_time=None):
        """(reason, UpdateRecord or None) of one element (tests and tools)."""
        if self.parser is None:
            self.setup()
        parsed = self.parser.parse(element)
        return parsed.reason, parsed.record


class _DropDuplicatesFn(beam.DoFn):
    """``source.dedup`` on files: one update per update id (the first in a
    fixed order of the records as received, so line order does not matter);
    the others are counted (``duplicates_dropped``), as on Pub/Sub."""

    def process(self, element):
        _, records = element
        records = list(records)
        if len(records) > 1:
            Metrics.counter(NAMESPACE, "duplicates_dropped").inc(len(records) - 1)
            records.sort(key=lambda r: (r.event_time, r.seq, repr(r.raw)))
        rec = records[0]
        yield beam.window.TimestampedValue(rec, rec.event_time)


class _PubsubElementFn(beam.DoFn):
    """``PubsubMessage`` -> ``(dedup key, PubsubElement)``: the payload, the
    attributes and the publish time (the element's timestamp: no
    ``timestamp_attribute`` is given to the reader, so a message whose attribute
    is not a time reaches the parse step and its dead letters instead of failing
    the reader for ever)."""

    def __init__(self, id_attribute: str | None):
        self.key = _DedupKey(id_attribute)

    def process(self, msg, ts=beam.DoFn.TimestampParam):
        key, data = self.key(msg)
        attrs = tuple(sorted((str(k), str(v)) for k, v in (msg.attributes or {}).items()))
        yield (key, PubsubElement(bytes(data or b""), attrs, float(ts)))


class _DeduplicateFn(beam.DoFn):
    """Drops repeated deliveries of one update (Pub/Sub delivers at least once).

    Keyed by the update id: the ``source.id_attribute`` attribute if configured
    and present, else the payload's ``update_id`` field, else the SHA-256 of the
    payload (a redelivery carries the same bytes). An id is remembered for
    ``dedup_seconds`` after the message's element timestamp (its publish time:
    the event time is read later, by the parse step)."""

    SEEN = ReadModifyWriteStateSpec("seen", BooleanCoder())
    EXPIRE = TimerSpec("expire", TimeDomain.WATERMARK)

    def __init__(self, seconds: float):
        self.seconds = seconds

    def process(
        self,
        element,
        ts=beam.DoFn.TimestampParam,
        seen=beam.DoFn.StateParam(SEEN),
        expire=beam.DoFn.TimerParam(EXPIRE),
    ):
        _, data = element
        if seen.read():
            Metrics.counter(NAMESPACE, "duplicates_dropped").inc()
            return
        seen.write(True)
        expire.set(ts + Duration(seconds=self.seconds))
        yield data

    @on_timer(EXPIRE)
    def on_expire(self, seen=beam.DoFn.StateParam(SEEN)):
        seen.clear()


class _CountReleasesFn(beam.DoFn):
    """Counts the releases and the budget spent where every runner reports
    metrics (some runners drop counters incremented in timer callbacks)."""

    def process(self, rel):
        Metrics.counter(NAMESPACE, "releases_written").inc()
        Metrics.distribution(NAMESPACE, "budget_spent_written_micro").update(int(rel.spent[0] * 1e6))


class _DedupKey:
    """``PubsubMessage -> (dedup key, payload)`` (see :class:`_DeduplicateFn`)."""

    def __init__(self, id_attribute: str | None):
        self.id_attribute = id_attribute

    def __call__(self, msg):
        attrs = msg.attributes or {}
        if self.id_attribute and attrs.get(self.id_attribute):
            return ("a:" + str(attrs[self.id_attribute]), msg.data)
        try:
            d = json.loads(msg.data)
            uid = d.get("update_id") if isinstance(d, dict) else None
        except (ValueError, UnicodeDecodeError, RecursionError, TypeError):
            uid = None
        if isinstance(uid, (str, int)) and not isinstance(uid, bool) and uid != "":
            return ("f:" + str(uid), msg.data)
        return ("h:" + hashlib.sha256(msg.data or b"").hexdigest(), msg.data)


def _csv_header(pattern: str) -> tuple:
    """The header of a CSV source (every file must have the same one)."""
    headers = set()
    for path in source_files(pattern):
        if "://" in path:
            from apache_beam.io.filesystems import FileSystems

            with FileSystems.open(path) as fh:
                first = fh.readline().decode("utf-8", "replace")
            headers.add(tuple(next(csv.reader([first]), ())))
            continue
        header = csv_header_of(path)
        if header is None:
            raise ConfigError(f"source.path: {path} is empty; a CSV source needs a header row")
        headers.add(header)
    if len(headers) != 1:
        raise ConfigError(f"source.path: the CSV files of {pattern} do not all have the same header row")
    return headers.pop()


def parse_line(cfg: PipelineConfig, line):
    """(reason, UpdateRecord) for one JSON input line (for tests and tools)."""
    return _ParseFn(cfg)._parse(line)


def _release_dict(cfg: PipelineConfig, rel) -> dict:
    q = next(q for q in cfg.queries if q.name == rel.query)
    est = q.values(rel.estimate)
    if q.type in ("count", "histogram"):  # post-processing of released values: free
        if cfg.clamp:
            est = [max(x, 0.0) for x in est]
        if cfg.round_answers:
            est = [float(round(x)) for x in est]
    estimate = dict(zip(map(str, q.domain), est)) if q.type == "histogram" else est[0]
    bound = q.bound(rel.error_bound)
    return {
        "stream": rel.stream,
        "tick": rel.tick,
        "segment": rel.segment,
        "query": rel.query,
        "estimate": estimate,
        "error_bound": bound,
        "beta": rel.beta,
        **_unit_spent(cfg, rel.spent),
        "as_of": rel.as_of,
    }


def _node_dict(rec) -> dict:
    d = rec._asdict()
    d["values"] = [float(x) for x in d["values"]]
    d["cost"] = None if d["cost"] is None else [float(x) for x in d["cost"]]
    d["coordinates"] = [str(x) for x in d["coordinates"]]
    return d


def _dead_dict(cfg: PipelineConfig, d: DeadLetter) -> dict:
    """A dead letter as published (``dead_letter.avsc``): always valid JSON.

    ``record`` is the input as received (``encoding`` text, or base64 of bytes
    that are not UTF-8), with the Pub/Sub ``attributes``; a record built without
    its input (the transforms used directly) is shown with the input's field
    names."""
    rec = d.record
    stream = d.stream if len(d) > 3 else None
    if isinstance(rec, UpdateRecord):
        stream = rec.stream if isinstance(rec.stream, str) else stream
        if rec.raw is not None:
            rec = rec.raw
        else:
            rec = safe_json(
                {
                    cfg.time_field: rec.event_time,
                    "op": rec.op,
                    "id": rec.entry_id,
                    "item_indices": rec.item,
                    (cfg.stream_field or "stream"): rec.stream,
                    "seq": rec.seq,
                }
            )
    fields = raw_fields(rec)
    return {
        "reason": d.reason,
        **fields,
        "stage": (d.stage if len(d) > 2 else "") or "",
        "stream": stream if isinstance(stream, str) else None,
        "format": "pubsub" if cfg.source_type == "pubsub" else cfg.source_format,
    }


SCHEMAS = Path(__file__).resolve().parent / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.avsc").read_text())


@functools.lru_cache(maxsize=4096)
def _zcdp_epsilon(rho: float, delta: float) -> float:
    from transforms.core.foundation.accounting import zcdp_to_approx

    return zcdp_to_approx(rho, delta).epsilon


def spend_in_units(cfg: PipelineConfig, spent: tuple) -> tuple[dict, dict]:
    """``(configured, update_level)``: the spend so far as a guarantee for the
    configured privacy unit in the configured currency (epsilon, delta for a
    configured (epsilon, delta); rho for zCDP; with Gaussian noise under an
    (epsilon, delta) target also the ledger's rho), and the update-level
    spend the ledger charged, in its currency."""
    ledger = cfg.ledger_budget()
    target = cfg.target_budget()
    if isinstance(ledger, ZCDP):
        update_level = {"rho": spent[0]}
        rho = cfg.group_unit.guarantee(ZCDP(spent[0])).rho
        configured = {"rho": rho}
        if not isinstance(target, ZCDP):  # (epsilon, delta) configured: converted at the configured delta
            configured = {"epsilon": _zcdp_epsilon(rho, target.delta), "delta": target.delta, "rho": rho}
        return configured, update_level
    b = cfg.group_unit.guarantee(ApproxDP(spent[0], spent[1]) if len(spent) == 2 else PureDP(spent[0]))
    update_level = {"epsilon": spent[0]} if len(spent) == 1 else {"epsilon": spent[0], "delta": spent[1]}
    configured = {"epsilon": b.epsilon}
    if isinstance(b, ApproxDP):
        configured["delta"] = b.delta
    return configured, update_level


def _unit_spent(cfg: PipelineConfig, spent: tuple) -> dict:
    """The release record's spend fields: ``epsilon_spent`` / ``delta_spent`` /
    ``rho_spent`` for the configured privacy unit and currency, and
    ``update_level_spent`` (the ledger's update-level charge, labelled). A
    mechanism whose ledger charges the configured guarantee itself (the
    changelog releases, ``ledger_unit = "configured"``) has no update-level
    charge: its ``update_level_spent`` is null, not the entry-level spend
    under an update-level label (the summary leaves that line out too)."""
    configured, update_level = spend_in_units(cfg, spent)
    out = {f"{k}_spent": v for k, v in configured.items()}
    out["update_level_spent"] = update_level if cfg.group_unit == cfg.privacy_unit else None
    return out


def noise_key_for(cfg: PipelineConfig, local: bool = True) -> NoiseKey:
    """Where the workers get the secret key (``privacy.noise_key``)."""
    if cfg.disable_noise:
        return NoiseKey.disabled()
    kind, where = cfg.noise_key
    if kind == "file":
        return NoiseKey.from_file(where)
    if kind == "secret":
        return NoiseKey.from_secret_manager(where)
    if not os.environ.get(where):
        if not local:
            raise ConfigError(
                f"privacy.noise_key: the variable {where} is not set; remote workers need the key from "
                "privacy.noise_key {secret: ...} or {file: ...}"
            )
        # a local run without a configured key: a fresh one-off key from the OS
        # CSPRNG (releases cannot be recomputed later; set the variable to reuse one)
        os.environ[where] = os.urandom(32).hex()
        print(
            f"WARNING: {where} is not set; using a fresh one-off noise key. Its releases cannot be recomputed, "
            "and every run on the same data is a NEW release that spends a new budget: publishing several runs "
            "lets anyone average their noise away (the budgets of separate releases add up).",
            file=sys.stderr,
        )
    return NoiseKey.from_env(where)


def release_identity(cfg: PipelineConfig) -> ReleaseIdentity:
    """The release this launch makes: ``privacy.release_id`` (to reproduce or
    continue a release) or a new random id, with the configuration's digest.
    Decided here, at launch, from configuration only; it is fixed in the
    pipeline graph, so retries and restores of this job redraw the same noise."""
    digest = cfg.release_digest()
    return ReleaseIdentity(cfg.release_id, digest) if cfg.release_id else ReleaseIdentity.new(digest)


def build_pipeline(p: beam.Pipeline, cfg: PipelineConfig, noise_key: NoiseKey, release: ReleaseIdentity | None = None):
    """Wire source -> parse -> release -> sinks into ``p``; returns the sink paths.

    ``release``: the release identity (default :func:`release_identity`)."""
    release = release if release is not None else release_identity(cfg)
    header = None
    if cfg.source_type == "pubsub":
        # no timestamp_attribute for the reader: a message whose attribute is not a
        # time would fail the reader for ever; the parse step reads the attribute
        # and dead-letters what is not a time (the element keeps its publish time
        # until then)
        messages = p | "ReadPubSub" >> beam.io.ReadFromPubSub(subscription=cfg.subscription, with_attributes=True)
        elements = (
            messages
            | "DedupKey" >> beam.ParDo(_PubsubElementFn(cfg.id_attribute))
            | "Deduplicate" >> beam.ParDo(_DeduplicateFn(cfg.dedup_seconds))
        )
    elif cfg.source_type == "follow":
        # JSON lines as they are appended (a splittable DoFn: every portable runner,
        # Flink included, runs it); the watermark follows the lines' event times,
        # held back by max_disorder_seconds; a line "#END" finishes a file
        from pipelines.follow_source import ReadFollowing, json_time

        elements = p | "FollowFiles" >> ReadFollowing(
            cfg.source_path, time_of=json_time(cfg.time_field), max_disorder_seconds=cfg.max_disorder_seconds
        )
    elif cfg.source_type == "kafka":
        # the Java KafkaIO through an expansion service (pipelines.kafka_tool, docs/kafka.md): records as bytes
        # stamped with their Kafka timestamp; a record the reader delivers twice (same partition and offset)
        # is dropped, as a Pub/Sub redelivery is
        from pipelines.kafka_io import ReadKafkaRecords

        elements = (
            p
            | "ReadKafka"
            >> ReadKafkaRecords(
                cfg.kafka_bootstrap_servers,
                [cfg.kafka_topic],
                cfg.kafka_expansion_service,
                dict(cfg.kafka_consumer_config),
                cfg.kafka_max_records,
            )
            | "Deduplicate" >> beam.ParDo(_DeduplicateFn(cfg.dedup_seconds))
        )
    elif cfg.source_format == "avro":
        elements = p | "ReadFiles" >> beam.io.ReadFromAvro(cfg.source_path)
    elif cfg.source_format == "csv":
        header = _csv_header(cfg.source_path)
        elements = p | "ReadFiles" >> beam.io.ReadFromText(
            cfg.source_path, skip_header_lines=1, coder=beam.coders.BytesCoder()
        )
    else:  # lines as bytes: a line that is not UTF-8 is a dead letter, not a failed read
        elements = p | "ReadFiles" >> beam.io.ReadFromText(cfg.source_path, coder=beam.coders.BytesCoder())
    parse = _ParseFn(cfg, header, time_from_timestamp=cfg.source_type == "pubsub" and bool(cfg.timestamp_attribute))
    parsed = elements | "Parse" >> beam.ParDo(parse).with_outputs(_ParseFn.DEAD, main="records")
    records = parsed.records
    if cfg.dedup_field:
        records = (
            records
            | "GroupByUpdateId" >> beam.GroupByKey()
            | "DropDuplicates" >> beam.ParDo(_DropDuplicatesFn()).with_output_types(UpdateRecord)
        )
    spec = StreamSpec(
        streams=cfg.streams,
        tick_seconds=cfg.tick_seconds,
        origin=cfg.origin,
        late_policy=cfg.late_policy,
        allowed_lateness=cfg.allowed_lateness,
        end_time=cfg.end,
        every_ticks=cfg.every_ticks,
    )
    release_args = dict(options=cfg.mechanism_options(), release=release, consistency=cfg.consistency())
    query_dead = []
    if cfg.queries_source is not None:
        # streamed linear queries, answered by PMWG as of their arrival (docs/growing.md)
        from pipelines.submit_queries import read_queries
        from transforms.queries import AnswerQueries

        queries, bad_queries = read_queries(p, cfg)
        out = (records, queries) | "Release" >> AnswerQueries(cfg.dynamic_config(), spec, noise_key, **release_args)
        query_dead = [bad_queries]
    else:
        transform = ReleaseContinually(cfg.mechanism, cfg.dynamic_config(), spec, noise_key, **release_args)
        out = records | "Release" >> transform
    dead = (parsed[_ParseFn.DEAD], out["dead_letters"], *query_dead) | "AllDeadLetters" >> beam.Flatten()
    out["answers"] | "CountReleases" >> beam.ParDo(_CountReleasesFn())
    written = []
    for i, sink in enumerate(cfg.sinks):
        # the differentially private outputs go to sink.path; dead letters (raw
        # records: confidential operator data) to sink.confidential_path, apart
        outputs = (
            ("releases", out["answers"], lambda r: _release_dict(cfg, r), "release", sink.topic, sink.path),
            ("nodes", out["nodes"], _node_dict, "node", sink.nodes_topic, sink.path),
            (
                "dead_letters",
                dead,
                lambda d: _dead_dict(cfg, d),
                "dead_letter",
                sink.dead_letter_topic,
                sink.confidential_path,
            ),
        )
        if "query_answers" in out:  # the answers to streamed queries (queries_source)
            from pipelines.submit_queries import answer_dict

            answers = ("query_answers", out["query_answers"], lambda a: answer_dict(cfg, a), "query_answer")
            outputs += (answers + (sink.answers_topic, sink.path),)
        for name, pcoll, to_dict, schema, topic, base in outputs:
            if sink.type == "kafka":  # one JSON document per record, like the pubsub sink (docs/kafka.md)
                if topic is not None:
                    from pipelines.kafka_io import WriteKafkaJson

                    (
                        pcoll
                        | f"Format{name}{i}" >> beam.Map(to_dict)
                        | f"Kafka{name}{i}" >> WriteKafkaJson(sink.bootstrap_servers, topic, sink.expansion_service)
                    )
                    written.append(f"kafka:{topic}")
                continue
            if sink.type == "pubsub":
                if topic is not None:
                    (
                        pcoll
                        | f"Format{name}{i}" >> beam.Map(to_dict)
                        | f"Encode{name}{i}" >> beam.Map(lambda d: json.dumps(d).encode()).with_output_types(bytes)
                        | f"Publish{name}{i}" >> beam.io.WriteToPubSub(topic)
                    )
                    written.append(topic)
                continue
            records = pcoll | f"Format{name}{i}" >> beam.Map(to_dict)
            written.append(_write_files(records, sink, base, name, schema, f"{name}{i}", cfg.streaming))
    return written


def _write_files(records, sink: SinkConfig, base: str, name: str, schema: str, label: str, streaming: bool) -> str:
    """Write dicts as ``{path}/{name}*.jsonl`` or ``.avro``; returns the glob.

    Bounded input: one set of shards. Streaming: the records are grouped into
    fixed windows of ``window_seconds`` of event time, one file per window and
    firing (a late firing gets its own file, so nothing is dropped)."""
    suffix = ".avro" if sink.format == "avro" else ".jsonl"
    prefix = str(Path(base) / name)
    if not streaming:
        if sink.format == "avro":
            records | f"Write{label}" >> beam.io.WriteToAvro(prefix, schema=_schema(schema), file_name_suffix=suffix)
        else:
            (
                records
                | f"Json{label}" >> beam.Map(json.dumps)
                | f"Write{label}" >> beam.io.WriteToText(prefix, file_name_suffix=suffix)
            )
        return prefix + "*" + suffix
    windowed = records | f"Window{label}" >> beam.WindowInto(
        window.FixedWindows(sink.window_seconds),
        trigger=trigger.AfterWatermark(late=trigger.AfterCount(1)),
        accumulation_mode=trigger.AccumulationMode.DISCARDING,
        allowed_lateness=Duration(seconds=_STREAM_FILE_LATENESS),
    )
    file_sink = _AvroFileSink(_schema(schema)) if sink.format == "avro" else _JsonFileSink()
    windowed | f"Write{label}" >> fileio.WriteToFiles(
        path=base, file_naming=_window_file_naming(name, suffix), sink=file_sink, shards=1
    )
    return prefix + "*" + suffix


_STREAM_FILE_LATENESS = 7 * 24 * 3600  # a late release still gets written (to a file of its own)


def _window_file_naming(name: str, suffix: str):
    """File names per window and firing, unique per finalisation.

    Window, pane index and shard do not name a firing uniquely: on the
    DirectRunner several firings of one window (releases of several ticks,
    emitted late after a watermark jump) all arrive as pane 0, shard 0, and
    each finalisation renamed its file over the previous one: releases were
    lost. A random token per finalisation call keeps every file."""

    def naming(w, pane, shard_index, total_shards, compression, destination):
        start = getattr(w, "start", None)
        span = "global" if start is None else f"{int(w.start)}-{int(w.end)}"
        token = os.urandom(4).hex()  # not noise: only a file name
        return f"{name}-{span}-p{pane.index if pane is not None else 0}-{shard_index or 0}-{token}{suffix}"

    return naming


class _JsonFileSink(fileio.FileSink):
    """One JSON document per line."""

    def open(self, fh):
        self._fh = fh

    def write(self, record):
        self._fh.write(json.dumps(record).encode() + b"\n")

    def flush(self):
        self._fh.flush()


class _AvroFileSink(fileio.FileSink):
    """Avro container files with the published schema (fastavro)."""

    def __init__(self, schema: dict):
        self.schema = schema

    def open(self, fh):
        import fastavro

        self._writer = fastavro.write.Writer(fh, fastavro.parse_schema(self.schema))

    def write(self, record):
        self._writer.write(record)

    def flush(self):
        self._writer.flush()


MANIFEST = "release_manifest.json"


def mechanism_plan(cfg: PipelineConfig) -> list[str]:
    """Which mechanism answers which query sets, with what share of the budget
    and why (``mechanism: auto`` decides per query set; printed and recorded)."""
    import math

    from transforms.core.continual.auto import plan
    from transforms.core.continual.net_change import choose_counter

    config = cfg.dynamic_config()
    end_tick = None
    if cfg.end is not None:
        end_tick = max(1, math.ceil((cfg.end - cfg.origin) / cfg.tick_seconds - 1e-9))
    opts = dict(cfg.options)
    horizon = opts.get("horizon") or (math.ceil(end_tick / cfg.every_ticks) if end_tick else None)

    def counter_note(name):
        if name != "net_change":
            return ""
        counter = opts.get("counter", "auto")
        if counter == "auto":
            counter = choose_counter(config.noise_kind, horizon)
        return f" [counter {counter}, {'horizon ' + str(horizon) + ' periods' if horizon else 'unbounded'}]"

    if cfg.mechanism != "auto":
        names = ", ".join(q.name for q in cfg.queries)
        return [f"{names} -> {cfg.mechanism}{counter_note(cfg.mechanism)} (the whole budget; configured)"]
    return [
        f"{', '.join(p.queries)} -> {p.mechanism}{counter_note(p.mechanism)} ({p.share:.0%} of the budget): {p.reason}"
        for p in plan(config)
    ]


def _input_fingerprint(cfg: PipelineConfig) -> str | None:
    """A digest of a file source's input (names and contents of local files;
    names, sizes and modification times of remote ones). It is derived from the
    data, so it lives in the confidential folder only. None for Pub/Sub."""
    if cfg.source_type != "file":
        return None
    from apache_beam.io.filesystems import FileSystems

    h = hashlib.sha256(b"dpdyn-input-v1")
    try:
        metas = sorted(FileSystems.match([cfg.source_path])[0].metadata_list, key=lambda m: m.path)
    except Exception:  # noqa: BLE001 - an unmatched glob: the pipeline reports it
        metas = []
    for m in metas:
        h.update(m.path.encode() + b"\0" + str(m.size_in_bytes).encode() + b"\0")
        if os.path.isfile(m.path):
            with open(m.path, "rb") as fh:
                for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                    h.update(chunk)
        else:
            h.update(str(getattr(m, "last_updated_in_seconds", "")).encode())
    return h.hexdigest()


def release_manifest(cfg: PipelineConfig, release: ReleaseIdentity) -> dict:
    """What this release is: its id, its configuration's digest, its input and
    its budget (per declared stream, in the configured unit)."""
    budget = cfg.target_budget()
    return {
        "release_id": release.release_id,
        "config_digest": release.config_digest,
        "input_fingerprint": _input_fingerprint(cfg),
        "mechanism": cfg.mechanism,
        "mechanism_plan": mechanism_plan(cfg),
        "release_every_ticks": cfg.every_ticks,
        "streams": list(cfg.streams),
        "budget_per_stream": {k: v for k, v in dataclasses.asdict(budget).items()},
        "privacy_unit": cfg.unit
        if cfg.unit == "update"
        else f"entry (max {cfg.max_mutations_per_entry} mutations)"
        if cfg.mutation_window is None
        else f"entry ({cfg.unit_text()[len('entry, ') :]})",
        "noise": "disabled (NOT private)" if cfg.disable_noise else "on",
        "note": "budgets of separate releases add up: a new release id spends a new budget",
    }


def check_and_write_manifest(cfg: PipelineConfig, release: ReleaseIdentity) -> list[str]:
    """Write the release manifest into every file sink's confidential folder.

    A manifest already there with the same release id but another
    configuration or input means a release id reused on different data or
    settings, which would give two releases the same noise: refused with
    :class:`ConfigError` before anything runs. The same id, configuration and
    input is a replay (identical outputs) and is allowed. Returns the paths."""
    from apache_beam.io.filesystems import FileSystems

    manifest = release_manifest(cfg, release)
    paths = []
    for sink in cfg.sinks:
        if sink.type != "file":
            continue
        path = FileSystems.join(sink.confidential_path, MANIFEST)
        if FileSystems.exists(path):
            with FileSystems.open(path) as fh:
                try:
                    old = json.loads(fh.read().decode("utf-8"))
                except ValueError:
                    old = {}
            if old.get("release_id") == release.release_id:
                for key, what in (("config_digest", "configuration"), ("input_fingerprint", "input")):
                    if old.get(key) != manifest[key]:
                        raise ConfigError(
                            f"privacy.release_id: release {release.release_id} was already made with another {what} "
                            f"(see {path}); reusing a release id on other data or settings would give two releases "
                            "the same noise. Omit privacy.release_id for a new release (it spends a new budget)"
                        )
        FileSystems.mkdirs(sink.confidential_path) if not FileSystems.exists(sink.confidential_path) else None
        with FileSystems.create(path) as fh:
            fh.write(json.dumps(manifest, indent=2).encode() + b"\n")
        paths.append(path)
    return paths


def input_time_range(config_path: str) -> tuple[float, float] | None:
    """The first and last event times of a local file source (for the operator
    to copy into ``time.origin`` / ``time.end``; never used by the pipeline)."""
    import yaml

    try:
        raw = yaml.safe_load(Path(config_path).read_text())
        src, tm = raw.get("source") or {}, raw.get("time") or {}
        pattern, fmt, field = src.get("path"), src.get("format", "jsonl"), tm.get("field", "time")
        files = sorted(glob.glob(pattern)) if isinstance(pattern, str) else []
    except (OSError, ValueError, AttributeError, yaml.YAMLError):
        return None
    lo = hi = None
    for f in files:
        try:
            if fmt == "avro":
                import fastavro

                with open(f, "rb") as fh:
                    values = [r.get(field) for r in fastavro.reader(fh)]
            elif fmt == "csv":
                with open(f, newline="", errors="replace") as fh:
                    values = [r.get(field) for r in csv.DictReader(fh)]
            else:
                values = []
                with open(f, errors="replace") as fh:
                    for line in fh:
                        try:
                            d = json.loads(line)
                        except ValueError:
                            continue
                        values.append(d.get(field) if isinstance(d, dict) else None)
        except (OSError, ValueError):
            continue
        for v in values:
            try:
                t = float(v)
            except (TypeError, ValueError):
                continue
            if event_time_ok(t):
                lo = t if lo is None else min(lo, t)
                hi = t if hi is None else max(hi, t)
    return None if lo is None else (lo, hi)


def _time_text(t: float) -> str:
    from datetime import UTC, datetime

    try:
        return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return repr(t)


def _summary(result, written, cfg: PipelineConfig, seconds: float, release: ReleaseIdentity | None = None) -> str:
    counters = {}
    for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
    dists = {d.key.metric.name: d.committed for d in result.metrics().query()["distributions"]}
    lines = []
    if release is not None:
        lines.append(
            f"release id:          {release.release_id}"
            + ("" if cfg.release_id else "  (a new release: it spends its own budget; budgets of releases add up)")
        )
    for line in mechanism_plan(cfg):
        lines.append(f"mechanisms:          {line}")
    released = counters.get("releases_written", 0)
    lines.append(f"releases written:    {released}")
    spent = dists.get("budget_spent_written_micro")
    if spent is not None and spent.count:
        configured, update_level = spend_in_units(cfg, (spent.max / 1e6,) + _ledger_delta(cfg))
        unit = cfg.unit_text()
        lines.append(
            f"budget spent:        {_budget_text(configured)} of {_budget_text(_target_dict(cfg))} per stream "
            f"(privacy unit '{unit}', the configured unit and currency)"
        )
        ledger = cfg.ledger_budget()
        if cfg.group_unit == cfg.privacy_unit:  # (the changelog releases charge the configured unit itself)
            lines.append(
                f"                     update-level equivalent (the ledger's charge): {_budget_text(update_level)} of "
                f"{_budget_text(_budget_dict(ledger))}"
            )
    exactness = "may undercount on this runner (see the note below)" if cfg.streaming else "exact"
    lines.append(
        "operator data below: exact counts, NOT differentially private (confidential; never publish them "
        f"beside the releases); counts of this run: {exactness}:"
    )
    lines += [
        f"records read:        {counters.get('records_read', 0)}  (input elements: lines, Avro records, messages)",
        f"updates accepted:    {counters.get('updates_accepted', 0)}  (an upsert counts as 2: a delete and an "
        "insert; so this can exceed the records read)",
    ]
    dead = {k[len("dead_letter_") :]: v for k, v in counters.items() if k.startswith("dead_letter_")}
    lines.append(f"dead-lettered:       {sum(dead.values())}" + (f"  {dict(sorted(dead.items()))}" if dead else ""))
    dups = counters.get("duplicates_dropped", 0)
    if cfg.source_type in ("pubsub", "kafka") or cfg.dedup_field:
        lines.append(f"duplicates dropped:  {dups}")
    clamped = {k[len("sum_clamped_") :]: v for k, v in counters.items() if k.startswith("sum_clamped_")}
    if any(q.type == "sum" for q in cfg.queries):
        lines.append(
            f"sum values clamped:  {sum(clamped.values())}"
            + (f"  {dict(sorted(clamped.items()))}" if clamped else "")
            + "  (outside [lower, upper])"
        )
    closed = counters.get("segments_closed", 0)
    lines.append(
        f"segments closed:     {closed}" + ("  (not reported by this runner)" if released and not closed else "")
    )
    if cfg.streaming:
        lines.append(
            "note: the DirectRunner's streaming mode under-reports these metrics (Beam counts only the "
            "first bundle of each step, see docs/beam.md): every count above, and the releases written, may be "
            "too low; the outputs themselves are complete"
        )
    lines.append(f"output files:        {', '.join(written)}")
    lines.append(f"wall time:           {seconds:.1f} s")
    return "\n".join(lines)


def _budget_dict(b) -> dict:
    if isinstance(b, ZCDP):
        return {"rho": b.rho}
    if isinstance(b, ApproxDP):
        return {"epsilon": b.epsilon, "delta": b.delta}
    return {"epsilon": b.epsilon}


def _target_dict(cfg: PipelineConfig) -> dict:
    out = _budget_dict(cfg.target_budget())
    ledger = cfg.ledger_budget()
    if isinstance(ledger, ZCDP) and "rho" not in out:  # Gaussian noise under an (epsilon, delta) target
        out["rho"] = cfg.group_unit.guarantee(ledger).rho
    return out


def _ledger_delta(cfg: PipelineConfig) -> tuple:
    """The ledger's delta (an (epsilon, delta) ledger spends its delta with its epsilon)."""
    ledger = cfg.ledger_budget()
    return (ledger.delta,) if isinstance(ledger, ApproxDP) else ()


def _budget_text(d: dict) -> str:
    return ", ".join(f"{k} {v:.4g}" for k, v in d.items())


def dead_letter_failure(result, cfg: PipelineConfig) -> str | None:
    """The message of a bounded run that dead-lettered everything it read, or
    more than ``source.max_dead_letter_fraction`` of it (None: fine). Counts
    only, with the top reasons; never a record."""
    counters = {}
    for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
    read = counters.get("records_read", 0)
    dead = {k[len("dead_letter_") :]: v for k, v in counters.items() if k.startswith("dead_letter_") and v}
    total = sum(dead.values())
    if not read or not total:
        return None
    accepted = counters.get("updates_accepted", 0)
    share = min(total / read, 1.0)
    if accepted and share <= cfg.max_dead_letter_fraction:
        return None
    top = ", ".join(f"{r} {n}" for r, n in sorted(dead.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
    what = "every record" if not accepted else f"{share:.1%} of the records (more than "
    what += "" if not accepted else f"source.max_dead_letter_fraction = {cfg.max_dead_letter_fraction:g})"
    return (
        f"dead letters: the run rejected {what}: {total} of {read} read; top reasons: {top} (the dead letters "
        "are in the sink's confidential folder; docs/pipelines.md lists the reasons)"
    )


_OUR_FLAGS = ("--config", "--duration", "--origin", "--release-id")


class FlinkCheckpointOptions(PipelineOptions):
    """Options of Beam's Java ``FlinkPipelineOptions`` that the Python SDK does not declare. Declared here so
    that the CLI accepts them (``check_cli_args``) and the portable runner passes them to the job server (an
    option left at None is not sent); ``docs/flink.md``, "Checkpoints, savepoints and faults"."""

    @classmethod
    def _add_argparse_args(cls, parser):
        parser.add_argument(
            "--checkpointing_interval",
            type=int,
            default=None,
            help="Flink: checkpoint every this many milliseconds (state and the sources' positions)",
        )
        parser.add_argument(
            "--finish_bundle_before_checkpointing",
            action="store_true",
            default=None,
            help="Flink: finish the open bundle before a checkpoint barrier (added by the CLI when checkpointing)",
        )
        parser.add_argument(
            "--number_of_execution_retries", type=int, default=None, help="Flink: restarts after a task failure"
        )
        parser.add_argument(
            "--execution_retry_delay", type=int, default=None, help="Flink: milliseconds between restarts"
        )
        parser.add_argument(
            "--shutdown_sources_after_idle_ms",
            type=int,
            default=None,
            help="Flink: stop a source this many milliseconds after it finished (a checkpointed job keeps finished "
            "sources, and so never ends, unless this is set; after it no checkpoint can be taken)",
        )
        parser.add_argument(
            "--savepoint_path",
            default=None,
            help="Flink: restore the job from this savepoint (a remote cluster; an embedded [local] one ignores it)",
        )


def flink_checkpoint_args(beam_args: list[str], runner: str) -> list[str]:
    """``beam_args`` with ``--finish_bundle_before_checkpointing`` added when a Flink job checkpoints.

    Why the CLI decides this (and not the user): without it Beam's Flink operator (2.62) finishes a bundle that
    is open at a checkpoint *after* the barrier, buffers that bundle's output and sends its watermark at once;
    the buffered updates then arrive behind the watermark (applied at a later tick: every release differs) or
    never (a job that releases nothing). Measured in docs/flink.md: 3 of 4 checkpointed runs released nothing
    in 300 s, the fourth released wrong values; with the option every run equals the core. It is public
    configuration, not data: it changes when a bundle ends, never which release happens when."""
    names = {a.split("=", 1)[0] for a in beam_args}
    flink = "flink" in runner.lower() or "portable" in runner.lower()
    if flink and "--checkpointing_interval" in names and "--finish_bundle_before_checkpointing" not in names:
        return [*beam_args, "--finish_bundle_before_checkpointing"]
    return beam_args


def _with_flink_checkpoint_args(options: PipelineOptions, beam_args: list[str], runner: str) -> PipelineOptions:
    """``options``, rebuilt with ``flink_checkpoint_args`` when that adds the flag (said on stderr)."""
    args = flink_checkpoint_args(beam_args, runner)
    if args == beam_args:
        return options
    print("Flink checkpointing: --finish_bundle_before_checkpointing added (docs/flink.md)", file=sys.stderr)
    return PipelineOptions(args)


def _beam_flags() -> set:
    """Every flag Beam's pipeline options know (the unknown arguments of the CLI
    must be among them)."""
    try:
        from apache_beam.options.pipeline_options import _BeamArgumentParser

        parser = _BeamArgumentParser(allow_abbrev=False)
    except (ImportError, TypeError):  # another Beam version: no check rather than a wrong one
        return set()
    todo = list(PipelineOptions.__subclasses__())
    seen = set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        todo.extend(cls.__subclasses__())
        try:
            cls._add_argparse_args(parser)
        except Exception:  # noqa: BLE001,S112 - a conflicting or broken options class: skip it
            continue
    return {opt for action in parser._actions for opt in action.option_strings}


def check_cli_args(beam_args: list[str]) -> None:
    """The arguments the CLI passes to Beam must be Beam options: a positional
    argument or an unknown flag (``--confg``) is a ConfigError, not a silent
    demo run."""
    import difflib

    flags = None
    for arg in beam_args:
        if not arg.startswith("--"):
            raise ConfigError(
                f"unexpected argument {arg!r}: give the configuration as --config PATH; the other arguments are "
                "Beam pipeline options of the form --name=value"
            )
        name = arg.split("=", 1)[0]
        flags = _beam_flags() if flags is None else flags
        if flags and name not in flags:
            close = difflib.get_close_matches(name, list(_OUR_FLAGS) + sorted(flags), n=1, cutoff=0.75)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(
                f"unknown argument {name}{hint}: not an option of this CLI ({', '.join(_OUR_FLAGS)}) nor a Beam "
                "pipeline option"
            )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.release", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=DEFAULT_CONFIG, help=f"YAML configuration (default {DEFAULT_CONFIG})")
    ap.add_argument(
        "--duration",
        type=float,
        default=None,
        help="streaming (Pub/Sub) runs on a local runner: stop after this many seconds and print the summary "
        "(default: run until interrupted)",
    )
    ap.add_argument(
        "--origin",
        type=float,
        default=None,
        help="override time.origin (epoch seconds), e.g. for a local replay with pipelines.pubsub_tool",
    )
    ap.add_argument(
        "--release-id",
        default=None,
        help="override privacy.release_id: continue or reproduce that release (a Dataflow --update or a Flink "
        "restore of a streaming job must pass the id of the job it replaces); default: a new release",
    )
    args, beam_args = ap.parse_known_args(argv)
    try:
        beam_args = list(beam_args)
        _split_values(beam_args)
        check_cli_args(beam_args)
        cfg = load_config(args.config)
        if args.origin is not None:
            cfg = dataclasses.replace(cfg, origin=args.origin)
        if args.release_id is not None:
            if not re.fullmatch(r"[A-Za-z0-9_.-]{8,128}", args.release_id):
                raise ConfigError("--release-id: must be 8 to 128 letters, digits, '_', '.' or '-'")
            cfg = dataclasses.replace(cfg, release_id=args.release_id)
        if "--update" in beam_args and not cfg.release_id:
            raise ConfigError(
                "--update replaces a running job: pass its release id (--release-id or privacy.release_id), or the "
                "updated job would draw new noise for the same release"
            )
    except MissingTimeError as e:
        span = input_time_range(args.config)
        hint = ""
        if span is not None:
            hint = (
                f"; the input's event times run from {span[0]!r} to {span[1]!r} ({_time_text(span[0])} to "
                f"{_time_text(span[1])}; shown for you to decide, the pipeline never uses them)"
            )
        print(f"configuration error: {e}{hint}", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    if cfg.mechanism_spec.input_kind == "reports":  # local DP: a collector of client reports, no noise, no key
        from pipelines.rr_collect import run_collector

        return run_collector(cfg, beam_args, duration=args.duration)
    if cfg.disable_noise:
        print(
            "WARNING: privacy.disable_noise is true: releases are EXACT and NOT differentially private. "
            "Use this for tests only.",
            file=sys.stderr,
        )
    options = PipelineOptions(beam_args or ["--runner=DirectRunner"])
    runner, local = runner_locality(options)
    options = _with_flink_checkpoint_args(options, beam_args, runner)
    if cfg.streaming:
        options.view_as(StandardOptions).streaming = True
    try:
        check_kafka_runner(cfg, runner)
        check_environment(cfg, local=local)
        key = noise_key_for(cfg, local=local)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    if not _PROGRESS.handlers:
        _PROGRESS.addHandler(_StderrHandler())
        _PROGRESS.setLevel(logging.INFO)
        _PROGRESS.propagate = False  # once, not again through a root handler the runner installed
    release = release_identity(cfg)
    try:
        check_and_write_manifest(cfg, release)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    print(f"release id: {release.release_id}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        p = beam.Pipeline(options=options)
        written = build_pipeline(p, cfg, key, release)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    try:
        result = p.run()
        if not cfg.streaming:
            result.wait_until_finish()
    except Exception as e:  # noqa: BLE001 - any failure of the run: a clear line and a non-zero exit
        return _failed(e)
    if cfg.streaming and not local:
        print(f"streaming job submitted to {runner}; it runs until cancelled. Outputs: {', '.join(written)}")
        return 0
    if cfg.streaming:
        try:
            if args.duration is None:
                result.wait_until_finish()
            else:
                time.sleep(args.duration)
        except KeyboardInterrupt:
            pass
        # the DirectRunner's Pub/Sub reader blocks in a pull for up to 30 s; let it
        # finish in the background instead of holding the summary back
        state = str(getattr(result, "state", "") or "")
        if "FAILED" in state:
            print(_summary(result, written, cfg, time.perf_counter() - t0, release))
            return _failed(None)
        stopper = threading.Thread(target=result.cancel, name="cancel-pipeline", daemon=True)
        stopper.start()
        stopper.join(2)
    print(_summary(result, written, cfg, time.perf_counter() - t0, release))
    if not cfg.streaming:
        _draw(cfg)
        failure = dead_letter_failure(result, cfg)
        if failure:
            print(f"error: {failure}", file=sys.stderr)
            return 3
    return 0


def runner_locality(options: PipelineOptions) -> tuple[str, bool]:
    """The runner's name, and whether it runs in this process (the CLI then
    waits for a streaming job and reads the noise key here)."""
    runner = str(options.get_all_options().get("runner") or "DirectRunner")
    local = any(r in runner for r in ("Direct", "FnApi", "Portable", "Prism"))
    # an embedded Flink ([local] or [auto], the default) runs in this process: wait
    # for it like for the DirectRunner, or a streaming job would die with the CLI
    flink_master = str(options.get_all_options().get("flink_master") or "[auto]")
    return runner, local or ("Flink" in runner and flink_master in ("[local]", "[auto]"))


def _split_values(args: list[str]) -> None:
    """``--name value`` -> ``--name=value`` in place for Beam flags that take a
    value (so that the value is not taken for a positional argument)."""
    i = 0
    while i < len(args) - 1:
        if args[i].startswith("--") and "=" not in args[i] and not args[i + 1].startswith("-"):
            args[i : i + 2] = [f"{args[i]}={args[i + 1]}"]
        i += 1


def _failed(error: BaseException | None) -> int:
    """A failed run: one line and exit status 1. The exception's message is not
    shown: Beam's messages can quote the element being processed, and a payload
    must never reach a log."""
    what = f" ({type(error).__name__})" if error is not None else ""
    print(
        f"pipeline failed{what}: the run stopped before it finished; its outputs are incomplete "
        "(the runner's own log has the step; no record is shown here)",
        file=sys.stderr,
    )
    return 1


def _draw(cfg: PipelineConfig) -> None:
    """A picture of the releases of a bounded run (``pipelines.plot``)."""
    from pipelines.plot import plot_releases

    for sink in cfg.sinks:
        if sink.type == "file" and sink.format == "jsonl" and "://" not in sink.path:
            try:
                path = plot_releases(sink.path)
            except ImportError:  # matplotlib is a dependency; a stripped install may lack it
                return
            if path is not None:
                print(f"picture:             {path}")
            return


if __name__ == "__main__":
    sys.exit(main())
