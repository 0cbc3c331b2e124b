"""A harness blocked on a dialog: comments wait, no attempt is spent, and the item hears
once per dialog — Claude Code says one dialog twice (PermissionRequest, then ~6 s later the
permission_prompt notification)."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.receipts import TOOL_GRACE_SECONDS, ReceiptKind
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def test_one_dialog_said_twice_posts_one_notice_and_the_comment_waits_without_an_attempt() -> None:
    world = World()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED)  # PermissionRequest
    comment = world.comment(ref)
    world.cycle()
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED, detail="Claude needs your permission")  # its notification
    world.cycle()

    assert len(world.tracker.posted) == 1
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1
    assert world.ledger(ref).attempts(comment.id) == 0
    assert comment.id not in world.ledger(ref).resolved


def test_a_dialog_answered_yes_lets_the_waiting_comment_in() -> None:
    world = World()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED)
    comment = world.comment(ref)
    world.cycle()
    _receipts(world).plant(spawn, ReceiptKind.WORKING)  # PostToolUse: the tool was allowed and ran

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_two_dialogs_of_one_turn_are_one_episode_and_one_notice() -> None:
    """Before: a second dialog after the first was answered posted a second notice (two within 16 s)."""
    world = World()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED)
    world.comment(ref)
    world.cycle()
    _receipts(world).plant(spawn, ReceiptKind.WORKING)
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED, after=1)
    world.comment(ref, "another")

    world.cycle()

    assert len(world.tracker.posted) == 1
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1


def test_a_dialog_of_a_later_turn_is_a_new_episode_and_a_new_notice() -> None:
    world = World()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED)
    world.comment(ref)
    world.cycle()
    _receipts(world).plant(spawn, ReceiptKind.WORKING)
    _receipts(world).plant(spawn, ReceiptKind.TURN_ENDED)
    _receipts(world).plant(spawn, ReceiptKind.PROMPT, prompt="typed in the pane")
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED, after=1)
    world.comment(ref, "another")

    world.cycle()

    assert len(world.tracker.posted) == 2


def test_a_comment_as_a_tool_starts_waits_out_the_grace_then_goes_in_when_no_dialog_opened() -> None:
    world = World()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    comment = world.comment(ref)
    _receipts(world).plant(spawn, ReceiptKind.TOOL)  # PreToolUse, this instant

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    pasted = [r for r in world.receipts.read(ref, spawn) if r.kind is ReceiptKind.PROMPT][-1]
    tool = next(r for r in world.receipts.read(ref, spawn) if r.kind is ReceiptKind.TOOL)
    assert pasted.at is not None and tool.at is not None
    assert (pasted.at - tool.at).total_seconds() >= TOOL_GRACE_SECONDS


def test_a_comment_as_a_tool_starts_that_then_asks_for_permission_is_never_pasted() -> None:
    world = World()
    ref = world.watched()
    spawn = world.record(ref).spawn_id
    comment = world.comment(ref)
    _receipts(world).plant(spawn, ReceiptKind.TOOL)
    _receipts(world).plant(spawn, ReceiptKind.BLOCKED, after=0.5)  # its dialog, 0.5 s later

    world.cycle()

    assert world.ledger(ref).attempts(comment.id) == 0
    assert [r.kind for r in world.receipts.read(ref, spawn)].count(ReceiptKind.PROMPT) == 1  # the spawn's only
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1
