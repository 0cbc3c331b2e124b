"""The shared state store: PostgreSQL, every change in one transaction, ledgers and records versioned."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import TupleRow

from adapters.postgres.schema import LOCK_KEY, prepare
from adapters.postgres.server import failure, server_of
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


@dataclass(frozen=True, slots=True)
class _Versioned:
    """A table of versioned rows: what its rows are called in errors, and its statements."""

    what: str
    insert: str  # a first save: only where no row is
    update: str  # a later save: only where the row is still at the version read
    version_of: str


_LEDGERS = _Versioned(
    "ledger",
    "INSERT INTO ledgers VALUES (%s, %s, 1) ON CONFLICT (item) DO NOTHING",
    "UPDATE ledgers SET data = %s, version = version + 1 WHERE item = %s AND version = %s",
    "SELECT version FROM ledgers WHERE item = %s",
)
_SESSIONS = _Versioned(
    "session record",
    "INSERT INTO sessions VALUES (%s, %s, 1) ON CONFLICT (item) DO NOTHING",
    "UPDATE sessions SET data = %s, version = version + 1 WHERE item = %s AND version = %s",
    "SELECT version FROM sessions WHERE item = %s",
)


class PostgresStateStore(StateStore):
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

    def __init__(self, dsn: str, *, connect_timeout_seconds: int = 10) -> None:
        self.server = server_of(dsn)
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

    def _run(self, sql: str, params: tuple[str | int, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._errors():
            return self._ready().execute(sql, params).fetchall()

    def _change(self, sql: str, params: tuple[str | int, ...]) -> int:
        """Run a write; the number of rows it changed."""
        with self._lock, self._errors():
            return self._ready().execute(sql, params).rowcount

    @contextmanager
    def _decoding(self) -> Iterator[None]:
        try:
            yield
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            # a row this version cannot decode: say so instead of crashing mid-cycle
            raise StateError(f"state store {self.server}: undecodable row: {exc!r}") from exc

    def _write(self, sql: str, *params: str) -> None:
        with self.transaction():
            self._change(sql, params)

    def _swap(self, table: _Versioned, item: WorkItemRef, data: str, read: int) -> int:
        """Write the row if it is still at version `read` (absent: 0); its new version."""
        with self.transaction():
            # one statement decides: no other writer can move the row between its check and its write
            if read == 0:
                changed = self._change(table.insert, (str(item), data))
            else:
                changed = self._change(table.update, (data, str(item), read))
            if changed != 1:
                rows = self._run(table.version_of, (str(item),))
                raise StaleWrite(table.what, str(item), read=read, stored=rows[0][0] if rows else 0)
        return read + 1

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        rows = self._run("SELECT data, version FROM ledgers WHERE item = %s", (str(item),))
        with self._decoding():
            return decode_ledger(rows[0][0], version=rows[0][1]) if rows else None

    def save_ledger(self, ledger: Ledger) -> Ledger:
        version = self._swap(_LEDGERS, ledger.item, encode_ledger(ledger), ledger.version)
        return replace(ledger, version=version)

    def session(self, item: WorkItemRef) -> SessionRecord | None:
        rows = self._run("SELECT data, version FROM sessions WHERE item = %s", (str(item),))
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
            if record.version == 0:
                gone = not self._run(_SESSIONS.version_of, (str(record.item),))
            else:
                gone = (
                    self._change(
                        "DELETE FROM sessions WHERE item = %s AND version = %s", (str(record.item), record.version)
                    )
                    == 1
                )
            if not gone:
                rows = self._run(_SESSIONS.version_of, (str(record.item),))
                stored = rows[0][0] if rows else 0
                raise StaleWrite(_SESSIONS.what, str(record.item), read=record.version, stored=stored)

    def forget(self, item: WorkItemRef) -> None:
        with self.transaction():
            self._change("DELETE FROM ledgers WHERE item = %s", (str(item),))
            self._change("DELETE FROM sessions WHERE item = %s", (str(item),))

    def cursor(self, repo: RepoRef) -> str | None:
        rows = self._run("SELECT cursor FROM cursors WHERE repo = %s", (_repo_key(repo),))
        return str(rows[0][0]) if rows else None

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None:
        if cursor is None:
            self._write("DELETE FROM cursors WHERE repo = %s", _repo_key(repo))
        else:
            self._write(
                "INSERT INTO cursors VALUES (%s, %s) ON CONFLICT (repo) DO UPDATE SET cursor = excluded.cursor",
                _repo_key(repo),
                cursor,
            )

    def inbox_add(self, comments: Iterable[Comment]) -> None:
        with self.transaction():
            for comment in comments:
                row = (str(comment.item), comment.id, comment.created_at.isoformat(), encode_comment(comment))
                self._change("INSERT INTO inbox VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING", row)

    def inbox(self, item: WorkItemRef) -> list[Comment]:
        rows = self._run("SELECT data FROM inbox WHERE item = %s ORDER BY created_at, comment", (str(item),))
        with self._decoding():
            return [decode_comment(text) for (text,) in rows]

    def inbox_remove(self, item: WorkItemRef, comment_ids: Iterable[str]) -> None:
        with self.transaction():
            for comment_id in comment_ids:
                self._change("DELETE FROM inbox WHERE item = %s AND comment = %s", (str(item), comment_id))

    def inbox_items(self) -> list[WorkItemRef]:
        rows = self._run("SELECT DISTINCT item FROM inbox")
        with self._decoding():
            return sorted(WorkItemRef.parse(text) for (text,) in rows)

    def inbox_index(self) -> list[InboxEntry]:
        rows = self._run("SELECT item, comment, created_at, octet_length(data) FROM inbox")
        with self._decoding():
            return [InboxEntry(WorkItemRef.parse(i), c, datetime.fromisoformat(t), int(n)) for i, c, t, n in rows]

    def items(self) -> Iterator[WorkItemRef]:
        rows = self._run("SELECT item FROM ledgers UNION SELECT item FROM sessions")
        with self._decoding():
            return iter(sorted(WorkItemRef.parse(text) for (text,) in rows))

    def meta(self) -> Mapping[str, str]:
        return {key: value for key, value in self._run("SELECT key, value FROM meta")}

    def save_meta(self, key: str, value: str) -> None:
        self._write(
            "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value
        )


def _repo_key(repo: RepoRef) -> str:
    # every field spelled out, as the SQLite store keys them
    return f"{repo.host}/{repo.owner}/{repo.name}"
