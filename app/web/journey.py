"""Each comment's journey, read from the item's events: seen → queued → attempt n → pasted →
confirmed → turn ended (or failed, abandoned, skipped and why), with the time between steps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.web.states import JOURNEY, Step
from domain.events import Event


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

    @property
    def last(self) -> str:
        return self.stops[-1].label if self.stops else ""


def journeys(records: Iterable[Mapping[str, Any]]) -> list[Journey]:
    """One journey per comment, in the order the comments were first seen."""
    found: dict[str, list[Stop]] = {}
    for record in records:
        event = Event.named(record.get("event"))
        step = JOURNEY.get(event) if event else None
        comment = record.get("comment_id")
        if step is None or not comment:
            continue
        stops = found.setdefault(str(comment), [])
        at = _at(record.get("ts"))
        if not stops and event is not Event.WEBHOOK_RECEIVED:
            stops.append(Stop("seen (poll)", "ok", at, None))
        before = stops[-1].at if stops else None
        after = (at - before).total_seconds() if at and before else None
        stops.append(Stop(_label(step, record), step.tone, at, after))
    return [Journey(comment, tuple(stops)) for comment, stops in found.items()]


def _label(step: Step, record: Mapping[str, Any]) -> str:
    try:
        return step.label.format_map({k: v for k, v in record.items() if v is not None})
    except (KeyError, ValueError, IndexError):
        return step.label.split(":")[0].replace(" {attempt}", "").replace("{attempts} ", "")


def _at(ts: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(ts))
    except ValueError:
        return None
