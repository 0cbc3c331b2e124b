"""The embedded state store: one SQLite file in WAL mode, every change in one transaction."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from adapters.support.sqlite_file import open_checked
from adapters.support.state_codec import (
    decode_comment,
    decode_ledger,
    decode_session,
    encode_comment,
    encode_ledger,
    encode_session,
)
from domain.errors import StaleWrite, StateError
from domain.ledger import Ledger
from domain.model import Comment, SessionRecord
from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import InboxEntry

FILE_NAME = "state.sqlite3"


@dataclass(frozen=True, slots=True)
class _Versioned:
    """A table of versioned rows: what its rows are called in errors, and its two statements."""

    what: str
    version_of: str
    put: str


_LEDGERS = _Versioned(
    "ledger", "SELECT version FROM ledgers WHERE item = ?", "INSERT OR REPLACE INTO ledgers VALUES (?, ?, ?)"
)
_SESSIONS = _Versioned(
    "session record", "SELECT version FROM sessions WHERE item = ?", "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?)"
)


class SqliteStateStore(StateStore):
    """The `StateStore` port over `<state.root>/state.sqlite3`.

    One connection, guarded by a re-entrant lock held for a whole transaction, so threads of one
    process never interleave inside each other's transactions; other processes are kept apart by
    SQLite's own locking (WAL, `BEGIN IMMEDIATE`, a busy timeout). A nested `transaction()` is a
    savepoint: it joins the outer transaction, and an exception inside it undoes only its writes.
    Ledgers and records keep their version in a column of their own, beside the JSON.
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
        if not self._db.in_transaction:
            return  # SQLite rolled it back itself (a full disk, an I/O error): a ROLLBACK would only hide why
        if not self._depth:
            self._run("ROLLBACK")
        else:
            self._run(f"ROLLBACK TO {name}")
            self._run(f"RELEASE {name}")

    def _run(self, sql: str, params: tuple[str | int, ...] = ()) -> list[tuple[Any, ...]]:
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

    def _one(self, sql: str, *params: str) -> Any:
        rows = self._run(sql, params)
        return rows[0][0] if rows else None

    def _swap(self, table: _Versioned, item: WorkItemRef, data: str, read: int) -> int:
        """Write the row if it is still at version `read` (absent: 0); its new version."""
        with self.transaction():
            # inside BEGIN IMMEDIATE: no other process can move the row between this read and the write
            stored = self._one(table.version_of, str(item)) or 0
            if stored != read:
                raise StaleWrite(table.what, str(item), read=read, stored=stored)
            self._run(table.put, (str(item), data, read + 1))
        return read + 1

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        rows = self._run("SELECT data, version FROM ledgers WHERE item = ?", (str(item),))
        with self._decoding():
            return decode_ledger(rows[0][0], version=rows[0][1]) if rows else None

    def save_ledger(self, ledger: Ledger) -> Ledger:
        version = self._swap(_LEDGERS, ledger.item, encode_ledger(ledger), ledger.version)
        return replace(ledger, version=version)

    def session(self, item: WorkItemRef) -> SessionRecord | None:
        rows = self._run("SELECT data, version FROM sessions WHERE item = ?", (str(item),))
        with self._decoding():
            return decode_session(rows[0][0], version=rows[0][1]) if rows else None

    def sessions(self) -> list[SessionRecord]:
        rows = self._run("SELECT data, version FROM sessions")
        with self._decoding():
            return sorted((decode_session(text, version=v) for text, v in rows), key=lambda r: r.item)

    def save_session(self, record: SessionRecord) -> SessionRecord:
        version = self._swap(_SESSIONS, record.item, encode_session(record), record.version)
        return replace(record, version=version)

    def drop_session(self, record: SessionRecord) -> None:
        with self.transaction():
            stored = self._one(_SESSIONS.version_of, str(record.item)) or 0
            if stored != record.version:
                raise StaleWrite(_SESSIONS.what, str(record.item), read=record.version, stored=stored)
            self._run("DELETE FROM sessions WHERE item = ?", (str(record.item),))

    def forget(self, item: WorkItemRef) -> None:
        with self.transaction():
            self._run("DELETE FROM ledgers WHERE item = ?", (str(item),))
            self._run("DELETE FROM sessions WHERE item = ?", (str(item),))

    def cursor(self, repo: RepoRef) -> str | None:
        cursor: str | None = self._one("SELECT cursor FROM cursors WHERE repo = ?", _repo_key(repo))
        return cursor

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None:
        if cursor is None:
            self._write("DELETE FROM cursors WHERE repo = ?", _repo_key(repo))
        else:
            self._write("INSERT OR REPLACE INTO cursors VALUES (?, ?)", _repo_key(repo), cursor)

    def inbox_add(self, comments: Iterable[Comment]) -> None:
        with self.transaction():
            for comment in comments:
                row = (str(comment.item), comment.id, comment.created_at.isoformat(), encode_comment(comment))
                self._run("INSERT OR IGNORE INTO inbox VALUES (?, ?, ?, ?)", row)

    def inbox(self, item: WorkItemRef) -> list[Comment]:
        rows = self._run("SELECT data FROM inbox WHERE item = ? ORDER BY created_at, comment", (str(item),))
        with self._decoding():
            return [decode_comment(text) for (text,) in rows]

    def inbox_remove(self, item: WorkItemRef, comment_ids: Iterable[str]) -> None:
        with self.transaction():
            for comment_id in comment_ids:
                self._run("DELETE FROM inbox WHERE item = ? AND comment = ?", (str(item), comment_id))

    def inbox_items(self) -> list[WorkItemRef]:
        rows = self._run("SELECT DISTINCT item FROM inbox")
        with self._decoding():
            return sorted(WorkItemRef.parse(text) for (text,) in rows)

    def inbox_index(self) -> list[InboxEntry]:
        rows = self._run("SELECT item, comment, created_at, LENGTH(CAST(data AS BLOB)) FROM inbox")
        with self._decoding():
            return [InboxEntry(WorkItemRef.parse(i), c, datetime.fromisoformat(t), int(n)) for i, c, t, n in rows]

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
