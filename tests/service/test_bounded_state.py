"""A spawn's receipt folder goes once nothing can look it up again — the item's
session closed with its harness ended and no comment left whose attempt a retry would look up, or
the item reset."""

from __future__ import annotations

from app.usecases.delivery.closing import CloseConfig
from domain.model import ItemState
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World


def spawns_of(world: World) -> set[str]:
    assert isinstance(world.receipts, FakeReceipts)
    return set(world.receipts.spawns)


def test_an_item_closed_upstream_with_its_harness_ended_leaves_no_receipt_folder() -> None:
    world = World()
    ref = world.watched()
    world.comment(ref)
    world.cycle()
    assert spawns_of(world)
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert spawns_of(world) == set()


def test_a_closed_item_whose_harness_still_runs_keeps_its_receipts() -> None:
    world = World(close=CloseConfig(kill_harness_on_close=False, keep_session_on_close=True))
    ref = world.watched()
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert spawns_of(world) == {world.record(ref).spawn_id}


def test_a_closed_item_with_a_comment_whose_attempt_may_have_landed_keeps_its_receipts() -> None:
    world = World()
    ref = world.watched()
    world.tmux.unresponsive_targets.add(ref.target.name)
    world.comment(ref)
    world.cycle()  # one attempt spent, no outcome known: a retry looks the receipts up first
    assert world.ledger(ref).pending
    world.tmux.unresponsive_targets.clear()
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert spawns_of(world) == {world.record(ref).spawn_id}


def test_a_reset_item_leaves_no_receipt_folder() -> None:
    world = World()
    ref = world.watched()
    admin = world.admin()

    for plan in admin.plan_reset([ref]):
        admin.reset(plan)

    assert spawns_of(world) == set()
