"""The output records (what the sinks write: releases, node outputs, dead letters) and the budget figures they
and the run summary state.

The budget figures (the spend for the configured unit, the plan, the configured total) come from the
mechanism's registry entry and the accounting (``transforms.core.mechanisms.MechanismSpec``): nothing here
branches on a budget kind or a mechanism name.
"""

from __future__ import annotations

import dataclasses
import weakref

from pipelines.io.files import schema
from pipelines.parse import raw_fields, safe_json
from transforms.core.foundation.accounting import as_vector
from transforms.records import DeadLetter, UpdateRecord

__all__ = [
    "release_dict",
    "ReleaseFormat",
    "node_dict",
    "dead_dict",
    "schema",
    "spend_in_units",
    "mechanism_plan",
    "budget_dict",
    "budget_text",
    "target_dict",
    "ledger_delta",
    "unit_statement",
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


class ReleaseFormat:
    """:func:`release_dict` for every record of one run, with ``release_id`` added last when given (what
    ``pipelines.wiring`` writes): the same dict, field for field and value for value, with the per-record
    look-ups done once (the query by name, its scale, the post-processing flags; the spend fields of the
    previous record's spend kept). A year of one-minute periods formats a million records.
    ``tests/test_speed_release_path.py`` checks it equals :func:`release_dict` (plus the id)."""

    def __init__(self, cfg, release_id: str | None = None):
        self.cfg, self.release_id = cfg, release_id
        self.queries = {}
        for q in cfg.queries:  # the first of a name, as release_dict's next() finds it
            if q.name not in self.queries:
                keys = tuple(map(str, q.domain)) if q.type == "histogram" else None
                self.queries[q.name] = (q.scale, q.signed, q.type in ("count", "histogram"), keys)
        self.clamp, self.round_answers = bool(cfg.clamp), bool(cfg.round_answers)
        self._spent = self._fields = None

    def __call__(self, rel) -> dict:
        scale, signed, post, keys = self.queries[rel.query]
        if scale == 1.0:  # x * 1.0 is x, bit for bit (NaN and -0.0 included)
            est = list(map(float, rel.estimate))
        else:
            est = [float(x) * scale for x in rel.estimate]
        if signed:
            est = [est[0] - est[1]]
        if post:
            if self.clamp:
                est = [max(x, 0.0) for x in est]
            if self.round_answers:
                est = [float(round(x)) for x in est]
        b = rel.error_bound
        spent = rel.spent
        # the records of a run carry a few distinct spends (emit_results: one tuple per call's spend; a tuple
        # decoded after a shuffle is a new object): an equal tuple has the same fields (_unit_spent's memo is
        # keyed by the tuple's value too)
        if spent is not self._spent and spent != self._spent:
            self._fields, self._spent = _unit_spent(self.cfg, spent), spent
        d = {
            "stream": rel.stream,
            "tick": rel.tick,
            "segment": rel.segment,
            "query": rel.query,
            "estimate": dict(zip(keys, est)) if keys is not None else est[0],
            "error_bound": None if b is None else b * scale * (2.0 if signed else 1.0),
            "beta": rel.beta,
        }
        for k, v in self._fields.items():
            d[k] = dict(v) if isinstance(v, dict) else v
        d["as_of"] = rel.as_of
        if self.release_id is not None:
            d["release_id"] = self.release_id
        return d


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


def spend_in_units(cfg, spent: tuple) -> tuple[dict, dict]:
    """``(configured, charged)``: a ledger spend vector as the guarantee for the configured privacy unit in the
    configured currency, and the charge the ledger made in its own currency (the mechanism's registry entry
    states both: ``MechanismSpec.stated_spend``)."""
    return cfg.mechanism_spec.stated_spend(cfg.dynamic_config(), spent)


#: id of a core configuration -> (a weak reference to it, the mechanism's registry entry, {spent: fields})
_SPENT: dict = {}


def _unit_spent(cfg, spent: tuple) -> dict:
    """A release record's spend fields (``epsilon_spent`` / ``delta_spent`` / ``rho_spent`` for the configured
    unit and currency, and ``update_level_spent``, null where the ledger charges the configured guarantee
    itself): ``MechanismSpec.spend_fields``, a function of the (immutable) core configuration and the spend,
    computed once per distinct spend (30 us a record; most records of a run carry the same few spends)."""
    dc, spec = cfg.dynamic_config(), cfg.mechanism_spec
    memo = _SPENT.get(id(dc))
    if memo is None or memo[0]() is not dc or memo[1] is not spec or len(memo[2]) > 4096:
        try:
            ref = weakref.ref(dc)
        except TypeError:  # not weakly referable: no memo
            return spec.spend_fields(dc, spent)
        if len(_SPENT) > 64:
            _SPENT.clear()
        memo = _SPENT[id(dc)] = (ref, spec, {})
    try:
        fields = memo[2].get(spent)
    except TypeError:  # an unhashable spend
        return spec.spend_fields(dc, spent)
    if fields is None:
        fields = memo[2][spent] = spec.spend_fields(dc, spent)
    return {k: dict(v) if isinstance(v, dict) else v for k, v in fields.items()}


def mechanism_plan(cfg) -> list[str]:
    """Which mechanism answers which query sets, with what share of the budget and why (``mechanism: auto``
    decides per query set; printed and recorded): the registry entry's plan."""
    plan = cfg.mechanism_spec.plan(
        cfg.dynamic_config(), cfg.mechanism_options(), end_tick=cfg.end_tick, every_ticks=cfg.every_ticks
    )
    return [p.text() for p in plan]


def budget_dict(b) -> dict:
    """A budget's parameters by name (``{"epsilon": ...}``, with ``delta``; or ``{"rho": ...}``)."""
    return dataclasses.asdict(b)


def target_dict(cfg) -> dict:
    """The configured budget as stated (with the ledger's rho for Gaussian noise under an (epsilon, delta)
    target): ``MechanismSpec.stated_total``."""
    return cfg.mechanism_spec.stated_total(cfg.dynamic_config())


def ledger_delta(cfg) -> tuple:
    """The ledger's delta (an (epsilon, delta) ledger spends its delta with its epsilon)."""
    return tuple(as_vector(cfg.ledger_budget())[1:])


def budget_text(d: dict) -> str:
    return ", ".join(f"{k} {v:.4g}" for k, v in d.items())


def unit_statement(cfg) -> str:
    """Which privacy unit protects whom, in one line (the run summary and the manifest): the core's own
    statement of the configured unit (``PrivacyUnit.describe``), naming the person field, never a person; with
    declared streams their number (a person unit over several says what ``per_stream`` protects); with open keys
    the key that bounds a person across the whole release."""
    streams = len(cfg.streams) if cfg.streams and not cfg.open_keys else None
    return cfg.privacy_unit.describe(cfg.person_field, streams, open_bound=cfg.open_person_bound)
