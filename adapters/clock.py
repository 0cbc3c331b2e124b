"""The system clock: the one place wall time is read."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from domain.ports import ClockPort

_BOOTTIME = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)  # Linux; elsewhere the monotonic clock


class SystemClock(ClockPort):
    def now(self) -> datetime:
        return datetime.now(UTC)  # noqa: TID251 - the clock adapter is where time is read

    def monotonic(self) -> float:
        # BOOTTIME, not MONOTONIC: a machine suspended meanwhile has let that time pass too
        return time.clock_gettime(_BOOTTIME)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def epoch(self) -> float:
        return time.time()  # noqa: TID251 - the clock adapter is where time is read
