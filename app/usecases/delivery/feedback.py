"""What the-loop tells people on the work item: reactions and notices, both best-effort — a
failure to post is an event, never a change to the ledger."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

from domain.errors import TrackerError
from domain.events import Event, Level
from domain.model import Comment, Reaction, carries_marker
from domain.ports import EventSink, TrackerPort
from domain.refs import WorkItemRef

FLUSH_SECONDS = 20.0  # a stop waits at most this long for the reactions still to post


class Feedback:
    def __init__(
        self, *, tracker_for: Callable[[WorkItemRef], TrackerPort], events: EventSink, reactions: bool = True
    ) -> None:
        self._tracker_for = tracker_for
        self._events = events
        self._reactions = reactions
        self._posting: queue.Queue[tuple[Comment, Reaction]] | None = None

    @property
    def deferred(self) -> bool:
        """Whether reactions are posted by a thread of their own, in order, off the delivery's path
        (a GitHub round trip per reaction held the next comment's paste)."""
        return self._posting is not None

    @deferred.setter
    def deferred(self, value: bool) -> None:
        if value and self._posting is None:
            self._posting = queue.Queue()
            threading.Thread(target=self._post_each, args=(self._posting,), name="reactions", daemon=True).start()
        elif not value and self._posting is not None:
            self.flush(None)
            self._posting = None  # its thread waits on a queue nobody fills

    def flush(self, timeout: float | None = FLUSH_SECONDS) -> None:
        """Until every reaction asked for so far is posted (or said failed), or `timeout` passes:
        a GitHub that does not answer never holds a stop long (what is left is not posted)."""
        posting = self._posting
        if posting is not None:
            with posting.all_tasks_done:
                posting.all_tasks_done.wait_for(lambda: not posting.unfinished_tasks, timeout)

    def react(self, comment: Comment, reaction: Reaction) -> None:
        if not self._reactions:
            return
        if self._posting is not None:
            self._posting.put((comment, reaction))
            return
        self._post(comment, reaction)

    def _post_each(self, posting: queue.Queue[tuple[Comment, Reaction]]) -> None:
        while True:
            comment, reaction = posting.get()
            try:
                with contextlib.suppress(Exception):  # best-effort: one reaction's fault never stops the others
                    self._post(comment, reaction)
            finally:
                posting.task_done()

    def _post(self, comment: Comment, reaction: Reaction) -> None:
        try:
            self._tracker_for(comment.item).react(comment, reaction)
        except TrackerError as error:
            self._events.emit(
                Event.REACTION_FAILED,
                level=Level.WARNING,
                work_item=str(comment.item),
                comment_id=comment.id,
                reaction=reaction.value,
                cause=str(error),
            )
            return
        self._events.emit(
            Event.REACTION_ADDED, work_item=str(comment.item), comment_id=comment.id, reaction=reaction.value
        )

    def notify(self, item: WorkItemRef, body: str, *, giveup: bool = False, **fields: Any) -> str | None:
        """Post `body` (built only from the-loop's own values) on the item; the new comment's id, or
        None when posting failed (reported). A give-up notice has events of its own. Everything the-loop
        posts carries the agent marker, so it is never read back as a prompt."""
        if not carries_marker(body):
            raise ValueError("a notice without the agent marker would come back as a prompt")
        try:
            comment_id = self._tracker_for(item).post_comment(item, body)
        except TrackerError as error:
            self._events.emit(
                Event.POLL_GIVEUP_REPORT_FAILED if giveup else Event.NOTICE_FAILED,
                level=Level.WARNING,
                work_item=str(item),
                cause=str(error),
                **fields,
            )
            return None
        self._events.emit(Event.POLL_GIVEUP_REPORTED if giveup else Event.NOTICE_POSTED, work_item=str(item), **fields)
        return comment_id

    def amend(self, item: WorkItemRef, comment_id: str, body: str, **fields: Any) -> bool:
        """`body` (the-loop's own values only) replaces the notice `comment_id` the-loop posted on
        the item; False when editing failed (reported)."""
        if not carries_marker(body):
            raise ValueError("a notice without the agent marker would come back as a prompt")
        try:
            self._tracker_for(item).edit_posted(item, comment_id, body)
        except TrackerError as error:
            self._events.emit(Event.NOTICE_FAILED, level=Level.WARNING, work_item=str(item), cause=str(error), **fields)
            return False
        self._events.emit(Event.NOTICE_EDITED, work_item=str(item), comment_id=comment_id, **fields)
        return True
