"""A cluster host's daemon over fakes: the database unreachable (no delivery counted, sessions kept,
retries with backoff, the lock says so for `status`), the lease heartbeat's failures and recovery,
and orphans ended when a host starts."""

from __future__ import annotations

from typing import Any

from app.usecases.cluster.heartbeat import LeaseHeartbeat
from app.usecases.cycle.daemon import Daemon
from domain.errors import StoreUnreachable
from domain.events import Event
from domain.ledger import Ledger
from domain.model import SessionRecord
from domain.refs import WorkItemRef
from tests.fakes.store import FakeStateStore
from tests.service.hosts import TIMING, Hosts
from tests.service.world import World


class FlakyStore(FakeStateStore):
    """The database goes away while `down`: every read and write says it cannot be reached."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def _reach(self) -> None:
        if self.down:
            raise StoreUnreachable("fake store: connection refused")

    def sessions(self) -> list[SessionRecord]:
        self._reach()
        return super().sessions()

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        self._reach()
        return super().ledger(item)

    def save_meta(self, key: str, value: str) -> None:
        self._reach()
        super().save_meta(key, value)


class NotingLock:
    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []

    def acquire(self, info: dict[str, Any]) -> None:
        self.notes.append(info)

    def note(self, info: dict[str, Any]) -> None:
        self.notes.append(info)

    def release(self) -> None:
        pass


def test_while_the_database_is_away_no_delivery_is_counted_sessions_keep_running_and_retries_back_off() -> None:
    store = FlakyStore()
    world = World(store=store)
    ref = world.watched()
    lock, waits = NotingLock(), []
    daemon: Daemon

    def wait(seconds: float) -> None:
        waits.append(seconds)
        world.clock.advance(seconds)
        if len(waits) == 1:
            store.down = True
            world.comment(ref, "said while the database was away")
        if len(waits) == 4:
            assert lock.notes[-1]["failing"]["cycles"] == 3  # what `status` reads meanwhile
            assert world.session(ref).received == [] and not world.session(ref).pane_dead
            store.down = False
        if len(waits) == 5:
            daemon.stop()

    daemon = Daemon(
        cycle=world.poll, uow=world.uow, lock=lock, interval_seconds=5,
        version="1.0.0", wait=wait,
    )  # fmt: skip
    daemon.run()

    assert waits == [5, 5, 10, 20, 5]  # the interval, then doubling while away, then the interval again
    assert [e["retry_seconds"] for e in world.events.named(Event.STORE_UNREACHABLE)] == [5]
    assert len(world.events.named(Event.STORE_REACHABLE)) == 1 and "failing" not in lock.notes[-1]
    assert [t for t in world.session(ref).received if "said while the database was away" in t] != []
    assert world.kills() == 0


def test_renewal_failures_are_logged_once_and_the_recovery_names_what_other_hosts_took() -> None:
    hosts = Hosts()
    a, _ = hosts.add("host-a", max_sessions=3), hosts.add("host-b", max_sessions=3)
    ref = a.item(1)
    hosts.cycle()
    holder = hosts.holder(ref)
    other = "host-b" if holder == "host-a" else "host-a"
    world = hosts[holder]
    assert world.cluster is not None
    beat = LeaseHeartbeat(
        leases=world.leases, cluster=world.cluster, events=world.events, monotonic=hosts.clock.monotonic
    )
    hosts.port(holder).fail_renewals = True
    hosts.port(holder).drop()  # its connection is gone: so is its repository lock

    for _ in range(4):
        beat.beat()
        hosts.clock.advance(TIMING.renew_every_seconds)
    hosts.clock.advance(TIMING.expiry_seconds)
    hosts.cycle(other)  # takes the item over
    hosts.port(holder).fail_renewals = False
    beat.beat()

    assert len(world.events.named(Event.CLUSTER_RENEW_FAILED)) == 1
    (renewed,) = world.events.named(Event.CLUSTER_RENEWED)
    assert renewed["lost"] == [str(ref)] and renewed["failed_for_seconds"] > TIMING.expiry_seconds


def test_a_host_starting_ends_its_sessions_of_items_another_host_took_while_it_was_away() -> None:
    hosts = Hosts()
    a, _ = hosts.add("host-a", max_sessions=3), hosts.add("host-b", max_sessions=3)
    ref = a.item(1)
    hosts.cycle()
    holder = hosts.holder(ref)
    other = "host-b" if holder == "host-a" else "host-a"
    hosts.port(holder).unreachable = True  # its process dies; its tmux server lives on
    hosts.clock.advance(TIMING.expiry_seconds)
    hosts.cycle(other)
    hosts.port(holder).unreachable = False
    world = hosts[holder]

    assert world.orphans.sweep() == 1

    assert ref.target.name not in hosts.sessions(holder) and ref.target.name in hosts.sessions(other)
