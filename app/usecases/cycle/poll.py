"""The poll cycle: each repository is read by the host holding its lock (one host: this one) into
the store's inbox and the shared listing; then the slots are given out (`cluster.maxSessions` a
host), across every repository read, the item waiting longest first; then this host works the listed
items it holds, each from what the inbox holds for it, and closes the sessions it holds whose item
departed."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from datetime import datetime

from app.usecases.cluster.leases import Leases
from app.usecases.cluster.orphans import Orphans
from app.usecases.cluster.slot_wait import SlotWaits
from app.usecases.cluster.slots import MemoryAdmission, SlotConfig, Slots
from app.usecases.cycle.cycle_summary import CycleSummary
from app.usecases.cycle.intake import Listing
from app.usecases.cycle.lanes import Lanes
from app.usecases.cycle.ledger_pruning import LedgerPruner
from app.usecases.cycle.meta import watch_start
from app.usecases.cycle.repo_read import PAUSED_CHECK_EVERY, RepoReader, Watch
from app.usecases.delivery.closing import Closer
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.item_worker import ItemWorker
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.authorize import Authorized
from domain.budget import DEFAULT_RATE_FLOOR
from domain.cluster import Departed, Listed
from domain.errors import LeaseLost, StaleWrite
from domain.events import Event, Level
from domain.model import SessionRecord, Source, SpawnMode, WorkItem
from domain.policy import spawn_armed
from domain.ports import ClusterPort, TrackerPort
from domain.refs import RepoRef, WorkItemRef

__all__ = ["PAUSED_CHECK_EVERY", "CycleSummary", "PollConfig", "PollCycle", "Watch", "watches"]


CONFLICT_RETRY_SECONDS = 0.2


@dataclass(frozen=True, slots=True)
class PollConfig:
    sources: tuple[Source, ...]
    spawn_mode: SpawnMode = SpawnMode.LABELED
    max_concurrent: int = 4
    unlisted_keep_seconds: float = 600.0  # a kept comment of an item no read lists: dropped after this
    rate_floor: int = DEFAULT_RATE_FLOOR  # requests a budget keeps for notices and replies: reads stop there


def watches(sources: Iterable[Source]) -> list[Watch]:
    labels: dict[tuple[str, RepoRef], list[str]] = defaultdict(list)
    for source in sources:
        if source.label not in labels[(source.provider, source.repo)]:
            labels[(source.provider, source.repo)].append(source.label)
    return [Watch(provider, repo, tuple(found)) for (provider, repo), found in labels.items()]


@dataclass(frozen=True, slots=True)
class _Quiet:
    """What an item with nothing left to do was last worked from."""

    entry: Listed
    record: SessionRecord | None
    since: datetime | None


@dataclass(kw_only=True, eq=False)
class PollCycle(InUnitOfWork):
    """One pass over every watched repository; `run()` is what `poll` repeats and `--once` runs once."""

    trackers: InitVar[Mapping[str, TrackerPort]]
    uow: UnitOfWork
    worker: ItemWorker
    closer: Closer
    config: PollConfig
    cluster: ClusterPort
    leases: Leases
    orphans: Orphans
    pruner: LedgerPruner | None = None
    feedback: Feedback | None = None  # to tell an item that waits for a free slot
    # the rule with an item's author's permission read: an armed item of theirs starts at its first look
    authorized: Callable[[WorkItem], Authorized] = lambda _item: Authorized()
    admission: MemoryAdmission = field(default_factory=MemoryAdmission)  # no new agent while memory is short

    def __post_init__(self, trackers: Mapping[str, TrackerPort]) -> None:
        self._reader = RepoReader(
            trackers=trackers, store=self.store, events=self.events, clock=self.clock, cluster=self.cluster,
            unlisted_keep_seconds=self.config.unlisted_keep_seconds, rate_floor=self.config.rate_floor,
        )  # fmt: skip
        waits = SlotWaits(
            store=self.store, events=self.events, clock=self.clock, cluster=self.cluster, feedback=self.feedback
        )
        self._slots = Slots(
            store=self.store, events=self.events, clock=self.clock, cluster=self.cluster, leases=self.leases,
            waits=waits, config=SlotConfig(self.config.spawn_mode, self.authorized), admission=self.admission,
        )  # fmt: skip
        self._watches = watches(self.config.sources)
        self._reading: frozenset[RepoRef] = frozenset()
        # items left with nothing to do, by repository, with what they were worked from: an idle
        # cycle works none of them again until their listing, record or repository start changes,
        # or a comment is kept for them (each read puts what it found in the inbox)
        self._quiet: dict[RepoRef, dict[WorkItemRef, _Quiet]] = {}
        self._cycles = 0
        self.stopping: Callable[[], bool] = lambda: False
        # each item is worked on a lane of its own; the daemon's cycle does not wait
        # for them (`beside`), `poll --once` and the tests' cycles do; `stopping` is set after this
        self._lanes = Lanes(clock=self.clock, limit=self.config.max_concurrent, stopping=lambda: self.stopping())  # noqa: PLW0108
        self._quiet_lock = threading.Lock()
        self._beside = False
        self._tally = CycleSummary(started_at=self.clock.now())

    @property
    def beside(self) -> bool:
        """Whether items are worked beside the cycle (the daemon), or each cycle waits for them."""
        return self._beside

    @beside.setter
    def beside(self, value: bool) -> None:
        self._beside = value
        if self.feedback is not None:
            self.feedback.deferred = value  # reactions posted beside the deliveries, in order

    def drain(self) -> None:
        """Until every item's work in hand is done, and its reactions posted (a stop, `--once`)."""
        self._lanes.drain()
        if self.feedback is not None:
            self.feedback.flush()

    def run(self) -> CycleSummary:
        # beside the cycle, what the items' lanes did since the last cycle was said counts in this one
        summary = self._tally if self._beside else CycleSummary(started_at=self.clock.now())
        summary.started_at = self.clock.now()
        self.orphans.end(self.leases.take_lost())
        # the registry is read once a cycle: a repository's records change only while it is worked
        sessions: dict[RepoRef, list[SessionRecord]] = defaultdict(list)
        for record in self.store.sessions():
            sessions[record.item.repo].append(record)
        self._kept_first(summary)
        workable = [watch for watch in self._watches if self._read(watch, sessions[watch.repo], summary)]
        if workable and not self.stopping():
            self._give_slots(workable, sessions)
        for watch in workable:
            if self.stopping():
                break
            try:
                self._poll(watch, sessions[watch.repo], summary)
            except Exception as error:  # one repository's fault never stops the others
                summary.add(sources_failed=1)
                self._emit(Event.POLL_SOURCE_FAILED, error, repo=str(watch.repo))
        if self.pruner is not None and not self.stopping():
            self.pruner.run(self.leases.owned())  # after the items' work: it never waits for this
        self._cycles += 1
        summary.finished_at = self.clock.now()
        self.events.emit(Event.POLL_CYCLE, **summary.fields())
        if self._beside:
            with summary.lock:
                summary.then = self._tally = CycleSummary(started_at=self.clock.now())
        return summary

    def run_kept(self) -> CycleSummary:
        """Only the comments already kept (a webhook's), their items worked from the last listing:
        no GitHub read. Between cycles, when a webhook wakes the daemon (beside the cycle, counted
        in the cycle's summary)."""
        if self._beside:
            self._kept_first(self._tally)
            return self._tally
        summary = CycleSummary(started_at=self.clock.now())
        self._kept_first(summary)
        summary.finished_at = self.clock.now()
        return summary

    def kept_unlisted(self) -> bool:
        """Whether a kept comment's item is in no listing yet: only a read of its repository lists it."""
        kept = self.store.inbox_items()
        listed = {ref for repo in {ref.repo for ref in kept} for ref in self.cluster.shared_listing(repo).refs}
        return any(ref not in listed for ref in kept)

    def _read(self, watch: Watch, sessions: list[SessionRecord], summary: CycleSummary) -> bool:
        """Read `watch`'s repository if this host holds its lock; whether its items are worked this
        cycle (not when this host reads it and could not: it waits for the next)."""
        if self.stopping():
            return False
        try:
            return not self._reads(watch.repo) or self._reader.read(watch, sessions, summary, cycle=self._cycles)
        except Exception as error:  # one repository's fault never stops the others
            summary.add(sources_failed=1)
            self._emit(Event.POLL_SOURCE_FAILED, error, repo=str(watch.repo))
            return False

    def _give_slots(self, workable: Sequence[Watch], sessions: Mapping[RepoRef, list[SessionRecord]]) -> None:
        """Once the repositories were read, across all of them: a free slot goes to the item waiting
        longest, whichever repository it is in."""
        repos = [watch.repo for watch in workable]
        records = {record.item: record for repo in repos for record in sessions.get(repo, ())}
        try:
            self._slots.give(read=[repo for repo in repos if repo in self._reading], worked=repos, records=records)
        except Exception as error:  # the items held are still worked; the others wait a cycle more
            for repo in repos:
                self._emit(Event.POLL_SOURCE_FAILED, error, repo=str(repo))

    def _poll(self, watch: Watch, sessions: list[SessionRecord], summary: CycleSummary) -> None:
        shared = self.cluster.shared_listing(watch.repo)
        held = self.leases.held()
        records = {record.item: record for record in sessions}
        self._depart([d for d in shared.departed if d.item in held], records, summary)
        since = watch_start(self.store, watch.repo)
        listed = [entry for entry in shared.listed if entry.item.ref in held]
        summary.add(items=len(listed))
        kept = set(self.store.inbox_items())
        with self._quiet_lock:
            was = self._quiet.get(watch.repo, {})
            quiet = {e.item.ref: was[e.item.ref] for e in listed if e.item.ref in was and e.item.ref not in kept}
            todo = [e for e in listed if quiet.get(e.item.ref) != _Quiet(e, records.get(e.item.ref), since)]
            for entry in todo:
                quiet.pop(entry.item.ref, None)
            self._quiet[watch.repo] = quiet
        self._work(watch.repo, todo, since, summary)

    def work_now(self, items: Collection[WorkItemRef]) -> None:
        """Work `items` on their lanes now, from the last listing: no GitHub read. When something of
        theirs changed beside the cycle (an agent's turn ended); counted in the cycle's summary. An
        item its lane works already is worked right after."""
        self._work_listed(set(items), self._tally if self._beside else CycleSummary(started_at=self.clock.now()))

    def aside(self, item: WorkItemRef, run: Callable[[], object]) -> None:
        """`run` on `item`'s lane when the item has no work in hand (then it is left for a later
        look): it never meets the item's own work. Waited for unless items are worked beside the
        cycle (the daemon)."""

        def once() -> None:
            run()

        self._lanes.submit_if_free(item, once)
        if not self._beside:
            self._lanes.drain()

    def aside_here(self, item: WorkItemRef, run: Callable[[], object]) -> bool:
        """`run` as `aside` runs it, but now, in this thread, and waited for even beside the cycle;
        whether it ran (not while the item has work in hand)."""
        return self._lanes.run_here(item, run)

    def _kept_first(self, summary: CycleSummary) -> None:
        """Comments already kept — a webhook's, pushed since the last cycle — go before this cycle's
        GitHub reads: their items were listed last cycle, so nothing waits for the reads of every
        repository before its own, or for a read that fails."""
        self._work_listed(set(self.store.inbox_items()), summary)

    def _work_listed(self, items: set[WorkItemRef], summary: CycleSummary) -> None:
        """Those of `items` the last listing has and this host holds, each worked from it."""
        if not items:
            return
        held = self.leases.held()
        for watch in [w for w in self._watches if any(ref.repo == w.repo for ref in items)]:
            listed = self.cluster.shared_listing(watch.repo).listed
            waiting = [entry for entry in listed if entry.item.ref in items and entry.item.ref in held]
            if waiting and not self.stopping():
                self._work(watch.repo, waiting, watch_start(self.store, watch.repo), summary)

    def _reads(self, repo: RepoRef) -> bool:
        """Whether this host reads `repo` (holds its lock); said once each time it starts to."""
        reads = self.cluster.poll_lock(repo)
        if reads and repo not in self._reading and self.cluster.shared:
            self.events.emit(Event.CLUSTER_READING, repo=str(repo), host=self.cluster.host)
        self._reading = self._reading | {repo} if reads else self._reading - {repo}
        return reads

    def _work(self, repo: RepoRef, listed: Sequence[Listed], since: datetime | None, summary: CycleSummary) -> None:
        """Work the given listed items, each on its lane, from what the inbox holds for it; those
        left with nothing to do are noted quiet, with what they were worked from."""

        def run(entry: Listed) -> float | None:
            quiet, due = one(entry)
            with self._quiet_lock:
                noted = self._quiet.setdefault(repo, {})
                if quiet is None:
                    noted.pop(entry.item.ref, None)
                else:
                    noted[entry.item.ref] = quiet
            return due

        def one(entry: Listed) -> tuple[_Quiet | None, float | None]:
            if self.stopping():
                return None, None
            item = entry.item
            armed = spawn_armed(item, mode=self.config.spawn_mode, label=entry.label).choice
            try:
                worked = self.worker.work(
                    item,
                    Listing(entry.label, armed, since, history=entry.history),
                    summary=summary,
                )
            except StaleWrite as conflict:
                # an operator's command (or another host, or the daemon's look for what agents ask) won:
                # stop here, re-read and re-decide — beside the cycle in a moment, else next cycle
                self._conflict(item.ref, conflict)
                return None, (self.clock.monotonic() + CONFLICT_RETRY_SECONDS) if self._beside else None
            except LeaseLost as lost:
                self._lease_lost(item.ref, lost)
            except Exception as error:  # one item's fault never stops the cycle
                summary.add(items_failed=1)
                self._emit(Event.POLL_ITEM_FAILED, error, work_item=str(item.ref))
            else:
                return (_Quiet(entry, worked.record, since) if worked.settled else None), worked.due
            return None, None

        for entry in listed:
            self._lanes.submit(entry.item.ref, lambda entry=entry: run(entry))  # type: ignore[misc]
        if not self._beside:
            self._lanes.drain()

    def _depart(
        self, departed: Sequence[Departed], records: Mapping[WorkItemRef, SessionRecord], summary: CycleSummary
    ) -> None:
        """Closed or merged upstream: close (and give up the lease); unlabelled: pause."""
        for gone in departed:
            record = records.get(gone.item)
            if record is None:
                continue
            try:
                if self.closer.departed(record, gone.state):
                    summary.add(closed=1)
                    self.cluster.release(gone.item)
            except StaleWrite as conflict:  # the record read at the cycle's start moved on
                self._conflict(record.item, conflict)
            except LeaseLost as lost:
                self._lease_lost(record.item, lost)

    def _emit(self, event: Event, error: Exception, **where: str) -> None:
        """A repository's or an item's unexpected fault, said with its cause."""
        self.events.emit(event, level=Level.ERROR, cause=f"{type(error).__name__}: {error}", **where)

    def _conflict(self, item: WorkItemRef, conflict: StaleWrite) -> None:
        self.events.emit(Event.POLL_ITEM_CONFLICT, level=Level.WARNING, work_item=str(item), cause=str(conflict))

    def _lease_lost(self, item: WorkItemRef, lost: LeaseLost) -> None:
        self.events.emit(Event.CLUSTER_LEASE_LOST, level=Level.WARNING, work_item=str(item), cause=str(lost))
