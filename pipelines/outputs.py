"""The output records (what the sinks write: releases, node outputs, dead letters) and the budget figures they
and the run summary state.

``spend_in_units``, ``_unit_spent`` and ``mechanism_plan`` are kept here together, as they were in
``pipelines/release.py``, for the switch to the core's accounting and registry functions.
"""

from __future__ import annotations

import functools

from pipelines.io.files import schema
from pipelines.parse import raw_fields, safe_json
from transforms.core.foundation.accounting import ZCDP, ApproxDP, PureDP
from transforms.records import DeadLetter, UpdateRecord
from transforms.spec import StreamSpec

__all__ = [
    "release_dict",
    "node_dict",
    "dead_dict",
    "schema",
    "spend_in_units",
    "mechanism_plan",
    "budget_dict",
    "budget_text",
    "target_dict",
    "ledger_delta",
]


def release_dict(cfg, rel) -> dict:
    """A release as written (``release.avsc``): the query's answer in the field's units, after the configured
    post-processing, with its bound and the spend so far."""
    q = next(q for q in cfg.queries if q.name == rel.query)
    est = q.values(rel.estimate)
    if q.type in ("count", "histogram"):  # post-processing of released values: free
        if cfg.clamp:
            est = [max(x, 0.0) for x in est]
        if cfg.round_answers:
            est = [float(round(x)) for x in est]
    estimate = dict(zip(map(str, q.domain), est)) if q.type == "histogram" else est[0]
    bound = q.bound(rel.error_bound)
    return {
        "stream": rel.stream,
        "tick": rel.tick,
        "segment": rel.segment,
        "query": rel.query,
        "estimate": estimate,
        "error_bound": bound,
        "beta": rel.beta,
        **_unit_spent(cfg, rel.spent),
        "as_of": rel.as_of,
    }


def node_dict(rec) -> dict:
    """A node output as written (``node.avsc``)."""
    d = rec._asdict()
    d["values"] = [float(x) for x in d["values"]]
    d["cost"] = None if d["cost"] is None else [float(x) for x in d["cost"]]
    d["coordinates"] = [str(x) for x in d["coordinates"]]
    return d


def dead_dict(cfg, d: DeadLetter) -> dict:
    """A dead letter as published (``dead_letter.avsc``): always valid JSON.

    ``record`` is the input as received (``encoding`` text, or base64 of bytes
    that are not UTF-8), with the Pub/Sub ``attributes``; a record built without
    its input (the transforms used directly) is shown with the input's field
    names."""
    rec = d.record
    stream = d.stream if len(d) > 3 else None
    if isinstance(rec, UpdateRecord):
        stream = rec.stream if isinstance(rec.stream, str) else stream
        if rec.raw is not None:
            rec = rec.raw
        else:
            rec = safe_json(
                {
                    cfg.time_field: rec.event_time,
                    "op": rec.op,
                    "id": rec.entry_id,
                    "item_indices": rec.item,
                    (cfg.stream_field or "stream"): rec.stream,
                    "seq": rec.seq,
                }
            )
    fields = raw_fields(rec)
    return {
        "reason": d.reason,
        **fields,
        "stage": (d.stage if len(d) > 2 else "") or "",
        "stream": stream if isinstance(stream, str) else None,
        "format": cfg.source.dead_letter_format,
    }


@functools.lru_cache(maxsize=4096)
def _zcdp_epsilon(rho: float, delta: float) -> float:
    from transforms.core.foundation.accounting import zcdp_to_approx

    return zcdp_to_approx(rho, delta).epsilon


def spend_in_units(cfg, spent: tuple) -> tuple[dict, dict]:
    """``(configured, update_level)``: the spend so far as a guarantee for the
    configured privacy unit in the configured currency (epsilon, delta for a
    configured (epsilon, delta); rho for zCDP; with Gaussian noise under an
    (epsilon, delta) target also the ledger's rho), and the update-level
    spend the ledger charged, in its currency."""
    ledger = cfg.ledger_budget()
    target = cfg.target_budget()
    if isinstance(ledger, ZCDP):
        update_level = {"rho": spent[0]}
        rho = cfg.group_unit.guarantee(ZCDP(spent[0])).rho
        configured = {"rho": rho}
        if not isinstance(target, ZCDP):  # (epsilon, delta) configured: converted at the configured delta
            configured = {"epsilon": _zcdp_epsilon(rho, target.delta), "delta": target.delta, "rho": rho}
        return configured, update_level
    b = cfg.group_unit.guarantee(ApproxDP(spent[0], spent[1]) if len(spent) == 2 else PureDP(spent[0]))
    update_level = {"epsilon": spent[0]} if len(spent) == 1 else {"epsilon": spent[0], "delta": spent[1]}
    configured = {"epsilon": b.epsilon}
    if isinstance(b, ApproxDP):
        configured["delta"] = b.delta
    return configured, update_level


def _unit_spent(cfg, spent: tuple) -> dict:
    """The release record's spend fields: ``epsilon_spent`` / ``delta_spent`` /
    ``rho_spent`` for the configured privacy unit and currency, and
    ``update_level_spent`` (the ledger's update-level charge, labelled). A
    mechanism whose ledger charges the configured guarantee itself (the
    changelog releases, ``ledger_unit = "configured"``) has no update-level
    charge: its ``update_level_spent`` is null, not the entry-level spend
    under an update-level label (the summary leaves that line out too)."""
    configured, update_level = spend_in_units(cfg, spent)
    out = {f"{k}_spent": v for k, v in configured.items()}
    out["update_level_spent"] = update_level if cfg.group_unit == cfg.privacy_unit else None
    return out


def mechanism_plan(cfg) -> list[str]:
    """Which mechanism answers which query sets, with what share of the budget
    and why (``mechanism: auto`` decides per query set; printed and recorded)."""
    import math

    from transforms.core.continual.auto import plan
    from transforms.core.continual.net_change import choose_counter

    config = cfg.dynamic_config()
    end_tick = StreamSpec(tick_seconds=cfg.tick_seconds, origin=cfg.origin, end_time=cfg.end).end_tick
    opts = dict(cfg.options)
    horizon = opts.get("horizon") or (math.ceil(end_tick / cfg.every_ticks) if end_tick else None)

    def counter_note(name):
        if name != "net_change":
            return ""
        counter = opts.get("counter", "auto")
        if counter == "auto":
            counter = choose_counter(config.noise_kind, horizon)
        return f" [counter {counter}, {'horizon ' + str(horizon) + ' periods' if horizon else 'unbounded'}]"

    if cfg.mechanism != "auto":
        names = ", ".join(q.name for q in cfg.queries)
        return [f"{names} -> {cfg.mechanism}{counter_note(cfg.mechanism)} (the whole budget; configured)"]
    return [
        f"{', '.join(p.queries)} -> {p.mechanism}{counter_note(p.mechanism)} ({p.share:.0%} of the budget): {p.reason}"
        for p in plan(config)
    ]


def budget_dict(b) -> dict:
    if isinstance(b, ZCDP):
        return {"rho": b.rho}
    if isinstance(b, ApproxDP):
        return {"epsilon": b.epsilon, "delta": b.delta}
    return {"epsilon": b.epsilon}


def target_dict(cfg) -> dict:
    out = budget_dict(cfg.target_budget())
    ledger = cfg.ledger_budget()
    if isinstance(ledger, ZCDP) and "rho" not in out:  # Gaussian noise under an (epsilon, delta) target
        out["rho"] = cfg.group_unit.guarantee(ledger).rho
    return out


def ledger_delta(cfg) -> tuple:
    """The ledger's delta (an (epsilon, delta) ledger spends its delta with its epsilon)."""
    ledger = cfg.ledger_budget()
    return (ledger.delta,) if isinstance(ledger, ApproxDP) else ()


def budget_text(d: dict) -> str:
    return ", ".join(f"{k} {v:.4g}" for k, v in d.items())
