"""Who may steer a work item: the logins listed, and — when a permission is named — whoever holds at
least it on the item's repository as GitHub says; a login denied never. Permissions come in as
answers the app layer asked for before the rule runs, so the rule stays a function of values."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from domain.model import Comment
from domain.refs import DEFAULT_HOST, RepoRef, WorkItemRef

Login = tuple[str, str]  # (host, login), casefolded: a login names a person on one host
PermissionKey = tuple[str, str, str]  # (host, owner/repo, login), casefolded


class Permission(enum.Enum):
    """A login's role on a repository, as GitHub names it, least first."""

    NONE = "none"  # not a collaborator (GitHub answers 404, or says so)
    READ = "read"
    TRIAGE = "triage"
    WRITE = "write"
    MAINTAIN = "maintain"
    ADMIN = "admin"

    def at_least(self, other: Permission) -> bool:
        return _RANK[self] >= _RANK[other]


_RANK = {permission: rank for rank, permission in enumerate(Permission)}


class Standing(enum.Enum):
    """Where an author stands with the rule on one repository, and why."""

    LISTED = "listed"  # named in the list of users
    PERMITTED = "permitted"  # their permission on the item's repository is at least the rule's
    DENIED = "denied"  # named in the deny list: whatever else is said of them
    NOT_LISTED = "not-listed"  # not in the list, and no permission is named (or no login at all)
    BELOW = "below"  # their permission on the item's repository is less than the rule's
    UNKNOWN = "unknown"  # a permission would decide, and it is not known (its lookup failed): never a guess

    @property
    def steers(self) -> bool:
        return self in {Standing.LISTED, Standing.PERMITTED}


@dataclass(frozen=True, slots=True)
class AccessChange:
    """GitHub said who may do what has changed (a webhook delivery of a `member`, `membership`,
    `organization` or `team` event, `event`): the permissions it may have changed are read again."""

    event: str
    repo: RepoRef | None = None  # only this repository's permissions (a `member` event's); None: any

    def covers(self, key: PermissionKey) -> bool:
        # the delivery names no host a permission key could be matched on with certainty: every host's
        return self.repo is None or key[1] == self.repo.full_name.casefold()


def permission_key(repo: RepoRef, login: str) -> PermissionKey:
    """Whose permission on which repository: GitHub compares hosts, names and logins without case."""
    return (repo.host.casefold(), repo.full_name.casefold(), login.casefold())


@dataclass(frozen=True, slots=True)
class Authorized:
    """`routing.authorize` (`routing.authorizedUsers` is its `users`): each entry a login on one
    GitHub host — `alice` of github.com and `alice` of an Enterprise host are two people. An entry
    `alice` names a login on the configured host, `ghe.example.com/alice` one on that host. Logins
    and hosts compare case-insensitively. `answers` are the permissions known for this decision, by
    `permission_key`: on the item's own repository, so a fork's author counts only by what they hold
    on the repository the pull request is made to."""

    logins: frozenset[Login] = frozenset()
    denied: frozenset[Login] = frozenset()
    permission: Permission | None = None  # the least that authorizes; None: only the listed logins
    answers: Mapping[PermissionKey, Permission] = field(default_factory=dict, hash=False)

    @classmethod
    def parse(
        cls,
        entries: Iterable[str],
        *,
        host: str = DEFAULT_HOST,
        also: Iterable[str] = (),
        deny: Iterable[str] = (),
        permission: Permission | None = None,
    ) -> Authorized:
        """A bare login names one on `host`, and on each host of `also` (the sandbox tracker's, whose
        logins are local names, not GitHub's)."""
        bare = {host.casefold(), *(other.casefold() for other in also)}
        return cls(_logins(entries, bare), _logins(deny, bare), permission)

    def logins_on(self, host: str) -> tuple[str, ...]:
        return tuple(sorted(login for where, login in self.logins if where == host.casefold()))

    def knowing(self, answers: Mapping[PermissionKey, Permission]) -> Authorized:
        """The same rule, with these permissions known as well."""
        return replace(self, answers={**self.answers, **answers}) if answers else self

    def standing(self, login: str | None, *, repo: RepoRef) -> Standing:
        if not login:
            return Standing.NOT_LISTED
        person = (repo.host.casefold(), login.casefold())
        if person in self.denied:
            return Standing.DENIED
        if person in self.logins:
            return Standing.LISTED
        if self.permission is None:
            return Standing.NOT_LISTED
        held = self.answers.get(permission_key(repo, login))
        if held is None:
            return Standing.UNKNOWN
        return Standing.PERMITTED if held.at_least(self.permission) else Standing.BELOW

    def to_ask(self, login: str | None, *, repo: RepoRef) -> bool:
        """Whether `login`'s permission on `repo` would decide, and is not known yet."""
        return self.standing(login, repo=repo) is Standing.UNKNOWN


def is_authorized(login: str | None, authorized: Authorized, *, repo: RepoRef) -> bool:
    """An empty rule authorizes nobody, and no login is nobody; a login is a person only on its host."""
    return authorized.standing(login, repo=repo).steers


def _logins(entries: Iterable[str], bare: set[str]) -> frozenset[Login]:
    pairs = (entry.strip().rpartition("/") for entry in entries)
    return frozenset(
        (each, login.casefold()) for where, _, login in pairs for each in ([where.casefold()] if where else bare)
    )


def steering_logins(comments: Iterable[Comment]) -> list[tuple[WorkItemRef, str]]:
    """Whose standing decides what `comments` become: each one's author, and its editor when it was
    edited before it was read (not the-loop's own comments, which are never prompts)."""
    found = [
        (comment.item, login)
        for comment in comments
        if not comment.is_ours
        for login in (comment.author, comment.editor if comment.edited else None)
        if login
    ]
    return list(dict.fromkeys(found))
