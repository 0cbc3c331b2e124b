"""A look at the receipts that fails is said in the event log, once for a fault that repeats, and the
watch goes on with its other looks: a fault in one look never silences another."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from app.usecases.cycle.daemon import Daemon
from app.usecases.cycle.receipt_watch import Look, ReceiptWatch
from domain.errors import StateError
from domain.events import Event
from tests.fakes.events import RecordingEvents
from tests.service.test_daemon import FakeLock, wait_until
from tests.service.world import World


class _Scripted:
    """A look that raises each error of its script in turn (None: that look succeeds), then succeeds;
    `done` is set once its script has run out."""

    def __init__(self, script: Sequence[Exception | None]) -> None:
        self._script = list(script)
        self.done = threading.Event()

    def __call__(self) -> None:
        if not self._script:
            self.done.set()
            return
        error = self._script.pop(0)
        if error is not None:
            raise error


def _watch(looks: Sequence[Look], until: Sequence[threading.Event]) -> RecordingEvents:
    """The watch's looks taken until each of `until` is set; what it said."""
    events = RecordingEvents()
    watch = ReceiptWatch(looks, events=events, stopping=lambda: False)
    watch.start()
    try:
        for done in until:
            assert done.wait(timeout=10), "the looks did not run"
    finally:
        watch.stop()
    return events


def test_a_look_that_fails_the_same_way_again_and_again_is_said_once_and_the_other_looks_go_on() -> None:
    failing = _Scripted([RuntimeError("database is locked")] * 6)
    other = _Scripted([None] * 6)

    events = _watch([Look("turn-ends", failing, 0.001), Look("asks", other, 0.001)], [failing.done, other.done])

    said = [(r["look"], r["cause"], r["level"]) for r in events.named(Event.RECEIPTS_LOOK_FAILED)]
    assert said == [("turn-ends", "RuntimeError: database is locked", "warning")]


def test_a_fault_is_said_again_once_its_look_succeeded_between_and_a_new_fault_at_once() -> None:
    full, table = OSError("disk full"), OSError("no such table")
    failing = _Scripted([full, full, None, full, full, table, table, ValueError("no such table"), None])

    events = _watch([Look("asks", failing, 0.001)], [failing.done])

    assert [r["cause"] for r in events.named(Event.RECEIPTS_LOOK_FAILED)] == [
        "OSError: disk full",
        "OSError: disk full",  # again: the look succeeded in between
        "OSError: no such table",  # the same type, another message
        "ValueError: no such table",  # the same message, another type
    ]


def test_the_daemon_says_which_of_its_looks_failed_and_takes_the_others() -> None:
    world = World()
    asked = threading.Event()

    def turns() -> None:
        raise StateError("the state store cannot be read: disk I/O error")

    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=FakeLock(),
        interval_seconds=3600,
        version="1.0.0",
        asks=asked.set,
        ask_scan_seconds=0.01,
        turns=turns,
        turn_scan_seconds=0.01,
    )
    runner = threading.Thread(target=daemon.run)
    runner.start()
    try:
        wait_until(lambda: world.events.named(Event.RECEIPTS_LOOK_FAILED) and asked.is_set())
    finally:
        daemon.stop()
        runner.join(timeout=10)

    said = [(r["look"], r["cause"]) for r in world.events.named(Event.RECEIPTS_LOOK_FAILED)]
    assert said == [("turn-ends", "StateError: the state store cannot be read: disk I/O error")]
