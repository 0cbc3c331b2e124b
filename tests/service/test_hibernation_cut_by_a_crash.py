"""An idle agent being hibernated when the daemon dies: its record is marked before the SIGTERM,
so a daemon killed after the agent ended but before it recorded the hibernation still finds it
hibernating. The next run takes it as hibernated — its slot freed, its conversation kept, the item
shown hibernated, its next comment resuming it (`woke_from: hibernation`) — never as a death or a
failure. An agent marked whose SIGTERM never went out still runs, and is no hibernation."""

from __future__ import annotations

import contextlib

from adapters.sqlite.cluster import SingleHost
from app.usecases.cycle.daemon import Daemon
from domain.events import Event
from domain.fleet import ItemState
from domain.item_facts import status_of
from domain.ledger import Resolution
from domain.receipts import HarnessState
from tests.service.test_daemon import FakeLock
from tests.service.test_hibernation import AFTER, idle_agent
from tests.service.world import World


def killed_while_hibernating(world: World, *, ended: bool) -> None:
    """The sweep finds the agent due and the daemon dies (a SIGKILL) at its SIGTERM: after it
    (`ended`: the agent is gone, its hibernation not recorded) or before it (the agent still runs);
    the next run starts on the same state."""
    original = world.tmux.terminate_harness

    def killed(*args, **kwargs):  # type: ignore[no-untyped-def]
        if ended:
            original(*args, **kwargs)
        raise KeyboardInterrupt

    world.tmux.terminate_harness = killed  # type: ignore[method-assign]
    world.clock.advance(AFTER + 1)
    with contextlib.suppress(KeyboardInterrupt):
        world.hibernation.sweep()
    world.tmux.terminate_harness = original  # type: ignore[method-assign]
    world.restart(version=world.version)


def running(world: World) -> list[str]:
    return sorted(name for name, session in world.tmux.sessions.items() if not session.all_dead)


def test_an_agent_ended_to_hibernate_when_the_daemon_died_is_hibernated_and_its_slot_goes_to_a_waiting_item() -> None:
    world = World(cluster=SingleHost(host="solo", max_sessions=1), hibernate_after_seconds=AFTER)
    first = idle_agent(world)
    conversation = world.record(first).harness_session_id
    second = world.item(2)
    world.comment(second, "second item's work")
    world.cycle()
    assert world.events.named(Event.CLUSTER_SLOT_WAITING)[0]["work_item"] == str(second)
    killed_while_hibernating(world, ended=True)
    assert running(world) == []

    world.hibernation.sweep()
    world.cycle()

    record = world.record(first)
    assert record.hibernated_at is not None and record.harness_session_id == conversation
    assert status_of(record, world.ledger(first), harness=HarnessState.DEAD).state is ItemState.HIBERNATED
    (said,) = world.events.named(Event.SESSION_HIBERNATED)
    assert (said["work_item"], said["ended"], said["harness_session_id"]) == (str(first), True, conversation)
    assert running(world) == [second.target.name]


def test_the_next_comment_resumes_an_agent_whose_hibernation_a_crash_cut_short_never_a_failure() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    conversation = world.record(ref).harness_session_id
    killed_while_hibernating(world, ended=True)

    comment = world.comment(ref, "back to work")
    world.cycle()  # before any sweep looked at it

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    (woke,) = world.events.named(Event.SESSION_RESPAWNED)
    assert (woke["resumed"], woke.get("woke_from"), woke["harness_session_id"]) == (True, "hibernation", conversation)
    failures = (Event.DISPATCH_FAILED, Event.SESSION_RESUME_FAILED, Event.SESSION_SPAWN_FAILED)
    assert [e for name in failures for e in world.events.named(name)] == []


def test_an_agent_marked_to_hibernate_whose_sigterm_never_went_out_is_awake_and_its_later_death_no_hibernation() -> (
    None
):
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    killed_while_hibernating(world, ended=False)
    assert running(world) == [ref.target.name]
    world.store.inbox_add([world.comment(ref)])  # a comment waits: not idle, not hibernated again

    world.hibernation.sweep()
    assert world.record(ref).hibernated_at is None
    world.tmux.exit_harness(ref.target.name)  # it dies by itself
    world.hibernation.sweep()

    assert world.record(ref).hibernated_at is None


def test_the_restarted_daemon_finishes_a_cut_hibernation_before_its_first_cycle_gives_out_the_slots() -> None:
    world = World(cluster=SingleHost(host="solo", max_sessions=1), hibernate_after_seconds=AFTER)
    first = idle_agent(world)
    second = world.item(2)
    world.comment(second, "second item's work")
    world.cycle()
    killed_while_hibernating(world, ended=True)
    daemon = Daemon(
        cycle=world.poll, uow=world.uow, lock=FakeLock(), interval_seconds=60, version=world.version,
        recover=world.hibernation.recover,
    )  # fmt: skip

    daemon.run(once=True)

    assert world.record(first).hibernated_at is not None
    assert running(world) == [second.target.name]
