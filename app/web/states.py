"""The words the page shows for an item's state and a comment's journey: one mapping entry each,
so a new state (blocked on permission, waiting for an answer, parked until …) is one line here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Shown:
    label: str
    tone: str  # a CSS class: ok, busy, warn, bad, off


STATES: dict[str, Shown] = {
    "starting": Shown("starting", "busy"),
    "ready": Shown("ready", "ok"),
    "busy": Shown("busy", "busy"),
    "tool": Shown("busy (tool)", "busy"),
    "idle": Shown("idle", "ok"),
    "blocked": Shown("blocked", "warn"),
    "ended": Shown("ended", "off"),
    "dead": Shown("dead", "bad"),
    "unknown": Shown("unknown", "off"),
    "closed": Shown("closed", "off"),
    "paused": Shown("paused", "warn"),
    "elsewhere": Shown("on another host", "off"),
    "none": Shown("no session", "off"),
}

HOST_TONES = {"alive": "ok", "stopped": "off", "lost": "bad"}


def shown(state: str) -> Shown:
    return STATES.get(state, Shown(state, "off"))


@dataclass(frozen=True, slots=True)
class Step:
    label: str
    tone: str
    ends: bool = False  # the journey is over with it


# event name -> the journey step it is; fields of the record fill `{…}` in the label
JOURNEY: dict[str, Step] = {
    "webhook.received": Step("seen (webhook)", "ok"),
    "dispatch.queued": Step("queued", "ok"),
    "dispatch.failed": Step("attempt {attempt} failed: {reason}", "warn"),
    "dispatch.pasted": Step("attempt {attempt}: pasted", "busy"),
    "dispatch.unconfirmed": Step("attempt {attempt}: unconfirmed", "warn"),
    "dispatch.confirmed": Step("confirmed ({confirmed_by})", "ok"),
    "session.turn_finished": Step("turn ended", "ok", ends=True),
    "dispatch.dropped": Step("skipped: {reason}", "off", ends=True),
    "poll.comment_failed": Step("abandoned after {attempts} attempts", "bad", ends=True),
    "poll.not_for_agent": Step("skipped: not for the agent", "off", ends=True),
    "control.executed": Step("control: {verb}", "ok", ends=True),
}
