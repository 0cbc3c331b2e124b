"""The defects a hostile review reproduced, each pinned (the others live beside the code they
concern, in contract, unit and integration tests)."""

from __future__ import annotations

import contextlib

from domain.events import Event
from domain.ledger import DeliveryState, Resolution
from domain.model import AGENT_MARKER
from domain.receipts import ReceiptKind
from tests.service.world import World


def test_an_item_labelled_and_commented_on_within_one_interval_gets_the_comment() -> None:
    world = World()
    world.cycle()  # the repository is watched from here on
    ref = world.item()  # labelled …
    comment = world.comment(ref, "right away")  # … and commented on before the next cycle

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert any("right away" in text for text in world.session(ref).received)


def test_a_comment_made_before_the_label_showed_in_the_listing_waits_and_is_delivered() -> None:
    world = World()
    world.cycle()
    ref = world.item()
    world.tracker.listed_late.add(ref)  # GitHub's listing has not caught up with the label yet
    comment = world.comment(ref, "listed late")
    world.cycle()  # the comment is read, its item is not listed: the cursor moves on
    world.tracker.listed_late.clear()

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_what_an_item_held_before_it_was_armed_is_history() -> None:
    world = World()
    world.cycle()
    ref = world.item(labels=())
    before = world.comment(ref, "said before the label")
    world.clock.advance(5)
    world.tracker.add_label(ref, "loop")

    world.cycle()

    assert world.ledger(ref).resolved[before.id].reason == "before-armed" and world.ledger(ref).pending == ()
    assert world.session(ref).received == []


def test_a_crash_after_the_spawn_before_its_outcome_leaves_a_record_that_finds_the_harness() -> None:
    world = World()
    ref = world.watched()
    world.vanish(ref)
    crashed = {"at": False}
    original = world.tmux.spawn

    def spawn_then_crash(request):  # type: ignore[no-untyped-def]
        original(request)
        crashed["at"] = True
        raise SystemExit("SIGKILL right after new-session")  # nothing after it runs

    world.tmux.spawn = spawn_then_crash  # type: ignore[method-assign]
    world.comment(ref, "during the respawn")
    with contextlib.suppress(SystemExit):
        world.cycle()
    world.tmux.spawn = original  # type: ignore[method-assign]
    world.restart(version=world.version)
    later = world.comment(ref, "after the crash")

    world.cycle()
    world.cycle()

    assert crashed["at"] and world.record(ref).pane_id == world.session(ref).harness_id
    assert world.ledger(ref).resolved[later.id].kind is Resolution.DELIVERED
    assert [p for p in world.session(ref).panes if not p.dead] == [world.session(ref).harness]


def test_a_dead_harness_beside_a_live_operator_window_is_respawned_without_touching_it() -> None:
    world = World()
    ref = world.watched()
    operator = world.tmux.open_window(ref.target.name)
    world.tmux.exit_harness(ref.target.name)
    comment = world.comment(ref, "wake up")

    world.cycle()

    session = world.session(ref)
    kept = next(p for p in session.panes if p.id == operator)
    assert not kept.dead and kept.received == []
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert session.harness is not None and not session.harness.dead and session.harness.id != operator


def test_a_crash_between_the_paste_and_the_ledger_write_never_pastes_it_twice() -> None:
    world = World()
    ref = world.watched()
    comment = world.comment(ref, "exactly once")

    def crash_after_paste(_prompt: str) -> None:
        raise SystemExit("SIGKILL after the paste")

    world.tmux.on_deliver = crash_after_paste
    with contextlib.suppress(SystemExit):
        world.cycle()
    world.tmux.on_deliver = None
    assert world.ledger(ref).pending[0].state is DeliveryState.ATTEMPTING  # counted, never judged
    world.restart(version=world.version)

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].reason == "confirmed:receipt-on-retry"
    assert sum("exactly once" in text for text in world.session(ref).received) == 1


def test_what_the_agent_posts_with_the_marker_never_comes_back_as_a_prompt() -> None:
    world = World()
    ref = world.watched()
    mine = world.comment(ref, f"Done: opened a PR.\n{AGENT_MARKER}")  # the agent posts as the operator

    world.cycle()

    assert mine.id not in world.ledger(ref).resolved and world.ledger(ref).pending == ()
    assert world.session(ref).received == []


def test_a_harness_that_never_says_ready_fails_the_attempt_with_its_screen_in_the_event() -> None:
    world = World()
    world.receipts.never_ready = True  # Claude Code on its trust dialog: no hook fires
    world.item()
    world.cycle()

    failed = world.events.named(Event.DISPATCH_FAILED)
    unconfirmed = world.events.named(Event.DISPATCH_UNCONFIRMED)
    assert failed and failed[0]["will_retry"] is True
    assert unconfirmed and "no receipt within 90s" in unconfirmed[0]["reason"]
    assert world.tracker.reactions == []  # the item's start has no comment to react on


def test_a_blocked_harness_gets_no_paste_no_attempt_and_the_item_one_notice() -> None:
    world = World()
    ref = world.watched()
    world.receipts.plant(world.record(ref).spawn_id, ReceiptKind.BLOCKED)
    waiting = world.comment(ref, "not into the dialog")

    world.cycle()
    world.cycle()

    assert world.session(ref).received == [] and world.ledger(ref).attempts(waiting.id) == 0
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1
    (notice,) = [body for _, body in world.tracker.posted]
    assert "waiting for an answer in its session" in notice
    world.receipts.plant(world.record(ref).spawn_id, ReceiptKind.WORKING)  # the dialog was answered

    world.cycle()

    assert world.ledger(ref).resolved[waiting.id].kind is Resolution.DELIVERED
