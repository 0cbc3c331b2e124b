"""The fleet page's events list in pages: newest first, a fixed number a page, older and newer
by the position of a record in the log — a page stays the same while new records arrive."""

from __future__ import annotations

from app.web.paging import events_page

SIZE = 3


def _log(count: int) -> list[tuple[int, dict[str, object]]]:
    return [(seq, {"event": f"e{seq}"}) for seq in range(1, count + 1)]


def _seqs(page: object) -> list[int]:
    return [seq for seq, _ in page.shown]  # type: ignore[attr-defined]


def test_the_first_page_holds_the_newest_records_newest_first() -> None:
    page = events_page(_log(8), size=SIZE)

    assert _seqs(page) == [8, 7, 6]
    assert (page.older, page.newer) == (6, None)


def test_older_leads_to_the_records_before_the_last_shown_and_newer_back() -> None:
    second = events_page(_log(8), size=SIZE, before=6)
    third = events_page(_log(8), size=SIZE, before=second.older)
    back = events_page(_log(8), size=SIZE, after=third.newer)

    assert _seqs(second) == [5, 4, 3] and (second.older, second.newer) == (3, 5)
    assert _seqs(third) == [2, 1] and (third.older, third.newer) == (None, 2)
    assert _seqs(back) == [5, 4, 3]


def test_a_page_of_older_records_stays_the_same_while_new_ones_arrive() -> None:
    before = events_page(_log(8), size=SIZE, before=6)
    later = events_page(_log(20), size=SIZE, before=6)

    assert _seqs(later) == _seqs(before) == [5, 4, 3]
    assert later.newer == 5  # and its way back to the newer ones


def test_newer_from_near_the_top_is_the_first_page() -> None:
    page = events_page(_log(8), size=SIZE, after=7)

    assert _seqs(page) == [8, 7, 6] and page.newer is None  # a full page, not the one record left


def test_no_records_is_an_empty_page_with_no_way_on() -> None:
    page = events_page([], size=SIZE)

    assert (page.shown, page.older, page.newer) == ((), None, None)
