"""Which comment `the-loop why` is asked about, and the one line of what became of it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.errors import InvalidRef
from domain.ledger import ASIDE_UNAUTHORIZED, DeliveryState, Pending, Resolution, Resolved
from domain.model import Comment
from domain.refs import WorkItemRef
from domain.story import CommentQuery, names, verdict

AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
REF = WorkItemRef.parse("github:acme/widgets#7")


def test_why_takes_a_bare_id_an_issue_comment_url_or_a_review_comment_url() -> None:
    bare = CommentQuery.parse("123")
    issue = CommentQuery.parse("https://ghe.example.com/acme/widgets/issues/7#issuecomment-123")
    review = CommentQuery.parse("https://github.com/acme/widgets/pull/7#discussion_r456")

    assert (bare.comment_id, bare.item) == ("123", None)
    assert issue.comment_id == "123" and issue.item is not None
    assert str(issue.item.exact) == "github:ghe.example.com/acme/widgets#7"
    assert review.comment_id == "456" and review.item is not None and str(review.item.exact) == str(REF)


def test_why_refuses_what_names_no_comment() -> None:
    with pytest.raises(InvalidRef, match="comment id or its URL"):
        CommentQuery.parse("https://github.com/acme/widgets/issues/7")


def test_an_event_names_a_comment_by_its_id_or_its_delivery_id() -> None:
    assert names({"comment_id": "5"}, "5") and names({"delivery_id": "poll-comment-5"}, "5")
    assert names({"comment_ids": ["4", "5"]}, "5") and not names({"comment_id": "55"}, "5")


def test_the_verdict_names_the_rule_and_the_author() -> None:
    skipped = Resolved(Resolution.SKIPPED, AT, reason=ASIDE_UNAUTHORIZED)
    held = Pending(Comment("5", REF, "demo", "text", AT), state=DeliveryState.HELD)

    assert verdict(skipped, None, [{"author": "mallory"}]).startswith(
        "not a prompt: its author mallory is not in routing.authorizedUsers"
    )
    assert "held by `the-loop pause`" in verdict(None, held, [])


def test_the_verdict_of_an_author_refused_by_permission_or_deny_says_which() -> None:
    skipped = Resolved(Resolution.SKIPPED, AT, reason=ASIDE_UNAUTHORIZED)

    said = [
        verdict(skipped, None, [{"author": "olivia", "standing": standing}])
        for standing in ("below", "unknown", "denied")
    ]

    assert [line.split(" (resolved")[0] for line in said] == [
        "not a prompt: its author olivia's permission on its repository is below routing.authorize.permission",
        "not a prompt: its author olivia's permission on its repository could not be read "
        "(authorize.lookup_failed): not authorized",
        "not a prompt: its author olivia is in routing.authorize.deny",
    ]


def test_the_verdict_of_one_of_our_comments_says_whether_the_login_or_the_marker_told_it() -> None:
    by_login = [{"event": "poll.comment_ours", "author": "acme-loop[bot]", "rule": "login"}]
    by_marker = [{"event": "poll.comment_ours", "author": "alice", "rule": "marker"}]
    assert verdict(None, None, by_login) == "not a prompt: the-loop posted it, as the login it writes as"
    assert "carries the agent marker" in verdict(None, None, by_marker)
