"""The agents' receipts, watched beside the cycle on a thread of the daemon's own: what they ask is
posted and a turn that ended is said within its look's interval, whether a cycle runs or the
daemon pauses; neither waits for the other."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.usecases.cycle.trouble import cause_of
from domain.events import Event, Level
from domain.ports import EventSink

Fault = tuple[type[BaseException], str]  # an error's type and its words: a fault that repeats is this again


@dataclass(frozen=True, slots=True)
class Look:
    """One look at the receipts: its name in the event log, what it does, and how often (seconds)."""

    name: str
    take: Callable[[], object]
    every: float


class ReceiptWatch:
    def __init__(self, looks: Sequence[Look], *, events: EventSink, stopping: Callable[[], bool]) -> None:
        self._looks = tuple(looks)
        self._events = events
        self._stopping = stopping
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None
        self._faults: dict[str, Fault] = {}  # each failing look's fault, already said

    def start(self) -> None:
        if self._looks:
            self._thread = threading.Thread(target=self._watch, name="receipts", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """After the look in hand: nothing is started on an item's lane once this returns."""
        self._ended.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        # on the machine's clock, whatever the daemon's clock is (as the pause between cycles)
        due = [time.monotonic() + look.every for look in self._looks]
        while not self._ended.wait(max(0.0, min(due) - time.monotonic())):
            for index, look in enumerate(self._looks):
                if self._stopping() or self._ended.is_set():
                    return
                if time.monotonic() < due[index]:
                    continue
                due[index] = time.monotonic() + look.every
                self._take(look)

    def _take(self, look: Look) -> None:
        """A look that fails is said once for its fault (each 0.25 s would flood the log) until it
        succeeds again; the cycle may never meet that fault, so the watch is the one to say it."""
        try:
            look.take()
        except Exception as error:  # one look's fault never stops the others
            fault = (type(error), str(error))
            if self._faults.get(look.name) != fault:
                with contextlib.suppress(OSError):  # a log that cannot be written: said at the look's next fault
                    self._events.emit(
                        Event.RECEIPTS_LOOK_FAILED, level=Level.WARNING, look=look.name, cause=cause_of(error)
                    )
                    self._faults[look.name] = fault
        else:
            self._faults.pop(look.name, None)
