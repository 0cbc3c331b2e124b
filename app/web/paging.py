"""The events list a page at a time, newest first. A page is found by a record's place in the
log (the feed's sequence number), not by a count from the newest: while new records arrive, an
older page keeps showing the same records, and its buttons lead where they said."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

EVENTS_PER_PAGE = 20

Numbered = tuple[int, Mapping[str, Any]]  # (sequence number, record), as the feed holds them


@dataclass(frozen=True, slots=True)
class EventsPage:
    shown: tuple[Numbered, ...]  # newest first
    older: int | None  # `before` for the next older page; None: nothing older
    newer: int | None  # `after` for the next newer page; None: this is the newest


def events_page(
    records: Sequence[Numbered], *, size: int = EVENTS_PER_PAGE, before: int | None = None, after: int | None = None
) -> EventsPage:
    """`records` oldest first; the page of `size` just before `before`, or just after `after`
    (when fewer than a page are newer, the newest page), or else the newest."""
    if before is not None:
        kept = [r for r in records if r[0] < before][-size:]
    elif after is not None and len(newer := [r for r in records if r[0] > after]) > size:
        kept = newer[:size]
    else:
        kept = list(records[-size:])
    if not kept:
        return EventsPage((), None, None)
    first, last = kept[0][0], kept[-1][0]
    return EventsPage(
        tuple(reversed(kept)),
        older=first if records[0][0] < first else None,
        newer=last if records[-1][0] > last else None,
    )
