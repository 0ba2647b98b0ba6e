"""The collector pipeline of ``mechanism.kind: randomized_response``.

``python -m pipelines.release --config configs/local_dp.yaml`` lands here: the
same sources as the main pipeline (JSON lines, CSV, Avro files; Pub/Sub),
reports parsed and validated, the unbiased estimates per period written as
JSON lines, dead letters (reason and the report as received) under the sink's
confidential folder. No noise and no noise key: the clients randomized their
reports (local DP, ``docs/local_dp.md``).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

from pipelines.config import ConfigError, PipelineConfig, source_files
from pipelines.parse import raw_fields
from transforms.core.families.local_dp import design_for
from transforms.local_dp import CollectRandomizedResponses, ReportParser, release_dict
from transforms.records import DeadLetter
from transforms.spec import NAMESPACE, StreamSpec

__all__ = ["check_local_dp", "build_collector", "run_collector"]


def check_local_dp(cfg: PipelineConfig) -> None:
    """The settings of a randomized-response collector, with what to do instead."""
    if cfg.rho is not None:
        raise ConfigError(
            "privacy.rho: randomized_response is (epsilon, delta) local DP per entry; give privacy.epsilon "
            "(and privacy.delta)"
        )
    if cfg.unit != "update":
        raise ConfigError(
            "privacy.unit: randomized_response states its guarantee per entry already; remove privacy.unit and "
            "privacy.max_mutations_per_entry and set mechanism.max_mutations (or constraint: time_bounded with "
            "bound_ticks)"
        )
    if cfg.disable_noise:
        raise ConfigError("privacy.disable_noise: the collector adds no noise (the clients randomize); remove it")
    if cfg.profile != "tuned":
        raise ConfigError("mechanism.profile: does not apply to randomized_response; remove it")
    if cfg.every_ticks != 1:
        raise ConfigError(
            "release.every_ticks: randomized_response releases every tick (a tick is a reporting period); "
            "make time.tick_seconds the period instead"
        )
    if cfg.round_answers or getattr(cfg, "consistent", False):
        raise ConfigError(
            "release.round / release.consistent: randomized_response releases unbiased estimates (they can be "
            "negative); rounding or clamping would bias them. Remove them"
        )
    if cfg.dedup_field:
        raise ConfigError(
            "source.dedup: the collector keeps one report per (entry, layer, period) itself; remove source.dedup"
        )
    if len(cfg.queries) != 1 or cfg.queries[0].type != "histogram":
        raise ConfigError(
            "queries: randomized_response takes exactly one histogram query: its field is not read (reports "
            "carry old and new answers), its domain is the answer domain, e.g. "
            "[{name: answer, type: histogram, field: answer, domain: [A, B, C]}]"
        )
    try:
        design = design_for(cfg.dynamic_config(), cfg.mechanism_options())
    except (TypeError, ValueError) as e:
        raise ConfigError(f"mechanism: {e}") from None
    if design.keep_weight <= design.other_weight * 1.0001:
        raise ConfigError(
            f"privacy.epsilon: {cfg.epsilon:g} over {design.fold} reports per entry leaves each report almost no "
            "signal; raise epsilon or lower max_mutations / layers"
        )


def _check_environment(cfg: PipelineConfig) -> None:
    if cfg.source_type == "file":
        for path in source_files(cfg.source_path):
            if "://" not in path:
                try:
                    with open(path, "rb") as fh:
                        fh.read(1)
                except OSError as e:
                    raise ConfigError(f"source.path: cannot read {path} ({e.strerror})") from None
    for i, sink in enumerate(cfg.sinks):
        if sink.type == "file" and "://" not in sink.path:
            for key, folder in (("path", sink.path), ("confidential_path", sink.confidential_path)):
                try:
                    Path(folder).mkdir(parents=True, exist_ok=True)
                except OSError as e:
                    raise ConfigError(f"sinks[{i}].{key}: cannot write to {folder} ({e.strerror})") from None


class _ParseReportFn(beam.DoFn):
    DEAD = "dead_letters"

    def __init__(self, cfg: PipelineConfig, csv_header=None):
        q = cfg.queries[0]
        self.args = (cfg.time_field, q.domain, cfg.stream_field, csv_header)
        self.read = Metrics.counter(NAMESPACE, "records_read")

    def setup(self):
        self.parser = ReportParser(*self.args)

    def process(self, element):
        for one in _reports_of(element):
            self.read.inc()
            reason, rec = self.parser.parse(one)
            if reason:
                Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
                raw = (one.data, one.attributes) if hasattr(one, "data") else one
                yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(reason, raw, "parse", None))
                continue
            yield beam.window.TimestampedValue(rec, rec.event_time)


def _reports_of(element):
    """The reports of one input element: a Pub/Sub message may carry several,
    one JSON object per line (a gateway's batch; each line is parsed, and
    dead-lettered, on its own, with the message's attributes). Files are read
    a line at a time already."""
    data = getattr(element, "data", None)
    if not isinstance(data, (bytes, bytearray)) or b"\n" not in data.strip():
        return (element,)
    return tuple(element._replace(data=line) for line in bytes(data).split(b"\n") if line.strip())


def _dead_dict(d: DeadLetter, fmt: str) -> dict:
    rec = d.record
    if hasattr(rec, "_asdict"):
        rec = rec.raw if rec.raw is not None else json.dumps({k: v for k, v in rec._asdict().items() if k != "raw"})
    if isinstance(rec, dict):
        rec = json.dumps(rec, default=str)
    return {"reason": d.reason, **raw_fields(rec), "stage": d.stage or "", "stream": d.stream, "format": fmt}


def build_collector(p: beam.Pipeline, cfg: PipelineConfig) -> list[str]:
    """Wire source -> parse -> collector -> sinks into ``p``; returns the outputs."""
    from pipelines.release import _csv_header, _DeduplicateFn, _PubsubElementFn, _write_files

    header = None
    if cfg.source_type == "pubsub":
        messages = p | "ReadPubSub" >> beam.io.ReadFromPubSub(subscription=cfg.subscription, with_attributes=True)
        elements = (
            messages
            | "DedupKey" >> beam.ParDo(_PubsubElementFn(cfg.id_attribute))
            | "Deduplicate" >> beam.ParDo(_DeduplicateFn(cfg.dedup_seconds))
        )
    elif cfg.source_format == "avro":
        elements = p | "ReadFiles" >> beam.io.ReadFromAvro(cfg.source_path)
    elif cfg.source_format == "csv":
        header = _csv_header(cfg.source_path)
        elements = p | "ReadFiles" >> beam.io.ReadFromText(
            cfg.source_path, skip_header_lines=1, coder=beam.coders.BytesCoder()
        )
    else:
        elements = p | "ReadFiles" >> beam.io.ReadFromText(cfg.source_path, coder=beam.coders.BytesCoder())
    parsed = elements | "ParseReports" >> beam.ParDo(_ParseReportFn(cfg, header)).with_outputs(
        _ParseReportFn.DEAD, main="reports"
    )
    spec = StreamSpec(
        streams=cfg.streams,
        tick_seconds=cfg.tick_seconds,
        origin=cfg.origin,
        allowed_lateness=cfg.allowed_lateness,
        end_time=cfg.end,
    )
    out = parsed.reports | "Collect" >> CollectRandomizedResponses(cfg.dynamic_config(), spec, cfg.mechanism_options())
    dead = (parsed[_ParseReportFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
    q = cfg.queries[0]
    fmt = "pubsub" if cfg.streaming else cfg.source_format
    written = []
    for i, sink in enumerate(cfg.sinks):
        outputs = (
            ("releases", out["estimates"], lambda r: release_dict(r, q.domain, q.name, spec), sink.topic, sink.path),
            ("dead_letters", dead, lambda d: _dead_dict(d, fmt), sink.dead_letter_topic, sink.confidential_path),
        )
        for name, pcoll, to_dict, topic, base in outputs:
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
            fake = type("S", (), {"format": "jsonl", "window_seconds": sink.window_seconds})()
            written.append(_write_files(records, fake, base, name, "release", f"{name}{i}", cfg.streaming))
    return written


def run_collector(cfg: PipelineConfig, beam_args: list[str], duration: float | None = None) -> int:
    """Run the collector (the CLI's ``main`` for report mechanisms). A
    streaming run on a local runner runs until interrupted, or for
    ``duration`` seconds (``--duration``), then prints the summary; on a remote
    runner it is submitted and runs until cancelled."""
    from pipelines.release import _failed, _with_flink_checkpoint_args, runner_locality

    try:
        _check_environment(cfg)
    except ConfigError as e:
        print(f"configuration error: {e}", file=sys.stderr)
        return 2
    options = PipelineOptions(beam_args or ["--runner=DirectRunner"])
    runner, local = runner_locality(options)
    options = _with_flink_checkpoint_args(options, beam_args, runner)
    if cfg.streaming:
        options.view_as(StandardOptions).streaming = True
    design = design_for(cfg.dynamic_config(), cfg.mechanism_options())
    t0 = time.perf_counter()
    p = beam.Pipeline(options=options)
    written = build_collector(p, cfg)
    try:
        result = p.run()
        if not cfg.streaming or (local and duration is None):
            result.wait_until_finish()
    except KeyboardInterrupt:
        result = None
    except Exception as e:  # noqa: BLE001 - any failure of the run: one line, exit 1
        return _failed(e)
    if cfg.streaming and not local:
        print(f"streaming job submitted to {runner}; it runs until cancelled. Outputs: {', '.join(written)}")
        return 0
    if cfg.streaming and duration is not None:
        try:
            time.sleep(duration)
        except KeyboardInterrupt:
            pass
        if "FAILED" in str(getattr(result, "state", "") or ""):
            return _failed(None)
        # the DirectRunner's Pub/Sub reader blocks in a pull for up to 30 s: stop it in the background
        stopper = threading.Thread(target=result.cancel, name="cancel-collector", daemon=True)
        stopper.start()
        stopper.join(2)
    if result is None:
        return 0
    counters = {}
    for c in result.metrics().query(MetricsFilter().with_namespace(NAMESPACE))["counters"]:
        counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
    dead = {k[len("dead_letter_") :]: v for k, v in counters.items() if k.startswith("dead_letter_") and v}
    eps, delta = design.entry_guarantee()
    print(
        "\n".join(
            [
                f"mechanism:           randomized_response ({cfg.mechanism_options().aggregation}; layers "
                f"{design.layers}, fold {design.fold}): local DP, the collector adds no noise",
                f"clients' guarantee:  ({eps:.4g}, {delta:.3g}) per entry over the survey; each report "
                f"({design.epsilon:.4g}, {design.delta:.3g}), p = {float(design.p):.4f}, q = {float(design.q):.5f}",
                f"releases written:    {counters.get('releases_written', 0)}",
                f"reports read:        {counters.get('records_read', 0)}",
                f"reports accepted:    {counters.get('reports_accepted', 0)}",
                f"dead-lettered:       {sum(dead.values())}" + (f"  {dict(sorted(dead.items()))}" if dead else ""),
                f"output files:        {', '.join(written)}",
                f"wall time:           {time.perf_counter() - t0:.1f} s",
            ]
        )
    )
    read = counters.get("records_read", 0)
    if read and not counters.get("reports_accepted", 0):
        print("error: dead letters: the run rejected every report it read", file=sys.stderr)
        return 3
    return 0
