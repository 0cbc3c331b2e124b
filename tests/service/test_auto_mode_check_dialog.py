"""Claude Code's auto mode asks a person to choose when its safety check cannot reach its service
("Auto mode can't check actions in this session"): a dialog whose Enter chooses. The harness is
blocked while it shows, and nothing is pasted into it."""

from __future__ import annotations

from adapters.receipts.hook_json import receipt_of
from app.config.settings import Settings
from domain.events import Event
from domain.receipts import ReceiptKind
from tests.service.world import World

SCREEN = (
    "Auto mode can't check actions in this session\n"
    "Auto mode's safety check runs on the server, and it isn't running for this session.\n"
    "❯ 1. Stay in auto mode"
)


def _claude() -> World:
    return World(harness="claude", harnesses={"claude": Settings.model_validate({}).harness_spec("claude")})


def test_the_auto_mode_check_dialog_on_claudes_screen_blocks_and_no_comment_is_pasted_into_it() -> None:
    world = _claude()
    ref = world.watched()
    pane = world.session(ref).harness
    assert pane is not None
    pasted = len(pane.received)
    pane.screen = SCREEN
    world.comment(ref, "please add a test")

    world.cycle()

    assert len(pane.received) == pasted
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1


def test_claudes_agent_needs_input_notification_is_a_dialog() -> None:
    text = '{"hook_event_name": "Notification", "notification_type": "agent_needs_input", "message": "m"}'

    receipt = receipt_of("1796100000000000000-1", text)

    assert receipt is not None and receipt.kind is ReceiptKind.BLOCKED
