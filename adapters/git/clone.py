"""One repository's shared bare clone: made once (atomically), fetched before each new worktree."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path

from adapters.git.auth import RemoteEnv, credential_args
from adapters.git.runner import GitRunner
from domain.errors import CredentialsRefused, TrackerError, WorkspaceError
from domain.refs import RepoRef

DEFAULT_TIP = "refs/the-loop/default"  # the remote's HEAD as last fetched
PULL_HEADS = "refs/the-loop/pull"  # pull request heads fetched for worktrees; they count as pushed
_BRANCHES = "+refs/heads/*:refs/remotes/origin/*"


class SharedClone:
    """`<root>/<host>/<owner>/<repo>.git`, bare, remote `origin`; its lock file beside it.
    Every method but `path` and `lock_path` expects the caller to hold the lock."""

    def __init__(
        self, root: Path, repo: RepoRef, *, git: GitRunner, gh: str, remote_env: RemoteEnv | None = None
    ) -> None:
        parts = (repo.host, repo.owner, repo.name)
        if any(part in {"", ".", ".."} for part in parts):
            raise WorkspaceError(f"no clone folder can be named after repository {repo}")
        self.repo = repo
        self.path = root.joinpath(repo.host, repo.owner, f"{repo.name}.git")
        self.lock_path = self.path.with_name(f"{repo.name}.lock")
        self._git = git
        self._auth = credential_args(gh)
        self._remote_env = remote_env

    def refresh(self, url: str, *, pull: int | None) -> str:
        """Clone (first time) or fetch; returns the ref a new worktree starts from."""
        if self.path.is_dir():
            self._git("-C", str(self.path), "config", "remote.origin.url", url, where=str(self.repo))
            self._fetch(self.path, url, pull)
        else:
            self._clone(url, pull)
        return f"{PULL_HEADS}/{pull}" if pull is not None else DEFAULT_TIP

    def _clone(self, url: str, pull: int | None) -> None:
        # built beside its final place and renamed once fetched: a half-made clone is never used
        for stale in self.path.parent.glob(f"{self.path.name}.partial-*"):
            shutil.rmtree(stale, ignore_errors=True)  # an earlier clone cut short; we hold the lock
        partial = self.path.with_name(f"{self.path.name}.partial-new")
        where = str(self.repo)
        try:
            self._git("init", "--quiet", "--bare", str(partial), where=where)
            self._git("-C", str(partial), "config", "remote.origin.url", url, where=where)
            self._git("-C", str(partial), "config", "remote.origin.fetch", _BRANCHES, where=where)
            self._fetch(partial, url, pull)
            partial.rename(self.path)
        except (WorkspaceError, OSError) as error:
            shutil.rmtree(partial, ignore_errors=True)
            if isinstance(error, OSError):
                raise WorkspaceError(f"cloning {self.repo} into {self.path}: {error.strerror}") from None
            raise

    def _fetch(self, clone: Path, url: str, pull: int | None) -> None:
        refspecs = [_BRANCHES, f"+HEAD:{DEFAULT_TIP}"]
        if pull is not None:
            refspecs.append(f"+refs/pull/{pull}/head:{PULL_HEADS}/{pull}")
        fetch = (*self._auth, "-C", str(clone), "fetch", "--quiet", "--prune", "origin", *refspecs)
        env = self._env(url)
        try:
            self._runner(env)(*fetch, where=str(self.repo))
        except CredentialsRefused:
            if env is None:
                raise  # gh's own login: nothing else to offer
            # its token expired sooner than it said, or was revoked: one new token and one more try, as
            # gh's own calls get (a refused fetch changed nothing: it is asked again as it was)
            fresh = self._env(url, refused=env)
            try:
                self._runner(fresh)(*fetch, where=str(self.repo))
            except CredentialsRefused as again:
                raise CredentialsRefused(f"{again} (a new installation token was refused too)") from None

    def _env(self, url: str, *, refused: Mapping[str, str] | None = None) -> Mapping[str, str] | None:
        """The environment of a fetch: the one `remote_env` gives the repository, asked just before
        (so its token is a current one; `refused`: in place of one the remote refused), else None, the
        daemon's. Only https asks a credential helper: a file:// or ssh remote runs as it always did.
        Only the repository's own host is handed it: gh's helper answers any host but github.com from
        GH_ENTERPRISE_TOKEN, so a cloneUrl naming a mirror elsewhere would be sent the token."""
        if self._remote_env is None or not url.startswith("https://") or not self.repo.served_at(url):
            return None
        try:
            return self._remote_env(self.repo, refused=refused)
        except TrackerError as error:
            raise WorkspaceError(f"no credentials for git to fetch {self.repo}: {error}") from None

    def _runner(self, env: Mapping[str, str] | None) -> GitRunner:
        return self._git if env is None else self._git.inheriting(env)

    def collect(self) -> None:
        """`git gc --auto` after a fetch (the only thing that adds objects): it packs and prunes only
        past git's own thresholds, so mostly it only counts. Kept in the foreground, under the lock;
        a failure is git's to retry next time, never the worktree's."""
        with suppress(WorkspaceError):
            self._git(
                "-C", str(self.path), "-c", "gc.autoDetach=false", "gc", "--auto", "--quiet", where=str(self.repo)
            )

    def has_branch(self, branch: str) -> bool:
        found = self._git(
            "-C", str(self.path), "for-each-ref", "--format=%(refname)", f"refs/heads/{branch}", where=branch
        )
        return bool(found.strip())

    def delete_branch(self, branch: str) -> None:
        if self.has_branch(branch):
            self._git("-C", str(self.path), "branch", "--quiet", "-D", branch, where=branch)
