"""Which installation of the GitHub App serves each repository, as this process knows it, and what
GitHub's `installation` and `installation_repositories` events change of that."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from domain.refs import RepoRef


class InstallationAction(enum.StrEnum):
    """What GitHub says happened to an installation (the delivery's `action`)."""

    CREATED = "created"
    DELETED = "deleted"
    SUSPEND = "suspend"
    UNSUSPEND = "unsuspend"
    NEW_PERMISSIONS_ACCEPTED = "new_permissions_accepted"
    ADDED = "added"  # `installation_repositories`: repositories given to it
    REMOVED = "removed"  # `installation_repositories`: repositories taken from it


# a token held for the installation is no good after these: GitHub refuses it (deleted, suspended),
# or it carries the permissions from before the new ones were accepted
DROPS_TOKENS = frozenset(
    {InstallationAction.DELETED, InstallationAction.SUSPEND, InstallationAction.NEW_PERMISSIONS_ACCEPTED}
)


@dataclass(frozen=True, slots=True)
class InstallationChange:
    """What one signed `installation` or `installation_repositories` delivery says: the repositories
    it names as now the installation's (`added`; a new one's all) and as no longer its (`removed`)."""

    installation: int
    action: InstallationAction
    added: frozenset[RepoRef] = frozenset()
    removed: frozenset[RepoRef] = frozenset()


def _key(repo: RepoRef) -> str:
    return f"{repo.host}/{repo.full_name}".lower()  # GitHub's owner and repository names ignore case


_EMPTY: Mapping[str, int] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Installations:
    """The installations known: the configuration's, by `owner/repo` or `owner` (`named`), those
    looked up or announced for a repository (`found`), the repositories taken from an installation
    since (`removed`: not that installation's any more) and the installations deleted (`gone`).

    A repository's installation is the configuration's, unless that one was deleted or the
    repository taken from it; else the one found; else none known, to be looked up.
    """

    named: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    found: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    removed: Mapping[str, int] = field(default_factory=lambda: _EMPTY)
    gone: frozenset[int] = frozenset()

    @classmethod
    def configured(cls, named: Mapping[str, int]) -> Installations:
        return cls(named=MappingProxyType({name.lower(): number for name, number in named.items()}))

    def serving(self, repo: RepoRef) -> int | None:
        """The installation that serves `repo`, or None: not known, to be looked up."""
        named = self.named.get(repo.full_name.lower(), self.named.get(repo.owner.lower()))
        if named is not None and named not in self.gone and self.removed.get(_key(repo)) != named:
            return named
        return self.found.get(_key(repo))

    def taken_from(self, repo: RepoRef) -> int | None:
        """The installation `repo` was last taken from, while no other took it since."""
        return self.removed.get(_key(repo))

    def without(self, installation: int) -> Installations:
        """Every repository found for `installation` forgotten: each is looked up again."""
        return replace(self, found=_proxy({k: n for k, n in self.found.items() if n != installation}))

    def with_repos(self, repos: Iterable[RepoRef], installation: int) -> Installations:
        """GitHub named `installation` as these repositories' (a look-up, or an event adding them)."""
        keys = {_key(repo) for repo in repos}
        return replace(
            self,
            found=_proxy({**self.found, **dict.fromkeys(keys, installation)}),
            removed=_proxy({k: n for k, n in self.removed.items() if k not in keys}),
        )

    def without_repos(self, repos: Iterable[RepoRef], installation: int) -> Installations:
        """GitHub took these repositories from `installation`."""
        keys = {_key(repo) for repo in repos}
        found = {k: n for k, n in self.found.items() if not (k in keys and n == installation)}
        return replace(self, found=_proxy(found), removed=_proxy({**self.removed, **dict.fromkeys(keys, installation)}))

    def deleted(self, installation: int) -> Installations:
        """`installation` is no more: it serves nothing, even where the configuration names it."""
        removed = {k: n for k, n in self.removed.items() if n != installation}
        return replace(self.without(installation), removed=_proxy(removed), gone=self.gone | {installation})


def _proxy(mapping: dict[str, int]) -> Mapping[str, int]:
    return MappingProxyType(mapping)


def installation_changed(known: Installations, change: InstallationChange) -> Installations:
    """What is known after `change`: a new installation's repositories and those added are its; those
    removed are not (their next call looks again); a deleted installation serves nothing, even where
    the configuration names it. A suspension, its end and new permissions change no repository."""
    number = change.installation
    if change.action is InstallationAction.DELETED:
        return known.deleted(number)
    if change.action in {InstallationAction.CREATED, InstallationAction.ADDED}:
        known = known.with_repos(change.added, number)
    if change.action is InstallationAction.REMOVED:
        known = known.without_repos(change.removed, number)
    return known
