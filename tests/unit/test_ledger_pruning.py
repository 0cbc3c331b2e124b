"""Pruning a ledger drops only the resolved ids the newness rule no longer needs."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from adapters.sql.state_codec import decode_ledger, encode_ledger
from app.usecases.cycle.ledger_pruning import LedgerPruner
from app.usecases.cycle.meta import read_through_key
from app.usecases.unit_of_work import UnitOfWork
from domain.authorize import Authorized
from domain.cluster import Held
from domain.ledger import LEGACY_SKEW, Ledger, Resolution, Resolved
from domain.model import Comment
from domain.refs import WorkItemRef
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.fakes.store import FakeStateStore

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
ITEM = WorkItemRef.parse("github:acme/widgets#7")
ALICE = Authorized.parse(["alice"])


def comment(cid: str, minutes: float) -> Comment:
    return Comment(id=cid, item=ITEM, author="alice", body="please", created_at=T0 + timedelta(minutes=minutes))


def delivered(ledger: Ledger, *comments: Comment) -> Ledger:
    ledger = ledger.admit(comments, authorized=ALICE)
    for each in comments:
        ledger = ledger.resolve(each.id, Resolution.DELIVERED, at=each.created_at + timedelta(seconds=5))
    return ledger


def armed() -> Ledger:
    return Ledger(item=ITEM, baseline_at=T0, armed_at=T0)


def test_pruning_drops_the_ids_of_comments_written_before_the_horizon_and_keeps_the_later_ones() -> None:
    ledger = delivered(armed(), comment("1", 10), comment("2", 20), comment("3", 90), comment("4", 100))

    pruned = ledger.prune(before=T0 + timedelta(minutes=60))

    # "3" and "4" are newer than the horizon: only their ids say they were delivered; "4" is also the last delivery
    assert set(pruned.resolved) == {"3", "4"}
    assert pruned.horizon == T0 + timedelta(minutes=60) and pruned.floor == pruned.horizon


def test_a_pruned_comment_brought_again_is_neither_admitted_nor_set_aside_again() -> None:
    old = comment("1", 10)
    pruned = delivered(armed(), old, comment("2", 90)).prune(before=T0 + timedelta(minutes=60))
    edited = replace(old, body="please (edited)", edited=True, editor="alice")

    admitted = pruned.admit([old, edited], authorized=ALICE)
    aside, said = admitted.set_aside([old, edited], now=T0 + timedelta(days=1), authorized=ALICE)

    assert admitted.pending == () and aside == pruned and said == []


def test_pruning_keeps_abandoned_comments_for_a_rearm_and_never_passes_a_pending_one() -> None:
    gone, waiting = comment("1", 10), comment("2", 30)
    ledger = armed().admit([gone, waiting], authorized=ALICE)
    ledger = ledger.resolve("1", Resolution.ABANDONED, at=T0 + timedelta(minutes=11), version="1.0")

    pruned = ledger.prune(before=T0 + timedelta(hours=5))

    assert "1" in pruned.resolved and "1" in pruned.abandoned  # a new version still re-arms it
    assert pruned.horizon is None or pruned.horizon <= waiting.created_at
    assert pruned.admit([waiting], authorized=ALICE).next_pending == ledger.next_pending


def test_an_entry_from_before_pruning_is_dropped_only_once_past_the_clock_skew_allowance() -> None:
    # a ledger written before entries kept the comment's time: only when it was resolved (our clock)
    legacy = Resolved(Resolution.DELIVERED, T0 + timedelta(minutes=30))
    last = Resolved(Resolution.DELIVERED, T0 + timedelta(minutes=50))
    ledger = replace(armed(), resolved={"old": legacy, "last": last})

    kept = ledger.prune(before=T0 + timedelta(minutes=30) + LEGACY_SKEW)
    dropped = ledger.prune(before=T0 + timedelta(minutes=31) + LEGACY_SKEW)

    assert "old" in kept.resolved and "old" not in dropped.resolved


def test_the_horizon_never_moves_back_and_stays_on_a_whole_second() -> None:
    ledger = delivered(armed(), comment("1", 10), comment("2", 20), comment("3", 200))
    once = ledger.prune(before=T0 + timedelta(minutes=15, microseconds=250))
    again = delivered(once, comment("4", 300)).prune(before=T0 + timedelta(minutes=5))

    assert once.horizon == T0 + timedelta(minutes=15)
    assert again.horizon == once.horizon and set(again.resolved) >= {"2", "3", "4"}


def test_a_ledger_stored_before_pruning_reads_with_no_horizon_and_no_entry_times() -> None:
    stored = delivered(armed(), comment("1", 10), comment("2", 12))
    older = json.loads(encode_ledger(stored))
    del older["horizon"]
    for entry in older["resolved"].values():
        del entry["written"]

    read = decode_ledger(json.dumps(older), version=3)

    assert read.horizon is None and read.resolved["1"].written is None
    # resolved at 9:10:05 (our clock): written by 9:20:05 at the latest, so not yet before a 9:15 horizon
    assert "1" in read.prune(before=T0 + timedelta(minutes=15)).resolved
    assert "1" not in stored.prune(before=T0 + timedelta(minutes=15)).resolved


class _Looked(FakeStateStore):
    """A store that says which ledgers were looked at."""

    def __init__(self) -> None:
        super().__init__()
        self.looked: list[int] = []

    def ledger(self, item: WorkItemRef) -> Ledger | None:
        self.looked.append(item.number)
        return super().ledger(item)


def test_a_restarted_daemon_resumes_the_pass_where_it_stood_and_reaches_the_last_items() -> None:
    store = _Looked()
    for number in range(1, 7):
        item = WorkItemRef.parse(f"github:acme/widgets#{number}")
        store.save_ledger(replace(armed(), item=item))
    store.save_meta(read_through_key(ITEM.repo), T0.isoformat())

    clock = FakeClock()

    def pruner() -> LedgerPruner:
        return LedgerPruner(uow=UnitOfWork(store, RecordingEvents(), clock), batch=2, host="h1")

    first = pruner()
    first.run(Held(everything=True))
    first.run(Held(everything=True))
    again = pruner()  # a restart, its cycles long: before it the pass had looked at four
    again.run(Held(everything=True))  # the pass ended with it
    clock.ticks += 600
    again.run(Held(everything=True))  # the next begins at the first item

    assert store.looked == [1, 2, 3, 4, 5, 6, 1, 2]


def test_a_cycle_longer_than_the_interval_looks_at_that_many_intervals_worth_at_most_ten() -> None:
    store = _Looked()
    for number in range(1, 61):
        store.save_ledger(replace(armed(), item=WorkItemRef.parse(f"github:acme/widgets#{number}")))
    store.save_meta(read_through_key(ITEM.repo), T0.isoformat())
    clock = FakeClock()
    pruner = LedgerPruner(uow=UnitOfWork(store, RecordingEvents(), clock), batch=2, interval_seconds=1.0)

    pruner.run(Held(everything=True))  # an idle cycle: one interval's worth
    clock.ticks += 3  # a cycle that delivered a burst took three intervals
    pruner.run(Held(everything=True))
    clock.ticks += 60  # one that took sixty
    pruner.run(Held(everything=True))

    assert len(store.looked) == 2 + 6 + 20
