"""A comment as the store keeps it (a ledger's pending and abandoned comments, the webhook inbox)."""

from __future__ import annotations

from datetime import UTC, datetime

from adapters.sql.state_codec import decode_comment, encode_comment
from domain.model import Comment, CommentKind
from domain.refs import WorkItemRef

ITEM = WorkItemRef.parse("github:acme/widgets#7")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_stored_comment_reads_back_as_it_was_written_its_posting_by_us_included() -> None:
    written = Comment("9", ITEM, "acme-loop[bot]", "Starting.", T0, kind=CommentKind.REVIEW_COMMENT, by_us=True)
    assert decode_comment(encode_comment(written)) == written
