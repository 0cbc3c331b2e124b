"""The lease guard over fakes, step by step on one controlled clock: an agent never outlives its
host's lease. Each renewal gives the host's watchdog a deadline; a host that stops renewing has its
agents ended by then, before another host can take the item."""

from __future__ import annotations

import itertools
import time

import pytest

from app.usecases.cluster.heartbeat import LeaseHeartbeat
from app.usecases.cluster.leases import Leases
from domain.cluster import Held, LeaseTiming
from domain.errors import StateError
from domain.events import Event
from domain.refs import WorkItemRef
from tests.fakes.cluster import FakeCluster, FakeClusterDb
from tests.fakes.events import RecordingEvents
from tests.service.hosts import TIMING, Hosts
from tests.service.world import World
from tests.tmux_support import wait_for


def live(hosts: Hosts, name: str, ref: WorkItemRef) -> int:
    session = hosts.sessions(name).get(ref.target.name)
    return int(session is not None and session.harness is not None and not session.harness.dead)


def one_item() -> tuple[Hosts, WorkItemRef, str, str]:
    hosts = Hosts()
    a, _ = hosts.add("host-a", max_sessions=3), hosts.add("host-b", max_sessions=3)
    ref = a.item(1)
    hosts.cycle()
    holder = hosts.holder(ref)
    return hosts, ref, holder, "host-b" if holder == "host-a" else "host-a"


def test_each_renewal_sets_the_agents_deadline_from_the_moment_its_request_left() -> None:
    hosts, _, holder, _ = one_item()
    world = hosts[holder]
    assert world.watchdog is not None
    sent = hosts.clock.monotonic()

    world.leases.renew()

    assert world.watchdog.deadline() == sent + TIMING.renew_deadline_seconds


def test_a_failed_renewal_leaves_the_deadline_where_the_last_success_put_it() -> None:
    hosts, _, holder, _ = one_item()
    world = hosts[holder]
    assert world.watchdog is not None
    before = world.watchdog.deadline()
    hosts.port(holder).fail_renewals = True
    hosts.clock.advance(5)

    with pytest.raises(StateError):
        world.leases.renew()

    assert world.watchdog.deadline() == before


def test_step_by_step_a_cut_off_host_ends_its_agent_before_another_host_can_take_the_item() -> None:
    hosts, ref, holder, other = one_item()
    assert live(hosts, holder, ref) == 1
    hosts.port(holder).fail_renewals = True  # cut off: nothing it sends reaches the database
    hosts.port(holder).drop()  # and its connection, with its repository lock, is gone
    watchdog = hosts[holder].watchdog
    assert watchdog is not None
    deadline = watchdog.deadline()
    counts, ended_at, taken_at = [], 0.0, 0.0

    for _ in range(int(TIMING.expiry_seconds) + 5):
        hosts.clock.advance(1.0)
        if watchdog.watch():
            ended_at = hosts.clock.monotonic()
        hosts.cycle(other)
        taken_at = taken_at or (hosts.clock.monotonic() if hosts.holder(ref) == other else 0.0)
        counts.append(live(hosts, holder, ref) + live(hosts, other, ref))

    assert deadline is not None and deadline <= ended_at < deadline + 1.0 < taken_at
    assert max(counts) == 1 and live(hosts, holder, ref) == 0 and live(hosts, other, ref) == 1
    assert hosts.holder(ref) == other


def test_a_host_that_keeps_renewing_keeps_its_agents() -> None:
    hosts, ref, holder, _ = one_item()
    watchdog = hosts[holder].watchdog
    assert watchdog is not None

    for _ in range(int(TIMING.expiry_seconds) * 2):
        hosts.clock.advance(TIMING.renew_every_seconds)
        hosts[holder].leases.renew()
        watchdog.watch()

    assert live(hosts, holder, ref) == 1


def test_a_single_host_sets_no_deadline_its_agents_live_on_as_before() -> None:
    world = World()  # SQLite's cluster of one: no other host can take its items

    world.leases.renew()

    assert world.watchdog is not None and world.watchdog.deadline() is None


def unarmed_host(cause: str) -> tuple[Hosts, WorkItemRef, str, LeaseHeartbeat]:
    """The holder of one item with a live agent, its heartbeat, and a watchdog every arm of which fails."""
    hosts, ref, holder, _ = one_item()
    world = hosts[holder]
    assert world.cluster is not None and world.watchdog is not None
    world.watchdog.unarmed = cause
    beat = LeaseHeartbeat(
        leases=world.leases, cluster=world.cluster, events=world.events, monotonic=hosts.clock.monotonic,
        watchdog=world.watchdog,
    )  # fmt: skip
    return hosts, ref, holder, beat


def test_a_host_whose_watchdog_cannot_be_armed_acts_on_none_of_its_items_and_ends_its_agents_itself() -> None:
    hosts, ref, holder, beat = unarmed_host("the agent watchdog could not be started again: EMFILE")
    world = hosts[holder]
    assert live(hosts, holder, ref) == 1

    beat.beat()

    assert live(hosts, holder, ref) == 0 and world.watchdog is not None
    assert world.watchdog.ended_by_daemon == [ref.target.name]
    assert not world.leases.holds(ref.target).choice and ref not in world.leases.held()
    (unarmed,) = world.events.named(Event.CLUSTER_WATCHDOG_UNARMED)
    assert "EMFILE" in unarmed["cause"]


STEP = 0.05


def test_a_failed_arm_is_tried_again_after_a_wait_doubling_up_to_the_renewal_interval_and_said_once() -> None:
    hosts, _, holder, beat = unarmed_host("no room to record the deadline")
    watchdog = hosts[holder].watchdog
    assert watchdog is not None
    start = hosts.clock.monotonic()

    while hosts.clock.monotonic() < start + 3 * TIMING.renew_every_seconds:
        beat.beat()
        hosts.clock.advance(STEP)

    gaps = [b - a for a, b in itertools.pairwise(at for at in watchdog.arms if at >= start)]
    waits = [0.1, 0.2, 0.4, 0.8, 1.6, 3.2]  # each tried at the first step once its wait is over
    assert all(wait - 1e-9 <= gap < wait + STEP + 1e-9 for wait, gap in zip(waits, gaps, strict=False))
    assert max(gaps) < TIMING.renew_every_seconds + STEP
    assert len(hosts[holder].events.named(Event.CLUSTER_WATCHDOG_UNARMED)) == 1


def test_once_an_arm_succeeds_again_the_host_acts_on_its_items_again() -> None:
    hosts, ref, holder, beat = unarmed_host("the agent watchdog could not be started again: ENOMEM")
    world = hosts[holder]
    beat.beat()
    assert world.watchdog is not None
    world.watchdog.unarmed = None
    hosts.clock.advance(TIMING.renew_every_seconds)

    beat.beat()

    assert world.leases.holds(ref.target).choice
    (armed,) = world.events.named(Event.CLUSTER_WATCHDOG_ARMED)
    assert armed["tries"] == 1


class FaultyOnce(FakeCluster):
    """A cluster whose renewal meets a fault nobody foresaw, once."""

    def __init__(self, db: FakeClusterDb) -> None:
        super().__init__(db, host="host-a", timing=FAST)
        self.renewals = 0

    def renew(self, *, memory_short: bool = False) -> Held:
        self.renewals += 1
        if self.renewals == 2:
            raise RuntimeError("a fault nobody foresaw")
        return super().renew(memory_short=memory_short)


FAST = LeaseTiming(expiry_seconds=0.6, renew_deadline_seconds=0.3)


def test_nothing_a_renewal_meets_ends_the_heartbeat_thread() -> None:
    cluster = FaultyOnce(FakeClusterDb())  # a real thread on the real clock, with a lease of a moment
    leases = Leases(cluster=cluster, timing=FAST, monotonic=time.monotonic)
    beat = LeaseHeartbeat(leases=leases, cluster=cluster, events=RecordingEvents(), monotonic=time.monotonic)
    beat.start(pid=1, version="1")
    try:
        wait_for(lambda: cluster.renewals > 4, what="renewals after the fault")
    finally:
        beat.stop()
