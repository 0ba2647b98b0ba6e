"""The main pipeline: ``python -m pipelines.release --config configs/NAME.yaml [Beam options]``.

With no arguments it runs ``configs/demo.yaml``: the bundled demo input on the
DirectRunner, releases under ``./output/``, and a summary at the end. Unknown
arguments are passed to Beam as pipeline options (``--runner``, ...).

Sources: JSON lines, CSV (with a header) and Avro files (globs); sinks: JSON
lines and Avro files (schemas in ``pipelines/schemas``). See ``docs/pipelines.md``.
"""

from __future__ import annotations

import argparse
import csv
import glob
import io
import json
import logging
import os
import sys
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from pipelines.config import ConfigError, PipelineConfig, load_config
from transforms.core.accounting import ZCDP, ApproxDP, PureDP
from transforms.records import DeadLetter, NoiseKey, UpdateRecord
from transforms.releases import (
    NAMESPACE,
    CountContinually,
    ReleaseFullyDynamic,
    ReleaseInsertionOnly,
    ReleaseTwoStreamBaseline,
    StreamSpec,
)

__all__ = ["main", "build_pipeline", "parse_line"]

_PROGRESS = logging.getLogger("dp_dynamic.progress")


class _StderrHandler(logging.Handler):
    """Progress lines to whatever ``sys.stderr`` is at the time of writing."""

    def emit(self, record):
        sys.stderr.write(f"progress: {record.getMessage()}\n")


DEFAULT_CONFIG = "configs/demo.yaml"
TRANSFORMS = {
    "fully_dynamic": ReleaseFullyDynamic,
    "insertion_only": ReleaseInsertionOnly,
    "two_stream_baseline": ReleaseTwoStreamBaseline,
    "continual_count": CountContinually,
}


class _ParseFn(beam.DoFn):
    """An input element (a JSON line, a CSV line, or an Avro record as a dict) ->
    UpdateRecord with its item encoded for the query sets.

    Unparseable lines, missing or mistyped fields and values outside a query's
    domain go to dead letters with a reason (the payload is never logged)."""

    DEAD = "dead_letters"

    PROGRESS_EVERY = 100_000

    def __init__(self, cfg: PipelineConfig, csv_header: tuple | None = None):
        self.cfg = cfg
        self.csv_header = csv_header
        self.read = Metrics.counter(NAMESPACE, "records_read")
        self.seen = 0

    def process(self, element):
        self.read.inc()
        self.seen += 1
        if self.seen % self.PROGRESS_EVERY == 0:  # progress on long runs (counts only, never payloads)
            _PROGRESS.info("records read by this worker: %d", self.seen)
        reason, rec = self._parse(element)
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

    def _parse(self, element):
        cfg = self.cfg
        d = self._record(element)
        if d is None:
            return "unparseable", None
        t = d.get(cfg.time_field)
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
        print(f"note: {where} is not set; using a fresh one-off noise key", file=sys.stderr)
    return NoiseKey.from_env(where)


def build_pipeline(p: beam.Pipeline, cfg: PipelineConfig, noise_key: NoiseKey):
    """Wire source -> parse -> release -> sinks into ``p``; returns the sink paths."""
    header = None
    if cfg.source_format == "avro":
        elements = p | "ReadFiles" >> beam.io.ReadFromAvro(cfg.source_path)
    elif cfg.source_format == "csv":
        header = _csv_header(cfg.source_path)
        elements = p | "ReadFiles" >> beam.io.ReadFromText(cfg.source_path, skip_header_lines=1)
    else:
        elements = p | "ReadFiles" >> beam.io.ReadFromText(cfg.source_path)
    parsed = elements | "Parse" >> beam.ParDo(_ParseFn(cfg, header)).with_outputs(_ParseFn.DEAD, main="records")
    spec = StreamSpec(
        streams=cfg.streams,
        tick_seconds=cfg.tick_seconds,
        origin=1.0 if cfg.ticks else 0.0,
        late_policy=cfg.late_policy,
        allowed_lateness=cfg.allowed_lateness,
    )
    transform_cls = TRANSFORMS[cfg.mechanism]
    if transform_cls is CountContinually:
        transform = CountContinually(cfg.dynamic_config(), spec, noise_key, counter=cfg.counter, horizon=cfg.horizon)
    else:
        transform = transform_cls(cfg.dynamic_config(), spec, noise_key)
    out = parsed.records | "Release" >> transform
    dead = (parsed[_ParseFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
    written = []
    for i, (_, path, fmt) in enumerate(cfg.sinks):
        base = Path(path)
        outputs = (
            ("releases", out["answers"], lambda r: _release_dict(cfg, r), "release"),
            ("nodes", out["nodes"], _node_dict, "node"),
            ("dead_letters", dead, _dead_dict, "dead_letter"),
        )
        for name, pcoll, to_dict, schema in outputs:
            prefix = str(base / name)
            records = pcoll | f"Format{name}{i}" >> beam.Map(to_dict)
            if fmt == "avro":
                records | f"Write{name}{i}" >> beam.io.WriteToAvro(
                    prefix, schema=_schema(schema), file_name_suffix=".avro"
                )
                written.append(prefix + "*.avro")
            else:
                (
                    records
                    | f"Json{name}{i}" >> beam.Map(json.dumps)
                    | f"Write{name}{i}" >> beam.io.WriteToText(prefix, file_name_suffix=".jsonl")
                )
                written.append(prefix + "*.jsonl")
    return written


def _summary(result, written, cfg: PipelineConfig, seconds: float) -> str:
    counters = {}
    for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
    dists = {d.key.metric.name: d.committed for d in result.metrics().query()["distributions"]}
    lines = [
        f"records read:        {counters.get('records_read', 0)}",
        f"updates accepted:    {counters.get('updates_accepted', 0)}",
    ]
    dead = {k[len("dead_letter_") :]: v for k, v in counters.items() if k.startswith("dead_letter_")}
    lines.append(f"dead-lettered:       {sum(dead.values())}" + (f"  {dict(sorted(dead.items()))}" if dead else ""))
    lines.append(f"segments closed:     {counters.get('segments_closed', 0)}")
    lines.append(f"releases written:    {counters.get('releases_emitted', 0)}")
    spent = dists.get("budget_spent_micro")
    if spent is not None and spent.count:
        ledger = cfg.dynamic_config().ledger_budget
        unit = "rho" if isinstance(ledger, ZCDP) else "epsilon"
        cap = ledger.rho if isinstance(ledger, ZCDP) else ledger.epsilon
        lines.append(
            f"budget spent:        {unit} {spent.max / 1e6:.4f} of {cap:.4f} per stream (update level; "
            f"privacy unit '{cfg.unit}', target {cfg.target_budget()})"
        )
    lines.append(f"output files:        {', '.join(written)}")
    lines.append(f"wall time:           {seconds:.1f} s")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.release", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=DEFAULT_CONFIG, help=f"YAML configuration (default {DEFAULT_CONFIG})")
    args, beam_args = ap.parse_known_args(argv)
    try:
        cfg = load_config(args.config)
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
    try:
        key = noise_key_for(cfg, local=local)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    if not _PROGRESS.handlers:
        _PROGRESS.addHandler(_StderrHandler())
        _PROGRESS.setLevel(logging.INFO)
    t0 = time.perf_counter()
    p = beam.Pipeline(options=options)
    written = build_pipeline(p, cfg, key)
    result = p.run()
    result.wait_until_finish()
    print(_summary(result, written, cfg, time.perf_counter() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
