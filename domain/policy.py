"""The session policy (DESIGN §4): pure decisions from tmux's answers, each with a reason."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

from domain.model import SessionState, SpawnMode, WorkItem


class Step(enum.Enum):
    PASTE = "paste"  # deliver into the recorded session
    RESPAWN_PATH = "respawn-path"
    DELIVER_INTO_OCCUPANT = "deliver-into-occupant"  # a live session holds the name: talk to it
    CLEAR = "clear"  # the name must be cleared before a spawn


class Clear(enum.Enum):
    GO = "go"  # nothing to clear (or let new-session decide)
    REFUSE_LIVE = "refuse-live"  # exists, live: never kill, never spawn over
    KILL_THEN_VERIFY = "kill-then-verify"  # exists, dead: kill, then prove it is gone


class Outcome(enum.Enum):
    """How one dispatch ended; the ledger and the event log follow from it."""

    DELIVERED = "delivered"
    ROUTED_INTO_OCCUPANT = "routed-into-occupant"
    SPAWNED = "spawned"  # the prompt went in on a fresh (or resumed) session's argv
    RETRY = "retry"  # dispatch.failed, retried next cycle within the budget
    SKIPPED_OCCUPIED = "skipped-session-occupied"  # resolved, never retried
    SPAWN_REFUSED = "spawn-refused"  # first spawn against a live occupant: loud, retried
    NO_SESSION = "no-session"  # nothing to deliver into and spawning is not armed

    @property
    def delivered(self) -> bool:
        return self in {Outcome.DELIVERED, Outcome.ROUTED_INTO_OCCUPANT, Outcome.SPAWNED}


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Decision(Generic[T]):
    choice: T
    reason: str


def on_delivery_probe(state: SessionState) -> Decision[Step]:
    """Step 1: an unanswered probe is never 'absent' — paste and let a real failure retry."""
    if state is SessionState.LIVE:
        return Decision(Step.PASTE, "session live")
    if state is SessionState.UNKNOWN:
        return Decision(Step.PASTE, "tmux did not answer the probe; not read as absent")
    return Decision(Step.RESPAWN_PATH, f"session {state.value}")


def on_respawn_probe(state: SessionState) -> Decision[Step]:
    """Step 2: probe again before respawning; a live session is delivered into instead."""
    if state is SessionState.LIVE:
        return Decision(Step.DELIVER_INTO_OCCUPANT, "session found live on the respawn path")
    return Decision(Step.CLEAR, f"session {state.value} on the respawn path")


def clear_decision(state: SessionState, *, tmux_proved_taken: bool) -> Decision[Clear]:
    """Step 3/4: what to do with the name before (re)spawning."""
    if state is SessionState.ABSENT:
        return Decision(Clear.GO, "name free")
    if state is SessionState.UNKNOWN:
        if tmux_proved_taken:
            return Decision(Clear.REFUSE_LIVE, "duplicate session and the occupant does not answer: counted live")
        return Decision(Clear.GO, "probe unanswered: new-session decides")
    if state is SessionState.LIVE:
        return Decision(Clear.REFUSE_LIVE, "exists, live")
    return Decision(Clear.KILL_THEN_VERIFY, "exists, every pane dead")


def clear_verified(*, kill_succeeded: bool, state_after: SessionState) -> Decision[bool]:
    """A failed kill against a session that is nonetheless gone counts as cleared."""
    if kill_succeeded or state_after is SessionState.ABSENT:
        return Decision(True, "cleared")
    return Decision(False, f"kill not verified (session {state_after.value})")


def resume_survived(state: SessionState) -> Decision[bool]:
    """After resumeProbeSeconds: a resumed harness that still runs (or may) is kept."""
    if state in {SessionState.LIVE, SessionState.UNKNOWN}:
        return Decision(True, f"resumed session {state.value} after the probe delay")
    return Decision(False, f"resumed session {state.value}: resume failed")


def spawn_armed(item: WorkItem, *, mode: SpawnMode, label: str) -> Decision[bool]:
    """Whether a work item with no session may get one spawned."""
    if mode is SpawnMode.ALWAYS:
        return Decision(True, "spawnOnUnmatched: always")
    if mode is SpawnMode.LABELED and (not label or label in item.labels):
        return Decision(True, f"spawnOnUnmatched: labeled ({label or 'any'})")
    return Decision(False, f"spawnOnUnmatched: {mode.value}")


def remedy(target: str, item: str) -> str:
    return (
        f"a live session holds {target}; nothing was killed. To start over: "
        f"tmux kill-session -t {target}  or  python -m app sessions reset --work-item {item}"
    )
