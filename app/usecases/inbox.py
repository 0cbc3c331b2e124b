"""Comments pushed by webhook, waiting for the next poll cycle to take them through the ledger.

The webhook only makes delivery sooner: the same comment also arrives by the poll stream, under
the same delivery id, and the ledger delivers it once. So an inbox lost in a crash loses nothing."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable

from domain.model import Comment
from domain.refs import RepoRef


class Inbox:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[RepoRef, dict[str, Comment]] = defaultdict(dict)
        self.notify: Callable[[], None] = lambda: None  # the daemon's cue to cycle now

    def push(self, comment: Comment) -> None:
        with self._lock:
            self._waiting[comment.item.repo][comment.id] = comment
        self.notify()

    def drain(self, repo: RepoRef) -> tuple[Comment, ...]:
        with self._lock:
            return tuple(self._waiting.pop(repo, {}).values())
