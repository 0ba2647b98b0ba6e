"""What only the core can check about the configured mechanism, asked of its registry entry
(``MechanismSpec``): the privacy units it serves (``MechanismSpec.units``), its options against the rest of the
configuration, an entry unit without a mutation limit where group privacy needs one, a finite counter without a
horizon, a horizon that runs out before the configured end, the query kinds it answers. A collector of client
reports has its own checks."""

from __future__ import annotations

from pipelines.config.local_dp import check_local_dp
from pipelines.model import ConfigError
from transforms.core.mechanisms import MECHANISMS

__all__ = ["check_mechanism", "check_unit", "refusal"]


def check_mechanism(cfg) -> None:
    """Refuse, with one line naming the key, settings the configured mechanism cannot run."""
    spec = cfg.mechanism_spec
    if spec.input_kind != "reports" or cfg.unit == "person":  # the collector says what to do with an entry unit
        check_unit(cfg)
    if spec.input_kind == "reports":  # a local-DP collector of client reports: its own checks
        check_local_dp(cfg)
        return
    try:
        spec.check(cfg.dynamic_config(), cfg.mechanism_options(), end_tick=cfg.end_tick, every_ticks=cfg.every_ticks)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    try:  # what the run states at its start and end: a unit the mechanism cannot account stops here, not mid-run
        spec.ledger_budget(cfg.dynamic_config())
        spec.stated_total(cfg.dynamic_config())
    except ValueError as e:
        raise ConfigError(f"privacy.unit: {cfg.mechanism} cannot account for this unit ({e})") from None


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
