"""A save that lost to another writer is settled one way: re-read, and decided again or given up."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.usecases.unit_of_work import Lost, Saved, UnitOfWork
from domain.errors import StaleWrite
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.fakes.store import FakeStateStore

UOW = UnitOfWork(store=FakeStateStore(), events=RecordingEvents(), clock=FakeClock())


@dataclass(frozen=True, slots=True)
class Count:
    value: int
    version: int


@dataclass
class Shelf:
    """One versioned value; `others` writers save before each of the next saves."""

    stored: Count | None = Count(0, 1)
    others: int = 0
    saves: int = 0

    def read(self) -> Count | None:
        return self.stored

    def add_one(self, read: Count) -> Count:
        self.saves += 1
        if self.others and self.stored is not None:
            self.others -= 1
            self.stored = Count(self.stored.value + 10, self.stored.version + 1)
        if self.stored is None or self.stored.version != read.version:
            raise StaleWrite("count", "x", read=read.version, stored=self.stored.version if self.stored else 0)
        self.stored = Count(read.value + 1, read.version + 1)
        return self.stored


def test_a_save_that_lands_is_what_is_stored_now() -> None:
    shelf = Shelf()

    saved = UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1))

    assert saved == Saved(Count(1, 2), won=True)


def test_one_try_leaves_what_another_writer_stored() -> None:
    shelf = Shelf(others=1)

    saved = UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1))

    assert saved == Saved(Count(10, 2), won=False) and shelf.stored == Count(10, 2)


def test_a_lost_save_is_decided_again_on_what_is_stored_now() -> None:
    shelf = Shelf(others=1)

    saved = UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1), tries=3)

    assert saved == Saved(Count(11, 3), won=True)


def test_the_tries_are_bounded_and_the_last_stored_value_is_handed_back() -> None:
    shelf = Shelf(others=5)

    saved = UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1), tries=3)

    assert (saved, shelf.saves) == (Saved(Count(30, 4), won=False), 3)


def test_what_is_stored_decides_when_it_no_longer_wants_the_change() -> None:
    shelf = Shelf(others=1)

    saved = UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1), tries=3, again=lambda now: now.value < 10)

    assert (saved, shelf.saves) == (Saved(Count(10, 2), won=False), 1)


def test_nothing_stored_any_more_ends_the_tries() -> None:
    shelf = Shelf(stored=None)

    saved = UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1), tries=3)

    assert (saved, shelf.saves) == (Saved(None, won=False), 1)


def test_a_conflict_left_after_the_last_try_can_go_up_to_the_cycle() -> None:
    shelf = Shelf(others=2)

    with pytest.raises(StaleWrite):
        UOW.save(shelf.add_one, read=shelf.read, value=Count(0, 1), tries=2, lost=Lost.RAISE)


def test_without_a_value_in_hand_what_is_stored_is_read_first() -> None:
    shelf = Shelf(stored=Count(5, 7))

    saved = UOW.save(shelf.add_one, read=shelf.read)

    assert saved == Saved(Count(6, 8), won=True)
