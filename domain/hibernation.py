"""Hibernation: an agent idle for long is ended to give its slot back, its conversation kept; the
next comment resumes it (the respawn path every resumable harness has).

Only an agent with nothing in hand is ended: its turn ended (or it never got one), no comment or
start waits for it or is in flight, no dialog waits on it, it is not parked, no client is attached to
its tmux session (an operator watching it keeps it awake), and its harness can resume a conversation
(one that cannot would lose it). Idle means no receipt for `after` seconds: a comment delivered, a
tool run or a turn's end is a receipt."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.policy import Decision
from domain.receipts import HarnessState

# the harness states of an agent with nothing in hand: ready (no prompt yet) or its turn ended
RESTING = frozenset({HarnessState.READY, HarnessState.IDLE})


@dataclass(frozen=True, slots=True)
class Resting:
    """What is known of one live agent when hibernation is weighed."""

    state: HarnessState  # by its receipts
    since: datetime | None  # its last receipt's time (None: it said nothing yet, so it is never idle)
    clients: int | None  # clients attached to its tmux session (None: tmux did not say)
    can_resume: bool
    parked: bool = False
    waiting: bool = False  # a comment or a start waits for it, or was pasted and awaits its receipt


def hibernation(agent: Resting, *, now: datetime, after_seconds: float | None) -> Decision[bool]:
    """Whether to end `agent` now, keeping its conversation for the next comment."""
    idle = (now - agent.since).total_seconds() if agent.since is not None else None
    after = after_seconds or 0.0
    refusals = (
        (after_seconds is None, "hibernation is off"),
        (not agent.can_resume, "its harness cannot resume a conversation"),
        (agent.parked, "parked: it waits for its API's reset"),
        (agent.waiting, "a comment waits for it"),
        (agent.state not in RESTING, f"harness {agent.state.value}"),
        (agent.clients is None, "tmux did not say whether a client is attached"),
        (bool(agent.clients), "a client is attached to its session"),
        (idle is None, "no time of its last receipt"),
        (idle is not None and idle < after, f"idle {idle or 0:.0f}s of {after:g}s"),
    )
    for refused, why in refusals:
        if refused:
            return Decision(False, why)
    return Decision(True, f"idle {idle or 0:.0f}s (routing.hibernateAfterSeconds {after:g})")
