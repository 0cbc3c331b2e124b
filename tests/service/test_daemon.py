"""The daemon loop over fakes: lock, heartbeat, pace, clean stop."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from app.usecases.cycle.daemon import HEARTBEAT, Blocked, Daemon
from app.usecases.views.poller_status import Heartbeat
from domain.budget import RateBudget
from domain.errors import StateError
from domain.events import Event
from domain.ledger import DeliveryState, Resolution
from domain.model import Comment
from domain.receipts import ReceiptKind
from domain.webhook import Pushed
from tests.fakes.receipts import FakeReceipts
from tests.service.world import REPO, World


class FakeLock:
    def __init__(self, *, held_by: dict[str, Any] | None = None) -> None:
        self.held_by = held_by
        self.holder: dict[str, Any] | None = None
        self.notes: list[dict[str, Any]] = []

    def acquire(self, info: dict[str, Any]) -> None:
        if self.held_by is not None:
            raise RuntimeError(f"held by pid {self.held_by['pid']}")
        self.holder = info

    def note(self, info: dict[str, Any]) -> None:
        self.notes.append(info)
        self.holder = info

    def release(self) -> None:
        self.holder = None


def _daemon(world: World, lock: FakeLock, waits: list[float], *, stop_after: int, watched: bool = False) -> Daemon:
    daemon: Daemon

    def wait(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) >= stop_after:
            daemon.stop()

    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=lock,
        interval_seconds=60,
        version="1.0.0",
        wait=wait,
        watch=world.watch if watched else None,
    )
    return daemon


def test_the_daemon_waits_the_interval_after_each_cycle_and_stops_cleanly() -> None:
    world, lock, waits = World(), FakeLock(), []
    world.item()

    _daemon(world, lock, waits, stop_after=3).run()

    assert waits == [60, 60, 60]
    assert world.events.names().count(Event.POLL_CYCLE) == 3
    assert world.events.names()[0] == Event.POLLER_STARTED and world.events.names()[-1] == Event.POLLER_STOPPED
    assert lock.holder is None  # released


def test_a_tracker_asking_for_a_slower_pace_is_honoured() -> None:
    world, waits = World(), []
    world.tracker.poll_interval[REPO] = 90

    _daemon(world, FakeLock(), waits, stop_after=1).run()

    assert waits == [90]


def test_each_cycle_leaves_a_heartbeat_with_its_summary() -> None:
    world = World()
    world.item()

    _daemon(world, FakeLock(), [], stop_after=1).run(once=True)

    beat = json.loads(world.store.meta()[HEARTBEAT])
    assert beat["summary"]["items"] == 1 and beat["interval_seconds"] == 60


def test_a_held_lock_blocks_the_second_poller_loudly() -> None:
    world = World()

    with pytest.raises(Blocked, match="held by pid 4242"):
        _daemon(world, FakeLock(held_by={"pid": 4242}), [], stop_after=1).run()

    assert world.events.named(Event.POLLER_BLOCKED)[0]["level"] == "error"
    assert Event.POLL_CYCLE not in world.events.names()


def test_a_pushed_comment_wakes_the_daemon_before_the_interval_is_up() -> None:
    world = World()
    ref = world.watched()
    comment = Comment("9001", ref, "alice", "pushed only", world.clock.now())  # not in the poll stream
    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=FakeLock(),
        interval_seconds=3600,
        version="1.0.0",
    )
    intake = world.intake()
    intake.notify = daemon.wake
    runner = threading.Thread(target=daemon.run)
    runner.start()
    wait_until(lambda: world.events.names().count(Event.POLL_CYCLE) >= 2)  # watched() ran one; the daemon one

    intake.accept(Pushed(comment, frozenset({"loop"})))
    wait_until(lambda: len(world.session(ref).received) == 1)  # worked at once, without a cycle's reads
    daemon.stop()
    runner.join(timeout=10)

    assert not runner.is_alive()
    assert len(world.session(ref).received) == 1


def wait_until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_poll_once_whose_cycle_cannot_write_the_state_exits_non_zero_says_so_and_releases_its_lock() -> None:
    world, lock = World(), FakeLock()
    world.store.fail_writes = True  # the heartbeat cannot be saved

    with pytest.raises(StateError):
        _daemon(world, lock, [], stop_after=1).run(once=True)

    failed = world.events.named(Event.POLLER_FAILED)
    assert failed and failed[0]["level"] == "error"
    assert lock.holder is None


def test_faults_a_daemon_whose_state_store_cannot_be_written_keeps_running_says_so_and_carries_on() -> None:
    """Fault: disk full or read-only. Each failed cycle is an event and a note in the
    lock (what `status` reads); the daemon never exits on one, and delivers once the store writes."""
    world, lock, waits, reports = World(), FakeLock(), [], []
    ref = world.watched()
    comment = world.comment(ref)
    world.store.fail_writes = True
    daemon: Daemon

    def wait(seconds: float) -> None:
        waits.append(seconds)
        world.store.fail_writes = len(waits) < 2  # two cycles fail, then the disk has room again
        if len(waits) >= 3:
            daemon.stop()

    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=lock,
        interval_seconds=60,
        version="1.0.0",
        wait=wait,
        report=reports.append,
    )
    daemon.run()

    failed = world.events.named(Event.POLLER_CYCLE_FAILED)
    assert [f["cycles"] for f in failed] == [1, 2] and "StateError" in failed[0]["cause"]
    assert [note.get("failing", {}).get("cycles") for note in lock.notes] == [1, 2, None]
    assert any("cycle failed (2 in a row)" in line for line in reports)
    assert Event.POLLER_FAILED not in world.events.names() and world.events.names()[-1] == Event.POLLER_STOPPED
    assert len(world.session(ref).received) == 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


@pytest.mark.parametrize(("harness", "settled_by"), [("claude", "receipt-on-retry"), ("cursor", "alive-on-retry")])
def test_a_daemon_stopped_mid_confirmation_stops_waiting_and_its_next_run_settles_the_delivery_once(
    harness: str, settled_by: str
) -> None:
    # a service manager's stop must not wait out a 30 s confirmation (or a 90 s spawn's): the wait
    # ends, the delivery stays pasted, and the next run settles it as after a crash — never twice
    world, lock = World(harness=harness), FakeLock()
    ref = world.watched()
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.ignore_pastes = True  # the agent has the prompt; its receipt is not written yet
    comment = world.comment(ref, "confirm me after the restart")
    daemon = _daemon(world, lock, [], stop_after=1, watched=True)
    sleep = world.clock.sleep

    def stop_at_the_first_sleep(seconds: float) -> None:
        daemon.stop()
        sleep(seconds)

    world.clock.sleep = stop_at_the_first_sleep  # type: ignore[method-assign]
    before = world.clock.monotonic()
    daemon.run()
    waited = world.clock.monotonic() - before
    world.clock.sleep = sleep  # type: ignore[method-assign]
    pending = world.ledger(ref).pending_entry(comment.id)

    assert waited < 1.0 and pending is not None and pending.state is DeliveryState.PASTED
    assert Event.DISPATCH_UNCONFIRMED not in world.events.names() and Event.DISPATCH_FAILED not in world.events.names()
    pasted = [p for p in world.session(ref).received if "confirm me after the restart" in p]
    record = world.store.session(ref)
    assert record is not None and len(pasted) == 1
    world.receipts.plant(record.spawn_id, ReceiptKind.PROMPT, prompt=pasted[-1])
    world.restart(version=world.version)

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert len([p for p in world.session(ref).received if "confirm me after the restart" in p]) == 1
    assert world.events.named(Event.DISPATCH_CONFIRMED)[-1]["confirmed_by"] == settled_by


def test_a_request_made_between_cycles_is_posted_before_the_next_cycle() -> None:
    world = World()
    ref = world.watched()
    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=FakeLock(),
        interval_seconds=3600,
        version="1.0.0",
        asks=world.asks.sweep,
        ask_scan_seconds=0.05,
    )
    runner = threading.Thread(target=daemon.run)
    runner.start()
    wait_until(lambda: world.events.names().count(Event.POLL_CYCLE) >= 2)
    receipts = world.receipts
    assert isinstance(receipts, FakeReceipts)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.BLOCKED, tool="Bash", tool_input='{"command": "ls"}')

    wait_until(lambda: any("permission to use `Bash`" in body for _, body in world.tracker.posted))
    daemon.stop()
    runner.join(timeout=10)

    assert world.events.names().count(Event.POLL_CYCLE) == 2  # no cycle ran for it


def test_the_heartbeat_carries_the_github_budget_the_tracker_last_saw() -> None:
    world = World()
    world.item()
    world.tracker.budget_seen = RateBudget(remaining=4873, limit=5000, reset_epoch=1_800_000_000.0)
    _daemon(world, FakeLock(), [], stop_after=1).run(once=True)
    beat = json.loads(world.store.meta()[HEARTBEAT])
    assert beat["budgets"] == {REPO.host: {"remaining": 4873, "limit": 5000, "reset": 1_800_000_000.0}}
    assert Heartbeat.parse(world.store.meta()[HEARTBEAT]).budgets == {REPO.host: world.tracker.budget_seen}  # type: ignore[union-attr]


def test_a_cycle_held_back_by_a_rate_limit_still_carries_the_budget_last_seen() -> None:
    world = World()
    world.item()
    world.tracker.budget_seen = RateBudget(remaining=0, limit=5000, reset_epoch=1_800_000_000.0)
    world.tracker.rate_limited_until[REPO] = 1_800_000_000.0  # the first cycle backs off, the next asks nothing
    _daemon(world, FakeLock(), [], stop_after=2).run()
    assert world.events.names().count(Event.POLL_BACKOFF) == 1 and world.events.names().count(Event.POLL_CYCLE) == 2
    beat = json.loads(world.store.meta()[HEARTBEAT])
    assert beat["budgets"] == {REPO.host: {"remaining": 0, "limit": 5000, "reset": 1_800_000_000.0}}
