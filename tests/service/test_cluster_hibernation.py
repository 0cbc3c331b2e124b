"""Hibernation where several hosts share the work: an agent's conversation stays on the host it ran
on, so a hibernated item's next comment wakes it there, resumed, while that host is up (no other
host takes it); once that host is gone, another host starts it fresh, saying so on the item."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.hosts import TIMING, Hosts
from tests.service.world import World

AFTER = 600.0
SPAWN_LOST = "ran on host host-a; that host was lost"


def hibernated_on_a(hosts: Hosts) -> tuple[World, WorkItemRef]:
    """An item whose agent ran on host-a, rested past `AFTER` and was hibernated, its slot given up."""
    a = hosts.add("host-a", max_sessions=3, hibernate_after_seconds=AFTER)
    ref = a.item(1)
    hosts.cycle()
    receipts = a.receipts
    assert isinstance(receipts, FakeReceipts)
    receipts.plant(a.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    hosts.clock.advance(AFTER + 1)
    hosts.cycle()
    a.hibernation.sweep()
    hosts.cycle()
    assert a.record(ref).hibernated_at is not None and hosts.holder(ref) == ""
    return a, ref


def test_a_hibernated_item_wakes_resumed_on_the_host_holding_its_conversation_while_that_host_is_up() -> None:
    hosts = Hosts()
    a, ref = hibernated_on_a(hosts)
    hosts.add("host-b", max_sessions=5, hibernate_after_seconds=AFTER)  # the most free slots
    conversation = a.record(ref).harness_session_id
    comment = a.comment(ref, "carry on")

    hosts.cycle()
    hosts.cycle()

    assert hosts.holder(ref) == "host-a"
    assert hosts.sessions("host-b") == {}
    (woke,) = a.events.named(Event.SESSION_RESPAWNED)
    assert (woke["resumed"], woke["woke_from"], woke["harness_session_id"]) == (True, "hibernation", conversation)
    assert a.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_hibernated_item_whose_host_is_gone_starts_fresh_on_another_host_said_on_the_item() -> None:
    hosts = Hosts()
    a, ref = hibernated_on_a(hosts)
    b = hosts.add("host-b", max_sessions=5, hibernate_after_seconds=AFTER)
    conversation = a.record(ref).harness_session_id
    hosts.dies("host-a")
    hosts.clock.advance(TIMING.expiry_seconds)  # its heartbeat expired: gone
    comment = b.comment(ref, "carry on")

    hosts.cycle("host-b")
    hosts.cycle("host-b")

    assert hosts.holder(ref) == "host-b"
    assert SPAWN_LOST in hosts.sessions("host-b")[ref.target.name].panes[-1].prompt
    (woke,) = b.events.named(Event.SESSION_WOKEN_ELSEWHERE)
    assert (woke["host"], woke["harness_session_id"]) == ("host-a", conversation)
    told = [body for item, body in hosts.tracker.posted if item == ref and "host-a" in body]
    assert len(told) == 1 and "gone" in told[0]
    assert b.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED


def test_a_hibernated_item_waiting_for_its_own_full_host_is_told_it_waits_for_that_host() -> None:
    """Another host has room, so "every host is full" would be false: the item waits for the host that
    holds its conversation, and its notice names that host."""
    hosts = Hosts()
    a, ref = hibernated_on_a(hosts)
    for number in (2, 3, 4):  # host-a's three slots taken by items of its own
        a.item(number)
    hosts.cycle()
    hosts.add("host-b", max_sessions=5, hibernate_after_seconds=AFTER)
    a.comment(ref, "carry on")

    hosts.cycle()
    hosts.cycle()
    hosts.cycle()

    assert hosts.holder(ref) == ""
    (waiting,) = [e for e in a.events.named(Event.CLUSTER_SLOT_WAITING) if e["work_item"] == str(ref)]
    assert waiting["home"] == "host-a"
    told = [body for item, body in hosts.tracker.posted if item == ref and "waiting for a free slot" in body]
    assert len(told) == 1 and "`host-a`" in told[0] and "every host" not in told[0], told
