"""The kind of a comment on a work item: a comment carries it, and so does a park's failed turn,
which names its comment without the model."""

from __future__ import annotations

import enum


class CommentKind(enum.Enum):
    ISSUE_COMMENT = "issue_comment"
    REVIEW_COMMENT = "review_comment"

    @property
    def event(self) -> str:
        """GitHub's name for the event of a new comment of this kind (its webhook event)."""
        return "pull_request_review_comment" if self is CommentKind.REVIEW_COMMENT else "issue_comment"
