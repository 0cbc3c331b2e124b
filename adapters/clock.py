"""The system clock: the one place wall time is read."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from domain.ports import ClockPort


class SystemClock(ClockPort):
    def now(self) -> datetime:
        return datetime.now(UTC)  # noqa: TID251 - the clock adapter is where time is read

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def epoch(self) -> float:
        return time.time()  # noqa: TID251 - the clock adapter is where time is read

    def monotonic(self) -> float:
        return time.monotonic()
