"""What the GitHub stand-in holds: repositories, issues and pull requests, comments, reactions."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.github_standin.app import AppSide

START = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


_LEGACY = {"maintain": "write", "triage": "read"}  # GitHub's `permission` of these base roles


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Issue:
    number: int
    title: str
    author: str
    labels: list[str]
    created_at: datetime
    updated_at: datetime
    pull_request: bool = False
    state: str = "open"
    merged_at: datetime | None = None
    body: str = ""
    listed: bool = True  # False: its last change is not in listings yet (eventual consistency)
    head_repo: str | None = None  # a pull request's head repository: None its own, "" a deleted fork
    head_sha: str = "0" * 40
    events: list[tuple[str, str, datetime]] = field(default_factory=list)  # labeled/unlabeled, label, when


@dataclass
class Note:
    """An issue comment or a pull-request review comment."""

    id: int
    number: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    review: bool = False
    path: str | None = None
    line: int | None = None
    listed: bool = True  # False: not in listings yet (eventual consistency)
    editor: str | None = None  # who last edited it (GraphQL's `editor`); None: never edited

    @property
    def node_id(self) -> str:
        return f"{'PRRC' if self.review else 'IC'}_standin{self.id}"


@dataclass
class Repo:
    owner: str
    name: str
    visible: bool = True
    issues: dict[int, Issue] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    # each collaborator's (casefolded login) `role_name` and legacy `permission`, as GitHub answers them
    collaborators: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class Failure:
    """An injected misbehaviour for requests whose path matches the regex `path` (and `method`)."""

    path: str
    status: int = 500
    body: bytes | None = None  # None: a JSON message; bytes: sent as they are (malformed JSON)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    times: int | None = 1  # None: every time
    method: str | None = None


@dataclass
class Hook:
    """Something to do to the world right after a request whose path matches `path` is served."""

    path: str
    action: Callable[[], None]
    times: int = 1


@dataclass
class World:
    """The stand-in's state and its own clock (the `Date` header and every timestamp)."""

    token: str = "standin-token"
    app: AppSide | None = None  # set: only the App's installation tokens are taken (tests/github_standin/app.py)
    login: str = "the-loop-bot"
    now: datetime = START
    host: str = "localhost"
    repos: dict[str, Repo] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    hooks: list[Hook] = field(default_factory=list)
    reactions: list[tuple[str, int, str]] = field(default_factory=list)  # repo, comment id, content
    reactors: list[tuple[str, int, str, str, str]] = field(default_factory=list)  # the same, and the user: login, type
    posted: list[tuple[str, int, str]] = field(default_factory=list)  # repo, number, body
    rate_limit: int = 5000
    rate_remaining: int = 5000
    poll_interval: int | None = None
    requests: int = 0
    not_modified: int = 0
    log: list[tuple[str, str, int]] = field(default_factory=list)  # method, path, status
    lock: threading.RLock = field(default_factory=threading.RLock)
    _next_id: int = 1000

    # --- arranging -----------------------------------------------------------------------

    def tick(self, seconds: float = 1.0) -> None:
        self.now += timedelta(seconds=seconds)

    def add_repo(self, full_name: str, *, visible: bool = True) -> Repo:
        owner, name = full_name.split("/")
        return self.repos.setdefault(full_name, Repo(owner, name, visible))

    def add_issue(
        self,
        full_name: str,
        number: int | None = None,
        *,
        title: str = "",
        author: str = "alice",
        labels: tuple[str, ...] = ("loop",),
        pull_request: bool = False,
        body: str = "",
    ) -> Issue:
        repo = self.add_repo(full_name)
        number = number or max(repo.issues, default=0) + 1
        issue = Issue(
            number, title or f"item {number}", author, list(labels), self.now, self.now, pull_request, body=body
        )
        issue.events = [("labeled", label, self.now) for label in labels]  # as GitHub records them
        repo.issues[number] = issue
        return issue

    def add_comment(
        self,
        full_name: str,
        number: int,
        body: str,
        *,
        author: str = "alice",
        review: bool = False,
        path: str | None = None,
        line: int | None = None,
        listed: bool = True,
    ) -> Note:
        repo = self.repos[full_name]
        self._next_id += 1
        note = Note(self._next_id, number, author, body, self.now, self.now, review, path, line, listed)
        repo.notes.append(note)
        repo.issues[number].updated_at = self.now
        return note

    def edit_comment(self, full_name: str, comment_id: int, body: str, *, editor: str | None = None) -> None:
        repo = self.repos[full_name]
        note = next(n for n in repo.notes if n.id == comment_id)
        note.body, note.updated_at, note.editor = body, self.now, editor or note.author
        repo.issues[note.number].updated_at = self.now

    def set_labels(self, full_name: str, number: int, labels: tuple[str, ...], *, listed: bool = True) -> None:
        issue = self.repos[full_name].issues[number]
        issue.events += [("unlabeled", label, self.now) for label in issue.labels if label not in labels]
        issue.events += [("labeled", label, self.now) for label in labels if label not in issue.labels]
        issue.labels, issue.updated_at, issue.listed = list(labels), self.now, listed

    def delete_comment(self, full_name: str, comment_id: int) -> None:
        repo = self.repos[full_name]
        repo.notes = [n for n in repo.notes if n.id != comment_id]

    def grant(self, full_name: str, login: str, role: str, *, permission: str | None = None) -> None:
        """`login` holds `role` on the repository; `permission` is its legacy name, which GitHub derives
        from a base role (maintain reads as write, triage as read) and states for a custom one."""
        legacy = permission or _LEGACY.get(role, role)
        self.add_repo(full_name).collaborators[login.casefold()] = (role, legacy)

    def after(self, path: str, action: Callable[[], None], *, times: int = 1) -> None:
        """Run `action` right after the next `times` requests whose path matches the regex `path`."""
        self.hooks.append(Hook(path, action, times))

    def list_late(self, full_name: str) -> None:
        """What was held back from listings shows up now, with its own (older) time stamps."""
        repo = self.repos[full_name]
        for issue in repo.issues.values():
            issue.listed = True
        for note in repo.notes:
            note.listed = True

    def close(self, full_name: str, number: int, *, merged: bool = False) -> None:
        issue = self.repos[full_name].issues[number]
        issue.state, issue.updated_at = "closed", self.now
        issue.merged_at = self.now if merged else None

    def fail(self, path: str, **how: Any) -> Failure:
        failure = Failure(path, **how)
        self.failures.append(failure)
        return failure

    def actor(self) -> str:
        """Whose login a write is made as: in App mode, every write carries an installation token and
        GitHub signs it with the App's bot; else the token's user."""
        return self.login if self.app is None else self.app.bot_login

    # --- reading back --------------------------------------------------------------------

    def requests_for(self, full_name: str) -> list[tuple[str, str, int]]:
        return [entry for entry in self.log if f"/repos/{full_name}" in entry[1]]

    def reset_counters(self) -> None:
        self.requests, self.not_modified, self.log = 0, 0, []
