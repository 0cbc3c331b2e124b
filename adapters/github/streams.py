"""Incremental stream state: an inclusive `since` window, what was seen in it, and its ETag.

A window's `since` stays put while its reply fits in one page, so the same URL is asked again and
an idle poll is a 304; it moves past the newest entry only once a reply fills a page and the
server's clock has left that entry's second (so nothing more can land in it), which keeps every
reply to about one page.
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
        self, found: Sequence[Seen], *, etag: str, advance: bool
    ) -> tuple[list[Comment], Window]:
        since = parse_time(self.since)
        current = [s for s in found if s.comment.created_at >= since]
        fresh = {s.comment.id: s.comment for s in current if s.comment.id not in self.seen}
        if advance and found:
            # settled: the server's clock had left the newest second, so nothing more lands in it
            top = max(s.updated_at for s in found) + _SECOND
            return list(fresh.values()), Window(format_time(top))
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

    def absorb(self, changed: Sequence[tuple[WorkItem, ItemState, str]]) -> bool:
        """Apply changed items (state, updated_at); True when a pull request changed."""
        pull_request_changed = False
        for item, state, updated in changed:
            if self.versions.get(item.ref.number) == updated:
                continue
            self.versions[item.ref.number] = updated
            pull_request_changed |= item.kind is ItemKind.PULL_REQUEST
            if state is ItemState.OPEN and self.label in item.labels:
                self.items[item.ref.number] = item
            else:
                self.items.pop(item.ref.number, None)
        return pull_request_changed

    def advance(self, newest: datetime) -> None:
        """Move past `newest`, a second the server's clock had already left (nothing more in it)."""
        self.since = format_time(newest + _SECOND)
        self.versions = {n: u for n, u in self.versions.items() if u >= self.since}
        self.etag = ""


def _id_order(comment_id: str) -> tuple[int, str]:
    return (len(comment_id), comment_id)
