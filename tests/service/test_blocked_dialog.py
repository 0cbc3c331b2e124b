"""A harness blocked on a dialog (issue 8): comments wait, no attempt is spent, and the item hears
once per dialog — Claude Code says one dialog twice (PermissionRequest, then ~6 s later the
permission_prompt notification)."""

from __future__ import annotations

from domain.ledger import Resolution
from domain.receipts import ReceiptKind
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
    assert len(world.events.named("session.blocked")) == 1
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


def test_a_second_dialog_after_the_first_was_answered_is_a_new_notice() -> None:
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

    assert len(world.tracker.posted) == 2
