"""Faults on the SQLite store itself: its disk full or read-only, its write lock held by
another process. A write that fails is a StateError and writes nothing; the store works again
once the fault is gone (its connection is never left inside a failed transaction)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from adapters.sqlite.store import SqliteStateStore
from domain.errors import StateError
from domain.ledger import Ledger
from domain.model import Comment
from domain.refs import WorkItemRef
from tests.faults_support import SmallDisk, small_disk, write_locked

ITEM = WorkItemRef.parse("github:acme/widgets#1")
AT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "state", tmp_path / "state.img", megabytes=8) as made:
        yield made


def _stored(path: Path) -> tuple[SqliteStateStore, Ledger]:
    store = SqliteStateStore(path, busy_timeout_seconds=0.3)
    return store, store.save_ledger(Ledger(item=ITEM, baseline_at=AT))


def _comments(count: int) -> list[Comment]:
    # a transaction big enough to need new pages: a few fit in what the file holds already
    return [Comment(str(n), ITEM, "alice", "x" * 2000, AT) for n in range(count)]


def test_faults_the_store_opens_and_reads_while_another_process_holds_its_write_lock(tmp_path: Path) -> None:
    """`status` must answer while another process holds the lock: opening a current file takes none."""
    path = tmp_path / "state.sqlite3"
    _stored(path)[0].close()

    with write_locked(path):
        store = SqliteStateStore(path, busy_timeout_seconds=0.3)
        ledger = store.ledger(ITEM)

    assert ledger is not None and ledger.version == 1


def test_faults_a_write_under_another_process_s_lock_past_the_busy_timeout_fails_and_then_works(
    tmp_path: Path,
) -> None:
    store, ledger = _stored(tmp_path / "state.sqlite3")

    with write_locked(tmp_path / "state.sqlite3"), pytest.raises(StateError, match="database is locked"):
        store.save_ledger(replace(ledger, paused=True))

    assert store.ledger(ITEM) == ledger  # nothing written
    assert store.save_ledger(replace(ledger, paused=True)).version == 2  # and the store works again


def test_faults_a_write_on_a_full_disk_fails_writes_nothing_and_the_store_works_once_space_is_back(
    disk: SmallDisk,
) -> None:
    store, ledger = _stored(disk.mount / "state.sqlite3")
    disk.fill()

    # the cause is said, whether the failing write is a page mid-transaction or the commit itself
    with pytest.raises(StateError, match="database or disk is full"), store.transaction():
        store.save_ledger(replace(ledger, paused=True))
        store.inbox_add(_comments(200))
    with pytest.raises(StateError, match="database or disk is full"):
        store.save_ledger(replace(ledger, paused=True))

    assert (store.ledger(ITEM), store.inbox(ITEM)) == (ledger, [])
    disk.free()
    assert store.save_ledger(replace(ledger, paused=True)).version == 2


def test_faults_a_write_on_a_read_only_disk_fails_writes_nothing_and_the_store_works_once_writable(
    disk: SmallDisk,
) -> None:
    store, ledger = _stored(disk.mount / "state.sqlite3")
    disk.read_only()

    with pytest.raises(StateError, match="disk I/O error"):
        store.save_ledger(replace(ledger, paused=True))

    assert store.ledger(ITEM) == ledger
    disk.writable()
    assert store.save_ledger(replace(ledger, paused=True)).version == 2
