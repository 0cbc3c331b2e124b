"""A login's role on a repository, as GitHub's collaborator permission says it."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from adapters.github.client import GhClient
from domain.authorize import Permission
from domain.errors import TrackerError
from domain.refs import RepoRef

_ROLES = {p.value: p for p in Permission}


def permission(client: GhClient, repo: RepoRef, login: str) -> Permission:
    """`GET /repos/{owner}/{repo}/collaborators/{login}/permission`: one request. GitHub answers 404
    for a login who is not a collaborator (or a repository the token cannot see): none. A 403 (the
    token has no push access) or any other failure is the client's `TrackerError`."""
    where = str(repo)
    path = f"repos/{repo.full_name}/collaborators/{quote(login, safe='')}/permission"
    reply = client.send(repo, "GET", path, absent_ok=True)
    if reply.status == 404:
        return Permission.NONE
    raw = reply.json(where)
    if not isinstance(raw, dict):
        raise TrackerError(f"{where}: malformed reply for the permission of {login} (expected an object)")
    return _role(raw, login, where)


def _role(raw: dict[str, Any], login: str, where: str) -> Permission:
    """`role_name` names the role in full (maintain, triage, or an organization's custom role);
    `permission` is its legacy base (admin, write, read, none), which a custom role falls back to —
    never more than the role grants."""
    for field in ("role_name", "permission"):
        found = _ROLES.get(str(raw.get(field) or "").casefold())
        if found is not None:
            return found
    raise TrackerError(f"{where}: the permission of {login} is not one GitHub names ({raw.get('permission')!r})")
