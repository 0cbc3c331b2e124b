"""Hibernation: each agent of this host idle for `routing.hibernateAfterSeconds` is ended to free its
slot, its conversation kept for the next comment, which resumes it (`domain.hibernation` says
which). Looked at beside the cycle; each hibernation runs on its item's lane, so it never meets a
delivery to the same item, and is decided again there from what is stored then."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
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
OnLaneHere = Callable[[WorkItemRef, Callable[[], object]], bool]  # waited for; whether it ran


def _here(_item: WorkItemRef, run: Callable[[], object]) -> bool:
    run()
    return True


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
    on_lane_here: OnLaneHere = _here  # the daemon's: the item's lane, taken in the caller's thread

    def sweep(self) -> None:
        """Hibernations a crash cut short are finished; then each running agent of this host found
        due is hibernated, on its item's lane."""
        self.recover()
        if self.config.after_seconds is None:
            return
        for record in self.store.sessions():
            if self._candidate(record) and self._due(record).choice:
                self.on_lane(record.item, partial(self.hibernate, record.item))

    def recover(self) -> None:
        """Each agent of this host marked as being ended to hibernate, its hibernation not recorded (the
        daemon died between its SIGTERM and the record), is looked at again on its item's lane."""
        for record in self.store.sessions():
            if record.hibernation_begun and self._here(record) and record.status is SessionStatus.ACTIVE:
                self.on_lane(record.item, partial(self._recovered, record.item))

    def relieve(self) -> WorkItemRef | None:
        """The host is short of memory: the agent of this host resting longest (whatever
        `routing.hibernateAfterSeconds` says) is hibernated on its item's lane; its item, or None
        when no agent may be (each one works, waits on a dialog, is watched or cannot resume)."""
        item = self._resting_longest()
        if item is not None:
            self.on_lane(item, partial(self.hibernate, item, after_seconds=0.0))
        return item

    def relieve_now(self) -> WorkItemRef | None:
        """As `relieve`, waited for: a new agent about to start here wants the memory now. Its item
        once that agent was ended; None when none could be, or its item's lane had work in hand."""
        item = self._resting_longest()
        ended: list[bool] = []
        if item is not None:
            self.on_lane_here(item, lambda: ended.append(self.hibernate(item, after_seconds=0.0)))
        return item if any(ended) else None

    def _resting_longest(self) -> WorkItemRef | None:
        resting = []
        for record in self.store.sessions():
            if self._candidate(record) and self._due(record, after_seconds=0.0).choice:
                resting.append((self._since(record) or self.clock.now(), record.item))
        return min(resting)[1] if resting else None

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
        marked = self._mark(record, hibernating=record.spawn_id)
        if marked is None:
            return False  # written meanwhile (a close, a new spawn): not this hibernation's any more
        try:
            self.tmux.terminate_harness(
                record.target, grace_seconds=self.config.grace_seconds, pane=probe.pane, mark=record.spawn_id
            )
        except (TmuxFailed, TmuxUnanswered) as error:
            self._mark(marked, hibernating="")  # it may still run: a death of its own later is no hibernation
            self.events.emit(
                Event.SESSION_HIBERNATED, level=Level.WARNING, work_item=str(item), ended=False, cause=str(error)
            )
            return False
        self._ended(marked, since=since)
        return True

    def _recovered(self, item: WorkItemRef) -> None:
        """A hibernation a crash cut short: an agent that ended is hibernated now; one that runs was
        never sent its SIGTERM (its mark goes: it is awake, and looked at again when idle)."""
        record = self.store.session(item)
        if record is None or not record.hibernation_begun or record.status is not SessionStatus.ACTIVE:
            return
        probe = self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)
        if probe.harness is SessionState.UNKNOWN:
            return  # tmux did not answer: the next look
        if probe.harness is SessionState.LIVE:
            self._mark(record, hibernating="")
            return
        self._ended(record, since=self._since(record), cut_short=True)

    def _ended(self, record: SessionRecord, *, since: datetime | None, cut_short: bool = False) -> None:
        """Its agent ended: what is left of it goes, and the item is recorded hibernated."""
        item = record.item
        if record.harness_group:  # what outlived its pane (a child of the agent's) goes with it
            self.tmux.end_group(record.harness_group, grace_seconds=self.config.grace_seconds)
        # its dead pane holds nothing (its conversation is the harness's, on disk): the pane goes, and
        # the session with it unless an operator's window still runs there
        with suppress(TmuxFailed, TmuxUnanswered):  # left for the wake's spawn to clear
            self.tmux.clear_dead(record.target)
        now = self.clock.now()

        def mark(current: SessionRecord) -> SessionRecord:
            if not _still_ending(current, record.spawn_id):
                return current
            changed = replace(
                current, hibernated_at=now, hibernating="", updated_at=now, last_event=Event.SESSION_HIBERNATED.value
            )
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
            cut_short=cut_short,
        )

    def _mark(self, record: SessionRecord, *, hibernating: str) -> SessionRecord | None:
        """The record with `hibernating` saved on what is stored now; None when its agent is not the
        one being ended any more."""

        def marked(current: SessionRecord) -> SessionRecord:
            ending = _still_ending(current, record.spawn_id)
            return self.store.save_session(replace(current, hibernating=hibernating)) if ending else current

        saved = self.uow.save(marked, read=lambda: self.store.session(record.item), value=record, tries=2)
        return saved.value if saved.value is not None and _still_ending(saved.value, record.spawn_id) else None

    def _candidate(self, record: SessionRecord) -> bool:
        return (
            record.status is SessionStatus.ACTIVE
            and bool(record.spawn_id)
            and record.hibernated_at is None
            and self._here(record)
        )

    def _here(self, record: SessionRecord) -> bool:
        return record.host in {"", self.config.host}

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


def _still_ending(current: SessionRecord, spawn_id: str) -> bool:
    """Whether a record as stored now is still that of the agent being ended: written meanwhile (an
    operator's command), it is marked as it is now, unless a new spawn runs or it was closed or
    paused (a close, not a hibernation, ended it)."""
    return current.spawn_id == spawn_id and current.hibernated_at is None and current.status is SessionStatus.ACTIVE
