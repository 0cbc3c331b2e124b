"""The embedded state store: one SQLite file in WAL mode, every change in one transaction."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from adapters.sqlite.codec import decode_ledger, decode_session, encode_ledger, encode_session
from adapters.support.sqlite_file import open_checked
from domain.errors import StateError
from domain.ledger import Ledger
from domain.model import SessionRecord
from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef

FILE_NAME = "state.sqlite3"


class SqliteStateStore(StateStore):
    """The `StateStore` port over `<state.root>/state.sqlite3`.

    One connection, guarded by a re-entrant lock held for a whole transaction, so threads of one
    process never interleave inside each other's transactions; other processes are kept apart by
    SQLite's own locking (WAL, `BEGIN IMMEDIATE`, a busy timeout). A nested `transaction()` is a
    savepoint: it joins the outer transaction, and an exception inside it undoes only its writes.
    """

    def __init__(self, path: Path, *, busy_timeout_seconds: float = 10.0) -> None:
        self.path = path
        self._db = open_checked(path, busy_timeout_seconds=busy_timeout_seconds)
        self._lock = threading.RLock()
        self._depth = 0

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            name = f"sp{self._depth}"
            # IMMEDIATE takes the write lock up front: no deadlock upgrading a read later
            self._run("BEGIN IMMEDIATE" if not self._depth else f"SAVEPOINT {name}")
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
            self._run("COMMIT" if not self._depth else f"RELEASE {name}")
        except StateError:
            self._undo(name)
            raise

    def _undo(self, name: str) -> None:
        if not self._depth:
            self._run("ROLLBACK")
        else:
            self._run(f"ROLLBACK TO {name}")
            self._run(f"RELEASE {name}")

    def _run(self, sql: str, params: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StateError(f"state store {self.path}: {exc}") from exc

    @contextmanager
    def _decoding(self) -> Iterator[None]:
        try:
            yield
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            # a row this version cannot decode: say so instead of crashing mid-cycle
            raise StateError(f"state store {self.path}: undecodable row: {exc!r}") from exc

    def _write(self, sql: str, *params: str) -> None:
        with self.transaction():
            self._run(sql, params)

    def _one(self, sql: str, *params: str) -> str | None:
        rows = self._run(sql, params)
        return rows[0][0] if rows else None

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        text = self._one("SELECT data FROM ledgers WHERE item = ?", str(item))
        with self._decoding():
            return None if text is None else decode_ledger(text)

    def save_ledger(self, ledger: Ledger) -> None:
        self._write(
            "INSERT OR REPLACE INTO ledgers VALUES (?, ?)", str(ledger.item), encode_ledger(ledger)
        )

    def session(self, item: WorkItemRef) -> SessionRecord | None:
        text = self._one("SELECT data FROM sessions WHERE item = ?", str(item))
        with self._decoding():
            return None if text is None else decode_session(text)

    def sessions(self) -> list[SessionRecord]:
        rows = self._run("SELECT data FROM sessions")
        with self._decoding():
            return sorted((decode_session(text) for (text,) in rows), key=lambda r: r.item)

    def save_session(self, record: SessionRecord) -> None:
        self._write(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?)",
            str(record.item),
            encode_session(record),
        )

    def forget(self, item: WorkItemRef) -> None:
        with self.transaction():
            self._run("DELETE FROM ledgers WHERE item = ?", (str(item),))
            self._run("DELETE FROM sessions WHERE item = ?", (str(item),))

    def cursor(self, repo: RepoRef) -> str | None:
        return self._one("SELECT cursor FROM cursors WHERE repo = ?", _repo_key(repo))

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None:
        if cursor is None:
            self._write("DELETE FROM cursors WHERE repo = ?", _repo_key(repo))
        else:
            self._write("INSERT OR REPLACE INTO cursors VALUES (?, ?)", _repo_key(repo), cursor)

    def items(self) -> Iterator[WorkItemRef]:
        rows = self._run("SELECT item FROM ledgers UNION SELECT item FROM sessions")
        with self._decoding():
            return iter(sorted(WorkItemRef.parse(text) for (text,) in rows))

    def meta(self) -> Mapping[str, str]:
        return {key: value for key, value in self._run("SELECT key, value FROM meta")}

    def save_meta(self, key: str, value: str) -> None:
        self._write("INSERT OR REPLACE INTO meta VALUES (?, ?)", key, value)


def _repo_key(repo: RepoRef) -> str:
    # every field spelled out: str(repo) drops the default host, which is a display choice
    return f"{repo.host}/{repo.owner}/{repo.name}"
