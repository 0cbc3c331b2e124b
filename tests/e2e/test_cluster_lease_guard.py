"""The lease guard end to end: an agent never outlives its host's lease. Two real daemons on one
PostgreSQL, each with its own tmux server and the recording harness; host A is stopped (SIGTERM, no
restart), paused as a whole between its lease check and its paste (SIGSTOP), or cut off from the
database (a partition): each run ends with at most one live agent per item and each comment given
to one conversation once."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from adapters.stop_point import ENV as STOP_POINT
from domain.refs import WorkItemRef
from tests.e2e.cluster_rig import Cluster, Host, cluster, dumped, event_time
from tests.github_standin.rigs import standin
from tests.tmux_support import wait_for

__all__ = ["cluster", "standin"]

pytestmark = [pytest.mark.gh, pytest.mark.tmux]


def test_a_host_stopped_past_its_lease_ends_its_agent_before_another_host_spawns_one(
    cluster: Cluster,
) -> None:
    a, b = cluster.add("host-a"), cluster.add("host-b")
    ref = one_item_on_a(cluster, a)

    assert a.poller is not None and a.poller.stop() == 0  # a clean stop, and no restart
    spawned_on_b = wait_for(lambda: spawned(b, ref), timeout=60, what=f"b's agent\n{dumped(cluster)}")
    live_on_a = live_agents(a, ref)
    body = "after the stop"
    comment = cluster.comment(ref, body)
    wait_for(lambda: comment in cluster.delivered([ref]), timeout=60, what=f"delivered\n{dumped(cluster)}")

    assert live_on_a == 0, f"a's agent still ran when b's started\n{dumped(cluster)}"
    ended = a.events("cluster.agent_ended")
    assert ended and event_time(ended[0]) < taken_over(b, ref) <= spawned_on_b, dumped(cluster)
    assert given(a, body) + given(b, body) == 1 and live_agents(b, ref) == 1


def test_a_daemon_paused_between_its_lease_check_and_its_paste_delivers_the_comment_once(
    cluster: Cluster,
) -> None:
    a, b = cluster.add("host-a"), cluster.add("host-b")
    a.loop.env = {**a.loop.env, STOP_POINT: "paste"}  # a stops itself right after its lease check
    ref = one_item_on_a(cluster, a)
    assert a.poller is not None
    pid, body = a.poller.pid, "exactly once"

    comment = cluster.comment(ref, body)
    wait_for(lambda: stopped(pid), timeout=60, what=f"a paused before its paste\n{dumped(cluster)}")
    wait_for(lambda: comment in cluster.delivered([ref]), timeout=60, what=f"b delivered\n{dumped(cluster)}")
    live_on_a = live_agents(a, ref)
    os.kill(pid, signal.SIGCONT)
    wait_for(lambda: a.events("cluster.orphan_ended"), timeout=60, what=f"a's orphan ended\n{dumped(cluster)}")

    assert live_on_a == 0, f"a's agent still ran while b's worked the item\n{dumped(cluster)}"
    assert (given(a, body), given(b, body)) == (0, 1), dumped(cluster)
    assert comment in cluster.delivered([ref])  # a's late attempt changed nothing in the ledger
    assert live_agents(a, ref) == 0 and live_agents(b, ref) == 1


def test_a_partitioned_host_ends_its_agents_before_another_host_takes_the_item(
    cluster: Cluster,
) -> None:
    a, b = cluster.add("host-a"), cluster.add("host-b")
    ref = one_item_on_a(cluster, a)

    a.proxy.block()
    spawned_on_b = wait_for(lambda: spawned(b, ref), timeout=60, what=f"b's agent\n{dumped(cluster)}")
    live_on_a = live_agents(a, ref)
    body = "during the partition"
    comment = cluster.comment(ref, body)
    wait_for(lambda: comment in cluster.delivered([ref]), timeout=60, what=f"delivered\n{dumped(cluster)}")

    assert live_on_a == 0, f"a's agent still ran when b's started\n{dumped(cluster)}"
    ended = a.events("cluster.agent_ended")
    assert ended and event_time(ended[0]) < taken_over(b, ref) <= spawned_on_b, dumped(cluster)
    assert given(a, body) + given(b, body) == 1 and live_agents(b, ref) == 1


def one_item_on_a(cluster: Cluster, a: Host) -> WorkItemRef:
    """Both daemons running, one item placed on host-a (ties go to the lowest host id), its agent
    listening."""
    cluster.started()
    [ref] = cluster.issues(1)
    wait_for(lambda: live_agents(a, ref) == 1 and "ready" in a.loop.harness_kinds(), timeout=60, what="a's agent")
    assert cluster.holders() == {ref: "host-a"}
    return ref


def live_agents(host: Host, ref: WorkItemRef) -> int:
    """Live panes of the item's session on this host's tmux server that run a harness the-loop marked."""
    out = host.loop.tmux.run("list-panes", "-a", "-F", "#{session_name} #{pane_dead} #{@the-loop-harness}", check=False)
    rows = [line.split() for line in out.splitlines()]
    return sum(1 for row in rows if len(row) == 3 and row[0] == ref.target.name and row[1] == "0")


def spawned(host: Host, ref: WorkItemRef) -> float | None:
    """When this host started an agent for `ref` (its event log's time), once it is live."""
    names = {"session.spawned", "session.respawned"}
    found = [event_time(e) for e in host.events() if e["event"] in names and e.get("work_item") == str(ref)]
    return found[0] if found and live_agents(host, ref) else None


def taken_over(host: Host, ref: WorkItemRef) -> float:
    """When `host`, reading the repository, gave itself the item once its lease on host-a expired."""
    placed = [e for e in host.events("cluster.lease_placed") if e["work_item"] == str(ref)]
    return min(event_time(e) for e in placed if e["how"] == "taken-over")


def given(host: Host, body: str) -> int:
    return sum(body + "\n" in text for text in host.given())


def stopped(pid: int) -> bool:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return fields[0] == "T"
