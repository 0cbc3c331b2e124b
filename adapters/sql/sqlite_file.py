"""Opening a the-loop SQLite file: refuse what is not ours or is broken, create what is missing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from adapters.files.private import create_private
from adapters.sql.schema import Schema
from domain.errors import StateError

_INBOX = (
    "CREATE TABLE IF NOT EXISTS inbox (item TEXT NOT NULL, comment TEXT NOT NULL, created_at TEXT NOT NULL,"
    " data TEXT NOT NULL, PRIMARY KEY (item, comment))"
)
# one row a turn the-loop started and saw end, with what it cost; and the notices budgets gave, once each
_SPENDING = (
    "CREATE TABLE IF NOT EXISTS turn_costs (item TEXT NOT NULL, comment TEXT NOT NULL, ended_at TEXT NOT NULL,"
    " repo TEXT NOT NULL, harness TEXT NOT NULL, author TEXT NOT NULL, labels TEXT NOT NULL, model TEXT NOT NULL,"
    " known INTEGER NOT NULL, tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL,"
    " cache_write INTEGER NOT NULL, cache_read INTEGER NOT NULL, micro_dollars INTEGER,"
    " PRIMARY KEY (item, comment))",
    "CREATE INDEX IF NOT EXISTS turn_costs_by_time ON turn_costs (ended_at)",
    "CREATE TABLE IF NOT EXISTS budget_marks (mark TEXT PRIMARY KEY, at TEXT NOT NULL)",
)
STATE_SCHEMA = Schema(
    label="state store",
    version=4,
    tables=(
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS ledgers (item TEXT PRIMARY KEY, data TEXT NOT NULL,"
        " version INTEGER NOT NULL DEFAULT 1)",
        "CREATE TABLE IF NOT EXISTS sessions (item TEXT PRIMARY KEY, data TEXT NOT NULL,"
        " version INTEGER NOT NULL DEFAULT 1)",
        "CREATE TABLE IF NOT EXISTS cursors (repo TEXT PRIMARY KEY, cursor TEXT NOT NULL)",
        _INBOX,
        *_SPENDING,
    ),
    migrations=(
        # 1 -> 2: versioned rows for compare-and-set saves; a row stored before is at version 1
        (
            "ALTER TABLE ledgers ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
            "ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
        ),
        # 2 -> 3: comments kept for their items until worked (a repository's read, a webhook's)
        (_INBOX,),
        # 3 -> 4: what each turn cost, and the budgets' notices
        _SPENDING,
    ),
)
SCHEMA_VERSION = STATE_SCHEMA.version


def open_checked(path: Path, *, busy_timeout_seconds: float, schema: Schema = STATE_SCHEMA) -> sqlite3.Connection:
    """A connection to a verified the-loop database at `path`, created if the file is missing.

    Raises `StateError` naming the file when it cannot be opened, is not a database, is
    corrupt, or carries a schema this version does not know. Nothing is written to a file
    that fails these checks.
    """
    try:
        # created 0600 before SQLite sees it: its -wal and -shm files take the database's mode
        create_private(path)
        # autocommit: the store issues BEGIN/COMMIT itself
        db = sqlite3.connect(path, timeout=busy_timeout_seconds, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise StateError(f"{schema.label} {path}: cannot open: {exc}") from exc
    try:
        _verify(db, f"{schema.label} {path}", schema.version)
        _prepare(db, schema)
    except sqlite3.Error as exc:
        db.close()
        raise StateError(f"{schema.label} {path}: {exc}") from exc
    except StateError:
        db.close()
        raise
    return db


def _verify(db: sqlite3.Connection, name: str, known: int) -> None:
    # reading the header is what rejects a file that is not a database at all
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > known:
        raise StateError(
            f"{name}: schema version {version} is newer than this the-loop "
            f"understands ({known}); upgrade the-loop or point state.root elsewhere"
        )
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if version == 0 and tables:
        raise StateError(
            f"{name}: a SQLite database that is not the-loop's (tables {sorted(tables)}, no schema version)"
        )
    # a whole-file read once per open: a damaged page is reported now, not mid-cycle
    problems = [row[0] for row in db.execute("PRAGMA quick_check")]
    if problems != ["ok"]:
        raise StateError(f"{name}: database is corrupt: {'; '.join(problems[:3])}")


WAL_KEEP_BYTES = 4 * 1024 * 1024


def _prepare(db: sqlite3.Connection, schema: Schema) -> None:
    db.execute("PRAGMA journal_mode = WAL")
    # FULL, not NORMAL: a committed ledger entry records a paste that already happened; under
    # NORMAL a power cut may roll that commit back and the comment would be delivered twice.
    # The price is one fsync per transaction: a handful per poll cycle.
    db.execute("PRAGMA synchronous = FULL")
    # the WAL is cut back to this after each checkpoint, not left at its largest since the start
    db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
    if db.execute("PRAGMA user_version").fetchone()[0] == schema.version:
        return  # current: nothing to create or migrate, so no write lock to wait for (`status` while one is held)
    db.execute("BEGIN IMMEDIATE")
    try:
        # re-read inside the write lock: another process may have created or migrated it meanwhile
        found = db.execute("PRAGMA user_version").fetchone()[0]
        steps = schema.tables if found == 0 else tuple(s for step in schema.migrations[found - 1 :] for s in step)
        for statement in steps:
            db.execute(statement)
        if found != schema.version:
            db.execute(f"PRAGMA user_version = {schema.version}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
