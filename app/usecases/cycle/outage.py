"""The state store's database away: no delivery is counted meanwhile, the sessions run on, and the
cycle is tried again after a wait that doubles up to a cap; said once when it starts, once when it
ends (each failed cycle is also a failed cycle, noted in the poller lock for `status`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from domain.errors import StoreUnreachable
from domain.events import Event, Level
from domain.ports import ClockPort, EventSink

MAX_BACKOFF_SECONDS = 60.0  # the longest wait between tries while the database cannot be reached


@dataclass
class StoreOutage:
    events: EventSink
    clock: ClockPort
    interval_seconds: float
    since: datetime | None = None
    tries: int = 0

    def failed(self, error: StoreUnreachable) -> float:
        """One more failed try; the seconds to wait before the next."""
        if self.since is None:
            self.since = self.clock.now()
        retry = float(min(self.interval_seconds * 2**self.tries, max(self.interval_seconds, MAX_BACKOFF_SECONDS)))
        if self.tries == 0:
            self.events.emit(Event.STORE_UNREACHABLE, level=Level.ERROR, cause=str(error), retry_seconds=retry)
        self.tries += 1
        return retry

    def ended(self) -> bool:
        """The database answered again: True when it had been away."""
        if self.since is None:
            return False
        seconds = (self.clock.now() - self.since).total_seconds()
        self.events.emit(Event.STORE_REACHABLE, unreachable_seconds=round(seconds, 3))
        self.since, self.tries = None, 0
        return True
