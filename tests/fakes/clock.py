"""A clock that moves only when told to (sleep advances it); `jump` sets its wall time alone, as NTP
or an operator would, while its monotonic reading goes on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from domain.ports import ClockPort


class FakeClock(ClockPort):
    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
        self.ticks = 1000.0  # the monotonic reading: seconds since an imaginary boot
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self.current

    def monotonic(self) -> float:
        return self.ticks

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds)

    def advance(self, seconds: float) -> datetime:
        self.current += timedelta(seconds=seconds)
        self.ticks += seconds
        return self.current

    def jump(self, seconds: float) -> datetime:
        """Wall time alone moves (back, with a negative `seconds`); no time passes."""
        self.current += timedelta(seconds=seconds)
        return self.current

    def epoch(self) -> float:
        return self.current.timestamp()
