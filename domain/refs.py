"""Work item references, slugs and tmux targets."""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from domain.errors import AmbiguousRef, InvalidRef

DEFAULT_HOST = "github.com"
_NAME = r"[A-Za-z0-9_.-]+"
_HOST = r"[A-Za-z0-9.-]+(?::[0-9]{1,5})?"
_REF_RE = re.compile(rf"^github:(?:(?P<host>{_HOST})/)?(?P<owner>{_NAME})/(?P<repo>{_NAME})#(?P<number>[1-9][0-9]*)$")
_REPO_RE = re.compile(rf"^(?:(?P<host>{_HOST})/)?(?P<owner>{_NAME})/(?P<repo>{_NAME})$")
# what an operator may type for a work item: the full ref, [host/]owner/repo#N, #N, or its URL
_SHORT_RE = re.compile(rf"^(?:(?:(?P<host>{_HOST})/)?(?P<owner>{_NAME})/(?P<repo>{_NAME}))?#(?P<number>[1-9][0-9]*)$")
_URL_RE = re.compile(
    rf"^https?://(?P<host>{_HOST})/(?P<owner>{_NAME})/(?P<repo>{_NAME})/(?:issues|pull)/(?P<number>[1-9][0-9]*)"
    r"(?:/[A-Za-z0-9/_.-]*)?(?:[?#]\S*)?$"
)
_FORMS = "expected 'github:owner/repo#N', 'owner/repo#N', '#N' or the item's URL (https://HOST/OWNER/REPO/issues/N)"
_SLUG_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
TARGET_RE = re.compile(r"^loop-[A-Za-z0-9_-]+$")
# The old slug decodes back to exactly one ref when the owner has no dash and neither name a dot
# (the target turns `.` into `_`): the owner ends at the first dash, the number follows the last
_FAITHFUL_OWNER = re.compile(r"[A-Za-z0-9_]+")
_FAITHFUL_REPO = re.compile(r"[A-Za-z0-9_-]+")
_FAITHFUL_SLUG = re.compile(r"github-[A-Za-z0-9_]+-[A-Za-z0-9_-]+-[0-9]+")
HASH_HEX = 12  # 48 bits of sha256 of the exact ref: two refs with one readable form differ here


class Naming(enum.Enum):
    """Which rule named a session's tmux target, receipts folder and branch."""

    LEGACY = "legacy"  # before: two refs could share one name; kept for records written then
    INJECTIVE = "injective"  # the readable form, and a hash of the ref where that form lost some of it


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

    def served_at(self, url: str) -> bool:
        """`url` names this repository's host (its port aside: a host's git and API may answer on
        different ones): where a credential for the repository may be sent."""
        return (urlsplit(url).hostname or "") == (urlsplit(f"https://{self.host}").hostname or "")

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
        """Names this item's folders, branch and tmux session; no other ref has it. A readable form
        that is faithful is the slug as it always was (it ends with the item's number); any other
        gets `-x` and a hash of the ref, a suffix no faithful form ends with."""
        readable = self.slug_by(Naming.LEGACY)
        if self._faithful:
            return readable
        digest = hashlib.sha256(str(self).encode("utf-8")).hexdigest()[:HASH_HEX]
        return f"{readable}-x{digest}"

    def slug_by(self, naming: Naming) -> str:
        if naming is Naming.LEGACY:
            return _SLUG_UNSAFE.sub("-", str(self))
        return self.slug

    @property
    def targets(self) -> frozenset[TmuxTarget]:
        """Every name a session of this item may have: its own, and the one a record written
        before names were injective keeps."""
        return frozenset(TmuxTarget.for_slug(self.slug_by(naming)) for naming in Naming)

    @property
    def owns_legacy_slug(self) -> bool:
        """Whether the old slug can name nothing but this item's folders: it is this item's slug,
        or no faithful slug of another item looks like it."""
        legacy = self.slug_by(Naming.LEGACY)
        return legacy == self.slug or _FAITHFUL_SLUG.fullmatch(legacy) is None

    @property
    def _faithful(self) -> bool:
        repo = self.repo
        return (
            repo.host == DEFAULT_HOST
            and _FAITHFUL_OWNER.fullmatch(repo.owner) is not None
            and _FAITHFUL_REPO.fullmatch(repo.name) is not None
        )

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


@dataclass(frozen=True, slots=True)
class ItemSpec:
    """A work item as an operator typed it; `resolve` makes it a ref against the watched repositories."""

    number: int
    owner: str | None = None  # None: `#N`, any watched repository
    name: str | None = None
    host: str | None = None  # None: the watched repository's, else the configured host
    exact: WorkItemRef | None = None  # the full form or a URL: nothing to resolve

    @classmethod
    def parse(cls, text: str) -> ItemSpec:
        text = text.strip()
        if text.startswith("github:"):
            ref = WorkItemRef.parse(text)
            return cls(number=ref.number, exact=ref)
        url = _URL_RE.match(text)
        if url is not None and {url["owner"], url["repo"]}.isdisjoint({".", ".."}):
            host = DEFAULT_HOST if url["host"] in {DEFAULT_HOST, "www.github.com"} else url["host"]
            repo = RepoRef(host=host, owner=url["owner"], name=url["repo"])
            return cls(number=int(url["number"]), exact=WorkItemRef(repo=repo, number=int(url["number"])))
        short = _SHORT_RE.match(text)
        if short is None or not {short["owner"], short["repo"]}.isdisjoint({".", ".."}):
            raise InvalidRef(f"not a work item {text!r}: {_FORMS}")
        return cls(number=int(short["number"]), owner=short["owner"], name=short["repo"], host=short["host"])

    def resolve(self, watched: Sequence[RepoRef], *, host: str) -> WorkItemRef:
        """The one ref this names: a watched repository of that name (any, for `#N`), else one on `host`."""
        if self.exact is not None:
            return self.exact
        candidates = [repo for repo in dict.fromkeys(watched) if self._names(repo)]
        if len(candidates) == 1:
            return WorkItemRef(repo=candidates[0], number=self.number)
        if candidates:
            listed = ", ".join(str(WorkItemRef(repo=repo, number=self.number)) for repo in candidates)
            raise AmbiguousRef(f"work item #{self.number} is ambiguous: it may be {listed}; give one of them")
        if self.owner is None or self.name is None:
            raise InvalidRef(f"work item #{self.number}: no repository is watched; give it as 'owner/repo#N'")
        return WorkItemRef(repo=RepoRef(host=self.host or host, owner=self.owner, name=self.name), number=self.number)

    def _names(self, repo: RepoRef) -> bool:
        if self.owner is None or self.name is None:
            return True
        same = (repo.owner.lower(), repo.name.lower()) == (self.owner.lower(), self.name.lower())
        return same and (self.host is None or repo.host == self.host)
