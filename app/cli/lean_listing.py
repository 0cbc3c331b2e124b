"""The lean wiring of `sessions list` (issue 19 item 9): the same use case as the full path
(`SessionsListing.listing`) built from the settings snapshot with the real adapters the container
would give it on SQLite (the tmux adapter on the configured socket, the file receipts, the store read
through a read-only connection, the system clock), without pydantic, dependency-injector or the
container. The only module of `app` besides `app.container` that imports these adapters (the
import-linter contract names it and them).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from adapters.clock import SystemClock
from adapters.receipts.files import FileReceipts
from adapters.sqlite.store import SqliteStateStore
from adapters.tmux.adapter import ShTmux
from app.config.snapshot import Snapshot
from app.usecases.session_listing import SessionsListing, SessionView
from app.usecases.watch import HarnessWatch
from domain.model import HarnessSpec
from domain.receipts import ReceiptMode


def listing(found: Snapshot, db: sqlite3.Connection, path: Path, status: str | None = None) -> list[SessionView]:
    """Every session, looked at as the full path's `SessionsAdmin.listing` looks at it; `db` is the
    store opened read-only; `status` as `--status`. Raises whatever a part raises: the caller takes
    the full path then."""
    tmux = ShTmux(socket_name=found.tmux_socket, command_timeout=found.tmux_timeout)
    clock = SystemClock()
    receipts = FileReceipts(found.state_root_path / "receipts", ask_wait_seconds=found.ask_wait_seconds)
    harnesses = {
        # what the listing reads of a harness: its receipt mode and ready seconds (never its command)
        name: HarnessSpec(name=name, binary="", receipts=ReceiptMode(mode), ready_seconds=ready)
        for name, (mode, ready) in found.harnesses.items()
    }
    sessions = SessionsListing(
        tmux=tmux,
        store=SqliteStateStore.reading(db, path),
        watch=HarnessWatch(tmux=tmux, receipts=receipts, clock=clock),
        harnesses=harnesses,
        clock=clock,
    )
    return sessions.listing(status)
