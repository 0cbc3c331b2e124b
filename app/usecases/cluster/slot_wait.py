"""Items no host has a free slot for (this host, or every host sharing the work, at
`cluster.maxSessions`): each wait is said once (`cluster.slot_waiting`), kept in the store's meta
with its start so `status`, `sessions list` and the page show it (and the next free slot goes to
the item waiting longest), and told on the item once the wait outlasts a cycle."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from app.usecases.delivery.feedback import Feedback
from domain.events import Event
from domain.notice import slot_wait_notice
from domain.ports import ClockPort, ClusterPort, EventSink, StateStore
from domain.refs import RepoRef, WorkItemRef

KEY = "slot-wait:"  # + the item: {"since": iso, "noticed": bool}; "" once it has a slot


@dataclass(frozen=True, slots=True)
class Wait:
    item: str
    since: datetime
    noticed: bool = False
    memory: bool = False  # it began while the host's memory was short, not its slots
    home: str = ""  # a hibernated item's: the host holding its conversation, which alone may wake it

    def line(self, now: datetime) -> str:
        minutes = max(0, int((now - self.since).total_seconds() // 60))
        return f"  waiting for a free slot: {self.item} since {self.since:%Y-%m-%d %H:%M:%S} ({minutes} min)"

    def as_json(self) -> dict[str, object]:
        return {"work_item": self.item, "since": self.since.isoformat(), "noticed": self.noticed}


def waits(meta: Mapping[str, str]) -> list[Wait]:
    """Every item waiting for a slot now, oldest first."""
    found = [_wait(key.removeprefix(KEY), value) for key, value in meta.items() if key.startswith(KEY)]
    return sorted((w for w in found if w is not None), key=lambda w: (w.since, w.item))


def _wait(item: str, value: str) -> Wait | None:
    if not value:
        return None
    try:
        raw = json.loads(value)
        return Wait(
            item, datetime.fromisoformat(raw["since"]), bool(raw.get("noticed")), bool(raw.get("memory")),
            str(raw.get("home") or ""),
        )  # fmt: skip
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(kw_only=True, eq=False)
class SlotWaits:
    store: StateStore
    events: EventSink
    clock: ClockPort
    cluster: ClusterPort
    feedback: Feedback | None
    memory_short: bool = False  # the host's memory, not its slots, holds the waits beginning now
    # hibernated items' hosts holding their conversations, where they wait while those hosts are up
    homes: Mapping[WorkItemRef, str] = field(default_factory=dict)

    def seen(self, repo: RepoRef, wanting: Iterable[WorkItemRef], *, now: datetime | None = None) -> None:
        """After placing `repo`'s listed items that need a slot: those no host holds wait (from `now`,
        the clock's when not given); those that wait no more (placed, no longer listed, or needing
        none) are forgotten."""
        held = {lease.item for lease in self.cluster.leases() if lease.live}
        items = list(wanting)
        meta = self.store.meta()
        for item in items:
            old = _wait(str(item), meta.get(KEY + str(item), ""))
            if item in held:
                if old is not None:
                    self.store.save_meta(KEY + str(item), "")
            elif old is None:
                self._started(item, now or self.clock.now())
            elif not old.noticed:
                self._tell(item, old)
        gone = {w.item for w in waits(meta)} - {str(i) for i in items}
        for name in gone:
            if WorkItemRef.parse(name).repo == repo:
                self.store.save_meta(KEY + name, "")

    def _started(self, item: WorkItemRef, now: datetime) -> None:
        hosts = self.cluster.hosts()
        home = self.homes.get(item, "") if len(hosts) > 1 else ""  # one host: every host is its home
        self._save(Wait(str(item), now, memory=self.memory_short, home=home))
        self.events.emit(
            Event.CLUSTER_SLOT_WAITING, work_item=str(item), since=now.isoformat(),
            hosts=[f"{h.host} {h.leases}/{h.max_sessions}" for h in hosts],
            why="memory" if self.memory_short else "slots", home=home or None,
        )  # fmt: skip

    def _tell(self, item: WorkItemRef, wait: Wait) -> None:
        """The wait outlasted a cycle: one notice on the item (tried again next cycle if it failed)."""
        if self.feedback is None:
            return
        notice = slot_wait_notice(item, since=wait.since, memory=wait.memory, home=wait.home)
        if self.feedback.notify(item, notice, notice="slot-wait") is not None:
            self._save(Wait(wait.item, wait.since, noticed=True, memory=wait.memory, home=wait.home))

    def _save(self, wait: Wait) -> None:
        value = {"since": wait.since.isoformat(), "noticed": wait.noticed, "memory": wait.memory, "home": wait.home}
        self.store.save_meta(KEY + wait.item, json.dumps(value))
