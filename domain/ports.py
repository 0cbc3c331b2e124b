"""Ports: what the use cases need from the outside world, and how each can fail."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from domain.events import Event, Level
from domain.receipts import EndedTurn, Receipt, ReceiptMode

if TYPE_CHECKING:  # annotations only: importing the ports costs a command's start no more
    from domain.asks import AnswerState
    from domain.authorize import Permission
    from domain.budget import RateBudget
    from domain.cluster import Departed, Held, HostView, Lease, Listed, Placement, Shared
    from domain.installations import InstallationChange, Installations
    from domain.ledger import Ledger
    from domain.model import (
        Arming,
        Comment,
        CommentBatch,
        CommentKind,
        ItemState,
        Probe,
        PullHead,
        Reaction,
        ReceiptChannel,
        SessionRecord,
        SessionState,
        SpawnRequest,
        WorkItem,
    )
    from domain.refs import RepoRef, TmuxTarget, WorkItemRef
    from domain.spending import Spent, TurnCost
    from domain.usage import Usage
    from domain.vouching import Checkout
    from domain.webhook import InboxEntry
    from domain.workspace import Dirt, Found, Ignored, Occupants, SetupResult, WorkspaceSpec


class TmuxPort(Protocol):
    """tmux, addressed by exact target; the harness's own pane is proven by a mark set at spawn.

    Failure modes: `TmuxUnanswered` when tmux did not answer (timeout, OSError, no binary) —
    callers must never read that as 'absent'; `TmuxFailed` when tmux answered non-zero;
    `DuplicateSession` (a `TmuxFailed`) when `new-session` found the name held;
    `SessionMissing` when a delivery found its pane dead, gone, moved or not the harness's.
    `session_state` and `probe` never raise: silence is `UNKNOWN`. `spawn` creates a missing start
    directory (and parents) and raises `TmuxFailed` before tmux runs when the path is not a
    directory or cannot be created, or after it when tmux names no pane; `ValueError` for an empty
    argv, a malformed mark or a prompt over one argument's size. `kill` of an absent session raises
    `TmuxFailed`; `clear_dead` and `terminate_harness` of an absent session do nothing. `screen`
    never raises (silence is an empty screen).
    """

    def session_state(self, target: TmuxTarget) -> SessionState:
        """The whole session: LIVE while any pane runs."""

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        """One look at the session and at the pane carrying `mark` (with no mark: the recorded
        `pane`, a record from before marks)."""

    def spawn(self, request: SpawnRequest) -> str:
        """Start `request.argv` detached under `request.target` (or, with `request.window`, in a new
        window of that existing session), marking its pane with `request.mark` in the same tmux
        invocation; the prompt reaches the harness as its last argument without ever being on a tmux
        argv. Returns the harness's pane id."""

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        """Paste `prompt` bracketed and submit it into `pane`, atomically refusing (SessionMissing) a
        pane that is dead, not `target`'s or not carrying `mark`: nothing else is ever typed into."""

    def clear_dead(self, target: TmuxTarget) -> None:
        """Kill every dead pane of `target`, each only while it is still dead (checked in the same
        tmux command): a live pane is never touched. A session goes with its last pane."""

    def kill(self, target: TmuxTarget) -> None: ...

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str, mark: str) -> None:
        """SIGTERM the harness pane's process group, SIGKILL after the grace period; the session and
        every other pane stay."""

    def submit(self, target: TmuxTarget, *, pane: str, mark: str) -> None:
        """One carriage return into the harness pane (no text), guarded as a delivery is; raises
        `SessionMissing` when the pane is dead, gone or not the harness's."""

    def harness_group(self, target: TmuxTarget, *, pane: str, mark: str) -> str:
        """The process group the live harness pane's process leads, as `end_group` takes it ("":
        none, or tmux did not answer). Never raises."""

    def group_memory(self, group: str) -> int | None:
        """The resident memory of the process group `harness_group` named (what is left of it), in
        bytes; None when it is gone or cannot be read."""

    def end_group(self, group: str, *, grace_seconds: float) -> bool:
        """SIGTERM, then SIGKILL after the grace period, whatever is left of a group
        `harness_group` named (a harness that outlived its pane, as Gemini CLI can); whether anything
        was left. A group whose number another process holds now is never signalled. Never raises."""

    def screen(self, target: TmuxTarget, pane: str, *, lines: int = 20) -> str:
        """The last `lines` of what `pane` shows (for an event when a harness never got ready)."""

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        """Attach the calling terminal; returns tmux's exit status."""

    def clients(self, target: TmuxTarget) -> int | None:
        """How many clients are attached to the session (an operator's terminal, a control-mode
        client): 0 when it is gone; None when tmux did not answer."""


class ReceiptPort(Protocol):
    """Receipts harnesses write about one spawn of a work item's session: one file per receipt in
    a folder of the spawn's own under the state root, written whole (temp file, then rename).

    Failure modes: `prepare` raises `OSError` when the folder or the hooks file cannot be written.
    A request's hook waits beside its receipt for an answer (`give`); `answer_state` says
    whether it took it.
    `read` and `find` never raise: a missing folder has no receipts, an unreadable or malformed
    file is skipped. `forget` ignores what is already gone.
    """

    def prepare(self, item: WorkItemRef, spawn: str, *, mode: ReceiptMode, hooks: str = "") -> ReceiptChannel:
        """Make the spawn's folder (and, for Claude Code, the settings file carrying the hooks)."""

    def read(self, item: WorkItemRef, spawn: str) -> list[Receipt]:
        """The spawn's receipts, in the order they were written."""

    def find(self, item: WorkItemRef, line: str) -> bool:
        """Some prompt receipt of any spawn of `item` holds `line` (a delivery's receipt line)."""

    def forget(self, item: WorkItemRef, *, keep: Collection[str] = ()) -> None:
        """Remove the item's spawn folders but those named in `keep`."""

    def give(self, item: WorkItemRef, spawn: str, key: str, output: str) -> None:
        """Hand the hook that wrote receipt `key` (a request it waits on) `output`, its whole answer
        to the harness, written whole. `OSError` when it cannot be written."""

    def answer_state(self, item: WorkItemRef, spawn: str, key: str) -> AnswerState:
        """Where the answer to the request `key` stands: none, given, taken by the hook, or the
        hook's wait over (expired)."""

    def withdraw(self, item: WorkItemRef, spawn: str, key: str) -> bool:
        """Take back an answer the hook has not taken; False when it was taken meanwhile."""


class UsagePort(Protocol):
    """What one turn of an agent cost in tokens, from the agent's own records of its conversation
    (its transcript), read the way its harness package knows them.

    Failure modes: never raises for what it reads: a harness with no reader, a record that cannot
    be read, a turn not written whole yet (after a short wait for it) or a shape the reader does not
    know is `UsageUnknown`, with the reason. A number is the whole turn's, never a part of it.
    """

    def turn_usage(self, harness: str, turn: EndedTurn) -> Usage:
        """The turn a delivered prompt started, as its receipts name it (the `turn` and `transcript`
        its end's hook gave), of an item whose record runs the configured harness `harness`."""


class TrustPort(Protocol):
    """A harness's user configuration: which folders are trusted (no trust dialog at start).

    Failure modes: `TrustError` naming the file when it cannot be read, parsed or written; the file
    is then left exactly as it was.
    """

    def trust(self, directory: str, *, hooks: str = "") -> bool:
        """Record `directory` (absolute) as trusted in the user configuration of the harness
        `kind` names (Codex's for `CODEX`, else Claude Code's); True when it was not recorded before."""


class TrackerPort(Protocol):
    """The issue tracker (GitHub, or the sandbox).

    Failure modes: `TrackerError` naming the repository and the cause (missing binary, not
    authenticated, not found, 5xx, timeout, malformed reply); `RateLimited` with the time it
    may be asked again. A failed read changes nothing; a failed write is reported, never retried
    here. Times (`created_at`, `armed_at`, `started_at`) are the tracker's own clock.
    """

    def work_items(self, repo: RepoRef, label: str) -> list[WorkItem]:
        """The open issues and pull requests of `repo` carrying `label`."""

    def new_comments(self, repo: RepoRef, cursor: str | None) -> CommentBatch:
        """Comments created since `cursor` (inclusive; de-duplicate by id), oldest first. With no
        cursor the streams start now: no comments, and `started_at` says when."""

    def arming(self, item: WorkItem, label: str) -> Arming:
        """When `item` was armed by `label` (its latest `labeled` event; its creation when there is
        none) and its comments, issue and review, created at or after then, oldest first."""

    def comment(self, item: WorkItemRef, comment_id: str, kind: CommentKind) -> Comment | None:
        """The comment as it is now, or None when it is gone (deleted, or not `item`'s comment of
        that kind). One request."""

    def item_state(self, item: WorkItemRef, label: str) -> ItemState: ...

    def pull_head(self, item: WorkItemRef) -> PullHead:
        """Where pull request `item`'s head is now: its repository, commit, and whether that is a
        fork (another repository than `item`'s, or a deleted one). One request; `TrackerError`
        also when `item` is not a pull request."""

    def permission(self, repo: RepoRef, login: str) -> Permission:
        """`login`'s role on `repo` (GitHub's collaborator permission: its `role_name`, else its
        `permission`); `Permission.NONE` for one who is not a collaborator (GitHub's 404). One request.
        `TrackerError` when it cannot be read — the token may not see it (403), or any failure above."""

    def react(self, comment: Comment, reaction: Reaction) -> None: ...

    def post_comment(self, item: WorkItemRef, body: str) -> str:
        """Post `body` on `item`; the id of the comment it created."""

    def edit_posted(self, item: WorkItemRef, comment_id: str, body: str) -> None:
        """`body` becomes the text of `item`'s comment `comment_id`, one `post_comment` created (a
        notice brought up to date). The comment keeps its id and its place: it is not new again."""

    def min_interval_seconds(self, repo: RepoRef) -> float:
        """The poll interval the tracker last asked for on `repo` (GitHub's
        `x-poll-interval`), or 0 when it asked for none. Never fails."""

    def budget(self, repo: RepoRef) -> RateBudget | None:
        """The request budget `repo`'s host stated in its last reply (a 304's included), or None
        when no reply said one. Asks nothing; never fails."""


class ClockPort(Protocol):
    """Wall time (UTC, aware), a clock that never jumps, and waiting. Never fails.

    `now()` is what a person reads and what is written down; it may jump either way (NTP
    stepping it, an operator setting it). Durations and deadlines — how long a harness has had
    to get ready or to confirm, how long to back off — are measured on `monotonic()`.
    """

    def now(self) -> datetime: ...

    def monotonic(self) -> float:
        """Seconds since boot, counted the same by every process and never set back: only
        differences mean anything, and only within one boot."""

    def sleep(self, seconds: float) -> None: ...


class InstallationsPort(Protocol):
    """The GitHub App's installations as this process knows them, and the tokens it holds for them.

    Failure modes: none — both only read and change what is held in memory; a token dropped is
    asked for again by its next call, a repository forgotten is looked up again by its next call."""

    def known(self) -> Installations:
        """Which installation serves each repository, as known now."""

    def changed(self, change: InstallationChange) -> bool:
        """Take in what GitHub said changed; whether a token held for the installation was dropped."""


class EventSink(Protocol):
    """The append-only event log. Failure modes: `OSError` when the log cannot be written."""

    def emit(self, event: Event, *, level: Level = Level.INFO, source: str = "poller", **fields: Any) -> None: ...


class StateStore(Protocol):
    """The ledger, the session registry and the per-repository cursors.

    Failure modes: `StateError` naming the file when the store is unreadable, corrupt or of an
    unknown schema. Every write inside one `transaction()` lands together or not at all.
    Ledgers and session records are versioned: a save writes only if the stored row is still at
    the version the value was read at (no row: version 0), else raises `StaleWrite` (a
    `StateError`) naming the item and both versions, writing nothing; inside a `transaction()`
    it undoes the whole transaction unless caught inside it.
    """

    def transaction(self) -> AbstractContextManager[None]: ...

    def ledger(self, item: WorkItemRef) -> Ledger | None: ...

    def save_ledger(self, ledger: Ledger) -> Ledger:
        """Compare-and-set on `ledger.version`; returns the ledger at its new version (one more)."""

    def session(self, item: WorkItemRef) -> SessionRecord | None: ...

    def sessions(self) -> list[SessionRecord]: ...

    def save_session(self, record: SessionRecord) -> SessionRecord:
        """Compare-and-set on `record.version`; returns the record at its new version (one more)."""

    def drop_session(self, record: SessionRecord) -> None:
        """Remove the item's session record only, and only while it is at `record.version`
        (else `StaleWrite`); its ledger stays."""

    def forget(self, item: WorkItemRef) -> None:
        """Drop the item's session record and ledger, whatever their versions (the operator's)."""

    def cursor(self, repo: RepoRef) -> str | None: ...

    def save_cursor(self, repo: RepoRef, cursor: str | None) -> None: ...

    def inbox_add(self, comments: Iterable[Comment]) -> None:
        """Keep comments for their items until a worker takes them (a comment already kept is
        kept once): what a repository read or a webhook delivery found, safe across a crash."""

    def inbox(self, item: WorkItemRef) -> list[Comment]:
        """The comments kept for `item`, oldest first."""

    def inbox_remove(self, item: WorkItemRef, comment_ids: Iterable[str]) -> None: ...

    def inbox_items(self) -> list[WorkItemRef]:
        """Every item with comments kept."""

    def inbox_index(self) -> list[InboxEntry]:
        """Every comment kept, without its text: its item, id, time and the bytes kept for it."""

    def items(self) -> Iterator[WorkItemRef]: ...

    def meta(self) -> Mapping[str, str]: ...

    def save_meta(self, key: str, value: str) -> None: ...

    def record_cost(self, cost: TurnCost) -> bool:
        """Keep what one turn cost, once: False (nothing written) when its item's comment has a cost
        already (another host, or a second read, recorded it)."""

    def costs(self, *, since: datetime | None = None, item: WorkItemRef | None = None) -> list[TurnCost]:
        """The turns' costs ended at `since` or later (all: None), of `item` only when given, oldest first."""

    def spent(
        self,
        *,
        since: datetime | None = None,
        item: WorkItemRef | None = None,
        repo: str | None = None,
        label: str | None = None,
        author: str | None = None,
    ) -> dict[str, Spent]:
        """What the turns ended at `since` or later cost, by repository (`owner/name`): only those of
        `item`, of repository `repo`, carrying `label`, or started by `author`'s comments (each
        case-insensitive), when given."""

    def mark_once(self, mark: str, at: datetime, *, forget_before: datetime | None = None) -> bool:
        """Set `mark` if it is not set: True the first time, on every host sharing the store. Marks set
        before `forget_before` are dropped first (their period is long over: the store stays bounded)."""


class WorkspacePort(Protocol):
    """Git workspaces: one shared clone per repository, one worktree per work item on its own
    branch. Safe to use from several threads and processes at once (a lock per repository around
    clone, fetch, worktree add and removal).

    Failure modes: `WorkspaceError` carrying git's own message and naming the repository or folder
    — clone or fetch refused (authentication, missing repository or pull request), disk full, the
    branch name taken, git missing or not answering within its timeout. `create` that fails leaves
    no worktree, no administrative entry and no branch it made; nothing is ever ready before
    `mark_ready`, and `found` reads only that mark as ready. `found`, `checkout`, `size`,
    `ignored` and `occupants` never raise.
    """

    def lock(self, repo: RepoRef) -> AbstractContextManager[None]:
        """Hold the repository's lock, the one taken around clone, fetch, worktree add and removal,
        against every thread and process; taken again by the same thread it is already held.
        `WorkspaceError` when another holder keeps it past the timeout."""

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
        """Remove the worktree and its branch whatever they hold: only for one no harness ran in,
        or one `discard_decision` found nothing in to lose."""

    def checkout(self, spec: WorkspaceSpec) -> Checkout:
        """The worktree's HEAD and whether it holds nothing else: no change, no untracked or
        ignored file, no edit `git status` hides. Never raises: what git cannot tell is an empty
        head, holding more."""

    def inspect(self, spec: WorkspaceSpec) -> frozenset[Dirt]:
        """Why the worktree is not clean; empty when it is. Sees what `git status` hides too: an
        edit to a file marked skip-worktree or assume-unchanged, and ignored files matching the
        patterns worth keeping."""

    def ignored(self, spec: WorkspaceSpec) -> tuple[Ignored, ...]:
        """The ignored files and folders a removal would lose, each with its size, largest first."""

    def occupants(self, spec: WorkspaceSpec) -> Occupants:
        """The processes working inside the worktree or holding a file in it open, and those of
        this user that could not be looked into."""

    def remove(self, spec: WorkspaceSpec) -> None:
        """Remove a clean worktree and its branch. git refuses one with a change `git status`
        shows (`WorkspaceError`); the caller re-inspects under `lock` right before."""

    def size(self, spec: WorkspaceSpec) -> int:
        """Bytes the worktree's folder takes on disk; 0 when it is gone."""


class AgentWatchdogPort(Protocol):
    """This host's watchdog over its agents, running apart from the daemon (a daemon stopped, paused
    or cut off from the database does not stop it): once the deadline it was last given passes on
    the host's monotonic clock, it ends every agent the daemon started on this host's tmux server,
    and keeps ending any that appears, until a later deadline is given.

    Failure modes: `arm` raises `WatchdogUnarmed` when the watchdog does not guard the new deadline:
    it could not be recorded (the earlier one stays, and `deadline()` still says it), or no watchdog
    runs and none could be started (EMFILE, ENOMEM …) — the daemon is then the agents' only guard.
    `start` raises `OSError` when the watchdog cannot be started; starting it while one runs is
    harmless. `end_now` never fails: a tmux that does not answer is logged (`cluster.agent_ended`,
    `ended` false) and counts no agent.
    """

    def arm(self, deadline: float) -> None: ...

    def deadline(self) -> float | None:
        """The deadline last recorded; None before the first."""

    def start(self) -> None: ...

    def end_now(self, *, reason: str) -> int:
        """Ends every agent the daemon started on this host's tmux server at once, from the calling
        process — what the daemon does itself while no watchdog guards them; how many it found."""


class ClusterPort(Protocol):
    """The hosts sharing the work: each host's heartbeat, which host holds each work item (a lease
    that expires unless its holder renews it), which host reads each repository (a lock that goes
    with its holder's connection), and what that reader listed for every host to work from.

    Every expiry is judged on one clock, the database's (`now()`), never a host's. A single host
    (`shared` False) reads every repository, and its leases are its slots: they never expire and its
    renewals never fail.

    Failure modes: `StoreUnreachable` (a `StateError`) when the database cannot be reached —
    nothing is then renewed, taken or written, and any repository lock this host held may be gone;
    `StateError` for anything else the database refuses. `hand_over` raises `LeaseLost` when this
    host does not hold the item, `ValueError` when the receiving host is not alive.
    """

    @property
    def host(self) -> str:
        """This host's id (`cluster.hostId`)."""

    @property
    def shared(self) -> bool:
        """Whether other hosts share the work (False: one host holds everything)."""

    def join(self, *, pid: int, version: str) -> None:
        """Say this host is up (its heartbeat starts now), with what `status` shows of it."""

    def renew(self, *, memory_short: bool = False) -> Held:
        """The heartbeat: this host is alive, and each lease it holds runs for the expiry again
        (one that expired but that no other host took is renewed too). What it holds now.
        `memory_short`: its own free memory is below its `cluster.minFreeMemoryMiB` (no host places
        a new agent on it until a heartbeat says otherwise)."""

    def leave(self) -> None:
        """This host stopped cleanly: no new item is placed on it; its leases stay until they
        expire, or until it renews them when it starts again."""

    def hosts(self) -> list[HostView]:
        """Every host that ever joined, with its live leases and its heartbeat's age."""

    def leases(self) -> list[Lease]:
        """Every lease, expired ones included."""

    def place(self, items: Iterable[WorkItemRef], placement: Placement | None = None) -> list[Lease]:
        """Give each of `items` that no host holds (never leased, or its lease expired) to the live
        host with the most free slots that `placement` allows for it (`Placement.host_for`: memory
        for a new agent, a hibernated conversation's host), in the order given (the first gets a slot
        first); rows another host is placing are skipped (`SKIP LOCKED`). The leases made; an item no
        host may take waits."""

    def release(self, item: WorkItemRef) -> None:
        """Give up this host's lease on `item` (its session closed, nothing waits for an agent);
        another host's is untouched."""

    def hand_over(self, item: WorkItemRef, to: str) -> Lease:
        """Move this host's lease on `item` to host `to`; it starts for `to` only once this host's
        own trust in it has run out (the renew deadline), so no moment has two holders."""

    def poll_lock(self, repo: RepoRef) -> bool:
        """Whether this host reads `repo` this cycle: it holds, or now takes, the repository's lock."""

    def share(self, repo: RepoRef, listed: Sequence[Listed], departed: Sequence[Departed]) -> None:
        """What the reader of `repo` found, for every host to work from (replaces the last)."""

    def shared_listing(self, repo: RepoRef) -> Shared:
        """What `repo`'s reader last shared; an item listed in the repository's first cycle stays
        `history` until it is no longer listed."""
