"""GitWorkspaces: each work item's folder a worktree of one shared clone per repository."""

from __future__ import annotations

import tempfile
from pathlib import Path

from adapters.git.clone import SharedClone
from adapters.git.folder import READY_MARK, admin_dir, found_at, size_on_disk
from adapters.git.lock import repository_lock
from adapters.git.runner import GitRunner, run_shell
from adapters.support.private import close_tree, write_private
from domain.errors import WorkspaceError
from domain.ports import WorkspacePort
from domain.refs import RepoRef
from domain.workspace import DEFAULT_CLONE_URL, Dirt, Found, SetupResult, WorkspaceSpec, clone_url, output_tail

TAIL_READ = 16_384  # bytes of the setup's output read back; output_tail keeps fewer


class GitWorkspaces(WorkspacePort):
    """Clones under `root` (`<state.root>/clones`); a lock per repository around clone, fetch,
    worktree add and removal. Nothing runs git until a workspace is asked for."""

    def __init__(
        self, *, root: Path, url_template: str = DEFAULT_CLONE_URL, gh: str = "gh", timeout: float = 1800.0
    ) -> None:
        self._root = root
        self._template = url_template
        self._gh = gh
        self._git = GitRunner(timeout=timeout)

    def found(self, spec: WorkspaceSpec) -> Found:
        try:
            return found_at(Path(spec.path), self._clone(spec.repo).path)
        except WorkspaceError:
            return Found.FOREIGN

    def create(self, spec: WorkspaceSpec) -> None:
        clone = self._clone(spec.repo)
        try:
            url = clone_url(self._template, spec.repo)
        except ValueError as error:
            raise WorkspaceError(f"routing.workspace.cloneUrl for {spec.repo}: {error}") from None
        with repository_lock(clone.lock_path, timeout=self._git.timeout):
            start = clone.refresh(url, pull=spec.pull)
            self._git("-C", str(clone.path), "worktree", "prune", where=str(spec.repo))
            had_branch = clone.has_branch(spec.branch)
            try:
                self._git(
                    "-C",
                    str(clone.path),
                    "worktree",
                    "add",
                    "--quiet",
                    "-b",
                    spec.branch,
                    "--",
                    spec.path,
                    start,
                    where=spec.path,
                    private=False,  # the checkout is the operator's folder, made as they make files
                )
            except WorkspaceError:
                self._undo(clone, spec, drop_branch=not had_branch)
                raise
            # what that made inside the clone (the branch, the worktree's own git folder) is not
            for made in ("refs/heads", "logs/refs/heads", "worktrees"):
                close_tree(clone.path / made)

    def run_setup(self, spec: WorkspaceSpec, command: str) -> SetupResult:
        with tempfile.TemporaryFile() as out:
            status, timed_out = run_shell(
                command, cwd=Path(spec.path), env=self._git.env, timeout=self._git.timeout, out=out
            )
            size = out.seek(0, 2)
            out.seek(max(0, size - TAIL_READ))
            text = out.read().decode("utf-8", "replace")
        return SetupResult(status, output_tail(text), timed_out=timed_out)

    def mark_ready(self, spec: WorkspaceSpec) -> None:
        admin = admin_dir(Path(spec.path), self._clone(spec.repo).path)
        if admin is None:
            raise WorkspaceError(f"{spec.path} is not a worktree of the shared clone of {spec.repo}")
        try:
            write_private(admin / READY_MARK, spec.branch + "\n")
        except OSError as error:
            raise WorkspaceError(f"marking {spec.path} ready: {error.strerror}") from None

    def discard(self, spec: WorkspaceSpec) -> None:
        clone = self._clone(spec.repo)
        with repository_lock(clone.lock_path, timeout=self._git.timeout):
            self._undo(clone, spec, drop_branch=True, quietly=False)

    def inspect(self, spec: WorkspaceSpec) -> frozenset[Dirt]:
        self._ours(spec)
        here = Path(spec.path)
        status = self._git("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=here, where=spec.path)
        dirt = set(_status_dirt(status))
        revs = ["HEAD", *([f"refs/heads/{spec.branch}"] if self._clone(spec.repo).has_branch(spec.branch) else [])]
        unpushed = self._git(
            "rev-list", "--count", *revs, "--not", "--remotes", "--glob=refs/the-loop/*", cwd=here, where=spec.path
        )
        if int(unpushed.strip() or 0) > 0:
            dirt.add(Dirt.UNPUSHED)
        return frozenset(dirt)

    def remove(self, spec: WorkspaceSpec) -> int:
        clone = self._clone(spec.repo)
        with repository_lock(clone.lock_path, timeout=self._git.timeout):
            self._ours(spec)
            freed = self.size(spec)
            # no --force: git refuses a worktree that changed since it was inspected
            self._git("-C", str(clone.path), "worktree", "remove", "--", spec.path, where=spec.path)
            clone.delete_branch(spec.branch)
        return freed

    def size(self, spec: WorkspaceSpec) -> int:
        return size_on_disk(Path(spec.path))

    def _undo(self, clone: SharedClone, spec: WorkspaceSpec, *, drop_branch: bool, quietly: bool = True) -> None:
        """Take back a worktree no harness ran in: its folder, its entry, the branch made for it."""
        try:
            if found_at(Path(spec.path), clone.path) in {Found.READY, Found.UNFINISHED}:
                self._git(
                    "-C", str(clone.path), "worktree", "remove", "--force", "--force", "--", spec.path, where=spec.path
                )
            self._git("-C", str(clone.path), "worktree", "prune", where=str(spec.repo))
            if drop_branch:
                clone.delete_branch(spec.branch)
        except WorkspaceError:
            if not quietly:
                raise  # after a failed add, git's first message is the one worth reporting

    def _ours(self, spec: WorkspaceSpec) -> None:
        if self.found(spec) not in {Found.READY, Found.UNFINISHED}:
            raise WorkspaceError(f"{spec.path} is not a the-loop worktree of {spec.repo}")

    def _clone(self, repo: RepoRef) -> SharedClone:
        return SharedClone(self._root, repo, git=self._git, gh=self._gh)


def _status_dirt(porcelain: str) -> set[Dirt]:
    """`git status --porcelain -z`: `??` is untracked, any other code a change; a rename or
    copy entry is followed by its source path, which is not an entry of its own."""
    dirt: set[Dirt] = set()
    entries = iter(porcelain.split("\0"))
    for entry in entries:
        if len(entry) < 3:
            continue
        dirt.add(Dirt.UNTRACKED if entry.startswith("??") else Dirt.UNCOMMITTED)
        if entry[0] in "RC":
            next(entries, None)
    return dirt
