"""The base of every configuration model: :class:`ConfigError`, the strict section model and the value checks
the sections share.

A configuration is validated by pydantic models (``pipelines.config`` for the sections, ``pipelines.io`` for the
sources and sinks). Every check raises :func:`issue`, a pydantic error that carries our own one-line message;
``pipelines.config.load`` turns the first one into a :class:`ConfigError` whose message starts with the key path
(``privacy.epsilon: must be > 0; got -1``). This module imports nothing of the project but ``transforms.spec``, so
that the sections and the IO modules can both build on it.
"""

from __future__ import annotations

import difflib
import math
import re
from datetime import UTC, datetime
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from transforms.spec import TIME_RANGE

__all__ = [
    "ConfigError",
    "MissingTimeError",
    "Section",
    "issue",
    "unknown_keys",
    "MAX_SPAN_SECONDS",
]

MAX_SPAN_SECONDS = 1e9  # a tick, a lateness or a future guard: at most about 30 years
ISSUE = "dp_config"  # the pydantic error type of our checks
MISSING_TIME = "dp_config_missing_time"  # a bounded run without its public origin or end
SUBSCRIPTION = re.compile(r"^projects/[^/]+/subscriptions/[^/]{3,255}$")
TOPIC = re.compile(r"^projects/[^/]+/topics/[^/]{3,255}$")


class ConfigError(ValueError):
    """An invalid configuration; the message names the key and what is allowed."""


class MissingTimeError(ConfigError):
    """A bounded run without its public origin or end (the CLI adds the input's
    first and last times to the message, for the operator to copy)."""


def issue(message: str, key: str = "", *, missing_time: bool = False) -> PydanticCustomError:
    """A failed check: ``message`` about ``key`` (a path relative to where the check runs: a field's own check
    gives none, a section's check names its key, a check of the whole configuration names the full path)."""
    kind = MISSING_TIME if missing_time else ISSUE
    return PydanticCustomError(kind, "{message}", {"message": message, "key": key})


def unknown_keys(extra: list[str], allowed) -> str:
    """The message for keys a section does not know, with the allowed ones and the nearest one."""
    allowed = sorted(allowed)
    return f"unknown key(s) {', '.join(extra)}; allowed: {', '.join(allowed)}" + did_you_mean(extra[0], allowed)


class Section(BaseModel):
    """A configuration section: a mapping with known keys only (an unknown key is refused with the allowed ones
    and a suggestion), immutable once validated. ``None`` is an empty section where :attr:`NONE_IS_EMPTY`."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    EXAMPLE: ClassVar[str] = ""  # shown when the section is not a mapping
    NONE_IS_EMPTY: ClassVar[bool] = True

    @classmethod
    def known_keys(cls) -> tuple[str, ...]:
        return tuple(f.alias or name for name, f in cls.model_fields.items())

    @model_validator(mode="before")
    @classmethod
    def _mapping_with_known_keys(cls, data: Any) -> Any:
        if isinstance(data, BaseModel):
            return data
        if data is None and cls.NONE_IS_EMPTY:
            data = {}
        if not isinstance(data, dict):
            example = f" such as {cls.EXAMPLE}" if cls.EXAMPLE else ""
            raise issue(f"must be a mapping{example}" + (f"; got {data!r}" if cls.EXAMPLE else ""))
        extra = sorted(map(str, set(data) - set(cls.known_keys())))
        if extra:
            raise cls.unknown(extra)
        return cls.check_raw(data)

    @classmethod
    def unknown(cls, extra: list[str]) -> PydanticCustomError:
        return issue(unknown_keys(extra, cls.known_keys()))

    @classmethod
    def check_raw(cls, data: dict) -> dict:
        """Checks that depend on which keys are present (a section overrides it); returns the mapping to
        validate field by field."""
        return data


# -- value checks (each returns the value as the configuration keeps it) -----------------------------------


def number(value, *, positive: bool = False, nonneg: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise issue(f"must be a number; got {value!r}")
    if positive and not value > 0:
        raise issue(f"must be > 0; got {value}")
    if nonneg and value < 0:
        raise issue(f"must be >= 0; got {value}")
    return float(value)


def in_range(value: float, lo: float, hi: float, why: str, key: str = "") -> float:
    if not lo <= value <= hi:
        raise issue(f"must be between {lo:g} and {hi:g} ({why}); got {value:g}", key)
    return value


def span(value) -> float:
    """Seconds of a tick, a lateness or a guard: a number >= 0 of at most 30 years."""
    return in_range(number(value, nonneg=True), 0, MAX_SPAN_SECONDS, "at most 30 years")


def choice(value, choices) -> Any:
    if value not in choices:
        raise issue(f"must be one of {', '.join(choices)}; got {value!r}" + did_you_mean(value, choices))
    return value


def did_you_mean(value, choices) -> str:
    """`` (did you mean X?)`` for a misspelt name, else nothing."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


#: the mark of a union member in an error's location (dropped from the key path of a message)
TAG = "type="
UNION_ERROR = "dp_config_union"


def tagged_union(registry: dict, default: str, key: str = "type"):
    """The discriminated union of the models in ``registry`` (name -> model), chosen by the mapping's ``key``
    (``default`` when it is missing)."""
    from typing import Annotated, Union

    from pydantic import Discriminator, Tag

    def which(value: Any):
        kind = value.get(key, default) if isinstance(value, dict) else default if value is None else None
        if kind is None and isinstance(value, BaseModel):
            kind = getattr(value, key, None)
        return TAG + kind if isinstance(kind, str) and kind in registry else None

    members = tuple(Annotated[cls, Tag(TAG + name)] for name, cls in registry.items())
    return Annotated[
        Union[members],  # noqa: UP007 - a tuple of members
        Discriminator(
            which,
            custom_error_type=UNION_ERROR,
            custom_error_message=f"{key}: {', '.join(registry)}",  # what config_error reads
        ),
    ]


def text(value, what: str = "a non-empty string") -> str:
    if not isinstance(value, str) or not value:
        raise issue(f"must be {what}; got {value!r}")
    return value


def flag(value) -> bool:
    if not isinstance(value, bool):
        raise issue(f"must be true or false; got {value!r}")
    return value


def integer(value, what: str = "an integer >= 1") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise issue(f"must be {what}; got {value!r}")
    return value


def subscription(value) -> str:
    if not isinstance(value, str) or not SUBSCRIPTION.match(value):
        raise issue(f"must be projects/PROJECT/subscriptions/NAME (NAME of 3 or more characters); got {value!r}")
    return value


def topic(value) -> str | None:
    if value is not None and (not isinstance(value, str) or not TOPIC.match(value)):
        raise issue(f"must be projects/PROJECT/topics/NAME (NAME of 3 or more characters); got {value!r}")
    return value


def time_value(value, key: str = "") -> float:
    """Epoch seconds from a number or an ISO-8601 date-time (UTC unless it says otherwise)."""
    if isinstance(value, datetime):  # YAML parses unquoted timestamps itself
        dt = value
    elif isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise issue(
                f"must be epoch seconds or an ISO-8601 date-time such as 2026-11-22T00:00:00Z; got {value!r}", key
            ) from None
    else:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise issue(f"must be a number; got {value!r}", key)
        return float(value)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def time_in_range(t: float, key: str = "") -> float:
    """Times are event-time seconds of the calendar's years 1 to 9999 (far inside Beam's timestamp range, so
    that no tick end or timer can overflow it)."""
    if not TIME_RANGE[0] <= t <= TIME_RANGE[1]:
        raise issue(
            f"must be a time between 0001-01-01 and 9999-12-31 (epoch seconds {TIME_RANGE[0]:.0f} to "
            f"{TIME_RANGE[1]:.0f}); got {t!r}",
            key,
        )
    return t


def not_applicable(data: dict, keys, why: str) -> None:
    """Keys that exist but do not apply to the chosen settings are errors too (silently ignoring them would
    hide a misunderstanding)."""
    for key in sorted(k for k in keys if k in data):
        raise issue(f"does not apply {why}; remove it", key)
