"""A cluster end to end: two and three hosts on one machine (own state roots, tmux servers and host
ids; one PostgreSQL; the GitHub stand-in through the real gh; the recording harness with
receipts) — items spread, a host SIGKILLed with its tmux server mid-stream, a partition."""

from __future__ import annotations

import threading
import time

import pytest

from domain.refs import WorkItemRef
from tests.e2e.cluster_rig import LEASE_SECONDS, RENEW_DEADLINE_SECONDS, Cluster, Host, cluster, dumped, event_time
from tests.github_standin.rigs import standin
from tests.tmux_support import wait_for

__all__ = ["cluster", "standin"]

pytestmark = [pytest.mark.gh, pytest.mark.tmux]


def test_two_hosts_spread_new_items_and_each_comment_reaches_only_its_holders_harness_once(cluster: Cluster) -> None:
    a, b = cluster.add("host-a"), cluster.add("host-b")
    cluster.started()
    refs = cluster.issues(4)
    wait_for(lambda: len(a.sessions()) + len(b.sessions()) == 4, timeout=60, what="four sessions")
    holders = cluster.holders()
    ids = [cluster.comment(ref, f"comment for #{ref.number}") for ref in refs]

    wait_for(lambda: cluster.delivered(refs) >= set(ids), timeout=60, what="every comment delivered")

    assert sorted(holders.values()) == ["host-a", "host-a", "host-b", "host-b"], dumped(cluster)
    for ref in refs:
        mine, other = (a, b) if holders[ref] == "host-a" else (b, a)
        assert sum(f"comment for #{ref.number}\n" in text for text in mine.given()) == 1
        assert not any(f"comment for #{ref.number}\n" in text for text in other.given())
        assert ref.target.name in mine.sessions() and ref.target.name not in other.sessions()


def test_a_host_killed_with_its_tmux_mid_stream_loses_no_comment_and_none_reaches_a_conversation_twice(
    cluster: Cluster,
) -> None:
    hosts = [cluster.add(name) for name in ("host-a", "host-b", "host-c")]
    cluster.started()
    refs = cluster.issues(6)
    wait_for(lambda: sum(len(h.sessions()) for h in hosts) == 6, timeout=60, what="six sessions")
    victim = cluster["host-b"]
    its = [ref for ref, host in cluster.holders().items() if host == "host-b"]
    stream = Stream(cluster, refs, count=60)

    time.sleep(2.0)
    killed_at = victim.kill()
    stream.join()
    sent = stream.bodies

    wait_for(lambda: cluster.delivered(refs) >= set(sent), timeout=90, what=f"all delivered\n{dumped(cluster)}")
    taken = [e for h in hosts if h is not victim for e in h.events("cluster.lease_placed") if e["how"] == "taken-over"]
    last_renewal = last_heartbeat(cluster, "host-b")
    survivors = [h for h in hosts if h is not victim]
    confirmed_on_victim = {e["comment_id"] for e in victim.events("dispatch.succeeded") if "comment_id" in e}
    for comment_id, body in sent.items():
        seen = sum(body + "\n" in text for h in survivors for text in h.given())
        expected = 0 if comment_id in confirmed_on_victim else 1
        assert seen == expected, f"{body!r} reached the survivors' conversations {seen} times\n{dumped(cluster)}"
    assert {e["work_item"] for e in taken} == {str(ref) for ref in its}
    assert killed_at - RENEW_DEADLINE_SECONDS < last_renewal < killed_at
    assert min(event_time(e) for e in taken) >= last_renewal + LEASE_SECONDS  # not before the lease expired
    for ref in its:
        spawned = [text for h in survivors for text in h.given() if f"You are the agent for {ref}" in text]
        assert any("ran on host host-b; that host was lost" in text for text in spawned)


def test_a_partitioned_host_stops_acting_on_its_items_before_another_can_take_them_and_ends_its_orphans(
    cluster: Cluster,
) -> None:
    a, b = cluster.add("host-a"), cluster.add("host-b")
    cluster.started()
    refs = cluster.issues(4)
    wait_for(lambda: len(a.sessions()) + len(b.sessions()) == 4, timeout=60, what="four sessions")
    on_a = [ref for ref, host in cluster.holders().items() if host == "host-a"]
    sent = Stream(cluster, on_a, count=30)  # a is mid-delivery when it is cut off

    time.sleep(1.0)
    a.proxy.block()
    sent.join()
    wait_for(lambda: cluster.delivered(refs) >= set(sent.bodies), timeout=60, what=f"delivered\n{dumped(cluster)}")
    last_renewal = last_heartbeat(cluster, "host-a")
    a.proxy.unblock()
    wait_for(lambda: set(a.sessions()) == set(), timeout=30, what=f"a's orphans ended\n{dumped(cluster)}")

    taken = {e["work_item"]: event_time(e) for e in b.events("cluster.lease_placed") if e["how"] == "taken-over"}
    assert set(taken) == {str(ref) for ref in on_a}, dumped(cluster)
    for ref in on_a:
        acted = [event_time(e) for e in a.events() if e.get("work_item") == str(ref) and e["event"] in ACTIONS]
        assert max(acted) < last_renewal + RENEW_DEADLINE_SECONDS  # a stopped within its renew deadline
        assert taken[str(ref)] >= last_renewal + LEASE_SECONDS  # b took it only once the lease expired
    for body in sent.bodies.values():  # the conversation that has the item now got each once
        assert sum(body + "\n" in text for text in b.given()) == (0 if body in a_confirmed(a, sent) else 1)
    assert sorted(b.sessions()) == sorted(ref.target.name for ref in refs)  # b's sessions untouched
    assert sorted(e["work_item"] for e in a.events("cluster.orphan_ended")) == sorted(str(r) for r in on_a)


class Stream(threading.Thread):
    """Comments to `refs`, one every 0.1 s, each with a body of its own; `bodies`: id -> body."""

    def __init__(self, cluster: Cluster, refs: list[WorkItemRef], *, count: int) -> None:
        super().__init__()
        self.cluster, self.refs, self.count = cluster, refs, count
        self.bodies: dict[str, str] = {}
        self.start()

    def run(self) -> None:
        for n in range(self.count):
            ref = self.refs[n % len(self.refs)]
            body = f"stream {n} for #{ref.number}"
            self.bodies[self.cluster.comment(ref, body)] = body
            time.sleep(0.1)


def a_confirmed(host: Host, sent: Stream) -> set[str]:
    """The bodies whose delivery the host recorded as confirmed before it was cut off."""
    ids = {e["comment_id"] for e in host.events("dispatch.succeeded") if "comment_id" in e}
    return {body for cid, body in sent.bodies.items() if cid in ids}


ACTIONS = {"dispatch.pasted", "session.spawned", "session.respawned", "session.closed"}  # tmux actions on an item


def last_heartbeat(cluster: Cluster, host: str) -> float:
    """The host's last successful renewal, on the database's clock (this machine's)."""
    rows = cluster.query(f"SELECT extract(epoch FROM heartbeat_at)::float8 FROM hosts WHERE host = '{host}'")
    return float(rows[0][0])
