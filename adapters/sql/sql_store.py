"""The state store's logic once, in the SQL SQLite and PostgreSQL both speak; each backend gives its
dialect (placeholders, how bytes are counted), its connection and its transactions."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from adapters.sql.spending_rows import SpendingRows
from adapters.sql.state_codec import (
    decode_comment,
    decode_ledger,
    decode_session,
    decoding,
    encode_comment,
    encode_ledger,
    encode_session,
)
from domain.errors import StaleWrite
from domain.ledger import Ledger
from domain.model import Comment, SessionRecord
from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import InboxEntry

Params = tuple[str | int | None, ...]


@dataclass(frozen=True, slots=True)
class Dialect:
    """What the two backends spell differently. Statements are written with `?` placeholders; the
    upsert (`ON CONFLICT ... DO UPDATE SET ... = excluded...`) is the same in both (SQLite ≥ 3.24)."""

    placeholder: str  # `?` (sqlite3) or `%s` (psycopg)
    inbox_index: str  # counts the bytes of a TEXT column: SQLite before 3.43 has no octet_length
    has_label: str  # a turn's labels (`\n`-joined, one around them too) hold the one given

    def sql(self, statement: str) -> str:
        return statement if self.placeholder == "?" else statement.replace("?", self.placeholder)


SQLITE = Dialect("?", "SELECT item, comment, created_at, LENGTH(CAST(data AS BLOB)) FROM inbox", "instr(labels, ?) > 0")
POSTGRES = Dialect("%s", "SELECT item, comment, created_at, octet_length(data) FROM inbox", "strpos(labels, ?) > 0")


@dataclass(frozen=True, slots=True)
class _Versioned:
    """A table of versioned rows: what its rows are called in errors, and its statements."""

    what: str
    read: str
    version_of: str
    insert: str  # a first save: only where no row is
    update: str  # a later save: only where the row is still at the version read


_LEDGERS = _Versioned(
    "ledger",
    "SELECT data, version FROM ledgers WHERE item = ?",
    "SELECT version FROM ledgers WHERE item = ?",
    "INSERT INTO ledgers VALUES (?, ?, 1) ON CONFLICT (item) DO NOTHING",
    "UPDATE ledgers SET data = ?, version = version + 1 WHERE item = ? AND version = ?",
)
_SESSIONS = _Versioned(
    "session record",
    "SELECT data, version FROM sessions WHERE item = ?",
    "SELECT version FROM sessions WHERE item = ?",
    "INSERT INTO sessions VALUES (?, ?, 1) ON CONFLICT (item) DO NOTHING",
    "UPDATE sessions SET data = ?, version = version + 1 WHERE item = ? AND version = ?",
)


class SqlStateStore(SpendingRows, StateStore):
    """The `StateStore` port over the tables both backends create alike. A subclass opens the
    connection, names the store in errors (`where`), and supplies `transaction()` (its outermost one
    keeps other processes and hosts apart; a nested one is a savepoint) and `_execute`."""

    dialect: Dialect
    where: str

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]: ...

    @abstractmethod
    def _execute(self, sql: str, params: Params) -> tuple[list[tuple[Any, ...]], int]:
        """Run one statement; its rows and how many rows it changed. Driver errors as `StateError`."""

    def _run(self, sql: str, *params: str | int | None) -> list[tuple[Any, ...]]:
        return self._execute(self.dialect.sql(sql), params)[0]

    def _change(self, sql: str, *params: str | int | None) -> int:
        return self._execute(self.dialect.sql(sql), params)[1]

    def _write(self, sql: str, *params: str) -> None:
        with self.transaction():
            self._change(sql, *params)

    def _decoding(self) -> AbstractContextManager[None]:
        return decoding(f"state store {self.where}")

    def _stored_version(self, table: _Versioned, item: WorkItemRef) -> int:
        rows = self._run(table.version_of, str(item))
        return int(rows[0][0]) if rows else 0

    def _swap(self, table: _Versioned, item: WorkItemRef, data: str, read: int) -> int:
        """Write the row if it is still at version `read` (absent: 0); its new version."""
        with self.transaction():
            # one statement decides: no other writer can move the row between its check and its write
            if read == 0:
                changed = self._change(table.insert, str(item), data)
            else:
                changed = self._change(table.update, data, str(item), read)
            if changed != 1:
                raise StaleWrite(table.what, str(item), read=read, stored=self._stored_version(table, item))
        return read + 1

    def _row(self, table: _Versioned, item: WorkItemRef) -> tuple[str, int] | None:
        rows = self._run(table.read, str(item))
        return (str(rows[0][0]), int(rows[0][1])) if rows else None

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        row = self._row(_LEDGERS, item)
        with self._decoding():
            return decode_ledger(row[0], version=row[1]) if row else None

    def save_ledger(self, ledger: Ledger) -> Ledger:
        version = self._swap(_LEDGERS, ledger.item, encode_ledger(ledger), ledger.version)
        return replace(ledger, version=version)

    def session(self, item: WorkItemRef) -> SessionRecord | None:
        row = self._row(_SESSIONS, item)
        with self._decoding():
            return decode_session(row[0], version=row[1]) if row else None

    def sessions(self) -> list[SessionRecord]:
        rows = self._run("SELECT data, version FROM sessions")
        with self._decoding():
            return sorted((decode_session(text, version=v) for text, v in rows), key=lambda r: r.item)

    def save_session(self, record: SessionRecord) -> SessionRecord:
        version = self._swap(_SESSIONS, record.item, encode_session(record), record.version)
        return replace(record, version=version)

    def drop_session(self, record: SessionRecord) -> None:
        item = str(record.item)
        with self.transaction():
            if record.version == 0:
                gone = self._stored_version(_SESSIONS, record.item) == 0
            else:
                gone = self._change("DELETE FROM sessions WHERE item = ? AND version = ?", item, record.version) == 1
            if not gone:
                stored = self._stored_version(_SESSIONS, record.item)
                raise StaleWrite(_SESSIONS.what, item, read=record.version, stored=stored)

    def forget(self, item: WorkItemRef) -> None:
        with self.transaction():
            self._change("DELETE FROM ledgers WHERE item = ?", str(item))
            self._change("DELETE FROM sessions WHERE item = ?", str(item))

    def cursor(self, repo: RepoRef) -> str | None:
        rows = self._run("SELECT cursor FROM cursors WHERE repo = ?", _repo_key(repo))
        return str(rows[0][0]) if rows else None

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None:
        if cursor is None:
            self._write("DELETE FROM cursors WHERE repo = ?", _repo_key(repo))
        else:
            self._write(
                "INSERT INTO cursors VALUES (?, ?) ON CONFLICT (repo) DO UPDATE SET cursor = excluded.cursor",
                _repo_key(repo),
                cursor,
            )

    def inbox_add(self, comments: Iterable[Comment]) -> None:
        with self.transaction():
            for comment in comments:
                row = (str(comment.item), comment.id, comment.created_at.isoformat(), encode_comment(comment))
                self._change("INSERT INTO inbox VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", *row)

    def inbox(self, item: WorkItemRef) -> list[Comment]:
        rows = self._run("SELECT data FROM inbox WHERE item = ? ORDER BY created_at, comment", str(item))
        with self._decoding():
            return [decode_comment(text) for (text,) in rows]

    def inbox_remove(self, item: WorkItemRef, comment_ids: Iterable[str]) -> None:
        with self.transaction():
            for comment_id in comment_ids:
                self._change("DELETE FROM inbox WHERE item = ? AND comment = ?", str(item), comment_id)

    def inbox_items(self) -> list[WorkItemRef]:
        rows = self._run("SELECT DISTINCT item FROM inbox")
        with self._decoding():
            return sorted(WorkItemRef.parse(text) for (text,) in rows)

    def inbox_index(self) -> list[InboxEntry]:
        rows = self._run(self.dialect.inbox_index)
        with self._decoding():
            return [InboxEntry(WorkItemRef.parse(i), c, datetime.fromisoformat(t), int(n)) for i, c, t, n in rows]

    def items(self) -> Iterator[WorkItemRef]:
        rows = self._run("SELECT item FROM ledgers UNION SELECT item FROM sessions")
        with self._decoding():
            return iter(sorted(WorkItemRef.parse(text) for (text,) in rows))

    def meta(self) -> Mapping[str, str]:
        return {key: value for key, value in self._run("SELECT key, value FROM meta")}

    def save_meta(self, key: str, value: str) -> None:
        self._write("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value)


def _repo_key(repo: RepoRef) -> str:
    # every field spelled out: str(repo) drops the default host, which is a display choice
    return f"{repo.host}/{repo.owner}/{repo.name}"
