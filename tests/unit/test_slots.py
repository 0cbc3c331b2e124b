"""A host's slots: the bound's default from the machine's memory (read from a stand-in
`/proc/meminfo`, never the real one), which items need a slot, and the order waiting items get one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from adapters.memory import machine_memory
from domain.ledger import Ledger, StartRequest
from domain.model import ClosedBy, SessionRecord, SessionStatus
from domain.refs import WorkItemRef
from domain.slots import (
    GIB,
    BoundFrom,
    Claim,
    memory_total,
    session_bound,
    slot_order,
    waiting_since,
    wants_slot,
)

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
A, B, C = (WorkItemRef.parse(f"github:acme/widgets#{n}") for n in (1, 2, 3))
MEMINFO_24G = "MemTotal:       24683772 kB\nMemFree:         1234567 kB\nMemAvailable:   20000000 kB\n"


def test_the_bound_defaults_to_one_agent_per_two_gib_of_the_machines_memory() -> None:
    bound = session_bound(None, memory_bytes=memory_total(MEMINFO_24G))

    assert (bound.most, bound.source) == (12, BoundFrom.MEMORY)
    assert bound.said() == "12 (from 24 GiB memory)"


def test_a_small_machine_still_runs_one_agent_and_a_large_one_stops_at_the_cap() -> None:
    small = session_bound(None, memory_bytes=memory_total("MemTotal: 524288 kB\n"))
    large = session_bound(None, memory_bytes=memory_total("MemTotal: 536870912 kB\n"))  # 512 GiB

    assert (small.most, large.most) == (1, 20)
    assert small.said() == "1 (from 0.5 GiB memory)"


def test_a_configured_bound_wins_over_the_memory_and_says_so() -> None:
    bound = session_bound(3, memory_bytes=64 * GIB)

    assert (bound.most, bound.said()) == (3, "3 (from configuration)")


def test_memory_that_cannot_be_read_gives_a_small_bound_said_as_such() -> None:
    assert memory_total("MemFree: 12 kB\n") is None
    bound = session_bound(None, memory_bytes=memory_total(""))

    assert (bound.most, bound.source) == (4, BoundFrom.UNKNOWN)
    assert "could not be read" in bound.said()


def test_the_machines_memory_is_read_from_the_meminfo_it_is_given(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO_24G, encoding="ascii")

    assert machine_memory(meminfo) == 24683772 * 1024


def _record(status: SessionStatus = SessionStatus.ACTIVE) -> SessionRecord:
    closed_by = ClosedBy.OPERATOR if status is SessionStatus.CLOSED else None
    return SessionRecord(A, "claude", "sid", "/w", status=status, closed_by=closed_by)


def test_an_item_keeps_its_slot_while_its_agent_runs_and_gives_it_up_once_closed() -> None:
    idle = Ledger(A, AT)

    assert wants_slot(_record(), idle, kept=False, listed=True).choice
    assert wants_slot(_record(SessionStatus.PAUSED), idle, kept=False, listed=False).choice
    assert not wants_slot(_record(SessionStatus.CLOSED), idle, kept=False, listed=True).choice
    assert not wants_slot(None, idle, kept=False, listed=True).choice


def test_an_item_without_an_agent_needs_a_slot_only_while_something_waits_for_one() -> None:
    closed = _record(SessionStatus.CLOSED)
    asked = Ledger(A, AT, start=StartRequest("control", AT))

    assert wants_slot(closed, Ledger(A, AT), kept=True, listed=True).choice  # a comment: `the-loop start`?
    assert wants_slot(closed, asked, kept=False, listed=True).choice
    assert wants_slot(None, None, kept=False, listed=True, starts=True).choice  # its first look starts it
    assert not wants_slot(None, None, kept=False, listed=True).choice  # unarmed, no comment: nothing to look at
    assert not wants_slot(None, asked, kept=True, listed=False).choice  # no longer listed: nothing for it here


def test_a_free_slot_goes_to_the_item_whose_oldest_undelivered_comment_is_oldest() -> None:
    claims = [
        Claim(A, runs=False, waiting_since=AT + timedelta(minutes=5)),
        Claim(B, runs=False, waiting_since=AT + timedelta(minutes=1)),
        Claim(C, runs=False, waiting_since=AT + timedelta(minutes=3)),
    ]

    assert slot_order(claims) == [B, C, A]


def test_of_items_whose_waits_began_together_the_one_with_the_oldest_undelivered_comment_goes_first() -> None:
    claims = [
        Claim(A, runs=False, waiting_since=AT),
        Claim(B, runs=False, waiting_since=AT, oldest_comment=AT + timedelta(minutes=9)),
        Claim(C, runs=False, waiting_since=AT, oldest_comment=AT + timedelta(minutes=2)),
    ]

    assert slot_order(claims) == [C, B, A]


def test_an_item_whose_agent_runs_gets_its_slot_back_before_any_waiting_one() -> None:
    claims = [Claim(A, runs=False, waiting_since=AT), Claim(B, runs=True, waiting_since=AT + timedelta(hours=1))]

    assert slot_order(claims) == [B, A]


def test_a_new_comment_never_moves_a_waiting_item_ahead_or_back() -> None:
    began = AT
    alone = waiting_since(oldest_comment=None, wait_began=began, now=AT + timedelta(hours=2))
    commented = waiting_since(oldest_comment=AT + timedelta(hours=1), wait_began=began, now=AT + timedelta(hours=2))
    older_comment = waiting_since(oldest_comment=AT - timedelta(hours=1), wait_began=None, now=AT)

    assert alone == commented == began
    assert older_comment == AT - timedelta(hours=1)
    assert waiting_since(oldest_comment=None, wait_began=None, now=AT) == AT


def test_the_available_memory_is_read_from_meminfo_and_admits_a_new_agent_only_above_the_floor() -> None:
    from domain.slots import admits_new_agent, memory_available

    meminfo = "MemTotal:       24683772 kB\nMemFree:  100 kB\nMemAvailable:    1048576 kB\n"
    assert memory_available(meminfo) == 1024**3
    assert memory_available("MemTotal: 1 kB\n") is None
    assert admits_new_agent(1024**3, min_free=512 * 1024**2).choice
    below = admits_new_agent(256 * 1024**2, min_free=512 * 1024**2)
    assert (below.choice, below.reason) == (False, "256 MiB free, below cluster.minFreeMemoryMiB 512")
    assert admits_new_agent(None, min_free=512 * 1024**2).choice  # unread: never stops the work
    assert admits_new_agent(0, min_free=None).choice  # off


def test_right_before_a_new_agent_starts_its_hosts_memory_starts_it_else_relieves_else_gives_the_slot_back() -> None:
    from domain.slots import AtStart, at_start

    floor = 1024 * 1024**2
    assert at_start(2 * floor, min_free=floor, relieved=False).choice is AtStart.START
    assert at_start(None, min_free=floor, relieved=False).choice is AtStart.START  # unread: never stops the work
    assert at_start(0, min_free=None, relieved=True).choice is AtStart.START  # off
    short = at_start(floor // 2, min_free=floor, relieved=False)
    assert (short.choice, short.reason) == (
        AtStart.RELIEVE,
        "512 MiB free, below cluster.minFreeMemoryMiB 1024: the agent resting longest is hibernated first",
    )
    assert at_start(floor // 2, min_free=floor, relieved=True).choice is AtStart.GIVE_BACK
    assert at_start(floor, min_free=floor, relieved=True).choice is AtStart.START
