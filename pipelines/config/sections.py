"""The configuration's sections that are not a choice of kind: ``privacy``, ``time``, ``streams`` and
``release`` (``docs/pipelines.md`` lists the keys). Each is a strict model: an unknown key is refused, a value
is checked where it is read, and the checks that depend on which keys are present run on the mapping first
(:meth:`~pipelines.model.Section.check_raw`)."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import BeforeValidator, PrivateAttr, WithJsonSchema, model_validator
from pydantic.json_schema import SkipJsonSchema

from pipelines.model import (
    MAX_SPAN_SECONDS,
    Section,
    choice,
    did_you_mean,
    flag,
    in_range,
    integer,
    issue,
    not_applicable,
    number,
    span,
    text,
    time_in_range,
    time_value,
)
from transforms.records import NoiseKey
from transforms.sharded import DEFAULT_SHARDS, MAX_SHARDS, check_shards
from transforms.spec import LATE_POLICIES

__all__ = [
    "PrivacyConfig",
    "LedgerConfig",
    "LedgerCap",
    "TimeConfig",
    "StreamsConfig",
    "ReleaseConfig",
    "EPSILON_RANGE",
    "RHO_RANGE",
    "UNITS",
    "RESERVED_FIELDS",
    "ENTRY_KEYS",
    "PERSON_KEYS",
]

# budgets the mechanisms are tested with (outside them the calibration under- or overflows: a math domain
# error at epsilon 1e4, an overflow at rho 1e-12)
EPSILON_RANGE = (1e-6, 100.0)
RHO_RANGE = (1e-10, 1e4)
UNITS = ("update", "entry", "person")
#: the keys of each unit beyond ``unit`` (a key of another unit is refused, naming the unit it needs)
ENTRY_KEYS = ("max_mutations_per_entry", "mutation_window", "max_insertions_per_entry")
PERSON_KEYS = ("person_field", "max_entries_per_person", "max_entries_window", "max_streams_per_person")
#: names the parser reads itself: a person field by one of these names would be read as something else
RESERVED_FIELDS = ("op", "id", "seq", "item", "stream")
#: the JSON schemas of the person unit's keys: an editor refuses what the loader refuses (0, and null: a key left
#: out is "not written"; a null is refused by the loader, so the schema does not offer it)
_LIMIT_SCHEMA = {"type": "integer", "minimum": 1}
_MAX_STREAMS_SCHEMA = {
    "anyOf": [{"type": "integer", "minimum": 1}, {"const": "per_stream"}],
    "description": "unit person: the streams one person's updates may reach (the budget then protects the person "
    "across the release), or per_stream (each stream's budget protects the person's part in it)",
}
_WINDOW_SCHEMA = {"type": "number", "exclusiveMinimum": 0}
_PERSON_FIELD_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "not": {"enum": list(RESERVED_FIELDS)},
    "description": "the record field that identifies the person (unit person; the privacy id, never released)",
}
DATASET = re.compile(r"[A-Za-z0-9_.:/-]{1,128}")
#: the ledger stores a URL may name (``sqlite:///relative.db``, ``sqlite:////absolute.db``)
LEDGER_SCHEMES = ("sqlite:///", "postgresql://", "postgres://")
RELEASE_ID = re.compile(r"[A-Za-z0-9_.-]{8,128}")
#: a time: epoch seconds or an ISO-8601 date-time (YAML reads an unquoted one as a date-time)
TIME_SCHEMA = {"anyOf": [{"type": "number"}, {"type": "string", "format": "date-time"}, {"type": "null"}]}


def _epsilon(v) -> float:
    return in_range(
        number(v, positive=True),
        *EPSILON_RANGE,
        "for the whole release (per stream, or per person across all streams with max_streams_per_person)",
    )


def _rho(v) -> float | None:
    return None if v is None else in_range(number(v, positive=True), *RHO_RANGE, "zCDP per stream")


def _delta(v) -> float:
    delta = number(v, nonneg=True)
    if delta >= 1:
        raise issue(f"must be < 1; got {delta}")
    return delta


def _person_field(v) -> str:
    text(v, "the name of the record field that identifies the person (a string)")
    if v in RESERVED_FIELDS:
        raise issue(f"must name a field of its own, not one of {', '.join(RESERVED_FIELDS)}; got {v!r}")
    return v


def _max_insertions(v) -> int:
    return integer(v, "an integer >= 1 (omit it for the unit's default: once, or any number within mutation_window)")


def _release_id(v) -> str | None:
    if v is not None and (not isinstance(v, str) or not RELEASE_ID.fullmatch(v)):
        raise issue(f"must be 8 to 128 letters, digits, '_', '.' or '-' (omit it for a new release); got {v!r}")
    return v


def _noise_key(value) -> tuple:
    if isinstance(value, tuple):
        return value
    if not isinstance(value, dict) or len(value) != 1:
        raise issue("must be one of {env: VAR}, {file: PATH}, {secret: NAME}")
    ((kind, where),) = value.items()
    choice(kind, ("env", "file", "secret"))
    if not isinstance(where, str) or not where:
        raise issue("must be a non-empty string", kind)
    if kind == "secret":
        try:
            NoiseKey.from_secret_manager(where)
        except ValueError as e:
            raise issue(str(e), "secret") from None
    return (kind, where)


def _ledger_url(v) -> str:
    text(v, "a ledger URL: sqlite:///path/file.db or postgresql://user@host/db")
    if not v.startswith(LEDGER_SCHEMES):
        scheme = v.split(":", 1)[0] if ":" in v else v
        raise issue(
            f"must start with one of {', '.join(LEDGER_SCHEMES)} (SQLite in a file, or a PostgreSQL server); got "
            f"{scheme!r}" + did_you_mean(scheme + "://", LEDGER_SCHEMES)
        )
    if v.startswith("sqlite:") and not v[len("sqlite:///") :]:
        raise issue("sqlite:/// must be followed by the path of the database file, e.g. sqlite:///ledger.db")
    return v


def _dataset(v) -> str:
    if not isinstance(v, str) or not DATASET.fullmatch(v):
        raise issue(f"must be 1 to 128 letters, digits, '_', '.', ':', '/' or '-' (the data's name); got {v!r}")
    return v


_LEDGER_URL_SCHEMA = {"type": "string", "pattern": "^(sqlite:///.+|postgres(ql)?://.*)$"}
_DATASET_SCHEMA = {"type": "string", "pattern": "^[A-Za-z0-9_.:/-]{1,128}$"}

_NOISE_KEY_SCHEMA = {
    "oneOf": [
        {"type": "object", "properties": {k: {"type": "string", "minLength": 1}}, "required": [k]}
        | {"additionalProperties": False}
        for k in ("env", "file", "secret")
    ]
}


class LedgerCap(Section):
    """``privacy.ledger.cap``: the most a dataset's releases may spend together, in the terms of the configured
    budget (``{epsilon}``, ``{epsilon, delta}`` or ``{rho}``: the same keys as the budget)."""

    EXAMPLE: ClassVar[str] = "{epsilon: 3.0}"
    NONE_IS_EMPTY: ClassVar[bool] = False

    epsilon: Annotated[float | None, BeforeValidator(lambda v: None if v is None else number(v, positive=True))] = None
    delta: Annotated[float | None, BeforeValidator(lambda v: None if v is None else _delta(v))] = None
    rho: Annotated[float | None, BeforeValidator(lambda v: None if v is None else number(v, positive=True))] = None

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        if data.get("rho") is not None:
            not_applicable(data, ("epsilon", "delta"), "with cap.rho (a zCDP cap)")
        elif data.get("epsilon") is None:
            raise issue("missing (required): the cap in the budget's terms, epsilon (with delta) or rho", "epsilon")
        return data


class LedgerConfig(Section):
    """``privacy.ledger``: the budget ledger across releases (``pipelines.ledger``, ``docs/accounting.md``): the
    store (``sqlite:///path/file.db`` or ``postgresql://...``), the dataset the releases are made of, and the
    dataset's cap; a launch whose release would take the dataset over its cap is refused."""

    EXAMPLE: ClassVar[str] = "{url: sqlite:///ledger.db, dataset: flights, cap: {epsilon: 3.0}}"
    NONE_IS_EMPTY: ClassVar[bool] = False

    url: Annotated[str, BeforeValidator(_ledger_url), WithJsonSchema(_LEDGER_URL_SCHEMA)]
    dataset: Annotated[str, BeforeValidator(_dataset), WithJsonSchema(_DATASET_SCHEMA)]
    cap: LedgerCap


def _max_streams(value):
    """``privacy.max_streams_per_person``: an integer >= 1, or ``per_stream``."""
    if value == "per_stream":
        return value
    return integer(value, "an integer >= 1 (the streams one person may reach), or per_stream")


class PrivacyConfig(Section):
    """``privacy``: the budget per stream for the whole release (``epsilon`` with ``delta``, or ``rho``), the
    privacy unit, the noise switch (tests only) and key, and the release to reproduce or continue."""

    EXAMPLE: ClassVar[str] = "{epsilon: 1.0}"

    epsilon: Annotated[float, BeforeValidator(_epsilon)] = 0.0
    delta: Annotated[float, BeforeValidator(_delta)] = 0.0
    rho: Annotated[float | None, BeforeValidator(_rho)] = None
    unit: Annotated[Literal["update", "entry", "person"], BeforeValidator(lambda v: choice(v, UNITS))] = "update"
    max_mutations_per_entry: Annotated[int | None, BeforeValidator(lambda v: v if v is None else integer(v))] = 1
    mutation_window: Annotated[
        float | None,
        BeforeValidator(
            lambda v: in_range(number(v, nonneg=True), 0, MAX_SPAN_SECONDS, "seconds after the first insertion")
        ),
    ] = None
    # None: not configured, the unit's default (``PrivacyUnit.insertion_limit``: once under a mutation limit, a
    # deleted id never comes back (``constraint_exceeded``); any number under ``mutation_window`` alone). Left out
    # of ``PrivacyUnit`` for the entry unit when not configured, so that its repr (the noise keys) is unchanged.
    max_insertions_per_entry: Annotated[
        int | None, BeforeValidator(_max_insertions), WithJsonSchema({"type": "integer", "minimum": 1})
    ] = None
    person_field: Annotated[str | None, BeforeValidator(_person_field), WithJsonSchema(_PERSON_FIELD_SCHEMA)] = None
    max_entries_per_person: Annotated[
        int | None, BeforeValidator(lambda v: integer(v)), WithJsonSchema(_LIMIT_SCHEMA)
    ] = None
    max_entries_window: Annotated[
        float | None,
        BeforeValidator(
            lambda v: in_range(
                number(v, positive=True), 0, MAX_SPAN_SECONDS, "seconds: tumbling windows from time.origin"
            )
        ),
        WithJsonSchema(_WINDOW_SCHEMA),
    ] = None
    # unit person: a person's updates are admitted in at most this many streams, each stream running at its share
    # of the budget, so the budget protects a person across the whole release; "per_stream": each stream's budget
    # protects a person's part in it (a person in k streams: k times the budget). Required with several declared
    # streams (PipelineConfig._check_max_streams); None: not written (one stream, or open keys)
    max_streams_per_person: Annotated[
        int | Literal["per_stream"] | None, BeforeValidator(_max_streams), WithJsonSchema(_MAX_STREAMS_SCHEMA)
    ] = None
    disable_noise: Annotated[bool, BeforeValidator(flag)] = False
    noise_key: Annotated[tuple[str, str], BeforeValidator(_noise_key), WithJsonSchema(_NOISE_KEY_SCHEMA)] = (
        "env",
        "DP_NOISE_KEY",
    )
    release_id: Annotated[str | None, BeforeValidator(_release_id)] = None
    ledger: LedgerConfig | None = None  # None: no ledger (each launch spends a new budget, unrecorded)

    @model_validator(mode="after")
    def _cap_like_budget(self):
        """The cap has the budget's keys: a cap in other terms cannot be compared with what a release spends."""
        if self.ledger is not None:
            cap = self.ledger.cap
            want = ("rho",) if self.rho is not None else ("epsilon", "delta") if self.delta > 0 else ("epsilon",)
            have = tuple(k for k in ("epsilon", "delta", "rho") if getattr(cap, k) is not None)
            if have != want and not (want == ("epsilon",) and have == ("epsilon", "delta") and cap.delta == 0):
                budget = "{" + ", ".join(want) + "}"
                raise issue(
                    f"must be {budget}, in the terms of the configured budget; got {{{', '.join(have)}}}",
                    "ledger.cap",
                )
        return self

    # whether privacy.noise_key was written in the configuration (only the implicit default may fall back to a
    # one-off key when its variable is unset: an explicit key that is missing is a configuration error)
    _noise_key_explicit: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_noise_key(cls, data, handler):
        model = handler(data)
        if isinstance(data, dict) and data.get("noise_key") is not None:
            model._noise_key_explicit = True
        return model

    @property
    def noise_key_explicit(self) -> bool:
        """``privacy.noise_key`` was written in the configuration (not the implicit ``{env: DP_NOISE_KEY}``)."""
        return self._noise_key_explicit

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        if data.get("rho") is not None:
            if "epsilon" in data:
                raise issue(
                    "give either privacy.epsilon (with privacy.delta) or privacy.rho (zCDP), not both", "epsilon"
                )
            not_applicable(data, ("delta",), "with privacy.rho (zCDP has no delta)")
        elif "epsilon" not in data:
            raise issue("missing (required)", "epsilon")
        unit = data.get("unit", "update")
        has_k = "max_mutations_per_entry" in data
        if unit == "entry" and not has_k and data.get("mutation_window") is None:
            raise issue(
                "required when privacy.unit is entry (or, for the changelog mechanisms dcr, hdcr and swcr, "
                "privacy.mutation_window: seconds after an entry's first insertion)",
                "max_mutations_per_entry",
            )
        if unit == "update":
            not_applicable(data, ENTRY_KEYS, "when privacy.unit is update (set unit: entry)")
            not_applicable(data, PERSON_KEYS, "when privacy.unit is update (set unit: person)")
        elif unit == "entry":
            not_applicable(data, PERSON_KEYS, "when privacy.unit is entry (set unit: person)")
        elif unit == "person":
            for key, what in (
                ("person_field", "the record field that identifies the person (the privacy id; never released)"),
                ("max_entries_per_person", "an integer >= 1: at most this many entries of one person are admitted"),
                ("max_mutations_per_entry", "an integer >= 1: each admitted entry's mutations"),
            ):
                if key not in data:
                    raise issue(f"required when privacy.unit is person: {what}", key)
        if unit == "entry" and not has_k:
            return {**data, "max_mutations_per_entry": None}  # time-bounded only: no limit on the mutations
        if has_k and data["max_mutations_per_entry"] is None:
            raise issue("must be an integer >= 1; got None", "max_mutations_per_entry")
        return data


class TimeConfig(Section):
    """``time``: the time field, the tick, the lateness and its policy, and the release's public ``origin``
    (the start of tick 1) and ``end`` (exclusive), kept as epoch seconds (None: not configured)."""

    EXAMPLE: ClassVar[str] = "{field: time, tick_seconds: 600, origin: 0, end: 86400}"

    field: Annotated[str, BeforeValidator(lambda v: text(v, "the name of the time field (a string)"))] = "time"
    tick_seconds: Annotated[
        float,
        BeforeValidator(
            lambda v: in_range(number(v, positive=True), 1e-3, MAX_SPAN_SECONDS, "a tick of a millisecond to 30 years")
        ),
    ] = 60.0
    ticks: Annotated[bool, BeforeValidator(flag)] = False
    allowed_lateness: Annotated[float, BeforeValidator(span)] = 0.0
    late_policy: Annotated[Literal["current", "dead_letter"], BeforeValidator(lambda v: choice(v, LATE_POLICIES))] = (
        "current"
    )
    origin: Annotated[float | None, WithJsonSchema(TIME_SCHEMA)] = None
    end: Annotated[float | None, WithJsonSchema(TIME_SCHEMA | {"description": "with ticks: the last tick"})] = None

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        ticks = data.get("ticks", False)
        if not isinstance(ticks, bool):
            raise issue(f"must be true or false; got {ticks!r}", "ticks")
        if ticks:
            not_applicable(data, ("tick_seconds",), "with time.ticks (a tick is one unit of the time field)")
            data = {**data, "tick_seconds": 1.0}
        origin = None
        if data.get("origin") is not None:
            origin = time_in_range(time_value(data["origin"], "origin"), "origin")
        start = origin if origin is not None else (1.0 if ticks else 0.0)
        end = None
        if data.get("end") is not None:
            if ticks:  # the last tick, inclusive (ticks are numbered from 1)
                last = data["end"]
                if isinstance(last, bool) or not isinstance(last, int) or last < 1:
                    raise issue(f"with time.ticks, the last tick (an integer >= 1); got {last!r}", "end")
                end = float(last) + 1.0
            else:
                end = time_value(data["end"], "end")
                if not end > start:
                    raise issue(f"must be after time.origin ({start}); got {end}", "end")
            time_in_range(end, "end")
        return {**data, "origin": origin, "end": end}

    @property
    def start(self) -> float:
        """The event time at which tick 1 starts (configured, else 0, or 1 with ``ticks``)."""
        if self.origin is not None:
            return self.origin
        return 1.0 if self.ticks else 0.0


#: kept for importers (issue 33, round 7): a histogram's ``domain: open`` was refused with this line; it is
#: accepted since round 8 (:func:`check_open_domain`), the line names what an open domain needs
OPEN_DOMAIN_REFUSED = (
    "domain: open needs max_cells and max_cells_per_person (and optionally selection_share, failure) on the "
    "histogram query"
)

#: the open-key settings of ``streams`` (issue 33): with ``keys: open`` only
OPEN_KEY_SETTINGS = ("max_keys", "max_keys_per_person", "selection_share", "failure")

#: the open-cell settings of a histogram query (issue 33): with ``domain: open`` only
OPEN_CELL_SETTINGS = ("max_cells", "max_cells_per_person", "selection_share", "failure")


def _open_settings(data: dict, cap: str, per_person: str, what: str) -> dict:
    """The checked ``cap`` and ``per_person`` (integers >= 1, required), ``selection_share`` (default 0.5) and
    ``failure`` (default 1e-9) of an open domain (``what``: where it is open, for the messages)."""
    for key in (cap, per_person):
        v = data.get(key)
        if v is None:
            raise issue(f"required with {what} (an integer >= 1)", key)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise issue(f"must be an integer >= 1; got {v!r}", key)
    share = data.get("selection_share", 0.5)
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1:
        raise issue(
            f"must be a number between 0 and 1 (the selection's share of the budget); got {share!r}", "selection_share"
        )
    failure = data.get("failure", 1e-9)
    if isinstance(failure, bool) or not isinstance(failure, (int, float)) or not 0 < failure < 1:
        raise issue(
            f"must be a number between 0 and 1 (the selection's failure probability under pure epsilon); got "
            f"{failure!r}",
            "failure",
        )
    return {"selection_share": float(share), "failure": float(failure)}


def check_open_keys(data: dict) -> dict:
    """``streams: {field, keys: open, max_keys, max_keys_per_person, selection_share, failure}``: the checked
    settings (``selection_share`` default 0.5, ``failure`` default 1e-9)."""
    if data.get("field") is None:
        raise issue("open keys need streams.field (the field that names the key)", "keys")
    settings = _open_settings(data, "max_keys", "max_keys_per_person", "keys: open")
    return {**data, "keys": (), "open_keys": True, **settings}


def check_open_domain(q: dict) -> dict:
    """A histogram query's ``domain: open`` (issue 33): the cells are not declared; ``max_cells`` (the cap on
    released cells, as ``streams.max_keys``), ``max_cells_per_person`` (the (stream, cell) pairs a person may
    contribute to: the K of the selection), ``selection_share`` and ``failure`` as ``streams: {keys: open}``.
    Returns the checked settings (``open_domain`` True, the domain empty)."""
    return {"domain": (), "open_domain": True, **_open_settings(q, "max_cells", "max_cells_per_person", "domain: open")}


def refuse_open_cell_settings(q: dict) -> None:
    """The open-cell settings apply to ``domain: open`` only; ``open_domain`` is never written."""
    if "open_domain" in q:
        raise issue("unknown key; write domain: open", "open_domain")
    for key in OPEN_CELL_SETTINGS:
        if key in q and q.get("domain") != "open":
            raise issue("applies only with domain: open (a histogram query)", key)


def _shards(value) -> int:
    try:
        return check_shards(value)  # the transform's own check, one rule
    except ValueError:
        raise issue(
            f"must be an integer from 0 (one key per entry) to {MAX_SHARDS} (shards per stream); got {value!r}"
        ) from None


class StreamsConfig(Section):
    """``streams``: the field that names a record's stream and the declared (public) stream keys; no field:
    one stream. ``keys: open`` (issue 33): the keys are not declared; a key is released from the period its
    noisy count of contributors crosses the selection's threshold (``transforms/open_keys.py``), with
    ``max_keys`` (the cap on RELEASED keys: once that many are released no further key is selected;
    decided from the released keys only, so it costs nothing),
    ``max_keys_per_person`` (K: enforced, refused updates are dead letters ``contribution_bounded``),
    ``selection_share`` (of the budget) and ``failure`` (the selection's delta under pure epsilon).
    ``registry_shards``: how a streaming job on Flink or Dataflow keys its entry registry (issue 30,
    ``transforms/sharded.py``): that many hash shards per stream (default 16), or 0 for one key per entry (the
    layout of savepoints taken before shards existed: a job restored from one keeps 0). Changes no release; fixed
    for a job's life (stored with the state: a restore with another number fails)."""

    EXAMPLE: ClassVar[str] = "{field: region, keys: [eu, us]}"

    field: Annotated[str | None, BeforeValidator(lambda v: text(v, "the name of the stream field (a string)"))] = None
    keys: Annotated[
        tuple[str, ...],
        WithJsonSchema({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"const": "open"}], "default": []}),
    ] = ()
    open_keys: SkipJsonSchema[bool] = False  # set by keys: open (check_raw), never written
    max_keys: int | None = None
    max_keys_per_person: int | None = None
    selection_share: float | None = None
    failure: float | None = None
    registry_shards: Annotated[int, BeforeValidator(_shards)] = DEFAULT_SHARDS

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        if "open_keys" in data:
            raise issue("unknown key; write keys: open", "open_keys")
        raw_keys = data.get("keys")
        if raw_keys == "open":
            return check_open_keys(data)
        for key in OPEN_KEY_SETTINGS:
            if key in data:
                raise issue("applies only with keys: open", key)
        if raw_keys is not None and not isinstance(raw_keys, list):
            raise issue(f"must be a list of stream keys such as [eu, us]; got {raw_keys!r}", "keys")
        if raw_keys and data.get("field") is None:
            raise issue("does not apply without streams.field (the field that names the stream)", "keys")
        keys = tuple(raw_keys or ())
        if data.get("field") is not None and not keys:
            raise issue("declare the stream keys (public) when streams.field is set", "keys")
        if len(set(keys)) != len(keys) or not all(isinstance(x, str) and x for x in keys):
            raise issue("must be distinct non-empty strings", "keys")
        return {**data, "keys": keys}


class ReleaseConfig(Section):
    """``release``: the cadence (one release per query per period of ``every_ticks`` ticks) and the
    post-processing of released values (``clamp``, ``round``, ``consistent``)."""

    EXAMPLE: ClassVar[str] = "{every_ticks: 1}"

    every_ticks: Annotated[int, BeforeValidator(lambda v: integer(v, "an integer >= 1 (ticks per release)"))] = 1
    clamp: Annotated[bool, BeforeValidator(flag)] = True
    round: Annotated[bool, BeforeValidator(flag)] = False
    # None (the default): each histogram projected onto its count (or its own total) with the bound B_h + |tau|
    # (docs/consistency.md "The default"); true: with THE count, today's worst-case bound; false: clamp only
    consistent: Annotated[bool | None, BeforeValidator(lambda v: None if v is None else flag(v))] = None
