"""The one state an item shows everywhere — the fleet page's badges, counts and item view,
`status`'s "needs attention", `sessions list`, the status reply, `why` — with what it means and
what to do: one entry per state in `MEANINGS`, made by `item_status` from what the store and the
harness say (`Facts`).

Imports the standard library and the domain's receipts only: the lean `sessions list` makes it too.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from domain.durations import duration
from domain.receipts import HarnessState

if TYPE_CHECKING:
    from domain.asks import Waiting


class Tone(enum.StrEnum):
    """How a state reads at a glance: all is well, someone should look, or nothing runs."""

    HEALTHY = "healthy"
    ATTENTION = "attention"
    ENDED = "ended"


class ItemState(enum.StrEnum):
    """An item's state; its value is the page's `state` (JSON, filter, badge) and `--json`'s `item_state.state`."""

    STARTING = HarnessState.STARTING.value
    READY = HarnessState.READY.value
    BUSY = HarnessState.BUSY.value
    TOOL = HarnessState.TOOL.value
    IDLE = HarnessState.IDLE.value
    BLOCKED = HarnessState.BLOCKED.value
    HIBERNATED = "hibernated"
    PARKED = "parked"
    WAITING_SLOT = "waiting_slot"
    PAUSED = "paused"
    STOPPED = "stopped"
    ABANDONED = "abandoned"
    ENDED = HarnessState.ENDED.value
    DEAD = HarnessState.DEAD.value
    UNKNOWN = HarnessState.UNKNOWN.value
    CLOSED = "closed"
    ELSEWHERE = "elsewhere"  # its session runs on another host: its harness is not looked at from here
    NONE = "none"  # a ledger, no session

    @property
    def meaning(self) -> Meaning:
        return MEANINGS[self]


@dataclass(frozen=True, slots=True)
class Meaning:
    """A state as people read it: its badge's word, its tone, what it means and what to do."""

    badge: str
    tone: Tone
    means: str
    do: str


MEANINGS: dict[ItemState, Meaning] = {
    ItemState.STARTING: Meaning("starting", Tone.HEALTHY, "spawned, not yet ready", "nothing; a paste waits for ready"),
    ItemState.READY: Meaning("ready", Tone.HEALTHY, "waiting for a prompt", "nothing: the next comment goes in"),
    ItemState.BUSY: Meaning("busy", Tone.HEALTHY, "working on a prompt", "nothing; comments queue in order"),
    ItemState.TOOL: Meaning(
        "busy (tool)", Tone.HEALTHY, "about to run a tool", "nothing; a permission dialog may open"
    ),
    ItemState.IDLE: Meaning("idle", Tone.HEALTHY, "its turn ended", "nothing: the next comment goes in"),
    ItemState.BLOCKED: Meaning(
        "blocked",
        Tone.ATTENTION,
        "its agent waits on a request (a permission, a question) or a dialog: nothing is pasted",
        "answer on the item (`the-loop allow N` / `deny N` / `answer N <option>`), or attach and answer",
    ),
    ItemState.HIBERNATED: Meaning(
        "hibernated",
        Tone.HEALTHY,
        "its agent was idle for `routing.hibernateAfterSeconds` and was ended to free its slot; its "
        "conversation is kept",
        "nothing: the next comment resumes it",
    ),
    ItemState.PARKED: Meaning(
        "parked",
        Tone.ATTENTION,
        "its agent's turn failed on the API (a rate limit, an outage, refused credentials): nothing is "
        "pasted until the reset, then the failed comments are given again",
        "wait for the reset, or fix the cause and write `the-loop resume` on the item",
    ),
    ItemState.WAITING_SLOT: Meaning(
        "waiting for a slot",
        Tone.ATTENTION,
        "every host is at `cluster.maxSessions`: no session is started for it",
        "close an item's session, or raise `cluster.maxSessions`",
    ),
    ItemState.PAUSED: Meaning(
        "paused",
        Tone.ATTENTION,
        "`the-loop pause` was written on the item (or the page paused it): its comments are held",
        "`the-loop resume` as a comment, or the page's resume",
    ),
    ItemState.STOPPED: Meaning(
        "stopped",
        Tone.ATTENTION,
        "`the-loop stop` was written on the item: its session is closed, later comments are held",
        "`the-loop start` as a comment",
    ),
    ItemState.ABANDONED: Meaning(
        "abandoned",
        Tone.ATTENTION,
        "a comment was given up after its attempts, and none was delivered since",
        "`the-loop why <comment>` says why; `the-loop events --work-item REF`",
    ),
    ItemState.ENDED: Meaning("ended", Tone.ENDED, "its conversation ended", "nothing: the next comment resumes it"),
    ItemState.DEAD: Meaning(
        "dead",
        Tone.ENDED,
        "its pane exited",
        "nothing: the next comment resumes it; read why in `the-loop events --work-item REF`",
    ),
    ItemState.UNKNOWN: Meaning(
        "unknown", Tone.ATTENTION, "tmux did not answer", "`the-loop doctor`; never killed on a guess"
    ),
    ItemState.CLOSED: Meaning(
        "closed",
        Tone.ENDED,
        "closed upstream or by `sessions close`",
        "`the-loop sessions reopen --work-item REF`, or reopen it upstream",
    ),
    ItemState.ELSEWHERE: Meaning(
        "on another host", Tone.HEALTHY, "another host of the cluster holds it", "its own page; docs/cluster.md"
    ),
    ItemState.NONE: Meaning("no session", Tone.ENDED, "known, no agent yet", "the next authorized comment spawns one"),
}


@dataclass(frozen=True, slots=True)
class Parked:
    """An item's park, as a state reads it."""

    cause: str  # its cause in words ("a rate limit")
    since: datetime
    until: datetime | None  # None: until an operator resumes it


@dataclass(frozen=True, slots=True)
class Asked:
    """The oldest open request the agent posted on the item."""

    number: int
    since: datetime


@dataclass(frozen=True, slots=True)
class Abandoned:
    """The item's last comment given up, when none was delivered after it."""

    comment_id: str
    at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Facts:
    """What the store and the harness say of one item: all its state is made from."""

    harness: HarnessState = HarnessState.UNKNOWN
    here: bool = True  # its session runs in this host's tmux
    session: bool = True  # it has a session record
    closed: bool = False
    stopped: bool = False
    paused: bool = False
    parked: Parked | None = None
    asked: Asked | None = None
    waiting: Waiting | None = None  # what its blocked agent waits on (its receipts)
    slot_since: datetime | None = None
    abandoned: Abandoned | None = None
    held: int = 0  # its comments waiting to be delivered
    hibernated: datetime | None = None  # its idle agent was ended then, its conversation kept


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemStatus:
    """An item's state and its detail: since when, until when, why, the request it is blocked on,
    and how many of its comments wait."""

    state: ItemState
    since: datetime | None = None
    until: datetime | None = None
    why: str = ""
    request: int | None = None
    held: int = 0

    @property
    def meaning(self) -> Meaning:
        return self.state.meaning

    @property
    def attention(self) -> bool:
        return self.meaning.tone is Tone.ATTENTION

    def line(self, now: datetime) -> str:
        """The state in one line, the same wherever it is said: `parked (a rate limit) until … UTC, for 3m`."""
        parts = [self.why] if self.why else []
        if self.request is not None:
            parts.append(f"request {self.request}")
        if self.until is not None:
            parts.append(f"until {at(self.until)}")
        elif self.state is ItemState.PARKED:
            parts.append("until an operator resumes it")
        if self.since is not None:
            parts.append(f"since {at(self.since)} ({duration((now - self.since).total_seconds(), parts=1)})")
        if self.held:
            parts.append(f"{self.held} comment{'s' if self.held != 1 else ''} held")
        return self.meaning.badge + (f": {', '.join(parts)}" if parts else "")

    def as_json(self) -> dict[str, object]:
        return {
            "state": self.state.value,
            "badge": self.meaning.badge,
            "tone": self.meaning.tone.value,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "why": self.why or None,
            "request": self.request,
            "held": self.held,
            "means": self.meaning.means,
            "do": self.meaning.do,
        }


def item_status(facts: Facts) -> ItemStatus:
    """What the store says holds the item, else what its harness does (or where it runs)."""
    # its comments wait their turn: none held
    return held_status(facts) or _hibernated(facts) or ItemStatus(state=_harness(facts))


def _hibernated(facts: Facts) -> ItemStatus | None:
    """Ended while idle, not since woken: its pane is dead or gone (a live one was woken)."""
    resting = facts.harness in {HarnessState.DEAD, HarnessState.ENDED}
    if facts.hibernated is None or not resting or not facts.here:
        return None
    return ItemStatus(state=ItemState.HIBERNATED, since=facts.hibernated)


def held_status(facts: Facts) -> ItemStatus | None:
    """The first rule of the store's that holds: what holds the item's comments (stop, close, pause,
    a park, a request, no slot), then a comment given up; None when none does (what the harness
    does then says the state: `status` and `why`, which read the store alone, say none)."""
    return next((found for rule in _RULES if (found := rule(facts)) is not None), None)


def _held_by_a_control(facts: Facts) -> ItemStatus | None:
    """A stop says more than the close it made; a close more than a pause."""
    flags = ((facts.stopped, ItemState.STOPPED), (facts.closed, ItemState.CLOSED), (facts.paused, ItemState.PAUSED))
    return next((ItemStatus(state=state, held=facts.held) for on, state in flags if on), None)


def _parked(facts: Facts) -> ItemStatus | None:
    park = facts.parked
    if park is None:
        return None
    return ItemStatus(state=ItemState.PARKED, since=park.since, until=park.until, why=park.cause, held=facts.held)


def _waiting_slot(facts: Facts) -> ItemStatus | None:
    if facts.slot_since is None:
        return None
    return ItemStatus(state=ItemState.WAITING_SLOT, since=facts.slot_since, held=facts.held)


def _abandoned(facts: Facts) -> ItemStatus | None:
    gone = facts.abandoned
    if gone is None:
        return None
    return ItemStatus(state=ItemState.ABANDONED, since=gone.at, why=f"comment {gone.comment_id}", held=facts.held)


def _blocked(facts: Facts) -> ItemStatus | None:
    """A request open on the item, or its agent's receipts saying it waits (a dialog asks nothing on the item)."""
    waiting = facts.waiting
    if facts.asked is None and waiting is None:
        return None
    on = _on(waiting) if waiting is not None else ""
    since = facts.asked.since if facts.asked is not None else waiting.since if waiting is not None else None
    request = facts.asked.number if facts.asked is not None else None
    return ItemStatus(state=ItemState.BLOCKED, since=since, why=on, request=request, held=facts.held)


def _on(waiting: Waiting) -> str:
    """What a blocked agent waits on, in a few words."""
    return " ".join(part for part in ("on", waiting.on.value, waiting.tool) if part)


_RULES: tuple[Callable[[Facts], ItemStatus | None], ...] = (
    _held_by_a_control,
    _parked,
    _blocked,
    _waiting_slot,
    _abandoned,
)


def _harness(facts: Facts) -> ItemState:
    if not facts.session:
        return ItemState.NONE
    if not facts.here:
        return ItemState.ELSEWHERE
    return ItemState(facts.harness.value)


def needs_attention(statuses: Mapping[str, ItemStatus | None]) -> dict[str, ItemStatus]:
    """The items someone should look at, of those the store says something of."""
    return {item: s for item, s in statuses.items() if s is not None and s.attention}


def at(moment: datetime) -> str:
    """A moment as every state line says it."""
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def states_table() -> str:
    """docs/operating.md's table of the states (a unit test keeps the doc equal to it)."""
    rows = [f"| **{m.badge}** | {m.tone.value} | {m.means} | {m.do} |" for m in MEANINGS.values()]
    return "\n".join(["| state | tone | means | do |", "|---|---|---|---|", *rows])
