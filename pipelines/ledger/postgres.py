"""The team ledger: a PostgreSQL server (``postgresql://user[:password]@host[:port]/database``) through psycopg 3
(``pip install 'dp-dynamic[postgres]'``). A registering launch locks its dataset's row (``SELECT ... FOR
UPDATE``) before it reads the spend: a second launch for the same dataset waits until the first commits, then
reads a spend that includes it (each statement of a READ COMMITTED transaction sees what was committed before
it). The schema's creation is serialised by a transaction-level advisory lock."""

from __future__ import annotations

from pipelines.ledger.store import LedgerUnavailable, Store, redact

__all__ = ["PostgresStore"]

#: the advisory lock that serialises ``CREATE TABLE IF NOT EXISTS`` between launches (any constant of ours)
SCHEMA_LOCK = 0x64700129


def _psycopg():
    try:
        import psycopg
    except ImportError:
        return None
    return psycopg


class PostgresStore(Store):
    """A ledger on a PostgreSQL server (the dataset's row locked while a launch registers)."""

    PARAM = "%s"
    CONNECT_TIMEOUT = 10  # seconds

    def connect(self):
        psycopg = _psycopg()
        if psycopg is None:
            raise LedgerUnavailable(
                f"privacy.ledger.url: {redact(self.url)} is a PostgreSQL ledger, which needs psycopg 3: pip install "
                "'dp-dynamic[postgres]' (or psycopg[binary])"
            )
        return psycopg.connect(self.url, autocommit=True, connect_timeout=self.CONNECT_TIMEOUT)

    def lock_schema(self, cur) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))

    def lock_dataset(self, cur, dataset: str) -> None:
        cur.execute("SELECT dataset FROM dp_ledger_datasets WHERE dataset = %s FOR UPDATE", (dataset,))

    def errors(self):
        psycopg = _psycopg()
        return (psycopg.Error,) if psycopg is not None else ()
