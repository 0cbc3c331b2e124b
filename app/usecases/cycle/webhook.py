"""What a webhook delivery becomes: a comment kept in the store's inbox for its item, and a cue to
the daemon, only when it can become a prompt or a control verb (`domain/webhook.py`); anything
else is dropped, counted, and said at most once a minute per reason.

The webhook only makes delivery sooner: the same comment also arrives by the poll stream, under the
same delivery id, and the ledger delivers it once; the inbox keeps it across a crash."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import InitVar, dataclass

from app.usecases.cycle.authorization import Authorization
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.authorize import AccessChange
from domain.events import Event, Level
from domain.installations import InstallationChange
from domain.model import Source
from domain.ports import ClusterPort, InstallationsPort
from domain.refs import RepoRef
from domain.webhook import (
    InboxLimits,
    Pushed,
    Refusal,
    has_room,
    installation_decision,
    keep_decision,
    sender_decision,
)

DROPS_SAID_EVERY = 60.0  # seconds: one `webhook.dropped` per reason at most this often, with its count


@dataclass(kw_only=True, eq=False)
class WebhookIntake(InUnitOfWork):
    uow: UnitOfWork
    sources: InitVar[Iterable[Source]]
    authorization: Authorization  # who may steer; only the permissions known now are looked at
    cluster: ClusterPort
    limits: InboxLimits
    notify: Callable[[], None] = lambda: None  # the daemon's cue: something to work now
    installations: InstallationsPort | None = None  # the GitHub App's; None without one

    def __post_init__(self, sources: Iterable[Source]) -> None:
        labels: dict[RepoRef, set[str]] = defaultdict(set)
        for source in sources:
            labels[source.repo].add(source.label)
        self._watched = {repo: frozenset(found) for repo, found in labels.items()}
        # deliveries are handled on several threads at once
        self._lock = threading.Lock()
        self._keeping = threading.Lock()
        self._dropped: dict[tuple[Event, str], int] = defaultdict(int)
        self._said: dict[tuple[Event, str], float] = {}

    def accept(self, pushed: Pushed) -> None:
        """Keep a comment that can become a prompt or a control verb; drop and count the rest."""
        comment = pushed.comment
        decision = sender_decision(pushed, watched=self._watched, authorized=self.authorization.known())
        if decision.choice and self.installations is not None:
            decision = installation_decision(pushed, known=self.installations.known())
        if not decision.choice:
            self._drop(decision.reason)
            return
        listed = comment.item in self.cluster.shared_listing(comment.item.repo).refs
        with self._keeping:  # the room seen is the room taken, whatever arrives at once
            room = has_room(self.store.inbox_index(), adding=len(comment.body.encode()), limits=self.limits)
            decision = keep_decision(pushed, labels=self._watched[comment.item.repo], listed=listed, room=room)
            if decision.choice:
                self.store.inbox_add([comment])
        if not decision.choice:
            self._drop(decision.reason)
            return
        self.events.emit(
            Event.WEBHOOK_RECEIVED,
            source="webhook",
            work_item=str(comment.item),
            comment_id=comment.id,
            delivery_id=str(comment.delivery_id),
            reason=decision.reason,
        )
        self.notify()

    def access_changed(self, change: AccessChange) -> None:
        """GitHub said who may do what changed: the permissions it may have changed are read again."""
        self.authorization.forget(change)

    def installation_changed(self, change: InstallationChange) -> None:
        """The GitHub App's webhook said an installation changed: which repositories each serves is
        brought up to date, and a token that is no good any more is dropped."""
        dropped = self.installations.changed(change) if self.installations is not None else False
        self.events.emit(
            Event.WEBHOOK_INSTALLATION_CHANGED,
            source="webhook",
            installation=change.installation,
            action=change.action,
            added=sorted(str(repo) for repo in change.added),
            removed=sorted(str(repo) for repo in change.removed),
            token_dropped=dropped,
        )

    def refused(self, reason: Refusal, status: int) -> None:
        """A request the receiver refused (a bad signature, a malformed one): counted, said once a minute."""
        count = self._count(Event.WEBHOOK_REFUSED, reason)
        if count:
            self.events.emit(
                Event.WEBHOOK_REFUSED,
                level=Level.WARNING,
                reason=reason,
                status=status,
                count=count,
                seconds=DROPS_SAID_EVERY,
            )

    def _drop(self, reason: str) -> None:
        count = self._count(Event.WEBHOOK_DROPPED, reason)
        if count:
            self.events.emit(Event.WEBHOOK_DROPPED, reason=reason, count=count, seconds=DROPS_SAID_EVERY)

    def _count(self, event: Event, reason: str) -> int:
        """One more `event` for `reason`; how many to say now (0: said less than a minute ago)."""
        key = (event, reason)
        with self._lock:
            self._dropped[key] += 1
            now = self.clock.monotonic()
            said = self._said.get(key)
            if said is not None and now - said < DROPS_SAID_EVERY:
                return 0
            count, self._dropped[key], self._said[key] = self._dropped[key], 0, now
        return count
