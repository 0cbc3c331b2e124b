"""Issue 18 item 3 over fakes, step by step on one controlled clock: an agent never outlives its
host's lease. Each renewal gives the host's watchdog a deadline; a host that stops renewing has its
agents ended by then, before another host can take the item."""

from __future__ import annotations

import pytest

from domain.errors import StateError
from domain.refs import WorkItemRef
from tests.service.hosts import TIMING, Hosts
from tests.service.world import World


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


def test_issue18_item3_each_renewal_sets_the_agents_deadline_from_the_moment_its_request_left() -> None:
    hosts, _, holder, _ = one_item()
    world = hosts[holder]
    assert world.watchdog is not None
    sent = hosts.clock.monotonic()

    world.leases.renew()

    assert world.watchdog.deadline() == sent + TIMING.renew_deadline_seconds


def test_issue18_item3_a_failed_renewal_leaves_the_deadline_where_the_last_success_put_it() -> None:
    hosts, _, holder, _ = one_item()
    world = hosts[holder]
    assert world.watchdog is not None
    before = world.watchdog.deadline()
    hosts.port(holder).fail_renewals = True
    hosts.clock.advance(5)

    with pytest.raises(StateError):
        world.leases.renew()

    assert world.watchdog.deadline() == before


def test_issue18_item3_step_by_step_a_cut_off_host_ends_its_agent_before_another_host_can_take_the_item() -> None:
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


def test_issue18_item3_a_host_that_keeps_renewing_keeps_its_agents() -> None:
    hosts, ref, holder, _ = one_item()
    watchdog = hosts[holder].watchdog
    assert watchdog is not None

    for _ in range(int(TIMING.expiry_seconds) * 2):
        hosts.clock.advance(TIMING.renew_every_seconds)
        hosts[holder].leases.renew()
        watchdog.watch()

    assert live(hosts, holder, ref) == 1


def test_issue18_item3_a_single_host_sets_no_deadline_its_agents_live_on_as_before() -> None:
    world = World()  # SQLite's cluster of one: no other host can take its items

    world.leases.renew()

    assert world.watchdog is not None and world.watchdog.deadline() is None
