"""A stateful workspace double: remote repositories, shared clones, worktrees and their branches."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from domain.errors import WorkspaceError
from domain.ports import WorkspacePort
from domain.refs import RepoRef
from domain.vouching import Checkout
from domain.workspace import Dirt, Found, Ignored, Occupants, SetupResult, WorkspaceSpec, output_tail


@dataclass
class FakeRemote:
    tip: str
    pulls: dict[int, str] = field(default_factory=dict)


@dataclass
class FakeWorktree:
    spec: WorkspaceSpec
    commit: str
    ready: bool = False
    dirt: set[Dirt] = field(default_factory=set)
    files: list[str] = field(default_factory=list)  # what the agent wrote there
    size: int = 8192
    ignored: list[Ignored] = field(default_factory=list)  # e.g. a setup's node_modules/
    occupants: Occupants = field(default_factory=Occupants)  # processes working inside it


class FakeWorkspaces(WorkspacePort):
    """Refuses what git refuses, with messages shaped like git's: a repository it does not know,
    a pull request without a head, a branch name taken, a folder that is not empty."""

    def __init__(self) -> None:
        self.remotes: dict[RepoRef, FakeRemote] = {}
        self.clones: set[RepoRef] = set()
        self.fetches = 0
        self.worktrees: dict[str, FakeWorktree] = {}
        self.branches: dict[tuple[RepoRef, str], str] = {}
        self.foreign: set[str] = set()  # folders that hold something else
        self.setup = SetupResult(0, "")  # what every setup command ends with
        self.setups: list[str] = []
        self.created = 0
        self._ids = (f"c{n:04d}" for n in itertools.count(1))
        self._lock = threading.Lock()
        self._repo_locks: dict[RepoRef, threading.RLock] = {}  # reentrant in a thread, like the flock

    @contextmanager
    def lock(self, repo: RepoRef) -> Iterator[None]:
        with self._lock:
            held = self._repo_locks.setdefault(repo, threading.RLock())
        with held:
            yield

    def add_remote(self, repo: RepoRef) -> str:
        self.remotes[repo] = FakeRemote(tip=next(self._ids))
        return self.remotes[repo].tip

    def advance(self, repo: RepoRef) -> str:
        self.remotes[repo].tip = next(self._ids)
        return self.remotes[repo].tip

    def open_pull(self, repo: RepoRef, number: int) -> str:
        self.remotes[repo].pulls[number] = head = next(self._ids)
        return head

    def found(self, spec: WorkspaceSpec) -> Found:
        if spec.path in self.foreign:
            return Found.FOREIGN
        tree = self.worktrees.get(spec.path)
        if tree is None:
            return Found.MISSING
        return Found.READY if tree.ready else Found.UNFINISHED

    def create(self, spec: WorkspaceSpec) -> None:
        with self.lock(spec.repo), self._lock:
            start = self._fetch(spec)
            if spec.commit and start != spec.commit:
                raise WorkspaceError(
                    f"the head of pull request {spec.pull} moved while it was read: "
                    f"{spec.commit[:12]} judged, {start[:12]} fetched"
                )
            if (spec.repo, spec.branch) in self.branches:
                raise WorkspaceError(
                    f"git worktree add exited 255 ({spec.path}): fatal: a branch named '{spec.branch}' already exists"
                )
            if spec.path in self.worktrees or spec.path in self.foreign:
                raise WorkspaceError(f"git worktree add exited 128 ({spec.path}): fatal: '{spec.path}' already exists")
            self.branches[(spec.repo, spec.branch)] = start
            self.worktrees[spec.path] = FakeWorktree(spec, start)
            self.created += 1

    def _fetch(self, spec: WorkspaceSpec) -> str:
        remote = self.remotes.get(spec.repo)
        if remote is None:
            raise WorkspaceError(
                f"git fetch exited 128 ({spec.repo}): fatal: repository "
                f"'https://github.com/{spec.repo.full_name}.git/' not found"
            )
        self.clones.add(spec.repo)
        self.fetches += 1
        if spec.pull is None:
            return remote.tip
        if spec.pull not in remote.pulls:
            raise WorkspaceError(
                f"git fetch exited 128 ({spec.repo}): fatal: couldn't find remote ref refs/pull/{spec.pull}/head"
            )
        return remote.pulls[spec.pull]

    def run_setup(self, spec: WorkspaceSpec, command: str) -> SetupResult:
        self._tree(spec)
        self.setups.append(command)
        return SetupResult(self.setup.exit_status, output_tail(self.setup.output_tail), self.setup.timed_out)

    def mark_ready(self, spec: WorkspaceSpec) -> None:
        self._tree(spec).ready = True

    def discard(self, spec: WorkspaceSpec) -> None:
        with self.lock(spec.repo), self._lock:
            self.worktrees.pop(spec.path, None)
            self.branches.pop((spec.repo, spec.branch), None)

    def checkout(self, spec: WorkspaceSpec) -> Checkout:
        tree = self.worktrees.get(spec.path)
        if tree is None:
            return Checkout("", only_head=False)
        return Checkout(tree.commit, only_head=not (tree.dirt or tree.files or tree.ignored))

    def inspect(self, spec: WorkspaceSpec) -> frozenset[Dirt]:
        return frozenset(self._tree(spec).dirt)

    def ignored(self, spec: WorkspaceSpec) -> tuple[Ignored, ...]:
        tree = self.worktrees.get(spec.path)
        return tuple(sorted(tree.ignored, key=lambda i: (-i.bytes, i.path))) if tree else ()

    def occupants(self, spec: WorkspaceSpec) -> Occupants:
        tree = self.worktrees.get(spec.path)
        return tree.occupants if tree else Occupants()

    def remove(self, spec: WorkspaceSpec) -> None:
        with self.lock(spec.repo), self._lock:
            tree = self._tree(spec)
            # like `git worktree remove` without --force: it sees only what `git status` shows
            if tree.dirt & {Dirt.UNCOMMITTED, Dirt.UNTRACKED}:
                raise WorkspaceError(
                    f"git worktree remove exited 128 ({spec.path}): fatal: '{spec.path}' "
                    "contains modified or untracked files, use --force to delete it"
                )
            del self.worktrees[spec.path]
            self.branches.pop((spec.repo, spec.branch), None)

    def size(self, spec: WorkspaceSpec) -> int:
        tree = self.worktrees.get(spec.path)
        return tree.size if tree else 0

    def _tree(self, spec: WorkspaceSpec) -> FakeWorktree:
        tree = self.worktrees.get(spec.path)
        if tree is None:
            raise WorkspaceError(f"{spec.path} is not a the-loop worktree of {spec.repo}")
        return tree
