"""The agents' receipts, watched beside the cycle on a thread of the daemon's own: what they ask is
posted and a turn that ended is said within its look's interval, whether a cycle runs or the
daemon pauses; neither waits for the other."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence

Look = tuple[Callable[[], object], float]  # a look, and how often (seconds) it is taken


class ReceiptWatch:
    def __init__(self, looks: Sequence[Look], *, stopping: Callable[[], bool]) -> None:
        self._looks = tuple(looks)
        self._stopping = stopping
        self._ended = threading.Event()
        self._thread: threading.Thread | None = None

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
        due = [time.monotonic() + every for _, every in self._looks]
        while not self._ended.wait(max(0.0, min(due) - time.monotonic())):
            for index, (look, every) in enumerate(self._looks):
                if self._stopping() or self._ended.is_set():
                    return
                if time.monotonic() < due[index]:
                    continue
                due[index] = time.monotonic() + every
                with contextlib.suppress(Exception):  # the next cycle meets the same fault, and says it
                    look()
