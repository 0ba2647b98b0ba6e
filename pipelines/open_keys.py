"""The release of open stream keys in the pipeline (issue 33): parsed records -> the open-key step
(:class:`transforms.open_keys.ReleaseOpenKeys`) -> release records in the format of a declared key's
(``release.avsc``), and dead letters.

A selected key's records start at its selection period (nothing is written before it); a key never
selected is in no record, metric, log line or file name. The number of candidate keys is never written
here (an operator figure: ``benchmarks/bench_open_keys_beam.py``)."""

from __future__ import annotations

import json

import apache_beam as beam
from apache_beam.metrics import Metrics

from pipelines.config.open_keys import key_limit, open_settings, selection_params
from transforms.core.foundation.accounting import ZCDP, ApproxDP
from transforms.core.foundation.entries import DELETE, Update
from transforms.core.foundation.noise import config_digest
from transforms.open_keys import DEAD, ReleaseOpenKeys
from transforms.records import DeadLetter
from transforms.spec import NAMESPACE

__all__ = ["release_open_keys", "open_release_dict", "open_key", "OUT_OF_RANGE"]

#: an update outside the release's ticks (before tick 1 or after time.end)
OUT_OF_RANGE = "out_of_range"


class _ToPairFn(beam.DoFn):
    """UpdateRecord -> ``(person, (tick, Update))`` (the key: the record's stream; with a histogram's
    ``domain: open`` the pair ``(stream, cell)``, the cell's text parsed into the item), or a dead letter."""

    def __init__(self, spec, cells: bool = False):
        self.spec, self.cells = spec, cells

    def process(self, rec):
        tick, end = self.spec.tick_of(rec.event_time), self.spec.end_tick
        if tick < 1 or (end is not None and tick > end):  # without time.end: every tick from 1
            Metrics.counter(NAMESPACE, f"dead_letter_{OUT_OF_RANGE}").inc()
            yield beam.pvalue.TaggedOutput(DEAD, DeadLetter(OUT_OF_RANGE, rec, "open_keys", None))
            return
        item = None if rec.op == DELETE else (open_key(rec, self.cells),)
        yield (rec.person, (tick, Update(rec.op, rec.entry_id, item)))


def open_key(rec, cells: bool):
    """The open-key core's key of an insert or upsert record: its stream (``streams: {keys: open}``), or with a
    histogram's ``domain: open`` the pair ``(stream, cell)`` (the cell's text, parsed into the record's item by
    ``pipelines.parse.encode_detail``): a (stream, cell) pair is a key, so a person's ``max_cells_per_person``
    bounds the pairs they contribute to, over all streams."""
    return (rec.stream, rec.item[0]) if cells else rec.stream


def _dead_letter(d: dict) -> DeadLetter:
    Metrics.counter(NAMESPACE, f"dead_letter_{d['reason']}").inc()
    record = json.dumps({"tick": d["tick"], "op": d["op"], "id": d["entry_id"]}, sort_keys=True)
    return DeadLetter(d["reason"], record, d["stage"], None)


def release_open_keys(records, cfg, spec, noise_key, release) -> dict:
    """``records`` (UpdateRecords, timestamped) -> ``{"answers": (period, key, answer, stated bound),
    "dead_letters": DeadLetter}``; the noise is keyed by the release identity and the selection's parameters.
    ``streams.max_keys`` caps the released keys; ``mechanism.beta`` is the stated bounds' failure probability."""
    params, limit = selection_params(cfg, spec.end_tick), key_limit(cfg)
    ident = release.with_digest(config_digest("open-keys-transform-v1", params, limit, spec))
    streaming = cfg.streaming
    settings = open_settings(cfg)
    pairs = records | "OpenKeyUpdates" >> beam.ParDo(_ToPairFn(spec, settings.cells)).with_outputs(DEAD, main="pairs")
    out = pairs.pairs | "ReleaseOpenKeys" >> ReleaseOpenKeys(
        params,
        limit,
        (noise_key, ident),
        spec,
        bounded=not streaming,
        beta=cfg.beta,
        max_keys=settings.max_keys,
    )
    dead = out[DEAD] | "OpenKeyDeadLetters" >> beam.Map(_dead_letter)
    dead = (pairs[DEAD], dead) | "OpenKeyAllDead" >> beam.Flatten()
    return {"answers": out["answers"], "dead_letters": dead}


class OpenReleaseDict:
    """``(period, key, answer, bound)`` -> a release record as written (``release.avsc``): the key as its
    stream, the count query's answer (clamped as configured), the release's whole spend (charged when it
    starts: it does not depend on the data), the stated (1 - beta) bound of the answer at the release's beta
    (``error_bound``: the key's counter's own bound + 1/2 for the rounding,
    :meth:`~transforms.core.selection.release.KeyContext.bound`)."""

    def __init__(self, cfg, spec):
        self.query = cfg.queries[0].name
        self.cells = open_settings(cfg).cells
        self.clamp, self.beta, self.spec = cfg.clamp, cfg.beta, spec
        budget = selection_params(cfg, spec.end_tick).ledger_budget
        v = [float(x) for x in budget.vector()]
        if isinstance(budget, ZCDP):
            self.spent = {"epsilon_spent": None, "delta_spent": None, "rho_spent": v[0]}
        else:
            delta = v[1] if isinstance(budget, ApproxDP) else 0.0
            self.spent = {"epsilon_spent": v[0], "delta_spent": delta, "rho_spent": None}

    def __call__(self, a) -> dict:
        p, key, answer, bound = a
        est = float(max(answer, 0) if self.clamp else answer)  # a clamp at 0 moves it towards the truth
        stream = key
        if self.cells:  # a histogram's open cell: one record per (stream, cell, period), named in its estimate
            stream, cell = key
            est = {cell: est}
        return {
            "stream": stream,
            "tick": p,
            "segment": 0,
            "query": self.query,
            "estimate": est,
            "error_bound": float(bound),
            "beta": float(self.beta),
            **self.spent,
            "as_of": self.spec.as_of(p),
            "update_level_spent": None,
        }


def open_release_dict(cfg, spec) -> OpenReleaseDict:
    return OpenReleaseDict(cfg, spec)


def open_keys_plan(cfg) -> list[str]:
    """What the plan, the summary and the manifest say of an open-key release: which keys are open, the
    selection's test, threshold, share, delta and cost, the cap on released keys, the answers' budget and stated
    bounds, the stated guarantee (a run without an end included)."""
    from pipelines.outputs import budget_dict, budget_text
    from transforms.core.selection import answer_calibration

    h = cfg.end_tick
    p = selection_params(cfg, h)
    s, limit = open_settings(cfg), key_limit(cfg)
    last = h if h is not None else 8760
    until = "to the end" if h is not None else "for as long as the run goes (no time.end)"
    key, cap, per = ("cell", "max_cells", "cells") if s.cells else ("key", "max_keys", "keys")
    if s.cells:  # a histogram's domain: open (issue 33): a (stream, cell) pair is a key
        what = (
            f"open domain: the cells of histogram '{cfg.queries[0].name}' (field '{s.field}') are not declared "
            "(domain: open): a (stream, cell) pair is released"
        )
    else:
        what = f"open keys: the keys of '{s.field}' are not declared (keys: open): a key is released"
    return [
        f"{what} from the first "
        f"period at which a noisy count of its live contributors exceeds the threshold, then every period {until} "
        f"(a count of its live entries); nothing before; a {key} never selected is in no output",
        f"selection: the {p.selection_test} test ({p.selection_noise} noise), {s.selection_share:.0%} of the "
        f"budget, cost {budget_text(budget_dict(p.selection_cost))}; threshold {p.threshold_at(1):.1f} "
        f"contributors at period 1, {p.threshold_at(last):.1f} at period {last}"
        + ("" if h is not None else " (no end: the per-period delta shrinks as 1 / (p (p + 1)))")
        + f"; delta {p.event_delta:.3g} (per {key} {p.key_delta:.3g}); at most {limit.max_keys} {per} per person "
        "(more: dead letters contribution_bounded)",
        f"{cap}: at most {s.max_keys} {per} are released; once {s.max_keys} are, no further {key} is selected "
        "(decided from the released keys only: no cost); a run that reaches it says so "
        "(counter open_keys_max_keys_reached)",
        f"answers: a continual counter per selected {key} (auto's choice for the remaining horizon), "
        f"{budget_text(budget_dict(p.answers_budget))}, calibrated by contribution: "
        f"{answer_calibration(p, limit).method}; each record states its (1 - beta) bound at beta {cfg.beta:g} "
        "(the counter's own bound + 1/2 for the rounding)",
        f"guarantee: {budget_text(budget_dict(p.ledger_budget))} for everything one person does, over all {per} and "
        "the whole release"
        + ("" if h is not None else " however long it runs")
        + f", with the selection's delta above; the number of candidate {per} is operator data (never released)",
    ]
