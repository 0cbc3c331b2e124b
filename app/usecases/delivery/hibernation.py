"""Hibernation: each agent of this host idle for `routing.hibernateAfterSeconds` is ended to free its
slot, its conversation kept for the next comment, which resumes it (`domain.hibernation` says
which). Looked at beside the cycle; each hibernation runs on its item's lane, so it never meets a
delivery to the same item, and is decided again there from what is stored then."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

from app.usecases.delivery.watch import HarnessWatch
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.errors import TmuxFailed, TmuxUnanswered
from domain.events import Event, Level
from domain.hibernation import Resting, hibernation
from domain.model import HarnessSpec, SessionRecord, SessionState, SessionStatus
from domain.policy import Decision
from domain.ports import TmuxPort
from domain.receipts import Receipt, harness_state
from domain.refs import WorkItemRef

OnLane = Callable[[WorkItemRef, Callable[[], object]], object]


@dataclass(frozen=True, slots=True)
class HibernateConfig:
    after_seconds: float | None = None  # None: off
    grace_seconds: float = 10.0  # the harness's own clean exit on SIGTERM, before SIGKILL
    host: str = ""  # cluster: this host's id; only the agents it runs are looked at ("": one host)


@dataclass(kw_only=True, eq=False)
class Hibernation(InUnitOfWork):
    uow: UnitOfWork
    tmux: TmuxPort
    watch: HarnessWatch
    harness: Callable[[str], HarnessSpec]
    config: HibernateConfig
    on_lane: OnLane = lambda item, run: run()  # the daemon's: the item's lane

    def sweep(self) -> None:
        """Each running agent of this host found due is hibernated on its item's lane."""
        if self.config.after_seconds is None:
            return
        for record in self.store.sessions():
            if self._candidate(record) and self._due(record).choice:
                self.on_lane(record.item, partial(self.hibernate, record.item))

    def relieve(self) -> WorkItemRef | None:
        """The host is short of memory: the agent of this host resting longest (whatever
        `routing.hibernateAfterSeconds` says) is hibernated on its item's lane; its item, or None
        when no agent may be (each one works, waits on a dialog, is watched or cannot resume)."""
        resting = []
        for record in self.store.sessions():
            if self._candidate(record) and self._due(record, after_seconds=0.0).choice:
                resting.append((self._since(record) or self.clock.now(), record.item))
        if not resting:
            return None
        _, item = min(resting)
        self.on_lane(item, partial(self.hibernate, item, after_seconds=0.0))
        return item

    def hibernate(self, item: WorkItemRef, *, after_seconds: float | None = None) -> bool:
        """End the item's agent if it is still due (idle `after_seconds`, else the setting's), as
        stored now; whether it was."""
        record = self.store.session(item)
        if record is None or not self._candidate(record):
            return False
        decision = self._due(record, after_seconds=after_seconds)
        if not decision.choice:
            return False
        probe = self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)
        if probe.harness is not SessionState.LIVE:
            return False  # dead or gone by itself: the respawn path's, not a hibernation
        since = self._since(record)
        self.events.emit(
            Event.SESSION_HIBERNATING, work_item=str(item), target=str(record.target), spawn_id=record.spawn_id
        )
        try:
            self.tmux.terminate_harness(
                record.target, grace_seconds=self.config.grace_seconds, pane=probe.pane, mark=record.spawn_id
            )
        except (TmuxFailed, TmuxUnanswered) as error:
            self.events.emit(
                Event.SESSION_HIBERNATED, level=Level.WARNING, work_item=str(item), ended=False, cause=str(error)
            )
            return False
        if record.harness_group:  # what outlived its pane (a child of the agent's) goes with it
            self.tmux.end_group(record.harness_group, grace_seconds=self.config.grace_seconds)
        now = self.clock.now()

        def mark(current: SessionRecord) -> SessionRecord:
            # written meanwhile (an operator's command): marked as it is now, unless a new spawn runs
            # or it was closed or paused (a close, not a hibernation, ended it)
            if current.spawn_id != record.spawn_id or current.hibernated_at is not None:
                return current
            if current.status is not SessionStatus.ACTIVE:
                return current
            changed = replace(current, hibernated_at=now, updated_at=now, last_event=Event.SESSION_HIBERNATED.value)
            return self.store.save_session(changed)

        self.uow.save(mark, read=lambda: self.store.session(item), value=record, tries=2)
        self.events.emit(
            Event.SESSION_HIBERNATED,
            work_item=str(item),
            target=str(record.target),
            harness=record.harness,
            harness_session_id=record.harness_session_id,
            spawn_id=record.spawn_id,
            idle_seconds=round((now - since).total_seconds()) if since else None,
            ended=True,
        )
        return True

    def _candidate(self, record: SessionRecord) -> bool:
        return (
            record.status is SessionStatus.ACTIVE
            and bool(record.spawn_id)
            and record.hibernated_at is None
            and record.host in {"", self.config.host}
        )

    def _due(self, record: SessionRecord, *, after_seconds: float | None = None) -> Decision[bool]:
        try:
            harness = self.harness(record.harness)
        except KeyError:
            return Decision(False, f"harness {record.harness!r} is configured no more")
        receipts = self.watch.receipts(record)
        ledger = self.store.ledger(record.item)
        waiting = ledger is not None and bool(ledger.pending or ledger.start or ledger.turns)
        agent = Resting(
            state=harness_state(receipts, now=self.clock.now(), taken=self.watch.taken(record, receipts)),
            since=self._since(record, receipts),
            clients=self.tmux.clients(record.target),
            can_resume=harness.can_resume,
            # a park that ended stays on the record, resumed (a failure right after doubles its wait)
            parked=record.park is not None and not record.park.resuming,
            waiting=waiting or bool(self.store.inbox(record.item)),
        )
        after = self.config.after_seconds if after_seconds is None else after_seconds
        return hibernation(agent, now=self.clock.now(), after_seconds=after)

    def _since(self, record: SessionRecord, receipts: list[Receipt] | None = None) -> datetime | None:
        """Its last receipt's time: when it last did or said anything."""
        said = receipts if receipts is not None else self.watch.receipts(record)
        times = [receipt.at for receipt in said if receipt.at is not None]
        return max(times) if times else None
