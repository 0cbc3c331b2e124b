"""What the fleet page shows of the turns' costs: each item's running total, the last days (UTC) one by
one and the dearest items of those days — from the store's cost rows alone, kept as they are read.

The page asks on every refresh, and a refresh comes with every event while it is open: so the first
read takes every row, and each later one only the rows ended since the newest seen, less OVERLAP
(what another host wrote a little late, or by a clock a little behind, is read then; a row read
twice is counted once: rows are never changed once written). Every FULL_EVERY all are read again,
so a row written by a clock further behind is counted within that time."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from app.usecases.views.costs import Tally, dearest, tallied
from domain.spending import TurnCost

DAYS = 14  # the panel's days, today (UTC) the last
TOP = 5  # the dearest items of those days
OVERLAP = timedelta(minutes=15)
FULL_EVERY = timedelta(hours=1)

Read = Callable[[datetime | None], list[TurnCost]]  # the store's rows ended at a time or later (None: all)


@dataclass(frozen=True, slots=True)
class PageCosts:
    """The figures: `items` every item's running total (by `str(item)`, since its first turn); `days`
    each of the last DAYS days, oldest first, a day without a turn too; `top` the dearest items of
    those days (then by tokens), at most TOP. Money in them is estimated (`domain.pricing`)."""

    items: Mapping[str, Tally]
    days: tuple[Tally, ...]
    top: tuple[Tally, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "estimated": True,
            "days": [day.as_json() for day in self.days],
            "top": [item.as_json() for item in self.top],
        }


def first_day(now: datetime) -> datetime:
    """When the first of the panel's DAYS days began (UTC): today is the last."""
    at = now.astimezone(UTC)
    return datetime(at.year, at.month, at.day, tzinfo=UTC) - timedelta(days=DAYS - 1)


class CostBook:
    """The rows as far as they were read: every item's total, the panel's days' and their items' — and
    the rows of those days (and of the overlap before the newest: a later read returns them again),
    each counted once by its item and comment. Shared by the page's handler threads."""

    def __init__(self, read: Read) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._full_at: datetime | None = None
        self._forget_all()

    def _forget_all(self) -> None:
        self._items: dict[str, Tally] = {}  # since each item's first turn
        self._days: dict[str, Tally] = {}  # from `_first` on
        self._dearest: dict[str, Tally] = {}  # each item's, from `_first` on
        self._lately: dict[tuple[str, str], TurnCost] = {}
        self._newest: datetime | None = None
        self._first: datetime | None = None
        self._shown: PageCosts | None = None

    def figures(self, now: datetime) -> PageCosts:
        """What the page shows now, after one read of the store: every row the first time and every
        FULL_EVERY, else those ended since the newest seen, less OVERLAP."""
        with self._lock:
            if self._full_at is None or not timedelta(0) <= now - self._full_at < FULL_EVERY:
                self._forget_all()
                self._full_at = now
            since = None if self._newest is None else self._newest - OVERLAP
            fresh = [cost for cost in self._read(since) if (str(cost.item), cost.comment_id) not in self._lately]
            new_day = first_day(now) != self._first  # or the first read
            if new_day:
                self._begin(first_day(now))
            for cost in fresh:
                self._add(cost)
            if fresh or new_day or self._shown is None:
                self._shown = self._figures()
            return self._shown

    def _begin(self, first: datetime) -> None:
        """The panel's days from `first`, from the rows kept; those before both it and the overlap
        are let go (no later read returns them)."""
        kept = first if self._newest is None else min(first, self._newest - OVERLAP)
        self._lately = {key: cost for key, cost in self._lately.items() if cost.ended_at >= kept}
        shown = [cost for cost in self._lately.values() if cost.ended_at >= first]
        self._days = {tally.key: tally for tally in tallied(shown, "day")}
        self._dearest = {tally.key: tally for tally in tallied(shown, "item")}
        self._first = first

    def _add(self, cost: TurnCost) -> None:
        item = str(cost.item)
        self._lately[item, cost.comment_id] = cost
        self._items[item] = self._items.get(item, Tally(item)).add(cost)
        self._newest = cost.ended_at if self._newest is None else max(self._newest, cost.ended_at)
        if self._first is not None and cost.ended_at >= self._first:
            day = f"{cost.ended_at.astimezone(UTC):%Y-%m-%d}"
            self._days[day] = self._days.get(day, Tally(day)).add(cost)
            self._dearest[item] = self._dearest.get(item, Tally(item)).add(cost)

    def _figures(self) -> PageCosts:
        assert self._first is not None
        keys = [f"{self._first + timedelta(days=n):%Y-%m-%d}" for n in range(DAYS)]
        days = tuple(self._days.get(key, Tally(key)) for key in keys)
        return PageCosts(dict(self._items), days, tuple(dearest(self._dearest.values())[:TOP]))
