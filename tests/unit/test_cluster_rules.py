"""The cluster's rules as pure functions, and its configuration keys: placing an item, trusting a lease,
the lease timing (the renew deadline shorter than the expiry), the host id."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.sqlite.cluster import SingleHost
from app.config.loader import ConfigError, load
from domain.cluster import (
    HostState,
    HostView,
    LeaseTiming,
    Listed,
    Placement,
    agents_may_run,
    choose_host,
    handover_note,
    trusted,
)
from domain.model import WorkItem
from domain.refs import RepoRef, WorkItemRef

REF = WorkItemRef(RepoRef.parse("acme/widgets"), 7)


def host(
    name: str,
    *,
    most: int = 20,
    leases: int = 0,
    state: HostState = HostState.ALIVE,
    short: bool = False,
    age: float = 1.0,
) -> HostView:
    return HostView(name, most, leases, age, state, memory_short=short)


def test_a_new_item_goes_to_the_live_host_with_the_most_free_slots() -> None:
    hosts = [host("a", leases=15), host("b", most=10, leases=2), host("c", leases=19)]
    assert choose_host(hosts).choice == "b"


def test_equal_free_slots_go_to_the_lowest_host_id_so_every_placer_agrees() -> None:
    assert choose_host([host("c"), host("b"), host("d")]).choice == "b"


def test_lost_stopped_and_full_hosts_get_nothing() -> None:
    hosts = [host("a", state=HostState.LOST), host("b", state=HostState.STOPPED), host("c", most=3, leases=3)]
    decision = choose_host(hosts)
    assert (decision.choice, decision.reason) == (None, "no live host has a free slot")


def test_a_new_agent_goes_only_to_a_host_whose_memory_admits_one_and_a_running_one_anywhere() -> None:
    hosts = [host("a", most=2), host("b", short=True)]

    assert choose_host(hosts, starts=True).choice == "a"
    assert choose_host(hosts).choice == "b"  # its agent runs already: it takes no new memory
    refused = choose_host([host("b", short=True)], starts=True)
    assert (refused.choice, refused.reason) == (None, "no live host with a free slot has the memory for a new agent")


def test_the_placers_own_memory_read_now_counts_over_what_its_heartbeat_said() -> None:
    timing = LeaseTiming()
    placing = Placement(starts=frozenset({REF}), memory_short=True)

    assert placing.host_for(REF, [host("a"), host("b", most=2)], placer="a", timing=timing) == "b"
    assert Placement(starts=frozenset({REF})).host_for(REF, [host("a", short=True)], placer="a", timing=timing) == "a"


def test_a_hibernated_item_goes_only_to_the_host_holding_its_conversation_while_that_host_is_up() -> None:
    timing = LeaseTiming(expiry_seconds=30, renew_deadline_seconds=20)
    placing = Placement(starts=frozenset({REF}), homes={REF: "b"})

    def to(*hosts: HostView) -> str | None:
        return placing.host_for(REF, hosts, placer="a", timing=timing)

    assert to(host("a"), host("b", most=2)) == "b"
    assert to(host("a"), host("b", most=2, leases=2)) is None  # up, full: it waits for b's slot
    assert to(host("a"), host("b", short=True)) is None  # up, short of memory: it waits too
    assert to(host("a"), host("b", state=HostState.STOPPED, age=5)) is None  # a restart: it comes back
    assert to(host("a"), host("b", state=HostState.STOPPED, age=31)) == "a"  # stopped for good: gone
    assert to(host("a"), host("b", state=HostState.LOST, age=31)) == "a"  # lost: gone
    assert to(host("a")) == "a"  # never known here


def test_a_lease_is_trusted_only_within_the_renew_deadline_of_the_last_renewal() -> None:
    timing = LeaseTiming(expiry_seconds=30, renew_deadline_seconds=20)
    assert trusted(renewed_at=100.0, now=119.9, timing=timing).choice
    assert not trusted(renewed_at=100.0, now=120.0, timing=timing).choice
    assert not trusted(renewed_at=None, now=0.0, timing=timing).choice


@pytest.mark.parametrize(("expiry", "deadline"), [(30, 30), (30, 31), (30, 0)])
def test_a_renew_deadline_not_shorter_than_the_expiry_is_refused(expiry: float, deadline: float) -> None:
    with pytest.raises(ValueError, match="shorter than the lease's expiry"):
        LeaseTiming(expiry_seconds=expiry, renew_deadline_seconds=deadline)


def test_renewals_run_often_enough_that_two_may_fail_before_the_deadline() -> None:
    timing = LeaseTiming(expiry_seconds=30, renew_deadline_seconds=21)
    assert (timing.renew_every_seconds, timing.margin_seconds) == (7, 9)


def test_the_handover_note_names_the_host_and_never_carries_control_characters() -> None:
    assert "ran on host host-a; that host was lost" in handover_note("host-a", lost=True)
    assert "an operator moved the item here" in handover_note("host-a", lost=False)
    assert "\x1b" not in handover_note("a\x1b[201~b", lost=True)


def test_a_single_host_reads_every_repository_and_holds_what_it_placed_on_itself() -> None:
    alone = SingleHost(host="solo", max_sessions=5)
    listed = [Listed(WorkItem(REF, "t", "alice", frozenset({"loop"})), "loop", history=True)]
    alone.share(REF.repo, listed, [])

    assert REF not in alone.renew() and alone.poll_lock(REF.repo) and not alone.shared
    assert [lease.host for lease in alone.place([REF])] == ["solo"] and REF in alone.renew()
    assert alone.shared_listing(REF.repo).listed == tuple(listed)
    with pytest.raises(ValueError, match="works alone"):
        alone.hand_over(REF, "other")


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.upper().startswith("THE_LOOP_")]:
        monkeypatch.delenv(name)
    return tmp_path


def refusal(text: str) -> str:
    Path("c.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load("c.yaml")
    return str(refused.value)


def test_the_cluster_keys_default_to_the_hostname_the_memorys_sessions_and_a_30s_lease(config_dir: Path) -> None:
    Path("c.yaml").write_text("{}", encoding="utf-8")
    settings = load("c.yaml").settings
    assert settings.host_id and settings.cluster.max_sessions is None  # from the machine's memory
    assert settings.lease_timing == LeaseTiming(expiry_seconds=30, renew_deadline_seconds=20)


def test_the_cluster_keys_are_read_from_the_file(config_dir: Path) -> None:
    Path("c.yaml").write_text(
        "cluster: {hostId: host-b, maxSessions: 3, leaseSeconds: 4, renewDeadlineSeconds: 2.5}", encoding="utf-8"
    )
    settings = load("c.yaml").settings
    assert (settings.host_id, settings.cluster.max_sessions) == ("host-b", 3)
    assert settings.lease_timing == LeaseTiming(4, 2.5)


def test_the_free_memory_floor_is_read_as_the_docs_and_events_spell_it_and_as_it_was_first_spelt(
    config_dir: Path,
) -> None:
    for key in ("minFreeMemoryMiB", "minFreeMemoryMib"):
        Path("c.yaml").write_text(f"cluster: {{{key}: 2048}}", encoding="utf-8")
        assert load("c.yaml").settings.cluster.min_free_memory_mib == 2048, key


def test_a_renew_deadline_not_shorter_than_the_lease_is_a_config_error_naming_the_key(config_dir: Path) -> None:
    assert refusal("cluster: {leaseSeconds: 10, renewDeadlineSeconds: 10}").startswith(
        "c.yaml: cluster.renewDeadlineSeconds: must be shorter than leaseSeconds (10 >= 10)"
    )


def test_a_host_id_that_is_not_a_plain_name_is_refused(config_dir: Path) -> None:
    assert refusal("cluster: {hostId: 'a b'}").startswith("c.yaml: cluster.hostId: must be a plain name")


def test_the_agents_deadline_ends_before_the_lease_can_pass_to_another_host() -> None:
    timing = LeaseTiming(expiry_seconds=30, renew_deadline_seconds=20)
    sent = 1000.0  # read before the renewal request: the database runs the lease from later
    deadline = timing.agents_deadline(sent=sent)
    earliest_takeover = sent + timing.expiry_seconds

    assert deadline == 1020.0
    assert deadline + timing.kill_grace(60) + timing.watch_every_seconds < earliest_takeover
    assert earliest_takeover - deadline == timing.margin_seconds


def test_the_kill_grace_fits_half_the_margin_and_the_watchdog_looks_often() -> None:
    timing = LeaseTiming(expiry_seconds=3, renew_deadline_seconds=2)

    assert timing.kill_grace(10) == 0.5 and timing.kill_grace(0.2) == 0.2 and timing.kill_grace(-1) == 0
    assert timing.watch_every_seconds == 0.1
    assert LeaseTiming().watch_every_seconds == 1.0


def test_agents_may_run_only_before_the_deadline_of_the_last_renewal() -> None:
    assert agents_may_run(deadline=1020.0, now=1019.9).choice
    assert not agents_may_run(deadline=1020.0, now=1020.0).choice
    late = agents_may_run(deadline=1020.0, now=1023.5)
    assert not late.choice and "passed 3.5s ago" in late.reason
    assert not agents_may_run(deadline=None, now=0.0).choice
