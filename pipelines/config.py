"""YAML configuration of a release pipeline, parsed at the edge into validated dataclasses.

Every invalid setting raises :class:`ConfigError` before any pipeline is built,
with a message naming the key and, where there is a choice, the valid choices.
The core never reads YAML: :meth:`PipelineConfig.dynamic_config` turns this into
``transforms.core.DynamicConfig``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml

from transforms.core import mechanisms as registry
from transforms.core.accounting import ZCDP, ApproxDP, PrivacyUnit, PureDP
from transforms.core.config import DynamicConfig, QuerySet
from transforms.records import NoiseKey
from transforms.spec import LATE_POLICIES

__all__ = ["ConfigError", "PipelineConfig", "SinkConfig", "load_config", "parse_config"]

MECHANISMS = registry.names()  # the choices come from the mechanism registry
PROFILES = ("paper", "tuned")
UNITS = ("update", "entry")
QUERY_TYPES = ("count", "histogram", "sum")
SOURCE_TYPES = ("file", "pubsub")
SOURCE_FORMATS = ("jsonl", "csv", "avro")
SINK_TYPES = ("file", "pubsub")
SINK_FORMATS = ("jsonl", "avro")
SUM_BUCKETS = 101  # a sum's values are rounded to 101 evenly spaced levels in [lower, upper]


class ConfigError(ValueError):
    """An invalid configuration; the message names the key and what is allowed."""


class MissingTimeError(ConfigError):
    """A bounded run without its public origin or end (the CLI adds the input's
    first and last times to the message, for the operator to copy)."""


_SUBSCRIPTION = re.compile(r"^projects/[^/]+/subscriptions/[^/]{3,255}$")
_TOPIC = re.compile(r"^projects/[^/]+/topics/[^/]{3,255}$")


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


def _unknown(d: dict, allowed, path: str):
    extra = sorted(set(d) - set(allowed))
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
        # a linear query whose entries (level / upper) lie in [0, 1]
        levels = [self.lower + b * (self.upper - self.lower) / (SUM_BUCKETS - 1) for b in range(SUM_BUCKETS)]
        return QuerySet(self.name, "linear", domain_size=SUM_BUCKETS, matrix=(tuple(v / self.upper for v in levels),))

    def encode(self, record: dict) -> int | None:
        """The domain index of a record for this query (None: it does not fit)."""
        if self.type == "count":
            return 0
        value = record.get(self.field)
        if self.type == "histogram":
            if value in self.domain:
                return self.domain.index(value)
            # CSV gives strings: match a domain value by its text
            text = [str(d) for d in self.domain]
            return text.index(str(value)) if str(value) in text else None
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        clamped = min(max(float(value), self.lower), self.upper)
        return int(round((clamped - self.lower) / (self.upper - self.lower) * (SUM_BUCKETS - 1)))

    @property
    def scale(self) -> float:
        """Multiply released estimates by this (sum queries are released in units of ``upper``)."""
        return self.upper if self.type == "sum" else 1.0


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
    source_type: str = "file"
    subscription: str | None = None
    timestamp_attribute: str | None = None
    id_attribute: str | None = None
    dedup_seconds: float = 600.0

    @property
    def streaming(self) -> bool:
        return self.source_type == "pubsub"

    @property
    def streams(self) -> tuple:
        return self.stream_keys if self.stream_field else ("default",)

    @property
    def privacy_unit(self) -> PrivacyUnit:
        return PrivacyUnit(self.unit, self.max_mutations_per_entry)

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

    def release_digest(self) -> str:
        """A digest of everything that defines the release (privacy, time, streams,
        mechanism, queries and their encodings), not of where data comes from or
        goes to: mixed into the release identity that keys the noise, and
        recorded in the release manifest."""
        from transforms.core.noise import config_digest

        return config_digest(
            "pipeline-config-v1",
            (self.epsilon, self.delta, self.rho, self.unit, self.max_mutations_per_entry, self.disable_noise),
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
    top = ("privacy", "time", "streams", "mechanism", "release", "queries", "source", "sinks")
    _unknown(raw, top, "config")
    priv = raw.get("privacy") or {}
    _unknown(
        priv,
        ("epsilon", "delta", "rho", "unit", "max_mutations_per_entry", "disable_noise", "noise_key", "release_id"),
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
        rho = _number(rho, "privacy.rho", positive=True)
        eps = 0.0
    else:
        eps = _number(_req(priv, "epsilon", "privacy"), "privacy.epsilon", positive=True)
    delta = _number(priv.get("delta", 0.0), "privacy.delta", nonneg=True)
    if delta >= 1:
        raise ConfigError(f"privacy.delta: must be < 1; got {delta}")
    unit = _choice(priv.get("unit", "update"), UNITS, "privacy.unit")
    k = priv.get("max_mutations_per_entry", 1)
    if unit == "entry" and "max_mutations_per_entry" not in priv:
        raise ConfigError("privacy.max_mutations_per_entry: required when privacy.unit is entry")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"privacy.max_mutations_per_entry: must be an integer >= 1; got {k!r}")
    disable = priv.get("disable_noise", False)
    if not isinstance(disable, bool):
        raise ConfigError(f"privacy.disable_noise: must be true or false; got {disable!r}")

    tm = raw.get("time") or {}
    _unknown(tm, ("field", "tick_seconds", "ticks", "allowed_lateness", "late_policy", "origin", "end"), "time")
    ticks = tm.get("ticks", False)
    if not isinstance(ticks, bool):
        raise ConfigError(f"time.ticks: must be true or false; got {ticks!r}")
    tick_seconds = 1.0 if ticks else _number(tm.get("tick_seconds", 60), "time.tick_seconds", positive=True)
    lateness = _number(tm.get("allowed_lateness", 0), "time.allowed_lateness", nonneg=True)
    late_policy = _choice(tm.get("late_policy", "current"), LATE_POLICIES, "time.late_policy")
    origin = _origin(tm["origin"], "time.origin") if tm.get("origin") is not None else (1.0 if ticks else 0.0)
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

    st = raw.get("streams") or {}
    _unknown(st, ("field", "keys"), "streams")
    sfield = st.get("field")
    keys = tuple(st.get("keys") or ())
    if sfield is not None and not keys:
        raise ConfigError("streams.keys: declare the stream keys (public) when streams.field is set")
    if len(set(keys)) != len(keys) or not all(isinstance(x, str) and x for x in keys):
        raise ConfigError("streams.keys: must be distinct non-empty strings")

    mech = raw.get("mechanism") or {}
    if not isinstance(mech, dict):
        raise ConfigError("mechanism: must be a mapping such as {kind: fully_dynamic}")
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

    rel = raw.get("release") or {}
    if not isinstance(rel, dict):
        raise ConfigError("release: must be a mapping such as {every_ticks: 1}")
    _unknown(rel, ("every_ticks", "clamp", "round"), "release")
    every = rel.get("every_ticks", 1)
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ConfigError(f"release.every_ticks: must be an integer >= 1 (ticks per release); got {every!r}")
    for key in ("clamp", "round"):
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
            queries.append(QueryConfig(name, "count"))
        elif qtype == "histogram":
            fld = _req(q, "field", path)
            dom = q.get("domain")
            if not isinstance(dom, list) or not dom or len(set(map(repr, dom))) != len(dom):
                raise ConfigError(f"{path}.domain: must be a non-empty list of distinct values")
            queries.append(QueryConfig(name, "histogram", fld, tuple(dom)))
        else:
            fld = _req(q, "field", path)
            lo = _number(_req(q, "lower", path), f"{path}.lower", nonneg=True)
            hi = _number(_req(q, "upper", path), f"{path}.upper", positive=True)
            if not hi > lo:
                raise ConfigError(f"{path}.upper: must be > lower ({lo}); got {hi}")
            queries.append(QueryConfig(name, "sum", fld, (), lo, hi))
    if len({q.name for q in queries}) != len(queries):
        raise ConfigError("queries: names must be unique")

    src = raw.get("source") or {}
    stype = _choice(src.get("type", "file"), SOURCE_TYPES, "source.type")
    subscription = ts_attr = id_attr = None
    dedup = 600.0
    spath = None
    sformat = "jsonl"
    if stype == "file":
        _unknown(src, ("type", "path", "format"), "source")
        missing = [k for k in (() if ticks else ("origin",)) + ("end",) if tm.get(k) is None]
        if missing:
            raise MissingTimeError(
                f"time.{' and time.'.join(missing)}: required for a file (bounded) source: the release's schedule "
                "runs from time.origin (tick 1) to time.end and must be public configuration, never derived from "
                "the data (epoch seconds or an ISO-8601 date-time such as 2026-11-22T00:00:00Z"
                + (", or with time.ticks the last tick" if ticks else "")
                + ")"
            )
        spath = _req(src, "path", "source")
        sformat = _choice(src.get("format", "jsonl"), SOURCE_FORMATS, "source.format")
        if base_dir is not None and not Path(spath).is_absolute():
            spath = str(base_dir / spath)
    else:
        _unknown(
            src, ("type", "subscription", "format", "timestamp_attribute", "id_attribute", "dedup_seconds"), "source"
        )
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
    for i, sk in enumerate(raw.get("sinks") or [{"type": "file", "path": "output/", "format": "jsonl"}]):
        path = f"sinks[{i}]"
        if not isinstance(sk, dict):
            raise ConfigError(f"{path}: must be a mapping")
        skind = _choice(sk.get("type", "file"), SINK_TYPES, f"{path}.type")
        if skind == "file":
            _unknown(sk, ("type", "path", "format", "window_seconds", "confidential_path"), path)
            out_path = str(_req(sk, "path", path))
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
        _unknown(sk, ("type", "topic", "nodes_topic", "dead_letter_topic"), path)
        if disable:
            raise ConfigError(
                f"{path}.type: privacy.disable_noise releases exact, non-private answers and is for tests only; "
                "it refuses pubsub sinks (use a file sink, or turn disable_noise off)"
            )
        topics = {}
        for key in ("topic", "nodes_topic", "dead_letter_topic"):
            v = _req(sk, key, path) if key == "topic" else sk.get(key)
            if v is not None and (not isinstance(v, str) or not _TOPIC.match(v)):
                raise ConfigError(
                    f"{path}.{key}: must be projects/PROJECT/topics/NAME (NAME of 3 or more characters); got {v!r}"
                )
            topics[key] = v
        sinks.append(SinkConfig("pubsub", **topics))
    if not any(sk.takes_dead_letters for sk in sinks):
        raise ConfigError(
            "sinks: no sink takes the dead letters, which would be lost: add a file sink or set "
            "dead_letter_topic on a pubsub sink"
        )

    return PipelineConfig(
        epsilon=eps,
        delta=delta,
        rho=rho,
        unit=unit,
        max_mutations_per_entry=k,
        disable_noise=disable,
        noise_key=_noise_key(priv.get("noise_key", {"env": "DP_NOISE_KEY"})),
        time_field=str(tm.get("field", "time")),
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
        source_type=stype,
        subscription=subscription,
        timestamp_attribute=ts_attr,
        id_attribute=id_attr,
        dedup_seconds=dedup,
    )


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
    try:
        config = cfg.dynamic_config()
        spec.core_cls._configure(config, cfg.mechanism_options())
    except ValueError as e:
        raise ConfigError(str(e)) from None
    kinds = {q.query_set().kind for q in cfg.queries}
    unsupported = sorted(kinds - set(spec.query_kinds))
    if unsupported:
        raise ConfigError(
            f"mechanism.kind: {cfg.mechanism} does not answer {', '.join(unsupported)} queries "
            f"(sum queries are linear); it answers {', '.join(spec.query_kinds)}"
        )
