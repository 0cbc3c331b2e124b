"""The poller daemon: one per state root, a heartbeat per cycle, a clean stop on a signal."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from app.poll import CycleSummary, PollCycle
from domain.events import Event, Level
from domain.ports import ClockPort, EventSink, StateStore

HEARTBEAT = "heartbeat"


class Lock(Protocol):
    def acquire(self, info: dict[str, Any]) -> None: ...

    def release(self) -> None: ...


class Blocked(Exception):
    """Another poller holds the state root."""


@dataclass
class Daemon:
    cycle: PollCycle
    store: StateStore
    events: EventSink
    clock: ClockPort
    lock: Lock
    interval_seconds: float
    version: str
    report: Callable[[str], None] = lambda line: None
    wait: Callable[[float], object] | None = None  # how the pause between cycles is taken

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self.cycle.stopping = self._stop.is_set
        self._wait = self.wait or self._stop.wait

    def stop(self, signum: int = 0, frame: FrameType | None = None) -> None:
        """Finish the item in hand, then stop: the cycle checks this between items."""
        self._stop.set()

    def run(self, *, once: bool = False, held_by: Callable[[], str] = lambda: "") -> int:
        started = self.clock.now().isoformat()
        try:
            self.lock.acquire({"pid": os.getpid(), "started": started, "version": self.version})
        except Exception as error:
            self.events.emit(Event.POLLER_BLOCKED, level=Level.ERROR, cause=str(error))
            raise Blocked(str(error)) from error
        try:
            self.events.emit(Event.POLLER_STARTED, pid=os.getpid(), once=once, version=self.version)
            while not self._stop.is_set():
                summary = self.cycle.run()
                self._heartbeat(summary, started)
                self.report(f"cycle {summary.line()}")
                if once:
                    break
                # the interval is counted after each cycle, so a slow cycle never overlaps the next
                self._wait(max(self.interval_seconds, summary.min_interval_seconds))
            self.events.emit(Event.POLLER_STOPPED, pid=os.getpid(), once=once)
        finally:
            self.lock.release()
        return 0

    def _heartbeat(self, summary: CycleSummary, started: str) -> None:
        beat = {
            "pid": os.getpid(),
            "started": started,
            "interval_seconds": self.interval_seconds,
            "last_cycle_started": summary.started_at.isoformat(),
            "last_cycle_finished": (summary.finished_at or summary.started_at).isoformat(),
            "summary": summary.fields(),
        }
        self.store.save_meta(HEARTBEAT, json.dumps(beat))


def install_signal_handlers(daemon: Daemon) -> None:
    signal.signal(signal.SIGTERM, daemon.stop)
    signal.signal(signal.SIGINT, daemon.stop)
