"""YAML configuration of a release pipeline, parsed at the edge into validated models.

Every invalid setting raises :class:`ConfigError` before any pipeline is built, with one line naming the key
and, where there is a choice, the valid choices (and the nearest one to a misspelt name). The sections are
pydantic models (``sections``, ``kinds``, ``queries``; the sources and sinks in ``pipelines.io``), their JSON
Schema is ``python -m pipelines.config --schema``. The core never reads YAML:
:meth:`PipelineConfig.dynamic_config` turns this into ``transforms.core.DynamicConfig``.
"""

from pipelines.config.kinds import MECHANISMS, PROFILES
from pipelines.config.launch import check_environment, check_kafka_runner, check_runner
from pipelines.config.load import Override, apply_overrides, load_config, parse_config
from pipelines.config.mechanism import check_mechanism
from pipelines.config.pipeline import PipelineConfig
from pipelines.config.queries import QUERY_TYPES, SUM_BUCKETS, QueryConfig
from pipelines.config.sections import EPSILON_RANGE, RHO_RANGE, UNITS
from pipelines.io import SinkConfig, SourceConfig
from pipelines.io.files import csv_header_of, source_files
from pipelines.model import MAX_SPAN_SECONDS, ConfigError, MissingTimeError

__all__ = [
    "ConfigError",
    "MissingTimeError",
    "PipelineConfig",
    "QueryConfig",
    "SinkConfig",
    "SourceConfig",
    "Override",
    "apply_overrides",
    "check_environment",
    "check_kafka_runner",
    "check_mechanism",
    "check_runner",
    "csv_header_of",
    "load_config",
    "parse_config",
    "source_files",
    "EPSILON_RANGE",
    "MAX_SPAN_SECONDS",
    "MECHANISMS",
    "PROFILES",
    "QUERY_TYPES",
    "RHO_RANGE",
    "SUM_BUCKETS",
    "UNITS",
]
