"""Ports: what the use cases need from the outside world, and how each can fail."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from domain.events import Event, Level
from domain.ledger import Ledger
from domain.model import (
    Comment,
    CommentBatch,
    ItemState,
    Reaction,
    SessionRecord,
    SessionState,
    SpawnRequest,
    WorkItem,
)
from domain.refs import RepoRef, TmuxTarget, WorkItemRef
from domain.workspace import Dirt, Found, SetupResult, WorkspaceSpec


class TmuxPort(Protocol):
    """tmux, addressed by exact target.

    Failure modes: `TmuxUnanswered` when tmux did not answer (timeout, OSError, no binary) —
    callers must never read that as 'absent'; `TmuxFailed` when tmux answered non-zero;
    `DuplicateSession` (a `TmuxFailed`) when `new-session` found the name held;
    `SessionMissing` when a delivery found the target absent or its pane dead.
    `session_state` never raises: silence is `UNKNOWN`. `spawn` creates a missing start directory
    (and parents) and raises `TmuxFailed` before tmux runs when the path is not a directory or cannot
    be created, or after it when tmux names no pane; `ValueError` for an empty argv or a prompt over
    one argument's size. `deliver` with a malformed `pane` is `SessionMissing`. `kill` of an absent
    session raises `TmuxFailed`; `terminate_harness` of an absent session does nothing.
    """

    def session_state(self, target: TmuxTarget) -> SessionState: ...

    def spawn(self, request: SpawnRequest) -> str:
        """Start `request.argv` detached under `request.target`; the prompt reaches the harness
        as its last argument without ever being on a tmux argv. Returns the harness's pane id."""

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, submit_delay_ms: int = 0, pane: str = ""
    ) -> None:
        """Paste `prompt` bracketed and submit it, atomically refusing a dead pane. With `pane`
        (the id `spawn` returned), only into that pane, and only while it belongs to `target`;
        a pane that is gone or belongs elsewhere is `SessionMissing`."""

    def kill(self, target: TmuxTarget) -> None: ...

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str = "") -> None:
        """SIGTERM the pane processes (with `pane`: that pane's only), SIGKILL after the grace
        period; the session stays."""

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        """Attach the calling terminal; returns tmux's exit status."""


class TrackerPort(Protocol):
    """The issue tracker (GitHub, or the sandbox).

    Failure modes: `TrackerError` naming the repository and the cause (missing binary, not
    authenticated, not found, 5xx, timeout, malformed reply); `RateLimited` with the time it
    may be asked again. A failed read changes nothing; a failed write is reported, never retried
    here.
    """

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        """The open issues and pull requests of `repo` carrying `label`."""

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        """Comments created since `cursor` (inclusive; de-duplicate by id), oldest first."""

    def item_state(self, item: WorkItemRef, label: str) -> ItemState: ...

    def react(self, comment: Comment, reaction: Reaction) -> None: ...

    def post_comment(self, item: WorkItemRef, body: str) -> None: ...

    def min_interval_seconds(self, repo: RepoRef) -> float:
        """The poll interval the tracker last asked for on `repo` (GitHub's
        `x-poll-interval`), or 0 when it asked for none. Never fails."""


class ClockPort(Protocol):
    """Wall time (UTC, aware) and waiting. Never fails."""

    def now(self) -> datetime: ...

    def sleep(self, seconds: float) -> None: ...


class EventSink(Protocol):
    """The append-only event log. Failure modes: `OSError` when the log cannot be written."""

    def emit(self, event: Event, *, level: Level = Level.INFO, source: str = "poller", **fields: Any) -> None: ...


class StateStore(Protocol):
    """The ledger, the session registry and the per-repository cursors.

    Failure modes: `StateError` naming the file when the store is unreadable, corrupt or of an
    unknown schema. Every write inside one `transaction()` lands together or not at all.
    """

    def transaction(self) -> AbstractContextManager[None]: ...

    def ledger(self, item: WorkItemRef) -> Ledger | None: ...

    def save_ledger(self, ledger: Ledger) -> None: ...

    def session(self, item: WorkItemRef) -> SessionRecord | None: ...

    def sessions(self) -> list[SessionRecord]: ...

    def save_session(self, record: SessionRecord) -> None: ...

    def forget(self, item: WorkItemRef) -> None:
        """Drop the item's session record and ledger."""

    def cursor(self, repo: RepoRef) -> str | None: ...

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None: ...

    def items(self) -> Iterator[WorkItemRef]: ...

    def meta(self) -> Mapping[str, str]: ...

    def save_meta(self, key: str, value: str) -> None: ...


class WorkspacePort(Protocol):
    """Git workspaces: one shared clone per repository, one worktree per work item on its own
    branch. Safe to use from several threads and processes at once (a lock per repository around
    clone, fetch, worktree add and removal).

    Failure modes: `WorkspaceError` carrying git's own message and naming the repository or folder
    — clone or fetch refused (authentication, missing repository or pull request), disk full, the
    branch name taken, git missing or not answering within its timeout. `create` that fails leaves
    no worktree, no administrative entry and no branch it made; nothing is ever ready before
    `mark_ready`, and `found` reads only that mark as ready. `found` and `size` never raise.
    """

    def found(self, spec: WorkspaceSpec) -> Found:
        """What is at `spec.path` now."""

    def create(self, spec: WorkspaceSpec) -> None:
        """Clone the repository (first time) or fetch it, then add the worktree at `spec.path` on
        a new branch `spec.branch` from `spec.start`. The folder must be missing or empty."""

    def run_setup(self, spec: WorkspaceSpec, command: str) -> SetupResult:
        """Run the operator's setup command (a shell line) in the worktree. A non-zero exit or a
        timeout is a result; `WorkspaceError` only when it could not be started."""

    def mark_ready(self, spec: WorkspaceSpec) -> None: ...

    def discard(self, spec: WorkspaceSpec) -> None:
        """Remove the worktree and its branch whatever they hold: only for one no harness ran in."""

    def inspect(self, spec: WorkspaceSpec) -> frozenset[Dirt]:
        """Why the worktree is not clean; empty when it is."""

    def remove(self, spec: WorkspaceSpec) -> int:
        """Remove a clean worktree and its branch; returns the bytes freed. git refuses one that
        changed since `inspect` (`WorkspaceError`), so nothing is lost to a race."""

    def size(self, spec: WorkspaceSpec) -> int:
        """Bytes the worktree's folder takes on disk; 0 when it is gone."""
