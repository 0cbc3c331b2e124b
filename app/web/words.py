"""How the page says a time and an event's fields: the clock time in UTC and how long ago, the
exact time on hover; each field's name in words, never the log's `snake_case` key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from typing import Any

from domain.durations import duration

# the fields every row already shows in a column of its own
SHOWN_APART = frozenset({"ts", "event", "work_item", "level"})
# a key whose words are not its own parts: the rest read with `_` as a space
_WORDS = {
    "ts": "time",
    "work_item": "item",
    "comment_id": "comment",
    "cwd": "folder",
    "pid": "process id",
}
_UNITS = {"_seconds": "seconds", "_ms": "ms"}


@dataclass(frozen=True, slots=True)
class Moment:
    shown: str  # `12:03:05 (2 min ago)`; another day's with its date
    exact: str  # `2026-12-06 12:03:05 UTC`: on hover
    iso: str  # for `<time datetime>`


def moment(then: datetime, *, now: datetime) -> Moment:
    """`then` in UTC, how long before `now` (the caller's clock, read once)."""
    at = then.astimezone(UTC)
    seconds = (now - at).total_seconds()
    if int(abs(seconds)) == 0:
        ago = "just now"
    elif seconds > 0:
        ago = f"{duration(seconds, parts=1, spoken=True)} ago"
    else:
        ago = f"in {duration(-seconds, parts=1, spoken=True)}"
    clock = f"{at:%H:%M:%S}" if at.date() == now.astimezone(UTC).date() else f"{at:%Y-%m-%d %H:%M:%S}"
    return Moment(f"{clock} ({ago})", f"{at:%Y-%m-%d %H:%M:%S} UTC", at.isoformat())


def time_tag(then: datetime | str | None, *, now: datetime) -> str:
    """A `<time>` showing `moment`, its exact time in the title; a record's time that is no time
    (a hand-edited log) as it was written, escaped."""
    if then is None or then == "":
        return "–"
    if isinstance(then, str):
        try:
            at = datetime.fromisoformat(then)
        except ValueError:
            return escape(then)
    else:
        at = then
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)  # the log writes UTC; an older line may not say so
    said = moment(at, now=now)
    return f'<time datetime="{escape(said.iso)}" title="{escape(said.exact)}">{escape(said.shown)}</time>'


def field_name(key: str) -> str:
    """A record's key in words: `confirmed_by` is `confirmed by`, `wait_seconds` `wait (seconds)`."""
    if key in _WORDS:
        return _WORDS[key]
    for suffix, unit in _UNITS.items():
        if key.endswith(suffix) and key != suffix:
            return f"{field_name(key.removesuffix(suffix))} ({unit})"
    return key.replace("_", " ").strip()


def labelled(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """An event's own fields, each with its name in words, in the order it was written."""
    return [(field_name(key), _value(value)) for key, value in record.items() if key not in SHOWN_APART]


def _value(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
