"""Sessions by hand: list them with their probed tmux state, attach, reset, close."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from app.usecases.closing import Closer
from domain.errors import LoopError
from domain.events import Event
from domain.model import SessionRecord, SessionState, SessionStatus
from domain.ports import EventSink, StateStore, TmuxPort
from domain.refs import TmuxTarget, WorkItemRef

OPERATOR = "operator"  # the `source` of events the operator's commands write, and the close reason


class UnknownWorkItem(LoopError):
    """The state store knows nothing of this work item (exit status 1)."""

    def __init__(self, item: WorkItemRef, *, what: str = "session record or ledger") -> None:
        super().__init__(f"unknown work item {item}: no {what} in the state store (see `the-loop sessions list`)")
        self.item = item


@dataclass(frozen=True, slots=True)
class AdminConfig:
    grace_seconds: float = 10.0  # SIGTERM, then SIGKILL, when a reset ends a harness
    keep_session_on_close: bool = True


@dataclass(frozen=True, slots=True)
class SessionView:
    """A session record and what tmux says about its target right now."""

    record: SessionRecord
    state: SessionState

    def as_json(self) -> dict[str, Any]:
        record = self.record
        return {
            "work_item": str(record.item),
            "harness": record.harness,
            "conversation_id": record.harness_session_id,
            "target": record.target.name,
            "pane": record.pane_id,
            "state": self.state.value,
            "status": record.status.value,
            "last_event": record.last_event,
            "updated_at": record.updated_at.isoformat() if record.updated_at else None,
            "cwd": record.cwd,
        }


@dataclass(frozen=True, slots=True)
class ResetPlan:
    """What resetting one work item does, decided from a probe before anything changes."""

    item: WorkItemRef
    target: TmuxTarget
    state: SessionState
    has_record: bool
    has_ledger: bool
    pane: str = ""  # the harness's own pane; "" (no record): every pane of the session

    @property
    def ends_harness(self) -> bool:
        # an unanswered probe may hide a live harness: try, and let tmux's answer decide
        return self.state in {SessionState.LIVE, SessionState.UNKNOWN}

    def describe(self, *, done: bool) -> str:
        end, forget = ("ended", "forgot") if done else ("end", "forget")
        where = f"{self.target.name} ({self.state.value})"
        harness = f"{end} the harness in {where}" if self.ends_harness else f"no live harness in {where}"
        kept = [name for name, has in (("session record", self.has_record), ("ledger", self.has_ledger)) if has]
        return f"{self.item}: {harness}; {forget} its {' and '.join(kept)}"


@dataclass(frozen=True, slots=True)
class Attachment:
    target: TmuxTarget
    read_only: bool
    forced: bool  # read-only because the session is closed, not because it was asked


class SessionsAdmin:
    def __init__(
        self, *, tmux: TmuxPort, store: StateStore, events: EventSink, closer: Closer, config: AdminConfig
    ) -> None:
        self._tmux = tmux
        self._store = store
        self._events = events
        self._closer = closer
        self._config = config

    def listing(self, status: SessionStatus | None = None) -> list[SessionView]:
        records = [r for r in self._store.sessions() if status is None or r.status is status]
        return [SessionView(record, self._tmux.session_state(record.target)) for record in records]

    def attachment(self, item: WorkItemRef, *, read_only: bool) -> Attachment:
        record = self._record(item)
        forced = record.status is SessionStatus.CLOSED and not read_only
        return Attachment(record.target, read_only=read_only or forced, forced=forced)

    def attach(self, attachment: Attachment) -> int:
        return self._tmux.attach(attachment.target, read_only=attachment.read_only)

    def plan_reset(self, items: Iterable[WorkItemRef] | None) -> list[ResetPlan]:
        """One plan per item (None: every item the store knows); `UnknownWorkItem` before any probe."""
        wanted = list(dict.fromkeys(self._store.items() if items is None else items))
        found = [(item, self._store.session(item), self._store.ledger(item) is not None) for item in wanted]
        for item, record, has_ledger in found:
            if record is None and not has_ledger:
                raise UnknownWorkItem(item)
        plans = []
        for item, record, has_ledger in found:
            # no record, yet a ledger: a first spawn refused by a live occupant of the item's name
            target, pane = (record.target, record.pane_id) if record else (item.target, "")
            state = self._tmux.session_state(target)
            plans.append(ResetPlan(item, target, state, record is not None, has_ledger, pane=pane))
        return plans

    def reset(self, plan: ResetPlan) -> None:
        """End the harness, then forget: a harness that could not be ended keeps its record."""
        if plan.ends_harness:
            self._tmux.terminate_harness(plan.target, grace_seconds=self._config.grace_seconds, pane=plan.pane)
        self._store.forget(plan.item)
        self._events.emit(
            Event.SESSION_RESET,
            source=OPERATOR,
            work_item=str(plan.item),
            target=plan.target.name,
            state_before=plan.state.value,
            harness_ended=plan.ends_harness,
            forgot_record=plan.has_record,
            forgot_ledger=plan.has_ledger,
        )

    def close(self, item: WorkItemRef, *, keep_tmux: bool | None) -> bool:
        """Close by hand; False when it was closed already and there is nothing left to do."""
        record = self._record(item)
        keep = self._config.keep_session_on_close if keep_tmux is None else keep_tmux
        if record.status is SessionStatus.CLOSED and keep:
            return False
        self._closer.close(record, reason=OPERATOR, keep_tmux=keep)
        return True

    def _record(self, item: WorkItemRef) -> SessionRecord:
        record = self._store.session(item)
        if record is None:
            raise UnknownWorkItem(item, what="session record")
        return record
