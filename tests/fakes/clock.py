"""A clock that moves only when told to (sleep advances it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.ports import ClockPort


class FakeClock(ClockPort):
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
        self.slept: list[float] = []
        self.start = self.current

    def now(self) -> datetime:
        return self.current

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> datetime:
        self.current += timedelta(seconds=seconds)
        return self.current

    def epoch(self) -> float:
        return self.current.timestamp()

    def monotonic(self) -> float:
        return (self.current - self.start).total_seconds()
