"""Acting as a GitHub App: each repository's installation, and that installation's token for its calls."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from adapters.github.app_tokens import InstallationTokens, Minted
from adapters.github.gh import GhApi
from adapters.github.payloads import parse_time
from adapters.github.reply import Reply, check
from domain.errors import TrackerError
from domain.installations import DROPS_TOKENS, InstallationChange, Installations, installation_changed
from domain.ports import InstallationsPort
from domain.refs import RepoRef

if TYPE_CHECKING:  # the key's module loads PyJWT and cryptography: only when an App is configured
    from adapters.github.app_key import AppKey

REFRESH_MARGIN = 300.0  # seconds before its expiry a token is replaced (GitHub's live an hour)


@dataclass(frozen=True, slots=True)
class GitHubApp:
    """The App the-loop acts as: its key, the installations the configuration names by `owner/repo`
    or `owner` (the others are looked up), and how long before expiring a token is replaced."""

    key: AppKey
    installations: Mapping[str, int] = field(default_factory=dict)
    refresh_margin: float = REFRESH_MARGIN


class AppInstallations(InstallationsPort):
    """The token every call on a repository is made with: its installation's, kept by
    `InstallationTokens`. The App's own requests (finding an installation, asking a token) carry a
    JWT signed for each one. Failures are `TrackerError`s naming the repository.

    Which installation serves each repository is one `Installations` value, replaced whole under a
    lock: what the configuration names, what was looked up, and what the App's webhook said since."""

    def __init__(self, app: GitHubApp, api: GhApi, *, clock: Callable[[], float], monotonic: Callable[[], float]):
        self._app = app
        self._api = api
        self._clock = clock
        self._tokens = InstallationTokens(margin=app.refresh_margin, monotonic=monotonic)
        self._known = Installations.configured(app.installations)
        self._lock = threading.Lock()
        self._about: dict[str, Any] | None = None
        self._asking_about = threading.Lock()

    def token(self, repo: RepoRef) -> str:
        installation = self.installation(repo)
        return self._tokens.token(installation, lambda: self._exchange(installation, repo))

    def refreshed(self, repo: RepoRef, stale: str) -> str:
        """A token instead of `stale`, which GitHub refused (401): expired early, or revoked."""
        installation = self.installation(repo)
        return self._tokens.refreshed(installation, stale, lambda: self._exchange(installation, repo))

    def installation(self, repo: RepoRef) -> int:
        """The configuration's installation for the repository or its owner, else the one GitHub
        names for it (asked once, then remembered until it is gone or the repository is taken from it)."""
        serving = self.serving(repo)
        if serving is None:
            serving = self._look_up(repo)
            with self._lock:
                self._known = self._known.with_repos([repo], serving)
        return serving

    def known(self) -> Installations:
        with self._lock:
            return self._known

    def changed(self, change: InstallationChange) -> bool:
        with self._lock:
            self._known = installation_changed(self._known, change)
        return change.action in DROPS_TOKENS and self._tokens.forget(change.installation)

    def serving(self, repo: RepoRef) -> int | None:
        """The repository's installation if the configuration names it or it was looked up; asks nothing."""
        with self._lock:
            return self._known.serving(repo)

    def whoami(self, where: str) -> dict[str, Any]:
        """The App as GitHub describes it to its own JWT (`GET /app`): asked once, then kept for the
        process (what it says of the App does not change while it runs)."""
        with self._asking_about:
            if self._about is None:
                self._about = self._described(where, "app", "the GitHub App")
            return self._about

    def bot_login(self, where: str) -> str:
        """The login GitHub signs the App's comments and reactions with: `<slug>[bot]`."""
        slug = self.whoami(where).get("slug")
        if not isinstance(slug, str) or not slug:
            raise TrackerError(f"{where}: GitHub did not name the GitHub App's slug")
        return f"{slug}[bot]"

    def described(self, repo: RepoRef) -> dict[str, Any]:
        """The installation on `repo` as GitHub describes it to the App's JWT
        (`GET /app/installations/{id}`): its account, the permissions it holds, the events it is sent."""
        installation = self.installation(repo)
        return self._described(str(repo), f"app/installations/{installation}", f"installation {installation}")

    def _described(self, where: str, path: str, what: str) -> dict[str, Any]:
        doc = self._as_app(where, "GET", path).json(where)
        if not isinstance(doc, dict):
            raise TrackerError(f"{where}: malformed reply about {what} (expected an object)")
        return doc

    def _look_up(self, repo: RepoRef) -> int:
        where = str(repo)
        reply = self._as_app(where, "GET", f"repos/{repo.full_name}/installation", absent_ok=True)
        if reply.status == 404:
            raise TrackerError(
                f"{where}: the GitHub App {self._app.key.app_id} is not installed on {repo.full_name}"
                f" (HTTP 404): install it there, on the repository or on all of {repo.owner}'s"
            )
        doc = reply.json(where)
        number = doc.get("id") if isinstance(doc, dict) else None
        if not isinstance(number, int):
            raise TrackerError(f"{where}: malformed reply naming the GitHub App's installation")
        return number

    def _exchange(self, installation: int, repo: RepoRef) -> Minted:
        """A new token of `installation`, asked for `repo`'s sake."""
        where = str(repo)
        path = f"app/installations/{installation}/access_tokens"
        reply = self._as_app(where, "POST", path, absent_ok=True)
        if reply.status == 404:
            self._gone(installation)
            raise TrackerError(
                f"{where}: the GitHub App's installation {installation} is gone (HTTP 404): the App was"
                f" uninstalled there, or that installation is another App's"
            )
        doc = reply.json(where)
        try:
            token, expires = str(doc["token"]), parse_time(str(doc["expires_at"]))
        except (KeyError, TypeError, ValueError) as error:
            raise TrackerError(f"{where}: malformed reply to a token request ({type(error).__name__})") from None
        if not token:
            raise TrackerError(f"{where}: GitHub handed out an empty installation token")
        # its lifetime as GitHub's clock counts it: this machine's may be off
        server_now = reply.server_time if reply.server_time is not None else self._clock()
        return Minted(token, expires.timestamp() - server_now)

    def _gone(self, installation: int) -> None:
        """Forget an installation GitHub no longer has: a repository's is looked up again (its token
        was refused already, and is not handed out again)."""
        with self._lock:
            self._known = self._known.without(installation)

    def _as_app(self, where: str, method: str, path: str, *, absent_ok: bool = False) -> Reply:
        jwt = self._app.key.jwt(self._clock())
        reply = self._api.call(where, method, path, token=jwt, bearer=True)
        if reply.status == 401:
            raise TrackerError(
                f"{where}: GitHub refused the GitHub App {self._app.key.app_id}'s JWT (HTTP 401: {reply.message()}):"
                " a wrong App id or private key, or this machine's clock off by more than a minute"
            )
        if not (absent_ok and reply.status == 404):
            check(reply, where, now=self._clock())
        return reply
