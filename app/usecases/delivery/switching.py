"""Giving an item another agent: `the-loop start codex` on a Claude Code item (or `sessions start
--harness`), done by the daemon on the item's own lane when it acts on the start."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.usecases.unit_of_work import InUnitOfWork, Lost, UnitOfWork
from domain.errors import LoopError
from domain.events import Event
from domain.model import SessionRecord, SessionState, SessionStatus
from domain.ports import TmuxPort


class NotEnded(LoopError):
    """The item's running harness could not be seen to end: nothing was recorded."""


@dataclass(kw_only=True, eq=False)
class HarnessSwitch(InUnitOfWork):
    tmux: TmuxPort
    uow: UnitOfWork
    known: tuple[str, ...]  # the harnesses a start may name: those the configuration routes to or defines
    grace_seconds: float = 10.0  # what the ended harness has to exit on SIGTERM
    new_id: Callable[[], str] = lambda: str(uuid.uuid4())

    def named(self, text: str) -> str | None:
        """The configured harness `text` names (any case), or None: the configured name is what is
        used from then on, never the text as written."""
        return next((name for name in self.known if name.casefold() == text.casefold()), None)

    def switch(self, record: SessionRecord, harness: str, *, permission_mode: str, by: str) -> SessionRecord:
        """End the item's harness (its own pane, by its mark) and, once tmux says it is gone, record
        `harness` for the item with a fresh conversation id and no spawn yet: its next start is a
        fresh one, never a resume of the other agent's conversation. Raises NotEnded (tmux did not
        answer, or the harness still runs): nothing is recorded then, and the start is tried again."""
        try:
            self.tmux.terminate_harness(
                record.target, grace_seconds=self.grace_seconds, pane=record.pane_id, mark=record.spawn_id
            )
        except LoopError as error:
            raise NotEnded(f"{record.harness} could not be ended: {error}") from None
        left = self.tmux.probe(record.target, mark=record.spawn_id, pane=record.pane_id).harness
        if left not in {SessionState.DEAD, SessionState.ABSENT}:
            raise NotEnded(f"{record.harness} was signalled to end, and its pane is {left.value}")
        now = self.clock.now()
        fresh = self.new_id()

        def switched(current: SessionRecord) -> SessionRecord:
            return self.store.save_session(
                replace(
                    current,
                    harness=harness,
                    harness_session_id=fresh,
                    permission_mode=permission_mode,
                    spawned_at=None,  # not started: no conversation to resume, and nothing runs of it
                    spawned_monotonic=None,
                    park=None,
                    rss_bytes=None,  # the ended agent's: the new harness's own is measured at its first turn's end
                    hibernated_at=None,  # the ended agent's rest: the new harness starts fresh, not as a wake
                    hibernating="",
                    blocked_notice="",
                    status=SessionStatus.ACTIVE,
                    closed_by=None,
                    updated_at=now,
                    last_event=Event.SESSION_HARNESS_CHANGED.value,
                )
            )

        # an operator's command may write the record meanwhile (it wakes the daemon): decided again
        saved = self.uow.save(
            switched, read=lambda: self.store.session(record.item), value=record, tries=3, lost=Lost.RAISE
        )
        if saved.value is None:
            raise NotEnded(f"{record.item}'s session record was forgotten meanwhile")
        self.events.emit(
            Event.SESSION_HARNESS_CHANGED,
            work_item=str(record.item),
            target=str(record.target),
            harness=harness,
            was=record.harness,
            by=by,
        )
        return saved.value
