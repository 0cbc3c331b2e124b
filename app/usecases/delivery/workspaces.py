"""Workspaces: an item's worktree made before its spawn, reused after, removed only when clean."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from typing import Any, NoReturn

from app.usecases.cycle.meta import save_vouched_tree, vouch, vouched_head, vouched_tree
from app.usecases.unit_of_work import UnitOfWork
from domain.errors import LoopError, TrackerError, WorkspaceError
from domain.events import Event, Level
from domain.model import ItemKind, PullHead, SessionRecord, SessionStatus, WorkItem
from domain.policy import Decision
from domain.ports import TmuxPort, TrackerPort, WorkspacePort
from domain.refs import Naming, WorkItemRef
from domain.vouching import Checkout, VouchedTree, vouched_tree_decision
from domain.workspace import (
    Found,
    Ignored,
    Prepare,
    Pruned,
    WorkspaceMode,
    WorkspaceSpec,
    discard_decision,
    head_decision,
    prepare_decision,
    removal_decision,
    still_closed,
)

OPERATOR = "operator"  # the `source` of what `sessions prune` logs


@dataclass(frozen=True, slots=True)
class WorkspaceConfig:
    mode: WorkspaceMode = WorkspaceMode.NONE
    setup: str = ""  # a shell line run once in each new worktree; empty: none
    remove_on_close: bool = False
    trust_forks: bool = False  # a fork's head runs on the host like the repository's own
    host: str = ""  # cluster: this host's id; a worktree elsewhere is another one ("": one host)


@dataclass(frozen=True, slots=True)
class Readied:
    """The folder a spawn starts in, and whether code from the head it holds may run on the host
    (its harness settings, hooks, MCP servers)."""

    path: str
    vouched: Decision[bool]


EMPTY = Decision(True, "an empty folder: nobody's code")
SHORT_SHA = 7  # the shortest head an operator may name


class NotVouched(LoopError):
    """A vouch that names another head than the pull request has now."""


class Workspaces:
    """The default workspace (`routing.workspace`) and the named ones (`routing.workspaces`): each
    item's folder is made, reused and removed by the one its session record names."""

    def __init__(
        self,
        *,
        port: WorkspacePort,
        tmux: TmuxPort,
        uow: UnitOfWork,
        config: WorkspaceConfig,
        tracker_for: Callable[[WorkItemRef], TrackerPort] | None = None,
        named: Mapping[str, tuple[WorkspaceConfig, WorkspacePort]] | None = None,
    ) -> None:
        self._tracker_for = tracker_for  # None: no pull request's head can be told, so none is vouched for
        self._port = port
        self._tmux = tmux
        self._store, self._events, self._clock = uow.store, uow.events, uow.clock
        self._config = config
        self._named = {
            name: Workspaces(port=port, tmux=tmux, uow=uow, config=config, tracker_for=tracker_for)
            for name, (config, port) in (named or {}).items()
        }

    def _of(self, workspace: str) -> Workspaces:
        """The workspace a session record names; the default for "" and for one configured no
        more (the item's folder stays where it was made)."""
        return self._named.get(workspace, self) if workspace else self

    def holding(self, item: WorkItem, workspace: str = "") -> AbstractContextManager[None]:
        """The repository's lock, held by a spawn around its prepare and its tmux spawn, so that a
        prune never removes a worktree between the two; nothing to hold without worktrees.
        `WorkspaceError` when it is not got within git's timeout."""
        chosen = self._of(workspace)
        if chosen._config.mode is WorkspaceMode.NONE:
            return nullcontext()
        return chosen._port.lock(item.ref.repo)

    def prepare(
        self, item: WorkItem, folder: str, *, first: bool, naming: Naming = Naming.INJECTIVE, workspace: str = ""
    ) -> Readied:
        """The folder a spawn of `item` starts in, ready, and whether its head is vouched for. Mode
        `none`: `folder` as it is (the spawn creates it). `WorkspaceError` (already in the event
        log) when it cannot be made, or a pull request's head cannot be read."""
        return self._of(workspace)._prepare(item, folder, first=first, naming=naming)

    def _prepare(self, item: WorkItem, folder: str, *, first: bool, naming: Naming) -> Readied:
        if self._config.mode is WorkspaceMode.NONE:
            return Readied(folder, EMPTY)
        spec = WorkspaceSpec.for_item(item, folder, naming)
        head = self._head(item, spec)
        vouched_sha = vouched_head(self._store, item.ref)
        vouched = head_decision(item.ref, head, trust_forks=self._config.trust_forks, vouched=vouched_sha)
        if head is not None and head.fork:
            spec = WorkspaceSpec.for_item(item, folder, naming, commit=head.sha)  # exactly the head judged
        decision = prepare_decision(self._port.found(spec), first=first)
        if decision.choice is Prepare.REFUSE:
            self._failed(spec, f"{folder} {decision.reason}")
        by_vouch = head is not None and head.fork and head.sha == vouched_sha and not self._config.trust_forks
        remake = decision.choice is Prepare.REMAKE
        if by_vouch and decision.choice in {Prepare.REUSE, Prepare.USE_AS_IS}:
            vouched, remake = self._covered(spec, ours=decision.choice is Prepare.REUSE)
        if decision.choice is Prepare.CREATE or remake:
            self._make(spec, vouched, remake=remake)
        if head is not None and head.fork:
            mark = f"{head.sha} {self._config.host} {folder}" if by_vouch and vouched.choice else ""
            save_vouched_tree(self._store, item.ref, mark)  # anything else started there ends what it covered
        return Readied(folder, vouched)

    def _covered(self, spec: WorkspaceSpec, *, ours: bool) -> tuple[Decision[bool], bool]:
        """Whether the vouch covers what the fork's existing worktree holds, and whether it is to be
        made again from the vouched commit first."""
        marked = ours and vouched_tree(self._store, spec.item) == f"{spec.commit} {self._config.host} {spec.path}"
        checkout, discard = Checkout("", only_head=False), Decision(False, "it is not a the-loop worktree")
        if ours:  # marked too: its vouched agent may have checked out another head since
            checkout = self._port.checkout(spec)
            if checkout.head != spec.commit or not (marked or checkout.only_head):
                discard = self._discardable(spec)
        decision = vouched_tree_decision(spec.commit, marked=marked, checkout=checkout, discard=discard)
        if decision.choice is VouchedTree.UNVOUCHED:
            self._emit(Event.WORKSPACE_UNVOUCHED, spec, level=Level.WARNING, reason=decision.reason)
        if decision.choice is VouchedTree.REMAKE:
            self._emit(Event.WORKSPACE_REMADE, spec, level=Level.WARNING, reason=decision.reason)
        allowed = decision.choice is not VouchedTree.UNVOUCHED
        return Decision(allowed, decision.reason), decision.choice is VouchedTree.REMAKE

    def _discardable(self, spec: WorkspaceSpec) -> Decision[bool]:
        try:
            return discard_decision(self._port.inspect(spec), self._port.occupants(spec))
        except WorkspaceError as error:
            return Decision(False, f"it could not be looked into: {error}")

    def _head(self, item: WorkItem, spec: WorkspaceSpec) -> PullHead | None:
        if item.kind is not ItemKind.PULL_REQUEST:
            return None
        if self._tracker_for is None:
            return PullHead("", "", fork=True)  # cannot tell whose it is: nobody's we know
        try:
            return self._tracker_for(item.ref).pull_head(item.ref)
        except TrackerError as error:  # a rate limit too: the attempt is retried
            self._failed(spec, f"cannot tell whose head pull request {item.ref} has: {error}")

    def _make(self, spec: WorkspaceSpec, vouched: Decision[bool], *, remake: bool) -> None:
        started = self._clock.now()
        try:
            if remake:
                self._port.discard(spec)
            self._port.create(spec)
            if vouched.choice:
                self._setup(spec)
            elif self._config.setup:
                self._emit(Event.WORKSPACE_SETUP_SKIPPED, spec, level=Level.WARNING, reason=vouched.reason)
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

    def head(self, item: WorkItemRef) -> PullHead:
        """Pull request `item`'s head now; `TrackerError` when it cannot be read."""
        if self._tracker_for is None:
            raise NotVouched(f"{item}: no tracker to read its head from")
        return self._tracker_for(item).pull_head(item)

    def vouch(self, item: WorkItemRef, sha: str) -> PullHead:
        """The operator vouches for pull request `item`'s head being `sha` (a prefix will do): its
        setup and its harness's folder settings may run on this host from its next worktree and
        spawn on, and only while the head is that commit. `NotVouched` when its head is another."""
        head = self.head(item)
        if sha != head.sha and (len(sha) < SHORT_SHA or not head.sha.startswith(sha.lower())):
            raise NotVouched(f"{item}'s head is {head.repo or 'a deleted repository'} at {head.sha}, not {sha}")
        vouch(self._store, item, head.sha)
        self._events.emit(
            Event.WORKSPACE_VOUCHED, source=OPERATOR, work_item=str(item), head_repo=head.repo, head=head.sha
        )
        return head

    def closed(self, record: SessionRecord) -> None:
        """After a close: with its workspace's `removeOnClose`, the item's worktree goes if it is clean."""
        chosen = self._of(record.workspace)
        if chosen._config.mode is WorkspaceMode.NONE or not chosen._config.remove_on_close:
            return
        chosen._release(record, dry_run=False, by="close")

    def prune(self, *, dry_run: bool) -> list[Pruned]:
        """Every closed session's worktree, removed when clean, else kept with the reason. Only
        closed ones: an active or paused item may get a comment any moment, and an item with no
        record may be in the middle of its first spawn."""
        closed = [r for r in self._store.sessions() if r.status is SessionStatus.CLOSED]
        released = (self._of(r.workspace)._release(r, dry_run=dry_run, by="prune") for r in closed)
        return [pruned for pruned in released if pruned is not None]

    def _release(self, record: SessionRecord, *, dry_run: bool, by: str) -> Pruned | None:
        """A first look (it may take long: measuring the tree), then, right before removing and
        under the repository's lock a spawn also takes, the same look again: a session reopened,
        a harness respawned or any process working inside meanwhile keeps the worktree."""
        spec = WorkspaceSpec(record.item, record.cwd, naming=record.naming)
        if self._port.found(spec) not in {Found.READY, Found.UNFINISHED}:
            return None  # nothing there, or not ours
        source, size = (OPERATOR if by == "prune" else "poller"), 0
        ignored: tuple[Ignored, ...] = ()
        try:
            decision = self._judge(record, spec)
            if decision.choice:
                size, ignored = self._port.size(spec), self._port.ignored(spec)
            if decision.choice and not dry_run:
                with self._port.lock(spec.repo):
                    decision = self._judge(record, spec)
                    if decision.choice:
                        self._port.remove(spec)
        except WorkspaceError as error:
            decision = Decision(False, f"not removed: {error}")
        if not decision.choice:
            if not dry_run:
                self._emit(Event.WORKSPACE_KEPT, spec, source=source, by=by, reason=decision.reason)
            return Pruned(spec.item, spec.path, removed=False, reason=decision.reason)
        if not dry_run:
            self._emit(Event.WORKSPACE_REMOVED, spec, source=source, by=by, bytes_freed=size)
        return Pruned(spec.item, spec.path, removed=True, reason=decision.reason, bytes=size, ignored=ignored)

    def _judge(self, record: SessionRecord, spec: WorkspaceSpec) -> Decision[bool]:
        session = still_closed(record, self._store.session(record.item))  # not reopened, reset, respawned
        if not session.choice:
            return session
        state = self._tmux.session_state(record.target)
        return removal_decision(self._port.inspect(spec), state, self._port.occupants(spec))

    def _emit(self, event: Event, spec: WorkspaceSpec, *, level: Level = Level.INFO, **fields: Any) -> None:
        self._events.emit(event, level=level, work_item=str(spec.item), path=spec.path, **fields)
