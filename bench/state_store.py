"""What the state costs: a ledger commit (FULL vs NORMAL sync), a ledger+registry transaction on
SQLite and on PostgreSQL, an open, an event line.

Run: .venv/bin/python -m bench.state_store [ITEMS]. Prints per-operation times and ratios; the
times depend on the disk, the ratios less so. The PostgreSQL figures come from a private server
started here (Debian's binaries, fsync on, as a real one), reached over its unix socket and over TCP.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from adapters.eventlog.writer import JsonlEventLog
from adapters.postgres.store import PostgresStateStore
from adapters.sqlite.store import SqliteStateStore
from domain.events import Event
from domain.ledger import Ledger, Pending, Resolution, Resolved
from domain.model import Comment, SessionRecord
from domain.ports import StateStore
from domain.refs import WorkItemRef
from tests.postgres_support import APP_USER, start_cluster

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def ledger(number: int) -> Ledger:
    item = WorkItemRef.parse(f"github:acme/widgets#{number}")
    resolved = {str(n): Resolved(Resolution.DELIVERED, T0 + timedelta(seconds=n)) for n in range(40)}
    pending = tuple(Pending(Comment(str(100 + n), item, "alice", "x" * 500, T0)) for n in range(3))
    return Ledger(item=item, baseline_at=T0, resolved=resolved, pending=pending)


def record(number: int) -> SessionRecord:
    item = WorkItemRef.parse(f"github:acme/widgets#{number}")
    return SessionRecord(item, "claude", f"sid-{number}", "/work", pane_id="%1", created_at=T0)


def per_commit(store: StateStore, items: int) -> float:
    start = time.perf_counter()
    for number in range(1, items + 1):
        with store.transaction():
            store.save_ledger(ledger(number))
            store.save_meta("heartbeat", str(number))
    return (time.perf_counter() - start) / items


def per_delivery(store: StateStore, items: int) -> float:
    """What recording one delivery costs: the item worker's ledger+registry transaction, each row
    saved over the version it was read at."""
    with store.transaction():
        saved = [(store.save_ledger(ledger(n)), store.save_session(record(n))) for n in range(1, items + 1)]
    start = time.perf_counter()
    for old_ledger, old_record in saved:
        with store.transaction():
            store.save_ledger(old_ledger)
            store.save_session(old_record)
    return (time.perf_counter() - start) / items


def per_event(log: JsonlEventLog) -> float:
    start = time.perf_counter()
    for n in range(1000):
        log.emit(Event.POLL_CYCLE, n=n, items=12, delivered=1)
    return (time.perf_counter() - start) / 1000


def postgres_per_delivery(items: int) -> tuple[float, float]:
    """(unix socket, TCP) seconds per ledger+registry transaction on a durable private server."""
    cluster = start_cluster(durable=True)
    try:
        figures = []
        for dsn in (cluster.dsn(cluster.new_database()), cluster.tcp_dsn(cluster.new_database())):
            store = PostgresStateStore(dsn)
            figures.append(per_delivery(store, items))
            store.close()
        return figures[0], figures[1]
    finally:
        cluster.stop()


def main(items: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        full = SqliteStateStore(Path(root) / "full.sqlite3")
        full_s = per_commit(full, items)
        full.close()
        normal = SqliteStateStore(Path(root) / "normal.sqlite3")
        normal._db.execute("PRAGMA synchronous = NORMAL")  # the alternative we did not choose
        normal_s = per_commit(normal, items)
        normal.close()
        start = time.perf_counter()
        SqliteStateStore(Path(root) / "full.sqlite3").close()
        open_s = time.perf_counter() - start
        size = (Path(root) / "full.sqlite3").stat().st_size
        emit_s = per_event(JsonlEventLog(Path(root) / "events.jsonl", clock=lambda: T0))
        delivery = SqliteStateStore(Path(root) / "delivery.sqlite3")
        sqlite_delivery = per_delivery(delivery, items)
        delivery.close()
    socket_s, tcp_s = postgres_per_delivery(items)
    print(f"items: {items}, file: {size / 1024:.0f} KiB")
    print(f"ledger+meta transaction, synchronous=FULL:   {full_s * 1000:.2f} ms")
    print(f"ledger+meta transaction, synchronous=NORMAL: {normal_s * 1000:.2f} ms")
    print(f"FULL/NORMAL ratio: {full_s / normal_s:.1f}x")
    print(f"open with quick_check: {open_s * 1000:.1f} ms ({open_s / full_s:.0f}x one commit)")
    print(f"event line (open O_APPEND, write, close): {emit_s * 1e6:.0f} µs")
    print(f"ledger+registry transaction, SQLite FULL:         {sqlite_delivery * 1000:.2f} ms")
    print(
        f"ledger+registry transaction, PostgreSQL (socket): {socket_s * 1000:.2f} ms"
        f" ({socket_s / sqlite_delivery:.1f}x SQLite)"
    )
    print(
        f"ledger+registry transaction, PostgreSQL (TCP as {APP_USER}): {tcp_s * 1000:.2f} ms"
        f" ({tcp_s / sqlite_delivery:.1f}x SQLite)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
