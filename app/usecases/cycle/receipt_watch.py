"""The agents' receipts, watched beside the cycle on a thread of the daemon's own: what they ask is
posted and a turn that ended is said within a look's interval, whether a cycle runs or the daemon
pauses; neither waits for the other."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence


class ReceiptWatch:
    def __init__(self, looks: Sequence[Callable[[], object]], *, every: float, stopping: Callable[[], bool]) -> None:
        self._looks = tuple(looks)
        self._every = every
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
        while not self._ended.wait(self._every):
            for look in self._looks:
                if self._stopping() or self._ended.is_set():
                    return
                with contextlib.suppress(Exception):  # the next cycle meets the same fault, and says it
                    look()
