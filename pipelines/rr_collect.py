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
import time

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.config import PipelineConfig, check_environment, check_runner
from pipelines.config.local_dp import check_local_dp
from pipelines.manifest import Publication, release_identity
from pipelines.parse import raw_fields
from pipelines.runner import cancelled, failed, pipeline_options, run
from pipelines.summary import counters
from pipelines.wiring import write_outputs
from transforms.core.families.local_dp import design_for
from transforms.local_dp import CollectRandomizedResponses, ReportParser, release_dict
from transforms.records import DeadLetter
from transforms.spec import NAMESPACE, StreamSpec

__all__ = [
    "check_local_dp",
    "build_collector",
    "run_collector",
    "report_parser",
    "parse_reports",
    "report_dead_dict",
    "collector_spec",
]


def report_parser(cfg: PipelineConfig, csv_header=None) -> ReportParser:
    """The parser of the configured collector's reports (its histogram query's domain is the answer domain)."""
    return ReportParser(cfg.time_field, cfg.queries[0].domain, cfg.stream_field, csv_header)


def parse_reports(parser: ReportParser, element) -> list[tuple[str | None, object]]:
    """``(None, ReportRecord)`` or ``(reason, the report as received)`` for each report of one input element:
    a Pub/Sub message may carry several, one JSON object per line (a gateway's batch; each line is parsed, and
    dead-lettered, on its own, with the message's attributes). Files are read a line at a time already."""
    out = []
    for one in _reports_of(element):
        reason, rec = parser.parse(one)
        if reason:
            out.append((reason, (one.data, one.attributes) if hasattr(one, "data") else one))
        else:
            out.append((None, rec))
    return out


class _ParseReportFn(beam.DoFn):
    DEAD = "dead_letters"

    def __init__(self, cfg: PipelineConfig, csv_header=None):
        self.cfg, self.csv_header = cfg, csv_header
        self.read = Metrics.counter(NAMESPACE, "records_read")

    def setup(self):
        self.parser = report_parser(self.cfg, self.csv_header)

    def process(self, element):
        for reason, value in parse_reports(self.parser, element):
            self.read.inc()
            if reason:
                Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
                yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(reason, value, "parse", None))
                continue
            yield beam.window.TimestampedValue(value, value.event_time)


def _reports_of(element):
    data = getattr(element, "data", None)
    if not isinstance(data, (bytes, bytearray)) or b"\n" not in data.strip():
        return (element,)
    return tuple(element._replace(data=line) for line in bytes(data).split(b"\n") if line.strip())


def collector_spec(cfg: PipelineConfig) -> StreamSpec:
    """The collector's time and stream layout (no periods, no late policy: it publishes at the end)."""
    return StreamSpec(
        streams=cfg.streams,
        tick_seconds=cfg.tick_seconds,
        origin=cfg.origin,
        allowed_lateness=cfg.allowed_lateness,
        end_time=cfg.end,
    )


def report_dead_dict(d: DeadLetter, fmt: str) -> dict:
    """A collector's dead letter as written (the report as received); the Beam YAML collector writes the same."""
    rec = d.record
    if hasattr(rec, "_asdict"):
        rec = rec.raw if rec.raw is not None else json.dumps({k: v for k, v in rec._asdict().items() if k != "raw"})
    if isinstance(rec, dict):
        rec = json.dumps(rec, default=str)
    return {"reason": d.reason, **raw_fields(rec), "stage": d.stage or "", "stream": d.stream, "format": fmt}


def build_collector(p: beam.Pipeline, cfg: PipelineConfig, release_id: str | None = None) -> list[str]:
    """Wire source -> parse -> collector -> sinks into ``p``; returns the outputs. ``release_id``: every record
    carries it."""
    read = cfg.source.read(p, cfg)
    parsed = read.pcoll | "ParseReports" >> beam.ParDo(_ParseReportFn(cfg, read.csv_header)).with_outputs(
        _ParseReportFn.DEAD, main="reports"
    )
    spec = collector_spec(cfg)
    out = parsed.reports | "Collect" >> CollectRandomizedResponses(cfg.dynamic_config(), spec, cfg.mechanism_options())
    dead = (parsed[_ParseReportFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
    q = cfg.queries[0]
    fmt = cfg.source.dead_letter_format
    outputs = {
        "releases": (out["estimates"], lambda r: release_dict(r, q.domain, q.name, spec)),
        "dead_letters": (dead, lambda d: report_dead_dict(d, fmt)),
    }
    # the estimates have no Avro schema: JSON lines
    return write_outputs(cfg, outputs, avro=False, release_id=release_id)


def run_collector(
    cfg: PipelineConfig, beam_args: list[str], duration: float | None = None, overwrite: bool = False
) -> int:
    """Run the collector (the CLI's ``main`` for report mechanisms); returns the exit status (a ConfigError
    before the run starts). Its outputs carry a release id and a release manifest like a release's, into folders
    checked and (a bounded run) staged the same way (``pipelines.manifest.Publication``; ``overwrite``: the
    CLI's ``--overwrite``). A streaming run on a local runner runs until interrupted, or for ``duration`` seconds
    (``--duration``), then prints the summary; on a remote runner it is submitted and runs until cancelled."""
    options, runner, local = pipeline_options(beam_args, cfg.streaming)
    check_runner(cfg, runner)
    check_environment(cfg, local=local, required=(), noise_key=False)  # reports: the parse step checks them
    design = design_for(cfg.dynamic_config(), cfg.mechanism_options())
    release = release_identity(cfg)
    out = Publication(cfg, release, overwrite=overwrite)
    print(f"release id: {release.release_id}", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        p = beam.Pipeline(options=options)
        written = build_collector(p, out.cfg, release.release_id)
        done = run(p, streaming=cfg.streaming, local=local, duration=duration)
    except BaseException:
        out.discard()
        raise
    if done.cancelled:
        out.discard()
        return cancelled()
    if done.exit is not None:
        out.discard()
        return done.exit
    if done.submitted:
        print(f"streaming job submitted to {runner}; it runs until cancelled. Outputs: {', '.join(written)}")
        return 0
    if done.result is None:
        return 0
    out.commit()
    written = [out.final_name(w) for w in written]
    counts = counters(done.result)
    dead = {k[len("dead_letter_") :]: v for k, v in counts.items() if k.startswith("dead_letter_") and v}
    eps, delta = design.entry_guarantee()
    print(
        "\n".join(
            [
                f"mechanism:           randomized_response ({cfg.mechanism_options().aggregation}; layers "
                f"{design.layers}, fold {design.fold}): local DP, the collector adds no noise",
                f"clients' guarantee:  ({eps:.4g}, {delta:.3g}) per entry over the survey; each report "
                f"({design.epsilon:.4g}, {design.delta:.3g}), p = {float(design.p):.4f}, q = {float(design.q):.5f}",
                f"releases written:    {counts.get('releases_written', 0)}",
                f"reports read:        {counts.get('records_read', 0)}",
                f"reports accepted:    {counts.get('reports_accepted', 0)}",
                f"dead-lettered:       {sum(dead.values())}" + (f"  {dict(sorted(dead.items()))}" if dead else ""),
                f"output files:        {', '.join(written)}",
                f"wall time:           {time.perf_counter() - t0:.1f} s",
            ]
        )
    )
    if done.stream_failed:
        return failed(None)
    read = counts.get("records_read", 0)
    if read and not counts.get("reports_accepted", 0):
        print("error: dead letters: the run rejected every report it read", file=sys.stderr)
        return 3
    return 0
