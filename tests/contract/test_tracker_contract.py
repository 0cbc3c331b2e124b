"""TrackerPort's contract, held by FakeTracker and by GhTracker (the real gh) on the stand-in."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.asks import Answered, AnswerSource, Ask, ask_comment
from domain.errors import RateLimited, TrackerError
from domain.model import CommentBatch, CommentKind, ItemKind, ItemState, PullHead, Reaction
from domain.refs import WorkItemRef
from tests.contract.tracker_rigs import rig
from tests.github_standin.rigs import BOT, LABEL, Rig, standin

__all__ = ["rig", "standin"]  # fixtures, imported to be used here


def cycle(rig: Rig, cursor: str | None) -> CommentBatch:
    """What one poll cycle asks of a repository: its work items, then its new comments."""
    rig.tracker.work_items(rig.repo, LABEL)
    return rig.tracker.new_comments(rig.repo, cursor)


def numbers(rig: Rig) -> list[int]:
    return [item.ref.number for item in rig.tracker.work_items(rig.repo, LABEL)]


# --- work items ------------------------------------------------------------------------


def test_work_items_are_the_open_issues_and_pull_requests_carrying_the_label(rig: Rig) -> None:
    rig.item(1)
    rig.item(2, labels=("other",))
    rig.item(3, pull=True)
    rig.item(4)
    rig.close(4)
    items = rig.tracker.work_items(rig.repo, LABEL)
    assert [(i.ref.number, i.kind) for i in items] == [(1, ItemKind.ISSUE), (3, ItemKind.PULL_REQUEST)]


def test_work_items_hold_every_page_of_a_long_list(rig: Rig) -> None:
    for number in range(1, 151):
        rig.item(number)
    assert numbers(rig) == list(range(1, 151))


def test_an_item_closed_after_a_listing_leaves_the_next_one(rig: Rig) -> None:
    rig.item(1)
    rig.item(2)
    numbers(rig)
    rig.later()
    rig.close(1)
    assert numbers(rig) == [2]


def test_an_item_unlabelled_after_a_listing_leaves_the_next_one(rig: Rig) -> None:
    rig.item(1)
    rig.item(2)
    numbers(rig)
    rig.later()
    rig.relabel(2, ("other",))
    assert numbers(rig) == [1]


def test_an_item_labelled_after_a_listing_joins_the_next_one(rig: Rig) -> None:
    rig.item(1)
    rig.item(2, labels=())
    numbers(rig)
    rig.later()
    rig.relabel(2, (LABEL, "bug"))
    assert numbers(rig) == [1, 2]


# --- new comments ----------------------------------------------------------------------


def test_the_first_poll_treats_existing_comments_as_history(rig: Rig) -> None:
    rig.item(1)
    rig.comment(1, "old")
    first = cycle(rig, None)
    assert first.comments == () and cycle(rig, first.cursor).comments == ()


def test_a_new_comment_is_returned_once_with_its_item_author_body_and_link(rig: Rig) -> None:
    item = rig.item(1)
    start = cycle(rig, None)
    rig.later()
    comment_id = rig.comment(1, "please run the tests", author="bob")
    batch = cycle(rig, start.cursor)
    again = cycle(rig, batch.cursor)
    [comment] = batch.comments
    assert (comment.id, comment.item, comment.author, comment.body) == (comment_id, item, "bob", "please run the tests")
    assert comment.kind is CommentKind.ISSUE_COMMENT and comment.url and again.comments == ()


def test_comments_sharing_one_second_are_each_returned_once_in_order(rig: Rig) -> None:
    rig.item(1)
    start = cycle(rig, None)
    first = [rig.comment(1, f"c{n}") for n in range(3)]
    batch = cycle(rig, start.cursor)
    fourth = rig.comment(1, "c3")
    after = cycle(rig, batch.cursor)
    assert [c.id for c in batch.comments] == first and [c.id for c in after.comments] == [fourth]


def test_an_edited_comment_is_not_returned_again(rig: Rig) -> None:
    rig.item(1)
    start = cycle(rig, None)
    rig.later()
    comment_id = rig.comment(1, "v1")
    batch = cycle(rig, start.cursor)
    rig.later()
    rig.edit(comment_id, "v2")
    assert cycle(rig, batch.cursor).comments == ()


def test_an_edited_comment_from_before_the_first_poll_is_not_new(rig: Rig) -> None:
    rig.item(1)
    comment_id = rig.comment(1, "old")
    start = cycle(rig, None)
    rig.later()
    rig.edit(comment_id, "old, edited")
    assert cycle(rig, start.cursor).comments == ()


def test_a_review_comment_carries_its_path_line_and_pull_request(rig: Rig) -> None:
    pull = rig.item(7, pull=True)
    start = cycle(rig, None)
    quiet = cycle(rig, start.cursor)
    rig.later()
    rig.comment(7, "rename this", review=True, path="src/app.py", line=12)
    [comment] = cycle(rig, quiet.cursor).comments
    assert (comment.item, comment.kind, comment.path, comment.line) == (
        pull,
        CommentKind.REVIEW_COMMENT,
        "src/app.py",
        12,
    )


def test_comments_on_items_without_the_label_are_returned_too(rig: Rig) -> None:
    other = rig.item(2, labels=())
    start = cycle(rig, None)
    rig.later()
    rig.comment(2, "hello")
    assert [c.item for c in cycle(rig, start.cursor).comments] == [other]


# --- item state ------------------------------------------------------------------------


@pytest.mark.parametrize("state", [ItemState.CLOSED, ItemState.MERGED, ItemState.UNLABELED, ItemState.OPEN])
def test_item_state_tells_closed_merged_unlabeled_or_open(rig: Rig, state: ItemState) -> None:
    item = rig.item(5, pull=True)
    if state in (ItemState.CLOSED, ItemState.MERGED):
        rig.close(5, merged=state is ItemState.MERGED)
    elif state is ItemState.UNLABELED:
        rig.relabel(5, ("other",))
    assert rig.tracker.item_state(item, LABEL) is state


# --- a pull request's head -------------------------------------------------------------

SHA = "3f786850e387550fdab836ed7e6dc881de23001b"


def test_a_pull_requests_head_in_its_own_repository_is_not_a_fork(rig: Rig) -> None:
    ref = rig.pull(1, head=None, sha=SHA)
    assert rig.tracker.pull_head(ref) == PullHead(rig.repo.full_name, SHA, fork=False)


def test_a_pull_requests_head_in_another_repository_is_a_fork(rig: Rig) -> None:
    ref = rig.pull(1, head="mallory/widgets", sha=SHA)
    assert rig.tracker.pull_head(ref) == PullHead("mallory/widgets", SHA, fork=True)


def test_a_pull_requests_head_in_a_deleted_fork_is_a_fork(rig: Rig) -> None:
    ref = rig.pull(1, head="", sha=SHA)
    assert rig.tracker.pull_head(ref) == PullHead("", SHA, fork=True)


def test_the_head_of_an_issue_is_a_tracker_error(rig: Rig) -> None:
    with pytest.raises(TrackerError):
        rig.tracker.pull_head(rig.item(1))


# --- writes ----------------------------------------------------------------------------


def test_a_reaction_lands_on_an_issue_comment_and_on_a_review_comment(rig: Rig) -> None:
    rig.item(1, pull=True)
    start = cycle(rig, None)
    rig.later()
    rig.comment(1, "a")
    rig.comment(1, "b", review=True, path="x.py", line=1)
    issue_comment, review_comment = cycle(rig, start.cursor).comments
    rig.tracker.react(issue_comment, Reaction.STARTED)
    rig.tracker.react(review_comment, Reaction.SUCCEEDED)
    assert rig.reactions() == [(issue_comment.id, Reaction.STARTED), (review_comment.id, Reaction.SUCCEEDED)]


def test_a_posted_comment_lands_on_the_item_and_comes_back_as_the_trackers_own(rig: Rig) -> None:
    item = rig.item(3)
    start = cycle(rig, None)
    rig.later()
    rig.tracker.post_comment(item, "notice")
    [comment] = cycle(rig, start.cursor).comments
    assert rig.posted() == [(3, "notice")] and (comment.author, comment.body) == (BOT, "notice")


def test_a_posted_comment_edited_keeps_its_id_and_author_and_is_not_new_again(rig: Rig) -> None:
    item = rig.item(3)
    start = cycle(rig, None)
    rig.later()
    posted = rig.tracker.post_comment(item, "notice")
    seen = cycle(rig, start.cursor)
    rig.later()

    rig.tracker.edit_posted(item, posted, "notice, brought up to date")

    now = rig.tracker.comment(item, posted, CommentKind.ISSUE_COMMENT)
    assert [c.id for c in seen.comments] == [posted] and cycle(rig, seen.cursor).comments == ()
    assert now is not None and (now.id, now.author, now.body) == (posted, BOT, "notice, brought up to date")


def test_a_requests_comment_edited_to_say_how_it_was_answered_comes_back_whole(rig: Rig) -> None:
    item = rig.item(3)
    ask = Ask("k", "Bash", {"command": "echo ```\n# not a heading", "description": "caf\u00e9 \u4e2d\u6587"})
    posted = rig.tracker.post_comment(item, ask_comment(item, ask, number=1, wait_seconds=600))
    answered = Answered("allowed once", AnswerSource.PAGE, datetime(2026, 1, 1, 12, 3, tzinfo=UTC))
    body = ask_comment(item, ask, number=1, wait_seconds=600, answered=answered)

    rig.tracker.edit_posted(item, posted, body)

    now = rig.tracker.comment(item, posted, CommentKind.ISSUE_COMMENT)
    assert now is not None and now.body == body
    assert now.body.split("\n")[1] == "> ✅ **Answered**: allowed once from the fleet page at 12:03 UTC."


# --- failures --------------------------------------------------------------------------


def test_a_failed_read_is_a_tracker_error_naming_the_repository(rig: Rig) -> None:
    rig.item(1)
    rig.break_reads()
    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.work_items(rig.repo, LABEL)


def test_a_failed_comment_read_is_a_tracker_error_naming_the_repository(rig: Rig) -> None:
    rig.item(1)
    start = cycle(rig, None)
    rig.break_reads()
    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.new_comments(rig.repo, start.cursor)


def test_a_failed_post_is_a_tracker_error_and_posts_nothing(rig: Rig) -> None:
    item = rig.item(1)
    rig.break_writes()
    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.post_comment(item, "notice")
    assert rig.posted() == []


def test_a_failed_edit_is_a_tracker_error_naming_the_repository(rig: Rig) -> None:
    item = rig.item(1)
    posted = rig.tracker.post_comment(item, "notice")
    rig.break_writes()
    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.edit_posted(item, posted, "changed")
    assert rig.posted() == [(1, "notice")]


def test_a_failed_reaction_is_a_tracker_error_and_adds_nothing(rig: Rig) -> None:
    rig.item(1)
    start = cycle(rig, None)
    rig.later()
    rig.comment(1, "go")
    [comment] = cycle(rig, start.cursor).comments
    rig.break_writes()
    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.react(comment, Reaction.FAILED)
    assert rig.reactions() == []


# the sandbox is a local file: it has no rate limit to model, so it is not asked to
@pytest.mark.parametrize("rig", ["fake", pytest.param("gh", marks=pytest.mark.gh)], indirect=True)
def test_a_rate_limited_repository_raises_rate_limited_with_the_time_to_wait_for(rig: Rig) -> None:
    rig.item(1)
    rig.limit(1_900_000_000)
    with pytest.raises(RateLimited) as raised:
        rig.tracker.work_items(rig.repo, LABEL)
    assert raised.value.until_epoch == 1_900_000_000 and str(rig.repo) in str(raised.value)


def test_item_state_of_a_missing_item_is_a_tracker_error(rig: Rig) -> None:
    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.item_state(WorkItemRef(rig.repo, 99), LABEL)


def test_the_budget_is_not_known_before_any_reply_and_saying_it_asks_nothing(rig: Rig) -> None:
    assert rig.tracker.budget(rig.repo) is None
    rig.item(1)
    rig.tracker.work_items(rig.repo, LABEL)
    said = rig.tracker.budget(rig.repo)
    assert said is None or 0 <= said.remaining <= said.limit  # a tracker that counts says a budget
