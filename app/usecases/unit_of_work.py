"""The unit of work a use case writes with: the store, the event log and the clock, and the one
way a save that lost to another writer is settled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from domain.errors import StaleWrite
from domain.ports import ClockPort, EventSink, StateStore

T = TypeVar("T")


class Lost(Enum):
    """What a save that lost its last try leaves to its caller."""

    STORED = "stored"  # what is stored now decides: it is handed back, unsaved
    RAISE = "raise"  # the conflict goes up to the cycle, which re-reads and decides again later


@dataclass(frozen=True, slots=True)
class Saved(Generic[T]):
    value: T | None  # what is stored now: what this save wrote, or what another writer left (None: nothing)
    won: bool  # this save landed


@dataclass(frozen=True, slots=True)
class UnitOfWork:
    store: StateStore
    events: EventSink
    clock: ClockPort

    def save(
        self,
        decide: Callable[[T], T],
        *,
        read: Callable[[], T | None],
        value: T | None = None,
        tries: int = 1,
        again: Callable[[T], bool] = lambda _stored: True,
        lost: Lost = Lost.STORED,
    ) -> Saved[T]:
        """`decide(value)` decides from `value` (what is stored, `read` first when none is in hand)
        and saves, returning what it saved. When another writer saved first (`StaleWrite`), what
        is stored now is read: decided on again while `tries` are left and `again` wants it, else
        handed back unsaved (`Lost.RAISE`: once the last try lost, the conflict is raised)."""
        current = read() if value is None else value
        for left in range(tries, 0, -1):
            if current is None:
                break
            try:
                return Saved(decide(current), won=True)
            except StaleWrite:
                if left == 1 and lost is Lost.RAISE:
                    raise
                current = read()
                if current is None or not again(current):
                    break
        return Saved(current, won=False)


class InUnitOfWork:
    """A use case that writes through its unit of work: its store, events and clock are the unit's."""

    uow: UnitOfWork

    @property
    def store(self) -> StateStore:
        return self.uow.store

    @property
    def events(self) -> EventSink:
        return self.uow.events

    @property
    def clock(self) -> ClockPort:
        return self.uow.clock
