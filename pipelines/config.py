"""YAML configuration of a release pipeline, parsed at the edge into validated dataclasses.

Every invalid setting raises :class:`ConfigError` before any pipeline is built,
with a message naming the key and, where there is a choice, the valid choices.
The core never reads YAML: :meth:`PipelineConfig.dynamic_config` turns this into
``transforms.core.DynamicConfig``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from transforms.core import mechanisms as registry
from transforms.core.config import DynamicConfig, QuerySet
from transforms.core.continual.consistency import Consistency
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PrivacyUnit, PureDP
from transforms.records import NoiseKey
from transforms.spec import LATE_POLICIES, TIME_RANGE

__all__ = [
    "ConfigError",
    "PipelineConfig",
    "SinkConfig",
    "check_environment",
    "check_kafka_runner",
    "load_config",
    "parse_config",
    "source_files",
]

MECHANISMS = registry.names()  # the choices come from the mechanism registry
PROFILES = ("paper", "tuned", "tight")  # transforms.core.config.PROFILES
UNITS = ("update", "entry")
QUERY_TYPES = ("count", "histogram", "sum")
SOURCE_TYPES = ("file", "pubsub", "follow", "kafka")
SOURCE_FORMATS = ("jsonl", "csv", "avro")
SINK_TYPES = ("file", "pubsub", "kafka")
SINK_FORMATS = ("jsonl", "avro")
SUM_BUCKETS = 101  # a sum's values are rounded to 101 evenly spaced levels in [lower, upper]
# budgets the mechanisms are tested with (outside them the calibration under- or
# overflows: a math domain error at epsilon 1e4, an overflow at rho 1e-12)
EPSILON_RANGE = (1e-6, 100.0)
RHO_RANGE = (1e-10, 1e4)
FINITE_COUNTERS = ("naive_prefix", "binary_tree", "honaker", "sqrt_factorization", "kary_tree")
MAX_SPAN_SECONDS = 1e9  # a tick, a lateness or a future guard: at most about 30 years


class ConfigError(ValueError):
    """An invalid configuration; the message names the key and what is allowed."""


class MissingTimeError(ConfigError):
    """A bounded run without its public origin or end (the CLI adds the input's
    first and last times to the message, for the operator to copy)."""


_SUBSCRIPTION = re.compile(r"^projects/[^/]+/subscriptions/[^/]{3,255}$")
_TOPIC = re.compile(r"^projects/[^/]+/topics/[^/]{3,255}$")
_KAFKA_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")  # Kafka's legal topic names
_HOST_PORT = re.compile(r"^[A-Za-z0-9.\-]+:[0-9]{1,5}$|^\[[0-9A-Fa-f:]+\]:[0-9]{1,5}$")


@dataclass(frozen=True)
class SinkConfig:
    """One sink. ``file``: ``releases*`` and ``nodes*`` files (the differentially
    private outputs) under ``path``, and ``dead_letters*`` plus the release
    manifest under ``confidential_path`` (default: the sibling folder
    ``<path>-confidential``; never the releases' folder: dead letters hold raw
    records). In streaming, one set of files per ``window_seconds`` of event
    time. ``pubsub``: releases to ``topic``, node outputs to ``nodes_topic``
    and dead letters to ``dead_letter_topic`` (each optional but the first),
    one JSON message per record."""

    type: str
    path: str | None = None
    format: str = "jsonl"
    window_seconds: float = 60.0
    topic: str | None = None
    nodes_topic: str | None = None
    dead_letter_topic: str | None = None
    confidential_path: str | None = None
    answers_topic: str | None = None  # pubsub: the answers to streamed queries (queries_source)
    bootstrap_servers: str | None = None  # kafka: the brokers (topic, nodes_topic, dead_letter_topic are Kafka topics)
    expansion_service: str | None = None  # kafka: host:port of the KafkaIO expansion service (pipelines.kafka_tool)

    @property
    def takes_dead_letters(self) -> bool:
        return self.type == "file" or self.dead_letter_topic is not None


def _origin(value, path: str) -> float:
    """Epoch seconds from a number or an ISO-8601 date-time (UTC unless it says otherwise)."""
    if isinstance(value, datetime):  # YAML parses unquoted timestamps itself
        dt = value
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(
                f"{path}: must be epoch seconds or an ISO-8601 date-time such as 2026-11-22T00:00:00Z; got {value!r}"
            ) from None
    else:
        return _number(value, path)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _time_in_range(t: float, path: str) -> None:
    """Times are event-time seconds of the calendar's years 1 to 9999 (far inside
    Beam's timestamp range, so that no tick end or timer can overflow it)."""
    if not TIME_RANGE[0] <= t <= TIME_RANGE[1]:
        raise ConfigError(
            f"{path}: must be a time between 0001-01-01 and 9999-12-31 (epoch seconds {TIME_RANGE[0]:.0f} to "
            f"{TIME_RANGE[1]:.0f}); got {t!r}"
        )


def _req(d: dict, key: str, path: str):
    if not isinstance(d, dict) or key not in d:
        raise ConfigError(f"{path}.{key}: missing (required)")
    return d[key]


def _choice(value, choices, path: str):
    if value not in choices:
        raise ConfigError(f"{path}: must be one of {', '.join(choices)}; got {value!r}")
    return value


def _number(value, path: str, *, positive=False, nonneg=False):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{path}: must be a number; got {value!r}")
    if positive and not value > 0:
        raise ConfigError(f"{path}: must be > 0; got {value}")
    if nonneg and value < 0:
        raise ConfigError(f"{path}: must be >= 0; got {value}")
    return float(value)


def _mapping(value, path: str, example: str) -> dict:
    """``value`` as a mapping (None: empty); anything else is a type error naming the key."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: must be a mapping such as {example}; got {value!r}")
    return value


def _string(value, path: str, what: str = "a non-empty string") -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: must be {what}; got {value!r}")
    return value


def _flag(d: dict, key: str, path: str, default: bool) -> bool:
    value = d.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{path}.{key}: must be true or false; got {value!r}")
    return value


def _range(value: float, path: str, lo: float, hi: float, why: str) -> float:
    if not lo <= value <= hi:
        raise ConfigError(f"{path}: must be between {lo:g} and {hi:g} ({why}); got {value:g}")
    return value


def _not_applicable(d: dict, keys, path: str, why: str):
    """Keys that exist but do not apply to the chosen settings are errors too
    (silently ignoring them would hide a misunderstanding)."""
    for key in sorted(k for k in keys if k in d):
        raise ConfigError(f"{path}.{key}: does not apply {why}; remove it")


def _unknown(d: dict, allowed, path: str):
    extra = sorted(map(str, set(d) - set(allowed)))
    if extra:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")


@dataclass(frozen=True)
class QueryConfig:
    name: str
    type: str
    field: str | None = None
    domain: tuple = ()
    lower: float = 0.0
    upper: float = 0.0

    def query_set(self) -> QuerySet:
        if self.type == "count":
            return QuerySet(self.name, "count")
        if self.type == "histogram":
            return QuerySet(self.name, "histogram", domain_size=len(self.domain))
        # sum of a value clamped to [lower, upper], rounded to SUM_BUCKETS levels:
        # a linear query whose entries (level / scale) lie in [0, 1]
        levels = [self.lower + b * (self.upper - self.lower) / (SUM_BUCKETS - 1) for b in range(SUM_BUCKETS)]
        if self.lower >= 0:
            return QuerySet(
                self.name, "linear", domain_size=SUM_BUCKETS, matrix=(tuple(v / self.upper for v in levels),)
            )
        # signed values: two rows, the positive and the negative part (each level
        # has one non-zero entry, in [0, 1]: the same sensitivity as one row of
        # |level| / scale); the released sum is scale * (row 0 - row 1)
        s = self.scale
        pos = tuple(max(v, 0.0) / s for v in levels)
        neg = tuple(max(-v, 0.0) / s for v in levels)
        return QuerySet(self.name, "linear", domain_size=SUM_BUCKETS, matrix=(pos, neg))

    def encode(self, record: dict) -> int | None:
        """The domain index of a record for this query (None: it does not fit)."""
        return self.encode_detail(record)[0]

    def encode_detail(self, record) -> tuple[int | None, str | None, bool]:
        """``(domain index, None, clamped)`` or ``(None, reason, False)`` for one
        record's item fields; ``reason`` is a dead-letter reason
        (``missing_field``, ``not_in_domain``, ``bad_value``); ``clamped``: a sum
        value outside ``[lower, upper]`` that was clamped (counted, never logged)."""
        if self.type == "count":
            return 0, None, False
        if not isinstance(record, dict) or self.field not in record:
            return None, "missing_field", False
        value = record.get(self.field)
        if self.type == "histogram":
            for i, d in enumerate(self.domain):
                if type(value) is type(d) and value == d:
                    return i, None, False
            # CSV gives strings (and JSON numbers may be written 1 or 1.0): match by text
            if isinstance(value, (str, int, float)):
                text = _domain_text(value)
                for i, d in enumerate(self.domain):
                    if _domain_text(d) == text:
                        return i, None, False
            return None, "not_in_domain", False
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return None, "bad_value", False
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, "bad_value", False
        try:
            value = float(value)
        except OverflowError:  # an integer beyond the float range
            return None, "bad_value", False
        if not math.isfinite(value):
            return None, "bad_value", False
        clamped = min(max(value, self.lower), self.upper)
        index = int(round((clamped - self.lower) / (self.upper - self.lower) * (SUM_BUCKETS - 1)))
        return index, None, clamped != value

    @property
    def scale(self) -> float:
        """Multiply released estimates by this (sum queries are released in units
        of ``upper``, or of ``max(-lower, upper)`` for signed sums)."""
        if self.type != "sum":
            return 1.0
        return self.upper if self.lower >= 0 else max(-self.lower, self.upper)

    @property
    def signed(self) -> bool:
        return self.type == "sum" and self.lower < 0

    def values(self, estimate) -> list[float]:
        """Released (or recomputed) row values -> the query's answers in the
        field's units (post-processing)."""
        est = [float(x) * self.scale for x in estimate]
        return [est[0] - est[1]] if self.signed else est

    def bound(self, error_bound: float | None) -> float | None:
        """The error bound of :meth:`values` (a signed sum is a difference of two
        rows, each within the bound)."""
        if error_bound is None:
            return None
        return error_bound * self.scale * (2.0 if self.signed else 1.0)


def _domain_text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class PipelineConfig:
    """A validated pipeline configuration (``parse_config`` builds it from YAML;
    ``docs/pipelines.md`` lists the keys)."""

    epsilon: float
    delta: float
    rho: float | None
    unit: str
    max_mutations_per_entry: int
    disable_noise: bool
    noise_key: tuple  # (kind, value): ("env", VAR) | ("file", PATH) | ("secret", NAME)
    time_field: str
    tick_seconds: float
    ticks: bool
    allowed_lateness: float
    late_policy: str
    stream_field: str | None
    stream_keys: tuple
    mechanism: str
    profile: str
    options: tuple  # the mechanism's option values, as sorted (key, value) pairs
    beta: float
    queries: tuple
    source_path: str | None
    source_format: str
    sinks: tuple = field(default_factory=tuple)  # of SinkConfig
    origin: float = 0.0
    end: float | None = None  # the release's public end (event time, exclusive); required for files
    release_id: str | None = None  # None: a new release (random id) at every launch
    every_ticks: int = 1  # release.every_ticks: one release per query per period of this many ticks
    clamp: bool = True  # release.clamp: counts and histogram cells clamped at 0 (post-processing)
    round_answers: bool = False  # release.round: counts and histogram cells rounded (post-processing)
    consistent: bool = False  # release.consistent: histograms consistent with the count (post-processing)
    source_type: str = "file"
    subscription: str | None = None
    timestamp_attribute: str | None = None
    id_attribute: str | None = None
    dedup_seconds: float = 600.0
    dedup_field: str | None = None  # source.dedup.field (files): drop repeats of one update id
    max_dead_letter_fraction: float = 1.0  # a bounded run that dead-letters more fails (exit 3)
    max_future_seconds: float | None = None  # streaming: event time at most this far past the arrival time
    max_disorder_seconds: float = 0.0  # follow: how far a line's event time may lag the newest one read
    mutation_window: float | None = None  # privacy.mutation_window: seconds after an entry's first insertion
    queries_source: tuple | None = None  # ("file", path) | ("pubsub", subscription): streamed queries (pmwg)
    kafka_bootstrap_servers: str | None = None  # source.type kafka (pipelines.kafka_tool, docs/kafka.md)
    kafka_topic: str | None = None
    kafka_expansion_service: str | None = None
    kafka_consumer_config: tuple = ()  # extra consumer properties, sorted (key, value) pairs
    kafka_max_records: int | None = None  # stop after this many records (a bounded read)

    @property
    def streaming(self) -> bool:
        pubsub_queries = self.queries_source is not None and self.queries_source[0] == "pubsub"
        return self.source_type in ("pubsub", "follow", "kafka") or pubsub_queries

    @property
    def streams(self) -> tuple:
        return self.stream_keys if self.stream_field else ("default",)

    @property
    def privacy_unit(self) -> PrivacyUnit:
        return PrivacyUnit(self.unit, self.max_mutations_per_entry, self.mutation_window_ticks)

    @property
    def group_unit(self) -> PrivacyUnit:
        """The unit that turns the core ledger's spend into the configured
        guarantee (group privacy): the configured unit, or the update unit
        (the identity) for mechanisms whose ledger already charges the
        configured guarantee (``ledger_unit = "configured"``: the changelog
        releases, which account by the enforced constraint)."""
        if getattr(self.mechanism_spec.core_cls, "ledger_unit", "update") == "configured":
            return PrivacyUnit.update()
        return self.privacy_unit

    def ledger_budget(self):
        """The core ledger's total, in its currency (update level, or the
        configured guarantee for the changelog releases)."""
        import dataclasses

        return dataclasses.replace(self.dynamic_config(), unit=self.group_unit).ledger_budget

    def unit_text(self) -> str:
        """The privacy unit in words (summaries, manifests)."""
        if self.unit == "update":
            return "update"
        parts = []
        if self.max_mutations_per_entry is not None:
            parts.append(f"at most {self.max_mutations_per_entry} mutations")
        if self.mutation_window is not None:
            w = self.mutation_window
            when = f"{w / 86400:g} days" if w >= 86400 else f"{w:g} s"
            parts.append(f"all within {when} of the first insertion")
        return "entry, " + " and ".join(parts)

    @property
    def mutation_window_ticks(self) -> int | None:
        """``privacy.mutation_window`` in ticks, rounded up: a mutation is accepted
        at most this many ticks after the tick of its entry's first insertion (the
        guarantee is computed for this enforced window)."""
        if self.mutation_window is None:
            return None
        return math.ceil(self.mutation_window / self.tick_seconds - 1e-9)

    def target_budget(self):
        if self.rho is not None:
            return ZCDP(self.rho)
        return ApproxDP(self.epsilon, self.delta) if self.delta > 0 else PureDP(self.epsilon)

    @property
    def mechanism_spec(self) -> registry.MechanismSpec:
        return registry.get(self.mechanism)

    def mechanism_options(self):
        """The mechanism's options dataclass (its registry entry's ``options_cls``)."""
        return self.mechanism_spec.options(**dict(self.options))

    def dynamic_config(self) -> DynamicConfig:
        """The core configuration: the configured target budget for the configured
        privacy unit (the core spends the update-level budget whose group
        guarantee is the target, and enforces the unit's mutation limit)."""
        return DynamicConfig(
            tuple(q.query_set() for q in self.queries),
            self.target_budget(),
            profile=self.profile,
            beta=self.beta,
            unit=self.privacy_unit,
        )

    def consistency(self):
        """The post-processing of ``release.consistent`` (None when off)."""
        if not self.consistent:
            return None
        return Consistency.for_config(self.dynamic_config(), self.round_answers)

    def release_digest(self) -> str:
        """A digest of everything that defines the release (privacy, time, streams,
        mechanism, queries and their encodings), not of where data comes from or
        goes to: mixed into the release identity that keys the noise, and
        recorded in the release manifest."""
        from transforms.core.foundation.noise import config_digest

        return config_digest(
            "pipeline-config-v1",
            (self.epsilon, self.delta, self.rho, self.unit, self.max_mutations_per_entry, self.disable_noise)
            + (() if self.mutation_window is None else (("mutation_window", self.mutation_window),)),
            (self.time_field, self.tick_seconds, self.ticks, self.allowed_lateness, self.late_policy),
            (self.origin, self.end, self.every_ticks),
            (self.stream_field, self.stream_keys),
            (self.mechanism, self.profile, self.options, self.beta),
            self.queries,
        )


def parse_config(raw: dict, base_dir: Path | None = None) -> PipelineConfig:
    """Validate a parsed YAML mapping (see ``configs/demo.yaml``)."""
    if not isinstance(raw, dict):
        raise ConfigError("the configuration must be a YAML mapping")
    top = ("privacy", "time", "streams", "mechanism", "release", "queries", "source", "sinks", "queries_source")
    _unknown(raw, top, "config")
    priv = _mapping(raw.get("privacy"), "privacy", "{epsilon: 1.0}")
    _unknown(
        priv,
        (
            "epsilon",
            "delta",
            "rho",
            "unit",
            "max_mutations_per_entry",
            "mutation_window",
            "disable_noise",
            "noise_key",
            "release_id",
        ),
        "privacy",
    )
    release_id = priv.get("release_id")
    if release_id is not None and (
        not isinstance(release_id, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{8,128}", release_id)
    ):
        raise ConfigError(
            "privacy.release_id: must be 8 to 128 letters, digits, '_', '.' or '-' (omit it for a new release); "
            f"got {release_id!r}"
        )
    rho = priv.get("rho")
    if rho is not None:
        if "epsilon" in priv:
            raise ConfigError(
                "privacy.epsilon: give either privacy.epsilon (with privacy.delta) or privacy.rho (zCDP), not both"
            )
        _not_applicable(priv, ("delta",), "privacy", "with privacy.rho (zCDP has no delta)")
        rho = _range(_number(rho, "privacy.rho", positive=True), "privacy.rho", *RHO_RANGE, "zCDP per stream")
        eps = 0.0
    else:
        eps = _number(_req(priv, "epsilon", "privacy"), "privacy.epsilon", positive=True)
        _range(eps, "privacy.epsilon", *EPSILON_RANGE, "per stream, for the whole release")
    delta = _number(priv.get("delta", 0.0), "privacy.delta", nonneg=True)
    if delta >= 1:
        raise ConfigError(f"privacy.delta: must be < 1; got {delta}")
    unit = _choice(priv.get("unit", "update"), UNITS, "privacy.unit")
    k = priv.get("max_mutations_per_entry", 1)
    window = priv.get("mutation_window")
    if unit == "entry" and "max_mutations_per_entry" not in priv and window is None:
        raise ConfigError(
            "privacy.max_mutations_per_entry: required when privacy.unit is entry (or, for the changelog "
            "mechanisms dcr, hdcr and swcr, privacy.mutation_window: seconds after an entry's first insertion)"
        )
    if unit == "update":
        _not_applicable(
            priv,
            ("max_mutations_per_entry", "mutation_window"),
            "privacy",
            "when privacy.unit is update (set unit: entry)",
        )
    if unit == "entry" and "max_mutations_per_entry" not in priv:
        k = None  # time-bounded only: no limit on the number of mutations
    elif isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"privacy.max_mutations_per_entry: must be an integer >= 1; got {k!r}")
    if window is not None:
        window = _number(window, "privacy.mutation_window", nonneg=True)
        _range(window, "privacy.mutation_window", 0, MAX_SPAN_SECONDS, "seconds after the first insertion")
    disable = priv.get("disable_noise", False)
    if not isinstance(disable, bool):
        raise ConfigError(f"privacy.disable_noise: must be true or false; got {disable!r}")

    tm = _mapping(raw.get("time"), "time", "{field: time, tick_seconds: 600, origin: 0, end: 86400}")
    _unknown(tm, ("field", "tick_seconds", "ticks", "allowed_lateness", "late_policy", "origin", "end"), "time")
    ticks = _flag(tm, "ticks", "time", False)
    if ticks:
        _not_applicable(tm, ("tick_seconds",), "time", "with time.ticks (a tick is one unit of the time field)")
    tick_seconds = 1.0 if ticks else _number(tm.get("tick_seconds", 60), "time.tick_seconds", positive=True)
    _range(tick_seconds, "time.tick_seconds", 1e-3, MAX_SPAN_SECONDS, "a tick of a millisecond to 30 years")
    lateness = _number(tm.get("allowed_lateness", 0), "time.allowed_lateness", nonneg=True)
    _range(lateness, "time.allowed_lateness", 0, MAX_SPAN_SECONDS, "at most 30 years")
    late_policy = _choice(tm.get("late_policy", "current"), LATE_POLICIES, "time.late_policy")
    time_field = _string(tm.get("field", "time"), "time.field", "the name of the time field (a string)")
    origin = _origin(tm["origin"], "time.origin") if tm.get("origin") is not None else (1.0 if ticks else 0.0)
    _time_in_range(origin, "time.origin")
    end = None
    if tm.get("end") is not None:
        if ticks:  # the last tick, inclusive (ticks are numbered from 1)
            last = tm["end"]
            if isinstance(last, bool) or not isinstance(last, int) or last < 1:
                raise ConfigError(f"time.end: with time.ticks, the last tick (an integer >= 1); got {last!r}")
            end = float(last) + 1.0
        else:
            end = _origin(tm["end"], "time.end")
            if not end > origin:
                raise ConfigError(f"time.end: must be after time.origin ({origin}); got {end}")
        _time_in_range(end, "time.end")

    st = _mapping(raw.get("streams"), "streams", "{field: region, keys: [eu, us]}")
    _unknown(st, ("field", "keys"), "streams")
    sfield = st.get("field")
    if sfield is not None:
        _string(sfield, "streams.field", "the name of the stream field (a string)")
    raw_keys = st.get("keys")
    if raw_keys is not None and not isinstance(raw_keys, list):
        raise ConfigError(f"streams.keys: must be a list of stream keys such as [eu, us]; got {raw_keys!r}")
    if raw_keys and sfield is None:
        raise ConfigError("streams.keys: does not apply without streams.field (the field that names the stream)")
    keys = tuple(raw_keys or ())
    if sfield is not None and not keys:
        raise ConfigError("streams.keys: declare the stream keys (public) when streams.field is set")
    if len(set(keys)) != len(keys) or not all(isinstance(x, str) and x for x in keys):
        raise ConfigError("streams.keys: must be distinct non-empty strings")

    mech = raw.get("mechanism") if raw.get("mechanism") is not None else {}
    if not isinstance(mech, dict):
        raise ConfigError(f"mechanism: must be a mapping such as {{kind: auto}}; got {mech!r}")
    kind = _choice(mech.get("kind", "auto"), MECHANISMS, "mechanism.kind")
    spec = registry.get(kind)
    own = registry.option_fields(spec)
    for key in sorted(set(mech) - {"kind", "profile", "beta"} - set(own)):
        users = [n for n, sp in registry.MECHANISMS.items() if key in registry.option_fields(sp)]
        if users:
            raise ConfigError(
                f"mechanism.{key}: does not apply to kind {kind} (it is an option of {', '.join(users)}); "
                f"{kind} takes: {', '.join(('profile', 'beta') + own)}"
            )
        raise ConfigError(
            f"mechanism: unknown key(s) {key}; allowed for kind {kind}: {', '.join(('kind', 'profile', 'beta') + own)}"
        )
    profile = _choice(mech.get("profile", "tuned"), PROFILES, "mechanism.profile")
    options = tuple(sorted((k, mech[k]) for k in own if k in mech))
    if "counter" in dict(options):
        from transforms.core.counters import COUNTER_NAMES

        _choice(dict(options)["counter"], COUNTER_NAMES, "mechanism.counter")
    horizon = dict(options).get("horizon")
    if horizon is not None and (isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1):
        raise ConfigError(f"mechanism.horizon: must be an integer >= 1; got {horizon!r}")
    try:
        spec.options(**dict(options))
    except (TypeError, ValueError) as e:
        raise ConfigError(f"mechanism: {e}") from None
    beta = _number(mech.get("beta", 0.05), "mechanism.beta", positive=True)
    if beta >= 1:
        raise ConfigError(f"mechanism.beta: must be < 1; got {beta}")
    if profile == "paper" and rho is not None:
        raise ConfigError("mechanism.profile: paper uses Laplace noise; give privacy.epsilon, or use profile tuned")

    rel = raw.get("release") if raw.get("release") is not None else {}
    if not isinstance(rel, dict):
        raise ConfigError("release: must be a mapping such as {every_ticks: 1}")
    _unknown(rel, ("every_ticks", "clamp", "round", "consistent"), "release")
    every = rel.get("every_ticks", 1)
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ConfigError(f"release.every_ticks: must be an integer >= 1 (ticks per release); got {every!r}")
    for key in ("clamp", "round", "consistent"):
        if not isinstance(rel.get(key, False), bool):
            raise ConfigError(f"release.{key}: must be true or false; got {rel[key]!r}")

    qs = raw.get("queries")
    if not isinstance(qs, list) or not qs:
        raise ConfigError("queries: must be a non-empty list")
    queries = []
    for i, q in enumerate(qs):
        path = f"queries[{i}]"
        if not isinstance(q, dict):
            raise ConfigError(f"{path}: must be a mapping")
        _unknown(q, ("name", "type", "field", "domain", "lower", "upper"), path)
        name = _req(q, "name", path)
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{path}.name: must be a non-empty string")
        qtype = _choice(q.get("type"), QUERY_TYPES, f"{path}.type")
        if qtype == "count":
            _not_applicable(q, ("field", "domain", "lower", "upper"), path, "to a count query")
            queries.append(QueryConfig(name, "count"))
        elif qtype == "histogram":
            _not_applicable(q, ("lower", "upper"), path, "to a histogram query (it has a domain)")
            fld = _string(_req(q, "field", path), f"{path}.field", "the name of an item field (a string)")
            dom = q.get("domain")
            if not isinstance(dom, list) or not dom or len(set(map(repr, dom))) != len(dom):
                raise ConfigError(f"{path}.domain: must be a non-empty list of distinct values")
            for v in dom:
                if isinstance(v, (dict, list)) or (isinstance(v, float) and not math.isfinite(v)):
                    raise ConfigError(f"{path}.domain: values must be strings, numbers or booleans; got {v!r}")
            if len({str(v) for v in dom}) != len(dom):
                raise ConfigError(f"{path}.domain: values must be distinct as text (CSV input matches them by text)")
            queries.append(QueryConfig(name, "histogram", fld, tuple(dom)))
        else:
            _not_applicable(q, ("domain",), path, "to a sum query (it has lower and upper)")
            fld = _string(_req(q, "field", path), f"{path}.field", "the name of an item field (a string)")
            lo = _number(_req(q, "lower", path), f"{path}.lower")
            hi = _number(_req(q, "upper", path), f"{path}.upper")
            if hi <= 0 and lo >= 0:
                raise ConfigError(f"{path}.upper: must be > 0; got {hi}")
            if not hi > lo:
                raise ConfigError(f"{path}.upper: must be > lower ({lo}); got {hi}")
            for key, v in (("lower", lo), ("upper", hi)):
                _range(abs(v), f"{path}.{key}", 0, 1e15, "its absolute value; a larger clamp range has no useful sum")
            queries.append(QueryConfig(name, "sum", fld, (), lo, hi))
    if len({q.name for q in queries}) != len(queries):
        raise ConfigError("queries: names must be unique")

    src = _mapping(raw.get("source"), "source", "{type: file, path: data/*.jsonl, format: jsonl}")
    stype = _choice(src.get("type", "file"), SOURCE_TYPES, "source.type")
    subscription = ts_attr = id_attr = dedup_field = None
    dedup = 600.0
    spath = None
    sformat = "jsonl"
    common = ("type", "format", "max_dead_letter_fraction")
    max_dead = _number(src.get("max_dead_letter_fraction", 1.0), "source.max_dead_letter_fraction", nonneg=True)
    _range(max_dead, "source.max_dead_letter_fraction", 0.0, 1.0, "the share of input records")
    max_future = None
    max_disorder = 0.0
    kafka_source = {}
    if stype == "follow":
        # JSON lines appended to files, followed (pipelines.follow_source): unbounded,
        # and the one streaming source that runs on Flink from Python (docs/flink.md)
        _unknown(src, common + ("path", "max_disorder_seconds"), "source")
        spath = _string(_req(src, "path", "source"), "source.path", "a path or glob of JSON-lines files")
        if "://" in spath:
            raise ConfigError("source.path: a followed source reads local files (or a shared mount); got a URL")
        _choice(src.get("format", "jsonl"), ("jsonl",), "source.format")
        max_disorder = _number(src.get("max_disorder_seconds", 0.0), "source.max_disorder_seconds", nonneg=True)
        _range(max_disorder, "source.max_disorder_seconds", 0, MAX_SPAN_SECONDS, "at most 30 years")
        if base_dir is not None and not Path(spath).is_absolute():
            spath = str(base_dir / spath)
        if tm.get("origin") is None:
            raise ConfigError(
                "time.origin: required with a follow source: the event time at which tick 1 starts (epoch seconds "
                "or an ISO-8601 date-time such as 2026-11-22T00:00:00Z); the release schedule is public "
                "configuration, never derived from the data"
            )
        if ticks:
            raise ConfigError("time.ticks: must be false with a follow source (event times are epoch seconds)")
    elif stype == "kafka":
        kafka_source = _kafka_source(src, common, tm, ticks)
        dedup = kafka_source.pop("dedup_seconds")
    elif stype == "file":
        _unknown(src, common + ("path", "dedup"), "source")
        if src.get("dedup") is not None:
            dd = _mapping(src["dedup"], "source.dedup", "{field: update_id}")
            _unknown(dd, ("field",), "source.dedup")
            dedup_field = _string(_req(dd, "field", "source.dedup"), "source.dedup.field", "a field name")
        missing = [k for k in (() if ticks else ("origin",)) + ("end",) if tm.get(k) is None]
        if missing:
            raise MissingTimeError(
                f"time.{' and time.'.join(missing)}: required for a file (bounded) source: the release's schedule "
                "runs from time.origin (tick 1) to time.end and must be public configuration, never derived from "
                "the data (epoch seconds or an ISO-8601 date-time such as 2026-11-22T00:00:00Z"
                + (", or with time.ticks the last tick" if ticks else "")
                + ")"
            )
        spath = _string(_req(src, "path", "source"), "source.path", "a path or glob")
        sformat = _choice(src.get("format", "jsonl"), SOURCE_FORMATS, "source.format")
        if base_dir is not None and not Path(spath).is_absolute():
            spath = str(base_dir / spath)
    else:
        _unknown(
            src,
            common + ("subscription", "timestamp_attribute", "id_attribute", "dedup_seconds", "max_future_seconds"),
            "source",
        )
        max_future = _number(src.get("max_future_seconds", 86400), "source.max_future_seconds", positive=True)
        _range(max_future, "source.max_future_seconds", 0, MAX_SPAN_SECONDS, "at most 30 years")
        subscription = _req(src, "subscription", "source")
        if not isinstance(subscription, str) or not _SUBSCRIPTION.match(subscription):
            raise ConfigError(
                f"source.subscription: must be projects/PROJECT/subscriptions/NAME (NAME of 3 or more characters); "
                f"got {subscription!r}"
            )
        _choice(src.get("format", "jsonl"), ("jsonl",), "source.format")
        ts_attr = src.get("timestamp_attribute")
        id_attr = src.get("id_attribute")
        for key, v in (("timestamp_attribute", ts_attr), ("id_attribute", id_attr)):
            if v is not None and (not isinstance(v, str) or not v):
                raise ConfigError(f"source.{key}: must be a non-empty attribute name; got {v!r}")
        dedup = _number(src.get("dedup_seconds", 600), "source.dedup_seconds", positive=True)
        if tm.get("origin") is None:
            raise ConfigError(
                "time.origin: required with a pubsub source: the event time at which tick 1 starts (epoch seconds "
                "or an ISO-8601 date-time such as 2026-11-22T00:00:00Z, e.g. when the deployment starts); the "
                "partitioning schedules its closes in ticks counted from it"
            )
        if ticks:
            raise ConfigError("time.ticks: must be false with a pubsub source (event times are epoch seconds)")

    sinks = []
    raw_sinks = raw.get("sinks", [{"type": "file", "path": "output/", "format": "jsonl"}])
    if not isinstance(raw_sinks, list) or not raw_sinks:
        raise ConfigError(
            f"sinks: must be a non-empty list such as [{{type: file, path: output/}}] (or omit it); got {raw_sinks!r}"
        )
    for i, sk in enumerate(raw_sinks):
        path = f"sinks[{i}]"
        if not isinstance(sk, dict):
            raise ConfigError(f"{path}: must be a mapping")
        skind = _choice(sk.get("type", "file"), SINK_TYPES, f"{path}.type")
        if skind == "file":
            _unknown(sk, ("type", "path", "format", "window_seconds", "confidential_path"), path)
            if stype == "file":
                _not_applicable(
                    sk, ("window_seconds",), path, "to a file (bounded) source: only streaming writes windows"
                )
            out_path = _string(_req(sk, "path", path), f"{path}.path", "a folder path")
            conf = sk.get("confidential_path")
            if conf is None:
                conf = out_path.rstrip("/") + "-confidential/"
            elif not isinstance(conf, str) or not conf:
                raise ConfigError(f"{path}.confidential_path: must be a non-empty path; got {conf!r}")
            if Path(conf.rstrip("/")) == Path(out_path.rstrip("/")):
                raise ConfigError(
                    f"{path}.confidential_path: must differ from {path}.path: dead letters hold raw records and "
                    "must never sit beside the differentially private releases"
                )
            sinks.append(
                SinkConfig(
                    "file",
                    path=out_path,
                    format=_choice(sk.get("format", "jsonl"), SINK_FORMATS, f"{path}.format"),
                    window_seconds=_number(sk.get("window_seconds", 60), f"{path}.window_seconds", positive=True),
                    confidential_path=conf,
                )
            )
            continue
        if skind == "kafka":
            sinks.append(_kafka_sink(sk, path, disable))
            continue
        _unknown(sk, ("type", "topic", "nodes_topic", "dead_letter_topic", "answers_topic"), path)
        if disable:
            raise ConfigError(
                f"{path}.type: privacy.disable_noise releases exact, non-private answers and is for tests only; "
                "it refuses pubsub sinks (use a file sink, or turn disable_noise off)"
            )
        topics = {}
        for key in ("topic", "nodes_topic", "dead_letter_topic", "answers_topic"):
            v = _req(sk, key, path) if key == "topic" else sk.get(key)
            if v is not None and (not isinstance(v, str) or not _TOPIC.match(v)):
                raise ConfigError(
                    f"{path}.{key}: must be projects/PROJECT/topics/NAME (NAME of 3 or more characters); got {v!r}"
                )
            topics[key] = v
        sinks.append(SinkConfig("pubsub", **topics))
    queries_source = _queries_source(raw.get("queries_source"), kind, queries, base_dir)
    if not any(sk.takes_dead_letters for sk in sinks):
        raise ConfigError(
            "sinks: no sink takes the dead letters, which would be lost: add a file sink or set "
            "dead_letter_topic on a pubsub sink"
        )

    if rel.get("consistent", False):
        # histograms consistent with the count (transforms.core.continual.consistency):
        # cells >= 0 summing to the released count, so it implies clamping
        if not rel.get("clamp", True):
            raise ConfigError(
                "release.consistent: a consistent histogram has cells >= 0 summing to the count clamped at 0; "
                "remove release.clamp: false (or release.consistent)"
            )
        n_counts = sum(q.type == "count" for q in queries)
        if n_counts != 1 or not any(q.type == "histogram" for q in queries):
            raise ConfigError(
                "release.consistent: makes each histogram query consistent with THE count query of the release; "
                f"the queries have {n_counts} count and "
                f"{sum(q.type == 'histogram' for q in queries)} histogram queries (need exactly 1 count and at "
                "least 1 histogram)"
            )

    return PipelineConfig(
        epsilon=eps,
        delta=delta,
        rho=rho,
        unit=unit,
        max_mutations_per_entry=k,
        mutation_window=window,
        disable_noise=disable,
        noise_key=_noise_key(priv.get("noise_key", {"env": "DP_NOISE_KEY"})),
        time_field=time_field,
        tick_seconds=tick_seconds,
        ticks=ticks,
        allowed_lateness=lateness,
        late_policy=late_policy,
        stream_field=sfield,
        stream_keys=keys,
        mechanism=kind,
        profile=profile,
        options=options,
        beta=beta,
        queries=tuple(queries),
        source_path=spath,
        source_format=sformat,
        sinks=tuple(sinks),
        origin=origin,
        end=end,
        release_id=release_id,
        every_ticks=every,
        clamp=rel.get("clamp", True),
        round_answers=rel.get("round", False),
        consistent=rel.get("consistent", False),
        source_type=stype,
        subscription=subscription,
        timestamp_attribute=ts_attr,
        id_attribute=id_attr,
        dedup_seconds=dedup,
        dedup_field=dedup_field,
        max_dead_letter_fraction=max_dead,
        max_future_seconds=max_future,
        max_disorder_seconds=max_disorder,
        queries_source=queries_source,
        **kafka_source,
    )


def _queries_source(value, kind: str, queries: list, base_dir: Path | None) -> tuple | None:
    """``queries_source`` (streamed linear queries, docs/growing.md): ``{type:
    file, path}`` (JSON lines) or ``{type: pubsub, subscription}``; only
    mechanism pmwg answers them, over the domain of the first query (a
    histogram)."""
    if value is None:
        return None
    src = _mapping(value, "queries_source", "{type: file, path: data/growing_queries.jsonl}")
    qtype = _choice(src.get("type", "file"), ("file", "pubsub"), "queries_source.type")
    if kind != "pmwg":
        raise ConfigError(f"queries_source: streamed queries are answered by mechanism.kind pmwg; got {kind}")
    if not queries or queries[0].type != "histogram":
        raise ConfigError(
            "queries_source: the first query must be a histogram: streamed queries are weights over its domain"
        )
    if qtype == "file":
        _unknown(src, ("type", "path"), "queries_source")
        qpath = _string(_req(src, "path", "queries_source"), "queries_source.path", "a path or glob")
        if base_dir is not None and not Path(qpath).is_absolute():
            qpath = str(base_dir / qpath)
        return ("file", qpath)
    _unknown(src, ("type", "subscription"), "queries_source")
    sub = _req(src, "subscription", "queries_source")
    if not isinstance(sub, str) or not _SUBSCRIPTION.match(sub):
        raise ConfigError(f"queries_source.subscription: must be projects/PROJECT/subscriptions/NAME; got {sub!r}")
    return ("pubsub", sub)


def _kafka_address(value, path: str, what: str) -> str:
    if not isinstance(value, str) or not all(_HOST_PORT.match(a.strip()) for a in value.split(",")):
        raise ConfigError(f"{path}: must be {what}; got {value!r}")
    return ",".join(a.strip() for a in value.split(","))


def _kafka_topic(value, path: str) -> str:
    if not isinstance(value, str) or not _KAFKA_TOPIC.match(value) or value in (".", ".."):
        raise ConfigError(f"{path}: must be a Kafka topic name (1 to 249 of A-Z a-z 0-9 . _ -); got {value!r}")
    return value


_SERVERS = "host:port of the brokers, comma-separated (e.g. 127.0.0.1:9092)"
_EXPANSION = (
    "host:port of the KafkaIO expansion service (python -m pipelines.kafka_tool expansion; Beam's default "
    "would download a jar that Maven Central does not serve for this runner, docs/kafka.md)"
)


def _kafka_source(src: dict, common: tuple, tm: dict, ticks: bool) -> dict:
    """``source: {type: kafka, ...}``: JSON-lines records of one Kafka topic, read by the Java KafkaIO through
    an expansion service (``pipelines.kafka_tool``, ``docs/kafka.md``); streaming, so ``time.origin`` is
    required and ``time.end`` optional, as for Pub/Sub."""
    keys = ("bootstrap_servers", "topic", "expansion_service", "consumer_config", "max_records", "dedup_seconds")
    _unknown(src, common + keys, "source")
    _choice(src.get("format", "jsonl"), ("jsonl",), "source.format")
    servers = _kafka_address(_req(src, "bootstrap_servers", "source"), "source.bootstrap_servers", _SERVERS)
    topic = _kafka_topic(_req(src, "topic", "source"), "source.topic")
    expansion = _kafka_address(_req(src, "expansion_service", "source"), "source.expansion_service", _EXPANSION)
    if "," in expansion:
        raise ConfigError(f"source.expansion_service: must be one host:port; got {expansion!r}")
    extra = _mapping(src.get("consumer_config"), "source.consumer_config", "{group.id: dp-dynamic}")
    for key, value in extra.items():
        if not isinstance(key, str) or isinstance(value, (dict, list)) or value is None:
            raise ConfigError(
                f"source.consumer_config: Kafka consumer properties (name: value); got {key!r}: {value!r}"
            )
        if key in ("bootstrap.servers", "key.deserializer", "value.deserializer"):
            raise ConfigError(
                f"source.consumer_config.{key}: set by the pipeline (bootstrap.servers from source.bootstrap_servers; "
                "records are read as bytes); remove it"
            )
    max_records = src.get("max_records")
    if max_records is not None and (
        isinstance(max_records, bool) or not isinstance(max_records, int) or max_records < 1
    ):
        raise ConfigError(
            f"source.max_records: must be an integer >= 1 (stop after that many records); got {max_records!r}"
        )
    dedup = _number(src.get("dedup_seconds", 600), "source.dedup_seconds", positive=True)
    _range(dedup, "source.dedup_seconds", 0, MAX_SPAN_SECONDS, "at most 30 years")
    if tm.get("origin") is None:
        raise ConfigError(
            "time.origin: required with a kafka source: the event time at which tick 1 starts (epoch seconds or an "
            "ISO-8601 date-time such as 2026-11-22T00:00:00Z); the release schedule is public configuration, never "
            "derived from the data"
        )
    if ticks:
        raise ConfigError("time.ticks: must be false with a kafka source (event times are epoch seconds)")
    return {
        "kafka_bootstrap_servers": servers,
        "kafka_topic": topic,
        "kafka_expansion_service": expansion,
        "kafka_consumer_config": tuple(sorted((str(k), str(v)) for k, v in extra.items())),
        "kafka_max_records": max_records,
        "dedup_seconds": dedup,
    }


def _kafka_sink(sk: dict, path: str, disable: bool) -> SinkConfig:
    """``{type: kafka, bootstrap_servers, expansion_service, topic, nodes_topic, dead_letter_topic}``: one JSON
    document per record, as the pubsub sink publishes them."""
    _unknown(sk, ("type", "bootstrap_servers", "expansion_service", "topic", "nodes_topic", "dead_letter_topic"), path)
    if disable:
        raise ConfigError(
            f"{path}.type: privacy.disable_noise releases exact, non-private answers and is for tests only; "
            "it refuses kafka sinks (use a file sink, or turn disable_noise off)"
        )
    servers = _kafka_address(_req(sk, "bootstrap_servers", path), f"{path}.bootstrap_servers", _SERVERS)
    expansion = _kafka_address(_req(sk, "expansion_service", path), f"{path}.expansion_service", _EXPANSION)
    topics = {}
    for key in ("topic", "nodes_topic", "dead_letter_topic"):
        v = _req(sk, key, path) if key == "topic" else sk.get(key)
        topics[key] = None if v is None else _kafka_topic(v, f"{path}.{key}")
    return SinkConfig("kafka", bootstrap_servers=servers, expansion_service=expansion, **topics)


def _noise_key(value) -> tuple:
    if not isinstance(value, dict) or len(value) != 1:
        raise ConfigError("privacy.noise_key: must be one of {env: VAR}, {file: PATH}, {secret: NAME}")
    ((kind, where),) = value.items()
    _choice(kind, ("env", "file", "secret"), "privacy.noise_key")
    if not isinstance(where, str) or not where:
        raise ConfigError(f"privacy.noise_key.{kind}: must be a non-empty string")
    if kind == "secret":
        try:
            NoiseKey.from_secret_manager(where)
        except ValueError as e:
            raise ConfigError(f"privacy.noise_key.secret: {e}") from None
    return (kind, where)


def load_config(path: str | Path) -> PipelineConfig:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist")
    try:
        raw = yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML ({e})") from None
    cfg = parse_config(raw, base_dir=None)
    check_mechanism(cfg)
    return cfg


def check_mechanism(cfg: PipelineConfig) -> None:
    """What only the core can check: the budget and profile together, the
    mechanism's options against the configuration, the query kinds it answers."""
    spec = cfg.mechanism_spec
    if spec.input_kind == "reports":  # a local-DP collector of client reports: its own checks
        from pipelines.rr_collect import check_local_dp

        check_local_dp(cfg)
        return
    try:
        config = cfg.dynamic_config()
        spec.core_cls._configure(config, cfg.mechanism_options())
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if cfg.unit == "entry" and cfg.max_mutations_per_entry is None:
        try:
            spec.core_cls.ledger_cap(config)
        except ValueError:
            raise ConfigError(
                f"privacy.max_mutations_per_entry: required with mechanism.kind {cfg.mechanism} (its entry-level "
                "guarantee is group privacy over k mutations); privacy.mutation_window alone bounds the loss only "
                "for the changelog mechanisms dcr, hdcr and swcr (docs/changelog.md)"
            ) from None
    _check_horizon(cfg)
    kinds = {q.query_set().kind for q in cfg.queries}
    unsupported = sorted(kinds - set(spec.query_kinds))
    if unsupported:
        raise ConfigError(
            f"mechanism.kind: {cfg.mechanism} does not answer {', '.join(unsupported)} queries "
            f"(sum queries are linear); it answers {', '.join(spec.query_kinds)}"
        )


def _check_horizon(cfg: PipelineConfig) -> None:
    """A configured horizon that runs out before the configured end would stop
    the releases early (the counter has no more nodes): refused up front."""
    horizon = dict(cfg.options).get("horizon")
    counter = dict(cfg.options).get("counter", "auto")
    if horizon is None and cfg.end is None and counter in FINITE_COUNTERS:
        raise ConfigError(
            f"mechanism.counter: {counter} needs a horizon (a finite number of releases): set mechanism.horizon, "
            "or time.end, or choose an unbounded counter (blt, infinite, infinite_honaker, naive_increments)"
        )
    if horizon is None or cfg.end is None or cfg.mechanism not in ("auto", "net_change", "continual_count"):
        return
    end_tick = max(1, math.ceil((cfg.end - cfg.origin) / cfg.tick_seconds - 1e-9))
    if cfg.mechanism == "continual_count":
        need, what = end_tick, f"{end_tick} ticks"
    else:
        need = math.ceil(end_tick / cfg.every_ticks)
        what = f"{need} periods of release.every_ticks = {cfg.every_ticks} ticks"
    if horizon < need:
        raise ConfigError(
            f"mechanism.horizon: {horizon} runs out before time.end (the release has {what}); "
            f"set it to at least {need}, or omit it (the end gives it)"
        )


def check_environment(cfg: PipelineConfig, local: bool = True) -> None:
    """What can be checked before the pipeline starts, beyond the YAML itself:
    the source files exist and are readable in their format, every file sink's
    folders are writable, and (``local``: the key is read here, not on remote
    workers) the noise key is present and well-formed. Raises ConfigError with
    one line; never shows a record of the input (a payload in a message would be
    a leak)."""
    if cfg.source_type in ("file", "follow"):  # a followed file must exist when the pipeline is built
        for path in source_files(cfg.source_path):
            _check_source_file(cfg, path)
    _check_kafka(cfg, local)
    for i, sink in enumerate(cfg.sinks):
        if sink.type == "file":
            for key, folder in (("path", sink.path), ("confidential_path", sink.confidential_path)):
                _check_writable(folder, f"sinks[{i}].{key}")
    if local and not cfg.disable_noise:
        _check_noise_key(cfg)


def _check_kafka(cfg: PipelineConfig, local: bool) -> None:
    """A Kafka source or sink is expanded while the pipeline is built: its expansion service must answer now;
    on a local runner (an embedded Flink) its brokers must be reachable from here too."""
    from pipelines.kafka_tool import reachable

    needs = []
    if cfg.source_type == "kafka":
        needs.append(("source", cfg.kafka_expansion_service, cfg.kafka_bootstrap_servers))
    needs += [
        (f"sinks[{i}]", s.expansion_service, s.bootstrap_servers) for i, s in enumerate(cfg.sinks) if s.type == "kafka"
    ]
    for key, expansion, servers in needs:
        if not reachable(expansion):
            raise ConfigError(
                f"{key}.expansion_service: nothing answers at {expansion}; start the KafkaIO expansion service "
                "first (python -m pipelines.kafka_tool expansion --port PORT, docs/kafka.md)"
            )
        if local and not any(reachable(a) for a in servers.split(",")):
            raise ConfigError(f"{key}.bootstrap_servers: no Kafka broker answers at {servers}")


def check_kafka_runner(cfg: PipelineConfig, runner: str) -> None:
    """The Java KafkaIO runs on a portable runner (Flink, or a job server); the Python DirectRunner cannot run
    a Java transform."""
    uses = cfg.source_type == "kafka" or any(s.type == "kafka" for s in cfg.sinks)
    if uses and not any(r in runner for r in ("Flink", "Portable", "Dataflow")):
        raise ConfigError(
            f"source.type / sinks: Kafka (Beam's cross-language KafkaIO) needs a runner that runs Java transforms, "
            f"in streaming mode: FlinkRunner (--flink_job_server_jar from python -m pipelines.kafka_tool fetch) or "
            f"PortableRunner; got {runner} (docs/kafka.md)"
        )


def source_files(pattern: str) -> list[str]:
    """The files a source path or glob matches (local, or any Beam file system);
    none is a ConfigError."""
    if "://" in pattern:
        from apache_beam.io.filesystems import FileSystems

        try:
            files = [m.path for m in FileSystems.match([pattern])[0].metadata_list]
        except Exception as e:  # noqa: BLE001 - any file-system error is a configuration problem here
            raise ConfigError(f"source.path: cannot list {pattern} ({type(e).__name__})") from None
    else:
        import glob

        files = [f for f in glob.glob(pattern) if not Path(f).is_dir()]
    if not files:
        raise ConfigError(f"source.path: no file matches {pattern}")
    return sorted(files)


def csv_header_of(path: str) -> tuple | None:
    """The header row of a CSV file (None: the file is empty)."""
    import csv

    with open(path, "rb") as fh:  # the first line only: later lines may be anything (dead letters)
        first = fh.readline().decode("utf-8").rstrip("\r\n")
    if not first:
        return None
    row = next(csv.reader([first]), None)
    return None if row is None else tuple(row)


def _check_source_file(cfg: PipelineConfig, path: str) -> None:
    if "://" in path:  # remote: listed above; read by the workers
        return
    required = (cfg.time_field, "op", "id")
    try:
        if cfg.source_format == "csv":
            try:
                header = csv_header_of(path)
            except UnicodeDecodeError:
                raise ConfigError(f"source.path: {path} is not UTF-8 text (source.format is csv)") from None
            if not header:
                raise ConfigError(f"source.path: {path} is empty; a CSV source needs a header row")
            missing = [c for c in required if c not in header]
            if missing:
                raise ConfigError(
                    f"source.path: {path}: the first row must be a header naming the columns {', '.join(required)} "
                    f"(missing: {', '.join(missing)}; a CSV without a header row?)"
                )
            if len(set(header)) != len(header):
                raise ConfigError(f"source.path: {path}: the header names a column twice")
        elif cfg.source_format == "avro":
            import fastavro

            with open(path, "rb") as fh:
                try:
                    reader = fastavro.block_reader(fh)
                    schema = reader.writer_schema
                    for _ in reader:  # every block: a truncated file fails here, not in the pipeline
                        pass
                except Exception as e:  # noqa: BLE001 - fastavro raises many types on a bad file
                    raise ConfigError(
                        f"source.path: {path} is not a complete Avro file ({type(e).__name__}); source.format is avro"
                    ) from None
            names = {f.get("name") for f in schema.get("fields", [])} if isinstance(schema, dict) else set()
            missing = [c for c in ("op", "id") if c not in names]
            if missing:
                raise ConfigError(
                    f"source.path: {path}: the Avro records have no field {', '.join(missing)} "
                    "(see pipelines/schemas/update.avsc)"
                )
        else:
            with open(path, "rb") as fh:
                fh.read(1)
    except OSError as e:
        raise ConfigError(f"source.path: cannot read {path} ({e.strerror or type(e).__name__})") from None


def _check_writable(folder: str, key: str) -> None:
    if "://" in folder:  # a remote file system: the workers write it
        return
    p = Path(folder)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / f".dp-dynamic-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise ConfigError(f"{key}: cannot write to {folder} ({e.strerror or type(e).__name__})") from None


def _check_noise_key(cfg: PipelineConfig) -> None:
    """The key this launch (a local runner) will use: present and well-formed hex
    of at least 16 bytes. Never shows the key."""
    kind, where = cfg.noise_key
    if kind == "env":
        text = os.environ.get(where)
        if text is None:  # a local run makes a one-off key (with a warning)
            return
        origin = f"the variable {where}"
    elif kind == "file":
        try:
            with open(where, encoding="ascii") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(
                f"privacy.noise_key.file: cannot read {where} ({getattr(e, 'strerror', None) or type(e).__name__})"
            ) from None
        origin = f"the file {where}"
    else:
        from transforms.records import NoiseKey

        try:
            NoiseKey.from_secret_manager(where).load()
        except Exception as e:  # noqa: BLE001 - credentials, network, permissions, format
            raise ConfigError(
                f"privacy.noise_key.secret: cannot read {where} from Secret Manager on this machine "
                f"({type(e).__name__}; credentials? the secret must hold the key as hex)"
            ) from None
        return
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError(
            f"privacy.noise_key.{kind}: {origin} does not hold a hex key (make one with "
            'python -c "import os; print(os.urandom(32).hex())")'
        ) from None
    if len(key) < 16:
        raise ConfigError(
            f"privacy.noise_key.{kind}: the key in {origin} is {len(key)} bytes; it must be at least 16 "
            "(32 random bytes recommended)"
        )
