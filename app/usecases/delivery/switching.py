"""Giving an item another agent: `the-loop start codex` on a Claude Code item (or `sessions start --harness`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from domain.events import Event
from domain.model import SessionRecord, SessionState, SessionStatus
from domain.ports import TmuxPort


@dataclass(kw_only=True, eq=False)
class HarnessSwitch(InUnitOfWork):
    tmux: TmuxPort
    uow: UnitOfWork
    known: tuple[str, ...]  # the configured harnesses' names
    grace_seconds: float = 10.0  # what the ended harness has to exit on SIGTERM
    new_id: Callable[[], str] = lambda: str(uuid.uuid4())

    def named(self, text: str) -> str | None:
        """The configured harness `text` names (any case), or None: the configured name is what is
        used from then on, never the text as written."""
        return next((name for name in self.known if name.casefold() == text.casefold()), None)

    def switch(self, record: SessionRecord, harness: str, *, by: str) -> SessionRecord:
        """End the item's harness (its own pane, by its mark) and record `harness` for it, with a fresh
        conversation id and no spawn yet: its next start is a fresh one, never a resume of the
        other agent's conversation. Raises TmuxFailed / TmuxUnanswered when the harness could not be
        ended: nothing is recorded then."""
        if self.tmux.session_state(record.target) is SessionState.LIVE:
            self.tmux.terminate_harness(
                record.target, grace_seconds=self.grace_seconds, pane=record.pane_id, mark=record.spawn_id
            )
        switched = replace(
            record,
            harness=harness,
            harness_session_id=self.new_id(),
            permission_mode="",
            spawned_at=None,
            spawned_monotonic=None,
            park=None,
            blocked_notice="",
            status=SessionStatus.ACTIVE,
            closed_by=None,
            updated_at=self.clock.now(),
            last_event=Event.SESSION_HARNESS_CHANGED.value,
        )
        saved = self.store.save_session(switched)
        self.events.emit(
            Event.SESSION_HARNESS_CHANGED,
            work_item=str(record.item),
            target=str(record.target),
            harness=harness,
            was=record.harness,
            by=by,
        )
        return saved
