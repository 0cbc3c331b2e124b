"""One PostgreSQL connection shared by a process's threads: opened again once broken, every driver
error said as the-loop's (naming the server, never the password)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.rows import TupleRow

from adapters.postgres.schema import prepare
from adapters.postgres.server import failure, server_of
from adapters.sql.state_codec import decoding
from domain.errors import StateError, StoreUnreachable

T = TypeVar("T")


class Session:
    """The connection inside one transaction."""

    def __init__(self, db: psycopg.Connection[TupleRow]) -> None:
        self._db = db

    def run(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self._db.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


class PgConnection:
    """Autocommit, so the only transactions are `transaction()`'s; a re-entrant lock held for a
    whole transaction, so threads never interleave inside one. `session` statements run on every new
    connection; `on_reconnect` is told when a broken one was replaced (what it held is gone)."""

    def __init__(
        self,
        dsn: str,
        *,
        session: Sequence[str] = (),
        on_reconnect: Callable[[], None] = lambda: None,
        connect_timeout_seconds: int = 10,
        application_name: str = "the-loop",
    ) -> None:
        self.server = server_of(dsn)
        self._dsn = dsn
        self._name = application_name
        self._session = tuple(session)
        self._on_reconnect = on_reconnect
        self._timeout = connect_timeout_seconds
        self._lock = threading.RLock()
        self._db = self._connect()
        try:
            with self.errors():
                prepare(self._db, f"state store {self.server}")
        except StateError:
            self._db.close()
            raise

    def _connect(self) -> psycopg.Connection[TupleRow]:
        with self.errors("cannot connect: "):
            # named, so `pg_stat_activity` (and an operator) can tell this connection from the store's
            db = psycopg.connect(self._dsn, autocommit=True, connect_timeout=self._timeout, application_name=self._name)
            for statement in self._session:
                db.execute(statement)
            return db

    @contextmanager
    def errors(self, doing: str = "") -> Iterator[None]:
        """Driver errors said as the-loop's, naming the server."""
        try:
            yield
        except psycopg.Error as exc:
            raise failure(self.server, exc, doing) from None

    def decoding(self) -> AbstractContextManager[None]:
        return decoding(f"state store {self.server}")

    @property
    def lock(self) -> threading.RLock:
        """Held by `call` for its whole transaction; a caller running its own holds it likewise."""
        return self._lock

    @property
    def db(self) -> psycopg.Connection[TupleRow]:
        """The connection as it is, inside a transaction already begun on it."""
        return self._db

    def ready(self) -> psycopg.Connection[TupleRow]:
        """The connection, opened again first when found broken or closed (`on_reconnect` told)."""
        if self._db.broken or self._db.closed:
            self._db = self._connect()
            self._on_reconnect()
        return self._db

    def call(self, work: Callable[[Session], T]) -> T:
        """Run `work` in one transaction. On a connection found dead (the server ended an idle one,
        or restarted) it runs once more on a new one: nothing of the first try was committed."""
        with self._lock:
            try:
                return self._once(work)
            except StoreUnreachable:
                if not self._db.broken:
                    raise
            return self._once(work)

    def _once(self, work: Callable[[Session], T]) -> T:
        db = self.ready()
        with self.errors(), db.transaction():
            return work(Session(db))

    def close(self) -> None:
        with self._lock:
            self._db.close()
