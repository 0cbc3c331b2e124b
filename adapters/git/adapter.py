"""GitWorkspaces: each work item's folder a worktree of one shared clone per repository."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path

from adapters.files.private import close_tree, write_private
from adapters.git.auth import RemoteEnv
from adapters.git.clone import SharedClone
from adapters.git.folder import READY_MARK, admin_dir, found_at, size_on_disk
from adapters.git.hidden import hidden_edits, ignored_entries, worth_keeping
from adapters.git.lock import repository_lock
from adapters.git.occupants import occupants
from adapters.git.runner import GitRunner, run_shell
from domain.errors import WorkspaceError
from domain.ports import WorkspacePort
from domain.refs import RepoRef
from domain.vouching import Checkout
from domain.workspace import (
    DEFAULT_CLONE_URL,
    DEFAULT_KEEP_IGNORED,
    Dirt,
    Found,
    Ignored,
    Occupants,
    SetupResult,
    WorkspaceSpec,
    clone_url,
    output_tail,
)

TAIL_READ = 16_384  # bytes of the setup's output read back; output_tail keeps fewer
# what `setup` inherits of the daemon's environment: never its tokens
SETUP_PASS = ("PATH", "HOME", "LANG", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL")
SETUP_QUIET = {"GIT_TERMINAL_PROMPT": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}  # never waits on a prompt


def setup_environment(env: Mapping[str, str], extra: Iterable[str] = ()) -> dict[str, str]:
    """The variables of `env` a setup command gets: the pass-list, `LC_*`, and the operator's
    `extra` names; nothing else (GH_TOKEN, GITHUB_TOKEN, the harness's keys, the-loop's own)."""
    names = {*SETUP_PASS, *extra}
    kept = {name: value for name, value in env.items() if name in names or name.startswith("LC_")}
    return {**kept, **SETUP_QUIET}


class GitWorkspaces(WorkspacePort):
    """Clones under `root` (`<state.root>/clones`); a lock per repository around clone, fetch,
    worktree add and removal. Nothing runs git until a workspace is asked for. `remote_env`: the
    environment each repository's fetches run in (a GitHub App's token for gh to hand git)."""

    def __init__(
        self,
        *,
        root: Path,
        url_template: str = DEFAULT_CLONE_URL,
        gh: str = "gh",
        timeout: float = 1800.0,
        keep_ignored: tuple[str, ...] = DEFAULT_KEEP_IGNORED,
        setup_env: Iterable[str] = (),
        remote_env: RemoteEnv | None = None,
    ) -> None:
        self._remote_env = remote_env
        self._setup_env = setup_environment(os.environ, setup_env)
        self._root = root
        self._template = url_template
        self._gh = gh
        self._git = GitRunner(timeout=timeout)
        self._keep_ignored = keep_ignored

    def lock(self, repo: RepoRef) -> AbstractContextManager[None]:
        return repository_lock(self._clone(repo).lock_path, timeout=self._git.timeout)

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
            if spec.commit:
                self._pinned(clone, spec, start)
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
            clone.collect()

    def run_setup(self, spec: WorkspaceSpec, command: str) -> SetupResult:
        with tempfile.TemporaryFile() as out:
            status, timed_out = run_shell(
                command, cwd=Path(spec.path), env=self._setup_env, timeout=self._git.timeout, out=out
            )
            size = out.seek(0, 2)
            out.seek(max(0, size - TAIL_READ))
            text = out.read().decode("utf-8", "replace")
        return SetupResult(status, output_tail(text), timed_out=timed_out)

    def _pinned(self, clone: SharedClone, spec: WorkspaceSpec, start: str) -> None:
        """The fetched head is the commit judged, or the head moved in between (a push)."""
        fetched = self._git("-C", str(clone.path), "rev-parse", "--verify", "--end-of-options", start, where=start)
        if fetched.strip() != spec.commit:
            raise WorkspaceError(
                f"the head of pull request {spec.pull} moved while it was read: "
                f"{spec.commit[:12]} judged, {fetched.strip()[:12]} fetched"
            )

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

    def checkout(self, spec: WorkspaceSpec) -> Checkout:
        here = Path(spec.path)
        try:
            self._ours(spec)
            head = self._git("rev-parse", "--verify", "HEAD", cwd=here, where=spec.path).strip()
            # --ignored too: a harness reads an ignored `.claude/settings.local.json` as well
            listed = self._git(
                "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignored", cwd=here, where=spec.path
            )
            return Checkout(head, only_head=not listed and not hidden_edits(self._git, here, where=spec.path))
        except WorkspaceError:
            return Checkout("", only_head=False)

    def inspect(self, spec: WorkspaceSpec) -> frozenset[Dirt]:
        self._ours(spec)
        here = Path(spec.path)
        status = self._git("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=here, where=spec.path)
        dirt = _status_dirt(status)
        if hidden_edits(self._git, here, where=spec.path):
            dirt.add(Dirt.HIDDEN)
        if worth_keeping(ignored_entries(self._git, here, where=spec.path), self._keep_ignored):
            dirt.add(Dirt.KEPT_IGNORED)
        revs = ["HEAD", *([f"refs/heads/{spec.branch}"] if self._clone(spec.repo).has_branch(spec.branch) else [])]
        unpushed = self._git(
            "rev-list", "--count", *revs, "--not", "--remotes", "--glob=refs/the-loop/*", cwd=here, where=spec.path
        )
        if int(unpushed.strip() or 0) > 0:
            dirt.add(Dirt.UNPUSHED)
        return frozenset(dirt)

    def ignored(self, spec: WorkspaceSpec) -> tuple[Ignored, ...]:
        try:
            listed = ignored_entries(self._git, Path(spec.path), where=spec.path)
        except WorkspaceError:
            return ()
        folders = [p for p in listed if p.endswith("/")]
        top = [p for p in listed if not any(p != f and p.startswith(f) for f in folders)]
        here = Path(spec.path)
        sized = [Ignored(p, size_on_disk(here / p) if p.endswith("/") else _size(here / p)) for p in top]
        return tuple(sorted(sized, key=lambda i: (-i.bytes, i.path)))

    def occupants(self, spec: WorkspaceSpec) -> Occupants:
        return occupants(Path(spec.path))

    def remove(self, spec: WorkspaceSpec) -> None:
        clone = self._clone(spec.repo)
        with repository_lock(clone.lock_path, timeout=self._git.timeout):
            self._ours(spec)
            # no --force: git refuses a worktree with a change git status shows
            self._git("-C", str(clone.path), "worktree", "remove", "--", spec.path, where=spec.path)
            clone.delete_branch(spec.branch)

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
        return SharedClone(self._root, repo, git=self._git, gh=self._gh, remote_env=self._remote_env)


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


def _size(path: Path) -> int:
    try:
        return os.lstat(path).st_blocks * 512
    except OSError:
        return 0
