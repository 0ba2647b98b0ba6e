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
import glob
import hashlib
import io
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

from pipelines.config import ConfigError, MissingTimeError, PipelineConfig, SinkConfig, load_config
from transforms.core.accounting import ZCDP, ApproxDP, PureDP
from transforms.core.noise import ReleaseIdentity
from transforms.records import DeadLetter, NoiseKey, UpdateRecord
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE, StreamSpec

__all__ = ["main", "build_pipeline", "parse_line"]

_PROGRESS = logging.getLogger("dp_dynamic.progress")


class _StderrHandler(logging.Handler):
    """Progress lines to whatever ``sys.stderr`` is at the time of writing."""

    def emit(self, record):
        sys.stderr.write(f"progress: {record.getMessage()}\n")


DEFAULT_CONFIG = "configs/demo.yaml"


class _ParseFn(beam.DoFn):
    """An input element (a JSON line, a CSV line, or an Avro record as a dict) ->
    UpdateRecord with its item encoded for the query sets.

    Unparseable lines, missing or mistyped fields and values outside a query's
    domain go to dead letters with a reason (the payload is never logged)."""

    DEAD = "dead_letters"

    PROGRESS_EVERY = 100_000

    def __init__(self, cfg: PipelineConfig, csv_header: tuple | None = None, time_from_timestamp: bool = False):
        self.cfg = cfg
        self.csv_header = csv_header
        # Pub/Sub with a timestamp attribute: the event time is the element's timestamp
        self.time_from_timestamp = time_from_timestamp
        self.read = Metrics.counter(NAMESPACE, "records_read")
        self.seen = 0

    def process(self, element, ts=beam.DoFn.TimestampParam):
        self.read.inc()
        self.seen += 1
        if self.seen % self.PROGRESS_EVERY == 0:  # progress on long runs (counts only, never payloads)
            _PROGRESS.info("records read by this worker: %d", self.seen)
        if isinstance(element, bytes):  # a Pub/Sub payload
            try:
                element = element.decode("utf-8")
            except UnicodeDecodeError:
                Metrics.counter(NAMESPACE, "dead_letter_unparseable").inc()
                yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter("unparseable", element.hex()))
                return
        reason, rec = self._parse(element, float(ts) if self.time_from_timestamp else None)
        if reason:
            Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
            yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(reason, _as_text(element)))
            return
        yield beam.window.TimestampedValue(rec, rec.event_time)

    def _record(self, element):
        """The element as a dict with the item fields under "item", or None."""
        if isinstance(element, dict):  # Avro
            return element
        if self.csv_header is not None:
            try:
                row = next(csv.reader(io.StringIO(element)))
            except (csv.Error, StopIteration):
                return None
            if len(row) != len(self.csv_header):
                return None
            d = dict(zip(self.csv_header, row))
            fixed = {self.cfg.time_field, "op", "id", "seq", self.cfg.stream_field, "stream"}
            out = {k: d[k] for k in d if k in fixed}
            item = {k: v for k, v in d.items() if k not in fixed and v != ""}
            if item:
                out["item"] = item
            for k in (self.cfg.time_field, "seq"):
                if k in out:
                    try:
                        out[k] = float(out[k]) if k != "seq" else int(out[k])
                    except ValueError:
                        out[k] = None
            return out
        try:
            d = json.loads(element)
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError):
            return None
        return d if isinstance(d, dict) else None

    def _parse(self, element, event_time=None):
        cfg = self.cfg
        d = self._record(element)
        if d is None:
            return "unparseable", None
        t = d.get(cfg.time_field) if event_time is None else event_time
        if isinstance(t, bool) or not isinstance(t, (int, float)):
            return "bad_time", None
        op = d.get("op")
        eid = d.get("id")
        if not isinstance(op, str):
            return "malformed", None
        if not isinstance(eid, (str, int)) or isinstance(eid, bool) or eid == "":
            return "malformed", None
        stream = "default"
        if cfg.stream_field:
            stream = d.get(cfg.stream_field, d.get("stream"))
            if not isinstance(stream, str):
                return "undeclared_stream", None
        item = None
        if op in ("insert", "upsert"):
            fields = d.get("item")
            if not isinstance(fields, dict):
                return "malformed", None
            idx = []
            for q in cfg.queries:
                v = q.encode(fields)
                if v is None:
                    return "item_out_of_range", None
                idx.append(v)
            item = tuple(idx)
        seq = d.get("seq", 0)
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
        return None, UpdateRecord(float(t), op, str(eid), item, stream, seq)


class _DeduplicateFn(beam.DoFn):
    """Drops repeated deliveries of one update (Pub/Sub delivers at least once).

    Keyed by the update id: the ``source.id_attribute`` attribute if configured
    and present, else the payload's ``update_id`` field, else the SHA-256 of the
    payload (a redelivery carries the same bytes). An id is remembered for
    ``dedup_seconds`` of event time after the update's timestamp."""

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
        except (ValueError, UnicodeDecodeError):
            uid = None
        if isinstance(uid, (str, int)) and not isinstance(uid, bool) and uid != "":
            return ("f:" + str(uid), msg.data)
        return ("h:" + hashlib.sha256(msg.data).hexdigest(), msg.data)


def _as_text(element) -> str:
    return element if isinstance(element, str) else json.dumps(element, default=str)


def _csv_header(pattern: str) -> tuple:
    files = sorted(glob.glob(pattern))
    if not files:
        raise ConfigError(f"source.path: no file matches {pattern}")
    with open(files[0], newline="") as fh:
        return tuple(next(csv.reader(fh)))


def parse_line(cfg: PipelineConfig, line: str):
    """(reason, UpdateRecord) for one JSON input line (for tests and tools)."""
    return _ParseFn(cfg)._parse(line)


def _release_dict(cfg: PipelineConfig, rel) -> dict:
    q = next(q for q in cfg.queries if q.name == rel.query)
    est = [x * q.scale for x in rel.estimate]
    if q.type in ("count", "histogram"):  # post-processing of released values: free
        if cfg.clamp:
            est = [max(x, 0.0) for x in est]
        if cfg.round_answers:
            est = [float(round(x)) for x in est]
    estimate = dict(zip(map(str, q.domain), est)) if q.type == "histogram" else est[0]
    bound = None if rel.error_bound is None else rel.error_bound * q.scale
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


def _dead_dict(d: DeadLetter) -> dict:
    rec = d.record
    if not isinstance(rec, str):
        rec = json.dumps(getattr(rec, "_asdict", lambda: repr(rec))(), default=list)
    return {"reason": d.reason, "record": rec}


SCHEMAS = Path(__file__).resolve().parent / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.avsc").read_text())


def _unit_spent(cfg: PipelineConfig, spent: tuple) -> dict:
    """The spend so far (in the ledger's currency), as a guarantee for the
    configured privacy unit."""
    if isinstance(cfg.dynamic_config().ledger_budget, ZCDP):
        b = cfg.privacy_unit.guarantee(ZCDP(spent[0]))
        return {"rho_spent": b.rho}
    b = cfg.privacy_unit.guarantee(ApproxDP(spent[0], spent[1]) if len(spent) == 2 else PureDP(spent[0]))
    out = {"epsilon_spent": b.epsilon}
    if isinstance(b, ApproxDP):
        out["delta_spent"] = b.delta
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
        messages = p | "ReadPubSub" >> beam.io.ReadFromPubSub(
            subscription=cfg.subscription, with_attributes=True, timestamp_attribute=cfg.timestamp_attribute
        )
        elements = (
            messages
            | "DedupKey" >> beam.Map(_DedupKey(cfg.id_attribute)).with_output_types(tuple[str, bytes])
            | "Deduplicate" >> beam.ParDo(_DeduplicateFn(cfg.dedup_seconds)).with_output_types(bytes)
        )
    elif cfg.source_format == "avro":
        elements = p | "ReadFiles" >> beam.io.ReadFromAvro(cfg.source_path)
    elif cfg.source_format == "csv":
        header = _csv_header(cfg.source_path)
        elements = p | "ReadFiles" >> beam.io.ReadFromText(cfg.source_path, skip_header_lines=1)
    else:
        elements = p | "ReadFiles" >> beam.io.ReadFromText(cfg.source_path)
    parse = _ParseFn(cfg, header, time_from_timestamp=cfg.source_type == "pubsub" and bool(cfg.timestamp_attribute))
    parsed = elements | "Parse" >> beam.ParDo(parse).with_outputs(_ParseFn.DEAD, main="records")
    spec = StreamSpec(
        streams=cfg.streams,
        tick_seconds=cfg.tick_seconds,
        origin=cfg.origin,
        late_policy=cfg.late_policy,
        allowed_lateness=cfg.allowed_lateness,
        end_time=cfg.end,
        every_ticks=cfg.every_ticks,
    )
    transform = ReleaseContinually(
        cfg.mechanism,
        cfg.dynamic_config(),
        spec,
        noise_key,
        options=cfg.mechanism_options(),
        release=release,
    )
    out = parsed.records | "Release" >> transform
    dead = (parsed[_ParseFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
    out["answers"] | "CountReleases" >> beam.ParDo(_CountReleasesFn())
    written = []
    for i, sink in enumerate(cfg.sinks):
        # the differentially private outputs go to sink.path; dead letters (raw
        # records: confidential operator data) to sink.confidential_path, apart
        outputs = (
            ("releases", out["answers"], lambda r: _release_dict(cfg, r), "release", sink.topic, sink.path),
            ("nodes", out["nodes"], _node_dict, "node", sink.nodes_topic, sink.path),
            ("dead_letters", dead, _dead_dict, "dead_letter", sink.dead_letter_topic, sink.confidential_path),
        )
        for name, pcoll, to_dict, schema, topic, base in outputs:
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

    from transforms.core.auto import plan
    from transforms.core.net_change import choose_counter

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
        "privacy_unit": cfg.unit if cfg.unit == "update" else f"entry (max {cfg.max_mutations_per_entry} mutations)",
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
                with open(f, newline="") as fh:
                    values = [r.get(field) for r in csv.DictReader(fh)]
            else:
                values = []
                with open(f) as fh:
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
            if t == t and abs(t) != float("inf"):
                lo = t if lo is None else min(lo, t)
                hi = t if hi is None else max(hi, t)
    return None if lo is None else (lo, hi)


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
        ledger = cfg.dynamic_config().ledger_budget
        unit = "rho" if isinstance(ledger, ZCDP) else "epsilon"
        cap = ledger.rho if isinstance(ledger, ZCDP) else ledger.epsilon
        lines.append(
            f"budget spent:        {unit} {spent.max / 1e6:.4f} of {cap:.4f} per stream (update level; "
            f"privacy unit '{cfg.unit}', target {cfg.target_budget()})"
        )
    lines.append(
        "operator data below: exact counts, NOT differentially private (confidential; never publish them "
        "beside the releases):"
    )
    lines += [
        f"records read:        {counters.get('records_read', 0)}",
        f"updates accepted:    {counters.get('updates_accepted', 0)}",
    ]
    dead = {k[len("dead_letter_") :]: v for k, v in counters.items() if k.startswith("dead_letter_")}
    lines.append(f"dead-lettered:       {sum(dead.values())}" + (f"  {dict(sorted(dead.items()))}" if dead else ""))
    dups = counters.get("duplicates_dropped", 0)
    if cfg.streaming:
        lines.append(f"duplicates dropped:  {dups}")
    closed = counters.get("segments_closed", 0)
    lines.append(
        f"segments closed:     {closed}" + ("  (not reported by this runner)" if released and not closed else "")
    )
    if cfg.streaming:
        lines.append(
            "note: the DirectRunner's streaming mode under-reports these metrics (Beam 2.77 counts only the "
            "first bundle of each step, see docs/beam.md); the outputs are complete"
        )
    lines.append(f"output files:        {', '.join(written)}")
    lines.append(f"wall time:           {seconds:.1f} s")
    return "\n".join(lines)


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
                f"\nthe input's event times run from {span[0]!r} to {span[1]!r} (shown for you to decide; the "
                "pipeline never uses them)"
            )
        print(f"configuration error: {e}{hint}", file=sys.stderr)
        return 2
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    if cfg.disable_noise:
        print(
            "WARNING: privacy.disable_noise is true: releases are EXACT and NOT differentially private. "
            "Use this for tests only.",
            file=sys.stderr,
        )
    options = PipelineOptions(beam_args or ["--runner=DirectRunner"])
    runner = str(options.get_all_options().get("runner") or "DirectRunner")
    local = any(r in runner for r in ("Direct", "FnApi", "Portable", "Prism"))
    if cfg.streaming:
        options.view_as(StandardOptions).streaming = True
    try:
        key = noise_key_for(cfg, local=local)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    if not _PROGRESS.handlers:
        _PROGRESS.addHandler(_StderrHandler())
        _PROGRESS.setLevel(logging.INFO)
    release = release_identity(cfg)
    try:
        check_and_write_manifest(cfg, release)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    print(f"release id: {release.release_id}", file=sys.stderr)
    t0 = time.perf_counter()
    p = beam.Pipeline(options=options)
    written = build_pipeline(p, cfg, key, release)
    result = p.run()
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
        stopper = threading.Thread(target=result.cancel, name="cancel-pipeline", daemon=True)
        stopper.start()
        stopper.join(2)
    else:
        result.wait_until_finish()
    print(_summary(result, written, cfg, time.perf_counter() - t0, release))
    if not cfg.streaming:
        _draw(cfg)
    return 0


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
