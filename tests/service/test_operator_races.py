"""An operator's command racing a delivery in flight is never undone by the poller."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from app.usecases.views.sessions_admin import SessionsAdmin
from domain.events import Event
from domain.model import ItemState, SessionStatus
from domain.receipts import ReceiptKind
from domain.refs import TmuxTarget, WorkItemRef
from tests.fakes.receipts import FakeReceipts
from tests.fakes.tmux import FakeTmux
from tests.fakes.tracker import FakeTracker
from tests.service.world import World


class RacingTmux(FakeTmux):
    """Runs `during` once, right after a paste or a harness's termination: an operator's
    command (or the poller) landing while the other side holds what it read before."""

    def __init__(self) -> None:
        super().__init__()
        self.during_deliver: Callable[[], None] | None = None
        self.during_terminate: Callable[[], None] | None = None

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        super().deliver(target, prompt, delivery_id=delivery_id, pane=pane, mark=mark, submit_delay_ms=submit_delay_ms)
        hook, self.during_deliver = self.during_deliver, None
        if hook is not None:
            hook()

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str, mark: str) -> None:
        hook, self.during_terminate = self.during_terminate, None
        if hook is not None:
            hook()
        super().terminate_harness(target, grace_seconds=grace_seconds, pane=pane, mark=mark)


class RacingTracker(FakeTracker):
    """Runs `during_state` once while the poller asks for an item's state."""

    during_state: Callable[[], None] | None = None

    def item_state(self, item: WorkItemRef, label: str) -> ItemState:
        hook, self.during_state = self.during_state, None
        if hook is not None:
            hook()
        return super().item_state(item, label)


def _world() -> tuple[World, RacingTmux, SessionsAdmin]:
    tmux = RacingTmux()
    world = World(tmux=tmux, tracker=RacingTracker())
    admin = world.admin()
    return world, tmux, admin


def test_a_reset_during_a_delivery_stays_reset_record_and_ledger_not_resurrected() -> None:
    world, tmux, admin = _world()
    ref = world.watched()
    world.comment(ref, "first")
    world.comment(ref, "second")
    tmux.during_deliver = lambda: admin.reset(admin.plan_reset([ref])[0])

    world.cycle()

    assert (world.store.session(ref), world.store.ledger(ref)) == (None, None)
    assert len(world.session(ref).received) == 1  # the worker stopped: "second" waits for a re-read
    (conflict,) = world.events.named(Event.POLL_ITEM_CONFLICT)
    assert conflict["work_item"] == str(ref)


def test_a_close_during_a_delivery_stays_closed() -> None:
    world, tmux, admin = _world()
    ref = world.watched()
    world.comment(ref)
    tmux.during_deliver = lambda: admin.close(ref, keep_tmux=True)

    world.cycle()

    assert world.record(ref).status is SessionStatus.CLOSED
    assert world.record(ref).last_event == "session.closed"
    assert len(world.events.named(Event.POLL_ITEM_CONFLICT)) == 1


def test_after_a_conflict_the_item_is_worked_again_next_cycle_from_what_is_stored() -> None:
    world, tmux, admin = _world()
    ref = world.watched()
    world.comment(ref, "said before the reset")
    tmux.during_deliver = lambda: admin.reset(admin.plan_reset([ref])[0])
    world.cycle()

    world.cycle()

    assert world.store.ledger(ref) is not None  # first sight again: the reset's fresh start
    assert world.events.names().count(Event.POLL_BASELINED) == 2


def test_an_operators_close_racing_a_poller_write_re_reads_and_still_closes() -> None:
    world, tmux, admin = _world()
    ref = world.watched()
    poller_write = lambda: world.store.save_session(replace(world.record(ref), last_event="dispatch.succeeded"))  # noqa: E731
    tmux.during_terminate = poller_write

    closed = admin.close(ref, keep_tmux=True)

    assert closed and world.record(ref).status is SessionStatus.CLOSED


def test_a_close_while_the_poller_pauses_a_departed_item_stays_closed() -> None:
    world, _, admin = _world()
    ref = world.watched()
    world.tracker.remove_label(ref, "loop")
    assert isinstance(world.tracker, RacingTracker)
    world.tracker.during_state = lambda: admin.close(ref, keep_tmux=True)

    world.cycle()

    assert world.record(ref).status is SessionStatus.CLOSED
    assert [c["work_item"] for c in world.events.named(Event.POLL_ITEM_CONFLICT)] == [str(ref)]


def test_a_close_while_an_idle_agent_is_hibernated_stays_a_close() -> None:
    tmux = RacingTmux()
    world = World(tmux=tmux, hibernate_after_seconds=600.0)
    admin = world.admin()
    ref = world.watched()
    assert isinstance(world.receipts, FakeReceipts)
    world.receipts.plant(world.record(ref).spawn_id, ReceiptKind.TURN_ENDED)
    world.cycle()  # its start's turn seen to end
    world.clock.advance(601)
    tmux.during_terminate = lambda: admin.close(ref, keep_tmux=True)

    world.hibernation.sweep()

    record = world.record(ref)
    assert record.status is SessionStatus.CLOSED
    assert (record.hibernated_at, record.last_event) == (None, Event.SESSION_CLOSED.value)
