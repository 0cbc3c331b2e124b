"""The ClusterPort contract, run against the in-memory fake and PostgreSQL alike: leases
placed on the host with the most free slots, expiring on the database's clock, renewed, taken over,
handed over; one reader per repository; the shared listing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import psycopg
import pytest

from adapters.postgres.cluster import PostgresCluster
from adapters.sqlite.cluster import SingleHost
from domain.cluster import Departed, Handover, HostState, LeaseTiming, Listed, Placement
from domain.errors import LeaseLost
from domain.model import ItemKind, ItemState, WorkItem
from domain.ports import ClusterPort
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.cluster import FakeCluster, FakeClusterDb
from tests.tmux_support import wait_for

REPO = RepoRef.parse("acme/widgets")
OTHER_REPO = RepoRef.parse("ghe.example:8443/acme/gadgets")
ITEMS = [WorkItemRef(REPO, n) for n in range(1, 9)]
TIMING = LeaseTiming(expiry_seconds=1.2, renew_deadline_seconds=0.6)


@dataclass
class Rig:
    """Hosts on one database: `host()` joins one, `wait()` lets the database's clock run on,
    `cut()` ends a host's connection as its process's death would (its repository locks go)."""

    make: Callable[[str, int], ClusterPort]
    wait: Callable[[float], None]
    cut: Callable[[ClusterPort], None]
    opened: list[ClusterPort] = field(default_factory=list)

    def host(self, name: str, *, max_sessions: int = 20) -> ClusterPort:
        port = self.make(name, max_sessions)
        self.opened.append(port)
        port.join(pid=1000 + len(self.opened), version="1.0.0")
        return port


@pytest.fixture(params=["fake", "postgres"])
def rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    if request.param == "fake":
        db = FakeClusterDb()
        fake = Rig(
            lambda name, most: FakeCluster(db, host=name, max_sessions=most, timing=TIMING),
            db.advance,
            lambda port: port.drop(),  # type: ignore[attr-defined]
        )
        yield fake
        return
    dsn = request.getfixturevalue("postgres").new_schema()
    real = Rig(
        lambda name, most: PostgresCluster(dsn, host=name, max_sessions=most, timing=TIMING),
        time.sleep,
        lambda port: _end_connection(dsn, port),
    )
    yield real
    for port in real.opened:
        port.close()  # type: ignore[attr-defined]


@pytest.fixture(params=["single", "fake", "postgres"])
def alone(request: pytest.FixtureRequest) -> Iterator[ClusterPort]:
    """One host with two slots, alone (SQLite's cluster of one) or the one host of a cluster."""
    if request.param == "single":
        yield SingleHost(host="host-a", max_sessions=2)
        return
    if request.param == "fake":
        port: ClusterPort = FakeCluster(FakeClusterDb(), host="host-a", max_sessions=2, timing=TIMING)
    else:
        port = PostgresCluster(request.getfixturevalue("postgres").new_schema(), host="host-a", max_sessions=2,
                               timing=TIMING)  # fmt: skip
    port.join(pid=1001, version="1.0.0")
    yield port
    if isinstance(port, PostgresCluster):
        port.close()


def _end_connection(dsn: str, port: ClusterPort) -> None:
    """Close the host's connection and wait for its server process to end: the server frees the
    connection's advisory locks only then, a moment after the client has gone."""
    backend = port._db.call(lambda db: db.run("SELECT pg_backend_pid()")[0][0])  # type: ignore[attr-defined]
    port.close()  # type: ignore[attr-defined]
    with psycopg.connect(dsn, autocommit=True) as admin:
        wait_for(
            lambda: admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (backend,)).fetchone() is None,
            what="the cut connection's server process to end",
        )


def item(ref: WorkItemRef, **changes: object) -> WorkItem:
    fields: dict[str, object] = {
        "title": f"item {ref.number} \u202e`rm -rf`", "author": "alice", "labels": frozenset({"loop", "bug"}),
        "kind": ItemKind.PULL_REQUEST, "body": "Fix\x1b[201~ it.\n", "url": f"https://github.com/x/{ref.number}",
        "created_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    }  # fmt: skip
    return WorkItem(ref, **{**fields, **changes})  # type: ignore[arg-type]


def holders(port: ClusterPort) -> dict[WorkItemRef, str]:
    return {lease.item: lease.host for lease in port.leases() if lease.live}


def test_a_new_item_goes_to_the_live_host_with_the_most_free_slots(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=2), rig.host("host-b", max_sessions=5)

    made = a.place(ITEMS[:1])

    assert [(lease.item, lease.host, lease.how) for lease in made] == [(ITEMS[0], "host-b", Handover.PLACED)]
    assert ITEMS[0] in b.renew() and ITEMS[0] not in a.renew()


def test_items_spread_over_the_hosts_and_a_full_cluster_leaves_the_rest_unplaced(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=3), rig.host("host-b", max_sessions=3)

    a.place(ITEMS[:4])
    b.place(ITEMS[4:])

    counts = sorted(list(holders(a).values()).count(h) for h in ("host-a", "host-b"))
    assert counts == [3, 3]  # two items wait: no host has a free slot
    assert {view.host: view.free for view in a.hosts()} == {"host-a": 0, "host-b": 0}


def test_a_host_gives_its_slots_in_the_order_the_items_come_and_a_released_one_to_the_next(alone: ClusterPort) -> None:
    first = alone.place([ITEMS[5], ITEMS[2], ITEMS[7]])
    alone.release(ITEMS[5])
    second = alone.place([ITEMS[7], ITEMS[1]])

    assert [lease.item for lease in first] == [ITEMS[5], ITEMS[2]]  # no free slot for the third
    assert [lease.item for lease in second] == [ITEMS[7]]
    assert alone.renew().items == {ITEMS[2], ITEMS[7]} == set(holders(alone))
    assert [(view.leases, view.free) for view in alone.hosts()] == [(2, 0)]


def test_an_item_already_held_is_not_placed_again(rig: Rig) -> None:
    a, b = rig.host("host-a"), rig.host("host-b")
    a.place(ITEMS[:1])
    first = holders(a)

    again = b.place(ITEMS[:1])

    assert again == [] and holders(b) == first


def test_a_renewed_lease_is_never_taken_and_a_lost_hosts_lease_is_taken_only_after_it_expires(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=1), rig.host("host-b", max_sessions=1)
    a.place(ITEMS[:1])
    holder, other = (a, b) if holders(a)[ITEMS[0]] == "host-a" else (b, a)
    for _ in range(3):  # renewed within the expiry, on the database's clock: never free
        rig.wait(TIMING.expiry_seconds / 2)
        holder.renew()
        other.renew()
        assert other.place(ITEMS[:1]) == []
    rig.wait(TIMING.expiry_seconds / 2)
    other.renew()  # the holder renews no more: lost
    assert other.place(ITEMS[:1]) == []  # not yet expired

    rig.wait(TIMING.expiry_seconds / 2 + 0.2)
    other.renew()
    taken = other.place(ITEMS[:1])

    assert [(t.host, t.previous, t.how) for t in taken] == [(other.host, holder.host, Handover.TAKEN_OVER)]
    assert ITEMS[0] not in holder.renew() and ITEMS[0] in other.renew()


def test_a_host_back_after_its_lease_expired_untaken_holds_it_again(rig: Rig) -> None:
    a = rig.host("host-a")
    a.place(ITEMS[:1])
    rig.wait(TIMING.expiry_seconds + 0.2)

    held = a.renew()

    assert ITEMS[0] in held and holders(a) == {ITEMS[0]: "host-a"}


def test_a_lost_host_gets_no_new_item_and_a_stopped_one_neither(rig: Rig) -> None:
    a, b, c = rig.host("host-a"), rig.host("host-b", max_sessions=1), rig.host("host-c", max_sessions=1)
    rig.wait(TIMING.expiry_seconds + 0.2)
    b.renew()
    c.renew()
    c.leave()

    a.renew()  # renewing again makes it alive; only b is alive with room now besides a
    b.renew()
    states = {view.host: view.state for view in a.hosts()}
    made = a.place(ITEMS[:1])

    assert states == {"host-a": HostState.ALIVE, "host-b": HostState.ALIVE, "host-c": HostState.STOPPED}
    assert made[0].host == "host-a"  # 20 free slots beat b's one


def test_a_host_whose_heartbeat_says_its_memory_is_short_is_given_no_new_agent(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=1), rig.host("host-b")
    b.renew(memory_short=True)

    made = a.place(ITEMS[:3], Placement(starts=frozenset(ITEMS[1:3])))

    assert {view.host: view.memory_short for view in a.hosts()} == {"host-a": False, "host-b": True}
    # the first's agent runs already (b's memory does not matter); a's one slot goes to the next
    assert [(lease.item, lease.host) for lease in made] == [(ITEMS[0], "host-b"), (ITEMS[1], "host-a")]


def test_a_hibernated_item_waits_for_the_host_holding_its_conversation_while_the_next_item_is_placed(
    rig: Rig,
) -> None:
    a, _ = rig.host("host-a"), rig.host("host-b", max_sessions=1)
    b_holds = {ITEMS[0]: "host-b", ITEMS[1]: "host-b"}

    made = a.place(ITEMS[:3], Placement(starts=frozenset(ITEMS[:3]), homes=b_holds))

    assert [(lease.item, lease.host) for lease in made] == [(ITEMS[0], "host-b"), (ITEMS[2], "host-a")]


def test_hosts_show_their_heartbeats_and_leases(rig: Rig) -> None:
    a = rig.host("host-a", max_sessions=4)
    a.place(ITEMS[:3])
    rig.wait(0.3)

    (view,) = a.hosts()

    assert (view.host, view.max_sessions, view.leases, view.free, view.pid) == ("host-a", 4, 3, 1, 1001)
    assert 0.25 <= view.heartbeat_age_seconds < TIMING.expiry_seconds and view.version == "1.0.0"


def test_only_the_holder_releases_a_lease(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=1), rig.host("host-b", max_sessions=1)
    a.place(ITEMS[:2])
    on_a = next(i for i, h in holders(a).items() if h == "host-a")

    b.release(on_a)
    kept = holders(a)
    a.release(on_a)

    assert kept[on_a] == "host-a" and on_a not in holders(a)


def test_a_handed_over_lease_starts_for_its_receiver_only_after_the_givers_renew_deadline(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=1), rig.host("host-b", max_sessions=1)
    a.place(ITEMS[:1])
    giver, receiver = (a, b) if holders(a)[ITEMS[0]] == "host-a" else (b, a)

    moved = giver.hand_over(ITEMS[0], receiver.host)
    early = receiver.renew()
    rig.wait(TIMING.renew_deadline_seconds + 0.1)
    late = receiver.renew()

    assert (moved.host, moved.previous, moved.how) == (receiver.host, giver.host, Handover.MOVED)
    assert ITEMS[0] not in early and ITEMS[0] in late
    assert ITEMS[0] not in giver.renew()


def test_only_the_holder_hands_over_and_only_to_a_live_host(rig: Rig) -> None:
    a, b = rig.host("host-a", max_sessions=1), rig.host("host-b", max_sessions=1)
    a.place(ITEMS[:1])
    giver, other = (a, b) if holders(a)[ITEMS[0]] == "host-a" else (b, a)

    with pytest.raises(LeaseLost, match=giver.host):
        other.hand_over(ITEMS[0], other.host)
    with pytest.raises(ValueError, match="host-z"):
        giver.hand_over(ITEMS[0], "host-z")

    assert holders(a) == {ITEMS[0]: giver.host}


def test_one_host_reads_a_repository_until_its_connection_ends(rig: Rig) -> None:
    a, b = rig.host("host-a"), rig.host("host-b")

    first = (a.poll_lock(REPO), b.poll_lock(REPO), a.poll_lock(REPO), b.poll_lock(OTHER_REPO))
    rig.cut(a)
    after = (b.poll_lock(REPO), a.poll_lock(REPO))

    assert first == (True, False, True, True)
    assert after == (True, False)


def test_the_shared_listing_carries_what_a_spawn_needs_and_what_departed(rig: Rig) -> None:
    a, b = rig.host("host-a"), rig.host("host-b")
    listed = [Listed(item(ITEMS[0]), "loop", history=True), Listed(item(ITEMS[1], author=None), "bug")]

    a.share(REPO, listed, [Departed(ITEMS[2], ItemState.MERGED), Departed(ITEMS[3], ItemState.UNLABELED)])
    seen = b.shared_listing(REPO)

    assert list(seen.listed) == listed
    assert list(seen.departed) == [Departed(ITEMS[2], ItemState.MERGED), Departed(ITEMS[3], ItemState.UNLABELED)]
    assert b.shared_listing(OTHER_REPO).listed == ()


def test_an_item_listed_in_the_first_cycle_stays_history_until_it_leaves_the_listing(rig: Rig) -> None:
    a = rig.host("host-a")
    a.share(REPO, [Listed(item(ITEMS[0]), "loop", history=True)], [])

    a.share(REPO, [Listed(item(ITEMS[0], title="renamed"), "loop"), Listed(item(ITEMS[1]), "loop")], [])
    kept = a.shared_listing(REPO)
    a.share(REPO, [Listed(item(ITEMS[1]), "loop")], [])
    a.share(REPO, [Listed(item(ITEMS[0]), "loop"), Listed(item(ITEMS[1]), "loop")], [])
    relisted = a.shared_listing(REPO)

    assert [(e.item.title, e.history) for e in kept.listed] == [("renamed", True), (item(ITEMS[1]).title, False)]
    assert [e.history for e in relisted.listed] == [False, False]


def test_two_hosts_placing_at_once_never_give_one_item_to_two_hosts(rig: Rig) -> None:
    hosts = [rig.host(f"host-{n}", max_sessions=3) for n in range(3)]
    rig.wait(TIMING.expiry_seconds + 0.2)
    assert hosts[0].place(ITEMS) == []  # every host lost: the rows exist, unheld, for the race below
    made: list[list[WorkItemRef]] = [[] for _ in hosts]
    barrier = threading.Barrier(len(hosts))

    def place(n: int) -> None:
        hosts[n].renew()
        barrier.wait()
        made[n] = [lease.item for lease in hosts[n].place(ITEMS)]

    threads = [threading.Thread(target=place, args=(n,)) for n in range(len(hosts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    placed = [i for each in made for i in each]
    assert sorted(placed) == sorted(set(placed)) and len(placed) == len(ITEMS)  # each once, 8 of 9 slots
    held = [hosts[n].renew() for n in range(len(hosts))]
    assert all(sum(i in h for h in held) == 1 for i in ITEMS)
