"""A dialog the harness's hooks do not report (Gemini CLI says it is ready while its
authentication dialog waits) is read from its screen: the harness is blocked, nothing is pasted
into it, and the item hears once."""

from __future__ import annotations

import pytest

from app.config.settings import Settings
from domain.events import Event
from domain.receipts import HarnessState
from domain.refs import WorkItemRef
from tests.fakes.tmux import FakePane
from tests.service.world import World

AUTH = "│ How would you like to authenticate for this project?\n│ ● 2. Use Gemini API Key"


def _gemini() -> World:
    return World(harness="gemini", harnesses={"gemini": Settings.model_validate({}).harness_spec("gemini")})


def _shown(world: World, screen: str) -> tuple[WorkItemRef, FakePane, int]:
    """A watched item whose harness's pane shows `screen`, and how many pastes it had received."""
    ref = world.watched()
    pane = world.session(ref).harness
    assert pane is not None
    pasted = len(pane.received)
    pane.screen = screen
    return ref, pane, pasted


def test_a_dialog_on_the_screen_blocks_and_no_comment_is_pasted_into_it() -> None:
    world = _gemini()
    ref, pane, pasted = _shown(world, AUTH)
    world.comment(ref, "please add a test")

    world.cycle()
    world.cycle()

    assert len(pane.received) == pasted
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1
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


@pytest.mark.parametrize(
    "torn",
    [
        pytest.param("", id="erased"),
        pytest.param(" Gemini CLI v0.61.0\n\nTips for getting started:\n1. Create GEMINI.md files", id="half-written"),
    ],
)
def test_a_screen_read_mid_redraw_is_read_again_and_the_dialog_still_blocks(torn: str) -> None:
    """Gemini CLI's TUI redraws by erasing its lines and writing them again, which tmux may take in
    more than one read: a look between the two (seen under load) finds the screen blank or half
    written, and a paste then would land in the dialog."""
    world = _gemini()
    ref, pane, pasted = _shown(world, AUTH)
    pane.redraws = [torn]  # the next look lands in the middle of a redraw
    world.comment(ref, "please add a test")

    world.cycle()

    assert len(pane.received) == pasted
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1


def test_a_screen_that_never_settles_is_looked_at_three_times_at_most() -> None:
    """A busy agent's spinner changes the screen at every look: the looks that wait for a redraw to
    end are bounded, so each check (a paste, each row of the session list and the page) stays cheap."""
    world = _gemini()
    ref, pane, _ = _shown(world, "done")
    frames = [f"{spinner} Thinking… ({n}s)" for n, spinner in enumerate("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏" * 2)]
    pane.redraws = list(frames)
    before = world.clock.monotonic()

    state = world.watch.state(world.record(ref), world.harnesses["gemini"])

    assert state is not HarnessState.BLOCKED
    assert len(frames) - len(pane.redraws) <= 3
    assert world.clock.monotonic() - before <= 0.2 + 1e-9


def test_a_view_of_the_sessions_looks_at_each_screen_once() -> None:
    """The session list, the page and a status reply show a state: one look each, which a redraw may
    fool for a moment; only a paste waits for the screen to settle."""
    world = _gemini()
    ref, pane, _ = _shown(world, "done")
    pane.redraws = ["⠋ Thinking… (1s)", "⠙ Thinking… (2s)", "⠹ Thinking… (3s)"]

    world.watch.state(world.record(ref), world.harnesses["gemini"], settled=False)

    assert pane.redraws == ["⠙ Thinking… (2s)", "⠹ Thinking… (3s)"]
