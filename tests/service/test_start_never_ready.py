"""A harness that never says it is ready (opencode stopped in its own start with a blank screen, no
plugin event ever fired) is ended and started again by the next attempt, not left in place while
every comment on its item fails against it."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from tests.service.world import CLAUDE, World


def test_a_start_that_never_said_ready_is_ended_and_the_next_attempt_starts_the_harness_again() -> None:
    world = World()
    world.receipts.never_ready = True  # the first start hangs before any hook fires
    ref = world.item()
    world.cycle()
    stuck = world.record(ref)
    assert world.events.named(Event.DISPATCH_UNCONFIRMED)  # its start prompt, never confirmed
    world.receipts.never_ready = False  # a start from now on gets ready as usual
    comment = world.comment(ref, "after the hung start")

    world.cycle()

    record = world.record(ref)
    assert record.spawn_id != stuck.spawn_id, "the hung harness was left in place"
    ended = [call for call in world.tmux.calls if call[0] == "terminate_harness"]
    assert ended == [("terminate_harness", ref.target.name)]  # ended first: never two harnesses for one item
    (not_ready,) = world.events.named(Event.SESSION_NOT_READY)
    assert not_ready["spawn_id"] == stuck.spawn_id
    assert not_ready["reason"] == f"not ready {CLAUDE.hung_seconds:g}s after its spawn: ended and started again"
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_an_item_without_comments_gets_its_hung_start_replaced_on_the_next_cycle() -> None:
    """Nothing else would replace it: the item's start is its only delivery until a comment comes."""
    world = World()
    world.receipts.never_ready = True
    ref = world.item()
    world.cycle()
    stuck = world.record(ref)
    world.receipts.never_ready = False

    world.cycle()

    assert world.record(ref).spawn_id != stuck.spawn_id, "the hung harness was left in place"
    assert world.ledger(ref).start is None  # the start went in and was confirmed
    assert [e["confirmed_by"] for e in world.events.named(Event.DISPATCH_CONFIRMED)] == ["receipt"]


def test_a_start_slower_than_its_first_budget_is_waited_for_by_the_retry_not_ended() -> None:
    """Slow under load is not hung (opencode took 63 s at load 26, its start prompt has 60): the
    start's retry waits for its receipt once more, and only a harness silent through that too is
    ended."""
    world = World()
    world.receipts.ready_after = CLAUDE.start_seconds + 20  # its first attempt fails unconfirmed
    ref = world.item()
    world.poll.run()
    assert world.events.named(Event.DISPATCH_UNCONFIRMED)

    world.poll.run()  # the next cycle, at once

    assert world.events.named(Event.SESSION_NOT_READY) == []
    assert world.spawns() == 1
    assert world.ledger(ref).start is None
    assert [e["confirmed_by"] for e in world.events.named(Event.DISPATCH_CONFIRMED)] == ["receipt-on-retry"]
