"""The notice posted on a work item when a comment is abandoned or skipped (spec R2)."""

from __future__ import annotations

import re

from domain.model import AGENT_MARKER, Comment

_SAFE_ID = re.compile(r"^[A-Za-z0-9_=-]{1,100}$")
_SAFE_URL = re.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]+)?/[A-Za-z0-9._~/#-]*$")


def giveup_notice(comment: Comment, *, attempts: int, reason: str) -> str:
    """Built only from the-loop's own values and validated coordinates — never the comment's text."""
    comment_id = comment.id if _SAFE_ID.match(comment.id) else "(unprintable id)"
    link = comment.url if _SAFE_URL.match(comment.url) else ""
    where = f"[comment {comment_id}]({link})" if link else f"comment {comment_id}"
    return (
        f"{AGENT_MARKER}\n"
        "> 🤖 **the-loop** (automated notice from the daemon that forwards comments to this item's agent)\n\n"
        f"Your {where} was **not delivered** to the agent, and it **will not be retried**.\n\n"
        f"- Attempts: {attempts}\n"
        f"- Why: {reason}\n\n"
        "To recover, post the instruction again as a new comment: a new comment gets a fresh "
        "set of delivery attempts.\n"
    )
