"""What a webhook delivery becomes: a comment for the next cycle, when its repository is watched."""

from __future__ import annotations

from collections.abc import Iterable

from app.usecases.inbox import Inbox
from domain.events import Event
from domain.model import Comment
from domain.ports import EventSink
from domain.refs import RepoRef


class WebhookIntake:
    def __init__(self, *, inbox: Inbox, watched: Iterable[RepoRef], events: EventSink) -> None:
        self._inbox = inbox
        self._watched = frozenset(watched)
        self._events = events

    def accept(self, comment: Comment) -> None:
        """Queue a new comment of a watched repository; the ledger decides the rest, as for a polled one."""
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
            self._inbox.push(comment)
