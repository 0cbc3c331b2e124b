"""Which webhook deliveries are kept — a pure decision from the delivery, the
last listing and the inbox's room."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.authorize import Authorized
from domain.model import AGENT_MARKER, Comment
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import (
    InboxEntry,
    InboxLimits,
    Pushed,
    has_room,
    keep_decision,
    sender_decision,
    unlisted_stale,
)

REPO = RepoRef.parse("acme/widgets")
WATCHED = {REPO: frozenset({"loop"})}
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _pushed(
    *, repo: RepoRef = REPO, author: str | None = "alice", body: str = "go", labels: tuple[str, ...] = ()
) -> Pushed:
    return Pushed(Comment("1", WorkItemRef(repo, 7), author, body, T0), frozenset(labels))


@pytest.mark.parametrize(
    ("pushed", "authorized", "reason"),
    [
        (_pushed(repo=RepoRef.parse("acme/other")), {"alice"}, "unwatched"),
        (_pushed(repo=RepoRef("ghe.example.com", "acme", "widgets")), {"alice"}, "other-host"),
        (_pushed(body=f"{AGENT_MARKER}\ndone"), {"alice"}, "ours"),
        (_pushed(author="mallory"), {"alice"}, "unauthorized"),
        (_pushed(author=None), {"alice"}, "unauthorized"),
        (_pushed(), set(), "unauthorized"),  # an empty list authorizes nobody
    ],
)
def test_a_delivery_from_elsewhere_or_from_someone_not_authorized_is_dropped(
    pushed: Pushed, authorized: set[str], reason: str
) -> None:
    decision = sender_decision(pushed, watched=WATCHED, authorized=Authorized.parse(authorized))

    assert (decision.choice, decision.reason) == (False, reason)


def test_an_authorized_author_on_a_watched_repository_passes_whatever_the_case_of_the_login() -> None:
    assert sender_decision(_pushed(author="Alice"), watched=WATCHED, authorized=Authorized.parse(["alice"])).choice


@pytest.mark.parametrize(
    ("labels", "listed", "room", "expected"),
    [
        ((), True, True, (True, "listed")),
        (("loop",), False, True, (True, "labelled")),  # the label race: GitHub says labelled, not listed yet
        (("bug",), False, True, (False, "not-listed")),
        ((), False, True, (False, "not-listed")),
        ((), True, False, (False, "inbox-full")),
    ],
)
def test_only_a_comment_of_an_item_the_loop_works_is_kept_while_the_inbox_has_room(
    labels: tuple[str, ...], listed: bool, room: bool, expected: tuple[bool, str]
) -> None:
    decision = keep_decision(_pushed(labels=labels), labels=frozenset({"loop"}), listed=listed, room=room)

    assert (decision.choice, decision.reason) == expected


def _entry(number: int, *, size: int = 100, age_s: float = 0, repo: RepoRef = REPO) -> InboxEntry:
    return InboxEntry(WorkItemRef(repo, number), str(number), T0 - timedelta(seconds=age_s), size)


def test_the_inbox_has_room_below_both_its_count_and_its_bytes() -> None:
    limits = InboxLimits(max_comments=2, max_bytes=1000)

    assert has_room([_entry(1)], adding=100, limits=limits)
    assert not has_room([_entry(1), _entry(2)], adding=1, limits=limits)
    assert not has_room([_entry(1, size=950)], adding=100, limits=limits)


def test_only_old_comments_of_unlisted_items_of_the_read_repository_are_stale() -> None:
    other = RepoRef.parse("acme/other")
    entries = [_entry(1, age_s=900), _entry(2, age_s=900), _entry(3, age_s=10), _entry(4, age_s=900, repo=other)]

    stale = unlisted_stale(entries, repo=REPO, listed={WorkItemRef(REPO, 2)}, before=T0 - timedelta(seconds=600))

    assert [e.item.number for e in stale] == [1]
