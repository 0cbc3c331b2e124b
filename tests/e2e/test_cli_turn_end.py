"""`poll` says an agent's turn ended (🚀 on its comment, `session.turn_finished`) as soon as the Stop
hook writes its receipt, while it pauses between cycles: not at the next cycle."""

from __future__ import annotations

import json
import subprocess

from adapters.agents.receipt_line import hook_command
from domain.events import Event
from domain.model import Reaction
from domain.refs import WorkItemRef
from tests.e2e.loop_rig import Loop, loop
from tests.tmux_support import real_tmux, wait_for

__all__ = ["loop", "real_tmux"]


def _stop_hook(loop: Loop, ref: WorkItemRef) -> None:
    """Claude Code's Stop hook runs in the item's spawn: the line the-loop gives it, the hook's JSON on stdin."""
    record = loop.store().session(ref)
    assert record is not None
    folder = loop.state / "receipts" / ref.slug / record.spawn_id
    stop = {"hook_event_name": "Stop", "session_id": record.harness_session_id, "stop_hook_active": False}
    subprocess.run(["sh", "-c", hook_command(folder)], input=json.dumps(stop), text=True, check=True)


def _delivered(loop: Loop) -> str:
    """The id of the comment delivered ("": none yet)."""
    said = [e for e in loop.events() if e["event"] == Event.DISPATCH_SUCCEEDED.value and e.get("comment_id")]
    return str(said[-1]["comment_id"]) if said else ""


def _reacted(loop: Loop, comment_id: str, reaction: Reaction) -> bool:
    sandbox = loop.sandbox()
    try:
        return (comment_id, reaction) in sandbox.reactions()
    finally:
        sandbox.close()


def test_a_turn_that_ends_while_poll_pauses_gets_its_reaction_before_the_next_cycle(loop: Loop) -> None:
    loop.interval_seconds = 3600  # the next cycle is an hour away
    (ref,) = loop.with_sessions(1)
    _stop_hook(loop, ref)  # the start prompt's turn
    loop.comment(ref, "please add a test")
    cycles = loop.event_names().count(Event.POLL_CYCLE) + 1
    loop.start_poll()  # its first cycle delivers the comment
    wait_for(lambda: loop.event_names().count(Event.POLL_CYCLE) == cycles, what="the first cycle")
    delivered = wait_for(lambda: _delivered(loop), what="the comment's delivery")

    _stop_hook(loop, ref)

    wait_for(lambda: _reacted(loop, delivered, Reaction.TURN_ENDED), what="🚀 on the comment")
    finished = [e for e in loop.events() if e["event"] == Event.SESSION_TURN_FINISHED.value]
    assert [e["comment_id"] for e in finished] == [None, delivered]  # the start prompt's turn, then the comment's
    assert loop.event_names().count(Event.POLL_CYCLE) == cycles  # no cycle ran for it
