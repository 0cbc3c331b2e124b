"""The words the page shows for an item's state and a comment's journey. An item's badge word and
tone are the domain's (`domain.fleet.MEANINGS`): the page adds only the colour of each tone."""

from __future__ import annotations

from dataclasses import dataclass

from domain.events import Event
from domain.fleet import ItemState, Tone


@dataclass(frozen=True, slots=True)
class Shown:
    label: str
    tone: str  # a CSS class: ok, busy, warn, bad, off


TONES = {Tone.HEALTHY: "ok", Tone.ATTENTION: "warn", Tone.ENDED: "off"}
STATES: dict[ItemState, Shown] = {state: Shown(state.meaning.badge, TONES[state.meaning.tone]) for state in ItemState}

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
