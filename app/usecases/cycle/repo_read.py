"""Reading one repository, by the one host that holds its lock: the labelled listing and the new
comments (kept in the store's inbox with the cursor, in one transaction), the state of sessions
whose item left the listing, all shared for every host to work from (and to give slots from)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from app.usecases.cycle.cycle_summary import CycleSummary
from app.usecases.cycle.meta import read_through_key, watch_start, watch_start_key
from domain.budget import DEFAULT_RATE_FLOOR, Spend, read_decision
from domain.cluster import Departed, Listed
from domain.errors import RateLimited, TrackerError
from domain.events import Event, Level
from domain.model import ItemState, SessionRecord, SessionStatus, WorkItem
from domain.ports import ClockPort, ClusterPort, EventSink, StateStore, TrackerPort
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import unlisted_stale

PAUSED_CHECK_EVERY = 10  # cycles: a paused session's item is asked for its state this seldom


@dataclass(frozen=True, slots=True)
class Watch:
    """One repository of one provider, with every label sources watch it by: its comments are
    read once per cycle, whatever the number of labels."""

    provider: str
    repo: RepoRef
    labels: tuple[str, ...]


@dataclass(kw_only=True, eq=False)
class RepoReader:
    trackers: Mapping[str, TrackerPort]
    store: StateStore
    events: EventSink
    clock: ClockPort
    cluster: ClusterPort
    unlisted_keep_seconds: float = 600.0
    rate_floor: int = DEFAULT_RATE_FLOOR  # reads stop with this many requests left (`read_decision`)
    # until when, on the clock that never jumps
    _backoff: dict[RepoRef, float] = field(init=False, default_factory=dict)

    def read(self, watch: Watch, sessions: Sequence[SessionRecord], summary: CycleSummary, *, cycle: int) -> bool:
        """Read and share `watch`'s repository; False when it could not be read this cycle."""
        tracker = self.trackers[watch.provider]
        if not self._may_read(tracker, watch):
            _note_budget(tracker, watch, summary)  # held back: what the last reply said still stands
            return False
        try:
            listed = self._listed(tracker, watch)
            began = self.clock.now()  # what was written before the read starts is in it, or in an earlier one
            cursor = self.store.cursor(watch.repo)
            batch = tracker.new_comments(watch.repo, cursor)
        except RateLimited as limited:
            self._back_off(watch.repo, limited.until_epoch, cause=str(limited))
            return False
        except TrackerError as error:
            summary.add(sources_failed=1)
            self.events.emit(Event.POLL_SOURCE_FAILED, level=Level.ERROR, repo=str(watch.repo), cause=str(error))
            return False
        finally:  # what the replies said of the budget, whatever they answered
            _note_budget(tracker, watch, summary)
        summary.min_interval_seconds = max(summary.min_interval_seconds, tracker.min_interval_seconds(watch.repo))
        if cursor is None:
            # the stream starts here: kept at once, or a first cycle cut short would start it anew later
            # and the comments written in between would never be read
            self.store.save_cursor(watch.repo, batch.cursor)
        departed = self._departed(tracker, watch, sessions, listed, cycle=cycle)
        # what was read is kept before the cursor moves past it, in one transaction: a crash, a
        # stop or a failing item loses nothing and pins nothing (the worker takes it from the inbox)
        first = watch_start(self.store, watch.repo) is None and batch.started_at is not None
        with self.store.transaction():
            self.store.inbox_add(c for c in batch.comments if c.item in listed)
            pruned = self._prune(watch.repo, listed)
            self.store.save_cursor(watch.repo, batch.cursor)
            self.store.save_meta(read_through_key(watch.repo), began.isoformat())  # what pruning trails
            if first and batch.started_at is not None:
                self.store.save_meta(watch_start_key(watch.repo), batch.started_at.isoformat())
        for item, count in pruned.items():
            self.events.emit(Event.POLL_INBOX_PRUNED, work_item=str(item), comments=count)
        # in the repository's first cycle everything listed is history: no item needs asking when it was armed
        shared = [Listed(item, label, history=first) for item, label in listed.values()]
        self.cluster.share(watch.repo, shared, departed)
        return True

    def _may_read(self, tracker: TrackerPort, watch: Watch) -> bool:
        """False while the repository backs off, or while the budget its requests count against (its
        installation's, in App mode) is down to the floor kept for notices and replies."""
        if self._backoff.get(watch.repo, 0.0) > self.clock.monotonic():
            return False
        decision = read_decision(
            tracker.budget(watch.repo), floor=self.rate_floor, now_epoch=self.clock.now().timestamp()
        )
        if decision.choice is Spend.HOLD and decision.until_epoch is not None:
            self._back_off(watch.repo, decision.until_epoch, cause=f"{watch.repo}: {decision.reason}")
            return False
        return True

    def _back_off(self, repo: RepoRef, until_epoch: float, *, cause: str) -> None:
        # a wait, counted from now: setting the wall clock back must not make it an hour longer
        wait = until_epoch - self.clock.now().timestamp()
        self._backoff[repo] = self.clock.monotonic() + max(0.0, wait)
        self.events.emit(Event.POLL_BACKOFF, level=Level.WARNING, repo=str(repo), until=until_epoch, cause=cause)

    def _prune(self, repo: RepoRef, listed: Mapping[WorkItemRef, object]) -> dict[WorkItemRef, int]:
        """Drop what the inbox keeps for an item that left the listing (it goes with the item), and
        for an item no read lists once older than `unlisted_keep_seconds` (a label race that did not
        resolve: when such an item is listed, its arming read brings every comment since its label).
        How many were dropped, per item."""
        left = set(self.cluster.shared_listing(repo).refs) - set(listed)
        entries = self.store.inbox_index()
        before = self.clock.now() - timedelta(seconds=self.unlisted_keep_seconds)
        stale = unlisted_stale(entries, repo=repo, listed=listed.keys(), before=before)
        by_item: dict[WorkItemRef, set[str]] = {}
        for entry in [e for e in entries if e.item in left] + stale:
            by_item.setdefault(entry.item, set()).add(entry.comment_id)
        for item, ids in sorted(by_item.items()):
            self.store.inbox_remove(item, sorted(ids))
        return {item: len(ids) for item, ids in sorted(by_item.items())}

    def _listed(self, tracker: TrackerPort, watch: Watch) -> dict[WorkItemRef, tuple[WorkItem, str]]:
        """Every open item carrying one of the watch's labels, with the first label it carries."""
        listed: dict[WorkItemRef, tuple[WorkItem, str]] = {}
        for label in watch.labels:
            for item in tracker.work_items(watch.repo, label):
                listed.setdefault(item.ref, (item, label))
        return listed

    def _departed(
        self,
        tracker: TrackerPort,
        watch: Watch,
        sessions: Sequence[SessionRecord],
        listed: Mapping[WorkItemRef, object],
        *,
        cycle: int,
    ) -> list[Departed]:
        """Only a session whose item left the watched list costs a state request — a paused one
        only every PAUSED_CHECK_EVERY cycles, so it is still closed when its item is."""
        paused_too = cycle % PAUSED_CHECK_EVERY == 0
        departed = []
        for record in sessions:
            if record.item in listed:
                continue
            if not (record.status is SessionStatus.ACTIVE or (paused_too and record.status is SessionStatus.PAUSED)):
                continue
            try:
                state = tracker.item_state(record.item, watch.labels[0])
            except TrackerError as error:
                self.events.emit(
                    Event.POLL_SOURCE_FAILED, level=Level.ERROR, repo=str(watch.repo), work_item=str(record.item),
                    cause=str(error),
                )  # fmt: skip
                continue
            if state is ItemState.OPEN or (state is ItemState.UNLABELED and record.status is SessionStatus.PAUSED):
                continue
            departed.append(Departed(record.item, state))
        return departed


def _note_budget(tracker: TrackerPort, watch: Watch, summary: CycleSummary) -> None:
    """The request budget the tracker's last reply stated, for the heartbeat (asks nothing)."""
    if (budget := tracker.budget(watch.repo)) is not None:
        summary.note_budget(watch.repo, budget)
