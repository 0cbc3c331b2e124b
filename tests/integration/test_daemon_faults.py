"""Fault: the state database locked by another process (holding SQLite's write lock,
BEGIN IMMEDIATE, longer than the busy timeout) under the daemon — the real SQLite store, the rest
over fakes. The cycle fails cleanly, counts nothing, says so, and the next one delivers once."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from adapters.sqlite.store import SqliteStateStore
from app.usecases.cycle.daemon import Daemon
from domain.events import Event
from domain.ledger import Resolution
from domain.model import Reaction
from tests.faults_support import write_locked
from tests.service.test_daemon import FakeLock
from tests.service.world import World


def test_faults_a_state_database_locked_by_another_process_fails_the_cycle_cleanly_and_it_is_retried(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.sqlite3"
    world = World(store=SqliteStateStore(path, busy_timeout_seconds=0.3))  # type: ignore[arg-type]
    ref = world.watched()
    comment = world.comment(ref)
    lock, reports, held = FakeLock(), [], ExitStack()
    held.enter_context(write_locked(path))
    daemon: Daemon

    def wait(seconds: float) -> None:
        if world.events.names().count(Event.POLLER_CYCLE_FAILED) == 2:
            held.close()  # the other process lets go
        if world.events.names().count(Event.POLL_CYCLE) == 4:  # watched() ran one
            daemon.stop()

    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=lock,
        interval_seconds=60,
        version="1.0.0",
        wait=wait,
        report=reports.append,
    )
    with held:
        daemon.run()

    locked = [e for e in world.events.named(Event.POLL_SOURCE_FAILED) if "database is locked" in e["cause"]]
    assert len(locked) == 2 and len(world.events.named(Event.POLLER_CYCLE_FAILED)) == 2
    assert world.events.names().index(Event.POLL_COMMENT_FORWARDED) > world.events.names().index(
        Event.POLLER_CYCLE_FAILED
    )
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert len(world.session(ref).received) == 1
    assert world.tracker.reactions.count((comment.id, Reaction.SUCCEEDED)) == 1
    assert lock.holder is None and world.events.names()[-1] == Event.POLLER_STOPPED
