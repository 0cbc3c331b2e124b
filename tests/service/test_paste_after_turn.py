"""A harness that takes a prompt typed during its turn into that turn (GitHub Copilot CLI steers
it: no prompt receipt, no turn of its own, tests/copilot/test_copilot_facts.py) could never confirm
such a paste: a comment to it waits, without an attempt, until its turn has ended."""

from __future__ import annotations

from dataclasses import replace

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Comment
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import CLAUDE, CURSOR, World

JOINING = replace(CLAUDE, paste_while_busy=False)


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def held_mid_turn(world: World) -> tuple[WorkItemRef, str, Comment]:
    """An item whose agent works on its start's turn, and a comment a cycle held for the turn's end:
    the item, its spawn, the comment."""
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    _receipts(world).plant(spawn, ReceiptKind.PROMPT, prompt="the start")
    comment = world.comment(ref)
    world.cycle()
    return ref, spawn, comment


def test_a_comment_to_a_busy_harness_that_joins_typed_prompts_to_its_turn_waits_without_an_attempt() -> None:
    world = World(harnesses={"claude": JOINING, "cursor": CURSOR})

    ref, _, comment = held_mid_turn(world)

    assert world.ledger(ref).attempts(comment.id) == 0
    assert comment.id not in world.ledger(ref).resolved
    assert world.session(ref).received == []
    assert world.events.named(Event.DISPATCH_FAILED) == []


def test_the_waiting_comment_goes_in_once_the_turn_has_ended() -> None:
    world = World(harnesses={"claude": JOINING, "cursor": CURSOR})
    ref, spawn, comment = held_mid_turn(world)
    _receipts(world).plant(spawn, ReceiptKind.TURN_ENDED)

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_busy_harness_that_queues_typed_prompts_takes_the_paste_at_once() -> None:
    world = World()
    ref = world.watched()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.PROMPT, prompt="the start")
    comment = world.comment(ref)

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_comment_held_for_the_turns_end_goes_in_as_soon_as_the_turn_ends_without_waiting_for_a_cycle() -> None:
    """The start's turn has no comment of its own to close: its end still brings the held comment in."""
    world = World(harnesses={"claude": JOINING, "cursor": CURSOR})
    ref, spawn, comment = held_mid_turn(world)
    cycles = world.events.names().count(Event.POLL_CYCLE)
    _receipts(world).plant(spawn, ReceiptKind.TURN_ENDED)

    world.usecases.turn_ends.sweep()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.events.names().count(Event.POLL_CYCLE) == cycles
