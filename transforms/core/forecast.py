"""Accuracy before the run: the (1 - beta) error bound and the standard deviation each query set's release will
carry at chosen periods, from the mechanism's own bound code (no second formula).

:func:`forecast` runs the configured mechanism itself on a stream with no data (every period empty) under a
throw-away key, and reads the bound of every answer it releases at the chosen ticks, and the variance of the
counter behind it. For a mechanism whose bound does not depend on the data (:data:`DATA_INDEPENDENT`: one
continual counter per query set stepped once per period, data or not), these are exactly the numbers a real run
carries in its records: the counter's state after ``t`` steps (which releases are summed, with which budgets) is
the same whatever the batches held. For the others :data:`DATA_DEPENDENT` says what the bound depends on; no
number is forecast for them.

Nothing here reads data or a key: the noise drawn is discarded (only the bounds and variances, functions of the
schedule and the budget, are kept).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from transforms.core.foundation.noise import NoiseSource

__all__ = ["DATA_INDEPENDENT", "DATA_DEPENDENT", "Forecast", "forecast", "release_ticks"]

#: the mechanisms whose bound at a period is a function of the period, the schedule and the budget only
DATA_INDEPENDENT = ("auto", "net_change", "continual_count")

#: what the bound of the other registered mechanisms depends on (the plan says it instead of a number)
DATA_DEPENDENT = {
    "fully_dynamic": "the segments the private partitioning closes (the data's updates) and the data size n_t",
    "insertion_only": "the segments the private partitioning closes (how many insertions arrive when)",
    "two_stream_baseline": "the segments the private partitioning closes (how many updates arrive when)",
    "dcr": "how many change-log nodes hold the released changes (the entries' mutations over time)",
    "hdcr": "how many change-log nodes hold the released changes (the entries' mutations over time)",
    "swcr": "how many change-log nodes hold the released changes (the entries' mutations over time)",
    "bb_scheduler": "the black box's rounds, scheduled by the data's growth",
    "bb_improver": "the black box's rounds, scheduled by the data's growth",
    "pmwg": "the data size and which queries PMW had to answer from the data (hard queries)",
    "randomized_response": "the number of client reports received (local DP: the collector adds no noise)",
}

_KEY = bytes(range(32))  # a fixed throw-away key: the noise drawn here is never shown nor kept


@dataclass(frozen=True)
class Forecast:
    """One query set's release at one tick: its (1 - beta) error bound (on every query of the set at once, as the
    records' ``error_bound``) and the standard deviation of each of its released values (None: not stated by
    the mechanism)."""

    tick: int
    query: str
    error_bound: float
    sd: float | None
    beta: float
    #: the run's records state ``error_bound + |tau|``: a histogram projected with the threshold bound
    #: (``transforms.core.continual.consistency``), whose ``tau`` comes from the released values
    plus_tau: bool = False


def _projected(consistency) -> tuple[set, set]:
    """(the histograms stated with ``B_h + |tau|``, every query the post-processing changes)."""
    if not consistency:
        return set(), set()
    hists = {h for h, _ in consistency.pairs}
    projected = set(consistency.own_total) | (hists if consistency.threshold_bound else set())
    return projected, hists | {c for _, c in consistency.pairs} | set(consistency.own_total)


def release_ticks(end_tick: int | None, every_ticks: int | None) -> list[int]:
    """The ticks at which a period ends up to ``end_tick`` (every tick without periods)."""
    step = every_ticks or 1
    ticks = list(range(step, end_tick + 1, step))
    if ticks and ticks[-1] != end_tick or not ticks:
        ticks.append(end_tick)  # the last period ends at the end
    return ticks


def _counters(core) -> dict:
    """The continual counter behind each query set's answers (by query name), where the mechanism has one per
    query set (``auto``: its parts')."""
    out = {}
    for part in getattr(core, "parts", None) or [core]:
        counters = getattr(part, "counters", None)
        if counters is not None and len(counters) == len(part.config.queries):
            out.update({q.name: c for q, c in zip(part.config.queries, counters)})
    return out


def _sd(counter) -> float | None:
    try:
        return math.sqrt(counter.variance())
    except (ValueError, NotImplementedError):  # a black box that is not additive states no variance
        return None


def forecast(
    core_cls,
    config,
    options,
    ticks,
    *,
    end_tick: int | None = None,
    every_ticks: int | None = None,
    consistency=None,
    noise_off: bool = False,
) -> list[Forecast]:
    """Each query set's :class:`Forecast` at each of ``ticks`` (release ticks: period ends), by running
    ``core_cls`` (a :class:`~transforms.core.protocol.ContinualRelease`) with ``config`` and ``options`` on a
    stream with no data. ``consistency``: the pipeline's post-processing of each tick's answers, applied as the
    run applies it; ``noise_off``: the run's noise is switched off (its bounds are 0). Only meaningful for
    :data:`DATA_INDEPENDENT` mechanisms (the caller's business)."""
    from transforms.core.continual.consistency import make_consistent  # local: post-processing, rarely used

    core = core_cls(config, stream="plan", end_tick=end_tick, every_ticks=every_ticks, options=options)
    noise = NoiseSource(_KEY, disabled=noise_off)
    for part in getattr(core, "parts", None) or [core]:
        if hasattr(part, "bound_ticks"):  # a continual counter release: bounds only where they are read
            part.bound_ticks = frozenset(ticks)
    out = []
    for tick in sorted(set(ticks)):
        res = core.advance(tick, noise)
        answers = [a for a in res.answers if a.tick == tick]
        projected, changed = _projected(consistency)
        if consistency:
            raw = {a.query: a for a in answers}
            answers = make_consistent(answers, consistency)
        counters = _counters(core)
        for a in answers:
            c = counters.get(a.query)
            sd = None if c is None or a.query in changed else _sd(c)
            if a.query in projected:
                # B_h (+1 when rounded) is known before the run; |tau| only at release (post-processing)
                bound = float(raw[a.query].error_bound) + (1.0 if consistency.round_answers else 0.0)
                out.append(Forecast(tick, a.query, bound, sd, a.beta, plus_tau=True))
            else:
                out.append(Forecast(tick, a.query, float(a.error_bound), sd, a.beta))
        if core.finished:
            break
    return out
