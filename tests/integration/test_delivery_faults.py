"""Faults mid-delivery: the real SQLite store meets its fault after the prompt went in —
its disk full, read-only, or its write lock taken by another process — at the paste or at the
harness's confirmation. What cannot be saved is never said: no 🎉, no dispatch.succeeded, nothing
delivered in the store; once the fault is gone the next cycle finds the harness's receipt and
records the delivery, and the harness got the comment once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from adapters.sqlite.store import SqliteStateStore
from app.usecases.delivery.watch import Verdict, Watched
from domain.events import Event
from domain.ledger import Resolution
from domain.model import HarnessSpec, Reaction, SessionRecord
from tests.fakes.tmux import FakePane
from tests.faults_support import SmallDisk, small_disk, write_locked
from tests.service.world import World

Fault = tuple[Callable[[], None], Callable[[], None]]  # strike, heal


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[SmallDisk]:
    with small_disk(tmp_path / "state", tmp_path / "state.img", megabytes=8) as made:
        yield made


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    with ExitStack() as held:
        yield held


def _fault(kind: str, disk: SmallDisk, stack: ExitStack) -> Fault:
    """The fault, struck once (a later paste or confirmation finds it healed)."""
    path = disk.mount / "state.sqlite3"
    if kind == "disk full":
        strike, heal = disk.fill, disk.free
    elif kind == "read-only":
        strike, heal = disk.read_only, disk.writable
    else:
        strike, heal = (lambda: stack.enter_context(write_locked(path))), stack.close  # past the busy timeout
    struck: list[bool] = []

    def once() -> None:
        if not struck:
            struck.append(True)
            strike()

    return once, heal


def _at_the_paste(world: World, strike: Callable[[], None]) -> None:
    def heard(what: str, pane: FakePane, text: str) -> None:
        if what == "paste":  # after the harness's own receipt: it got the prompt
            strike()

    world.tmux.listeners.append(heard)


def _at_the_confirmation(world: World, strike: Callable[[], None]) -> None:
    confirmed = world.watch.wait_confirmed

    def wait_confirmed(record: SessionRecord, harness: HarnessSpec, line: str, **kwargs: Any) -> Watched:
        watched = confirmed(record, harness, line, **kwargs)
        assert watched.verdict is Verdict.YES
        strike()
        return watched

    world.watch.wait_confirmed = wait_confirmed  # type: ignore[method-assign]


@pytest.mark.parametrize("moment", [_at_the_paste, _at_the_confirmation], ids=["at the paste", "at the confirmation"])
@pytest.mark.parametrize("kind", ["disk full", "read-only", "locked by another process"])
def test_faults_a_delivery_whose_save_fails_is_not_said_and_is_recorded_once_after(
    kind: str, moment: Callable[[World, Callable[[], None]], None], disk: SmallDisk, stack: ExitStack
) -> None:
    store = SqliteStateStore(disk.mount / "state.sqlite3", busy_timeout_seconds=0.3)
    world = World(store=store)  # type: ignore[arg-type]
    ref = world.watched()
    comment = world.comment(ref)
    strike, heal = _fault(kind, disk, stack)
    moment(world, strike)

    summary = world.cycle()

    assert summary.items_failed == 1 and world.events.named(Event.POLL_ITEM_FAILED)  # said, as an event
    assert world.ledger(ref).next_pending is not None  # not delivered in the store
    assert [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == comment.id] == []
    assert (comment.id, Reaction.SUCCEEDED) not in world.tracker.reactions
    heal()

    world.cycle()

    resolved = world.ledger(ref).resolved[comment.id]
    assert (resolved.kind, resolved.reason) == (Resolution.DELIVERED, "confirmed:receipt-on-retry")
    assert len(world.session(ref).received) == 1
    assert world.tracker.reactions.count((comment.id, Reaction.SUCCEEDED)) == 1
