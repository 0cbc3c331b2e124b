"""The shared state store: PostgreSQL, every change in one transaction, ledgers and records versioned."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from adapters.postgres.connection import PgConnection
from adapters.postgres.schema import LOCK_KEY
from adapters.sql.sql_store import POSTGRES, Params, SqlStateStore


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
        self._pg = PgConnection(dsn, connect_timeout_seconds=connect_timeout_seconds, application_name="the-loop store")
        self.server = self._pg.server
        self.where = str(self.server)
        self.dsn = dsn
        self._depth = 0

    def close(self) -> None:
        self._pg.close()

    def _connection(self) -> psycopg.Connection[TupleRow]:
        # inside a transaction the connection stays the one it began on: a new one would hold none of it
        return self._pg.db if self._depth else self._pg.ready()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._pg.lock:
            db = self._connection()
            self._depth += 1
            try:
                with self._pg.errors(), db.transaction():
                    if self._depth == 1:
                        db.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
                    yield
            finally:
                self._depth -= 1

    def _execute(self, sql: str, params: Params) -> tuple[list[tuple[Any, ...]], int]:
        with self._pg.lock, self._pg.errors():
            cursor = self._connection().execute(sql, params)
            return (cursor.fetchall() if cursor.description else []), cursor.rowcount
