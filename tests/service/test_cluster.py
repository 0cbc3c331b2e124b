"""A cluster over fakes: several hosts share one store, one tracker and one cluster database, each
with its own tmux server — items spread, GitHub read once, leases checked before every tmux
action, take-over after a host dies, orphans ended, items moved."""

from __future__ import annotations

import pytest

from app.usecases.cluster.moving import Mover
from app.usecases.cycle.intake import Listing
from domain.errors import LeaseLost
from domain.events import Event
from domain.ledger import Resolution
from domain.refs import WorkItemRef
from domain.webhook import Pushed
from tests.service.hosts import TIMING, Hosts
from tests.service.world import REPO

SPAWN_LOST = "ran on host host-a; that host was lost"


def three_items_on_two_hosts() -> tuple[Hosts, list[WorkItemRef]]:
    hosts = Hosts()
    a, _ = hosts.add("host-a", max_sessions=3), hosts.add("host-b", max_sessions=3)
    refs = [a.item(n) for n in (1, 2, 3)]
    hosts.cycle()
    return hosts, refs


def on(hosts: Hosts, name: str, refs: list[WorkItemRef]) -> list[WorkItemRef]:
    return [ref for ref in refs if hosts.holder(ref) == name]


def test_new_items_spread_by_free_slots_and_each_is_spawned_once_by_its_holder() -> None:
    hosts, refs = three_items_on_two_hosts()

    on_a, on_b = on(hosts, "host-a", refs), on(hosts, "host-b", refs)

    assert (len(on_a), len(on_b)) == (2, 1)  # 3 free each -> a (the lower id), then b (3 > 2), then a
    assert sorted(hosts.sessions("host-a")) == sorted(ref.target.name for ref in on_a)
    assert sorted(hosts.sessions("host-b")) == sorted(ref.target.name for ref in on_b)
    assert hosts["host-a"].spawns() + hosts["host-b"].spawns() == 3


def test_a_comment_reaches_only_the_host_holding_its_item() -> None:
    hosts, refs = three_items_on_two_hosts()
    (ref,) = on(hosts, "host-b", refs)
    hosts["host-a"].comment(ref, "only b runs this one")

    hosts.cycle()
    hosts.cycle()

    assert [t for t in hosts.given("host-b") if "only b runs this one" in t] != []
    assert [t for t in hosts.given("host-a") if "only b runs this one" in t] == []
    assert hosts.store.ledger(ref).resolved  # type: ignore[union-attr]


@pytest.mark.parametrize("count", [1, 2, 3])
def test_github_is_read_once_per_cycle_whatever_the_number_of_hosts(count: int) -> None:
    hosts = Hosts()
    names = [f"host-{n}" for n in range(count)]
    for name in names:
        hosts.add(name)
    hosts[names[0]].item(1)
    hosts.cycle()
    hosts.cycle()
    before = hosts.tracker.requests

    hosts.cycle()  # one cycle on every host, nothing new

    assert hosts.tracker.requests - before == 2  # the listing and the comments, by the reader only
    readers = [name for name in names if hosts[name].events.named(Event.CLUSTER_READING)]
    assert readers == [names[0]]


def test_the_webhook_on_any_host_feeds_the_host_holding_the_item() -> None:
    hosts, refs = three_items_on_two_hosts()
    (ref,) = on(hosts, "host-b", refs)
    intake = hosts["host-a"].intake()  # the listing it checks is the shared one
    comment = hosts["host-a"].comment(ref, "came by webhook to a")

    intake.accept(Pushed(comment))
    hosts.cycle("host-b")

    assert any("came by webhook to a" in t for t in hosts.given("host-b"))


def test_a_dead_hosts_items_are_taken_over_fresh_told_of_the_lost_host_with_pending_comments_delivered() -> None:
    hosts, refs = three_items_on_two_hosts()
    a_items = on(hosts, "host-a", refs)
    first = hosts["host-a"].comment(a_items[0], "confirmed on a")
    hosts.cycle("host-a")
    hosts["host-a"].receipts.ignore_pastes = True  # type: ignore[union-attr]
    second = hosts["host-a"].comment(a_items[0], "pasted on a, never confirmed")
    hosts.cycle("host-a")
    hosts.dies("host-a")
    hosts.clock.advance(TIMING.expiry_seconds)  # a's leases run out on the database's clock

    hosts.cycle("host-b")
    hosts.cycle("host-b")

    assert {hosts.holder(ref) for ref in refs} == {"host-b"}
    given = hosts.given("host-b")
    for ref in a_items:
        spawn_prompt = hosts.sessions("host-b")[ref.target.name].panes[-1].prompt
        assert SPAWN_LOST in spawn_prompt
    assert sum("pasted on a, never confirmed" in t for t in given) == 1
    assert not any("confirmed on a" in t and "never" not in t for t in given)
    ledger = hosts.store.ledger(a_items[0])
    assert ledger is not None and {ledger.resolved[c.id].kind for c in (first, second)} == {Resolution.DELIVERED}
    assert hosts["host-b"].events.named(Event.CLUSTER_LEASE_PLACED)[0]["how"] == "taken-over"


def test_a_lease_is_never_trusted_by_its_holder_while_another_host_can_take_it() -> None:
    hosts, refs = three_items_on_two_hosts()
    (ref,) = on(hosts, "host-b", refs)
    hosts.port("host-b").fail_renewals = True  # b runs on, but can no longer renew
    taken_at = trusted_until = None

    for step in range(100):  # 50 s in half seconds
        hosts.clock.advance(0.5)
        hosts.port("host-a").renew()
        trusted = hosts["host-b"].leases.holds(ref.target).choice
        taken = hosts.port("host-a").place([ref])
        assert not (trusted and (taken or taken_at is not None)), f"two holders at {step / 2}s"
        trusted_until = step / 2 if trusted else trusted_until
        taken_at = step / 2 if taken and taken_at is None else taken_at

    assert trusted_until is not None and taken_at is not None
    assert taken_at - trusted_until >= TIMING.margin_seconds - 0.5  # the gap: expiry minus deadline


def test_a_host_past_its_renew_deadline_stops_before_any_tmux_action() -> None:
    hosts, refs = three_items_on_two_hosts()
    (ref,) = on(hosts, "host-b", refs)
    b = hosts["host-b"]
    hosts.port("host-b").fail_renewals = True
    hosts.clock.advance(TIMING.renew_deadline_seconds)
    b.comment(ref, "must wait for the next holder")
    hosts.cycle("host-a")  # the reader keeps it in the inbox
    b.poll.run()  # held() is empty past the deadline: nothing is worked
    item = next(i for i in hosts.tracker.work_items(REPO, "loop") if i.ref == ref)

    with pytest.raises(LeaseLost):
        b.worker.work(item, Listing("loop", True), summary=b.poll.run())

    assert b.session(ref).received == []
    ledger = b.store.ledger(ref)
    assert ledger is not None and [p.comment.body for p in ledger.pending] == ["must wait for the next holder"]


def test_a_host_back_from_a_partition_ends_its_own_orphans_and_never_another_hosts_sessions() -> None:
    hosts, refs = three_items_on_two_hosts()
    a_items, b_items = on(hosts, "host-a", refs), on(hosts, "host-b", refs)
    hosts.port("host-a").unreachable = True
    hosts.clock.advance(TIMING.expiry_seconds)
    hosts.cycle("host-b")
    assert {hosts.holder(ref) for ref in refs} == {"host-b"}

    hosts.port("host-a").unreachable = False
    hosts.cycle("host-a")

    assert hosts.sessions("host-a") == {}  # its own, ended
    assert sorted(hosts.sessions("host-b")) == sorted(ref.target.name for ref in a_items + b_items)
    assert len(hosts["host-a"].events.named(Event.CLUSTER_ORPHAN_ENDED)) == 2


def test_a_moved_item_resumes_on_its_receiver_when_the_harness_can() -> None:
    hosts, refs = three_items_on_two_hosts()
    ref = on(hosts, "host-a", refs)[0]
    before = hosts.store.session(ref)
    mover = mover_on(hosts, "host-a")

    moved = mover.move(ref, "host-b")
    hosts.clock.advance(moved.starts_in_seconds)
    hosts.cycle("host-b")

    assert ref.target.name not in hosts.sessions("host-a") and hosts.holder(ref) == "host-b"
    argv = hosts.sessions("host-b")[ref.target.name].argv
    assert before is not None and ("--resume", before.harness_session_id) == argv[-2:]


def test_a_moved_item_whose_harness_cannot_resume_starts_fresh_told_it_moved() -> None:
    hosts = Hosts()
    a, _ = hosts.add("host-a", harness="cursor"), hosts.add("host-b", harness="cursor")
    ref = a.item(1)
    hosts.cycle()
    giver = hosts.holder(ref)
    receiver = "host-b" if giver == "host-a" else "host-a"

    moved = mover_on(hosts, giver).move(ref, receiver)
    hosts.clock.advance(moved.starts_in_seconds)
    hosts.cycle(receiver)

    prompt = hosts.sessions(receiver)[ref.target.name].prompt
    assert f"ran on host {giver}; an operator moved the item here" in prompt
    record = hosts.store.session(ref)
    assert record is not None and (record.host, record.previous_host) == (receiver, "")


def test_an_item_is_placed_on_no_host_when_all_are_full_and_its_comments_wait() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", max_sessions=1)
    first, second = a.item(1), a.item(2)
    hosts.cycle()
    a.comment(second, "waits for a slot")
    hosts.cycle()

    assert [lease.item for lease in hosts.port("host-a").leases()] == [first]
    assert hosts.store.inbox(second) != [] and second.target.name not in hosts.sessions("host-a")


def mover_on(hosts: Hosts, name: str) -> Mover:
    world = hosts[name]
    assert world.cluster is not None
    return Mover(
        cluster=world.cluster, leases=world.leases, uow=world.usecases.uow, tmux=world.tmux, grace_seconds=0,
        pause=world.clock.sleep,
    )  # fmt: skip


def test_an_item_waiting_for_a_free_slot_is_said_once_shown_and_told_once_it_outlasts_a_cycle() -> None:
    from app.usecases.cluster.slot_wait import waits

    hosts = Hosts()
    a = hosts.add("host-a", max_sessions=1)
    first, second = a.item(1), a.item(2)

    hosts.cycle()
    hosts.cycle()
    hosts.cycle()

    said = [e["work_item"] for e in a.events.named(Event.CLUSTER_SLOT_WAITING)]
    told = [body for item, body in hosts.tracker.posted if item == second]
    assert (hosts.holder(first), hosts.holder(second)) == ("host-a", "")
    assert said == [str(second)]
    assert len(told) == 1 and "waiting for a free slot" in told[0]
    assert [w.item for w in waits(hosts.store.meta())] == [str(second)]


def test_a_slot_a_close_frees_goes_to_the_waiting_item_with_the_oldest_undelivered_comment() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", max_sessions=1)
    first, second, third = a.item(1), a.item(2), a.item(3)
    hosts.cycle()
    a.comment(third, "older, on the third")
    a.comment(second, "newer, on the second")
    hosts.cycle()

    a.admin().close(first, keep_tmux=False)
    hosts.cycle()

    assert [hosts.holder(ref) for ref in (first, second, third)] == ["", "", "host-a"]
    assert [(e["work_item"], e["how"]) for e in a.events.named(Event.CLUSTER_LEASE_PLACED)][-1] == (
        str(third),
        "placed",
    )
