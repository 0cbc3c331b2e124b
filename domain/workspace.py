"""Workspaces: the values and decisions about a work item's git worktree."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from domain.model import ItemKind, PullHead, SessionRecord, SessionState, SessionStatus, WorkItem
from domain.policy import Decision
from domain.prompts import cap, sanitize
from domain.redaction import redact
from domain.refs import Naming, RepoRef, WorkItemRef

BRANCH_PREFIX = "the-loop/"
DEFAULT_CLONE_URL = "https://{host}/{owner}/{repo}.git"
DEFAULT_KEEP_IGNORED = (".env", ".env.*")  # ignored files an agent writes by hand: kept, unlike build output
SETUP_TAIL_BYTES = 2_000  # of the setup's output kept in the event log: its end says why it failed
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_KNOWN = {"{host}", "{owner}", "{repo}"}


class WorkspaceMode(enum.Enum):
    NONE = "none"  # the folder is created empty by the spawn, as before workspaces existed
    WORKTREE = "worktree"


def check_clone_url(template: str) -> str:
    """`template` itself, or `ValueError` naming what is wrong with it."""
    unknown = sorted(set(_PLACEHOLDER.findall(template)) - _KNOWN)
    if unknown:
        raise ValueError(f"unknown placeholder {', '.join(unknown)} (known: {{host}}, {{owner}}, {{repo}})")
    if not template.strip() or template.lstrip().startswith("-"):
        raise ValueError(f"not a clone URL: {template!r}")
    return template


def clone_url(template: str, repo: RepoRef) -> str:
    """The clone URL of `repo`; `ValueError` when a name would make it an option to git."""
    url = template.replace("{host}", repo.host).replace("{owner}", repo.owner).replace("{repo}", repo.name)
    return check_clone_url(url)


@dataclass(frozen=True, slots=True)
class WorkspaceSpec:
    """One work item's worktree: its folder, its branch, and where it is cut from."""

    item: WorkItemRef
    path: str
    pull: int | None = None  # a pull request's number: cut from its head; None: the default branch's tip
    commit: str = ""  # the head must be exactly this commit (a vouched one); "": whatever it is
    naming: Naming = Naming.INJECTIVE  # the session record's: a worktree made before keeps its branch

    @classmethod
    def for_item(
        cls, item: WorkItem, path: str, naming: Naming = Naming.INJECTIVE, *, commit: str = ""
    ) -> WorkspaceSpec:
        pull = item.ref.number if item.kind is ItemKind.PULL_REQUEST else None
        return cls(item.ref, path, pull, commit if pull is not None else "", naming)

    @property
    def repo(self) -> RepoRef:
        return self.item.repo

    @property
    def branch(self) -> str:
        return BRANCH_PREFIX + self.item.slug_by(self.naming)

    @property
    def start(self) -> str:
        return f"refs/pull/{self.pull}/head" if self.pull is not None else "the default branch's tip"


VOUCH_HINT = "the-loop sessions vouch --work-item {item}"
SHORT_SHA = 12


def head_decision(
    item: WorkItemRef, head: PullHead | None, *, trust_forks: bool, vouched: str | None
) -> Decision[bool]:
    """May code from this item's head run on the host (its `setup`, its harness
    settings, hooks and MCP servers)? A label is consent to an agent *reading* a change, not to
    running it: a fork's head runs only when the operator trusts forks, or vouched for that very
    commit (a later push is not vouched for). `head` None: an issue, cut from the default branch."""
    if head is None:
        return Decision(True, "an issue: its worktree holds the default branch")
    if not head.fork:
        return Decision(True, f"a pull request from {item.repo.full_name} itself")
    where = f"a fork's head ({head.repo or 'a deleted repository'} at {head.sha[:SHORT_SHA]})"
    if vouched is not None and vouched == head.sha:
        return Decision(True, f"{where}, vouched for by the operator")
    if trust_forks:
        return Decision(True, f"{where}; routing.workspace.trustForks is on")
    hint = VOUCH_HINT.format(item=item)
    if vouched is not None:
        return Decision(False, f"{where}: vouched for {vouched[:SHORT_SHA]}, not this head; `{hint}` again")
    return Decision(False, f"{where} nobody vouched for; `{hint}` to let it run")


class Found(enum.Enum):
    """What is at a work item's folder."""

    MISSING = "missing"  # nothing, or an empty directory
    READY = "ready"  # a worktree of the item's shared clone, marked ready
    UNFINISHED = "unfinished"  # such a worktree without the mark: an attempt that never finished
    FOREIGN = "foreign"  # anything else: not ours to touch


class Prepare(enum.Enum):
    CREATE = "create"
    REUSE = "reuse"  # untouched
    REMAKE = "remake"  # discard the unfinished attempt, then create
    REFUSE = "refuse"
    USE_AS_IS = "use-as-is"


def prepare_decision(found: Found, *, first: bool) -> Decision[Prepare]:
    """What to do with the folder before a spawn. No harness ever ran in an unfinished worktree
    (the mark is written before the spawn), so discarding it loses nothing."""
    if found is Found.READY:
        return Decision(Prepare.REUSE, "a ready worktree: reused untouched")
    if found is Found.UNFINISHED:
        return Decision(Prepare.REMAKE, "a worktree an earlier attempt did not finish: made again")
    if found is Found.MISSING:
        return Decision(Prepare.CREATE, "no worktree yet")
    if first:
        return Decision(Prepare.REFUSE, "exists, is not empty and is not a the-loop worktree; move it away")
    # a session started before workspaces were switched on keeps the folder it always had
    return Decision(Prepare.USE_AS_IS, "the session's own folder from before worktrees: used as it is")


class Dirt(enum.Enum):
    """Why a worktree is not clean; each one keeps it."""

    UNCOMMITTED = "uncommitted change"
    UNTRACKED = "untracked file"
    UNPUSHED = "commit missing from every remote branch"
    HIDDEN = "change git status does not show (skip-worktree or assume-unchanged)"
    KEPT_IGNORED = "ignored file worth keeping (routing.workspace.keepIgnored)"


@dataclass(frozen=True, slots=True)
class Occupants:
    """Processes that may be using a worktree: working in it (current or root directory) or holding
    a file in it open; and those that could not be looked into, which may be."""

    inside: tuple[int, ...] = ()
    unreadable: tuple[int, ...] = ()
    listed: bool = True  # False: the processes could not be listed at all (no /proc)


@dataclass(frozen=True, slots=True)
class Ignored:
    """An ignored file, or a folder holding only ignored files (`node_modules/`): lost with the
    worktree, and not worth keeping unless `routing.workspace.keepIgnored` says so."""

    path: str
    bytes: int


def removal_decision(
    dirt: frozenset[Dirt], session: SessionState, occupants: Occupants = Occupants()
) -> Decision[bool]:
    """A worktree goes only when nothing in it can be lost and no harness can be using it."""
    if session is SessionState.LIVE:
        return Decision(False, "its tmux session is live")
    if session is SessionState.UNKNOWN:
        return Decision(False, "tmux did not answer: its session may be live")
    return discard_decision(dirt, occupants)


def discard_decision(dirt: frozenset[Dirt], occupants: Occupants) -> Decision[bool]:
    """Whether a worktree can go without losing anything: no process works in it, and it holds
    nothing that is not on a remote too (ignored build output aside)."""
    used = _in_use(occupants)
    if used is not None:
        return used
    if dirt:
        return Decision(False, "; ".join(d.value for d in Dirt if d in dirt))
    return Decision(True, "clean: no uncommitted change, no untracked file, every commit on a remote branch")


def _in_use(occupants: Occupants) -> Decision[bool] | None:
    """Why a process may be using the worktree; None when none can be."""
    if not occupants.listed:
        return Decision(False, "the processes could not be listed (no /proc): one may work inside it")
    if occupants.inside:
        return Decision(False, f"process {_pids(occupants.inside)} works inside it")
    if occupants.unreadable:
        return Decision(False, f"process {_pids(occupants.unreadable)} could not be looked into: it may work inside it")
    return None


def _pids(pids: tuple[int, ...], shown: int = 3) -> str:
    more = f" and {len(pids) - shown} more" if len(pids) > shown else ""
    return ", ".join(str(pid) for pid in pids[:shown]) + more


def still_closed(first: SessionRecord, now: SessionRecord | None) -> Decision[bool]:
    """Right before a removal: is the session the one the first look saw, still closed?"""
    if now is None or now.status is not SessionStatus.CLOSED:
        return Decision(False, "its session is no longer closed")  # reopened or reset meanwhile
    if (now.version, now.spawn_id, now.cwd) != (first.version, first.spawn_id, first.cwd):
        return Decision(False, "its session changed since prune looked at it")
    return Decision(True, "its session is still closed")


@dataclass(frozen=True, slots=True)
class SetupResult:
    """How the setup command ended; `output_tail` is already bounded and made inert."""

    exit_status: int
    output_tail: str
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out

    def describe(self, command: str) -> str:
        ended = "did not finish in time" if self.timed_out else f"exited {self.exit_status}"
        return f"setup `{command}` {ended}"


def output_tail(text: str, *, limit: int = SETUP_TAIL_BYTES) -> str:
    """The last `limit` bytes of a command's output, control characters made visible and secrets
    replaced by `[redacted]`: the event log is the operator's, but it is read, copied and pasted
    into issues."""
    data = redact(sanitize(text)).encode("utf-8")
    if len(data) <= limit:
        return data.decode("utf-8")
    kept = data[-limit:].decode("utf-8", "ignore")
    return f"[… {len(data) - limit} earlier bytes not shown …]\n{cap(kept, limit)}"


@dataclass(frozen=True, slots=True)
class Pruned:
    """One worktree `sessions prune` looked at: removed (or would be), or kept and why."""

    item: WorkItemRef
    path: str
    removed: bool
    reason: str
    bytes: int = 0  # freed, or that would be freed in a dry run
    ignored: tuple[Ignored, ...] = ()  # ignored files and folders that went (or would go) with it
