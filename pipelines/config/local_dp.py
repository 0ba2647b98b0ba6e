"""The settings of ``mechanism.kind: randomized_response`` (the local-DP collector of clients' reports,
``docs/local_dp.md``): what the collector refuses, with what to do instead."""

from __future__ import annotations

from pipelines.model import ConfigError
from transforms.core.families.local_dp import design_for

__all__ = ["check_local_dp"]


def check_local_dp(cfg) -> None:
    """The settings of a randomized-response collector, with what to do instead."""
    if cfg.rho is not None:
        raise ConfigError(
            "privacy.rho: randomized_response is (epsilon, delta) local DP per entry; give privacy.epsilon "
            "(and privacy.delta)"
        )
    if cfg.unit != "update":
        raise ConfigError(
            "privacy.unit: randomized_response states its guarantee per entry already; remove privacy.unit and "
            "privacy.max_mutations_per_entry and set mechanism.max_mutations (or constraint: time_bounded with "
            "bound_ticks)"
        )
    if cfg.disable_noise:
        raise ConfigError("privacy.disable_noise: the collector adds no noise (the clients randomize); remove it")
    if cfg.profile != "tuned":
        raise ConfigError("mechanism.profile: does not apply to randomized_response; remove it")
    if cfg.every_ticks != 1:
        raise ConfigError(
            "release.every_ticks: randomized_response releases every tick (a tick is a reporting period); "
            "make time.tick_seconds the period instead"
        )
    if cfg.round_answers or getattr(cfg, "consistent", False):
        raise ConfigError(
            "release.round / release.consistent: randomized_response releases unbiased estimates (they can be "
            "negative); rounding or clamping would bias them. Remove them"
        )
    if cfg.dedup_field:
        raise ConfigError(
            "source.dedup: the collector keeps one report per (entry, layer, period) itself; remove source.dedup"
        )
    if len(cfg.queries) != 1 or cfg.queries[0].type != "histogram":
        raise ConfigError(
            "queries: randomized_response takes exactly one histogram query: its field is not read (reports "
            "carry old and new answers), its domain is the answer domain, e.g. "
            "[{name: answer, type: histogram, field: answer, domain: [A, B, C]}]"
        )
    try:
        design = design_for(cfg.dynamic_config(), cfg.mechanism_options())
    except (TypeError, ValueError) as e:
        raise ConfigError(f"mechanism: {e}") from None
    if design.keep_weight <= design.other_weight * 1.0001:
        raise ConfigError(
            f"privacy.epsilon: {cfg.epsilon:g} over {design.fold} reports per entry leaves each report almost no "
            "signal; raise epsilon or lower max_mutations / layers"
        )
