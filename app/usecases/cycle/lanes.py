"""Each work item's lane: its work runs beside the poll cycle, one run at a time per item, again
when asked meanwhile, and again when a pasted prompt's confirmation falls due.

A lane is a thread of its own while its item has work (a wait for a harness to get ready, a
confirmation that falls due later): the cycle that asked for it goes on reading and delivering
to other items. At most `limit` items are worked at once; a lane that only waits for a
confirmation to fall due holds no slot, and a request for its item (a webhook's comment) ends
that wait at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from contextlib import suppress
from dataclasses import dataclass

from domain.ports import ClockPort

Run = Callable[[], float | None]  # works the item; when (monotonic) it wants to run again, or None
STEP_SECONDS = 0.005  # how often a lane waiting for a confirmation looks for a new request


@dataclass
class _Lane:
    run: Run
    again: Run | None = None  # asked for while it ran or waited: the newest request wins


class Lanes:
    def __init__(self, *, clock: ClockPort, limit: int, stopping: Callable[[], bool]) -> None:
        self._clock = clock
        self._stopping = stopping
        self._slots = threading.BoundedSemaphore(max(1, limit))
        self._lock = threading.Condition()
        self._lanes: dict[Hashable, _Lane] = {}
        self._mine = threading.local()
        self._fault: BaseException | None = None  # what ended a lane not as work ends (a crash, in tests)

    def submit(self, key: Hashable, run: Run) -> None:
        """Work `key` by `run`: now on a lane of its own, or right after the run its lane is in."""
        with self._lock:
            lane = self._lanes.get(key)
            if lane is not None:
                lane.again = run
                return
            lane = self._lanes[key] = _Lane(run)
        threading.Thread(target=self._go, args=(key, lane), name=f"lane {key}", daemon=True).start()

    def submit_if_free(self, key: Hashable, run: Run) -> bool:
        """Work `key` by `run` on a lane of its own only when it has none now (its work in hand or
        asked for is never replaced); whether it was taken."""
        with self._lock:
            if key in self._lanes:
                return False
            lane = self._lanes[key] = _Lane(run)
        threading.Thread(target=self._go, args=(key, lane), name=f"lane {key}", daemon=True).start()
        return True

    def run_here(self, key: Hashable, run: Callable[[], object]) -> bool:
        """`run` now, in this thread, as `key`'s lane when it has none (its work in hand or asked for
        is never met); whether it ran. A request for `key` meanwhile runs on its lane right after.
        From a lane it takes no second slot: a lane waiting for another's slot could wait for itself."""
        with self._lock:
            if key in self._lanes:
                return False
            lane = self._lanes[key] = _Lane(lambda: None)
        try:
            with suppress(Exception):  # as a lane's run: it reports its own faults
                run()
        finally:
            with self._lock:
                again, lane.again = lane.again, None
                if again is None:
                    del self._lanes[key]
                    self._lock.notify_all()
            if again is not None:
                lane.run = again
                threading.Thread(target=self._go, args=(key, lane), name=f"lane {key}", daemon=True).start()
        return True

    def drain(self) -> None:
        """Until every lane is done (never from a lane: it would wait for itself); what ended a
        lane abruptly (an interrupt) is raised here, as the cycle's own."""
        if getattr(self._mine, "lane", False):
            return
        with self._lock:
            self._lock.wait_for(lambda: not self._lanes)
            fault, self._fault = self._fault, None
        if fault is not None:
            raise fault

    def _go(self, key: Hashable, lane: _Lane) -> None:
        self._mine.lane = True
        run: Run | None = lane.run
        try:
            while run is not None:
                lane.run = run  # what runs again when a confirmation falls due
                with self._slots:
                    due = self._safely(run)
                run = self._next(key, lane, due)
        except BaseException as fault:
            self._fault = fault
        finally:
            with self._lock:
                # its own lane only: once said over (`_next`), the item's next lane may be here already
                if self._lanes.get(key) is lane:
                    del self._lanes[key]
                self._lock.notify_all()

    def _next(self, key: Hashable, lane: _Lane, due: float | None) -> Run | None:
        """What the lane runs next: a request made meanwhile, or the same work once `due` comes;
        None when nothing is left (the lane ends, under the lock a request would take)."""
        while True:
            with self._lock:
                if lane.again is not None:
                    run, lane.again = lane.again, None
                    return run
                if due is None or self._stopping():
                    self._lanes.pop(key, None)
                    self._lock.notify_all()
                    return None
            left = due - self._clock.monotonic()
            if left <= 0:
                return lane.run
            self._clock.sleep(min(STEP_SECONDS, left))

    @staticmethod
    def _safely(run: Run) -> float | None:
        try:
            return run()
        except Exception:  # the run reports its own faults; a lane never dies with its item's work
            return None
