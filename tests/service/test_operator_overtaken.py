"""An operator's write overtaken by another writer (the daemon saving the same row meanwhile) is
decided again on what is stored now, never refused for the race nor undoing the other write."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from domain.events import Event
from domain.ledger import Ledger
from domain.model import SessionRecord, SessionStatus
from tests.fakes.store import FakeStateStore
from tests.service.world import World


class OvertakingStore(FakeStateStore):
    """Runs `before_save` once, right before the next save of a record or a ledger."""

    before_save: Callable[[], None] | None = None

    def _overtaken(self) -> None:
        hook, self.before_save = self.before_save, None
        if hook is not None:
            hook()

    def save_session(self, record: SessionRecord) -> SessionRecord:
        self._overtaken()
        return super().save_session(record)

    def save_ledger(self, ledger: Ledger) -> Ledger:
        self._overtaken()
        return super().save_ledger(ledger)


def test_a_reopen_overtaken_by_another_save_of_the_closed_record_reopens_it() -> None:
    store = OvertakingStore()
    world = World(store=store)
    ref = world.watched()
    admin = world.admin()
    admin.close(ref, keep_tmux=True)
    store.before_save = lambda: store.save_session(replace(world.record(ref), last_event="daemon.saved"))

    reopened = admin.reopen(ref)

    assert reopened and world.record(ref).status is SessionStatus.ACTIVE
    assert len(world.events.named(Event.SESSION_REOPENED)) == 1


def test_a_page_pause_overtaken_by_another_save_of_the_ledger_pauses_it_and_keeps_that_save() -> None:
    store = OvertakingStore()
    world = World(store=store)
    ref = world.watched()
    store.before_save = lambda: store.save_ledger(replace(world.ledger(ref), stopped=True))

    paused = world.usecases.fleet.pause(ref, paused=True)

    assert paused and world.ledger(ref).paused and world.ledger(ref).stopped
