"""Workspaces: an item's worktree made before its spawn, reused after, removed only when clean."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import Any, NoReturn

from domain.errors import WorkspaceError
from domain.events import Event, Level
from domain.model import SessionRecord, SessionStatus, WorkItem
from domain.policy import Decision
from domain.ports import ClockPort, EventSink, StateStore, TmuxPort, WorkspacePort
from domain.refs import Naming
from domain.workspace import Found, Prepare, Pruned, WorkspaceMode, WorkspaceSpec, prepare_decision, removal_decision

OPERATOR = "operator"  # the `source` of what `sessions prune` logs


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    mode: WorkspaceMode = WorkspaceMode.NONE
    setup: str = ""  # a shell line run once in each new worktree; empty: none
    remove_on_close: bool = False


class Workspaces:
    def __init__(
        self,
        *,
        port: WorkspacePort,
        tmux: TmuxPort,
        store: StateStore,
        events: EventSink,
        clock: ClockPort,
        config: WorkspaceConfig,
    ) -> None:
        self._port = port
        self._tmux = tmux
        self._store = store
        self._events = events
        self._clock = clock
        self._config = config

    def prepare(self, item: WorkItem, folder: str, *, first: bool, naming: Naming = Naming.INJECTIVE) -> str:
        """The folder a spawn of `item` starts in, ready. Mode `none`: `folder` as it is (the
        spawn creates it). `WorkspaceError` (already in the event log) when it cannot be made."""
        if self._config.mode is WorkspaceMode.NONE:
            return folder
        spec = WorkspaceSpec.for_item(item, folder, naming)
        decision = prepare_decision(self._port.found(spec), first=first)
        if decision.choice is Prepare.REFUSE:
            self._failed(spec, f"{folder} {decision.reason}")
        if decision.choice in {Prepare.CREATE, Prepare.REMAKE}:
            self._make(spec, remake=decision.choice is Prepare.REMAKE)
        return folder

    def _make(self, spec: WorkspaceSpec, *, remake: bool) -> None:
        started = self._clock.now()
        try:
            if remake:
                self._port.discard(spec)
            self._port.create(spec)
            self._setup(spec)
            self._port.mark_ready(spec)  # last: until here a later attempt sees it unfinished
        except WorkspaceError as error:
            self._failed(spec, str(error))
        seconds = (self._clock.now() - started).total_seconds()
        self._emit(Event.WORKSPACE_READY, spec, branch=spec.branch, start=spec.start, seconds=round(seconds, 3))

    def _setup(self, spec: WorkspaceSpec) -> None:
        if not self._config.setup:
            return
        result = self._port.run_setup(spec, self._config.setup)
        self._emit(
            Event.WORKSPACE_SETUP_RAN,
            spec,
            level=Level.INFO if result.ok else Level.WARNING,
            exit_status=result.exit_status,
            timed_out=result.timed_out,
            output_tail=result.output_tail,
        )
        if not result.ok:
            with suppress(WorkspaceError):  # left unfinished, the next attempt discards it anyway
                self._port.discard(spec)  # never left to look ready: the next attempt starts afresh
            raise WorkspaceError(f"{result.describe(self._config.setup)} in {spec.path}")

    def _failed(self, spec: WorkspaceSpec, cause: str) -> NoReturn:
        self._emit(Event.WORKSPACE_FAILED, spec, level=Level.ERROR, cause=cause)
        raise WorkspaceError(cause)

    def closed(self, record: SessionRecord) -> None:
        """After a close: with `removeOnClose`, the item's worktree goes if it is clean."""
        if self._config.mode is WorkspaceMode.NONE or not self._config.remove_on_close:
            return
        self._release(record, dry_run=False, by="close")

    def prune(self, *, dry_run: bool) -> list[Pruned]:
        """Every closed session's worktree, removed when clean, else kept with the reason. Only
        closed ones: an active or paused item may get a comment any moment, and an item with no
        record may be in the middle of its first spawn."""
        closed = [r for r in self._store.sessions() if r.status is SessionStatus.CLOSED]
        return [pruned for r in closed if (pruned := self._release(r, dry_run=dry_run, by="prune")) is not None]

    def _release(self, record: SessionRecord, *, dry_run: bool, by: str) -> Pruned | None:
        spec = WorkspaceSpec(record.item, record.cwd, naming=record.naming)
        if self._port.found(spec) not in {Found.READY, Found.UNFINISHED}:
            return None  # nothing there, or not ours
        source, size = (OPERATOR if by == "prune" else "poller"), 0
        try:
            decision = self._judge(record, spec)
            if decision.choice:
                size = self._port.size(spec) if dry_run else self._port.remove(spec)
        except WorkspaceError as error:
            decision = Decision(False, f"not removed: {error}")
        if not decision.choice:
            if not dry_run:
                self._emit(Event.WORKSPACE_KEPT, spec, source=source, by=by, reason=decision.reason)
            return Pruned(spec.item, spec.path, removed=False, reason=decision.reason)
        if not dry_run:
            self._emit(Event.WORKSPACE_REMOVED, spec, source=source, by=by, bytes_freed=size)
        return Pruned(spec.item, spec.path, removed=True, reason=decision.reason, bytes=size)

    def _judge(self, record: SessionRecord, spec: WorkspaceSpec) -> Decision[bool]:
        decision = removal_decision(self._port.inspect(spec), self._tmux.session_state(record.target))
        now = self._store.session(record.item)
        if decision.choice and (now is None or now.status is not SessionStatus.CLOSED):
            return Decision(False, "its session is no longer closed")  # reopened or reset while we looked
        return decision

    def _emit(self, event: Event, spec: WorkspaceSpec, *, level: Level = Level.INFO, **fields: Any) -> None:
        self._events.emit(event, level=level, work_item=str(spec.item), path=spec.path, **fields)
