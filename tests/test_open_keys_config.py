"""Open key domains in the configuration (issue 33): ``streams: {keys: open, ...}`` and a histogram's
``domain: open`` are checked, then refused with one line naming the key, before any pipeline runs (the core
exists in ``transforms/core/selection``; the Beam step is the next round's)."""

from __future__ import annotations

import pytest

from pipelines.config import ConfigError, load_config, parse_config
from pipelines.config.load import read_raw

OPEN = {"field": "region", "keys": "open", "max_keys": 1000, "max_keys_per_person": 2, "selection_share": 0.5}


def _raw(**changes):
    raw = read_raw("configs/demo_person.yaml")
    raw.update(changes)
    return raw


def _error(raw) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    return str(e.value)


def test_open_stream_keys_are_checked_then_refused():
    msg = _error(_raw(streams=OPEN))
    assert "streams.keys" in msg and "not yet wired" in msg
    assert "max_keys_per_person" in _error(_raw(streams={**OPEN, "max_keys_per_person": 0}))
    assert "streams.max_keys" in _error(_raw(streams={k: v for k, v in OPEN.items() if k != "max_keys"}))
    assert "selection_share" in _error(_raw(streams={**OPEN, "selection_share": 1.5}))
    assert "streams.field" in _error(_raw(streams={k: v for k, v in OPEN.items() if k != "field"}))


def test_open_histogram_domain_is_refused():
    raw = _raw()
    raw["queries"] = [dict(q) for q in raw["queries"]]
    raw["queries"][1]["domain"] = "open"
    msg = _error(raw)
    assert "domain" in msg and "not yet wired" in msg


def test_declared_keys_unchanged():
    assert load_config("configs/demo_person.yaml").stream_keys == ("eu", "us")
