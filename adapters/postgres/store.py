"""The shared state store: PostgreSQL, every change in one transaction, ledgers and records versioned."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from adapters.postgres.schema import LOCK_KEY, prepare
from adapters.postgres.server import failure, server_of
from adapters.support.sql_store import POSTGRES, Params, SqlStateStore
from domain.errors import StateError


class PostgresStateStore(SqlStateStore):
    """The `StateStore` port over the tables of `dsn`'s current schema.

    One connection, guarded by a re-entrant lock held for a whole transaction, as the SQLite store
    does: the poll cycle's worker threads spend their time in tmux and gh, a store call is a short
    round trip, and threads of one process never interleave inside each other's transactions. (Its
    worker threads are new each cycle: a connection per thread would be a connection per cycle.)
    Other processes and hosts are kept apart as SQLite's `BEGIN IMMEDIATE` keeps them: every
    outermost transaction first takes one transaction-scoped advisory lock. A nested
    `transaction()` is a savepoint. A broken connection fails its call with `StateError` and is
    opened again by the next one. Errors name the server (host, port, database), never the password.
    """

    dialect = POSTGRES

    def __init__(self, dsn: str, *, connect_timeout_seconds: int = 10) -> None:
        self.server = server_of(dsn)
        self.where = str(self.server)
        self.dsn = dsn
        self._timeout = connect_timeout_seconds
        self._lock = threading.RLock()
        self._depth = 0
        self._db = self._connect()
        try:
            with self._errors():
                prepare(self._db, f"state store {self.server}")
        except StateError:
            self._db.close()
            raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _connect(self) -> psycopg.Connection[TupleRow]:
        with self._errors("cannot connect: "):
            # autocommit: transactions are only the ones `transaction()` opens
            return psycopg.connect(
                self.dsn, autocommit=True, connect_timeout=self._timeout, application_name="the-loop store"
            )

    @contextmanager
    def _errors(self, doing: str = "") -> Iterator[None]:
        try:
            yield
        except psycopg.Error as exc:
            raise failure(self.server, exc, doing) from None

    def _ready(self) -> psycopg.Connection[TupleRow]:
        """The connection; a broken one (server restarted, network cut) is opened again."""
        if not self._depth and self._db.broken:
            self._db = self._connect()
        return self._db

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self._ready()
            self._depth += 1
            try:
                with self._errors(), self._db.transaction():
                    if self._depth == 1:
                        self._db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                    yield
            finally:
                self._depth -= 1

    def _execute(self, sql: str, params: Params) -> tuple[list[tuple[Any, ...]], int]:
        with self._lock, self._errors():
            cursor = self._ready().execute(sql, params)
            return (cursor.fetchall() if cursor.description else []), cursor.rowcount
