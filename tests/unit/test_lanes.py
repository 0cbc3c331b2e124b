"""An item's lane: one run of its work at a time, and a drain that waits for every run in hand.

A lane's thread says its lane is over under the lock, then ends; on a loaded machine the next
cycle can start the item's next lane in that gap. The ending thread must not then take that new
lane for its own: the drain would not wait for it, and a later request would start a second run
of the same item beside it (two deliveries into one session at once)."""

from __future__ import annotations

import threading
from collections.abc import Hashable

from app.usecases.cycle.lanes import Lanes, Run, _Lane
from tests.fakes.clock import FakeClock

ITEM = "acme/widgets#1"
WAIT = 10.0  # a bound on a wait for an event that the lane sets; never reached when it works


class LanesHeldAsTheyEnd(Lanes):
    """Lanes whose first lane to end pauses, its lane said over, until `go_on` is set."""

    def __init__(self) -> None:
        super().__init__(clock=FakeClock(), limit=4, stopping=lambda: False)
        self.ending = threading.Event()
        self.go_on = threading.Event()
        self.ended_thread: threading.Thread | None = None

    def _next(self, key: Hashable, lane: _Lane, due: float | None) -> Run | None:
        after = super()._next(key, lane, due)
        if after is None and not self.ending.is_set():
            self.ended_thread = threading.current_thread()
            self.ending.set()
            self.go_on.wait(WAIT)
        return after


def test_a_lane_ending_as_its_items_next_lane_starts_leaves_the_drain_waiting_for_that_next_run() -> None:
    lanes = LanesHeldAsTheyEnd()
    said: list[str] = []
    release = threading.Event()
    second_started = threading.Event()

    def first() -> None:
        said.append("first ran")

    def second() -> None:
        second_started.set()
        release.wait(WAIT)
        said.append("second ran")

    lanes.submit(ITEM, first)
    assert lanes.ending.wait(WAIT)
    lanes.drain()  # the first lane is said over: a cycle ends here, and the next begins
    lanes.submit(ITEM, second)
    assert second_started.wait(WAIT)
    lanes.go_on.set()  # the first lane's thread now ends, while the second runs
    assert lanes.ended_thread is not None
    lanes.ended_thread.join(WAIT)

    drained = threading.Thread(target=lambda: (lanes.drain(), said.append("drained")))
    drained.start()
    drained.join(0.5)  # a drain that does not wait for the second run is done by now
    release.set()
    drained.join(WAIT)

    assert said == ["first ran", "second ran", "drained"]


def test_a_request_while_an_items_run_goes_on_runs_after_it_never_beside_it() -> None:
    lanes = LanesHeldAsTheyEnd()
    running = 0
    most = 0
    guard = threading.Lock()
    release = threading.Event()
    second_started = threading.Event()

    def work(hold: bool) -> Run:
        def run() -> None:
            nonlocal running, most
            with guard:
                running += 1
                most = max(most, running)
            if hold:
                second_started.set()
                release.wait(WAIT)
            with guard:
                running -= 1

        return run

    lanes.submit(ITEM, work(hold=False))
    assert lanes.ending.wait(WAIT)
    lanes.drain()
    lanes.submit(ITEM, work(hold=True))
    assert second_started.wait(WAIT)
    lanes.go_on.set()
    assert lanes.ended_thread is not None
    lanes.ended_thread.join(WAIT)

    lanes.submit(ITEM, work(hold=False))  # asked for while the second run goes on
    release.set()
    lanes.drain()

    assert most == 1, "two runs of one item's work at once"


def test_a_run_here_takes_its_items_lane_in_the_callers_thread_and_work_asked_meanwhile_runs_after_it() -> None:
    lanes = Lanes(clock=FakeClock(), limit=1, stopping=lambda: False)
    said: list[str] = []
    busy, release = threading.Event(), threading.Event()

    def held() -> None:
        busy.set()
        release.wait(WAIT)
        said.append("held")

    lanes.submit("other", held)  # the one slot is taken
    assert busy.wait(WAIT)
    assert not lanes.run_here("other", lambda: said.append("never"))  # its lane has work in hand

    def here() -> None:
        said.append("here")
        lanes.submit(ITEM, lambda: said.append("asked meanwhile"))

    assert lanes.run_here(ITEM, here)  # in this thread, though the one slot is taken
    release.set()
    lanes.drain()

    assert said[0] == "here" and sorted(said[1:]) == ["asked meanwhile", "held"]
