"""Beam YAML: our release and collector as transforms of a Beam YAML pipeline (``docs/beam_yaml.md``).

A Beam YAML pipeline names them through a provider (``configs/beam_yaml/providers.yaml``)::

    providers:
      - include: configs/beam_yaml/providers.yaml   # type python: this environment's installed package
    pipeline:
      transforms:
        - {type: ReadFromText, config: {path: data/demo.jsonl}}
        - type: DpDynamicRelease
          config: {config_path: configs/demo.yaml, error_handling: {output: dead_letters}}
        - {type: WriteToJson, input: DpDynamicRelease.releases, config: {path: out/releases}}
        - {type: WriteToJson, input: DpDynamicRelease.dead_letters, config: {path: out-confidential/dead}}

The input is what Beam's IO gives: Rows with one string field (``line``: a line of our update JSON, as
``ReadFromText`` gives it; ``line_field`` names another), or Rows with our update's fields (``ReadFromJson``,
``ReadFromKafka`` with a schema, ...: nested Rows become the ``item`` mapping, a null field is taken as absent).
Each element is parsed by the CLI's own parser (:class:`pipelines.parse.RecordParser`) and released by the CLI's
own transform (:class:`transforms.releases.ReleaseContinually`; with a second input ``queries`` under mechanism
pmwg, :class:`transforms.queries.AnswerQueries`), with the same configuration, noise key and release identity: the
releases are the CLI's, record for record (``tests/test_beam_yaml.py``).

The outputs are schema'd Rows (``pipelines/beam_yaml_rows.py``), so Beam's own ``WriteToJson`` / ``WriteToCsv``
write them: one Row per released number (:class:`ReleaseRow`: a histogram gives one Row per cell, ``cell`` naming it;
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
import sys
from typing import Any, Optional

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.beam_yaml_rows import (
    DeadLetterRow,
    EstimateRow,
    NodeRow,
    QueryAnswerRow,
    ReleaseRow,
    dead_letter_row,
    estimate_rows,
    node_row,
    query_answer_row,
    release_rows,
)
from pipelines.config import ConfigError, check_mechanism, parse_config
from pipelines.config.load import read_raw
from pipelines.manifest import noise_key_for, release_identity
from pipelines.outputs import dead_dict, node_dict, release_dict
from pipelines.parse import RecordParser
from pipelines.rr_collect import collector_spec, parse_reports, report_dead_dict, report_parser
from pipelines.runner import runner_locality
from pipelines.submit_queries import answer_dict, parse_query
from pipelines.wiring import parsed_outputs, stream_spec
from transforms.local_dp import CollectRandomizedResponses
from transforms.local_dp import release_dict as rr_release_dict
from transforms.queries import AnswerQueries
from transforms.records import DeadLetter, UpdateRecord
from transforms.releases import ReleaseContinually
from transforms.spec import NAMESPACE

__all__ = [
    "DpDynamicRelease",
    "DpDynamicCollectReports",
    "ReleaseRow",
    "EstimateRow",
    "DeadLetterRow",
    "NodeRow",
    "QueryAnswerRow",
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
        yield from parsed_outputs(parsed, self.DEAD, self.parser.dedup_field)


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
    """(noise key, local) as the CLI decides them for the pipeline's runner (``noise_key_for``), with the CLI's
    warning when the noise is disabled."""
    _, local = runner_locality(pcoll.pipeline.options)
    if cfg.disable_noise:
        print(
            "WARNING: privacy.disable_noise is true: releases are EXACT and NOT differentially private. "
            "Use this for tests only.",
            file=sys.stderr,
        )
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
        if self.error_output in ("releases", "nodes", "query_answers"):
            raise ConfigError(f"error_handling.output: {self.error_output!r} is the name of another output")

    def expand(self, pcolls):
        cfg = self.cfg
        pcoll, queries = _inputs(cfg, pcolls)
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
        release_args = dict(options=cfg.mechanism_options(), release=release, consistency=cfg.consistency())
        query_dead = []
        if queries is not None:  # streamed linear queries, answered by PMWG as of their arrival (docs/growing.md)
            asked = queries | "ParseQueries" >> beam.ParDo(_QueryParseFn(cfg, self.line_field)).with_outputs(
                _QueryParseFn.DEAD, main="queries"
            )
            transform = AnswerQueries(cfg.dynamic_config(), stream_spec(cfg), key, **release_args)
            out = (records, asked.queries) | "Release" >> transform
            query_dead = [asked[_QueryParseFn.DEAD]]
        else:
            transform = ReleaseContinually(cfg.mechanism, cfg.dynamic_config(), stream_spec(cfg), key, **release_args)
            out = records | "Release" >> transform
        releases = out["answers"] | "ReleaseRows" >> beam.FlatMap(
            lambda r: release_rows({**release_dict(cfg, r), "release_id": rid})
        ).with_output_types(ReleaseRow)
        result = {"releases": releases}
        if self.nodes:
            result["nodes"] = out["nodes"] | "NodeRows" >> beam.Map(
                lambda n: node_row({**node_dict(n), "release_id": rid})
            ).with_output_types(NodeRow)
        if queries is not None:
            result["query_answers"] = out["query_answers"] | "QueryAnswerRows" >> beam.Map(
                lambda a: query_answer_row({**answer_dict(cfg, a), "release_id": rid})
            ).with_output_types(QueryAnswerRow)
        dead = (parsed[_RowParseFn.DEAD], out["dead_letters"], *query_dead) | "AllDeadLetters" >> beam.Flatten()
        if self.error_output is None:
            dead | "FailOnDeadLetter" >> beam.ParDo(_FailOnDeadLetter())
        else:
            result[self.error_output] = dead | "DeadLetterRows" >> beam.Map(
                lambda d: dead_letter_row({**dead_dict(cfg, d), "release_id": rid})
            ).with_output_types(DeadLetterRow)
        return result


def _inputs(cfg, pcolls) -> tuple:
    """(the updates, the streamed queries or None) of the transform's input: one PCollection, or Beam YAML's
    named inputs ``{updates: ..., queries: ...}``."""
    if not isinstance(pcolls, dict):
        updates, queries = pcolls, None
    else:
        unknown = sorted(set(pcolls) - {"input", "updates", "queries"})
        if unknown or ("input" in pcolls) == ("updates" in pcolls):
            raise ConfigError(f"input: name the inputs updates (and queries); got {sorted(pcolls)}")
        updates, queries = pcolls.get("updates", pcolls.get("input")), pcolls.get("queries")
    if queries is not None and cfg.mechanism != "pmwg":
        raise ConfigError(f"input.queries: streamed queries are answered by mechanism.kind pmwg; got {cfg.mechanism}")
    if queries is None and cfg.queries_source is not None:
        raise ConfigError("queries_source: in Beam YAML the queries are the transform's input queries; give it")
    return updates, queries


class _QueryParseFn(beam.DoFn):
    """A Beam YAML Row -> QueryRecord (timestamped) or a dead letter (as the CLI's ``read_queries``)."""

    DEAD = "dead_letters"

    def __init__(self, cfg, line_field: str | None):
        self.cfg, self.line_field = cfg, line_field

    def process(self, element):
        data = _element(element, self.line_field)
        reason, q = parse_query(self.cfg, data)
        if reason:
            yield beam.pvalue.TaggedOutput(self.DEAD, DeadLetter(reason, data, "parse", None))
            return
        yield beam.window.TimestampedValue(q, q.event_time)


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
        spec = collector_spec(cfg)  # as the CLI's collector
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
                lambda d: dead_letter_row({**report_dead_dict(d, fmt), "release_id": rid})
            ).with_output_types(DeadLetterRow)
        return result
