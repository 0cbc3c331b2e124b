"""No queue behind a confirmation. A harness without receipts is confirmed by
staying alive `confirmSeconds` after a paste; the next comment of its item is pasted while that
wait runs, each confirmed on its own, in order. And no wait holds the poll cycle: an item waiting
for its harness to get ready waits beside the cycle, which goes on delivering to other items."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Comment, Reaction
from domain.webhook import Pushed
from tests.fakes.clock import FakeClock
from tests.service.world import CURSOR, World


def _pasted_at(world: World) -> dict[str, float]:
    """Each comment's paste, on the world's monotonic clock."""
    pasted: dict[str, float] = {}
    emit = world.events.emit

    def recording(event: Event, **fields: Any) -> None:
        emit(event, **fields)
        if event is Event.DISPATCH_PASTED and "comment_id" in fields:
            pasted.setdefault(fields["comment_id"], world.clock.monotonic())

    world.events.emit = recording  # type: ignore[method-assign]
    return pasted


def _push(world: World, comment: Comment) -> None:
    world.intake().accept(Pushed(comment, frozenset({"loop"})))
    world.poll.run_kept()  # the daemon's cue for a webhook's comment


def test_a_second_comment_to_a_receiptless_item_is_pasted_while_the_first_awaits_its_confirmation() -> None:
    world = World(harness="cursor")
    ref = world.watched()
    first = world.comment(ref, "first TOKEN-1")
    second = world.comment(ref, "second TOKEN-2")
    pasted = _pasted_at(world)
    sleep = world.clock.sleep

    def sleeping(seconds: float) -> None:  # the second comment comes by webhook during the first's wait
        if first.id in pasted and not second_pushed.is_set():
            second_pushed.set()
            _push(world, second)
        sleep(seconds)

    second_pushed = threading.Event()
    world.clock.sleep = sleeping  # type: ignore[method-assign]

    _push(world, first)

    assert second.id in pasted, "the second comment was never pasted"
    assert pasted[second.id] < pasted[first.id] + CURSOR.confirm_seconds, (
        f"the second comment was pasted {pasted[second.id] - pasted[first.id]:g}s after the first, "
        f"behind its {CURSOR.confirm_seconds:g}s confirmation"
    )
    ledger = world.ledger(ref)
    assert ledger.resolved[first.id].kind is Resolution.DELIVERED
    assert ledger.resolved[second.id].kind is Resolution.DELIVERED
    confirmed = [e["comment_id"] for e in world.events.named(Event.DISPATCH_CONFIRMED) if "comment_id" in e]
    assert confirmed == [first.id, second.id]
    received = world.session(ref).received
    assert [p for p in received if "TOKEN-" in p] == [received[-2], received[-1]]
    assert "TOKEN-1" in received[-2] and "TOKEN-2" in received[-1]


def test_a_receiptless_harness_that_dies_fails_each_pasted_comment_and_both_go_again_in_order() -> None:
    world = World(harness="cursor")
    ref = world.watched()
    first = world.comment(ref, "first TOKEN-1")
    second = world.comment(ref, "second TOKEN-2")
    sleep = world.clock.sleep
    died = threading.Event()

    def sleeping(seconds: float) -> None:  # both pasted, then the harness dies before either is confirmed
        if len(world.events.named(Event.DISPATCH_PASTED)) >= 2 and not died.is_set():
            died.set()
            world.tmux.exit_harness(ref.target.name)
        sleep(seconds)

    world.clock.sleep = sleeping  # type: ignore[method-assign]
    world.cycle()

    failed = [e["comment_id"] for e in world.events.named(Event.DISPATCH_UNCONFIRMED)]
    assert died.is_set() and failed[:2] == [first.id, second.id]
    world.clock.sleep = sleep  # type: ignore[method-assign]
    world.cycle()
    world.cycle()
    ledger = world.ledger(ref)
    assert ledger.resolved[first.id].kind is Resolution.DELIVERED
    assert ledger.resolved[second.id].kind is Resolution.DELIVERED
    session = world.session(ref)  # the respawned one: the first comment on its argv, the second pasted
    assert "TOKEN-1" in session.prompt and "TOKEN-2" not in session.prompt
    assert [p for p in session.received if "TOKEN-" in p] == [session.received[-1]] and "TOKEN-2" in session.received[
        -1
    ]


class _GatedClock(FakeClock):
    """A fake clock whose waits hold while its gate is closed: a wait that is under way stays so."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()

    def sleep(self, seconds: float) -> None:
        self.gate.wait()
        super().sleep(seconds)


def _within(seconds: float, condition: Callable[[], bool]) -> bool:
    """Whether `condition` holds within `seconds`: a bound on an event, not how long it takes."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_cycle_goes_on_delivering_to_item_b_while_item_a_waits_for_its_harness_to_get_ready() -> None:
    clock = _GatedClock()
    world = World(clock=clock)
    b = world.watched(2)
    for_b = world.comment(b, "for B")
    a = world.item(1)  # labelled now: this cycle spawns it, and its harness takes a while to get ready
    world.poll.beside = True  # as the daemon runs it
    clock.gate.clear()

    cycle = threading.Thread(target=world.poll.run, daemon=True)
    cycle.start()
    cycle.join(timeout=20)
    returned = not cycle.is_alive()
    # B's lane runs beside the cycle: its delivery may end after the cycle returned
    b_delivered = _within(60, lambda: for_b.id in world.ledger(b).resolved)
    a_confirmed = world.store.ledger(a) is not None and world.ledger(a).start is None
    clock.gate.set()
    cycle.join()
    drain = getattr(world.poll, "drain", None)
    if drain is not None:
        drain()

    assert returned, "the cycle waited for item A's harness to get ready"
    assert b_delivered and world.ledger(b).resolved[for_b.id].kind is Resolution.DELIVERED
    assert not a_confirmed, "item A's start was confirmed without its wait"
    assert world.store.ledger(a) is not None and world.ledger(a).start is None  # after the wait: started
    assert world.events.named(Event.SESSION_SPAWNED)[-1]["work_item"] == str(a)


def test_beside_the_cycle_reactions_are_posted_off_the_delivery_path_in_order_by_the_drain() -> None:
    world = World(harness="cursor")
    ref = world.watched()
    first, second = world.comment(ref, "first"), world.comment(ref, "second")
    world.poll.beside = True  # as the daemon runs it
    held = threading.Event()
    react = world.tracker.react

    def slow_github(comment: Comment, reaction: Reaction) -> None:
        held.wait(timeout=10)  # GitHub takes its time
        react(comment, reaction)

    world.tracker.react = slow_github  # type: ignore[method-assign]

    def pasted() -> list[str]:
        return [e["comment_id"] for e in world.events.named(Event.DISPATCH_PASTED) if "comment_id" in e]

    cycle = threading.Thread(target=world.poll.run, daemon=True)
    cycle.start()
    for _ in range(2000):
        if len(pasted()) == 2:
            break
        held.wait(0.01)
    answered_before_both_were_pasted = list(world.tracker.reactions)
    held.set()
    cycle.join()
    getattr(world.poll, "drain", lambda: None)()  # the daemon's stop: every reaction posted

    assert pasted() == [first.id, second.id]
    assert answered_before_both_were_pasted == [], "a paste waited for GitHub's answer to a reaction"
    assert world.tracker.reactions == [
        (first.id, Reaction.STARTED),
        (second.id, Reaction.STARTED),
        (first.id, Reaction.SUCCEEDED),
        (second.id, Reaction.SUCCEEDED),
    ]


def test_what_a_lane_finishes_after_its_cycle_was_said_counts_in_the_next_cycle() -> None:
    clock = _GatedClock()
    world = World(clock=clock)
    world.item(1)
    world.poll.beside = True
    clock.gate.clear()  # the spawn's wait for the harness to get ready holds
    cycle = threading.Thread(target=world.poll.run, daemon=True)
    cycle.start()
    cycle.join(timeout=20)
    returned = not cycle.is_alive()
    clock.gate.set()
    cycle.join()

    getattr(world.poll, "drain", lambda: None)()
    world.poll.run()

    assert returned, "the cycle waited for the spawn"

    spawned = [cycle["spawned"] for cycle in world.events.named(Event.POLL_CYCLE)]
    assert spawned == [0, 1]
