"""What only the SQLite store does: refuse broken or foreign files, survive other writers."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.sql.sqlite_file import SCHEMA_VERSION
from adapters.sql.state_codec import encode_ledger, encode_session
from adapters.sqlite.store import SqliteStateStore
from domain.errors import StateError
from domain.ledger import Ledger
from domain.model import Comment, PostedRequest, SessionRecord
from domain.refs import WorkItemRef
from domain.spending import TurnCost

ROOT = Path(__file__).resolve().parents[2]


def saved_store(path: Path, items: int = 1) -> None:
    store = SqliteStateStore(path)
    for n in range(1, items + 1):
        item = WorkItemRef.parse(f"github:acme/widgets#{n}")
        store.save_ledger(Ledger(item=item, baseline_at=datetime(2025, 1, 1, tzinfo=UTC)))
    store.close()


def refusal(path: Path) -> str:
    with pytest.raises(StateError) as caught:
        SqliteStateStore(path)
    return str(caught.value)


def test_a_missing_file_is_created_with_its_directories_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.sqlite3"
    SqliteStateStore(path).close()
    db = sqlite3.connect(path)
    assert (db.execute("PRAGMA journal_mode").fetchone(), db.execute("PRAGMA user_version").fetchone()) == (
        ("wal",),
        (SCHEMA_VERSION,),
    )


def test_a_file_that_is_not_a_database_is_refused_naming_it_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    garbage = b"this is not sqlite\x00\xff" * 300
    path.write_bytes(garbage)
    message = refusal(path)
    assert (str(path) in message, path.read_bytes() == garbage) == (True, True)


def test_a_database_with_a_damaged_page_is_refused_naming_it_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    saved_store(path, items=200)
    damaged = bytearray(path.read_bytes())
    # the last page's header: a data page no open-time read touches, so only a check finds it
    last = len(damaged) - 4096
    damaged[last : last + 100] = b"\xa5" * 100
    path.write_bytes(bytes(damaged))
    message = refusal(path)
    assert (str(path) in message, path.read_bytes() == bytes(damaged)) == (True, True)


def test_a_newer_schema_version_is_refused_and_the_file_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    saved_store(path)
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = path.read_bytes()
    message = refusal(path)
    assert (str(path) in message, "newer" in message, path.read_bytes() == before) == (True, True, True)


def test_a_sqlite_database_that_is_not_the_loops_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE photos (id INTEGER)")
    assert "not the-loop's" in refusal(path)


def test_a_path_that_cannot_be_opened_is_refused_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.mkdir()
    assert str(path) in refusal(path)


def test_a_row_this_version_cannot_decode_is_a_state_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    saved_store(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE ledgers SET data = '{\"item\": 5}'")
    store = SqliteStateStore(path)
    with pytest.raises(StateError, match=str(path)):
        store.ledger(WorkItemRef.parse("github:acme/widgets#1"))


def test_a_session_record_saved_before_panes_were_recorded_reads_with_no_pane(tmp_path: Path) -> None:
    path, item = tmp_path / "state.sqlite3", WorkItemRef.parse("github:acme/widgets#1")
    saved = SessionRecord(item, "claude", "sid-1", "/w", pane_id="%3")
    store = SqliteStateStore(path)
    saved = store.save_session(saved)
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET data = json_remove(data, '$.pane_id')")
    assert SqliteStateStore(path).session(item) == replace(saved, pane_id="")


def test_a_tampered_target_in_the_registry_is_never_used(tmp_path: Path) -> None:
    path, item = tmp_path / "state.sqlite3", WorkItemRef.parse("github:acme/widgets#1")
    store = SqliteStateStore(path)
    store.save_session(SessionRecord(item, "claude", "sid-1", "/w"))
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET data = json_set(data, '$.target', 'loop-someone-else')")
    assert SqliteStateStore(path).session(item).target == item.target  # type: ignore[union-attr]


def test_a_record_saved_before_names_were_injective_keeps_its_live_sessions_name(
    tmp_path: Path,
) -> None:
    path, item = tmp_path / "state.sqlite3", WorkItemRef.parse("github:acme/foo.js#1")
    store = SqliteStateStore(path)
    store.save_session(SessionRecord(item, "claude", "sid-1", "/w"))
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET data = json_remove(data, '$.naming')")

    record = SqliteStateStore(path).session(item)

    assert record is not None and record.target.name == "loop-github-acme-foo_js-1"  # as the old rule named it
    assert record.slug == "github-acme-foo.js-1"
    assert item.target.name != "loop-github-acme-foo_js-1"  # a new record gets the injective name


def version_one_file(path: Path, ledger: Ledger, record: SessionRecord) -> None:
    """A state file as the-loop wrote it before rows were versioned (schema version 1)."""
    with sqlite3.connect(path) as db:
        for table in ("meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                      "ledgers (item TEXT PRIMARY KEY, data TEXT NOT NULL)",
                      "sessions (item TEXT PRIMARY KEY, data TEXT NOT NULL)",
                      "cursors (repo TEXT PRIMARY KEY, cursor TEXT NOT NULL)"):  # fmt: skip
            db.execute(f"CREATE TABLE {table}")
        db.execute("INSERT INTO ledgers VALUES (?, ?)", (str(ledger.item), encode_ledger(ledger)))
        db.execute("INSERT INTO sessions VALUES (?, ?)", (str(record.item), encode_session(record)))
        db.execute("PRAGMA user_version = 1")


def test_a_version_one_file_is_migrated_its_rows_read_at_version_one_and_saves_move_them_on(tmp_path: Path) -> None:
    path, item = tmp_path / "state.sqlite3", WorkItemRef.parse("github:acme/widgets#1")
    ledger = Ledger(item=item, baseline_at=datetime(2025, 1, 1, tzinfo=UTC))
    version_one_file(path, ledger, SessionRecord(item, "claude", "sid-1", "/w"))

    store = SqliteStateStore(path)
    read = store.ledger(item)
    saved = store.save_ledger(read)  # type: ignore[arg-type]

    assert (read, saved.version) == (replace(ledger, version=1), 2)
    assert store.session(item) == SessionRecord(item, "claude", "sid-1", "/w", version=1)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (4,)
    store.inbox_add([Comment("5", item, "alice", "kept", datetime(2025, 1, 2, tzinfo=UTC))])
    assert [c.body for c in store.inbox(item)] == ["kept"]  # version 3's inbox, made by the migration
    cost = TurnCost(item, "5", datetime(2025, 1, 3, tzinfo=UTC), "claude", author="alice")
    assert store.record_cost(cost) and store.costs() == [cost]  # version 4's turn costs, made by the migration


def test_a_reopened_store_keeps_its_data_and_schema(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    saved_store(path, items=3)
    assert len(list(SqliteStateStore(path).items())) == 3


def test_a_posted_requests_comment_is_kept_and_a_record_from_before_reads_with_none(tmp_path: Path) -> None:
    path, item = tmp_path / "state.sqlite3", WorkItemRef.parse("github:acme/widgets#1")
    at = datetime(2026, 1, 1, tzinfo=UTC)
    store = SqliteStateStore(path)
    saved = store.save_session(
        SessionRecord(item, "claude", "sid-1", "/w", requests=(PostedRequest("k", 1, at, comment_id="42"),))
    )
    store.close()
    kept = SqliteStateStore(path).session(item)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE sessions SET data = json_remove(data, '$.requests[0].comment_id')")

    assert kept == saved
    assert SqliteStateStore(path).session(item) == replace(saved, requests=(PostedRequest("k", 1, at),))
