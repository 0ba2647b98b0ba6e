"""The ledger's store: the releases of each dataset, their budgets and statuses, in SQL that SQLite and
PostgreSQL both run (``pipelines.ledger.sqlite``, ``pipelines.ledger.postgres`` say how each opens, begins and
locks). The schema is created on first use and versioned (``dp_ledger_meta.schema_version``).

Registration is ONE transaction that holds the dataset's lock from the read of what it has spent to the insert
of the new release, so that two launches racing for the last of a cap cannot both pass: SQLite takes the
database's write lock at ``BEGIN IMMEDIATE``; PostgreSQL locks the dataset's row (``SELECT ... FOR UPDATE``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from urllib.parse import urlsplit, urlunsplit

from pipelines.ledger.compose import FIELDS, compose, exceeds, text
from pipelines.model import ConfigError

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "UNCOUNTED_IF_ATOMIC",
    "LedgerRefused",
    "LedgerUnavailable",
    "NewRelease",
    "Release",
    "Registration",
    "Store",
    "redact",
    "now",
]

SCHEMA_VERSION = 1
#: a release's statuses: running (registered, the run under way), then how its last run ended: completed,
#: failed, cancelled (Ctrl-C), stopped (a local streaming run stopped by Ctrl-C or --duration: its releases were
#: published), submitted (a streaming job left running on a remote runner)
STATUSES = ("running", "completed", "failed", "cancelled", "stopped", "submitted")
#: the statuses that leave a release uncounted when its outputs are atomic (a bounded run whose every sink is a
#: file sink: written to a temporary place, moved into the folder only when the run completes; such a run that
#: failed or was cancelled published nothing). Everything else counts: it could have published.
UNCOUNTED_IF_ATOMIC = ("failed", "cancelled")

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS dp_ledger_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dp_ledger_datasets (dataset TEXT PRIMARY KEY, unit TEXT NOT NULL, "
    "kind TEXT NOT NULL, created TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS dp_ledger_releases (dataset TEXT NOT NULL REFERENCES dp_ledger_datasets(dataset), "
    "release_id TEXT NOT NULL, config_digest TEXT NOT NULL, unit TEXT NOT NULL, kind TEXT NOT NULL, "
    "budget TEXT NOT NULL, cap TEXT NOT NULL, atomic INTEGER NOT NULL, counted INTEGER NOT NULL, "
    "status TEXT NOT NULL, runs INTEGER NOT NULL, started TEXT NOT NULL, ended TEXT, "
    "PRIMARY KEY (dataset, release_id))",
)
_COLUMNS = "dataset, release_id, config_digest, unit, kind, budget, cap, atomic, counted, status, runs, started, ended"


class LedgerRefused(ConfigError):
    """The ledger refuses the launch (over the cap, another unit or kind, a release id reused with another
    configuration): one line, exit 2, before the pipeline starts."""


class LedgerUnavailable(ConfigError):
    """The ledger cannot be opened or read (the launch is refused: an unrecorded release would spend a budget
    nobody counts)."""


def redact(url: str) -> str:
    """``url`` without its password (``postgresql://user:***@host/db``)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _dumps(amount: dict[str, Decimal]) -> str:
    return json.dumps({k: str(v) for k, v in amount.items()}, sort_keys=True)


def _loads(s: str) -> dict[str, Decimal]:
    return {k: Decimal(v) for k, v in json.loads(s).items()}


@dataclass(frozen=True)
class NewRelease:
    """What a launch registers: ``budget`` and ``cap`` in the fields of ``kind`` (``compose.FIELDS``); ``unit``
    the privacy unit in words (a dataset's releases share it); ``atomic``: the run publishes nothing unless it
    completes (see :data:`UNCOUNTED_IF_ATOMIC`)."""

    dataset: str
    release_id: str
    config_digest: str
    unit: str
    kind: str
    budget: dict
    cap: dict
    atomic: bool


@dataclass(frozen=True)
class Release:
    """A release as the ledger has it."""

    dataset: str
    release_id: str
    config_digest: str
    unit: str
    kind: str
    budget: dict
    cap: dict
    atomic: bool
    counted: bool
    status: str
    runs: int
    started: str
    ended: str | None

    @classmethod
    def from_row(cls, row) -> Release:
        d = dict(zip(_COLUMNS.split(", "), row, strict=True))
        d.update(budget=_loads(d["budget"]), cap=_loads(d["cap"]), atomic=bool(d["atomic"]))
        return cls(**{**d, "counted": bool(d["counted"])})


@dataclass(frozen=True)
class Registration:
    """What registration did: ``charged`` (the budget this launch added to the dataset's spend; zero for a
    release that already counted), ``spent`` (the dataset's spend before it), ``continued`` (the release id was
    already in the ledger), ``prior_counted`` (it already counted: its status cannot uncount it)."""

    dataset: str
    release_id: str
    charged: dict
    spent: dict
    continued: bool
    prior_counted: bool


class Store:
    """A ledger in a SQL database (a backend subclass says how to connect, begin and lock). Every method opens
    its own connection and closes it: a launch holds none while its pipeline runs."""

    PARAM = "?"  # the driver's placeholder

    def __init__(self, url: str):
        self.url = url
        self._ready = False

    # -- what a backend provides ----------------------------------------------------------------------------
    def connect(self):
        raise NotImplementedError

    def begin(self, cur) -> None:
        """Begin a transaction that will write (SQLite: ``BEGIN IMMEDIATE``, the write lock now)."""
        cur.execute("BEGIN")

    def lock_schema(self, cur) -> None:
        """Serialise the creation of the schema between launches (within the transaction)."""

    def lock_dataset(self, cur, dataset: str) -> None:
        """Hold the dataset until the transaction ends (PostgreSQL: its row, ``FOR UPDATE``)."""

    def errors(self) -> tuple[type[BaseException], ...]:
        """The driver's errors that mean the ledger cannot be used."""
        raise NotImplementedError

    # -- the SQL both run -----------------------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql.replace("?", self.PARAM)

    def _run(self, cur, sql: str, args=()):
        cur.execute(self._sql(sql), tuple(args))
        return cur

    def _connection(self):
        try:
            conn = self.connect()
        except self.errors() as e:
            raise LedgerUnavailable(
                f"privacy.ledger.url: cannot open the ledger {redact(self.url)}: {type(e).__name__}: "
                f"{_first_line(e, self.url)}"
            ) from None
        return conn

    def _transaction(self, work):
        """``work(cursor)`` in one transaction: committed if it returns, rolled back if it raises. The first
        transaction of a store is preceded by one that creates or checks the schema (so that the schema's lock
        is not held while ``work`` runs)."""
        conn = self._connection()
        try:
            cur = conn.cursor()
            if not self._ready:
                self._in_transaction(cur, self._schema)
                self._ready = True
            return self._in_transaction(cur, work)
        except self.errors() as e:
            raise LedgerUnavailable(
                f"privacy.ledger: the ledger {redact(self.url)} failed: {type(e).__name__}: {_first_line(e, self.url)}"
            ) from None
        finally:
            conn.close()

    def _in_transaction(self, cur, work):
        self.begin(cur)
        try:
            out = work(cur)
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")
        return out

    def _schema(self, cur) -> None:
        self.lock_schema(cur)
        for statement in SCHEMA:
            cur.execute(statement)
        row = self._run(cur, "SELECT value FROM dp_ledger_meta WHERE key = ?", ("schema_version",)).fetchone()
        if row is None:
            self._run(cur, "INSERT INTO dp_ledger_meta (key, value) VALUES (?, ?)", ("schema_version", "1"))
        elif int(row[0]) != SCHEMA_VERSION:
            raise LedgerRefused(
                f"privacy.ledger: the ledger {redact(self.url)} has schema version {row[0]}; this version of "
                f"dp-dynamic reads version {SCHEMA_VERSION}"
            )

    def register(self, new: NewRelease, *, checked=None) -> Registration:
        """Register ``new`` (status ``running``) in one transaction, or raise :class:`LedgerRefused` changing
        nothing: when the dataset holds releases of another unit or budget kind, when its release id is there
        with another configuration digest, or when the dataset's counted releases plus this one would exceed
        the cap. A release id already there with the same digest is continued: it charges nothing new if it
        already counted. Nothing is registered past the cap, whatever the launch says of itself (a ``--update``
        of a job the ledger has not seen is a new release to it). ``checked(spent)``: called once the spend is
        read, inside the transaction (tests use it to race two launches)."""

        def work(cur) -> Registration:
            self._run(
                cur,
                "INSERT INTO dp_ledger_datasets (dataset, unit, kind, created) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (dataset) DO NOTHING",
                (new.dataset, new.unit, new.kind, now()),
            )
            self.lock_dataset(cur, new.dataset)
            unit, kind = self._run(
                cur, "SELECT unit, kind FROM dp_ledger_datasets WHERE dataset = ?", (new.dataset,)
            ).fetchone()
            where = f"(ledger {redact(self.url)})"
            if (unit, kind) != (new.unit, new.kind):
                raise LedgerRefused(
                    f"privacy.ledger.dataset: the dataset {new.dataset!r} holds releases with privacy unit "
                    f"{unit!r} and budget kind {kind}; this release has unit {new.unit!r} and kind {new.kind}: "
                    f"budgets for different neighbour relations or currencies do not add up {where}"
                )
            old = self._run(
                cur,
                f"SELECT {_COLUMNS} FROM dp_ledger_releases WHERE dataset = ? AND release_id = ?",
                (new.dataset, new.release_id),
            ).fetchone()
            old = None if old is None else Release.from_row(old)
            if old is not None and old.config_digest != new.config_digest:
                raise LedgerRefused(
                    f"privacy.release_id: release {new.release_id} of dataset {new.dataset!r} was made with another "
                    f"configuration (digest {old.config_digest[:12]}, now {new.config_digest[:12]}): the same id on "
                    f"other settings would reuse its noise; omit the id for a new release {where}"
                )
            rows = self._run(
                cur, "SELECT budget FROM dp_ledger_releases WHERE dataset = ? AND counted = 1", (new.dataset,)
            ).fetchall()
            spent = compose(kind, [_loads(r[0]) for r in rows])
            if checked is not None:
                checked(spent)
            prior = old is not None and old.counted
            charged = {f: Decimal(0) for f in FIELDS[kind]} if prior else new.budget
            total = compose(kind, [spent, charged])
            if exceeds(total, new.cap):
                raise LedgerRefused(
                    f"privacy.ledger.cap: refused: the dataset {new.dataset!r} has spent {text(spent)}, this "
                    f"release asks {text(charged)} and the cap is {text(new.cap)}: together "
                    f"{text(total)} would exceed the cap {where}"
                )
            if old is None:
                self._run(
                    cur,
                    f"INSERT INTO dp_ledger_releases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, 'running', 1, ?, "
                    "NULL)",
                    (
                        new.dataset,
                        new.release_id,
                        new.config_digest,
                        new.unit,
                        new.kind,
                        _dumps(new.budget),
                        _dumps(new.cap),
                        int(new.atomic),
                        now(),
                    ),
                )
            else:
                self._run(
                    cur,
                    "UPDATE dp_ledger_releases SET counted = 1, status = 'running', runs = runs + 1, cap = ?, "
                    "atomic = ?, ended = NULL WHERE dataset = ? AND release_id = ?",
                    (_dumps(new.cap), int(new.atomic), new.dataset, new.release_id),
                )
            return Registration(new.dataset, new.release_id, charged, spent, old is not None, prior)

        return self._transaction(work)

    def finish(self, registration: Registration, status: str) -> None:
        """Record how the run ended. A release whose outputs are atomic and that failed or was cancelled is left
        uncounted (it published nothing), unless an earlier run of it already counted."""
        if status not in STATUSES[1:]:
            raise ValueError(f"a run ends as one of {', '.join(STATUSES[1:])}; got {status!r}")

        def work(cur) -> None:
            uncount = status in UNCOUNTED_IF_ATOMIC and not registration.prior_counted
            self._run(
                cur,
                "UPDATE dp_ledger_releases SET status = ?, ended = ?, counted = CASE WHEN ? = 1 AND atomic = 1 "
                "THEN 0 ELSE counted END WHERE dataset = ? AND release_id = ?",
                (status, now(), int(uncount), registration.dataset, registration.release_id),
            )

        self._transaction(work)

    def datasets(self) -> list[tuple[str, str, str]]:
        """``(dataset, unit, kind)`` of every dataset, by name."""
        return self._transaction(
            lambda cur: [
                tuple(r) for r in self._run(cur, "SELECT dataset, unit, kind FROM dp_ledger_datasets ORDER BY dataset")
            ]
        )

    def releases(self, dataset: str) -> list[Release]:
        """The dataset's releases, oldest first."""
        return self._transaction(
            lambda cur: [
                Release.from_row(r)
                for r in self._run(
                    cur,
                    f"SELECT {_COLUMNS} FROM dp_ledger_releases WHERE dataset = ? ORDER BY started, release_id",
                    (dataset,),
                ).fetchall()
            ]
        )


def _first_line(e: BaseException, url: str) -> str:
    """The first line of a driver's message, with the URL's password removed should the driver quote it."""
    line = (str(e).strip().splitlines() or [""])[0]
    password = urlsplit(url).password
    return line.replace(password, "***") if password else line
