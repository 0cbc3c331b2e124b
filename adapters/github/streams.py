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
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from adapters.github.payloads import Seen, format_time, parse_time
from domain.errors import TrackerError
from domain.model import Comment, ItemKind, ItemState, WorkItem

_CURSOR_VERSION = 1
_SECOND = timedelta(seconds=1)
# how late an entry may still show up in a listing after its time stamp; older ones are complete
SETTLE = timedelta(seconds=60)
Change = tuple[WorkItem, ItemState, datetime]  # an item in the issue stream, as of its update


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
    """The persisted cursor of one repository: the issue-comment and review-comment windows."""

    issue: Window
    review: Window

    def encode(self) -> str:
        def window(w: Window) -> dict[str, Any]:
            return {"since": w.since, "seen": sorted(w.seen, key=_id_order), "etag": w.etag}

        doc = {"v": _CURSOR_VERSION, "issue": window(self.issue), "review": window(self.review)}
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
        except (TypeError, KeyError, ValueError) as error:
            raise TrackerError(f"{where}: unreadable comment cursor ({error!r})") from error
        return cls(*windows)


@dataclass(slots=True)
class LabelledSet:
    """The open items carrying one label, kept current from the repository's issue stream."""

    label: str
    since: str
    items: dict[int, WorkItem] = field(default_factory=dict)
    versions: dict[int, str] = field(default_factory=dict)  # number -> updated_at in the window
    etag: str = ""

    def absorb(
        self, changed: Sequence[Change], *, etag: str, full: bool, server_time: datetime
    ) -> datetime | None:
        """Apply a reply's items; the newest update of a pull request that changed, if any."""
        pull_requests = [u for item, state, u in changed if self._apply(item, state, u)
                         and item.kind is ItemKind.PULL_REQUEST]
        newest = max((updated for _, _, updated in changed), default=None)
        moved = moved_since(self.since, newest, server_time) if full and newest else None
        if moved is None:
            self.etag = etag
        else:
            self.since, self.etag = moved, ""
            # the versions the moved window still overlaps stay, so none of them is new again
            self.versions = {n: u for n, u in self.versions.items() if u >= moved}
        return max(pull_requests, default=None)

    def _apply(self, item: WorkItem, state: ItemState, updated: datetime) -> bool:
        """Take one item as of `updated`; False when that version was already taken."""
        stamp = format_time(updated)
        if self.versions.get(item.ref.number) == stamp:
            return False
        self.versions[item.ref.number] = stamp
        if state is ItemState.OPEN and self.label in item.labels:
            self.items[item.ref.number] = item
        else:
            self.items.pop(item.ref.number, None)
        return True


@dataclass(slots=True)
class ReviewDue:
    """When one repository's review-comment stream must be read.

    A review comment shows only as its pull request's update in the issue stream, and a second
    one in the same second (or one listed late) changes nothing there. So after a pull request
    changed, the stream stays due until a read whose server time is `SETTLE` past that update.
    """

    read_at: datetime | None = None  # the server time of the last read; None: never read
    until: datetime | None = None

    @property
    def due(self) -> bool:
        return self.read_at is None or (self.until is not None and self.read_at < self.until)

    def pull_request_changed(self, updated: datetime) -> None:
        settles = updated + SETTLE
        self.until = settles if self.until is None else max(self.until, settles)

    def read(self, server_time: datetime) -> None:
        self.read_at = server_time


def _id_order(comment_id: str) -> tuple[int, str]:
    return (len(comment_id), comment_id)
