"""A pruned ledger can never re-deliver — the whole poll cycle over each real state
store (SQLite, PostgreSQL) and the fake, a pruned comment replayed by webhook and by a re-read."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from adapters.postgres.store import PostgresStateStore
from adapters.sqlite.cluster import SingleHost
from adapters.sqlite.store import SqliteStateStore
from app.config.settings import Settings
from app.container import _prune_margin
from app.usecases.cycle.ledger_pruning import PRUNE_BATCH
from domain.events import Event
from domain.ledger import PRUNE_MARGIN, Resolution
from domain.webhook import Pushed
from tests.fakes.store import FakeStateStore
from tests.service.world import REPO, World


@pytest.fixture(params=["fake", "sqlite", "postgres"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    if request.param == "postgres":
        store = PostgresStateStore(request.getfixturevalue("postgres").new_schema())
    elif request.param == "sqlite":
        store = SqliteStateStore(tmp_path / "state.sqlite3")
    else:
        store = FakeStateStore()
    # a pass each cycle: these tests are about what pruning keeps, not how often it runs; and a slot
    # for every item they label (more than a batch of ledgers)
    slots = SingleHost(host="solo", max_sessions=4 * PRUNE_BATCH)
    yield World(store=store, prune_every_seconds=0, cluster=slots)  # type: ignore[arg-type]  # any StateStore: the World reads only the port
    if isinstance(store, SqliteStateStore | PostgresStateStore):
        store.close()


def quiet_for(world: World, margin_cycles: int) -> None:
    """Cycles pass, each reading the repository, until the pruning margin lies behind."""
    for _ in range(int(PRUNE_MARGIN.total_seconds() // 60) + margin_cycles):
        world.cycle()


def test_a_pruned_comment_replayed_by_webhook_and_by_a_re_read_is_not_delivered(world: World) -> None:
    ref = world.watched()
    old = world.comment(ref, "an instruction, delivered once")
    world.cycle()
    assert world.ledger(ref).resolved[old.id].kind is Resolution.DELIVERED
    quiet_for(world, 2)
    later = world.comment(ref, "a later instruction")
    world.cycle()
    pruned = world.ledger(ref)
    assert old.id not in pruned.resolved and later.id in pruned.resolved
    assert world.events.named(Event.POLL_LEDGER_PRUNED)

    world.intake().accept(Pushed(old, frozenset({"loop"})))  # GitHub's "Redeliver", or an edit's delivery
    world.cycle()
    world.store.save_cursor(REPO, "0")  # the stream read again from its start: every comment once more
    world.cycle()

    assert [p for p in world.session(ref).received if "delivered once" in p] != []
    assert sum("delivered once" in p for p in world.session(ref).received) == 1
    assert world.ledger(ref).pending == () and old.id not in world.ledger(ref).resolved
    assert world.store.inbox(ref) == []


def test_a_comment_written_while_its_repository_could_not_be_read_is_still_delivered(
    world: World,
) -> None:
    ref = world.watched()
    world.comment(ref, "first")
    world.cycle()
    world.tracker.fail_reads.add(REPO)
    unread = world.comment(ref, "written during the outage")
    quiet_for(world, 2)  # hours of failed reads: the horizon trails the last read that worked
    world.tracker.fail_reads.clear()

    world.cycle()

    assert world.ledger(ref).resolved[unread.id].kind is Resolution.DELIVERED
    assert sum("during the outage" in p for p in world.session(ref).received) == 1


def test_pruning_takes_a_bounded_batch_of_ledgers_per_cycle(world: World) -> None:
    refs = [world.item(n) for n in range(1, PRUNE_BATCH + 6)]
    world.cycle()
    for ref in refs:
        world.comment(ref, "hello")
    world.cycle()
    for ref in refs:
        world.comment(ref, "and then")  # the last delivery is kept: the one before it can go
    world.cycle()
    world.clock.advance(PRUNE_MARGIN.total_seconds() + 120)  # every ledger prunable at once

    per_cycle: list[set[str]] = []
    for _ in range(3):  # a pass may be under way: its rest, a whole pass, the rest of that one
        mark = len(world.events.records)
        world.cycle()
        fresh = world.events.records[mark:]
        per_cycle.append({e["work_item"] for e in fresh if e["event"] == "poll.ledger_pruned"})

    assert all(len(pruned) <= PRUNE_BATCH for pruned in per_cycle)
    assert set().union(*per_cycle) == {str(ref) for ref in refs}


def test_a_ledger_this_version_cannot_read_fails_only_its_own_pruning(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    world = World(store=SqliteStateStore(path))  # type: ignore[arg-type]
    broken, fine = world.watched(1), world.watched(2)
    for ref in (broken, fine):
        world.comment(ref, "one")
        world.cycle()
        world.comment(ref, "two")
        world.cycle()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE ledgers SET data = '{}' WHERE item = ?", (str(broken),))
    world.clock.advance(PRUNE_MARGIN.total_seconds() + 120)

    world.cycle()

    (failed,) = [e for e in world.events.named(Event.POLL_ITEM_FAILED) if "pruning" in e["cause"]]
    assert failed["work_item"] == str(broken)
    assert [e["work_item"] for e in world.events.named(Event.POLL_LEDGER_PRUNED)][-1:] == [str(fine)]


def test_the_pruning_margin_is_a_setting_the_horizon_trails_the_read_by_it(tmp_path: Path) -> None:
    world = World(store=FakeStateStore(), prune_every_seconds=0, prune_margin=timedelta(minutes=2))
    ref = world.watched()
    old = world.comment(ref, "an instruction, delivered once")
    world.cycle()
    world.comment(ref, "a later instruction")
    for _ in range(4):  # four minutes of cycles: past a two-minute margin, well inside the default hour
        world.cycle()
    assert old.id not in world.ledger(ref).resolved


def test_the_container_hands_the_pruner_the_configured_margin_and_pass_and_refuses_under_a_minute() -> None:
    settings = Settings(state={"pruneMarginSeconds": 120, "prunePassSeconds": 30})  # type: ignore[arg-type]
    assert _prune_margin(settings) == timedelta(minutes=2)
    assert _prune_margin(Settings()) == PRUNE_MARGIN
    with pytest.raises(ValidationError, match="pruneMarginSeconds"):
        Settings(state={"pruneMarginSeconds": 59})  # type: ignore[arg-type]
