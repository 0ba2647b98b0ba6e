"""What only the core can check about the configured mechanism: the budget and profile together, its options
against the rest of the configuration, the query kinds it answers, a horizon that runs out before the end.

Kept together, as they were in ``pipelines/config.py``, for the switch to the core's registry and accounting
functions (``FINITE_COUNTERS`` and the kinds that need a horizon are mechanism facts the registry will state).
"""

from __future__ import annotations

import math

from pipelines.config.local_dp import check_local_dp
from pipelines.model import ConfigError
from transforms.spec import StreamSpec

__all__ = ["check_mechanism", "FINITE_COUNTERS"]

FINITE_COUNTERS = ("naive_prefix", "binary_tree", "honaker", "sqrt_factorization", "kary_tree")


def check_mechanism(cfg) -> None:
    """What only the core can check: the budget and profile together, the
    mechanism's options against the configuration, the query kinds it answers."""
    spec = cfg.mechanism_spec
    if spec.input_kind == "reports":  # a local-DP collector of client reports: its own checks
        check_local_dp(cfg)
        return
    try:
        config = cfg.dynamic_config()
        spec.core_cls._configure(config, cfg.mechanism_options())
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if cfg.unit == "entry" and cfg.max_mutations_per_entry is None:
        try:
            spec.core_cls.ledger_cap(config)
        except ValueError:
            raise ConfigError(
                f"privacy.max_mutations_per_entry: required with mechanism.kind {cfg.mechanism} (its entry-level "
                "guarantee is group privacy over k mutations); privacy.mutation_window alone bounds the loss only "
                "for the changelog mechanisms dcr, hdcr and swcr (docs/changelog.md)"
            ) from None
    _check_horizon(cfg)
    kinds = {q.query_set().kind for q in cfg.queries}
    unsupported = sorted(kinds - set(spec.query_kinds))
    if unsupported:
        raise ConfigError(
            f"mechanism.kind: {cfg.mechanism} does not answer {', '.join(unsupported)} queries "
            f"(sum queries are linear); it answers {', '.join(spec.query_kinds)}"
        )


def _check_horizon(cfg) -> None:
    """A configured horizon that runs out before the configured end would stop
    the releases early (the counter has no more nodes): refused up front."""
    horizon = dict(cfg.options).get("horizon")
    counter = dict(cfg.options).get("counter", "auto")
    if horizon is None and cfg.end is None and counter in FINITE_COUNTERS:
        raise ConfigError(
            f"mechanism.counter: {counter} needs a horizon (a finite number of releases): set mechanism.horizon, "
            "or time.end, or choose an unbounded counter (blt, infinite, infinite_honaker, naive_increments)"
        )
    if horizon is None or cfg.end is None or cfg.mechanism not in ("auto", "net_change", "continual_count"):
        return
    end_tick = StreamSpec(tick_seconds=cfg.tick_seconds, origin=cfg.origin, end_time=cfg.end).end_tick
    if cfg.mechanism == "continual_count":
        need, what = end_tick, f"{end_tick} ticks"
    else:
        need = math.ceil(end_tick / cfg.every_ticks)
        what = f"{need} periods of release.every_ticks = {cfg.every_ticks} ticks"
    if horizon < need:
        raise ConfigError(
            f"mechanism.horizon: {horizon} runs out before time.end (the release has {what}); "
            f"set it to at least {need}, or omit it (the end gives it)"
        )
