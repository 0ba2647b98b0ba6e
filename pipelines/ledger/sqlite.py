"""The embedded ledger: SQLite in a file (``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db``), with
the standard library's ``sqlite3``; no server. A registering launch takes the database's write lock at ``BEGIN
IMMEDIATE`` (a second launch waits for it, up to a minute), so that its read of the spend and its insert are one
step."""

from __future__ import annotations

import sqlite3

from pipelines.ledger.store import Store

__all__ = ["SqliteStore", "sqlite_path"]


def sqlite_path(url: str) -> str:
    """The file of ``sqlite:///path``."""
    return url[len("sqlite:///") :]


class SqliteStore(Store):
    """A ledger in a SQLite file (the database's write lock held while a launch registers)."""

    PARAM = "?"
    TIMEOUT = 60.0  # seconds a launch waits for another's transaction

    def connect(self):
        return sqlite3.connect(sqlite_path(self.url), timeout=self.TIMEOUT, isolation_level=None)

    def begin(self, cur) -> None:
        cur.execute("BEGIN IMMEDIATE")

    def errors(self):
        return (sqlite3.Error,)
