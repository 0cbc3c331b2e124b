"""What the-loop needs of the GitHub App it acts as: the permissions and events, in one table that
`init --app`, the App's manifest, `doctor` and docs/github-app.md all read; and what an
installation lacks of them, from what GitHub says it was granted."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass


class Access(enum.Enum):
    """A GitHub App permission's level, as GitHub names it, least first."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    def at_least(self, other: Access) -> bool:
        return _RANK[self] >= _RANK[other]

    @property
    def shown(self) -> str:
        """As GitHub's settings page says it."""
        return {Access.READ: "Read-only", Access.WRITE: "Read and write", Access.ADMIN: "Admin"}[self]


_RANK = {access: rank for rank, access in enumerate(Access)}


class Scope(enum.Enum):
    """Where a permission is on the App's settings page (Permissions & events)."""

    REPOSITORY = "Repository permissions"
    ORGANIZATION = "Organization permissions"


@dataclass(frozen=True, slots=True)
class AppPermission:
    """One permission: its API name (a manifest's and an installation's key), its title on GitHub's
    settings page, the access needed, what for, and the webhook events the App subscribes to that
    it offers. One not `essential` leaves polling whole: only the events it offers are missed."""

    key: str
    title: str
    access: Access
    scope: Scope
    purpose: str
    events: tuple[str, ...] = ()
    essential: bool = True

    @property
    def shown(self) -> str:
        return f"{self.title}: {self.access.shown}"


PERMISSIONS: tuple[AppPermission, ...] = (
    AppPermission(
        "issues",
        "Issues",
        Access.WRITE,
        Scope.REPOSITORY,
        "listing labelled issues, reading their comments and events, posting notices, reacting, editing its"
        " own notices",
        ("issue_comment", "issues"),
    ),
    AppPermission(
        "pull_requests",
        "Pull requests",
        Access.WRITE,
        Scope.REPOSITORY,
        "the same on pull requests, their review comments and heads",
        ("pull_request_review_comment", "pull_request_review", "pull_request"),
    ),
    AppPermission("contents", "Contents", Access.READ, Scope.REPOSITORY, "the code, for a worktree's clone"),
    AppPermission("metadata", "Metadata", Access.READ, Scope.REPOSITORY, "mandatory for every App: GitHub selects it"),
    AppPermission(
        "members",
        "Members",
        Access.READ,
        Scope.ORGANIZATION,
        "the events saying who may steer has changed",
        ("member", "membership", "organization", "team"),
        essential=False,
    ),
)

# every event the App subscribes to; GitHub sends `installation` and `installation_repositories` to every
# App unasked
EVENTS: tuple[str, ...] = tuple(event for permission in PERMISSIONS for event in permission.events)


@dataclass(frozen=True, slots=True)
class InstallationGrant:
    """What GitHub says one installation of the App was granted (`GET /app/installations/{id}`):
    the permissions its owner accepted and the events it is sent."""

    installation: int
    account: str
    organization: bool  # installed on an organization, not a user's own account
    permissions: Mapping[str, str]
    events: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Shortfall:
    """A permission an installation lacks or holds below what is needed (`granted` None: lacks it)."""

    permission: AppPermission
    granted: Access | None


def shortfalls(grant: InstallationGrant) -> list[Shortfall]:
    """Each permission of the table the installation lacks or holds too low, in the table's order;
    an organization's permissions only where it is an organization's."""
    found = []
    for permission in _applying(grant):
        granted = _access(grant.permissions.get(permission.key))
        if granted is None or not granted.at_least(permission.access):
            found.append(Shortfall(permission, granted))
    return found


def missing_events(grant: InstallationGrant) -> list[str]:
    """The events of the table the installation is not sent, in the table's order (an organization's
    only where it is an organization's)."""
    return [event for permission in _applying(grant) for event in permission.events if event not in grant.events]


def _applying(grant: InstallationGrant) -> list[AppPermission]:
    return [p for p in PERMISSIONS if p.scope is Scope.REPOSITORY or grant.organization]


def _access(value: str | None) -> Access | None:
    try:
        return Access(value) if value is not None else None
    except ValueError:
        return None  # a level GitHub may add later counts as none until it is known
