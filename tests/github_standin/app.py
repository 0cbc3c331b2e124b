"""The stand-in's GitHub App side: JWTs checked against the App's public key, installation tokens
handed out with a lifetime of a few seconds if asked, and every other request refused without one."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

from adapters.clock import SystemClock
from tests.github_standin.world import stamp

Answer = tuple[int, Any]
# an answer with headers of its own (a 403 naming the permissions GitHub would take)
Refusal = tuple[int, Any, dict[str, str]]
JWT_MAX = 600  # GitHub refuses a JWT expiring more than ten minutes on
TOKEN_PREFIX = "ghs_standin"  # every installation token handed out begins so: a search for it finds them all

_REPO = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)")
_TOKENS = re.compile(r"^/app/installations/(?P<id>[0-9]+)/access_tokens$")
_INSTALLATION = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)/installation$")
_DESCRIBED = re.compile(r"^/app/installations/(?P<id>[0-9]+)$")
# the permissions a repository route asks of an installation token, as GitHub's docs list them: an
# issue's routes take either (a pull request is an issue too), a pull request's its own
_ROUTE_PERMISSIONS = (
    (re.compile(r"^/repos/[^/]+/[^/]+/issues(/|$|\?)"), ("issues", "pull_requests")),
    (re.compile(r"^/repos/[^/]+/[^/]+/pulls(/|$|\?)"), ("pull_requests",)),
)
_LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}
# what GitHub's App settings page offers the-loop's App: set as docs/github-app.md says to
GRANTED = {"issues": "write", "pull_requests": "write", "contents": "read", "metadata": "read", "members": "read"}
SENT = (
    "issue_comment",
    "issues",
    "pull_request_review_comment",
    "pull_request_review",
    "pull_request",
    "member",
    "membership",
    "organization",
    "team",
)


@dataclass
class Installation:
    id: int
    account: str
    repos: set[str] | None = None  # full names; None: all of the account's
    revoked: bool = False
    organization: bool = True  # the account is an organization's, not a user's
    permissions: dict[str, str] = field(default_factory=lambda: dict(GRANTED))  # what its owner accepted
    events: tuple[str, ...] = SENT
    rate_limit: int = 5000  # its own, as each installation's is on GitHub
    rate_remaining: int = 5000

    def covers(self, full_name: str) -> bool:
        owner = full_name.split("/", maxsplit=1)[0].lower()
        if owner != self.account.lower():
            return False
        return self.repos is None or full_name.lower() in {r.lower() for r in self.repos}


@dataclass
class Issued:
    installation: int
    expires: float  # on the machine's monotonic clock (the stand-in's `Date` is the world's own)
    client: str = ""  # who asked for it (the server's CLIENT_HEADER): each host keeps its own tokens


@dataclass(frozen=True)
class Exchange:
    """A token handed out: for which installation, when, to which client, and what the one before it
    (that client's own) had left."""

    installation: int
    at: float  # monotonic
    previous_left: float | None  # seconds; None: the installation's first for this client
    client: str = ""


@dataclass(frozen=True)
class TokenUse:
    """A request made with an installation token: by which client, with a token of which installation
    (0: a token the stand-in never handed out), and whether it was refused (401)."""

    client: str
    installation: int
    method: str
    path: str
    refused: bool


@dataclass
class AppSide:
    """One App. Tokens live `token_seconds` of real time (on `monotonic`), while their `expires_at`
    says that many seconds past the world's `Date`, as GitHub's would on its own clock."""

    app_id: int
    public_key: RSAPublicKey
    token_seconds: int = 3600
    slug: str = "the-loop-bot"
    monotonic: Callable[[], float] = field(default_factory=lambda: SystemClock().monotonic)
    installations: dict[int, Installation] = field(default_factory=dict)
    issued: dict[str, Issued] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    refused: int = 0  # requests answered 401 for an expired, revoked or unknown token
    uses: list[TokenUse] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    @property
    def bot_login(self) -> str:
        """The login GitHub writes an installation's comments and reactions as."""
        return f"{self.slug}[bot]"

    # --- arranging -----------------------------------------------------------------------

    def install(self, number: int, account: str, repos: set[str] | None = None) -> Installation:
        self.installations[number] = Installation(number, account, repos)
        return self.installations[number]

    def revoke(self, number: int) -> None:
        """Uninstalled: its tokens are refused, it hands out no more, no repository names it."""
        self.installations[number].revoked = True

    def expire_tokens(self) -> None:
        """Every token handed out so far is refused from now on, whatever its `expires_at` said."""
        now = self.monotonic()
        for issued in self.issued.values():
            issued.expires = min(issued.expires, now)

    # --- reading back --------------------------------------------------------------------

    def exchanges_of(self, number: int, client: str | None = None) -> list[Exchange]:
        """The tokens handed out for installation `number` (to `client` alone, if named)."""
        return [e for e in self.exchanges if e.installation == number and client in (None, e.client)]

    def wait_for(self, ready: Callable[[], bool], timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(ready, timeout=timeout)

    # --- serving (under the world's lock) ------------------------------------------------

    def answer(self, method: str, path: str, authorization: str, now: datetime, client: str = "") -> Answer | None:
        """The App endpoints' answer; None for any other path."""
        tokens = _TOKENS.match(path) if method == "POST" else None
        lookup = _INSTALLATION.match(path) if method == "GET" else None
        described = _DESCRIBED.match(path) if method == "GET" else None
        if not (tokens or lookup or described or (method, path) == ("GET", "/app")):
            return None
        refusal = self._jwt_refusal(authorization, now)
        if refusal is not None:
            return 401, {"message": refusal}
        if tokens is not None:
            return self._hand_out(int(tokens["id"]), now, client)
        if lookup is not None:
            return self._installation_of(f"{lookup['owner']}/{lookup['name']}")
        if described is not None:
            return self._described(int(described["id"]))
        return 200, {"id": self.app_id, "slug": self.slug, "name": self.slug, "owner": {"login": "acme"}}

    def token_refusal(
        self, path: str, authorization: str, *, method: str = "GET", client: str = ""
    ) -> Answer | Refusal | None:
        """None when the request's token may make it; else GitHub's answer."""
        scheme, _, value = authorization.partition(" ")
        issued = self.issued.get(value) if scheme in ("token", "Bearer") else None
        installation = None if issued is None else self.installations[issued.installation]
        refused = issued is None or installation is None or installation.revoked or self.monotonic() >= issued.expires
        self.uses.append(TokenUse(client, 0 if issued is None else issued.installation, method, path, refused))
        if refused or installation is None:
            self.refused += 1
            return 401, {"message": "Bad credentials"}
        repo = _REPO.match(path)
        if repo is not None and not installation.covers(f"{repo['owner']}/{repo['name']}"):
            return 404, {"message": "Not Found"}
        return _lacking(installation, method, path)

    def installation_of(self, authorization: str) -> Installation | None:
        """The installation whose token the request carries (one `token_refusal` let through)."""
        issued = self.issued.get(authorization.partition(" ")[2])
        return None if issued is None else self.installations.get(issued.installation)

    def _jwt_refusal(self, authorization: str, now: datetime) -> str | None:
        scheme, _, value = authorization.partition(" ")
        if scheme != "Bearer":
            return "A JSON web token could not be decoded"
        try:
            claims = jwt.decode(
                value,
                self.public_key,
                algorithms=["RS256"],
                options={"verify_exp": False, "verify_iat": False, "require": ["iat", "exp", "iss"]},
            )
        except jwt.InvalidTokenError:
            return "A JSON web token could not be decoded"
        moment = now.timestamp()  # GitHub's clock: the world's
        if not isinstance(claims["iat"], int) or claims["iat"] > moment:
            return "'Issued at' claim ('iat') must be an Integer representing a time in the past"
        if not isinstance(claims["exp"], int) or claims["exp"] <= moment:
            return "'Expiration time' claim ('exp') must be a numeric value representing the future time"
        if claims["exp"] > moment + JWT_MAX:
            return "'Expiration time' claim ('exp') is too far in the future"
        if str(claims["iss"]) != str(self.app_id):
            return "Integration not found"
        return None

    def _hand_out(self, number: int, now: datetime, client: str) -> Answer:
        installation = self.installations.get(number)
        if installation is None or installation.revoked:
            return 404, {"message": "Not Found"}
        at = self.monotonic()
        previous = [t for t in self.issued.values() if t.installation == number and t.client == client]
        left = max(t.expires for t in previous) - at if previous else None
        token = f"{TOKEN_PREFIX}{len(self.issued) + 1:06d}"
        self.issued[token] = Issued(number, at + self.token_seconds, client)
        with self.changed:
            self.exchanges.append(Exchange(number, at, left, client))
            self.changed.notify_all()
        expires_at = stamp(now + timedelta(seconds=self.token_seconds))
        selection = "all" if installation.repos is None else "selected"
        return 201, {
            "token": token,
            "expires_at": expires_at,
            "permissions": dict(installation.permissions),
            "repository_selection": selection,
        }

    def _installation_of(self, full_name: str) -> Answer:
        for installation in self.installations.values():
            if not installation.revoked and installation.covers(full_name):
                account = {"login": installation.account}
                return 200, {"id": installation.id, "app_id": self.app_id, "account": account}
        return 404, {"message": "Not Found"}

    def _described(self, number: int) -> Answer:
        installation = self.installations.get(number)
        if installation is None or installation.revoked:
            return 404, {"message": "Not Found"}
        kind = "Organization" if installation.organization else "User"
        return 200, {
            "id": installation.id,
            "app_id": self.app_id,
            "account": {"login": installation.account, "type": kind},
            "target_type": kind,
            "repository_selection": "all" if installation.repos is None else "selected",
            "permissions": dict(installation.permissions),
            "events": list(installation.events),
        }


def _lacking(installation: Installation, method: str, path: str) -> Refusal | None:
    """GitHub's 403 to a token whose installation holds none of the permissions the route takes,
    with `X-Accepted-GitHub-Permissions` naming them (sets `;`-separated)."""
    level = "read" if method == "GET" else "write"
    for route, names in _ROUTE_PERMISSIONS:
        if route.match(path) is None:
            continue
        held = installation.permissions
        if any(_LEVELS.get(held.get(name, "none"), 0) >= _LEVELS[level] for name in names):
            return None
        accepted = "; ".join(f"{name}={level}" for name in names)
        message = {"message": "Resource not accessible by integration", "status": "403"}
        return 403, message, {"X-Accepted-GitHub-Permissions": accepted}
    return None
