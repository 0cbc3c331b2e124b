"""The dispatcher: get a prompt into a work item's harness — paste it into the running harness, or
take the respawn path (README.md, "How it works") — and never into a pane not proven to be the harness's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from app.usecases.delivery.spawner import Dispatch, Result, Spawner
from app.usecases.delivery.watch import HarnessWatch, Verdict, Watched
from domain.errors import SessionMissing, TmuxFailed, TmuxUnanswered
from domain.events import Event, Level
from domain.model import HarnessSpec, Probe, SessionRecord, SessionState
from domain.policy import Decision, Outcome, Ready, Step, on_delivery_probe, on_respawn_probe, readiness
from domain.ports import EventSink, TmuxPort
from domain.refs import WorkItemRef

__all__ = ["Dispatch", "Dispatcher", "Result", "Spend"]

# a harness that cannot take the paste now, and the comment waits without an attempt
WAITS = {Ready.BLOCKED: Outcome.BLOCKED, Ready.LATER: Outcome.LATER}

Spend = Callable[[], None]  # counts the attempt: called once, right before the prompt goes anywhere
# whether a new agent may start on this host now for the item (its record as the start found it)
Admit = Callable[[WorkItemRef, SessionRecord | None], Decision[bool]]


@dataclass(frozen=True, slots=True)
class DispatchConfig:
    resume_on_respawn: bool = True
    host: str = ""  # cluster: this host's id ("": one host)


@dataclass(kw_only=True, eq=False)
class Dispatcher:
    tmux: TmuxPort
    events: EventSink
    watch: HarnessWatch
    spawner: Spawner
    config: DispatchConfig
    admit: Admit = lambda _item, _record: Decision(True, "no memory admission")

    def harness(self, name: str) -> HarnessSpec:
        return self.spawner.harness(name)

    def hung(self, record: SessionRecord) -> bool:
        """Its harness hung in its start: the next attempt ends it and starts it again."""
        return self.watch.hung(record, self.harness(record.harness))

    def starting(self, record: SessionRecord) -> bool:
        """Its harness has not said it is ready yet."""
        return self.watch.starting(record, self.harness(record.harness))

    def dispatch(self, record: SessionRecord | None, job: Dispatch, spend: Spend) -> Result:
        """Deliver into the recorded harness, or take the respawn path when tmux says it is gone."""
        if record is None:
            admitted = self.admit(job.item.ref, None)
            if not admitted.choice:
                return Result(Outcome.LATER, admitted.reason)
            return self.spawner.first_spawn(job, spend)
        probe = self._probe(record)
        step = on_delivery_probe(probe)
        if step.choice is not Step.PASTE:
            return self._respawn(record, job, spend)
        if probe.harness is SessionState.UNKNOWN:
            spend()  # tmux did not answer: try the recorded pane; a real failure is retried
            return self._paste(record, job, Outcome.PASTED, step.reason)
        return self._into_harness(record, probe, job, spend, step.reason)

    def _into_harness(
        self, record: SessionRecord, probe: Probe, job: Dispatch, spend: Spend, why: str, *, respawning: bool = False
    ) -> Result:
        """Paste only into a harness that said it is ready, never into one blocked on a dialog."""
        record = replace(record, pane_id=probe.pane or record.pane_id)
        if probe.pane and not record.harness_group:
            # found by its mark after a crash cut its spawn's record: its group, so it ends with its session
            group = self.tmux.harness_group(record.target, pane=probe.pane, mark=record.spawn_id)
            record = replace(record, harness_group=group)
        harness = self.harness(record.harness)
        ready = readiness(self.watch.state(record, harness, probe), paste_while_busy=harness.paste_while_busy)
        if ready.choice is Ready.WAIT:
            watched = self.watch.wait_ready(record, harness)
            if watched.verdict is Verdict.TIMEOUT and self.hung(record):
                return self._replace_hung(record, job, spend, watched)
            if watched.verdict is Verdict.TIMEOUT:
                spend()
                return Result(Outcome.RETRY, watched.reason, record, screen=watched.screen)
            ready = readiness(self.watch.state(record, harness), paste_while_busy=harness.paste_while_busy)
        if ready.choice in WAITS:
            return Result(WAITS[ready.choice], ready.reason, record)
        if ready.choice is Ready.GONE and respawning:
            spend()  # its pane still runs though it said it ended: it is exiting; the next try respawns
            return Result(Outcome.RETRY, f"{ready.reason}, its pane still running", record)
        if ready.choice is Ready.GONE:
            return self._respawn(record, job, spend)
        spend()
        return self._paste(record, job, Outcome.PASTED, why)

    def _replace_hung(self, record: SessionRecord, job: Dispatch, spend: Spend, watched: Watched) -> Result:
        """A harness that hung in its start (it never said it is ready) is ended — its pane is the
        harness's own, proven by its mark — and started again within this attempt; left in place,
        every comment on its item would fail against it. A start that said nothing at all has no
        conversation to resume."""
        reason = f"not ready {self.harness(record.harness).hung_seconds:g}s after its spawn"
        self._emit(
            Event.SESSION_NOT_READY,
            record,
            level=Level.WARNING,
            reason=f"{reason}: ended and started again",
            screen=watched.screen,
            spawn_id=record.spawn_id,
        )
        self.tmux.terminate_harness(record.target, grace_seconds=0, pane=record.pane_id, mark=record.spawn_id)
        said = self.watch.receipts(record)
        return self._respawn(record, job, spend, started=bool(said))

    def _respawn(self, record: SessionRecord, job: Dispatch, spend: Spend, *, started: bool = True) -> Result:
        """`started`: the conversation may have begun (a harness that said nothing at all, never)."""
        probe = self._probe(record)
        step = on_respawn_probe(probe)
        if step.choice is Step.DELIVER_INTO_HARNESS:
            self._emit(Event.SESSION_RESPAWN_AVERTED, record, reason=step.reason, delivery_id=job.delivery_id)
            return self._into_harness(record, probe, job, spend, step.reason, respawning=True)
        admitted = self.admit(record.item, record)  # a new agent starts here: its memory, read now
        if not admitted.choice:
            return Result(Outcome.LATER, admitted.reason, record)
        harness = self.harness(record.harness)
        # cluster: a conversation that ran on a host that lost the item has its transcript there
        elsewhere = record.host not in {"", self.config.host}
        # a conversation that never started (its spawn failed, or it hung before a word) has nothing to resume
        started = started and record.spawned_at is not None
        resume = harness.can_resume and self.config.resume_on_respawn and started
        if elsewhere or not resume:
            why = "no conversation started" if not started else "harness has no resume"
            why = why if harness.can_resume else "harness has no resume"
            if elsewhere:
                why = f"its conversation ran on host {record.host}, which no longer holds the item"
            record = self.spawner.fresh_conversation(record, why)
            resume = False
        spend()
        return self.spawner.respawn(record, job, probe, resume=resume)

    def _paste(self, record: SessionRecord, job: Dispatch, outcome: Outcome, why: str) -> Result:
        harness = self.harness(record.harness)
        try:
            self.tmux.deliver(
                record.target,
                job.prompt,
                delivery_id=job.delivery_id,
                pane=record.pane_id,
                mark=record.spawn_id,
                submit_delay_ms=harness.submit_delay_ms,
            )
        except (SessionMissing, TmuxUnanswered, TmuxFailed) as error:
            return Result(Outcome.RETRY, f"delivery failed: {error}", record)
        return Result(outcome, why, record)

    def _probe(self, record: SessionRecord) -> Probe:
        return self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id)

    def _emit(self, event: Event, record: SessionRecord, *, level: Level = Level.INFO, **fields: Any) -> None:
        self.events.emit(event, level=level, work_item=str(record.item), target=str(record.target), **fields)
