"""An agent's turn that ends is acted on as soon as its receipt is written: the daemon watches the
receipts beside the cycle, as it does for what the agents ask — while it pauses and while a cycle
reads GitHub; no GitHub read but the reaction, and the cycle that follows does not do it again."""

from __future__ import annotations

import threading
from dataclasses import replace

from app.usecases.cycle.daemon import Daemon
from domain.events import Event
from domain.model import Comment, Reaction, WorkItem
from domain.receipts import ReceiptKind
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.test_daemon import FakeLock, wait_until
from tests.service.world import World


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def _daemon(world: World) -> Daemon:
    return Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=FakeLock(),
        interval_seconds=3600,
        version="1.0.0",
        turns=world.usecases.turn_ends.sweep,
        turn_scan_seconds=0.05,
    )


def _delivered(world: World) -> tuple[WorkItemRef, str]:
    """An item whose session's first turn ended, and a comment delivered to it: its turn is open.
    The item and the comment's id."""
    ref = world.watched()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)  # the start's turn
    comment = world.comment(ref, "please add a test")
    world.cycle()
    return ref, comment.id


def _turn_ends(world: World, ref: WorkItemRef, daemon: Daemon) -> int:
    """The daemon runs its first cycle and pauses; the agent's turn ends meanwhile. The tracker's
    request count when it ended."""
    cycles = world.events.names().count(Event.POLL_CYCLE)
    runner = threading.Thread(target=daemon.run)
    runner.start()
    try:
        wait_until(lambda: world.events.names().count(Event.POLL_CYCLE) > cycles)
        requests = world.tracker.requests
        _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
        wait_until(lambda: any(e["comment_id"] for e in world.events.named(Event.SESSION_TURN_FINISHED)))
    finally:
        daemon.stop()
        runner.join(timeout=10)
    return requests


def test_a_turn_that_ends_between_cycles_gets_its_reaction_without_a_cycle_or_a_read() -> None:
    world = World()
    ref, comment = _delivered(world)
    cycles = world.events.names().count(Event.POLL_CYCLE)

    requests = _turn_ends(world, ref, _daemon(world))

    assert (comment, Reaction.TURN_ENDED) in world.tracker.reactions
    assert world.events.names().count(Event.POLL_CYCLE) == cycles + 1  # the daemon's first, before the turn ended
    assert world.tracker.requests == requests + 1  # the reaction: the only call
    assert world.ledger(ref).turns == ()


def test_the_cycle_after_a_turn_ended_between_cycles_does_not_say_it_again() -> None:
    world = World()
    ref, comment = _delivered(world)
    _turn_ends(world, ref, _daemon(world))

    world.cycle()
    world.cycle()

    assert world.tracker.reactions.count((comment, Reaction.TURN_ENDED)) == 1
    assert [e["comment_id"] for e in world.events.named(Event.SESSION_TURN_FINISHED)] == [None, comment]  # the start's


def test_a_pause_with_no_turn_ended_reads_no_ledger() -> None:
    world = World()
    _delivered(world)
    sweep = world.usecases.turn_ends.sweep
    sweep()  # the first look reads what it has not seen
    reads: list[WorkItemRef] = []
    ledger = world.store.ledger

    def counted(item: WorkItemRef):  # type: ignore[no-untyped-def]
        reads.append(item)
        return ledger(item)

    world.store.ledger = counted  # type: ignore[method-assign]
    for _ in range(3):
        sweep()

    assert reads == []


def test_a_turn_whose_end_was_written_before_its_delivery_was_saved_is_said_at_the_next_look() -> None:
    world = World()
    ref, comment = _delivered(world)
    opened = world.ledger(ref).turns
    world.store.save_ledger(replace(world.ledger(ref), turns=()))  # the delivery not saved yet
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)  # a fast agent's turn
    sweep = world.usecases.turn_ends.sweep
    sweep()  # a turn ended, none is open
    with world.store.transaction():  # the delivery's save: its ledger and its session record
        world.store.save_ledger(replace(world.ledger(ref), turns=opened))
        world.store.save_session(world.record(ref))

    sweep()

    assert world.tracker.reactions.count((comment, Reaction.TURN_ENDED)) == 1


def test_a_turn_that_ends_while_a_cycle_reads_github_is_said_before_the_read_returns() -> None:
    world = World()
    ref, comment = _delivered(world)
    said, read, react = threading.Event(), world.tracker.work_items, world.tracker.react
    in_time: list[bool] = []

    def slow_read(repo: RepoRef, label: str) -> list[WorkItem]:
        if not said.is_set():
            _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
            in_time.append(said.wait(timeout=10))  # GitHub answers slowly: the turn's end is said meanwhile
        return read(repo, label)

    def reacted(on: Comment, reaction: Reaction) -> None:
        react(on, reaction)
        if (on.id, reaction) == (comment, Reaction.TURN_ENDED):
            said.set()

    world.tracker.work_items = slow_read  # type: ignore[method-assign]
    world.tracker.react = reacted  # type: ignore[method-assign]
    cycles, daemon = world.events.names().count(Event.POLL_CYCLE), _daemon(world)
    runner = threading.Thread(target=daemon.run)
    runner.start()
    wait_until(lambda: world.events.names().count(Event.POLL_CYCLE) > cycles)
    daemon.stop()
    runner.join(timeout=10)

    assert in_time == [True]
