"""Who may steer, with the GitHub permissions the rule needs read before it runs: each asked of the
item's tracker once and kept in this process's memory a while, dropped early when GitHub says access
changed. A permission that cannot be read is said, and stays unknown: never a guess, so whoever it
would have authorized is not authorized for what is decided now."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from domain.authorize import AccessChange, Authorized, Permission, PermissionKey, permission_key
from domain.errors import TrackerError
from domain.events import Event, Level
from domain.model import WorkItem
from domain.ports import ClockPort, EventSink, TrackerPort
from domain.refs import WorkItemRef

CACHE_SECONDS = 600.0


@dataclass(kw_only=True, eq=False)
class Authorization:
    rule: Authorized
    tracker_for: Callable[[WorkItemRef], TrackerPort]
    events: EventSink
    clock: ClockPort
    cache_seconds: float = CACHE_SECONDS

    def __post_init__(self) -> None:
        self._kept: dict[PermissionKey, tuple[Permission, float]] = {}  # each answer and when it was read
        self._lock = threading.Lock()  # items are worked on lanes of their own, webhooks on their threads
        self._asking = threading.Lock()  # one lookup at a time: two lanes never ask for the same login twice
        self._generation = 0  # a drop since a lookup began: its answer may be from before the change

    def known(self) -> Authorized:
        """The rule with the permissions kept now; nothing is asked."""
        now = self.clock.monotonic()
        with self._lock:
            return self.rule.knowing({key: held for key, (held, at) in self._kept.items() if self._fresh(at, now)})

    def of(self, wanted: Iterable[tuple[WorkItemRef, str]]) -> Authorized:
        """The rule with the permission of each login of `wanted` on its item's repository that would
        decide: kept, else read now. One that cannot be read is said and left unknown."""
        rule = self.known()
        answers: dict[PermissionKey, Permission] = {}
        for item, login in wanted:
            key = permission_key(item.repo, login)
            if key not in answers and rule.to_ask(login, repo=item.repo):
                held = self._read(item, login)
                if held is not None:
                    answers[key] = held
        return rule.knowing(answers)

    def of_author(self, item: WorkItem) -> Authorized:
        """The rule with the permission of `item`'s own author read when it would decide (whether
        its first look starts its agent)."""
        return self.of([(item.ref, item.author)] if item.author else [])

    def forget(self, change: AccessChange) -> None:
        """Drop the permissions `change` may have changed; each is read again when next needed."""
        with self._lock:
            dropped = [key for key in self._kept if change.covers(key)]
            for key in dropped:
                del self._kept[key]
            self._generation += 1
        repo = "" if change.repo is None else str(change.repo)
        self.events.emit(Event.AUTHORIZE_FORGOTTEN, source="webhook", github_event=change.event, repo=repo,
                         permissions=len(dropped))  # fmt: skip

    def _read(self, item: WorkItemRef, login: str) -> Permission | None:
        key = permission_key(item.repo, login)
        with self._asking:
            with self._lock:  # read meanwhile by another lane
                kept = self._kept.get(key)
                if kept is not None and self._fresh(kept[1], self.clock.monotonic()):
                    return kept[0]
                generation = self._generation
            try:
                held = self.tracker_for(item).permission(item.repo, login)
            except TrackerError as error:
                self.events.emit(Event.AUTHORIZE_LOOKUP_FAILED, level=Level.WARNING, work_item=str(item),
                                 repo=str(item.repo), login=login, reason=str(error))  # fmt: skip
                return None
            with self._lock:
                if generation == self._generation:  # else read again next time: access changed meanwhile
                    self._kept[key] = (held, self.clock.monotonic())
        self.events.emit(Event.AUTHORIZE_PERMISSION_READ, level=Level.DEBUG, work_item=str(item), repo=str(item.repo),
                         login=login, permission=held.value)  # fmt: skip
        return held

    def _fresh(self, at: float, now: float) -> bool:
        return now - at < self.cache_seconds
