"""What only the core can check about the configured mechanism, asked of its registry entry
(``MechanismSpec.check``): its options against the rest of the configuration, an entry unit without a
mutation limit where group privacy needs one, a finite counter without a horizon, a horizon that runs out
before the configured end, the query kinds it answers. A collector of client reports has its own checks."""

from __future__ import annotations

from pipelines.config.local_dp import check_local_dp
from pipelines.model import ConfigError

__all__ = ["check_mechanism"]


def check_mechanism(cfg) -> None:
    """Refuse, with one line naming the key, settings the configured mechanism cannot run."""
    spec = cfg.mechanism_spec
    if spec.input_kind == "reports":  # a local-DP collector of client reports: its own checks
        check_local_dp(cfg)
        return
    try:
        spec.check(cfg.dynamic_config(), cfg.mechanism_options(), end_tick=cfg.end_tick, every_ticks=cfg.every_ticks)
    except ValueError as e:
        raise ConfigError(str(e)) from None
