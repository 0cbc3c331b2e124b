"""A hibernated agent woken by a comment is recorded awake in the record saved right before tmux
starts it, not once its resume is judged seconds later: a daemon that dies in between (or a fault
that ends the item's work there) leaves an agent that holds its slot — no agent more than
`cluster.maxSessions` runs — and that the sweep hibernates again once it is idle. (Found by the
capacity bench, `python -m bench.capacity`: 21 agents alive on 20 slots.)"""

from __future__ import annotations

from adapters.sqlite.cluster import SingleHost
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World

AFTER = 600.0


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def running(world: World) -> list[str]:
    return sorted(name for name, session in world.tmux.sessions.items() if not session.all_dead)


def woken_then_crashed(world: World) -> WorkItemRef:
    """An idle agent hibernated, its slot given up; a comment wakes it and the daemon dies while it
    judges the resume; the next run confirms the comment, and the agent's turn ends."""
    ref = world.watched()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.clock.advance(AFTER + 1)
    world.hibernation.sweep()
    world.cycle()
    world.comment(ref, "wake up")
    world.crash_in(world.watch, "wait_ready")
    world.cycle()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.cycle()
    return ref


def test_an_agent_woken_when_the_daemon_died_keeps_its_slot_so_no_more_agents_run_than_the_slots() -> None:
    world = World(cluster=SingleHost(host="solo", max_sessions=1), hibernate_after_seconds=AFTER)
    woken = woken_then_crashed(world)
    assert running(world) == [woken.target.name]
    waiting = world.item(2)
    world.comment(waiting, "second item's work")

    for _ in range(3):
        world.cycle()

    assert len(running(world)) <= 1, running(world)


def test_an_agent_woken_when_the_daemon_died_is_hibernated_again_once_idle() -> None:
    world = World(cluster=SingleHost(host="solo", max_sessions=1), hibernate_after_seconds=AFTER)
    woken = woken_then_crashed(world)
    world.clock.advance(AFTER + 1)

    world.hibernation.sweep()

    assert running(world) == []
    assert world.record(woken).hibernated_at is not None
