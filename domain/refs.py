"""Work item references, slugs and tmux targets."""

from __future__ import annotations

import re
from dataclasses import dataclass

from domain.errors import InvalidRef

DEFAULT_HOST = "github.com"
_NAME = r"[A-Za-z0-9_.-]+"
_HOST = r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?"
_REF_RE = re.compile(rf"^github:(?:(?P<host>{_HOST})/)?(?P<owner>{_NAME})/(?P<repo>{_NAME})#(?P<number>[1-9][0-9]*)$")
_REPO_RE = re.compile(rf"^(?:(?P<host>{_HOST})/)?(?P<owner>{_NAME})/(?P<repo>{_NAME})$")
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
TARGET_RE = re.compile(r"^loop-[A-Za-z0-9_-]+$")


@dataclass(frozen=True, slots=True, order=True)
class RepoRef:
    """One repository: `owner/repo` on `host`."""

    host: str
    owner: str
    name: str

    @classmethod
    def parse(cls, text: str, *, host: str = DEFAULT_HOST) -> RepoRef:
        match = _REPO_RE.match(text.strip())
        if match is None or match["owner"] in {".", ".."} or match["repo"] in {".", ".."}:
            raise InvalidRef(f"not a repository {text!r}: expected 'owner/repo' or 'host/owner/repo'")
        return cls(host=match["host"] or host, owner=match["owner"], name=match["repo"])

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def __str__(self) -> str:
        prefix = "" if self.host == DEFAULT_HOST else f"{self.host}/"
        return f"{prefix}{self.full_name}"


@dataclass(frozen=True, slots=True, order=True)
class WorkItemRef:
    """A GitHub issue or pull request: `github:owner/repo#N` or `github:host/owner/repo#N`."""

    repo: RepoRef
    number: int

    @classmethod
    def parse(cls, text: str) -> WorkItemRef:
        match = _REF_RE.match(text.strip())
        if match is None or match["owner"] in {".", ".."} or match["repo"] in {".", ".."}:
            raise InvalidRef(
                f"not a work item ref {text!r}: expected 'github:owner/repo#N' or 'github:host/owner/repo#N'"
            )
        repo = RepoRef(host=match["host"] or DEFAULT_HOST, owner=match["owner"], name=match["repo"])
        return cls(repo=repo, number=int(match["number"]))

    def __str__(self) -> str:
        return f"github:{self.repo}#{self.number}"

    @property
    def slug(self) -> str:
        return _SLUG_UNSAFE.sub("-", str(self))

    @property
    def target(self) -> TmuxTarget:
        return TmuxTarget.for_slug(self.slug)


@dataclass(frozen=True, slots=True)
class TmuxTarget:
    """A tmux session name the-loop minted: `loop-<slug>` with `.` and `:` as `_`."""

    name: str

    def __post_init__(self) -> None:
        if not TARGET_RE.match(self.name):
            raise InvalidRef(f"not a the-loop tmux target: {self.name!r}")

    @classmethod
    def for_slug(cls, slug: str) -> TmuxTarget:
        return cls("loop-" + slug.replace(".", "_").replace(":", "_"))

    @property
    def exact(self) -> str:
        # '=' makes the target exact; a plain name prefix-matches another session
        return f"={self.name}"

    def __str__(self) -> str:
        return self.name
