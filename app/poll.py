"""The poll cycle: read each source, apply the ledger, dispatch in order per item, record, react."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.closing import Closer
from app.item_worker import ItemWorker
from domain.errors import RateLimited, TrackerError
from domain.events import Event, Level
from domain.model import Comment, ItemState, SessionStatus, Source, SpawnMode, WorkItem
from domain.policy import spawn_armed
from domain.ports import ClockPort, EventSink, StateStore, TrackerPort
from domain.refs import RepoRef, WorkItemRef


@dataclass(frozen=True, slots=True)
class PollConfig:
    sources: tuple[Source, ...]
    authorized: frozenset[str]
    spawn_mode: SpawnMode = SpawnMode.LABELED
    max_retries: int = 3
    max_concurrent: int = 4
    reactions: bool = True


@dataclass
class CycleSummary:
    started_at: datetime
    items: int = 0
    delivered: int = 0
    failed: int = 0
    abandoned: int = 0
    skipped: int = 0
    spawned: int = 0
    closed: int = 0
    sources_failed: int = 0
    min_interval_seconds: float = 0.0  # the longest pace a tracker asked for this cycle
    finished_at: datetime | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for key, value in counts.items():
                setattr(self, key, getattr(self, key) + value)

    def fields(self) -> dict[str, Any]:
        names = ("items", "delivered", "failed", "abandoned", "skipped", "spawned", "closed", "sources_failed")
        return {name: getattr(self, name) for name in names}

    def line(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.fields().items())


class PollCycle:
    """One pass over every source; `run()` is what `poll` repeats and `poll --once` runs once."""

    def __init__(
        self,
        *,
        trackers: Mapping[str, TrackerPort],
        store: StateStore,
        events: EventSink,
        clock: ClockPort,
        worker: ItemWorker,
        closer: Closer,
        config: PollConfig,
    ) -> None:
        self._trackers = trackers
        self._store = store
        self._events = events
        self._clock = clock
        self._worker = worker
        self._closer = closer
        self._config = config
        self._backoff: dict[RepoRef, float] = {}
        self.stopping: Callable[[], bool] = lambda: False

    def run(self) -> CycleSummary:
        summary = CycleSummary(started_at=self._clock.now())
        for source in self._config.sources:
            if self.stopping():
                break
            self._poll_source(source, summary)
        summary.finished_at = self._clock.now()
        self._events.emit(Event.POLL_CYCLE, **summary.fields())
        return summary

    def _poll_source(self, source: Source, summary: CycleSummary) -> None:
        tracker = self._trackers[source.provider]
        now = self._clock.now().timestamp()
        if self._backoff.get(source.repo, 0.0) > now:
            return
        try:
            items = tracker.work_items(source.repo, source.label)
            batch = tracker.new_comments(source.repo, self._store.cursor(source.repo))
        except RateLimited as limited:
            self._backoff[source.repo] = limited.until_epoch
            self._events.emit(
                Event.POLL_BACKOFF,
                level=Level.WARNING,
                repo=str(source.repo),
                until=limited.until_epoch,
                cause=str(limited),
            )
            return
        except TrackerError as error:
            summary.add(sources_failed=1)
            self._events.emit(Event.POLL_SOURCE_FAILED, level=Level.ERROR, repo=str(source.repo), cause=str(error))
            return
        summary.min_interval_seconds = max(summary.min_interval_seconds, tracker.min_interval_seconds(source.repo))
        self._close_departed(tracker, source, items, summary)
        self._work(source, items, batch.comments, summary)
        # the cursor moves only once every item of this repository was worked: a crash before
        # here re-reads the same comments, and the ledger makes that harmless
        if not self.stopping():
            self._store.save_cursor(source.repo, batch.cursor)

    def _work(self, source: Source, items: list[WorkItem], comments: Iterable[Comment], summary: CycleSummary) -> None:
        by_item: dict[WorkItemRef, list[Comment]] = defaultdict(list)
        for comment in comments:
            by_item[comment.item].append(comment)
        summary.add(items=len(items))

        def one(item: WorkItem) -> None:
            if self.stopping():
                return
            armed = spawn_armed(item, mode=self._config.spawn_mode, label=source.label)
            self._worker.work(item, by_item.get(item.ref, []), armed=armed.choice, summary=summary)

        with ThreadPoolExecutor(max_workers=max(1, self._config.max_concurrent)) as pool:
            for future in [pool.submit(one, item) for item in items]:
                future.result()

    def _close_departed(
        self, tracker: TrackerPort, source: Source, items: list[WorkItem], summary: CycleSummary
    ) -> None:
        """Only an item with a session that left the watched list costs a state request."""
        listed = {item.ref for item in items}
        for record in self._store.sessions():
            if record.item.repo != source.repo or record.status is not SessionStatus.ACTIVE:
                continue
            if record.item in listed:
                continue
            try:
                state = tracker.item_state(record.item, source.label)
            except TrackerError as error:
                self._events.emit(
                    Event.POLL_SOURCE_FAILED,
                    level=Level.ERROR,
                    repo=str(source.repo),
                    work_item=str(record.item),
                    cause=str(error),
                )
                continue
            if state is not ItemState.OPEN and self._closer.departed(record, state):
                summary.add(closed=1)
