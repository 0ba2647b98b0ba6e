"""Reading a configuration: YAML -> the raw mapping -> command-line overrides applied to it -> the models
(every check, overrides included) -> one :class:`~pipelines.model.ConfigError` line for the first problem."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from pydantic import ValidationError

from pipelines.config.mechanism import check_mechanism
from pipelines.config.pipeline import PipelineConfig
from pipelines.model import ISSUE, MISSING_TIME, TAG, UNION_ERROR, ConfigError, MissingTimeError, did_you_mean

__all__ = ["load_config", "parse_config", "read_raw", "apply_overrides", "Override"]


class Override:
    """A command-line flag that sets one key of the configuration (``--origin`` sets ``time.origin``)."""

    def __init__(self, flag: str, key: str, value):
        self.flag, self.key, self.value = flag, key, value


def apply_overrides(raw, overrides) -> dict:
    """``raw`` with each override's key set (a copy): the models then check the values as if written in the
    file. A key under a section that is not a mapping is left for the models to refuse."""
    if not overrides:
        return raw
    raw = copy.deepcopy(raw)
    for o in overrides:
        if not isinstance(raw, dict):
            break
        section, key = o.key.split(".")
        if raw.get(section) is None:
            raw[section] = {}
        if isinstance(raw[section], dict):
            raw[section][key] = o.value
    return raw


def _path(loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, str) and part.startswith(TAG):
            continue  # a union member: not a key
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _join(path: str, key: str) -> str:
    if not key:
        return path
    return f"{path}.{key}" if path else key


def config_error(e: ValidationError, overrides=()) -> ConfigError:
    """The first problem of a failed validation, as one line naming the key (and the flag that set it)."""
    err = e.errors(include_url=False)[0]
    path, kind, ctx = _path(err["loc"]), err["type"], err.get("ctx") or {}
    cls = ConfigError
    if kind in (ISSUE, MISSING_TIME):
        key, message = _join(path, ctx["key"]), ctx["message"]
        cls = MissingTimeError if kind == MISSING_TIME else ConfigError
    elif kind == "missing":
        key, message = path, "missing (required)"
    elif kind == UNION_ERROR:
        value = err["input"]
        if isinstance(value, dict):
            name, choices = err["msg"].split(": ", 1)
            got = value.get(name)
            key = _join(path, name)
            message = f"must be one of {choices}; got {got!r}" + did_you_mean(got, choices.split(", "))
        else:
            key, message = path, f"must be a mapping; got {value!r}"
    else:  # a type the checks above let through (pydantic's own words)
        key, message = path, f"{err['msg']}; got {err.get('input')!r}"
    flags = [o.flag for o in overrides if o.key == key]
    where = f"{flags[0]} ({key})" if flags else (key or "config")
    return cls(f"{where}: {message}")


def parse_config(raw: dict, base_dir: Path | None = None, overrides=()) -> PipelineConfig:
    """Validate a parsed YAML mapping (see ``configs/demo.yaml``), with ``overrides`` (:class:`Override`) set
    first; relative source paths are taken from ``base_dir`` when given."""
    if not isinstance(raw, dict):
        raise ConfigError("the configuration must be a YAML mapping")
    raw = apply_overrides(raw, overrides)
    try:
        return PipelineConfig.model_validate(raw, context={"base_dir": base_dir})
    except ValidationError as e:
        raise config_error(e, overrides) from None


def read_raw(path: str | Path) -> dict:
    """The YAML mapping of a configuration file (ConfigError if missing or not YAML)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist")
    try:
        return yaml.safe_load(p.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML ({e})") from None


def load_config(path: str | Path, overrides=()) -> PipelineConfig:
    """The validated configuration of a YAML file, with ``overrides`` applied before validation, and the
    mechanism's own checks (:func:`~pipelines.config.mechanism.check_mechanism`)."""
    cfg = parse_config(read_raw(path), base_dir=None, overrides=overrides)
    check_mechanism(cfg)
    return cfg
