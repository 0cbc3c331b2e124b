"""Each comment's journey, read from the item's events: seen → queued → attempt n → pasted →
confirmed → the request its turn made and who answered it → turn ended (or failed and parked,
then resumed; held; abandoned, skipped and why), with the time between steps; and who wrote the
comment, a short excerpt of it and its address, as the events that took it in said them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.web.states import JOURNEY, Step
from domain.durations import duration
from domain.events import Event

# what happens to the item while a delivered comment's turn runs: that comment's story
_OF_THE_TURN = {Event.SESSION_ASKED, Event.SESSION_ANSWERED, Event.SESSION_ANSWERED_IN_PANE}
_STARTS_A_TURN = {Event.DISPATCH_PASTED, Event.DISPATCH_CONFIRMED}
_ABOUT = ("author", "excerpt", "url")  # what the events that took a comment in say of it


@dataclass(frozen=True, slots=True)
class Stop:
    label: str
    tone: str
    at: datetime | None
    after_seconds: float | None  # since the step before


@dataclass(frozen=True, slots=True)
class Journey:
    comment_id: str
    stops: tuple[Stop, ...]
    author: str = ""  # the tracker's login; untrusted, like the excerpt: the page escapes both
    excerpt: str = ""  # its first words, sanitized when they were logged
    url: str = ""  # its address on the tracker ("": none logged)

    @property
    def last(self) -> str:
        return self.stops[-1].label if self.stops else ""


@dataclass(slots=True)
class _Trail:
    stops: list[Stop] = field(default_factory=list)
    about: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Reading:
    found: dict[str, _Trail] = field(default_factory=dict)
    turn: str = ""  # the comment whose turn runs now
    asked: dict[Any, datetime] = field(default_factory=dict)  # a request's number -> when it was asked

    def add(self, comment: str, step: Step, record: Mapping[str, Any], event: Event) -> None:
        trail = self.found.setdefault(comment, _Trail())
        at = _at(record.get("ts"))
        if not trail.stops and event is not Event.WEBHOOK_RECEIVED:
            trail.stops.append(Stop("seen (poll)", "ok", at, None))
        for key in _ABOUT:
            if record.get(key) and key not in trail.about:
                trail.about[key] = str(record[key])
        filled = self._filled(record, event, at)
        while True:
            before = trail.stops[-1].at if trail.stops else None
            after = (at - before).total_seconds() if at and before else None
            trail.stops.append(Stop(_label(step, filled), step.tone, at, after))
            if step.then is None:
                break
            step = step.then

    def _filled(self, record: Mapping[str, Any], event: Event, at: datetime | None) -> dict[str, Any]:
        """The record's fields, and the words a label makes of them."""
        filled = {k: v for k, v in record.items() if v is not None}
        kind, tool = record.get("kind"), record.get("tool")
        filled["asked"] = f"permission to use {tool}" if kind == "permission" and tool else kind or "?"
        if record.get("source") == "page":
            filled["by"] = " from the page"
        elif record.get("author"):
            filled["by"] = f" by @{record['author']}"
        elif event is Event.SESSION_ANSWERED:
            filled["by"] = ""
        waited = record.get("waited_seconds")
        asked_at = self.asked.get(record.get("request"))
        if waited is None and asked_at is not None and at is not None:
            waited = (at - asked_at).total_seconds()
        filled["after"] = f" after {duration(float(waited), parts=1)}" if isinstance(waited, int | float) else ""
        until = _at(record.get("until")) if record.get("until") else None
        filled["until"] = f"{until:%H:%M:%S} UTC" if until else "an operator resumes it"
        return filled


def journeys(records: Iterable[Mapping[str, Any]]) -> list[Journey]:
    """One journey per comment, in the order the comments were first seen. What happens to the
    item during a turn (a request asked and answered) is on the journey of the comment whose turn
    it is; an answer comment's own journey says which request it answered."""
    reading = _Reading()
    for record in records:
        event = Event.named(record.get("event"))
        step = JOURNEY.get(event) if event else None
        if event is None or step is None:
            continue
        comment = str(record.get("comment_id") or "")
        asked_at = _at(record.get("ts")) if event is Event.SESSION_ASKED else None
        if asked_at is not None:
            reading.asked.setdefault(record.get("request"), asked_at)
        if event in _OF_THE_TURN and reading.turn and reading.turn != comment:
            reading.add(reading.turn, step, record, event)
        resumed = record.get("comments") if event is Event.SESSION_UNPARKED else None
        for each in resumed if isinstance(resumed, list) else ():
            reading.add(str(each), step, record, event)
        if comment:
            reading.add(comment, step, record, event)
        if event in _STARTS_A_TURN and comment:
            reading.turn = comment
        elif step.ends and comment == reading.turn:
            reading.turn = ""
    return [
        Journey(comment, tuple(trail.stops), **{k: trail.about.get(k, "") for k in _ABOUT})
        for comment, trail in reading.found.items()
    ]


def _label(step: Step, filled: Mapping[str, Any]) -> str:
    try:
        return step.label.format_map(filled)
    except (KeyError, ValueError, IndexError):
        return step.label.split(":")[0].replace(" {attempt}", "").replace("{attempts} ", "")


def _at(ts: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(ts))
    except ValueError:
        return None
