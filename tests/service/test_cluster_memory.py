"""Admission by memory where several hosts share the work: a new agent goes only to a host whose own
free memory admits it (`cluster.minFreeMemoryMiB`, read by that host, said in its heartbeat, and read
again right before the agent starts there), whichever host places it; when no host's memory admits
one, the items wait and a host short of memory hibernates its longest-idle agent to make room."""

from __future__ import annotations

from app.usecases.cluster.cluster_view import cluster_view
from domain.events import Event
from domain.ledger import Resolution
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.hosts import Hosts
from tests.service.world import World

GIB = 1024**3
ROOMY = {"min_free_memory": GIB, "free_memory": 4 * GIB}
SHORT = {"min_free_memory": GIB, "free_memory": GIB // 2}


def running(hosts: Hosts, name: str) -> list[str]:
    return sorted(n for n, session in hosts.sessions(name).items() if not session.all_dead)


def test_a_new_item_goes_to_a_host_whose_own_memory_admits_it_never_to_one_short_of_it() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", max_sessions=2, **ROOMY)  # a reads the repository and places its items
    hosts.add("host-b", max_sessions=5, **SHORT)  # the most free slots, but short of memory
    ref = a.item(1)

    hosts.cycle()

    assert hosts.holder(ref) == "host-a"
    assert running(hosts, "host-a") == [ref.target.name] and running(hosts, "host-b") == []
    shown = cluster_view(hosts.port("host-a"), []).lines()
    assert [line for line in shown if "short of memory" in line] == [next(x for x in shown if "host-b" in x)]


def test_a_placer_short_of_memory_gives_a_new_item_to_a_host_whose_own_memory_admits_it() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", **SHORT)  # a reads the repository and places its items
    hosts.add("host-b", **ROOMY)
    ref = a.item(1)

    hosts.cycle()
    hosts.cycle()

    assert hosts.holder(ref) == "host-b"
    assert running(hosts, "host-b") == [ref.target.name] and running(hosts, "host-a") == []
    assert a.events.named(Event.CLUSTER_SLOT_WAITING) == []


def idle_on(world: World, ref: WorkItemRef) -> None:
    receipts = world.receipts
    assert isinstance(receipts, FakeReceipts)
    receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)


def test_where_no_hosts_memory_admits_a_new_agent_the_item_waits_and_each_short_host_makes_room() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", max_sessions=2, **ROOMY)
    b = hosts.add("host-b", max_sessions=5, **ROOMY)
    resting = a.item(1)
    hosts.cycle()  # b has the most free slots: its agent runs there
    assert hosts.holder(resting) == "host-b"
    idle_on(b, resting)
    hosts.clock.advance(1)
    hosts.cycle()
    a.free_memory = b.free_memory = GIB // 2
    hosts.cycle()  # each host's heartbeat says so
    newcomer = a.item(2)
    a.comment(newcomer, "new work")

    hosts.cycle()

    assert hosts.holder(newcomer) == ""
    (waits,) = a.events.named(Event.CLUSTER_SLOT_WAITING)
    assert (waits["work_item"], waits["why"]) == (str(newcomer), "memory")
    (low,) = b.events.named(Event.CLUSTER_MEMORY_LOW)
    assert low["hibernated"] == str(resting)
    assert b.record(resting).hibernated_at is not None


def test_a_host_short_of_memory_right_before_a_spawn_starts_no_agent_and_the_comment_goes_once_memory_is_back() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", **SHORT)  # a reads the repository and places its items, none on itself
    b = hosts.add("host-b", **ROOMY)
    hosts.cycle()
    ref = a.item(1)
    comment = a.comment(ref, "the widget's work")
    hosts.cycle("host-a")  # b's heartbeat says its memory admits a new agent: the item is b's
    assert hosts.holder(ref) == "host-b"
    b.free_memory = GIB // 2  # fallen since that heartbeat

    hosts.cycle("host-b")  # b's next heartbeat gives it the item, and its cycle works it

    assert running(hosts, "host-b") == [] and b.store.session(ref) is None
    assert comment.id not in b.ledger(ref).resolved
    assert hosts.holder(ref) == ""  # given back: b's heartbeat says the shortage
    (held,) = b.events.named(Event.CLUSTER_START_HELD)
    assert (held["work_item"], held["available_mib"], held["min_free_mib"]) == (str(ref), 512, 1024)

    hosts.cycle()  # no host's memory admits a new agent: the item waits for it, said why
    (waits,) = a.events.named(Event.CLUSTER_SLOT_WAITING)
    assert (waits["work_item"], waits["why"]) == (str(ref), "memory")
    b.free_memory = 4 * GIB
    hosts.cycle()
    hosts.cycle()

    assert running(hosts, "host-b") == [ref.target.name]
    assert b.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert sum("the widget's work" in text for name in hosts.worlds for text in hosts.given(name)) == 1
    assert len(b.events.named(Event.CLUSTER_START_HELD)) == 1


def test_a_host_short_of_memory_right_before_a_spawn_hibernates_its_idlest_agent_and_starts_if_that_made_room() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", **SHORT)
    b = hosts.add("host-b", **ROOMY)
    resting = a.item(1)
    hosts.cycle()  # its agent runs on b
    idle_on(b, resting)
    hosts.clock.advance(1)
    hosts.cycle()
    newcomer = a.item(2)
    comment = a.comment(newcomer, "new work")
    hosts.cycle("host-a")  # b's heartbeat says it has the memory: the newcomer is b's
    # b's memory is short while the resting agent runs, enough once it is ended
    b.meminfo = lambda: GIB // 2 if resting.target.name in running(hosts, "host-b") else 4 * GIB

    hosts.cycle("host-b")

    assert b.record(resting).hibernated_at is not None
    assert running(hosts, "host-b") == [newcomer.target.name]
    assert b.ledger(newcomer).resolved[comment.id].kind is Resolution.DELIVERED
    assert hosts.holder(newcomer) == "host-b"
    assert b.events.named(Event.CLUSTER_START_HELD) == []


def test_a_comment_to_an_agent_running_on_a_host_short_of_memory_goes_in_while_a_new_agent_there_is_held() -> None:
    hosts = Hosts()
    a = hosts.add("host-a", **SHORT)
    b = hosts.add("host-b", **ROOMY)
    live = a.item(1)
    hosts.cycle()  # its agent runs on b
    newcomer = a.item(2)
    a.comment(newcomer, "new work")
    more = a.comment(live, "more work")
    hosts.cycle("host-a")  # both comments read; b's heartbeat says it has the memory: the newcomer is b's
    b.free_memory = GIB // 2

    hosts.cycle("host-b")

    assert b.ledger(live).resolved[more.id].kind is Resolution.DELIVERED
    assert running(hosts, "host-b") == [live.target.name]
    assert hosts.holder(newcomer) == "" and hosts.holder(live) == "host-b"
