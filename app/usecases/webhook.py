"""What a webhook delivery becomes: a comment kept in the store's inbox for its item, when its
repository is watched, and a cue to the daemon to cycle now.

The webhook only makes delivery sooner: the same comment also arrives by the poll stream, under the
same delivery id, and the ledger delivers it once; the inbox keeps it across a crash."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from domain.events import Event
from domain.model import Comment
from domain.ports import EventSink, StateStore
from domain.refs import RepoRef


class WebhookIntake:
    def __init__(self, *, store: StateStore, watched: Iterable[RepoRef], events: EventSink) -> None:
        self._store = store
        self._watched = frozenset(watched)
        self._events = events
        self.notify: Callable[[], None] = lambda: None  # the daemon's cue to cycle now

    def accept(self, comment: Comment) -> None:
        """Keep a comment of a watched repository; the ledger decides the rest, as for a polled one."""
        watched = comment.item.repo in self._watched
        self._events.emit(
            Event.WEBHOOK_RECEIVED,
            source="webhook",
            work_item=str(comment.item),
            comment_id=comment.id,
            delivery_id=str(comment.delivery_id),
            queued=watched,
        )
        if watched:
            self._store.inbox_add([comment])
            self.notify()
