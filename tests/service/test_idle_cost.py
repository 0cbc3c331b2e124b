"""An idle cycle touches only the items with something to do (a kept comment, a
pending one, a start, an open turn, a record changed elsewhere), not every listed item."""

from __future__ import annotations

from dataclasses import replace

from domain.ledger import Ledger, StartRequest
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World


def counting_ledger_reads(world: World) -> list[WorkItemRef]:
    reads: list[WorkItemRef] = []
    original = world.store.ledger

    def ledger(item: WorkItemRef) -> Ledger | None:
        reads.append(item)
        return original(item)

    world.store.ledger = ledger  # type: ignore[method-assign]
    return reads


def started_turns_ended(world: World) -> None:
    """Each agent ends the turn of its start's prompt, and a cycle sees it: no turn is open."""
    assert isinstance(world.receipts, FakeReceipts)
    for record in world.store.sessions():
        world.receipts.plant(record.spawn_id, ReceiptKind.TURN_ENDED)
    world.cycle()


def test_an_idle_cycle_reads_no_ledger_of_a_listed_item_with_nothing_to_do() -> None:
    world = World()
    for number in range(1, 31):
        world.item(number, author="bob" if number > 3 else "alice")  # 3 sessions, 27 items only listed
    world.cycle()
    started_turns_ended(world)
    reads = counting_ledger_reads(world)

    summary = world.cycle()

    assert (reads, summary.items) == ([], 3)  # the 27 hold no slot: nothing of theirs needs an agent


def test_a_new_comment_on_a_quiet_item_is_delivered_and_only_its_item_is_read() -> None:
    world = World()
    refs = [world.item(number) for number in range(1, 6)]
    world.cycle()
    started_turns_ended(world)
    reads = counting_ledger_reads(world)
    comment = world.comment(refs[2])

    world.cycle()

    assert set(reads) == {refs[2]}
    assert str(comment.delivery_id) in world.session(refs[2]).received[-1]


def test_a_start_an_operator_asked_for_elsewhere_is_acted_on_at_the_next_cycle() -> None:
    world = World()
    ref = world.watched(1)
    world.cycle()
    world.vanish(ref)
    # `sessions move` from another process: the record and a start request, with no comment
    world.store.save_session(replace(world.record(ref), last_event="session.moved"))
    world.store.save_ledger(replace(world.ledger(ref), start=StartRequest("moved", world.clock.now())))
    spawns = world.spawns()

    world.cycle()

    assert world.spawns() == spawns + 1
