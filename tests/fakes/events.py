"""An event sink that keeps what was emitted, for asserting on the log's end state."""

from __future__ import annotations

import threading
from typing import Any

from domain.events import Event, Level
from domain.ports import EventSink


class RecordingEvents(EventSink):
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def emit(self, event: Event, *, level: Level = Level.INFO, source: str = "poller", **fields: Any) -> None:
        with self._lock:
            self.records.append({"event": event.value, "level": level.value, "source": source, **fields})

    def named(self, event: Event) -> list[dict[str, Any]]:
        return [r for r in self.records if r["event"] == event.value]

    def names(self) -> list[Event]:
        return [Event(r["event"]) for r in self.records]
