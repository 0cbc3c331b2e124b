"""What the GitHub App's own webhook deliveries say beyond a repository's: the installation each
came through, and what an `installation` or `installation_repositories` event changed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from domain.errors import InvalidRef, TrackerError
from domain.installations import InstallationAction, InstallationChange
from domain.refs import RepoRef

# what each of GitHub's events about the App's installations may say; another action is not read
_INSTALLATION_ACTIONS = {
    "installation": frozenset(
        {
            InstallationAction.CREATED,
            InstallationAction.DELETED,
            InstallationAction.SUSPEND,
            InstallationAction.UNSUSPEND,
            InstallationAction.NEW_PERMISSIONS_ACCEPTED,
        }
    ),
    "installation_repositories": frozenset({InstallationAction.ADDED, InstallationAction.REMOVED}),
}


def installation_of(event: str, payload: dict[str, Any]) -> int:
    """The installation a GitHub App's delivery came through (`installation.id`)."""
    raw = payload.get("installation")
    number = raw.get("id") if isinstance(raw, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise TrackerError(f"webhook {event}: the GitHub App's delivery names no installation")
    return number


def installation_change_of(event: str, payload: dict[str, Any]) -> InstallationChange | None:
    """What an `installation` or `installation_repositories` delivery says, or None for any other
    event or action. Its repositories are on the installation's host (its page's)."""
    actions = _INSTALLATION_ACTIONS.get(event, frozenset())
    action = next((a for a in actions if a.value == payload.get("action")), None)
    if action is None:
        return None
    number = installation_of(event, payload)
    try:
        host = urlsplit(str(payload["installation"]["html_url"])).netloc
        if not host:
            raise ValueError("no host in the installation's html_url")
        if event == "installation":
            added = _repos(payload.get("repositories"), host) if action is InstallationAction.CREATED else set()
            removed: set[RepoRef] = set()
        else:
            added, removed = (_repos(payload.get(f"repositories_{side}"), host) for side in ("added", "removed"))
    except (KeyError, TypeError, ValueError, InvalidRef) as error:
        raise TrackerError(f"webhook {event}: malformed payload ({error!r})") from error
    return InstallationChange(number, action, frozenset(added), frozenset(removed))


def _repos(raw: Iterable[dict[str, Any]] | None, host: str) -> set[RepoRef]:
    repos = {RepoRef.parse(str(entry["full_name"]), host=host) for entry in raw or ()}
    if any(repo.host != host for repo in repos):  # a full name carrying a host of its own is not GitHub's
        raise ValueError("a host in a repository's full name")
    return repos
