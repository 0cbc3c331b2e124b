"""What the embedded state costs: a ledger commit (FULL vs NORMAL sync), an open, an event line.

Run: .venv/bin/python -m bench.state_store [ITEMS]. Prints per-operation times and ratios; the
times depend on the disk, the ratios less so.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from adapters.eventlog.writer import JsonlEventLog
from adapters.sqlite.store import SqliteStateStore
from domain.events import Event
from domain.ledger import Ledger, Pending, Resolution, Resolved
from domain.model import Comment
from domain.refs import WorkItemRef

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def ledger(number: int) -> Ledger:
    item = WorkItemRef.parse(f"github:acme/widgets#{number}")
    resolved = {str(n): Resolved(Resolution.DELIVERED, T0 + timedelta(seconds=n)) for n in range(40)}
    pending = tuple(Pending(Comment(str(100 + n), item, "alice", "x" * 500, T0)) for n in range(3))
    return Ledger(item=item, baseline_at=T0, resolved=resolved, pending=pending)


def per_commit(store: SqliteStateStore, items: int) -> float:
    start = time.perf_counter()
    for number in range(1, items + 1):
        with store.transaction():
            store.save_ledger(ledger(number))
            store.save_meta("heartbeat", str(number))
    return (time.perf_counter() - start) / items


def per_event(log: JsonlEventLog) -> float:
    start = time.perf_counter()
    for n in range(1000):
        log.emit(Event.POLL_CYCLE, n=n, items=12, delivered=1)
    return (time.perf_counter() - start) / 1000


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
    print(f"items: {items}, file: {size / 1024:.0f} KiB")
    print(f"ledger+meta transaction, synchronous=FULL:   {full_s * 1000:.2f} ms")
    print(f"ledger+meta transaction, synchronous=NORMAL: {normal_s * 1000:.2f} ms")
    print(f"FULL/NORMAL ratio: {full_s / normal_s:.1f}x")
    print(f"open with quick_check: {open_s * 1000:.1f} ms ({open_s / full_s:.0f}x one commit)")
    print(f"event line (open O_APPEND, write, close): {emit_s * 1e6:.0f} µs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
