"""Which store a ledger URL names."""

from __future__ import annotations

from pipelines.ledger.postgres import PostgresStore
from pipelines.ledger.sqlite import SqliteStore
from pipelines.ledger.store import Store

__all__ = ["open_store"]


def open_store(url: str) -> Store:
    """The store of ``url``: ``sqlite:///path`` or ``postgresql://...`` (``postgres://`` too)."""
    if url.startswith("sqlite:///"):
        return SqliteStore(url)
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresStore(url)
    raise ValueError(f"a ledger URL starts with sqlite:/// or postgresql://; got {url.split(':', 1)[0]!r}")
