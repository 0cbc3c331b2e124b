"""An operator's own window in an item's session: comments go to the harness's pane, never the
operator's shell, and closing the item signals the harness alone (FakeTmux, the poll cycle)."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.model import ItemState
from tests.service.world import World


def test_the_session_record_keeps_the_pane_the_spawn_started_the_harness_in() -> None:
    world = World()

    ref = world.watched()

    assert world.record(ref).pane_id == world.session(ref).pane_id != ""


def test_a_comment_reaches_the_harness_pane_while_an_operator_window_is_active() -> None:
    world = World()
    ref = world.watched()
    world.tmux.open_window(ref.target.name)  # the operator attached and ran `tmux new-window`
    comment = world.comment(ref, "git status\nrm -rf build")

    world.cycle()

    session = world.session(ref)
    assert (len(session.received), session.operator_received) == (1, [])
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_closing_an_item_terminates_the_harness_and_leaves_the_operator_window_alive() -> None:
    world = World()
    ref = world.watched()
    world.tmux.open_window(ref.target.name)
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    session = world.session(ref)
    assert (session.pane_dead, session.operator_dead) == (True, False)
    assert world.events.named(Event.SESSION_CLOSED)[0]["harness_terminated"] is True
