"""``transforms/core/protocol.py`` and ``transforms/core/mechanisms.py``: the small parts of the contract the fast
tier never exercised (issue 27): the option-less mechanisms' options compare equal (a restored release checks
its options against the configured ones), ``apply_batch`` is ``apply``, the registry's name lists and lookup."""

from __future__ import annotations

import numpy as np
import pytest

from transforms.core import DynamicConfig, NoiseSource, NoOptions, PureDP, QuerySet
from transforms.core.continual.fully_dynamic import FullyDynamicRelease
from transforms.core.foundation.entries import TickBatch
from transforms.core.mechanisms import MECHANISMS, get, names, update_names


def test_no_options_are_all_equal_and_hash_alike():
    a, b = NoOptions(), NoOptions()
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert a != object() and a != None  # noqa: E711
    assert len({a, b}) == 1


def test_apply_batch_is_apply():
    cfg = DynamicConfig((QuerySet("h", "histogram", domain_size=3),), PureDP(1.0))
    noise = NoiseSource(bytes(range(32)))
    one, two = FullyDynamicRelease(cfg, stream="s"), FullyDynamicRelease(cfg, stream="s")
    released = False
    for t in range(1, 40):
        batch = TickBatch(t, [(t % 3,)] * (t % 4), [], t % 4)
        r1 = one.apply(batch, noise)
        r2 = two.apply_batch(TickBatch(t, list(batch.inserts), [], batch.n_updates), noise)
        assert [(a.tick, a.query) for a in r1.answers] == [(a.tick, a.query) for a in r2.answers]
        assert r1.closes == r2.closes
        for a1, a2 in zip(r1.answers, r2.answers):
            np.testing.assert_array_equal(a1.estimate, a2.estimate)
        released = released or bool(r1.answers)
    assert released


def test_registry_names_and_lookup():
    assert names() == tuple(MECHANISMS)
    assert update_names() == tuple(n for n in MECHANISMS if MECHANISMS[n].input_kind == "updates")
    assert "randomized_response" in names() and "randomized_response" not in update_names()
    assert {"fully_dynamic", "net_change", "auto", "dcr"} <= set(update_names())
    for n in names():
        assert get(n) is MECHANISMS[n]
    with pytest.raises(ValueError, match="unknown mechanism 'nope'"):
        get("nope")


def test_report_specs_need_the_whole_collector_contract():
    """A reports spec's class must have every method of the collector contract: each one missing is refused by
    name; the registered collector passes."""
    import dataclasses

    spec = MECHANISMS["randomized_response"]
    assert dataclasses.replace(spec).core_cls is spec.core_cls
    for attr in ("apply", "advance", "to_state", "from_state", "next_wake", "last_tick"):
        broken = type(
            "Broken",
            (),
            {a: None for a in ("apply", "advance", "to_state", "from_state", "next_wake", "last_tick") if a != attr},
        )
        with pytest.raises(TypeError, match=f"lacks {attr} "):
            dataclasses.replace(spec, core_cls=broken)
    with pytest.raises(TypeError, match="does not implement ContinualRelease"):
        dataclasses.replace(MECHANISMS["fully_dynamic"], core_cls=object)
