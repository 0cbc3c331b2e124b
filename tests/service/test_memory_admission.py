"""Admission by memory (`cluster.minFreeMemoryMiB`): below it no new agent starts — the items wait for a
slot, said once, their comments kept — and the longest-idle agent is hibernated to make room; once the
memory is back, the waiting item starts and its comment is delivered once. A running agent is never
ended for it while it works. The memory is read again right before a new agent starts: fallen since
the item got its slot, the slot is given back and the item waits as any other."""

from __future__ import annotations

from domain.events import Event
from domain.ledger import Resolution
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World

MIB = 1024 * 1024


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def short_world() -> World:
    return World(min_free_memory=1024 * MIB, free_memory=4096 * MIB)


def rest(world: World, ref: WorkItemRef) -> None:
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.clock.advance(1)


def running(world: World) -> list[str]:
    return sorted(name for name, session in world.tmux.sessions.items() if not session.all_dead)


def test_below_the_free_memory_floor_a_new_item_waits_said_once_and_starts_once_memory_is_back() -> None:
    world = short_world()
    first = world.watched()
    world.free_memory = 512 * MIB
    second = world.item(2)
    comment = world.comment(second, "second item's work")
    world.cycle()
    world.cycle()

    assert running(world) == [first.target.name]
    (low,) = world.events.named(Event.CLUSTER_MEMORY_LOW)
    assert (low["available_mib"], low["min_free_mib"], low["waiting"]) == (512, 1024, 1)
    (waits,) = world.events.named(Event.CLUSTER_SLOT_WAITING)
    assert (waits["work_item"], waits["why"]) == (str(second), "memory")
    told = [body for item, body in world.tracker.posted if item == second]
    assert len(told) == 1 and "short of memory" in told[0]

    world.free_memory = 2048 * MIB
    world.cycle()

    assert second.target.name in running(world)
    assert world.ledger(second).resolved[comment.id].kind is Resolution.DELIVERED


def test_short_of_memory_the_longest_idle_agent_is_hibernated_to_make_room_and_a_busy_one_is_not() -> None:
    world = short_world()
    older, busy = world.watched(1), world.watched(2)
    rest(world, older)
    world.comment(busy, "keep working")
    world.cycle()  # its turn has not ended
    world.free_memory = 512 * MIB
    newcomer = world.item(3)
    world.comment(newcomer, "new work")

    world.cycle()

    (low,) = world.events.named(Event.CLUSTER_MEMORY_LOW)
    assert low["hibernated"] == str(older)
    assert world.record(older).hibernated_at is not None
    assert world.record(busy).hibernated_at is None
    assert busy.target.name in running(world) and newcomer.target.name not in running(world)


def test_an_agent_already_running_keeps_its_slot_and_work_while_memory_is_short() -> None:
    world = short_world()
    ref = world.watched()
    world.free_memory = 10 * MIB

    comment = world.comment(ref, "more work")
    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.events.named(Event.CLUSTER_MEMORY_LOW) == []


def test_memory_low_is_said_once_while_the_memory_stays_short_though_the_items_waiting_come_and_go() -> None:
    world = short_world()
    world.watched()
    world.free_memory = 512 * MIB
    gone = world.item(2)
    world.comment(gone, "second item's work")
    world.cycle()
    world.tracker.remove_label(gone, "loop")
    world.cycle()  # nothing waits now; the memory is still short
    later = world.item(3)
    world.comment(later, "third item's work")

    world.cycle()

    assert later.target.name not in running(world)
    assert len(world.events.named(Event.CLUSTER_MEMORY_LOW)) == 1


def test_memory_fallen_between_an_items_slot_and_its_spawn_holds_the_spawn_and_the_item_waits_for_memory() -> None:
    world = short_world()
    world.watched()
    ref = world.item(2)
    comment = world.comment(ref, "second item's work")
    back = []

    def meminfo() -> int:
        """Enough until the item got its slot; short from then until it is back."""
        placed = any(e["work_item"] == str(ref) for e in world.events.named(Event.CLUSTER_LEASE_PLACED))
        return 4096 * MIB if back or not placed else 512 * MIB

    world.meminfo = meminfo
    world.cycle()

    assert ref.target.name not in running(world) and world.store.session(ref) is None
    (held,) = world.events.named(Event.CLUSTER_START_HELD)
    assert (held["work_item"], held["available_mib"], held["hibernated"]) == (str(ref), 512, None)

    world.cycle()  # its slot was given back: it waits for memory, said as any such wait
    (waits,) = world.events.named(Event.CLUSTER_SLOT_WAITING)
    assert (waits["work_item"], waits["why"]) == (str(ref), "memory")
    assert len(world.events.named(Event.CLUSTER_MEMORY_LOW)) == 1
    back.append(True)
    world.cycle()

    assert ref.target.name in running(world)
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    given = [text for pane in world.session(ref).panes for text in [pane.prompt, *pane.received]]
    assert sum("second item's work" in text for text in given) == 1
    placed = [e for e in world.events.named(Event.CLUSTER_LEASE_PLACED) if e["work_item"] == str(ref)]
    assert len(placed) == 2 and len(world.events.named(Event.CLUSTER_START_HELD)) == 1
