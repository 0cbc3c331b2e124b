"""What `doctor` asks of the GitHub App: its key, GitHub taking its JWT, its installation on a repository
and what that installation was granted."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Unpack

from adapters.github.app_auth import AppInstallations, GitHubApp
from adapters.github.app_key import AppKey
from adapters.github.gh import GhApi, GhOptions
from adapters.github.reply import check
from domain.errors import LoopError, TrackerError
from domain.github_app import InstallationGrant
from domain.refs import RepoRef


class GhAppProbe:
    """Implements `app.cli.doctor.GitHubAppProbe` (structurally: adapters do not import app).

    Failure modes: `LoopError` naming the cause — the key file unusable (`AppKeyError`), GitHub
    refusing the JWT or knowing no installation, gh failing (`TrackerError`).
    """

    def __init__(
        self,
        *,
        app_id: int,
        key_file: Path,
        installations: Mapping[str, int],
        clock: Callable[[], float],
        monotonic: Callable[[], float],
        **gh: Unpack[GhOptions],
    ) -> None:
        self._app_id, self._key_file, self._named = app_id, key_file, dict(installations)
        self._clock, self._monotonic = clock, monotonic
        self._api = GhApi(**gh)
        self._installations: AppInstallations | None = None

    def key(self) -> str:
        key = AppKey.read(self._app_id, self._key_file)
        app = GitHubApp(key, installations=self._named)
        self._installations = AppInstallations(app, self._api, clock=self._clock, monotonic=self._monotonic)
        return f"{self._key_file}: an RSA key of {key.bits} bits, its owner's alone"

    def app(self) -> str:
        installations, where = self._read(), f"GitHub App {self._app_id}"
        about = installations.whoami(where)
        name = about.get("name") or about.get("slug") or "unnamed"
        return f"GitHub takes its JWT: {name} (app {self._app_id}), writing as {installations.bot_login(where)}"

    def installation(self, repo: RepoRef) -> str:
        installations = self._read()
        number = installations.installation(repo)
        token = installations.token(repo)
        reply = self._api.call(str(repo), "GET", f"repos/{repo.full_name}", token=token)
        check(reply, str(repo), now=self._clock())
        return f"installation {number}: its token reads {repo.full_name}"

    def git_env(self, repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> Mapping[str, str]:
        installations = self._read()
        try:
            if refused is None:
                return self._api.token_env(installations.token(repo))
            return self._api.token_env(installations.refreshed(repo, self._api.token_in(refused)))
        except TrackerError as error:
            raise LoopError(str(error)) from None

    def grant(self, repo: RepoRef) -> InstallationGrant:
        doc = self._read().described(repo)
        account, permissions, events = doc.get("account"), doc.get("permissions"), doc.get("events")
        number, login = doc.get("id"), account.get("login") if isinstance(account, dict) else None
        if not (isinstance(number, int) and isinstance(login, str) and isinstance(permissions, dict)):
            raise TrackerError(
                f"{repo}: malformed reply about the GitHub App's installation (id, account, permissions)"
            )
        return InstallationGrant(
            number,
            login,
            organization=doc.get("target_type") == "Organization",
            permissions={str(key): str(value) for key, value in permissions.items()},
            events=tuple(str(event) for event in events) if isinstance(events, list) else (),
        )

    def _read(self) -> AppInstallations:
        if self._installations is None:
            raise LoopError(f"{self._key_file}: the GitHub App's key is not read yet")
        return self._installations
