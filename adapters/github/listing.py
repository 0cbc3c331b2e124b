"""One repository's labelled items, kept current from its issue stream, and when its review stream
is due: what `GhTracker` keeps between cycles, and on disk between processes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from adapters.github.payloads import format_time
from adapters.github.streams import SETTLE, moved_since
from domain.model import ItemKind, ItemState, WorkItem

Change = tuple[WorkItem, ItemState, datetime]  # an item in the issue stream, as of its update


@dataclass(slots=True)
class LabelledSet:
    """The open items carrying one label, kept current from the repository's issue stream."""

    label: str
    since: str
    items: dict[int, WorkItem] = field(default_factory=dict)
    versions: dict[int, str] = field(default_factory=dict)  # number -> updated_at in the window
    etag: str = ""

    def absorb(self, changed: Sequence[Change], *, etag: str, full: bool, server_time: datetime) -> datetime | None:
        """Apply a reply's items; the newest update of a pull request that changed, if any."""
        pull_requests = [u for item, state, u in changed if self._apply(item, state, u)
                         and item.kind is ItemKind.PULL_REQUEST]  # fmt: skip
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
class Listing:
    """One repository: a `LabelledSet` per label, and until when its review stream is due.

    A review comment shows only as its pull request's update in the issue stream, and a second
    one in the same second (or one listed late) changes nothing there. So after a pull request
    changed, the review stream stays due until a read whose server time is `SETTLE` past that
    update. When that read happened is the comment cursor's to say (`CommentCursor.review_read_at`):
    this side only ever moves `review_until` later, so a cursor older than the listing makes the
    stream due again, never skipped.
    """

    sets: dict[str, LabelledSet] = field(default_factory=dict)
    review_until: datetime | None = None

    def review_due_until(self, moment: datetime) -> None:
        """The review stream is due until a read at or after `moment`."""
        self.review_until = moment if self.review_until is None else max(self.review_until, moment)

    def pull_request_changed(self, updated: datetime) -> None:
        self.review_due_until(updated + SETTLE)
