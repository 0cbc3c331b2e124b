"""The dispatcher: deliver a prompt into a work item's session, spawning or respawning per §4."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from app.usecases.workspaces import Workspaces
from domain.errors import DuplicateSession, SessionMissing, TmuxFailed, TmuxUnanswered, WorkspaceError
from domain.events import Event, Level
from domain.model import (
    HarnessSpec,
    SessionRecord,
    SessionState,
    SessionStatus,
    SpawnRequest,
    WorkItem,
)
from domain.policy import (
    Clear,
    Outcome,
    Step,
    clear_decision,
    clear_verified,
    on_delivery_probe,
    on_respawn_probe,
    remedy,
    resume_survived,
)
from domain.ports import ClockPort, EventSink, StateStore, TmuxPort
from domain.refs import TmuxTarget

RECENT_DELIVERIES = 20


@dataclass(frozen=True, slots=True)
class DispatchConfig:
    harnesses: Mapping[str, HarnessSpec]
    default_harness: str
    workdir: str = "."
    remain_on_exit: bool = True
    resume_on_respawn: bool = True
    resume_probe_seconds: float = 3.0


@dataclass(frozen=True, slots=True)
class Dispatch:
    """One prompt to deliver: for the item, under a delivery id, with the prompt a fresh
    session would start with instead."""

    item: WorkItem
    prompt: str
    spawn_prompt: str
    delivery_id: str


@dataclass(frozen=True, slots=True)
class Result:
    outcome: Outcome
    reason: str
    record: SessionRecord | None = None


class Dispatcher:
    def __init__(
        self,
        *,
        tmux: TmuxPort,
        clock: ClockPort,
        events: EventSink,
        store: StateStore,
        config: DispatchConfig,
        new_session_id: Callable[[], str] = lambda: str(uuid.uuid4()),
        workspaces: Workspaces | None = None,
    ) -> None:
        self._workspaces = workspaces
        self._tmux = tmux
        self._store = store
        self._clock = clock
        self._events = events
        self._config = config
        self._new_id = new_session_id

    def dispatch(self, record: SessionRecord | None, job: Dispatch) -> Result:
        """Deliver into the recorded session, or take the respawn path when tmux says it is gone."""
        if record is None:
            return self.first_spawn(job)
        step = on_delivery_probe(self._tmux.session_state(record.target))
        if step.choice is Step.PASTE:
            try:
                return self._paste(record, job, Outcome.DELIVERED, step.reason)
            except SessionMissing:
                pass  # the atomic paste saw the pane dead or the session gone: respawn
            except (TmuxUnanswered, TmuxFailed) as error:
                return Result(Outcome.RETRY, f"delivery failed: {error}", record)
        return self._respawn(record, job)

    def first_spawn(self, job: Dispatch) -> Result:
        """A work item with no session record gets one; a live occupant is never touched."""
        harness = self._harness(self._config.default_harness)
        target = job.item.ref.target
        record = SessionRecord(
            item=job.item.ref,
            harness=harness.name,
            harness_session_id=self._new_id(),
            cwd=self._config.workdir.replace("{slug}", job.item.ref.slug),
            created_at=self._clock.now(),
        )
        holder = next((r.item for r in self._store.sessions() if r.target == target and r.item != record.item), None)
        if holder is not None:
            # two refs can sanitise to one name; the other item's session is never ours to take
            reason = f"{target} is recorded for another work item, {holder}"
            self._emit(
                Event.SESSION_SPAWN_FAILED,
                record,
                level=Level.ERROR,
                reason=reason,
                remedy=remedy(str(target), str(holder)),
            )
            return Result(Outcome.SPAWN_REFUSED, reason)
        state = self._tmux.session_state(target)
        return self._spawn(record, job, state=state, resume=False, first=True)

    def _respawn(self, record: SessionRecord, job: Dispatch) -> Result:
        state = self._tmux.session_state(record.target)
        step = on_respawn_probe(state)
        if step.choice is Step.DELIVER_INTO_OCCUPANT:
            return self._route_into_occupant(record, job, step.reason)
        harness = self._harness(record.harness)
        resume = harness.can_resume and self._config.resume_on_respawn
        if not resume:
            record = self._fresh_conversation(
                record, "harness has no resume" if not harness.can_resume else "resumeOnRespawn is off"
            )
        return self._spawn(record, job, state=state, resume=resume, first=False)

    def _spawn(self, record: SessionRecord, job: Dispatch, *, state: SessionState, resume: bool, first: bool) -> Result:
        """Clear the name, spawn; after `duplicate session` re-decide once from a fresh probe."""
        # workspace call site (issue 10): the folder is ready before any spawn (a ready one is reused
        # untouched); a failure is a failed attempt whose reason is git's (or the setup's) message
        try:
            if self._workspaces is not None:
                self._workspaces.prepare(job.item, record.cwd, first=first)
        except WorkspaceError as error:
            return self._spawn_failed(record, job, f"workspace failed: {error}", first=first)
        for tmux_proved_taken in (False, True):
            clear = clear_decision(state, tmux_proved_taken=tmux_proved_taken)
            if clear.choice is Clear.REFUSE_LIVE:
                return self._occupied_by_live(record, job, clear.reason, first=first)
            if clear.choice is Clear.KILL_THEN_VERIFY and not self._clear(record.target):
                self._emit(
                    Event.DISPATCH_DROPPED,
                    record,
                    level=Level.WARNING,
                    delivery_id=job.delivery_id,
                    reason="session-occupied",
                )
                return Result(
                    Outcome.SKIPPED_OCCUPIED,
                    "a dead session holds the name and could not be cleared",
                    None if first else record,
                )
            try:
                # recorded before tmux starts it: a crash right after the spawn leaves a session the
                # next comment is delivered into, not a live stranger that blocks every spawn
                self._store.save_session(record)
                pane = self._tmux.spawn(self._request(record, job, resume=resume))
            except DuplicateSession:
                state = self._tmux.session_state(record.target)
                continue
            except (TmuxFailed, TmuxUnanswered, ValueError) as error:
                return self._spawn_failed(record, job, f"spawn failed: {error}", first=first)
            return self._spawned(replace(record, pane_id=pane or ""), job, resume=resume, first=first)
        return self._spawn_failed(record, job, "duplicate session again after one re-decision", first=first)

    def _spawned(self, record: SessionRecord, job: Dispatch, *, resume: bool, first: bool) -> Result:
        if resume:
            self._clock.sleep(self._config.resume_probe_seconds)
            state = self._tmux.session_state(record.target)
            survived = resume_survived(state)
            if not survived.choice:
                fresh = self._fresh_conversation(record, survived.reason)
                return self._spawn(fresh, job, state=state, resume=False, first=False)
        record = self._touch(record, job, Event.SESSION_SPAWNED if first else Event.SESSION_RESPAWNED)
        self._emit(
            Event.SESSION_SPAWNED if first else Event.SESSION_RESPAWNED,
            record,
            harness=record.harness,
            harness_session_id=record.harness_session_id,
            resumed=resume,
            delivery_id=job.delivery_id,
        )
        return Result(Outcome.SPAWNED, "resumed the recorded conversation" if resume else "fresh session", record)

    def _fresh_conversation(self, record: SessionRecord, reason: str) -> SessionRecord:
        fresh = replace(record, harness_session_id=self._new_id())
        self._emit(
            Event.SESSION_RESUME_FAILED,
            record,
            level=Level.WARNING,
            reason=reason,
            old_session_id=record.harness_session_id,
            new_session_id=fresh.harness_session_id,
        )
        return fresh

    def _occupied_by_live(self, record: SessionRecord, job: Dispatch, reason: str, *, first: bool) -> Result:
        if first:
            message = remedy(str(record.target), str(record.item))
            self._emit(Event.SESSION_SPAWN_FAILED, record, level=Level.ERROR, reason=reason, remedy=message)
            return Result(Outcome.SPAWN_REFUSED, message)
        # an occupant tmux proved with `duplicate session` is not the pane we recorded: its own
        # active pane is the one to talk to
        return self._route_into_occupant(replace(record, pane_id=""), job, reason)

    def _route_into_occupant(self, record: SessionRecord, job: Dispatch, reason: str) -> Result:
        self._emit(Event.SESSION_RESPAWN_AVERTED, record, reason=reason, delivery_id=job.delivery_id)
        try:
            return self._paste(record, job, Outcome.ROUTED_INTO_OCCUPANT, reason)
        except (SessionMissing, TmuxUnanswered, TmuxFailed) as error:
            return Result(Outcome.RETRY, f"delivery into the occupant failed: {error}", record)

    def _spawn_failed(self, record: SessionRecord, job: Dispatch, reason: str, *, first: bool) -> Result:
        self._emit(Event.SESSION_SPAWN_FAILED, record, level=Level.ERROR, reason=reason, delivery_id=job.delivery_id)
        return Result(Outcome.RETRY, reason, None if first else record)

    def _clear(self, target: TmuxTarget) -> bool:
        try:
            self._tmux.kill(target)
            killed = True
        except (TmuxFailed, TmuxUnanswered):
            killed = False
        after = SessionState.ABSENT if killed else self._tmux.session_state(target)
        return clear_verified(kill_succeeded=killed, state_after=after).choice

    def _paste(self, record: SessionRecord, job: Dispatch, outcome: Outcome, reason: str) -> Result:
        harness = self._config.harnesses.get(record.harness)
        delay = harness.submit_delay_ms if harness else 0
        self._tmux.deliver(
            record.target, job.prompt, delivery_id=job.delivery_id, submit_delay_ms=delay, pane=record.pane_id
        )
        return Result(outcome, reason, self._touch(record, job, Event.DISPATCH_SUCCEEDED))

    def _request(self, record: SessionRecord, job: Dispatch, *, resume: bool) -> SpawnRequest:
        harness = self._harness(record.harness)
        return SpawnRequest(
            target=record.target,
            argv=harness.argv(record.harness_session_id, resume=resume),
            cwd=record.cwd,
            prompt=job.prompt if resume else job.spawn_prompt,
            remain_on_exit=self._config.remain_on_exit,
        )

    def _touch(self, record: SessionRecord, job: Dispatch, event: Event) -> SessionRecord:
        recent = (*record.recent_delivery_ids, job.delivery_id)[-RECENT_DELIVERIES:]
        return replace(
            record,
            status=SessionStatus.ACTIVE,
            recent_delivery_ids=recent,
            updated_at=self._clock.now(),
            last_event=event.value,
        )

    def _emit(self, event: Event, record: SessionRecord, *, level: Level = Level.INFO, **fields: Any) -> None:
        self._events.emit(event, level=level, work_item=str(record.item), target=str(record.target), **fields)

    def _harness(self, name: str) -> HarnessSpec:
        harness = self._config.harnesses.get(name) or self._config.harnesses.get(self._config.default_harness)
        if harness is None:
            raise KeyError(f"no harness named {name!r} and no default harness")
        return harness
