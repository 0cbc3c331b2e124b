"""Hibernation over the fakes: an agent idle for `routing.hibernateAfterSeconds` is ended, its
conversation kept, its item shown hibernated; the next comment resumes that conversation and is
delivered once. An attached client, a dialog, a harness that cannot resume, a waiting comment keep
an agent awake."""

from __future__ import annotations

from adapters.sqlite.cluster import SingleHost
from app.usecases.delivery.watch import RECEIPT_POLL_SECONDS
from domain.events import Event
from domain.fleet import ItemState
from domain.item_facts import status_of
from domain.ledger import Resolution
from domain.receipts import HarnessState, ReceiptKind
from domain.refs import WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.service.world import World

AFTER = 600.0


def _receipts(world: World) -> FakeReceipts:
    assert isinstance(world.receipts, FakeReceipts)
    return world.receipts


def idle_agent(world: World) -> WorkItemRef:
    """An item whose agent took its start and ended that turn, seen to end."""
    ref = world.watched()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.clock.advance(1)
    world.cycle()
    return ref


def terminated(world: World, ref: WorkItemRef) -> int:
    return sum(1 for op, name in world.tmux.calls if op == "terminate_harness" and name == ref.target.name)


def test_an_agent_idle_past_the_setting_is_ended_its_conversation_kept_and_its_item_shown_hibernated() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    conversation = world.record(ref).harness_session_id
    turn_ended_at = _receipts(world).read(ref, world.record(ref).spawn_id)[-1].at
    assert turn_ended_at is not None

    world.clock.advance(AFTER - 10 - (world.clock.now() - turn_ended_at).total_seconds())
    world.hibernation.sweep()
    assert terminated(world, ref) == 0  # not idle long enough yet
    world.clock.advance(20)
    world.hibernation.sweep()

    assert terminated(world, ref) == 1
    record = world.record(ref)
    assert record.hibernated_at is not None
    assert record.harness_session_id == conversation
    (said,) = world.events.named(Event.SESSION_HIBERNATED)
    assert (said["harness_session_id"], said["ended"]) == (conversation, True)
    assert said["idle_seconds"] >= AFTER
    shown = status_of(record, world.ledger(ref), harness=HarnessState.DEAD)
    assert shown.state is ItemState.HIBERNATED


def test_the_next_comment_resumes_the_hibernated_conversation_and_is_delivered_once() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    conversation = world.record(ref).harness_session_id
    world.clock.advance(AFTER + 1)
    world.hibernation.sweep()
    spawns = world.spawns()

    comment = world.comment(ref)
    world.cycle()

    assert world.spawns() == spawns + 1
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    (woke,) = world.events.named(Event.SESSION_RESPAWNED)
    assert (woke["resumed"], woke["woke_from"], woke["harness_session_id"]) == (True, "hibernation", conversation)
    assert world.record(ref).hibernated_at is None
    assert sum("please add a test" in text for text in world.session(ref).received) == 0  # on the resume's argv
    assert world.events.named(Event.DISPATCH_FAILED) == []


def test_a_woken_agents_comment_is_confirmed_as_soon_as_its_resume_took_it() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    world.clock.advance(AFTER + 1)
    world.hibernation.sweep()
    _receipts(world).ready_after = 0.21  # just after a look at the pane: the next is 0.2 s on
    comment = world.comment(ref)

    world.cycle()

    delivered = world.ledger(ref).resolved[comment.id]
    assert delivered.kind is Resolution.DELIVERED
    said = world.receipts.read(ref, world.record(ref).spawn_id)
    (took,) = [receipt for receipt in said if receipt.kind is ReceiptKind.PROMPT and comment.body in receipt.prompt]
    assert took.at is not None
    # on the simulated clock: confirmed within two looks at the receipts of the prompt's receipt
    assert (delivered.at - took.at).total_seconds() <= 2 * RECEIPT_POLL_SECONDS


def test_an_attached_client_keeps_the_agent_awake() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    world.tmux.attach(ref.target, read_only=True)
    world.clock.advance(AFTER * 3)

    world.hibernation.sweep()

    assert terminated(world, ref) == 0
    assert world.record(ref).hibernated_at is None


def test_a_blocked_agent_is_never_hibernated() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.BLOCKED, tool="Bash")
    world.clock.advance(AFTER * 3)

    world.hibernation.sweep()

    assert terminated(world, ref) == 0


def test_a_harness_that_cannot_resume_is_never_hibernated() -> None:
    world = World(harness="cursor", hibernate_after_seconds=AFTER)
    ref = world.watched()
    world.clock.advance(AFTER * 3)

    world.hibernation.sweep()

    assert terminated(world, ref) == 0


def test_an_agent_a_comment_waits_for_is_not_hibernated() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    world.clock.advance(AFTER * 3)
    world.store.inbox_add([world.comment(ref)])  # read, not yet worked

    world.hibernation.sweep()

    assert terminated(world, ref) == 0


def test_hibernation_off_ends_no_agent() -> None:
    world = World()
    ref = idle_agent(world)
    world.clock.advance(AFTER * 100)

    world.hibernation.sweep()

    assert terminated(world, ref) == 0


def test_a_hibernated_agent_frees_its_slot_for_an_item_that_waits_and_its_own_next_comment_waits_its_turn() -> None:
    world = World(cluster=SingleHost(host="solo", max_sessions=1), hibernate_after_seconds=AFTER)
    first = idle_agent(world)
    second = world.item(2)
    world.comment(second, "second item's work")
    world.cycle()
    assert world.events.named(Event.CLUSTER_SLOT_WAITING)[0]["work_item"] == str(second)
    world.clock.advance(AFTER + 1)

    world.hibernation.sweep()
    world.cycle()

    assert second.target.name in world.tmux.sessions and not world.session(second).all_dead
    later = world.comment(first, "back to the first")
    world.cycle()
    assert later.id not in world.ledger(first).resolved  # waits for a slot, its conversation kept
    assert world.record(first).hibernated_at is not None


def test_each_turns_end_records_its_agents_memory_on_the_item_and_in_the_event() -> None:
    world = World()
    ref = idle_agent(world)  # the start's turn ended
    world.tmux.memory[world.record(ref).pane_id] = 700 * 1024 * 1024
    comment = world.comment(ref)
    world.cycle()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)

    world.cycle()

    (finished,) = [e for e in world.events.named(Event.SESSION_TURN_FINISHED) if e["comment_id"] == comment.id]
    assert finished["rss_mib"] == 700
    assert world.record(ref).rss_bytes == 700 * 1024 * 1024


def test_an_agent_whose_park_ended_with_its_resume_is_hibernated_once_idle() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    world.comment(ref, "please fix the flaky test")
    world.cycle()
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_FAILED, detail="rate_limit")
    world.cycle()  # parked until its reset
    world.clock.advance(5 * 60)
    world.cycle()  # the resume prompt goes in
    _receipts(world).plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.cycle()  # its turn ended well: the park stays on the record, resumed
    parked = world.record(ref).park
    assert parked is not None and parked.resuming
    world.clock.advance(AFTER + 1)

    world.hibernation.sweep()

    assert terminated(world, ref) == 1
    assert world.record(ref).hibernated_at is not None


def test_a_hibernated_agents_tmux_session_goes_with_its_dead_pane() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    world.clock.advance(AFTER + 1)

    world.hibernation.sweep()

    assert ref.target.name not in world.tmux.sessions  # nothing of it is left to show
    shown = status_of(
        world.record(ref),
        world.ledger(ref),
        harness=world.watch.state(world.record(ref), world.spawner.harness("claude")),
    )
    assert shown.state is ItemState.HIBERNATED


def test_an_operators_window_keeps_a_hibernated_items_session_and_only_the_harness_pane_goes() -> None:
    world = World(hibernate_after_seconds=AFTER)
    ref = idle_agent(world)
    operator = world.tmux.open_window(ref.target.name)
    world.clock.advance(AFTER + 1)

    world.hibernation.sweep()

    assert [(pane.id, pane.dead) for pane in world.session(ref).panes] == [(operator, False)]
    comment = world.comment(ref, "back to work")
    world.cycle()
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED  # in a window of its own
    assert world.session(ref).operator_received == []
