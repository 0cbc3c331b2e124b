"""The session policy (README.md, "How it works"): pure decisions from tmux's answers, each with a reason."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, TypeVar

from domain.model import Probe, SessionState, SpawnMode, WorkItem
from domain.receipts import HarnessState


class Step(enum.Enum):
    PASTE = "paste"  # deliver into the harness's pane
    RESPAWN_PATH = "respawn-path"
    DELIVER_INTO_HARNESS = "deliver-into-harness"  # the respawn path found the harness running
    CLEAR = "clear"  # the name must be cleared before a spawn


class Clear(enum.Enum):
    GO = "go"  # nothing to clear (or let new-session decide)
    REFUSE_LIVE = "refuse-live"  # a first spawn against a live occupant: never touched
    KILL_DEAD = "kill-dead"  # every pane is dead: kill each, still dead, then prove the name free
    WINDOW = "window"  # someone's live window holds the session: the harness gets a window of its own


class Outcome(enum.Enum):
    """How one dispatch ended; the ledger and the event log follow from it."""

    PASTED = "pasted"  # into the running harness; the harness still has to confirm it
    SPAWNED = "spawned"  # on a fresh or resumed session's argv; the harness still has to confirm it
    RETRY = "retry"  # dispatch.failed, retried next cycle within the budget
    SKIPPED_OCCUPIED = "skipped-session-occupied"  # resolved, never retried
    SPAWN_REFUSED = "spawn-refused"  # first spawn against a live occupant: loud, retried
    NO_SESSION = "no-session"  # nothing to deliver into and spawning is not armed
    BLOCKED = "blocked"  # the harness waits on a dialog: not an attempt, the comment waits
    # not an attempt, the comment waits: the harness is mid-turn and takes no paste until it ends, or
    # no new agent may start on this host now (its free memory)
    LATER = "later"

    @property
    def went_in(self) -> bool:
        """The prompt reached the harness's input (confirmation decides the rest)."""
        return self in {Outcome.PASTED, Outcome.SPAWNED}


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Decision(Generic[T]):
    choice: T
    reason: str


def on_delivery_probe(probe: Probe) -> Decision[Step]:
    """Step 1: an unanswered probe is never 'absent' — paste and let a real failure retry."""
    if probe.harness is SessionState.LIVE:
        return Decision(Step.PASTE, "harness live")
    if probe.harness is SessionState.UNKNOWN:
        return Decision(Step.PASTE, "tmux did not answer the probe; not read as absent")
    return Decision(Step.RESPAWN_PATH, f"harness pane {probe.harness.value}")


def on_respawn_probe(probe: Probe) -> Decision[Step]:
    """Step 2: probe again before respawning; a harness found running is delivered into instead."""
    if probe.harness is SessionState.LIVE:
        return Decision(Step.DELIVER_INTO_HARNESS, "harness found live on the respawn path")
    return Decision(Step.CLEAR, f"harness pane {probe.harness.value} on the respawn path")


def clear_decision(probe: Probe, *, first: bool, tmux_proved_taken: bool = False) -> Decision[Clear]:
    """Step 3/4: what to do with the name before (re)spawning. Only dead panes are ever killed,
    each checked dead in the same tmux command; a live pane is never touched."""
    session = probe.session
    if session is SessionState.ABSENT:
        return Decision(Clear.GO, "name free")
    if session is SessionState.UNKNOWN:
        if tmux_proved_taken:
            return Decision(Clear.REFUSE_LIVE, "duplicate session and the occupant does not answer: counted live")
        return Decision(Clear.GO, "probe unanswered: new-session decides")
    if session is SessionState.DEAD:
        return Decision(Clear.KILL_DEAD, "exists, every pane dead")
    if first:
        return Decision(Clear.REFUSE_LIVE, "exists, live, and the-loop has no record of it")
    return Decision(Clear.WINDOW, "a live window that is not the harness's holds the session")


def cleared(probe: Probe) -> Decision[bool]:
    """After killing the dead panes: the name is free, or someone's live window is all that is left."""
    if probe.session is SessionState.ABSENT:
        return Decision(True, "cleared")
    if probe.session is SessionState.LIVE and probe.harness is not SessionState.LIVE:
        return Decision(True, "dead panes cleared; a live window remains")
    return Decision(False, f"not cleared (session {probe.session.value})")


class Ready(enum.Enum):
    GO = "go"  # paste now (a busy Claude Code queues it)
    WAIT = "wait"  # not ready yet: wait for it, up to its readySeconds
    BLOCKED = "blocked"  # it waits on a dialog: no paste, no attempt; the comment waits
    LATER = "later"  # mid-turn, and a paste would join that turn unconfirmed: no attempt; the comment waits
    GONE = "gone"  # dead, or said its conversation ended: the respawn path


def readiness(state: HarnessState, *, paste_while_busy: bool = True) -> Decision[Ready]:
    """Whether a paste may go into the harness now. `paste_while_busy`: a prompt pasted during a turn
    waits as the harness's next prompt (else it may join the running turn, with no receipt of its own)."""
    if state is HarnessState.BUSY and not paste_while_busy:
        return Decision(Ready.LATER, "harness is mid-turn and would take a paste into that turn unconfirmed")
    if state.accepts_prompts:
        return Decision(Ready.GO, f"harness {state.value}")
    if state in {HarnessState.STARTING, HarnessState.UNKNOWN}:
        return Decision(Ready.WAIT, f"harness {state.value}")
    if state is HarnessState.TOOL:
        return Decision(Ready.WAIT, "harness is about to run a tool: a permission dialog may open")
    if state is HarnessState.BLOCKED:
        return Decision(Ready.BLOCKED, "harness waits for an answer to a dialog in its session")
    return Decision(Ready.GONE, f"harness {state.value}")


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
