"""The budget ledger across releases (``privacy.ledger``; ``docs/accounting.md``, "The ledger across releases").

Every launch with a ledger registers its release (id, dataset, configuration digest, privacy unit, budget, start
time, status ``running``) in one transaction that refuses the launch when the dataset's counted releases plus
this one would exceed the cap; the record then moves to how the run ended. Stores: SQLite in a file (embedded,
the standard library) or a PostgreSQL server (psycopg 3). ``python -m pipelines.ledger list|show`` prints a
dataset's releases and what is left of its cap; ``events`` their spend as dp_accounting events
(``pipelines/dp_events.py``); ``pipelines.ledger.read.ledger_rows`` (and ``pipelines.results.read_ledger``) reads
them as rows.
"""

from pipelines.ledger.backends import open_store
from pipelines.ledger.compose import FIELDS, KINDS, compose, exceeds
from pipelines.ledger.launch import LaunchEntry, check_no_ledger, new_release, register_release, status_for
from pipelines.ledger.store import (
    SCHEMA_VERSION,
    STATUSES,
    UNCOUNTED_IF_ATOMIC,
    LedgerRefused,
    LedgerUnavailable,
    NewRelease,
    Registration,
    Release,
    Store,
    redact,
)

__all__ = [
    "open_store",
    "FIELDS",
    "KINDS",
    "compose",
    "exceeds",
    "LaunchEntry",
    "check_no_ledger",
    "new_release",
    "register_release",
    "status_for",
    "SCHEMA_VERSION",
    "STATUSES",
    "UNCOUNTED_IF_ATOMIC",
    "LedgerRefused",
    "LedgerUnavailable",
    "NewRelease",
    "Registration",
    "Release",
    "Store",
    "redact",
]
