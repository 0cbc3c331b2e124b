"""A daemon's failing cycles: counted, said on stderr and in the event log, and written into the
poller lock (what `status` reads), so a state folder that cannot be written is still reported."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from domain.events import Event, Level
from domain.ports import EventSink

CAUSE_MAX = 500  # characters of a cause kept in the lock: it is rewritten in place, within its size


class Notes(Protocol):
    def note(self, info: dict[str, Any]) -> None:
        """Replace what the lock says about its holder. Never fails: a disk that cannot be written
        keeps the old words."""


@dataclass
class Trouble:
    """Consecutive failed cycles since the last good one."""

    events: EventSink
    lock: Notes
    report: Callable[[str], None]
    info: dict[str, Any]  # what the lock says about its holder (pid, started, version)
    cycles: int = 0
    since: datetime | None = None

    def failed(self, error: Exception, *, at: datetime, pause: float) -> None:
        self.cycles += 1
        self.since = self.since or at
        cause = cause_of(error)
        self.events.emit(Event.POLLER_CYCLE_FAILED, level=Level.ERROR, cause=cause, cycles=self.cycles)
        self.report(f"cycle failed ({self.cycles} in a row), the next in {pause:g}s: {cause}")
        failing = {"since": self.since.isoformat(), "cycles": self.cycles, "cause": cause[:CAUSE_MAX]}
        self.lock.note({**self.info, "failing": failing})

    def cleared(self) -> None:
        if self.cycles:
            self.report(f"cycles succeed again after {self.cycles} failed")
            self.cycles, self.since = 0, None
            self.lock.note(dict(self.info))


def cause_of(error: Exception) -> str:
    """An error as an event's `cause`: its type and its words on one line, nothing a terminal would
    act on (it is shown by `status`, `events` and on stderr)."""
    return "".join(c if c.isprintable() else " " for c in f"{type(error).__name__}: {error}")
