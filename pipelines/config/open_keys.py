"""Open stream keys in the configuration (issue 33): what ``streams: {field, keys: open, ...}`` needs from
the other sections, and the core objects it configures (``transforms/open_keys.py``,
``transforms/core/selection``). Checked before any pipeline runs: a bad value is one line naming the key."""

from __future__ import annotations

from typing import NamedTuple

from pipelines.model import issue
from transforms.core.contribution.sensitivity import UnsupportedCounter
from transforms.core.selection import KeyLimit, OpenKeysNeedDelta, SelectionParams, answer_calibration

__all__ = [
    "check_open_keys_config",
    "key_limit",
    "selection_params",
    "open_keys_digest",
    "OpenSettings",
    "open_settings",
    "open_histogram",
]


class OpenSettings(NamedTuple):
    """The settings of an open domain, wherever it is configured: ``streams: {field, keys: open, max_keys,
    max_keys_per_person, ...}`` (a key is a stream key) or a histogram query's ``{field, domain: open,
    max_cells, max_cells_per_person, ...}`` (a key is a (stream, cell) pair; ``cells`` True). The core's names:
    ``max_keys`` the cap on released keys, ``max_keys_per_person`` the K of the selection."""

    field: str
    max_keys: int
    max_keys_per_person: int
    selection_share: float
    failure: float
    cells: bool = False


def open_histogram(cfg):
    """The histogram query whose domain is open (issue 33), or None."""
    return next((q for q in cfg.queries if q.open_domain), None)


def open_settings(cfg) -> OpenSettings:
    """The open domain's settings (``cfg.open_keys`` must be True)."""
    q = open_histogram(cfg)
    if q is not None:
        return OpenSettings(q.field, q.max_cells, q.max_cells_per_person, q.selection_share, q.failure, True)
    s = cfg.streams_config
    return OpenSettings(s.field, s.max_keys, s.max_keys_per_person, s.selection_share, s.failure)


def check_open_keys_config(cfg) -> None:
    """What open keys need from the rest of the configuration (nothing when the keys are declared)."""
    if not cfg.open_keys:
        return
    hist = open_histogram(cfg)
    if hist is not None:  # domain: open (issue 33): the one query; its cells are keys within declared streams
        if cfg.streams_config.open_keys:
            raise issue(
                "domain: open with streams keys: open is not supported: declare the streams (or one stream) and "
                "keep the histogram's cells open",
                "domain",
            )
        if len(cfg.queries) != 1:
            kinds = ", ".join(f"{q.name} ({q.type})" for q in cfg.queries)
            raise issue(f"with domain: open the histogram is the one query of the release; got {kinds}", "queries")
    if cfg.person_field is None:
        bounded = "cells are bounded by max_cells_per_person" if hist else "keys are bounded by max_keys_per_person"
        raise issue(f"open keys need privacy.unit person (a person's {bounded})", "privacy.unit")
    if cfg.max_entries_per_person is None or cfg.max_entries_window is not None:
        raise issue("open keys need max_entries_per_person over the whole release (no window)", "privacy")
    if cfg.end is None and not cfg.streaming:
        raise issue(
            "open keys on a bounded source need time.end (the last period released); without an end: a streaming "
            "source (pubsub, kafka, follow)",
            "time.end",
        )
    if cfg.every_ticks != 1:
        raise issue(f"open keys release every tick (every_ticks 1); got {cfg.every_ticks}", "release.every_ticks")
    if cfg.mechanism != "auto":
        raise issue(
            f"open keys choose their own counters (net_change's choice); write kind: auto, got {cfg.mechanism}",
            "mechanism.kind",
        )
    if cfg.queries_source is not None:
        raise issue("not supported with open keys", "queries_source")
    if cfg.consistent:
        raise issue("not supported with open keys (one count per key: nothing to make consistent)", "release")
    try:  # the budget must be able to state the selection's delta (transforms/core/selection/params.py)
        selection_params(cfg, cfg.end_tick)
    except OpenKeysNeedDelta as e:
        raise issue(str(e), "privacy.rho" if cfg.rho is not None else "privacy.delta") from None
    if cfg.privacy.ledger is not None and cfg.rho is None and not cfg.delta:
        # the ledger records what a release states: here (epsilon, failure), which a cap in pure epsilon terms
        # cannot be compared with
        raise issue(
            "open keys under a pure epsilon budget are an (epsilon, delta = streams.failure) release, which a "
            "ledger with a pure epsilon cap cannot record: configure privacy.delta (and a ledger cap with a delta), "
            "or no ledger",
            "privacy.ledger",
        )
    if cfg.end is None:  # the answers' counters are the unbounded ones: calibrated by contribution, or refused
        try:
            answer_calibration(selection_params(cfg, None), key_limit(cfg))
        except UnsupportedCounter as e:
            raise issue(
                f"open keys without an end: the answers' counter is not supported at person level ({e})", "time.end"
            ) from None
    if hist is None and (len(cfg.queries) != 1 or cfg.queries[0].type != "count"):
        kinds = ", ".join(f"{q.name} ({q.type})" for q in cfg.queries)
        raise issue(
            f"with keys: open the one query supported is a count (a count per open key); got {kinds}", "queries"
        )


def key_limit(cfg) -> KeyLimit:
    """``K`` keys, ``L`` entries per person, ``k`` mutations per entry."""
    return KeyLimit(
        open_settings(cfg).max_keys_per_person, cfg.max_entries_per_person, int(cfg.max_mutations_per_entry or 1)
    )


def selection_params(cfg, horizon: int | None) -> SelectionParams:
    """The selection's parameters from the configured budget (the person unit's target), ``K``, the share and
    failure, over ``horizon`` periods (the ticks to ``time.end``; None: a run without an end, streaming)."""
    s = open_settings(cfg)
    return SelectionParams(
        cfg.target_budget(),
        s.max_keys_per_person,
        selection_share=s.selection_share,
        failure=s.failure,
        horizon=horizon,
        group=key_limit(cfg).group,
    )


def open_keys_digest(cfg) -> tuple:
    """The open-key settings for the release digest (empty when the keys are declared: today's digests)."""
    if not cfg.open_keys:
        return ()
    s = open_settings(cfg)
    if s.cells:  # a histogram's domain: open (its name and field are in the queries' part of the digest)
        return (("open_cells", s.max_keys, s.max_keys_per_person, s.selection_share, s.failure),)
    return (("open_keys", s.max_keys, s.max_keys_per_person, s.selection_share, s.failure),)
