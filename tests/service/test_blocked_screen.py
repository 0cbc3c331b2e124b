"""Issue 21 item 3: a dialog the harness's hooks do not report (Gemini CLI says it is ready while its
authentication dialog waits) is read from its screen: the harness is blocked, nothing is pasted
into it, and the item hears once."""

from __future__ import annotations

from app.config.settings import Settings
from tests.service.world import World

AUTH = "│ How would you like to authenticate for this project?\n│ ● 2. Use Gemini API Key"


def _gemini() -> World:
    return World(harness="gemini", harnesses={"gemini": Settings.model_validate({}).harness_spec("gemini")})


def test_a_dialog_on_the_screen_blocks_and_no_comment_is_pasted_into_it() -> None:
    world = _gemini()
    ref = world.watched()
    pane = world.session(ref).harness
    assert pane is not None
    pasted = len(pane.received)
    pane.screen = AUTH
    world.comment(ref, "please add a test")

    world.cycle()
    world.cycle()

    assert len(pane.received) == pasted
    assert len(world.events.named("session.blocked")) == 1
    assert len([p for p in world.tracker.posted if "waiting for an answer" in p[1]]) == 1


def test_once_the_dialog_is_gone_the_waiting_comment_is_pasted() -> None:
    world = _gemini()
    ref = world.watched()
    pane = world.session(ref).harness
    assert pane is not None
    pane.screen = AUTH
    world.comment(ref, "please add a test")
    world.cycle()
    pane.screen = "> the earlier prompt\n────────\n >   Type your message"

    world.cycle()

    assert "please add a test" in pane.received[-1]
