"""A paste whose Enter the harness took for a newline (Gemini CLI, 1 in 10 in its
profile's own trial) gets one more carriage return, at most twice, only while its input box still
holds the text — never a second paste."""

from __future__ import annotations

from typing import Any

from app.config.settings import Settings
from domain.events import Event
from domain.receipts import still_typed
from tests.fakes.receipts import FakeReceipts
from tests.fakes.tmux import FakePane
from tests.service.world import World

RULE = "─" * 40


def _gemini() -> World:
    """The built-in gemini profile (`enterRetries: 2`) over the fakes."""
    return World(harness="gemini", harnesses={"gemini": Settings.model_validate({}).harness_spec("gemini")})


def _succeeded(world: World, comment_id: str) -> list[dict[str, Any]]:
    return [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == comment_id]


def _swallowing(enters: int, text: str) -> tuple[World, str, FakePane]:
    """A comment pasted into the gemini profile's harness that takes its next `enters` Enters for
    newlines, one cycle on: the world, the comment's id, the harness's pane."""
    world = _gemini()
    ref = world.watched()
    world.tmux.swallowed_enters = enters
    comment = world.comment(ref, text)
    world.cycle()
    pane = world.session(ref).harness
    assert pane is not None
    return world, comment.id, pane


def test_a_paste_whose_enter_became_a_newline_gets_one_more_carriage_return_and_is_confirmed() -> None:
    world, comment, pane = _swallowing(1, "please add a test")
    assert _succeeded(world, comment)[0]["confirmed_by"] == "receipt"
    assert (len(pane.received), pane.submits) == (1, 2) and "please add a test" in pane.received[0]


def test_at_most_two_more_carriage_returns_and_never_a_second_paste() -> None:
    world, comment, pane = _swallowing(100, "stays in the box")
    assert (len(pane.received), pane.submits) == (1, 3)
    assert _succeeded(world, comment) == []
    assert world.events.named(Event.DISPATCH_UNCONFIRMED)[0]["comment_id"] == comment


def test_no_carriage_return_once_the_box_no_longer_holds_the_text() -> None:
    world = _gemini()
    ref = world.watched()
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.ignore_pastes = True  # taken (queued behind a turn, say), its receipt not written yet
    world.comment(ref, "queued")

    world.cycle()

    pane = world.session(ref).harness
    assert pane is not None and pane.submits == 1


def test_a_harness_without_enter_retries_gets_no_carriage_return() -> None:
    world = World(harness="claude")
    ref = world.watched()
    world.tmux.swallowed_enters = 1
    world.comment(ref, "left as it was")

    world.cycle()

    pane = world.session(ref).harness
    assert pane is not None and pane.submits == 1


def test_the_text_is_still_typed_only_below_the_input_boxs_rule() -> None:
    line = "Delivery: poll-comment-1 (receipt 0123456789abcdef)"
    typed = f" > earlier\n✦ OK\n{RULE}\n Shift+Tab to accept edits\n > {line}\n   the comment\n workspace"
    sent = f" > {line}\n   the comment\n✦ OK\n{RULE}\n >   Type your message or @path/to/file\n workspace"
    assert (still_typed(typed, line), still_typed(sent, line), still_typed("", line)) == (True, False, False)
