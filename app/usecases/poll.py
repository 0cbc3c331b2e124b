"""The poll cycle: read each repository into the store's inbox (with its cursor, in one
transaction), then work every listed item from what the inbox holds for it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from app.usecases.closing import Closer
from app.usecases.cycle_summary import CycleSummary
from app.usecases.item_worker import ItemWorker, Listing
from app.usecases.meta import watch_start, watch_start_key
from domain.errors import RateLimited, StaleWrite, TrackerError
from domain.events import Event, Level
from domain.model import ItemState, SessionRecord, SessionStatus, Source, SpawnMode, WorkItem
from domain.policy import spawn_armed
from domain.ports import ClockPort, EventSink, StateStore, TrackerPort
from domain.refs import RepoRef, WorkItemRef

__all__ = ["CycleSummary", "PollConfig", "PollCycle", "Watch", "watches"]

PAUSED_CHECK_EVERY = 10  # cycles: a paused session's item is asked for its state this seldom


@dataclass(frozen=True, slots=True)
class PollConfig:
    sources: tuple[Source, ...]
    spawn_mode: SpawnMode = SpawnMode.LABELED
    max_concurrent: int = 4


@dataclass(frozen=True, slots=True)
class Watch:
    """One repository of one provider, with every label sources watch it by: its comments are
    read once per cycle, whatever the number of labels."""

    provider: str
    repo: RepoRef
    labels: tuple[str, ...]


def watches(sources: Iterable[Source]) -> list[Watch]:
    labels: dict[tuple[str, RepoRef], list[str]] = defaultdict(list)
    for source in sources:
        if source.label not in labels[(source.provider, source.repo)]:
            labels[(source.provider, source.repo)].append(source.label)
    return [Watch(provider, repo, tuple(found)) for (provider, repo), found in labels.items()]


class PollCycle:
    """One pass over every watched repository; `run()` is what `poll` repeats and `--once` runs once."""

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
        self._watches = watches(config.sources)
        self._backoff: dict[RepoRef, float] = {}  # until when, on the clock that never jumps
        self._cycles = 0
        self.stopping: Callable[[], bool] = lambda: False

    def run(self) -> CycleSummary:
        summary = CycleSummary(started_at=self._clock.now())
        # the registry is read once a cycle: a repository's records change only while it is worked
        sessions: dict[RepoRef, list[SessionRecord]] = defaultdict(list)
        for record in self._store.sessions():
            sessions[record.item.repo].append(record)
        for watch in self._watches:
            if self.stopping():
                break
            try:
                self._poll(watch, sessions[watch.repo], summary)
            except Exception as error:  # one repository's fault never stops the others
                summary.add(sources_failed=1)
                self._events.emit(
                    Event.POLL_SOURCE_FAILED,
                    level=Level.ERROR,
                    repo=str(watch.repo),
                    cause=f"{type(error).__name__}: {error}",
                )
        self._cycles += 1
        summary.finished_at = self._clock.now()
        self._events.emit(Event.POLL_CYCLE, **summary.fields())
        return summary

    def _poll(self, watch: Watch, sessions: list[SessionRecord], summary: CycleSummary) -> None:
        tracker = self._trackers[watch.provider]
        if self._backoff.get(watch.repo, 0.0) > self._clock.monotonic():
            return
        try:
            listed = self._listed(tracker, watch)
            cursor = self._store.cursor(watch.repo)
            batch = tracker.new_comments(watch.repo, cursor)
        except RateLimited as limited:
            # a wait, counted from now: setting the wall clock back must not make it an hour longer
            wait = limited.until_epoch - self._clock.now().timestamp()
            self._backoff[watch.repo] = self._clock.monotonic() + max(0.0, wait)
            self._events.emit(
                Event.POLL_BACKOFF,
                level=Level.WARNING,
                repo=str(watch.repo),
                until=limited.until_epoch,
                cause=str(limited),
            )
            return
        except TrackerError as error:
            summary.add(sources_failed=1)
            self._events.emit(Event.POLL_SOURCE_FAILED, level=Level.ERROR, repo=str(watch.repo), cause=str(error))
            return
        summary.min_interval_seconds = max(summary.min_interval_seconds, tracker.min_interval_seconds(watch.repo))
        if cursor is None:
            # the stream starts here: kept at once, or a first cycle cut short would start it anew later
            # and the comments written in between would never be read
            self._store.save_cursor(watch.repo, batch.cursor)
        self._close_departed(tracker, watch, sessions, listed, summary)
        # what was read is kept before the cursor moves past it, in one transaction: a crash, a
        # stop or a failing item loses nothing and pins nothing (the worker takes it from the inbox)
        since = watch_start(self._store, watch.repo)
        first = since is None and batch.started_at is not None
        with self._store.transaction():
            self._store.inbox_add(c for c in batch.comments if c.item in listed)
            self._store.save_cursor(watch.repo, batch.cursor)
            if first and batch.started_at is not None:
                since = batch.started_at
                self._store.save_meta(watch_start_key(watch.repo), since.isoformat())
        self._work(listed, since, summary, first=first)

    def _listed(self, tracker: TrackerPort, watch: Watch) -> dict[WorkItemRef, tuple[WorkItem, str]]:
        """Every open item carrying one of the watch's labels, with the first label it carries."""
        listed: dict[WorkItemRef, tuple[WorkItem, str]] = {}
        for label in watch.labels:
            for item in tracker.work_items(watch.repo, label):
                listed.setdefault(item.ref, (item, label))
        return listed

    def _work(
        self,
        listed: Mapping[WorkItemRef, tuple[WorkItem, str]],
        since: datetime | None,
        summary: CycleSummary,
        *,
        first: bool,
    ) -> None:
        """Work every listed item, each from what the inbox holds for it. In the repository's
        first cycle everything listed is history: no item needs asking when it was armed."""
        summary.add(items=len(listed))

        def one(item: WorkItem, label: str) -> None:
            if self.stopping():
                return
            armed = spawn_armed(item, mode=self._config.spawn_mode, label=label).choice
            try:
                self._worker.work(item, Listing(label, armed, since, history=first), summary=summary)
            except StaleWrite as conflict:
                # an operator's command won: stop here, and re-read and re-decide next cycle
                self._conflict(item.ref, conflict)
            except Exception as error:  # one item's fault never stops the cycle
                summary.add(items_failed=1)
                self._events.emit(
                    Event.POLL_ITEM_FAILED,
                    level=Level.ERROR,
                    work_item=str(item.ref),
                    cause=f"{type(error).__name__}: {error}",
                )

        with ThreadPoolExecutor(max_workers=max(1, self._config.max_concurrent)) as pool:
            for future in [pool.submit(one, item, label) for item, label in listed.values()]:
                future.result()

    def _close_departed(
        self,
        tracker: TrackerPort,
        watch: Watch,
        sessions: list[SessionRecord],
        listed: Mapping[WorkItemRef, object],
        summary: CycleSummary,
    ) -> None:
        """Only a session whose item left the watched list costs a state request — a paused one
        only every PAUSED_CHECK_EVERY cycles, so it is still closed when its item is."""
        paused_too = self._cycles % PAUSED_CHECK_EVERY == 0
        for record in sessions:
            if record.item in listed:
                continue
            if not (record.status is SessionStatus.ACTIVE or (paused_too and record.status is SessionStatus.PAUSED)):
                continue
            try:
                state = tracker.item_state(record.item, watch.labels[0])
            except TrackerError as error:
                self._events.emit(
                    Event.POLL_SOURCE_FAILED,
                    level=Level.ERROR,
                    repo=str(watch.repo),
                    work_item=str(record.item),
                    cause=str(error),
                )
                continue
            if state is ItemState.UNLABELED and record.status is SessionStatus.PAUSED:
                continue
            try:
                if state is not ItemState.OPEN and self._closer.departed(record, state):
                    summary.add(closed=1)
            except StaleWrite as conflict:  # the record read at the cycle's start moved on
                self._conflict(record.item, conflict)

    def _conflict(self, item: WorkItemRef, conflict: StaleWrite) -> None:
        self._events.emit(Event.POLL_ITEM_CONFLICT, level=Level.WARNING, work_item=str(item), cause=str(conflict))

