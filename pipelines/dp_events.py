"""A release's spend as Google's ``dp_accounting`` events (issue 32, item 3; ``docs/accounting.md``, "The spend as
dp_accounting events").

A privacy reviewer can hand these to dp_accounting's own accountants (RDP, PLD) and check the epsilon we state.
Every event describes a charge of our accountant (``transforms.core.foundation.accounting.Ledger``) and composes
as the ledger composes:

* **a charge** (one ``Scope.charge``, its cost already at the scope's sensitivity and, for a ledger that charges the
  update level, at the privacy unit's group size ``g``):
  - ``epsilon`` (a pure ledger, or an (epsilon, delta) ledger's charge with delta 0) -> ``DiscreteLaplaceDpEvent(
    noise_parameter=g*epsilon, sensitivity=1)``. Its privacy-loss distribution is two points, +-epsilon: exactly that
    of our discrete Laplace noise on an integer query of sensitivity 1, and the worst of *any* epsilon-DP step
    (it dominates continuous Laplace, a vector of L1 sensitivity 1, and group privacy as (g epsilon)-DP), so the
    description is sound whatever the step was.
  - ``rho`` (a zCDP ledger: Gaussian noise) -> ``GaussianDpEvent(noise_multiplier=1/(g*sqrt(2 rho)))``: the Gaussian
    with that zCDP parameter (rho g^2). RDP: exactly our statement (alpha rho g^2 at every order), sound for every
    rho-zCDP step (discrete Gaussian: CKS 2020 bound its Renyi divergences by the continuous one's; a pure step
    converted to eps^2/2). PLD: exact for continuous Gaussian noise; approximate for the discrete Gaussian (whose
    privacy-loss distribution is a discretisation of the continuous one's; CKS 2020 find their (epsilon, delta)
    curves within a hair) and for a pure step charged into a zCDP ledger (the ledger keeps only its rho).
  - ``(epsilon, delta > 0)``: dp_accounting 0.6.0 has no event for a bare (epsilon, delta) guarantee:
    ``UnsupportedDpEvent`` (its accountants refuse it; nothing is claimed).
* **a sequential scope** -> ``ComposedDpEvent`` of its members (its charges, then its child scopes), runs of equal
  members as one
  ``SelfComposedDpEvent``; **a parallel scope** (members on disjoint data; the ledger takes the maximum; dp_accounting
  has no parallel composition) -> its largest member, which dominates the others when they are single charges or
  Gaussians (a composition of Gaussians is a Gaussian) and otherwise is replaced by the worst-case single event of
  the largest total (sound). Each charge composes in the scope it was charged in (``Record.scopes``), of that
  scope's kind, also once the mechanism has closed it (a finished tree's parallel levels); a later scope on the
  same path is another member of its parent. A record without its scopes (built by hand, or restored from a state
  written before stop 60) composes by path, sequentially: never less than the ledger.
* **parts** of a composite mechanism (``auto``) compose sequentially (``AutoRelease.spent``); **streams** hold
  disjoint data and have budgets of their own: the release's guarantee is each stream's (one event, the same for
  every stream); under ``privacy.max_streams_per_person: n`` a person's updates reach at most ``n`` streams, each
  at ``1/n`` of the budget, and the person's event is the stream's composed ``n`` times (``ComposedDpEvent``);
  **releases** of a dataset compose sequentially (``pipelines/ledger/compose.py``).

Where the charges come from: for a mechanism whose charges do not depend on the data
(``transforms.core.forecast.DATA_INDEPENDENT``: one counter per query set stepped once per period, data or not),
the mechanism is run as configured on a stream with no data and its ledger's records are read; the charges are
then exactly those of a real run. For the others the release is one event of its configured total (the ledger's
cap at the group size: ``source == "budget"``), sound but without the composition's detail.

Needs the ``dp_accounting`` extra (``pip install -e ".[dp_accounting]"``). Exporting and evaluating events is
post-processing of public configuration: it costs no privacy.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

try:
    from dp_accounting import dp_event as dpe
    from dp_accounting.pld import pld_privacy_accountant
    from dp_accounting.rdp import rdp_privacy_accountant
except ImportError:  # pragma: no cover - the extra is in the test extra
    raise ImportError(
        'pipelines.dp_events needs dp_accounting, an optional extra: pip install -e ".[dp_accounting]"'
    ) from None

from transforms.core.foundation.accounting import ZCDP, ApproxDP, Budget, PureDP, Scope, as_vector, zcdp_to_approx
from transforms.core.foundation.noise import NoiseSource

__all__ = [
    "ReleaseEvents",
    "charge_event",
    "budget_event",
    "ledger_event",
    "compose",
    "release_events",
    "dataset_event",
    "events_total",
    "epsilon",
    "compare",
    "stated_epsilon",
    "to_json",
    "RDP_ORDERS",
    "main",
]

_KEY = bytes(range(32))  # a throw-away key: the noise drawn to walk the schedule is never shown nor kept
#: the RDP accountant's orders: dense (step 1e-3 up to 20, then 1e-2 up to 200), so that its minimum over orders is
#: within ~1e-7 of the minimum over all orders our own conversion (CKS 2020, Cor. 13) finds; then up to 1e5 for
#: the epsilon of pure steps at small delta
RDP_ORDERS = tuple(
    [1 + k / 1000 for k in range(1, 19001)] + [20 + k / 100 for k in range(1, 18001)] + [250, 500, 1e3, 1e4, 1e5]
)


def charge_event(cost: Budget, group: int = 1) -> dpe.DpEvent:
    """One charge of cost ``cost`` (in its ledger's currency), stated for a group of ``group`` updates."""
    if isinstance(cost, ZCDP):
        if cost.rho <= 0:
            return dpe.NoOpDpEvent()
        return dpe.GaussianDpEvent(noise_multiplier=1.0 / (group * math.sqrt(2.0 * cost.rho)))
    if isinstance(cost, (PureDP, ApproxDP)):
        if getattr(cost, "delta", 0.0) > 0:
            return dpe.UnsupportedDpEvent()
        if cost.epsilon <= 0:
            return dpe.NoOpDpEvent()
        return dpe.DiscreteLaplaceDpEvent(noise_parameter=group * cost.epsilon, sensitivity=1)
    raise TypeError(f"not a budget: {cost!r}")


def budget_event(kind: str, amounts: dict) -> dpe.DpEvent:
    """A whole release as one event of its budget (``kind`` of ``pipelines.ledger.compose.KINDS``; ``amounts`` its
    fields, numbers or decimals): the worst case of that guarantee."""
    if kind == "zcdp":
        return charge_event(ZCDP(float(amounts["rho"])))
    eps = float(amounts["epsilon"])
    return charge_event(ApproxDP(eps, float(amounts["delta"])) if kind == "approx" else PureDP(eps))


def compose(events: list) -> dpe.DpEvent:
    """Sequential composition: runs of equal events as one ``SelfComposedDpEvent``; no-ops dropped."""
    runs: list[list] = []
    for e in events:
        if isinstance(e, dpe.NoOpDpEvent):
            continue
        if runs and runs[-1][0] == e:
            runs[-1][1] += 1
        else:
            runs.append([e, 1])
    out = [e if n == 1 else dpe.SelfComposedDpEvent(e, n) for e, n in runs]
    if not out:
        return dpe.NoOpDpEvent()
    return out[0] if len(out) == 1 else dpe.ComposedDpEvent(out)


def ledger_event(ledger, group: int = 1) -> dpe.DpEvent:
    """The event of a core ``Ledger`` kept with ``keep_records=True``: its records, composed as its scopes compose
    (module docstring), each stated for a group of ``group`` updates."""
    if not ledger.keep_records:
        raise ValueError("the ledger keeps no records (Ledger(..., keep_records=True))")
    tree: dict = {"members": [], "children": {}, "kind": Scope.SEQUENTIAL}
    for rec in ledger.records:
        node = tree
        # by the scope each record was charged in (a closed scope has left the tree: its kind is the record's; a
        # later scope on the same path is another member of the parent); a record without its scopes (by hand, or
        # restored from before stop 60) by path, sequentially: the scope on that path now may be another one (a
        # closed parallel scope made again), and merging two of them by maximum would state less than the ledger
        steps = (
            [(s, s.kind) for s in rec.scopes] if rec.scopes else [(("path", n), Scope.SEQUENTIAL) for n in rec.scope]
        )
        for key, kind in steps:
            node = node["children"].setdefault(key, {"members": [], "children": {}, "kind": kind})
        node["members"].append(("charge", rec.cost))
    return _node_event(tree, group)[0]


def _node_event(node: dict, group: int) -> tuple[dpe.DpEvent, float]:
    """``(event, total)``: a scope's event and its total in the ledger's primary figure (epsilon or rho)."""
    members = [(charge_event(cost, group), _primary(cost) * _scale(cost, group)) for _, cost in node["members"]]
    members += [_node_event(child, group) for child in node["children"].values()]
    if node["kind"] == Scope.SEQUENTIAL:
        return compose([e for e, _ in members]), sum(t for _, t in members)
    event, total = max(members, key=lambda m: m[1])
    single = (dpe.DiscreteLaplaceDpEvent, dpe.GaussianDpEvent, dpe.NoOpDpEvent)
    if all(isinstance(e, single) for e, _ in members) or isinstance(event, dpe.GaussianDpEvent):
        return event, total
    if all(_gaussian(e) for e, _ in members):  # a composition of Gaussians is the Gaussian of the summed rho
        return dpe.GaussianDpEvent(noise_multiplier=1.0 / math.sqrt(2.0 * total)), total
    return dpe.DiscreteLaplaceDpEvent(noise_parameter=total, sensitivity=1), total  # the worst case of total-DP


def _gaussian(e) -> bool:
    if isinstance(e, dpe.GaussianDpEvent):
        return True
    if isinstance(e, dpe.SelfComposedDpEvent):
        return _gaussian(e.event)
    if isinstance(e, dpe.ComposedDpEvent):
        return all(_gaussian(x) for x in e.events)
    return False


def _primary(cost: Budget) -> float:
    return cost.rho if isinstance(cost, ZCDP) else cost.epsilon


def _scale(cost: Budget, group: int) -> float:
    return group**2 if isinstance(cost, ZCDP) else group


def events_total(event: dpe.DpEvent) -> dict:
    """Our own composition of ``event`` (sequential: the epsilons add up, or the rhos: ``Ledger``'s rule): what a
    mirror of the ledger must give back, ``{"epsilon": ...}`` or ``{"rho": ...}`` (both where both occur)."""
    out = {"epsilon": 0.0, "rho": 0.0}

    def walk(e, n):
        if isinstance(e, dpe.SelfComposedDpEvent):
            walk(e.event, n * e.count)
        elif isinstance(e, dpe.ComposedDpEvent):
            for x in e.events:
                walk(x, n)
        elif isinstance(e, dpe.DiscreteLaplaceDpEvent):
            out["epsilon"] += n * e.noise_parameter * e.sensitivity
        elif isinstance(e, dpe.GaussianDpEvent):
            out["rho"] += n / (2.0 * e.noise_multiplier**2)
        elif not isinstance(e, dpe.NoOpDpEvent):
            raise ValueError(f"no total for {type(e).__name__}")

    walk(event, 1)
    return {k: v for k, v in out.items() if v}


@dataclass(frozen=True)
class ReleaseEvents:
    """A release's events (per stream: each stream's guarantee) and what we state for it.

    ``source``: ``charges`` (the ledger's records of a run of the schedule) or ``budget`` (the configured total as
    one event); ``stated``: the guarantee we state for the configured unit (``MechanismSpec.stated_spend`` of the
    run's spend, or ``stated_total``); ``charged``: our ledgers' totals at the unit (what :func:`events_total` of
    ``event`` must equal); ``delta``: the configured delta (0 for a pure or zCDP budget)."""

    mechanism: str
    source: str
    event: dpe.DpEvent
    stated: dict
    charged: dict
    delta: float


def release_events(cfg) -> ReleaseEvents:
    """The events of the release ``cfg`` (a ``PipelineConfig``) configures: one stream's (each stream's guarantee),
    composed over the streams a person may reach under ``max_streams_per_person``."""
    spec = cfg.mechanism_spec
    if not hasattr(spec.core_cls, "stated_total"):  # the local-DP collector: the clients spend on their devices
        from pipelines.model import ConfigError

        raise ConfigError(
            f"mechanism {cfg.mechanism}: the clients randomise and spend their own budgets (local DP); the collector "
            "charges nothing, so there are no central events (docs/local_dp.md)"
        )
    n = cfg.max_streams_per_person if cfg.unit == "person" else None
    if n is not None and n > 1:  # a person across n streams: one stream's events, n times
        # what one stream run at the whole budget states: its ledger's total is the n streams' (each has rho(B) / n,
        # or B / n) and it is stated by the same conversion (PipelineConfig.stream_budget)
        whole = spec.stated_total(cfg.core_config_at(cfg.target_budget()))
        return _across_streams(_stream_events(cfg), n, whole)
    return _stream_events(cfg)


def _stream_events(cfg) -> ReleaseEvents:
    """The events of one stream of the release (at its budget, ``PipelineConfig.stream_budget``)."""
    from transforms.core.forecast import DATA_INDEPENDENT  # local: the forecast module is the plan command's

    spec = cfg.mechanism_spec
    dc = cfg.dynamic_config()
    delta = float(getattr(dc.budget, "delta", 0.0))
    if cfg.mechanism not in DATA_INDEPENDENT:
        total = spec.stated_total(dc)
        cap = spec.core_cls.group_unit(dc).guarantee(spec.core_cls.ledger_cap(dc))
        charged = {"rho": cap.rho} if isinstance(cap, ZCDP) else {"epsilon": cap.epsilon}
        return ReleaseEvents(cfg.mechanism, "budget", charge_event(cap), total, charged, delta)
    core = spec.core_cls(
        dc, stream="events", end_tick=cfg.end_tick, every_ticks=cfg.every_ticks, options=cfg.mechanism_options()
    )
    parts = core.ledger_parts()
    for part in parts:
        part.ledger.keep_records = True  # before the first charge: the structures hold the ledger itself
    core.run_to_end(NoiseSource(_KEY))
    events, charged = [], {}
    for part in parts:
        group = type(part).group_unit(part.config).group_size
        events.append(ledger_event(part.ledger, group))
        spent = part.ledger.spent
        key = "rho" if isinstance(spent, ZCDP) else "epsilon"
        charged[key] = charged.get(key, 0.0) + _primary(spent) * _scale(spent, group)
    stated, _ = spec.stated_spend(dc, tuple(as_vector(core.spent)))
    return ReleaseEvents(cfg.mechanism, "charges", compose(events), stated, charged, delta)


def _across_streams(rel: ReleaseEvents, n: int, whole: dict) -> ReleaseEvents:
    """A person's events across the ``n`` streams they may reach: each stream's ``rel`` composed ``n`` times
    (sequential composition: the ledgers' totals add up). What we state for the person is ``whole``, the statement
    of one stream at the whole budget (``PipelineConfig.stream_budget`` gave each stream the share that composes
    to it: ``B / n``, or under a Gaussian (eps, delta) ledger ``rho(B) / n``, stated by the same conversion)."""
    times = {k: v * n for k, v in rel.charged.items()}
    stated = dict(whole)
    delta = float(whole.get("delta", 0.0))
    # n copies, not SelfComposedDpEvent(event, n): dp_accounting 0.6.0's PLD self-composes by FFT and truncates,
    # which states an infinite epsilon at delta 0 for a self-composed composition (checked: the demo's 9 Laplace
    # steps twice, inf against 2.00016 composed as a list)
    return ReleaseEvents(rel.mechanism, rel.source, dpe.ComposedDpEvent([rel.event] * n), stated, times, delta)


def dataset_event(releases) -> dpe.DpEvent:
    """The counted releases of a dataset (``pipelines.ledger.Release`` rows) composed sequentially, each as the
    event of its budget (:func:`budget_event`)."""
    return compose([budget_event(r.kind, r.budget) for r in releases if r.counted])


def stated_epsilon(stated: dict, delta: float) -> float:
    """Our epsilon at ``delta`` for a stated guarantee: a pure one's epsilon (any delta), an (epsilon, delta) one's
    epsilon at its delta (``delta`` must be at least it), a zCDP one's by our conversion (CKS 2020, Cor. 13)."""
    if "epsilon" in stated and (not stated.get("delta") or delta >= stated["delta"]):
        return float(stated["epsilon"])
    if "rho" in stated:
        return zcdp_to_approx(float(stated["rho"]), delta).epsilon
    raise ValueError(f"no epsilon at delta {delta} for {stated}")


def _for_rdp(e: dpe.DpEvent) -> dpe.DpEvent:
    """The RDP accountant's view: an epsilon step as its zCDP bound eps^2/2 (Bun-Steinke 2016, Prop. 1.4; sound:
    dp_accounting 0.6.0's RDP accountant has no discrete Laplace, and its randomized response needs a replace-one
    relation, not our add/remove)."""
    if isinstance(e, dpe.DiscreteLaplaceDpEvent):
        return dpe.ZCDpEvent(rho=(e.noise_parameter * e.sensitivity) ** 2 / 2.0)
    if isinstance(e, dpe.SelfComposedDpEvent):
        return dpe.SelfComposedDpEvent(_for_rdp(e.event), e.count)
    if isinstance(e, dpe.ComposedDpEvent):
        return dpe.ComposedDpEvent([_for_rdp(x) for x in e.events])
    return e


def epsilon(event: dpe.DpEvent, delta: float, accountant: str = "pld", *, interval: float = 1e-4) -> float:
    """dp_accounting's epsilon at ``delta`` for ``event``: ``pld`` (``PLDAccountant``, pessimistic discretisation of
    ``interval``: an upper bound) or ``rdp`` (``RdpAccountant`` on :data:`RDP_ORDERS`). Raises ValueError where the
    accountant does not support an event."""
    if accountant == "pld":
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    elif accountant == "rdp":
        acc, event = rdp_privacy_accountant.RdpAccountant(orders=RDP_ORDERS), _for_rdp(event)
    else:
        raise ValueError(f"accountant is pld or rdp, got {accountant!r}")
    if not acc.supports(event):
        raise ValueError(f"dp_accounting's {accountant} accountant does not support {type(event).__name__}")
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def compare(event: dpe.DpEvent, stated: dict | None, delta: float) -> dict:
    """``{"delta", "ours", "pld", "rdp"}``: our epsilon at ``delta`` for ``stated`` (None where it states none there)
    beside dp_accounting's (a text where an accountant does not support the event)."""
    row: dict = {"delta": delta, "ours": None}
    if stated is not None:
        try:
            row["ours"] = stated_epsilon(stated, delta)
        except ValueError:
            pass
    for accountant in ("pld", "rdp"):
        try:
            row[accountant] = epsilon(event, delta, accountant)
        except ValueError as e:
            row[accountant] = f"unsupported: {e}"
    return row


def to_json(event: dpe.DpEvent) -> dict:
    """An event as plain JSON data: ``{"type": class name, field: value, ...}``, nested for composed events
    (dp_accounting's own ``to_named_tuple`` form, without the module name)."""

    def plain(v):
        if hasattr(v, "_asdict"):
            d = v._asdict()
            d.pop("module_name", None)
            return {"type": d.pop("class_name"), **{k: plain(x) for k, x in d.items()}}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    return plain(event.to_named_tuple())


def main(argv=None) -> int:
    """``python -m pipelines.dp_events CONFIG [--delta D ...]``: the release's events (JSON) and, at each delta,
    our epsilon beside dp_accounting's (PLD, RDP)."""
    import argparse
    import json

    from pipelines.config import load_config
    from pipelines.model import ConfigError

    ap = argparse.ArgumentParser(prog="python -m pipelines.dp_events", description=main.__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("--delta", type=float, action="append", default=None, help="(repeatable; default 1e-6)")
    args = ap.parse_args(argv)
    try:
        rel = release_events(load_config(args.config))
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    figures = [compare(rel.event, rel.stated, delta) for delta in args.delta or [1e-6]]
    out = {"mechanism": rel.mechanism, "source": rel.source, "stated": rel.stated, "charged": rel.charged}
    print(json.dumps({**out, "event": to_json(rel.event), "epsilon_at_delta": figures}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
