"""Test support for real git: origin repositories made on the spot, reached by file:// URLs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from adapters.git.adapter import GitWorkspaces
from domain.refs import RepoRef

IDENTITY = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def require_git() -> None:
    if shutil.which("git") is None:
        pytest.skip("SKIPPED LOUDLY: the git binary is not installed (CI installs it)")


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **IDENTITY}, capture_output=True, text=True, timeout=60, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout.strip()


class Origins:
    """Bare repositories under `root/<owner>/<repo>.git`, the `file://` template that finds them."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def template(self) -> str:
        return f"file://{self.root}/{{owner}}/{{repo}}.git"

    def bare(self, repo: RepoRef) -> Path:
        return self.root / repo.owner / f"{repo.name}.git"

    def make(self, repo: RepoRef, *, files: int = 3) -> Path:
        """A repository whose default branch `main` holds `files` files in one commit."""
        work = self.root / "work" / repo.owner / repo.name
        work.mkdir(parents=True)
        git("init", "--quiet", "--initial-branch=main", str(work))
        for n in range(files):
            (work / f"file{n}.txt").write_text(f"content {n}\n", encoding="utf-8")
        (work / ".gitignore").write_text("node_modules/\n.env\n", encoding="utf-8")
        git("add", "--all", cwd=work)
        git("commit", "--quiet", "-m", "initial", cwd=work)
        git("clone", "--quiet", "--bare", str(work), str(self.bare(repo)))
        return self.bare(repo)

    def commit(self, repo: RepoRef, name: str) -> str:
        """A new commit on the origin's `main`; returns its id."""
        work = self.root / "work" / repo.owner / repo.name
        (work / name).write_text(name + "\n", encoding="utf-8")
        git("add", name, cwd=work)
        git("commit", "--quiet", "-m", name, cwd=work)
        git("push", "--quiet", str(self.bare(repo)), "main", cwd=work)
        return git("rev-parse", "HEAD", cwd=work)

    def pull_request(self, repo: RepoRef, number: int, *, files: dict[str, str] | None = None) -> str:
        """`refs/pull/<number>/head` on the origin, a commit on no branch (like a fork's) adding
        `files` (name: text) or one file of its own; its id."""
        work = self.root / "work" / repo.owner / repo.name
        branch = f"pr-{number}"
        pushed = bool(git("branch", "--list", branch, cwd=work))  # then this is a later push to it
        git("checkout", "--quiet", *([branch] if pushed else ["-b", branch]), cwd=work)
        for name, text in (files or {f"pr{number}.txt": "proposed\n"}).items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text, encoding="utf-8")
        git("add", "--all", cwd=work)
        git("commit", "--quiet", "--allow-empty", "-m", f"pull request {number}", cwd=work)
        git("push", "--quiet", str(self.bare(repo)), f"HEAD:refs/pull/{number}/head", cwd=work)
        head = git("rev-parse", "HEAD", cwd=work)
        git("checkout", "--quiet", "main", cwd=work)
        return head

    def force_push_pull(self, repo: RepoRef, number: int, *, files: dict[str, str]) -> str:
        """`refs/pull/<number>/head` force-pushed to a new commit on `main` adding only `files`
        (name: text): what the head held before is gone from it; its id."""
        work = self.root / "work" / repo.owner / repo.name
        git("checkout", "--quiet", "--detach", "main", cwd=work)
        for name, text in files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text, encoding="utf-8")
        git("add", "--all", cwd=work)
        git("commit", "--quiet", "-m", f"pull request {number}, force-pushed", cwd=work)
        git("push", "--quiet", "--force", str(self.bare(repo)), f"HEAD:refs/pull/{number}/head", cwd=work)
        head = git("rev-parse", "HEAD", cwd=work)
        git("checkout", "--quiet", "main", cwd=work)
        return head

    def tip(self, repo: RepoRef) -> str:
        return git("rev-parse", "refs/heads/main", cwd=self.bare(repo))

    def workspaces(self, state_root: Path, **options: object) -> GitWorkspaces:
        return GitWorkspaces(root=state_root / "clones", url_template=self.template, timeout=60, **options)  # type: ignore[arg-type]
