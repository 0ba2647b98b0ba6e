"""Beam YAML: our release and collector as transforms of a Beam YAML pipeline (``docs/beam_yaml.md``).

A Beam YAML pipeline names them through a provider (``configs/beam_yaml/providers.yaml``)::

    providers:
      - include: configs/beam_yaml/providers.yaml   # type python: this environment's installed package
    pipeline:
      transforms:
        - {type: ReadFromText, config: {path: data/demo.jsonl}}
        - type: DpDynamicRelease
          config: {config_path: configs/demo.yaml, error_handling: {output: dead_letters}}
        - {type: WriteToJson, input: DpDynamicRelease, config: {path: out/releases}}

The input is what Beam's IO gives: Rows with one string field (``line``: a line of our update JSON, as
``ReadFromText`` gives it; ``line_field`` names another), or Rows with our update's fields (``ReadFromJson``,
``ReadFromKafka`` with a schema, ...: nested Rows become the ``item`` mapping, a null field is taken as absent).
Each element is parsed by the CLI's own parser (:class:`pipelines.parse.RecordParser`) and released by the CLI's
own transform (:class:`transforms.releases.ReleaseContinually`), with the same configuration, noise key and
release identity: the releases are the CLI's, record for record (``tests/test_beam_yaml.py``).

The outputs are schema'd Rows, so Beam's own ``WriteToJson`` / ``WriteToCsv`` / ``WriteToText`` write them:
one Row per released number (:class:`ReleaseRow`: a histogram gives one Row per cell, ``cell`` naming it;
``lower`` / ``upper`` = estimate -/+ error_bound), dead letters (:class:`DeadLetterRow`, confidential) on the
``error_handling`` output, node outputs (:class:`NodeRow`) on ``nodes`` when asked for.

What a YAML run does not get (it has no launcher of ours): no release manifest, no budget ledger (a
configuration with ``privacy.ledger`` is refused), no check that a sink folder holds another release, no atomic
publication of a bounded run's files, no run summary or exit codes 2 / 3. The refusals the CLI makes before a
run are made here when the pipeline is built (a ConfigError naming the key): a missing noise key on a remote
runner, an explicit ``privacy.noise_key.env`` that is unset, a key written into the pipeline file.
"""

# ruff: noqa: UP045 - Beam infers the Rows' schemas and the transforms' configuration fields from these annotations
# at run time: typing.Optional, which Beam 2.62 maps, not ``X | None``, and no ``from __future__ import annotations``

import copy
import json
from typing import Any, NamedTuple, Optional

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.config import ConfigError, check_mechanism, parse_config
from pipelines.config.load import read_raw
from pipelines.manifest import noise_key_for, release_identity
from pipelines.outputs import dead_dict, node_dict, release_dict
from pipelines.parse import RecordParser, raw_fields
from pipelines.rr_collect import parse_reports, report_parser
from pipelines.runner import runner_locality
from pipelines.wiring import stream_spec
from transforms.local_dp import CollectRandomizedResponses
from transforms.local_dp import release_dict as rr_release_dict
from transforms.records import DeadLetter, UpdateRecord
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE, StreamSpec

__all__ = [
    "DpDynamicRelease",
    "DpDynamicCollectReports",
    "ReleaseRow",
    "EstimateRow",
    "DeadLetterRow",
    "NodeRow",
    "release_rows",
    "estimate_rows",
    "dead_letter_row",
    "yaml_config",
    "TRANSFORMS",
]

#: the names a Beam YAML pipeline uses -> the fully qualified constructors (``configs/beam_yaml/providers.yaml``)
TRANSFORMS = {
    "DpDynamicRelease": "pipelines.beam_yaml.DpDynamicRelease",
    "DpDynamicCollectReports": "pipelines.beam_yaml.DpDynamicCollectReports",
}

#: what the configuration's ``source`` / ``sinks`` are when a YAML run's configuration leaves them out (Beam's IO
#: reads and writes; only ``source.format`` and ``source.dedup`` matter to the parse, and a file source requires
#: the public schedule ``time.origin`` / ``time.end`` of a bounded run)
_PLACEHOLDER_SOURCE = {"type": "file", "path": "beam-yaml-input", "format": "jsonl"}
_PLACEHOLDER_SINKS = [{"type": "file", "path": "beam-yaml-output/"}]


class ReleaseRow(NamedTuple):
    """One released number (a count, a sum, or one histogram cell) as a schema'd Row."""

    stream: str
    tick: int
    segment: int
    query: str
    cell: Optional[str]  # the histogram cell (its domain value as text); null for a count or a sum
    estimate: float
    error_bound: Optional[float]
    lower: Optional[float]  # estimate - error_bound (null without a bound)
    upper: Optional[float]  # estimate + error_bound
    beta: float
    epsilon_spent: Optional[float]
    delta_spent: Optional[float]
    rho_spent: Optional[float]
    update_level_spent: Optional[str]  # JSON text of the record's map (null where the record has none)
    as_of: Optional[str]
    release_id: str


class DeadLetterRow(NamedTuple):
    """A rejected input (confidential operator data: the record as received)."""

    reason: str
    record: str
    encoding: str
    stage: str
    stream: Optional[str]
    attributes: Optional[str]  # JSON text
    format: Optional[str]
    release_id: str


class NodeRow(NamedTuple):
    """A node output (``node.avsc``), its lists as JSON text."""

    stream: str
    query: str
    level: int
    index: int
    values: str
    cost: Optional[str]
    coordinates: str
    release_id: str


class EstimateRow(NamedTuple):
    """One cell of a local-DP collector's estimate (``transforms.local_dp.release_dict``, per cell)."""

    stream: str
    tick: int
    as_of: Optional[str]
    query: str
    cell: str
    estimate: float
    variance: float
    error_bound: Optional[float]  # for all cells at once (1 - beta)
    change: float
    change_variance: float
    change_bound: Optional[float]
    reports: int
    change_reports: int
    beta: float
    epsilon_entry: float  # the clients' guarantee per entry (the collector spends nothing)
    delta_entry: float
    trust: str
    release_id: str


for _row in (ReleaseRow, DeadLetterRow, NodeRow, EstimateRow):
    beam.coders.registry.register_coder(_row, beam.coders.RowCoder)


def release_rows(record: dict) -> list[ReleaseRow]:
    """The Rows of one release record as the CLI writes it (``pipelines.outputs.release_dict`` with its
    ``release_id``): one per number, histogram cells in the record's order."""
    est = record["estimate"]
    cells = list(est.items()) if isinstance(est, dict) else [(None, est)]
    bound = record.get("error_bound")
    uls = record.get("update_level_spent")
    rows = []
    for cell, value in cells:
        value = float(value)
        rows.append(
            ReleaseRow(
                stream=record["stream"],
                tick=int(record["tick"]),
                segment=int(record["segment"]),
                query=record["query"],
                cell=cell,
                estimate=value,
                error_bound=bound,
                lower=None if bound is None else value - bound,
                upper=None if bound is None else value + bound,
                beta=float(record["beta"]),
                epsilon_spent=record.get("epsilon_spent"),
                delta_spent=record.get("delta_spent"),
                rho_spent=record.get("rho_spent"),
                update_level_spent=None if uls is None else json.dumps(uls, sort_keys=True),
                as_of=record.get("as_of"),
                release_id=record["release_id"],
            )
        )
    return rows


def estimate_rows(record: dict) -> list[EstimateRow]:
    """The Rows of one local-DP estimate record as the CLI's collector writes it (with its ``release_id``): one per
    cell."""
    bound, change_bound = record.get("error_bound"), record.get("change_bound")
    return [
        EstimateRow(
            stream=record["stream"],
            tick=int(record["tick"]),
            as_of=record.get("as_of"),
            query=record["query"],
            cell=cell,
            estimate=float(value),
            variance=float(record["variance"][cell]),
            error_bound=None if bound is None else float(bound),
            change=float(record["change"][cell]),
            change_variance=float(record["change_variance"][cell]),
            change_bound=None if change_bound is None else float(change_bound),
            reports=int(record["reports"]),
            change_reports=int(record["change_reports"]),
            beta=float(record["beta"]),
            epsilon_entry=float(record["epsilon_entry"]),
            delta_entry=float(record["delta_entry"]),
            trust=record["trust"],
            release_id=record["release_id"],
        )
        for cell, value in record["estimate"].items()
    ]


def dead_letter_row(record: dict) -> DeadLetterRow:
    """A dead letter as the CLI writes it (``dead_dict`` with its ``release_id``) as a Row."""
    attrs = record.get("attributes")
    return DeadLetterRow(
        reason=record["reason"],
        record=record["record"],
        encoding=record.get("encoding") or "text",
        stage=record.get("stage") or "",
        stream=record.get("stream"),
        attributes=None if attrs is None else json.dumps(attrs, sort_keys=True),
        format=record.get("format"),
        release_id=record["release_id"],
    )


def _node_row(record: dict) -> NodeRow:
    cost = record.get("cost")
    return NodeRow(
        stream=record["stream"],
        query=record["query"],
        level=int(record["level"]),
        index=int(record["index"]),
        values=json.dumps(record["values"]),
        cost=None if cost is None else json.dumps(cost),
        coordinates=json.dumps(record["coordinates"]),
        release_id=record["release_id"],
    )


def yaml_config(config_path: str | None, config: Any, noise_key: Any = None, release_id: str | None = None):
    """The validated configuration of a YAML transform: a file in our format (``config_path``) or the same
    mapping inline (``config``), with ``privacy.noise_key`` / ``privacy.release_id`` set when given. A missing
    ``source`` / ``sinks`` is a placeholder (Beam's IO reads and writes). ConfigError naming the key."""
    if (config_path is None) == (config is None):
        raise ConfigError("config_path / config: give exactly one (a configuration file, or the mapping inline)")
    raw = read_raw(config_path) if config_path is not None else _plain(config)
    if not isinstance(raw, dict):
        raise ConfigError("config: the configuration must be a mapping (our configuration format, docs/pipelines.md)")
    raw = copy.deepcopy(raw)
    raw.setdefault("source", dict(_PLACEHOLDER_SOURCE))
    raw.setdefault("sinks", list(_PLACEHOLDER_SINKS))
    privacy = raw.setdefault("privacy", {})
    if noise_key is not None:
        if not isinstance(privacy, dict):
            raise ConfigError("privacy: must be a mapping")
        noise_key = _plain(noise_key)
        if not isinstance(noise_key, dict):  # the key itself in a pipeline file: a secret in plain text
            raise ConfigError(
                "noise_key: name where the workers read the key ({env: VAR}, {file: PATH} or {secret: NAME}); "
                "never write the key itself into a pipeline file"
            )
        privacy["noise_key"] = noise_key
    if release_id is not None:
        privacy["release_id"] = release_id
    cfg = parse_config(raw)
    check_mechanism(cfg)  # as load_config, the CLI's loader
    if cfg.privacy.ledger is not None:
        raise ConfigError(
            "privacy.ledger: a Beam YAML run cannot register its release in the budget ledger (no launcher of ours "
            "runs before it); launch it with python -m pipelines.release, or remove privacy.ledger "
            "(docs/beam_yaml.md)"
        )
    if cfg.queries_source is not None:
        raise ConfigError("queries_source: streamed queries are not available in Beam YAML yet (docs/beam_yaml.md)")
    return cfg


def _plain(value):
    """Rows (and mappings from YAML) as plain dicts and lists; a null field is absent."""
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _error_output(error_handling) -> str | None:
    if error_handling is None:
        return None
    error_handling = _plain(error_handling)
    if not isinstance(error_handling, dict) or not isinstance(error_handling.get("output"), str):
        raise ConfigError("error_handling: must be {output: NAME} (the output the dead letters go to)")
    return error_handling["output"]


class _RowParseFn(beam.DoFn):
    """A Beam YAML Row -> UpdateRecord (event-time timestamped), or a dead letter with a reason; the payload is
    never logged (as the CLI's parse step)."""

    DEAD = "dead_letters"

    def __init__(self, cfg, line_field: str | None):
        self.cfg, self.line_field = cfg, line_field
        self.parser = None
        self.read = Metrics.counter(NAMESPACE, "records_read")

    def setup(self):
        self.parser = RecordParser(self.cfg)

    def process(self, element):
        self.read.inc()
        if self.parser is None:
            self.setup()
        parsed = self.parser.parse(_element(element, self.line_field))
        if parsed.reason:
            Metrics.counter(NAMESPACE, f"dead_letter_{parsed.reason}").inc()
            yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(parsed.reason, parsed.raw, "parse", parsed.stream))
            return
        for name in parsed.clamped:
            Metrics.counter(NAMESPACE, f"sum_clamped_{name}").inc()
        rec = parsed.record
        if self.parser.dedup_field:
            yield beam.window.TimestampedValue((parsed.dedup_key, rec), rec.event_time)
        else:
            yield beam.window.TimestampedValue(rec, rec.event_time)


def _element(row, line_field: str | None):
    """What the parser takes: a line (str / bytes) or a dict of the record's fields."""
    if isinstance(row, (str, bytes, bytearray)):
        return row
    if line_field is not None:
        value = getattr(row, line_field, None)
        return value if isinstance(value, (str, bytes, bytearray)) else _plain(row)
    d = _plain(row)
    if isinstance(d, dict) and len(d) == 1 and isinstance(d.get("line"), (str, bytes)):
        return d["line"]  # ReadFromText's Row(line=...)
    return d


class _FirstOfEachId(beam.DoFn):
    """``source.dedup``: one update per update id (the first in a fixed order), as the CLI's file path."""

    def process(self, element):
        _, records = element
        records = sorted(records, key=lambda r: (r.event_time, r.seq, repr(r.raw)))
        if len(records) > 1:
            Metrics.counter(NAMESPACE, "duplicates_dropped").inc(len(records) - 1)
        yield beam.window.TimestampedValue(records[0], records[0].event_time)


class _FailOnDeadLetter(beam.DoFn):
    """Beam YAML's rule without ``error_handling``: a rejected input fails the pipeline (the reason only, never
    the record)."""

    def process(self, d):
        raise ValueError(
            f"dead letter ({d.reason}, stage {d.stage}): give the transform error_handling: {{output: NAME}} and "
            "write that output to a confidential place"
        )


def _check_key_location(cfg, pcoll) -> tuple:
    """(noise key, local) as the CLI decides them for the pipeline's runner (``noise_key_for``)."""
    _, local = runner_locality(pcoll.pipeline.options)
    return noise_key_for(cfg, local=local), local


class DpDynamicRelease(beam.PTransform):
    """The continual release of ``python -m pipelines.release`` as a Beam YAML transform.

    Input: Rows of update lines or update fields (the module's docstring). Outputs: ``releases`` (ReleaseRow,
    one per released number), ``nodes`` (NodeRow, with ``nodes: true``) and the dead letters (DeadLetterRow) on
    the ``error_handling`` output; without ``error_handling`` a rejected input fails the pipeline (Beam YAML's
    convention).

    Args:
      config_path: a configuration file in our format (``configs/demo.yaml``); relative to the working directory.
      config: the same configuration inline (a mapping); give it or config_path.
      noise_key: where the workers read the secret key, as ``privacy.noise_key`` ({env: VAR}, {file: PATH} or
        {secret: NAME}); default the configuration's (``DP_NOISE_KEY``). Never the key itself.
      release_id: continue or reproduce that release (``privacy.release_id``); default a new release (a new
        random id: a new budget).
      line_field: the input field holding a JSON line (default: a single field ``line``, else the Row's fields are
        the update's).
      nodes: also output the node outputs (``nodes``).
      error_handling: ``{output: NAME}``: the dead letters go to that output.
    """

    def __init__(
        self,
        config_path: Optional[str] = None,
        config: Optional[Any] = None,
        noise_key: Optional[Any] = None,
        release_id: Optional[str] = None,
        line_field: Optional[str] = None,
        nodes: Optional[bool] = None,
        error_handling: Optional[Any] = None,
    ):
        super().__init__()
        self.cfg = yaml_config(config_path, config, noise_key, release_id)
        if self.cfg.mechanism_spec.input_kind == "reports":
            raise ConfigError(
                "mechanism.kind: randomized_response collects client reports: use the transform DpDynamicCollectReports"
            )
        self.line_field, self.nodes = line_field, bool(nodes)
        self.error_output = _error_output(error_handling)
        if self.error_output in ("releases", "nodes"):
            raise ConfigError(f"error_handling.output: {self.error_output!r} is the name of another output")

    def expand(self, pcoll):
        cfg = self.cfg
        key, _ = _check_key_location(cfg, pcoll)
        release = release_identity(cfg)  # fixed in the graph: a retry redraws the same noise
        rid = release.release_id
        parsed = pcoll | "Parse" >> beam.ParDo(_RowParseFn(cfg, self.line_field)).with_outputs(
            _RowParseFn.DEAD, main="records"
        )
        records = parsed.records
        if cfg.source.dedup_field:
            records = (
                records
                | "GroupByUpdateId" >> beam.GroupByKey()
                | "DropDuplicates" >> beam.ParDo(_FirstOfEachId()).with_output_types(UpdateRecord)
            )
        transform = ReleaseContinually(
            cfg.mechanism,
            cfg.dynamic_config(),
            stream_spec(cfg),
            key,
            options=cfg.mechanism_options(),
            release=release,
            consistency=cfg.consistency(),
        )
        out = records | "Release" >> transform
        releases = out["answers"] | "ReleaseRows" >> beam.FlatMap(
            lambda r: release_rows({**release_dict(cfg, r), "release_id": rid})
        ).with_output_types(ReleaseRow)
        result = {"releases": releases}
        if self.nodes:
            result["nodes"] = out["nodes"] | "NodeRows" >> beam.Map(
                lambda n: _node_row({**node_dict(n), "release_id": rid})
            ).with_output_types(NodeRow)
        dead = (parsed[_RowParseFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
        if self.error_output is None:
            dead | "FailOnDeadLetter" >> beam.ParDo(_FailOnDeadLetter())
        else:
            result[self.error_output] = dead | "DeadLetterRows" >> beam.Map(
                lambda d: dead_letter_row({**dead_dict(cfg, d), "release_id": rid})
            ).with_output_types(DeadLetterRow)
        return result


class _ReportParseFn(beam.DoFn):
    """A Beam YAML Row -> ReportRecord (event-time timestamped) or a dead letter (the collector's parse)."""

    DEAD = "dead_letters"

    def __init__(self, cfg, line_field: str | None):
        self.cfg, self.line_field = cfg, line_field
        self.parser = None
        self.read = Metrics.counter(NAMESPACE, "records_read")

    def setup(self):
        self.parser = report_parser(self.cfg)

    def process(self, element):
        if self.parser is None:
            self.setup()
        for reason, value in parse_reports(self.parser, _element(element, self.line_field)):
            self.read.inc()
            if reason:
                Metrics.counter(NAMESPACE, f"dead_letter_{reason}").inc()
                yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(reason, value, "parse", None))
                continue
            yield beam.window.TimestampedValue(value, value.event_time)


def _report_dead_dict(d: DeadLetter, fmt: str) -> dict:
    """A collector's dead letter as the CLI's collector writes it (the report as received)."""
    rec = d.record
    if hasattr(rec, "_asdict"):
        rec = rec.raw if rec.raw is not None else json.dumps({k: v for k, v in rec._asdict().items() if k != "raw"})
    if isinstance(rec, dict):
        rec = json.dumps(rec, default=str)
    return {"reason": d.reason, **raw_fields(rec), "stage": d.stage or "", "stream": d.stream, "format": fmt}


class DpDynamicCollectReports(beam.PTransform):
    """The local-DP collector (``mechanism.kind: randomized_response``) of ``python -m pipelines.release`` as a
    Beam YAML transform: the clients randomized their reports, the collector adds no noise and needs no key.

    Input: Rows of report lines or report fields (as DpDynamicRelease's). Outputs: ``estimates`` (EstimateRow,
    one per cell per period) and the dead letters (DeadLetterRow) on the ``error_handling`` output; without
    ``error_handling`` a rejected report fails the pipeline.

    Args:
      config_path: a configuration file in our format with ``mechanism.kind: randomized_response``.
      config: the same configuration inline (a mapping); give it or config_path.
      release_id: the id the outputs carry (default a new random id).
      line_field: the input field holding a JSON line (default: a single field ``line``).
      error_handling: ``{output: NAME}``: the dead letters go to that output.
    """

    def __init__(
        self,
        config_path: Optional[str] = None,
        config: Optional[Any] = None,
        release_id: Optional[str] = None,
        line_field: Optional[str] = None,
        error_handling: Optional[Any] = None,
    ):
        super().__init__()
        self.cfg = yaml_config(config_path, config, None, release_id)
        if self.cfg.mechanism_spec.input_kind != "reports":
            raise ConfigError(
                f"mechanism.kind: {self.cfg.mechanism} releases updates with noise: use the transform DpDynamicRelease"
            )
        self.line_field = line_field
        self.error_output = _error_output(error_handling)
        if self.error_output == "estimates":
            raise ConfigError("error_handling.output: 'estimates' is the name of another output")

    def expand(self, pcoll):
        cfg = self.cfg
        rid = release_identity(cfg).release_id
        parsed = pcoll | "ParseReports" >> beam.ParDo(_ReportParseFn(cfg, self.line_field)).with_outputs(
            _ReportParseFn.DEAD, main="reports"
        )
        spec = StreamSpec(
            streams=cfg.streams,
            tick_seconds=cfg.tick_seconds,
            origin=cfg.origin,
            allowed_lateness=cfg.allowed_lateness,
            end_time=cfg.end,
        )  # as the CLI's collector (pipelines.rr_collect.build_collector)
        out = parsed.reports | "Collect" >> CollectRandomizedResponses(
            cfg.dynamic_config(), spec, cfg.mechanism_options()
        )
        q = cfg.queries[0]
        result = {
            "estimates": out["estimates"]
            | "EstimateRows"
            >> beam.FlatMap(
                lambda r: estimate_rows({**rr_release_dict(r, q.domain, q.name, spec), "release_id": rid})
            ).with_output_types(EstimateRow)
        }
        dead = (parsed[_ReportParseFn.DEAD], out["dead_letters"]) | "AllDeadLetters" >> beam.Flatten()
        fmt = cfg.source.dead_letter_format
        if self.error_output is None:
            dead | "FailOnDeadLetter" >> beam.ParDo(_FailOnDeadLetter())
        else:
            result[self.error_output] = dead | "DeadLetterRows" >> beam.Map(
                lambda d: dead_letter_row({**_report_dead_dict(d, fmt), "release_id": rid})
            ).with_output_types(DeadLetterRow)
        return result
