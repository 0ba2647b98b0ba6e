"""What a launch of the release CLI does with the ledger (``privacy.ledger``): register its release before the
pipeline starts (refused: exit 2), then record how the run ended.

``pipelines.cli`` calls :func:`register_release` and wraps the run::

    with register_release(cfg, release, local=local) as entry:
        return entry.finish(run_the_pipeline())

``finish`` maps the exit status to the release's status; leaving the block by an exception records ``failed``
(``cancelled`` for Ctrl-C). Without ``privacy.ledger`` the entry does nothing.
"""

from __future__ import annotations

import sys

from pipelines.config.open_keys import selection_params
from pipelines.ledger.backends import open_store
from pipelines.ledger.compose import budget_of, cap_of, text
from pipelines.ledger.store import NewRelease, Registration, redact
from pipelines.model import ConfigError

__all__ = ["register_release", "LaunchEntry", "new_release", "status_for", "check_no_ledger", "CANCELLED_EXIT"]

#: the exit status of a run cancelled by Ctrl-C (SIGINT: 128 + 2)
CANCELLED_EXIT = 130


def new_release(cfg, release) -> NewRelease:
    """What ``cfg``'s launch of ``release`` registers. The budget is the configured budget
    (``cfg.target_budget()``; with open keys, the release's stated guarantee, ``docs/open_keys.md``): the
    streams are disjoint partitions of the data (each update belongs to the one stream its stream field names),
    so by parallel composition the release's guarantee on the whole dataset is the largest per-stream one, which
    is the configured budget of each; under ``privacy.max_streams_per_person`` each stream runs at its share
    (``cfg.stream_budget()``) and the configured budget is a person's guarantee across all streams."""
    ledger = cfg.privacy.ledger
    stated = cfg.target_budget()
    if cfg.open_keys:  # what an open-key release states and charges (equal to the budget under (eps, delta))
        stated = selection_params(cfg, cfg.end_tick).guarantee()
    kind, budget = budget_of(stated)
    return NewRelease(
        dataset=ledger.dataset,
        release_id=release.release_id,
        config_digest=release.config_digest,
        unit=cfg.unit_text(),
        kind=kind,
        budget=budget,
        cap=cap_of(kind, ledger.cap),
        atomic=not cfg.streaming and all(sink.publishes_atomically for sink in cfg.sinks),
    )


def status_for(code: int, *, streaming: bool, local: bool) -> str:
    """The status of a run that ended with exit status ``code``: 130 cancelled; 0 or 3 (a bounded run whose
    dead-letter share is too high: its outputs were written) completed, stopped (a local streaming run: stopped
    by Ctrl-C or --duration, its releases published) or submitted (a streaming job left on a remote runner);
    any other failed."""
    if code == CANCELLED_EXIT:
        return "cancelled"
    if code not in (0, 3):
        return "failed"
    if not streaming:
        return "completed"
    return "stopped" if local else "submitted"


def check_no_ledger(cfg) -> None:
    """A local-DP collector spends no budget: the clients randomise their own reports (each report's epsilon is
    spent on the device, ``rr_client``), and the collector's estimates are post-processing of the reports, as
    often as it runs. ``privacy.ledger`` there is refused rather than ignored."""
    if cfg.privacy.ledger is not None:
        raise ConfigError(
            "privacy.ledger: not applicable to a local-DP collector: the clients spend their budgets on their own "
            "devices and collecting their reports spends none (docs/accounting.md, the ledger across releases)"
        )


class LaunchEntry:
    """A registered launch (or nothing, without a ledger): :meth:`finish` records how the run ended."""

    def __init__(self, store=None, registration: Registration | None = None, *, streaming=False, local=True):
        self.store, self.registration = store, registration
        self.streaming, self.local = streaming, local
        self.status: str | None = None

    def finish(self, code: int) -> int:
        """Record the status of a run that ended with exit status ``code``; returns ``code``."""
        self._record(status_for(code, streaming=self.streaming, local=self.local))
        return code

    def _record(self, status: str) -> None:
        if self.status is not None:
            return
        self.status = status
        if self.store is not None:
            try:
                self.store.finish(self.registration, status)
            except ConfigError as e:  # the run is over; say it, and leave the record as it was (it counts)
                print(
                    f"WARNING: {e}; release {self.registration.release_id} stays 'running' in the ledger (it "
                    "counts towards the cap)",
                    file=sys.stderr,
                )

    def __enter__(self) -> LaunchEntry:
        return self

    def __exit__(self, kind, error, tb) -> bool:
        if kind is not None:
            self._record("cancelled" if issubclass(kind, KeyboardInterrupt) else "failed")
        return False


def register_release(cfg, release, *, local: bool) -> LaunchEntry:
    """Register ``release`` in ``cfg``'s ledger (nothing without ``privacy.ledger``), before the pipeline starts.
    Raises :class:`~pipelines.ledger.store.LedgerRefused` (a ConfigError: one line, exit 2) over the cap.
    A ``--update`` of a running job is a continuation like any other: its release charges nothing new when the
    ledger has it; one the ledger has never seen is registered like a new release, cap included (the flag is
    the launch's own word: taking it as proof of an earlier spend would let any run past the cap)."""
    if cfg.privacy.ledger is None:
        return LaunchEntry(streaming=cfg.streaming, local=local)
    new = new_release(cfg, release)
    store = open_store(cfg.privacy.ledger.url)
    registration = store.register(new)
    if registration.continued:
        what = "continues, charging nothing new" if registration.prior_counted else f"charges {text(new.budget)}"
        line = f"ledger: release {new.release_id} {what} (dataset {new.dataset!r}, {redact(store.url)})"
    else:
        line = (
            f"ledger: release {new.release_id} charges {text(registration.charged)} to dataset {new.dataset!r} "
            f"(spent before: {text(registration.spent)}; cap {text(new.cap)}; {redact(store.url)})"
        )
    print(line, file=sys.stderr)
    return LaunchEntry(store, registration, streaming=cfg.streaming, local=local)
