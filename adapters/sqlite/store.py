"""The embedded state store: one SQLite file in WAL mode, every change in one transaction."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from adapters.sql.sql_store import SQLITE, Params, SqlStateStore
from adapters.sql.sqlite_file import open_checked
from domain.errors import StateError

FILE_NAME = "state.sqlite3"


class SqliteStateStore(SqlStateStore):
    """The `StateStore` port over `<state.root>/state.sqlite3`.

    One connection, guarded by a re-entrant lock held for a whole transaction, so threads of one
    process never interleave inside each other's transactions; other processes are kept apart by
    SQLite's own locking (WAL, `BEGIN IMMEDIATE`, a busy timeout). A nested `transaction()` is a
    savepoint: it joins the outer transaction, and an exception inside it undoes only its writes.
    Ledgers and records keep their version in a column of their own, beside the JSON.
    """

    dialect = SQLITE

    def __init__(self, path: Path, *, busy_timeout_seconds: float = 10.0) -> None:
        self.path = path
        self.where = str(path)
        self._db = open_checked(path, busy_timeout_seconds=busy_timeout_seconds)
        self._lock = threading.RLock()
        self._depth = 0

    @classmethod
    def reading(cls, db: sqlite3.Connection, path: Path) -> SqliteStateStore:
        """A store over `db`, a connection its caller opened read-only and checked the schema version
        of (the lean `sessions list`): it only reads; a write fails as SQLite refuses it."""
        store = cls.__new__(cls)
        store.path, store.where, store._db = path, str(path), db
        store._lock, store._depth = threading.RLock(), 0
        return store

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            name = f"sp{self._depth}"
            # IMMEDIATE takes the write lock up front: no deadlock upgrading a read later
            self._statement("BEGIN IMMEDIATE" if not self._depth else f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                self._undo(name)
                raise
            self._depth -= 1
            self._finish(name)

    def _finish(self, name: str) -> None:
        try:
            self._statement("COMMIT" if not self._depth else f"RELEASE {name}")
        except StateError:
            self._undo(name)
            raise

    def _undo(self, name: str) -> None:
        if not self._db.in_transaction:
            return  # SQLite rolled it back itself (a full disk, an I/O error): a ROLLBACK would only hide why
        if not self._depth:
            self._statement("ROLLBACK")
        else:
            self._statement(f"ROLLBACK TO {name}")
            self._statement(f"RELEASE {name}")

    def _statement(self, sql: str) -> None:
        self._execute(sql, ())

    def _execute(self, sql: str, params: Params) -> tuple[list[tuple[Any, ...]], int]:
        with self._lock:
            try:
                cursor = self._db.execute(sql, params)
                return cursor.fetchall(), cursor.rowcount
            except sqlite3.Error as exc:
                raise StateError(f"state store {self.path}: {exc}") from exc
