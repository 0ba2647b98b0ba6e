"""The exact privacy-loss harness: run the in-memory core on two neighbouring inputs, record every
noise draw's pre-noise value and scale, and compute the privacy loss of the whole output
(:mod:`.loss`). Issue 28's first test; ``docs/contribution.md`` has the figures.

The recording goes through the counters' own hook (``ContinualCounter.release_log``: the
coordinates and the released values of every noisy release) and their public noise parameters,
from outside: each input is run twice with the same key, noise on (the released values) and
noise off (the pre-noise values); the difference (the noise) must be the same for both inputs,
which is checked: the noise does not depend on the data, so the loss is a function of the
pre-noise values alone.

Covers ``net_change`` (``NetChangeRelease``) and ``auto`` when all its query sets are additive.
Not imported by the package's ``__init__`` (it imports the mechanisms; they may import the
package).

Nothing here imports Apache Beam.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from transforms.core.contribution.loss import Draw, PrivacyLoss, privacy_loss
from transforms.core.counters.factorization import LATTICE_BITS
from transforms.core.foundation.entries import Update
from transforms.core.foundation.noise import NoiseSource

__all__ = [
    "counters_of",
    "record",
    "neighbour_loss",
    "entry_updates",
    "merge",
    "NeighbourLoss",
    "CALIBRATIONS",
    "calibrated_factories",
    "compare_calibrations",
]

DEFAULT_KEY = b"contribution-harness-fixed-key-0"  # tests only: a fixed, public key


def counters_of(core) -> list:
    """The continual counters of a ``net_change`` core, or of every part of an ``auto`` core."""
    if hasattr(core, "parts"):
        out = []
        for part in core.parts:
            if not hasattr(part, "counters"):
                raise ValueError(f"the harness covers counter-based parts, not {type(part).__name__}")
            out += part.counters
        return out
    if hasattr(core, "counters"):
        return list(core.counters)
    raise ValueError(f"the harness covers counter-based mechanisms, not {type(core).__name__}")


def _scale(counter, cost=None) -> tuple[str, Fraction, float]:
    """(noise kind, scale in lattice units, the float size of one lattice unit) of a release of ``counter``
    charged ``cost``."""
    if hasattr(counter, "noise_param"):  # lattice Toeplitz counters: one noise for every step
        return counter.noise_kind, counter.noise_param, counter.unit / float(1 << LATTICE_BITS)
    mech = counter.mechanism
    # one budget a node for a tree; ``infinite`` / ``infinite_honaker`` (pure DP without an end) release each
    # range at half the budget and each range's tree at its own node budget: the release's own cost
    budget = getattr(counter, "node_budget", None)
    profile = mech.noise_profile(cost if budget is None else budget)
    ((kind, param, weight),) = profile.terms
    return kind, Fraction(param), weight


def _run(factory, batches, end_tick: int | None, noise: NoiseSource) -> dict:
    core = factory()
    counters = counters_of(core)
    for c in counters:
        c.release_log = []
    for tick, ups in batches:
        core.process_tick(tick, list(ups), noise)
    if end_tick is not None:
        core.run_to_end(noise)
    out = {}
    for c in counters:
        for coords, cost, values in c.release_log:
            kind, scale, unit = _scale(c, cost)
            lattice = np.rint(np.asarray(values, dtype=np.float64) / unit).astype(np.int64)
            if np.any(lattice * unit != np.asarray(values, dtype=np.float64)):
                raise AssertionError(f"a release at {coords} is not on its lattice")
            out[tuple(coords)] = (kind, scale, tuple(int(v) for v in lattice))
    return out


def record(factory, batches, *, end_tick: int | None = None, key: bytes = DEFAULT_KEY) -> dict:
    """``{coords: Draw}`` of one input: ``factory()`` builds the core, ``batches`` are
    ``(tick, [Update])`` in tick order; run with noise off (pre-noise values) and on (``key``)."""
    off = _run(factory, batches, end_tick, NoiseSource.disabled())
    on = _run(factory, batches, end_tick, NoiseSource(key))
    if set(off) != set(on):
        raise AssertionError("noise on and off released at different coordinates")
    return {c: Draw(c, off[c][0], off[c][1], off[c][2], on[c][2]) for c in off}


@dataclass
class NeighbourLoss:
    """The loss between two neighbouring inputs, with both recordings."""

    loss: PrivacyLoss
    with_unit: dict
    without_unit: dict


def neighbour_loss(factory, with_unit, without_unit, *, end_tick: int | None = None, key: bytes = DEFAULT_KEY):
    """Record both inputs and return their :class:`NeighbourLoss`. Checks that the noise drawn at
    every coordinate is the same for both inputs (it never reads the data)."""
    a = record(factory, with_unit, end_tick=end_tick, key=key)
    b = record(factory, without_unit, end_tick=end_tick, key=key)
    for c in a:
        za = np.asarray(a[c].noisy, dtype=object) - np.asarray(a[c].values, dtype=object)
        zb = np.asarray(b[c].noisy, dtype=object) - np.asarray(b[c].values, dtype=object)
        if c in b and list(za) != list(zb):
            raise AssertionError(f"the noise at {c} depends on the input")
    return NeighbourLoss(privacy_loss(a, b), a, b)


def entry_updates(entry_id: str, lifecycle) -> list[tuple[int, Update]]:
    """``(tick, Update)`` of one entry from ``((tick, op, item), ...)``."""
    return [(int(t), Update(op, entry_id, None if op == "delete" else tuple(item))) for t, op, item in lifecycle]


def merge(*streams) -> list[tuple[int, list[Update]]]:
    """``(tick, [Update])`` batches in tick order from lists of ``(tick, Update)`` (each stream's
    updates of one tick keep their order)."""
    by_tick: dict[int, list[Update]] = {}
    for stream in streams:
        for t, u in stream:
            by_tick.setdefault(int(t), []).append(u)
    return [(t, by_tick[t]) for t in sorted(by_tick)]


# ---------------------------------------------------------------------------------------------
# Today's calibrations against sensitivity by contribution, on one pair of neighbours
# ---------------------------------------------------------------------------------------------

CALIBRATIONS = ("update", "entry_group", "person_group", "contribution")


def calibrated_factories(queries, budget, unit, *, end_tick: int, stream: str = "s") -> dict:
    """Core factories of the four calibrations of ``auto`` / ``net_change``.

    Each factory returns a list of ``(core, item positions it reads)``, run side by side on the
    same input, for the additive ``queries`` at ``budget``:

    * ``update``: today's update level (``unit: update``): the twin that under-states a person;
    * ``entry_group``: the entry unit before issue 28 (group privacy over ``2k - 1`` updates, by hand);
    * ``person_group``: group privacy over a person's ``L (2k - 1)`` updates, by hand;
    * ``contribution``: each query set's counter with its share scaled by its noise multiplier
      (``calibrated_budget``), one ``net_change`` core per query set: what the integration gives.
    """
    from transforms.core.config import DynamicConfig
    from transforms.core.continual.auto import AutoRelease
    from transforms.core.continual.net_change import NetChangeRelease, choose_counter
    from transforms.core.contribution.sensitivity import (
        calibrated_budget,
        contribution_sensitivity,
        group_update_budget,
    )

    queries = tuple(queries)
    kw = dict(stream=stream, end_tick=end_tick, every_ticks=1)
    probe = DynamicConfig(queries, budget)
    noise = probe.noise_kind
    counter = choose_counter(noise, end_tick)
    share = probe.ledger_budget.part(1.0 / len(queries), 1.0 / len(queries))  # as net_change splits
    per_query = []
    for q in queries:
        m = contribution_sensitivity(q, counter, noise, unit, horizon=end_tick, end_tick=end_tick).multiplier
        per_query.append(DynamicConfig((q,), calibrated_budget(share, m, noise)))
    g, ge = unit.group_size(end_tick), 2 * unit.mutations - 1
    every = tuple(range(len(queries)))
    return {
        "update": lambda: [(AutoRelease(DynamicConfig(queries, budget), **kw), every)],
        "entry_group": lambda: [(AutoRelease(DynamicConfig(queries, group_update_budget(budget, ge)), **kw), every)],
        "person_group": lambda: [(AutoRelease(DynamicConfig(queries, group_update_budget(budget, g)), **kw), every)],
        "contribution": lambda: [(NetChangeRelease(c, **kw), (i,)) for i, c in enumerate(per_query)],
    }


class _Side:
    """Several cores run side by side as one, each fed the item positions it answers (their
    counters' releases never share coordinates: each carries its own query name)."""

    def __init__(self, cores):
        self.cores = cores
        self.counters = [c for core, _ in cores for c in counters_of(core)]

    def process_tick(self, tick, updates, noise):
        for core, cols in self.cores:
            part = [u if u.item is None else Update(u.op, u.entry_id, tuple(u.item[i] for i in cols)) for u in updates]
            core.process_tick(tick, part, noise)

    def run_to_end(self, noise):
        for core, _ in self.cores:
            core.run_to_end(noise)


def compare_calibrations(queries, budget, unit, with_unit, without_unit, *, end_tick: int) -> dict:
    """``{calibration: PrivacyLoss}`` of the unit's neighbours under each of
    :func:`calibrated_factories`' calibrations (noise on, fixed key; see :func:`neighbour_loss`)."""
    out = {}
    for name, make in calibrated_factories(queries, budget, unit, end_tick=end_tick).items():
        out[name] = neighbour_loss(lambda make=make: _Side(make()), with_unit, without_unit, end_tick=end_tick).loss
    return out
