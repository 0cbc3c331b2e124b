"""The words the page shows for an item's state and a comment's journey: one mapping entry each,
so a new state (blocked on permission, waiting for an answer, parked until …) is one line here."""

from __future__ import annotations

from dataclasses import dataclass

from domain.events import Event
from domain.fleet import ItemState


@dataclass(frozen=True, slots=True)
class Shown:
    label: str
    tone: str  # a CSS class: ok, busy, warn, bad, off


STATES: dict[ItemState, Shown] = {
    ItemState.STARTING: Shown("starting", "busy"),
    ItemState.READY: Shown("ready", "ok"),
    ItemState.BUSY: Shown("busy", "busy"),
    ItemState.TOOL: Shown("busy (tool)", "busy"),
    ItemState.IDLE: Shown("idle", "ok"),
    ItemState.BLOCKED: Shown("blocked", "warn"),
    ItemState.ENDED: Shown("ended", "off"),
    ItemState.DEAD: Shown("dead", "bad"),
    ItemState.UNKNOWN: Shown("unknown", "off"),
    ItemState.CLOSED: Shown("closed", "off"),
    ItemState.PAUSED: Shown("paused", "warn"),
    ItemState.ELSEWHERE: Shown("on another host", "off"),
    ItemState.NONE: Shown("no session", "off"),
}

HOST_TONES = {"alive": "ok", "stopped": "off", "lost": "bad"}


def shown(state: ItemState) -> Shown:
    return STATES[state]


@dataclass(frozen=True, slots=True)
class Step:
    label: str
    tone: str
    ends: bool = False  # the journey is over with it
    then: Step | None = None  # a second step the same event makes (a failed turn parks its item)


# event -> the journey step it is; fields of the record fill `{…}` in the label
JOURNEY: dict[Event, Step] = {
    Event.WEBHOOK_RECEIVED: Step("seen (webhook)", "ok"),
    Event.DISPATCH_QUEUED: Step("queued", "ok"),
    Event.DISPATCH_FAILED: Step("attempt {attempt} failed: {reason}", "warn"),
    Event.DISPATCH_PASTED: Step("attempt {attempt}: pasted", "busy"),
    Event.DISPATCH_UNCONFIRMED: Step("attempt {attempt}: unconfirmed", "warn"),
    Event.DISPATCH_CONFIRMED: Step("confirmed ({confirmed_by})", "ok"),
    Event.SESSION_TURN_FINISHED: Step("turn ended", "ok", ends=True),
    Event.DISPATCH_DROPPED: Step("skipped: {reason}", "off", ends=True),
    Event.POLL_COMMENT_FAILED: Step("abandoned after {attempts} attempts", "bad", ends=True),
    Event.POLL_NOT_FOR_AGENT: Step("skipped: not for the agent", "off", ends=True),
    Event.CONTROL_EXECUTED: Step("control: {verb}", "ok", ends=True),
    Event.COMMENT_HELD: Step("held: {rule}", "warn"),
    # the turn's request, and its answer: `asked`, `by` and `after` are made by app/web/journey.py
    Event.SESSION_ASKED: Step("asked request {request}: {asked}", "warn"),
    Event.SESSION_ANSWERED: Step("request {request}: {answer}{by}{after}", "ok"),
    Event.SESSION_ANSWERED_IN_PANE: Step("request {request}: answered in the session", "ok"),
    Event.SESSION_PARKED: Step(
        "turn failed: {cause}", "bad", ends=True, then=Step("parked: until {until} ({rule})", "warn", ends=True)
    ),
    Event.SESSION_UNPARKED: Step("resumed: {by}", "ok"),
}
