"""The poll cycle: read each repository, apply the ledger, dispatch in order per item, record, react."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from app.usecases.closing import Closer
from app.usecases.cycle_summary import CycleSummary
from app.usecases.inbox import Inbox
from app.usecases.item_worker import ItemWorker
from domain.errors import RateLimited, StaleWrite, TrackerError
from domain.events import Event, Level
from domain.model import Comment, ItemState, SessionRecord, SessionStatus, Source, SpawnMode, WorkItem
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
        inbox: Inbox | None = None,
    ) -> None:
        self._trackers = trackers
        self._store = store
        self._events = events
        self._clock = clock
        self._worker = worker
        self._closer = closer
        self._config = config
        self.inbox = inbox or Inbox()
        self._watches = watches(config.sources)
        self._backoff: dict[RepoRef, float] = {}
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
        if self._backoff.get(watch.repo, 0.0) > self._clock.now().timestamp():
            return
        try:
            listed = self._listed(tracker, watch)
            cursor = self._store.cursor(watch.repo)
            batch = tracker.new_comments(watch.repo, cursor)
        except RateLimited as limited:
            self._backoff[watch.repo] = limited.until_epoch
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
        comments = (*batch.comments, *self.inbox.drain(watch.repo))
        failed = self._work(listed, comments, summary)
        # the cursor moves only once every item with new comments was worked: a crash or a
        # failed item re-reads the same comments next cycle, and the ledger makes that harmless
        if not self.stopping() and not any(comment.item in failed for comment in comments):
            self._store.save_cursor(watch.repo, batch.cursor)

    def _listed(self, tracker: TrackerPort, watch: Watch) -> dict[WorkItemRef, tuple[WorkItem, str]]:
        """Every open item carrying one of the watch's labels, with the first label it carries."""
        listed: dict[WorkItemRef, tuple[WorkItem, str]] = {}
        for label in watch.labels:
            for item in tracker.work_items(watch.repo, label):
                listed.setdefault(item.ref, (item, label))
        return listed

    def _work(
        self, listed: Mapping[WorkItemRef, tuple[WorkItem, str]], comments: Iterable[Comment], summary: CycleSummary
    ) -> set[WorkItemRef]:
        """Work every listed item; the ones that failed unexpectedly (or were not reached)."""
        by_item: dict[WorkItemRef, list[Comment]] = defaultdict(list)
        for comment in comments:
            by_item[comment.item].append(comment)
        summary.add(items=len(listed))

        def one(item: WorkItem, label: str) -> bool:
            if self.stopping():
                return False
            armed = spawn_armed(item, mode=self._config.spawn_mode, label=label)
            try:
                self._worker.work(item, by_item.get(item.ref, []), armed=armed.choice, summary=summary)
            except StaleWrite as conflict:
                # an operator's command won: stop here, and re-read and re-decide next cycle
                self._conflict(item.ref, conflict)
                return False
            except Exception as error:  # one item's fault never stops the cycle
                summary.add(items_failed=1)
                self._events.emit(
                    Event.POLL_ITEM_FAILED,
                    level=Level.ERROR,
                    work_item=str(item.ref),
                    cause=f"{type(error).__name__}: {error}",
                )
                return False
            return True

        with ThreadPoolExecutor(max_workers=max(1, self._config.max_concurrent)) as pool:
            futures = [pool.submit(one, item, label) for item, label in listed.values()]
            return {ref for ref, future in zip(listed, futures, strict=True) if not future.result()}

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
