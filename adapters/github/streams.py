"""Incremental stream state: an inclusive `since` window, what was seen in it, and its ETag.

A window's `since` stays put while its reply fits in one page, so the same URL is asked again and
an idle poll is a 304. Once a reply fills a page the window moves on, but never closer than
`SETTLE` to the server's clock: GitHub's listings are eventually consistent, so an entry can show
up after later ones did. What the moved window still overlaps is kept by id (or by version), so
nothing is returned twice; the moved URL is asked once unconditionally, then answered 304 again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from adapters.github.payloads import Seen, format_time, parse_time
from domain.errors import TrackerError
from domain.model import Comment

_CURSOR_VERSION = 1
_SECOND = timedelta(seconds=1)
# how late an entry may still show up in a listing after its time stamp; older ones are complete
SETTLE = timedelta(seconds=60)


def moved_since(since: str, newest: datetime, server_time: datetime) -> str | None:
    """Where a window whose reply filled a page moves to, or None when it cannot move forward.

    No later than `SETTLE` before the server's clock (anything older was listed in this reply,
    read whole), nor than the second after the newest entry (nothing the reply held is later).
    Not the newest entry's own second: a page full of entries in it would be read forever.
    """
    target = format_time(min(server_time - SETTLE, newest + _SECOND))
    return target if target > since else None


@dataclass(frozen=True, slots=True)
class Window:
    """One comment stream: `since` (inclusive), ids created at or after it already returned."""

    since: str
    seen: frozenset[str] = frozenset()
    etag: str = ""

    @classmethod
    def starting(cls, moment: datetime, history: Sequence[Seen]) -> Window:
        """A stream that starts at `moment`: what `history` holds from that second is not new."""
        since = format_time(moment)
        start = parse_time(since)
        return cls(since, frozenset(s.comment.id for s in history if s.comment.created_at >= start))

    def absorb(
        self, found: Sequence[Seen], *, etag: str, full: bool, server_time: datetime
    ) -> tuple[list[Comment], Window]:
        since = parse_time(self.since)
        current = [s for s in found if s.comment.created_at >= since]
        fresh = {s.comment.id: s.comment for s in current if s.comment.id not in self.seen}
        moved = moved_since(self.since, max(s.updated_at for s in found), server_time) if full else None
        if moved is not None:
            start = parse_time(moved)
            overlap = frozenset(s.comment.id for s in current if s.comment.created_at >= start)
            return list(fresh.values()), Window(moved, overlap)
        seen = self.seen | {s.comment.id for s in current}
        return list(fresh.values()), Window(self.since, seen, etag)


@dataclass(frozen=True, slots=True)
class CommentCursor:
    """The persisted cursor of one repository: the issue-comment and review-comment windows, and
    the server time of the review stream's last read (None: unknown, so it is read next).

    The review read's time lives here, not beside the labelled listing, so it is saved exactly
    when the poll cycle saves what that read returned: a cycle that keeps its old cursor (a failed
    item, a crash) reads the review stream again instead of believing it was read.
    """

    issue: Window
    review: Window
    review_read_at: str | None = None

    def review_due(self, until: datetime | None) -> bool:
        """Whether the review stream must be read, given until when the listing wants it read."""
        if self.review_read_at is None:
            return True
        return until is not None and parse_time(self.review_read_at) < until

    def encode(self) -> str:
        def window(w: Window) -> dict[str, Any]:
            return {"since": w.since, "seen": sorted(w.seen, key=_id_order), "etag": w.etag}

        doc = {
            "v": _CURSOR_VERSION,
            "issue": window(self.issue),
            "review": window(self.review),
            "review_read_at": self.review_read_at,
        }
        return json.dumps(doc, sort_keys=True, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str, where: str) -> CommentCursor:
        try:
            doc = json.loads(text)
            if doc["v"] != _CURSOR_VERSION:
                raise ValueError(f"version {doc['v']}")
            windows = [
                Window(format_time(parse_time(w["since"])), frozenset(map(str, w["seen"])), w["etag"])
                for w in (doc["issue"], doc["review"])
            ]
            # absent from cursors saved before it was kept: unknown, so the stream is read once
            read_at = doc.get("review_read_at")
            read_at = None if read_at is None else format_time(parse_time(str(read_at)))
        except (TypeError, KeyError, ValueError, AttributeError) as error:
            raise TrackerError(f"{where}: unreadable comment cursor ({error!r})") from error
        return cls(windows[0], windows[1], read_at)


def _id_order(comment_id: str) -> tuple[int, str]:
    return (len(comment_id), comment_id)
