"""TrackerPort's contract, continued: arming, when the streams started, the ids of posted
comments, one comment as it is now, and edits — held by the fake, the sandbox and gh."""

from __future__ import annotations

from domain.model import Arming, CommentBatch, CommentKind, WorkItem
from domain.refs import WorkItemRef
from tests.contract.tracker_rigs import rig
from tests.github_standin.rigs import LABEL, Rig, standin

__all__ = ["rig", "standin"]  # fixtures, imported to be used here


def cycle(rig: Rig, cursor: str | None) -> CommentBatch:
    rig.tracker.work_items(rig.repo, LABEL)
    return rig.tracker.new_comments(rig.repo, cursor)


def listed(rig: Rig, number: int) -> WorkItem:
    [item] = [i for i in rig.tracker.work_items(rig.repo, LABEL) if i.ref.number == number]
    return item


def armed(rig: Rig, number: int) -> Arming:
    return rig.tracker.arming(listed(rig, number), LABEL)


# --- arming ----------------------------------------------------------------------------


def test_an_item_created_with_the_label_is_armed_at_creation_and_keeps_each_comment_oldest_first(rig: Rig) -> None:
    rig.item(1)
    rig.later()
    first = rig.comment(1, "one")
    rig.later()
    second = rig.comment(1, "two", author="bob")
    arming = armed(rig, 1)
    assert [(c.id, c.author, c.body) for c in arming.comments] == [(first, "alice", "one"), (second, "bob", "two")]
    assert arming.armed_at < arming.comments[0].created_at


def test_comments_from_before_the_label_are_not_armed_and_those_after_it_are(rig: Rig) -> None:
    rig.item(1, labels=())
    rig.later()
    rig.comment(1, "before the label")
    rig.later()
    rig.relabel(1, (LABEL,))
    rig.later()
    after = rig.comment(1, "after the label")
    arming = armed(rig, 1)
    assert [c.id for c in arming.comments] == [after]
    assert arming.armed_at < arming.comments[0].created_at


def test_an_item_labelled_again_is_armed_by_its_latest_labelling(rig: Rig) -> None:
    rig.item(1)
    rig.later()
    rig.comment(1, "while first labelled")
    rig.later()
    rig.relabel(1, ("other",))
    rig.later()
    rig.comment(1, "while unlabelled")
    rig.later()
    rig.relabel(1, (LABEL,))
    rig.later()
    again = rig.comment(1, "labelled again")
    assert [c.id for c in armed(rig, 1).comments] == [again]


def test_another_label_added_later_does_not_move_the_arming(rig: Rig) -> None:
    rig.item(1)
    rig.later()
    first = rig.comment(1, "one")
    rig.later()
    rig.relabel(1, (LABEL, "bug"))
    assert [c.id for c in armed(rig, 1).comments] == [first]


def test_a_pull_request_is_armed_with_its_issue_and_review_comments_each_of_its_kind(rig: Rig) -> None:
    rig.item(7, pull=True)
    rig.later()
    general = rig.comment(7, "general")
    rig.later()
    review = rig.comment(7, "nit", review=True, path="src/app.py", line=4)
    arming = armed(rig, 7)
    assert [(c.id, c.kind, c.path) for c in arming.comments] == [
        (general, CommentKind.ISSUE_COMMENT, None),
        (review, CommentKind.REVIEW_COMMENT, "src/app.py"),
    ]


def test_arming_holds_only_the_items_own_comments(rig: Rig) -> None:
    rig.item(1)
    rig.item(2)
    rig.later()
    rig.comment(2, "elsewhere")
    mine = rig.comment(1, "here")
    assert [(c.id, c.item.number) for c in armed(rig, 1).comments] == [(mine, 1)]


def test_an_older_comment_edited_after_the_arming_is_not_armed(rig: Rig) -> None:
    rig.item(1, labels=())
    rig.later()
    old = rig.comment(1, "old")
    rig.later()
    rig.relabel(1, (LABEL,))
    rig.later()
    rig.edit(old, "old, edited after the label")
    assert armed(rig, 1).comments == ()


# --- the streams' start, posted ids ----------------------------------------------------


def test_the_batch_that_starts_the_streams_says_when_and_no_later_batch_does(rig: Rig) -> None:
    rig.item(1)
    first = cycle(rig, None)
    rig.later()
    rig.comment(1, "news")
    second = cycle(rig, first.cursor)
    assert first.started_at is not None and second.started_at is None
    assert first.started_at <= second.comments[0].created_at


def test_a_posted_comment_has_the_id_the_stream_returns_it_under(rig: Rig) -> None:
    item = rig.item(3)
    start = cycle(rig, None)
    rig.later()
    posted = rig.tracker.post_comment(item, "notice")
    [comment] = cycle(rig, start.cursor).comments
    assert comment.id == posted


# --- one comment as it is now ----------------------------------------------------------


def test_a_comment_is_read_as_it_is_now(rig: Rig) -> None:
    item = rig.item(1)
    rig.later()
    comment_id = rig.comment(1, "v1", author="bob")
    rig.later()
    rig.edit(comment_id, "v2")
    now = rig.tracker.comment(item, comment_id, CommentKind.ISSUE_COMMENT)
    assert now is not None
    assert (now.id, now.item, now.author, now.body, now.kind, now.edited) == (
        comment_id, item, "bob", "v2", CommentKind.ISSUE_COMMENT, True
    )  # fmt: skip


def test_a_deleted_comment_reads_as_none(rig: Rig) -> None:
    item = rig.item(1)
    comment_id = rig.comment(1, "soon gone")
    rig.delete(comment_id)
    assert rig.tracker.comment(item, comment_id, CommentKind.ISSUE_COMMENT) is None


def test_a_review_comment_is_read_as_one_and_not_as_an_issue_comment(rig: Rig) -> None:
    pull = rig.item(7, pull=True)
    comment_id = rig.comment(7, "nit", review=True, path="a.py", line=1)
    found = rig.tracker.comment(pull, comment_id, CommentKind.REVIEW_COMMENT)
    assert found is not None and (found.kind, found.path, found.line) == (CommentKind.REVIEW_COMMENT, "a.py", 1)
    assert rig.tracker.comment(pull, comment_id, CommentKind.ISSUE_COMMENT) is None


def test_a_comment_asked_of_another_item_reads_as_none(rig: Rig) -> None:
    rig.item(1)
    rig.item(2)
    comment_id = rig.comment(1, "on one")
    assert rig.tracker.comment(WorkItemRef(rig.repo, 2), comment_id, CommentKind.ISSUE_COMMENT) is None


# --- edits before the first read -------------------------------------------------------


def test_a_comment_edited_before_its_first_read_says_so_and_an_untouched_one_does_not(rig: Rig) -> None:
    rig.item(1)
    start = cycle(rig, None)
    rig.later()
    plain = rig.comment(1, "plain")
    edited = rig.comment(1, "v1")
    rig.later()
    rig.edit(edited, "v2, by whoever could edit it")
    batch = cycle(rig, start.cursor)
    assert [(c.id, c.body, c.edited) for c in batch.comments] == [
        (plain, "plain", False),
        (edited, "v2, by whoever could edit it", True),
    ]


def test_an_armed_comment_edited_before_the_arming_read_says_so(rig: Rig) -> None:
    rig.item(1)
    rig.later()
    comment_id = rig.comment(1, "v1")
    rig.later()
    rig.edit(comment_id, "v2")
    assert [(c.body, c.edited) for c in armed(rig, 1).comments] == [("v2", True)]


def test_who_edited_a_comment_before_its_first_read_is_said_by_the_stream_and_the_arming(rig: Rig) -> None:
    rig.item(1)
    start = cycle(rig, None)
    rig.later()
    by_author = rig.comment(1, "v1")
    by_other = rig.comment(1, "v1")
    plain = rig.comment(1, "plain")
    rig.later()
    rig.edit(by_author, "v2")
    rig.edit(by_other, "v2, by a collaborator", editor="mallory")
    batch = cycle(rig, start.cursor)
    arming = armed(rig, 1)
    expected = [(by_author, True, "alice"), (by_other, True, "mallory"), (plain, False, None)]
    assert [(c.id, c.edited, c.editor) for c in batch.comments] == expected
    assert [(c.id, c.edited, c.editor) for c in arming.comments] == expected
