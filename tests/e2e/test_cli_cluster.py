"""The cluster's commands end to end: `status` and `sessions list` show the cluster (hosts, heartbeats,
sessions, free slots), `sessions move` hands an item over, and a database that cannot be reached is
said by `status` while the daemon keeps its sessions and retries."""

from __future__ import annotations

import json

import pytest

from tests.e2e.cluster_rig import LEASE_SECONDS, Cluster, cluster, dumped
from tests.github_standin.rigs import standin
from tests.tmux_support import wait_for

__all__ = ["cluster", "standin"]

pytestmark = [pytest.mark.gh, pytest.mark.tmux]


def two_hosts_with_items(cluster: Cluster, count: int = 3) -> None:
    a, b = cluster.add("host-a", max_sessions=5), cluster.add("host-b", max_sessions=4)
    cluster.started()
    cluster.issues(count)
    wait_for(lambda: len(a.sessions()) + len(b.sessions()) == count, timeout=60, what="the sessions")


def test_status_shows_each_host_its_heartbeat_sessions_and_free_slots_and_a_lost_one(cluster: Cluster) -> None:
    two_hosts_with_items(cluster)
    holders = cluster.holders()
    cluster["host-b"].kill()
    wait_for(lambda: "lost" in cluster["host-a"].loop.cli("status").stdout, timeout=LEASE_SECONDS + 10, what="lost")

    text = cluster["host-a"].loop.cli("status")
    shown = json.loads(cluster["host-a"].loop.cli("status", "--json").stdout)

    assert text.returncode == 0, text.stderr
    assert "cluster: this host is host-a; 1 of 2 hosts alive" in text.stdout
    rows = {row["host"]: row for row in shown["cluster"]["hosts"]}
    assert (rows["host-a"]["state"], rows["host-a"]["this_host"], rows["host-a"]["max_sessions"]) == ("alive", True, 5)
    assert rows["host-b"]["state"] == "lost" and rows["host-b"]["heartbeat_seconds_ago"] >= LEASE_SECONDS
    assert set(holders.values()) == {"host-a", "host-b"}  # a took b's over once its lease expired
    assert (rows["host-a"]["sessions"], rows["host-a"]["free"]) == (3, 2)
    assert shown["store"] == {"reachable": True} and shown["last_cycle"] is not None


def test_sessions_list_names_each_sessions_host_and_looks_only_at_its_own(cluster: Cluster) -> None:
    two_hosts_with_items(cluster)
    holders = cluster.holders()

    rows = cluster["host-a"].loop.json_lines("sessions", "list", "--json")
    table = cluster["host-a"].loop.cli("sessions", "list").stdout.splitlines()

    assert {row["work_item"]: row["host"] for row in rows} == {str(ref): host for ref, host in holders.items()}
    for row in rows:
        assert row["here"] is (row["host"] == "host-a")
        assert (row["state"] == "live") is row["here"]
    assert table[0].split()[:2] == ["HOST", "WORK"]
    assert "cluster: this host is host-a; 2 of 2 hosts alive" in table
    on_a = list(holders.values()).count("host-a")
    mine = next(row for row in rows if row["here"])
    assert (mine["host_state"], mine["host_sessions"], mine["host_free"]) == ("alive", on_a, 5 - on_a)
    assert mine["host_heartbeat_seconds_ago"] < LEASE_SECONDS


def test_sessions_move_hands_an_item_to_another_host_which_starts_it_fresh_told_it_moved(cluster: Cluster) -> None:
    two_hosts_with_items(cluster, count=2)
    ref = next(ref for ref, host in cluster.holders().items() if host == "host-a")
    a, b = cluster["host-a"], cluster["host-b"]

    moved = a.loop.cli("sessions", "move", "--work-item", str(ref), "--to", "host-b")

    assert moved.returncode == 0, moved.stderr
    assert f"moved {ref} to host-b: its session here ended" in moved.stdout
    told = "ran on host host-a; an operator moved the item here"
    wait_for(lambda: any(told in t for t in b.given()), timeout=30, what=f"b starts it\n{dumped(cluster)}")
    assert ref.target.name in b.sessions() and ref.target.name not in a.sessions()
    assert cluster.holders()[ref] == "host-b"
    comment = cluster.comment(ref, "after the move")
    wait_for(lambda: comment in cluster.delivered([ref]), timeout=30, what="the comment delivered on b")
    assert sum("after the move\n" in t for t in b.given()) == 1 and not any("after the move" in t for t in a.given())


def test_sessions_move_refuses_a_host_that_is_not_alive_and_an_item_held_elsewhere(cluster: Cluster) -> None:
    two_hosts_with_items(cluster, count=3)  # a (5 free), a (4 = 4, the lower id), b (4 > 3)
    on_b = next(ref for ref, host in cluster.holders().items() if host == "host-b")
    on_a = next(ref for ref, host in cluster.holders().items() if host == "host-a")

    nowhere = cluster["host-a"].loop.cli("sessions", "move", "--work-item", str(on_a), "--to", "host-z")
    elsewhere = cluster["host-a"].loop.cli("sessions", "move", "--work-item", str(on_b), "--to", "host-a")

    assert nowhere.returncode == 2 and "host 'host-z' is not another live host" in nowhere.stderr
    assert elsewhere.returncode == 1 and "it is held by host host-b" in elsewhere.stderr
    assert cluster.holders()[on_a] == "host-a" and cluster.holders()[on_b] == "host-b"


def test_the_database_away_is_said_by_status_sessions_keep_running_and_nothing_is_lost(cluster: Cluster) -> None:
    alone = cluster.add("host-a")
    cluster.started()
    (ref,) = cluster.issues(1)
    wait_for(lambda: alone.sessions() == [ref.target.name], timeout=60, what="its session")
    wait_for(lambda: cluster.delivered([ref]) is not None and cluster.store().ledger(ref), what="its ledger")

    alone.proxy.block()
    comment = cluster.comment(ref, "said while the database was away")
    wait_for(lambda: alone.events("store.unreachable"), timeout=30, what="the outage noticed")
    status = alone.loop.cli("status")
    shown = json.loads(alone.loop.cli("status", "--json").stdout)
    sessions_meanwhile = alone.sessions()
    alone.proxy.unblock()

    wait_for(lambda: comment in cluster.delivered([ref]), timeout=60, what=f"delivered after\n{dumped(cluster)}")
    assert status.returncode == 1 and "database: UNREACHABLE" in status.stdout, status.stdout + status.stderr
    assert "poller: its cycles fail since" in status.stdout and "sessions keep running" in status.stdout
    assert shown["store"]["reachable"] is False and shown["store"]["poller"]["cycles"] >= 1
    assert sessions_meanwhile == [ref.target.name] and alone.sessions() == [ref.target.name]
    assert sum("said while the database was away\n" in t for t in alone.given()) == 1
    wait_for(lambda: alone.events("store.reachable"), what="the recovery noted")


def test_an_item_waiting_for_a_free_slot_is_shown_by_status_and_sessions_list(cluster: Cluster) -> None:
    a = cluster.add("host-a", max_sessions=1)
    cluster.started()
    first, second = cluster.issues(2)
    wait_for(lambda: a.events("cluster.slot_waiting"), timeout=60, what="the wait said")
    wait_for(lambda: a.events("notice.posted"), timeout=60, what="the item told")

    text = a.loop.cli("status").stdout
    shown = json.loads(a.loop.cli("status", "--json").stdout)
    listed = a.loop.cli("sessions", "list").stdout

    assert cluster.holders().get(first) == "host-a" and second not in cluster.holders()
    assert [e["work_item"] for e in a.events("cluster.slot_waiting")] == [str(second)]
    assert [w["work_item"] for w in shown["waiting_for_slot"]] == [str(second)]
    assert f"waiting for a free slot: {second} since" in text
    assert f"waiting for a free slot: {second} since" in listed
    assert [e["notice"] for e in a.events("notice.posted")] == ["slot-wait"]
