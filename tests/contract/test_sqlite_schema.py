"""Schema versions of a the-loop SQLite file: an older file is migrated step by step, or not at all."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from adapters.sql.schema import Schema
from adapters.sql.sqlite_file import open_checked
from domain.errors import StateError

V1 = Schema(label="toy", version=1, tables=("CREATE TABLE t (k TEXT PRIMARY KEY)",))
V3 = Schema(
    label="toy",
    version=3,
    tables=("CREATE TABLE t (k TEXT PRIMARY KEY, a INTEGER NOT NULL DEFAULT 1, b TEXT)",),
    migrations=(("ALTER TABLE t ADD COLUMN a INTEGER NOT NULL DEFAULT 1",), ("ALTER TABLE t ADD COLUMN b TEXT",)),
)


def version_one_file(path: Path) -> None:
    db = open_checked(path, busy_timeout_seconds=1, schema=V1)
    db.execute("INSERT INTO t VALUES ('kept')")
    db.close()


def test_a_file_of_an_older_version_is_migrated_through_every_step_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "toy.sqlite3"
    version_one_file(path)

    db = open_checked(path, busy_timeout_seconds=1, schema=V3)

    assert db.execute("PRAGMA user_version").fetchone() == (3,)
    assert db.execute("SELECT k, a, b FROM t").fetchall() == [("kept", 1, None)]


def test_a_new_file_is_created_at_the_latest_version_without_migrating(tmp_path: Path) -> None:
    db = open_checked(tmp_path / "toy.sqlite3", busy_timeout_seconds=1, schema=V3)

    assert db.execute("PRAGMA user_version").fetchone() == (3,)
    assert [row[1] for row in db.execute("PRAGMA table_info(t)")] == ["k", "a", "b"]


def test_a_migration_that_fails_leaves_the_file_at_its_version_with_nothing_half_done(tmp_path: Path) -> None:
    path = tmp_path / "toy.sqlite3"
    version_one_file(path)
    broken = Schema(
        label="toy",
        version=3,
        tables=V3.tables,
        migrations=(V3.migrations[0], ("ALTER TABLE missing ADD COLUMN b TEXT",)),
    )

    with pytest.raises(StateError, match=str(path)):
        open_checked(path, busy_timeout_seconds=1, schema=broken)

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (1,)
    assert [row[1] for row in db.execute("PRAGMA table_info(t)")] == ["k"]


def test_a_schema_whose_migrations_do_not_reach_its_version_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="needs 1 migrations"):
        Schema(label="toy", version=2, tables=())
