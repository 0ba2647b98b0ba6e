"""What only the core can check about the configured mechanism, asked of its registry entry
(``MechanismSpec``): the privacy units it serves (``MechanismSpec.units``), its options against the rest of the
configuration, an entry unit without a mutation limit where group privacy needs one, a finite counter without a
horizon, a horizon that runs out before the configured end, the query kinds it answers, query weights it cannot
honour, and every horizon or encoding limit it has (naming ``time.end`` and the largest end allowed). A collector
of client reports has its own checks."""

from __future__ import annotations

from pipelines.config.local_dp import check_local_dp
from pipelines.model import ConfigError
from transforms.core.limits import counter_limit, periods_limit
from transforms.core.mechanisms import MECHANISMS
from transforms.core.plans import WEIGHTED_MECHANISMS

__all__ = ["check_mechanism", "check_limits", "check_unit", "check_weights", "refusal"]


def check_mechanism(cfg) -> None:
    """Refuse, with one line naming the key, settings the configured mechanism cannot run."""
    spec = cfg.mechanism_spec
    check_weights(cfg)
    if spec.input_kind != "reports" or cfg.unit == "person":  # the collector says what to do with an entry unit
        check_unit(cfg)
    if spec.input_kind == "reports":  # a local-DP collector of client reports: its own checks
        check_local_dp(cfg)
        return
    try:
        spec.check(cfg.dynamic_config(), cfg.mechanism_options(), end_tick=cfg.end_tick, every_ticks=cfg.every_ticks)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    check_limits(cfg)
    try:  # what the run states at its start and end: a unit the mechanism cannot account stops here, not mid-run
        spec.ledger_budget(cfg.dynamic_config())
        spec.stated_total(cfg.dynamic_config())
    except ValueError as e:
        raise ConfigError(f"privacy.unit: {cfg.mechanism} cannot account for this unit ({e})") from None


def check_weights(cfg) -> None:
    """``queries[].weight`` is honoured by the mechanisms that split the budget over the query sets by weight
    (``WEIGHTED_MECHANISMS``); the others refuse a weight other than the default rather than ignore it."""
    if cfg.mechanism in WEIGHTED_MECHANISMS:
        return
    for i, q in enumerate(cfg.queries):
        if q.weight != 1.0:
            raise ConfigError(
                f"queries[{i}].weight: mechanism.kind {cfg.mechanism} splits its budget over the queries its own "
                f"way and takes no weights; weights apply under {' and '.join(WEIGHTED_MECHANISMS)} (remove it)"
            )


def check_limits(cfg) -> None:
    """Every horizon or encoding limit of the mechanism (``transforms/core/limits.py``: the lattice counters'
    largest horizons, the largest bounded release), checked before the run: one line naming ``time.end`` and the
    largest end allowed (or ``mechanism.horizon`` and its largest value)."""
    spec = cfg.mechanism_spec
    opts = cfg.mechanism_options()
    plan = spec.plan(cfg.dynamic_config(), opts, end_tick=cfg.end_tick, every_ticks=cfg.every_ticks)
    steps = [(p.counter, p.horizon) for p in plan if p.counter is not None]
    if not steps and hasattr(opts, "counter"):  # a counter over ticks named by the options (continual_count)
        steps = [(opts.counter, getattr(opts, "horizon", None))]
    explicit = getattr(opts, "horizon", None)
    for counter, _ in steps:
        lim = counter_limit(counter)
        if lim is not None and explicit is not None and explicit > lim[0]:
            raise ConfigError(f"mechanism.horizon: {explicit} is more than {lim[1]} allows: at most {lim[0]}")
    if cfg.end_tick is None:
        return
    every = cfg.every_ticks or 1
    periods = -(-cfg.end_tick // every)
    limit, why = periods_limit(c for c, h in steps if explicit is None or h is None)
    if periods <= limit:
        return
    if cfg.ticks:
        largest = f"tick {limit * every} (the last tick)"
    else:
        end = cfg.origin + limit * every * cfg.tick_seconds
        largest = f"{end:.0f} ({_iso(end)})"
    raise ConfigError(
        f"time.end: {periods} periods of {every} x {cfg.tick_seconds:g} s after time.origin, more than {why} "
        f"allows ({limit} periods): the largest time.end allowed is {largest}"
    )


def _iso(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def check_unit(cfg) -> None:
    """The configured ``privacy.unit`` is one the mechanism serves (:func:`refusal`), else one line naming
    ``privacy.unit`` and the mechanisms that serve it."""
    why = refusal(cfg.mechanism_spec, cfg.unit)
    if why is not None:
        serving = ", ".join(name for name, spec in MECHANISMS.items() if refusal(spec, cfg.unit) is None)
        raise ConfigError(
            f"privacy.unit: {cfg.unit} is not served by mechanism.kind {cfg.mechanism} ({why}); "
            f"mechanisms that serve it: {serving or 'none'}"
        )


def refusal(spec, unit: str) -> str | None:
    """Why the mechanism ``spec`` does not serve ``unit`` (None: it does). The registry is the one source: a
    mechanism serves the units it states its guarantee for (``MechanismSpec.units``; the growing family serves the
    person unit by group privacy over the person's at most L insertions, as it serves the entry unit); the
    message for a local-DP collector says why it serves no other unit than the update."""
    if unit == "person" and spec.trust == "local":
        return "local DP: each client randomizes its own entry's reports; there is no person to bound"
    if unit not in spec.units:
        return f"it states its guarantee for {', '.join(spec.units)}"
    return None
