"""Requests to one GitHub host through `gh`: status checks, rate limits, poll interval, paging."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Unpack

from adapters.clock import SystemClock
from adapters.github import payloads
from adapters.github.app_auth import AppInstallations, GitHubApp
from adapters.github.gh import GhApi, GhOptions
from adapters.github.reply import Reply, check, next_path, reset_at
from domain.budget import RateBudget
from domain.errors import RateLimited, TrackerError
from domain.refs import RepoRef

PER_PAGE = 100
PAGE = f"per_page={PER_PAGE}"


@dataclass(frozen=True, slots=True)
class Pages:
    entries: list[dict[str, Any]]
    etag: str  # empty unless the listing was one page that did not fill up
    server_time: datetime  # the first page's Date
    full: bool  # the listing filled a page: a window over it should move on
    modified: bool = True  # False: the first page was a 304, nothing new


class GhClient:
    """Every request of `GhTracker`; a failure is a `TrackerError` naming the repository.

    A rate limit, primary or secondary, belongs to the token, not to one repository: once a reply
    says to wait, every later call made with that token raises `RateLimited` without asking until
    then — a wait counted on `monotonic`, so a wall clock set back meanwhile does not make it longer.
    The budget the replies state is kept per token the same way.

    With `app`, every call is made as that GitHub App, with the installation token of the
    repository it is about; a call GitHub answers 401 gets one new token and is asked once more.
    Each installation has a rate limit of its own: one spent holds its own repositories only.
    Without, gh's own login makes it, and its one limit holds the whole host.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], float] | None,
        monotonic: Callable[[], float] | None = None,
        app: GitHubApp | None = None,
        **gh: Unpack[GhOptions],
    ) -> None:
        self._api = GhApi(**gh)
        self.host = self._api.host
        # without clocks of its own, the system's; a clock given alone is one that never jumps
        self._clock = clock or SystemClock().epoch
        self._monotonic = monotonic or clock or SystemClock().monotonic
        self._app = (
            None if app is None else AppInstallations(app, self._api, clock=self._clock, monotonic=self._monotonic)
        )
        self._poll_interval: dict[RepoRef, float] = {}
        # per installation (None: gh's own login), on `monotonic`: until then, nothing is asked
        self._blocked: dict[int | None, float] = {}
        self._budgets: dict[int | None, RateBudget] = {}  # per installation: what the last reply stating one said

    @property
    def app(self) -> AppInstallations | None:
        return self._app

    def min_interval_seconds(self, repo: RepoRef) -> float:
        return self._poll_interval.get(repo, 0.0)

    def bot_login(self, where: str) -> str | None:
        """The login the-loop's own comments are posted as, when that is the App's bot; None with gh's
        own login, which is a person's (the operator's, maybe the agent's too): the marker says it then."""
        return None if self._app is None else self._app.bot_login(where)

    def token_env(self, repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> dict[str, str] | None:
        """As a GitHub App, the environment gh's calls about `repo` get: its installation's token in
        place of the operator's. git run in it gets that token from its credential helper `gh auth
        git-credential`, which answers with a token of the environment as `x-access-token` (cli/cli
        `pkg/cmd/auth/gitcredential`). None with gh's own login (and for another host): nothing to add.
        `refused`: one it gave whose token GitHub refused; its token is replaced as a 401 to a call's is."""
        if self._app is None or repo.host != self.host:
            return None
        if refused is None:
            return self._api.token_env(self._app.token(repo))
        return self._api.token_env(self._app.refreshed(repo, self._api.token_in(refused)))

    def budget(self, repo: RepoRef) -> RateBudget | None:
        """The budget `repo`'s calls count against, as the last reply stating it said; asks nothing
        (None too in App mode while the repository's installation is not known yet)."""
        if self._app is None:
            return self._budgets.get(None)
        installation = self._app.serving(repo)
        return None if installation is None else self._budgets.get(installation)

    def since_pages(self, repo: RepoRef, path: str, *, since: str | None, key: str, etag: str = "") -> Pages:
        """Every entry of a listing that `since` filters and that is sorted by `key` (a time stamp
        at least `since`), paged by moving `since` to the last entry's `key` instead of by page
        number; no entries when the first page is a 304.

        A page number counts places in a listing that changes while it is read: an entry leaving
        a page already read (deleted, closed) or moving to its end (updated) shifts the next page's
        first entry onto it, unread. A new `since` asks for everything from the last entry's second
        onward, wherever it now stands (that second's entries come again: callers keep each by id).
        Only a page all of one second cannot move `since`: the next one is asked by number.
        """
        where = str(repo)
        first = self.send(repo, "GET", _at(path, since, 1), etag=etag)
        if first.status == 304:
            return Pages([], etag, self.server_now(first), full=False, modified=False)
        page, reply = payloads.as_list(first.json(where), where), first
        entries, number, asked = list(page), 1, 1
        # a page that is not full, or says there is no next one, ends what its query held
        while len(page) >= PER_PAGE and reply.has_next:
            since, number = _next_page(since, number, page, key, where)
            reply = self.send(repo, "GET", _at(path, since, number))
            page = payloads.as_list(reply.json(where), where)
            entries += page
            asked += 1
        full = asked > 1 or len(entries) >= PER_PAGE
        return Pages(entries, "" if full else first.etag, self.server_now(first), full)

    def pages(self, repo: RepoRef, path: str, *, etag: str = "") -> Pages:
        """Every page of a listing by its `Link` header, each parsed on its own; no entries when the
        first is a 304. Only for listings no entry leaves or moves in (an issue's events)."""
        where = str(repo)
        first = self.send(repo, "GET", path, etag=etag)
        if first.status == 304:
            return Pages([], etag, self.server_now(first), full=False, modified=False)
        entries = payloads.as_list(first.json(where), where)
        count, reply = len(entries), first
        while (following := next_path(reply, self.host, where)) is not None:
            reply = self.send(repo, "GET", following)
            entries += payloads.as_list(reply.json(where), where)
        full = count >= PER_PAGE or reply is not first
        # a 304 on page one says nothing of later pages: only a lone page's ETag is kept
        return Pages(entries, "" if full else first.etag, self.server_now(first), full)

    def send(
        self, repo: RepoRef, method: str, path: str, *, etag: str = "", payload: Any = None, absent_ok: bool = False
    ) -> Reply:
        """The reply to one request; a failure is a `TrackerError`, except a 404 with `absent_ok`."""
        where = str(repo)
        if repo.host != self.host:
            raise TrackerError(f"{where}: not on the configured host {self.host}")
        installation = None if self._app is None else self._app.installation(repo)
        blocked = self._blocked.get(installation, 0.0)
        if self._monotonic() < blocked:
            until = self._clock() + blocked - self._monotonic()
            whose = "" if installation is None else f" for installation {installation}"
            message = f"{where}: rate limited on {self.host}{whose} until {until:.0f} (not asked)"
            raise RateLimited(message, until_epoch=until)
        reply = self._ask(repo, method, path, etag=etag, payload=payload)
        self._note_limits(repo, installation, reply)
        if absent_ok and reply.status == 404:
            return reply
        try:
            check(reply, where, now=self._clock())
        except RateLimited as limited:
            self._hold(installation, limited.until_epoch)
            raise
        return reply

    def _ask(self, repo: RepoRef, method: str, path: str, *, etag: str, payload: Any) -> Reply:
        where = str(repo)
        if self._app is None:
            return self._api.call(where, method, path, etag=etag, payload=payload)
        token = self._app.token(repo)
        reply = self._api.call(where, method, path, etag=etag, payload=payload, token=token)
        if reply.status == 401:
            # expired sooner than it said, or revoked: a 401 is answered before anything is done,
            # so even a write is asked again
            token = self._app.refreshed(repo, token)
            reply = self._api.call(where, method, path, etag=etag, payload=payload, token=token)
        return reply

    def server_now(self, reply: Reply) -> datetime:
        moment = reply.server_time
        return datetime.fromtimestamp(self._clock() if moment is None else moment, UTC)

    def _note_limits(self, repo: RepoRef, installation: int | None, reply: Reply) -> None:
        interval = reply.number("x-poll-interval")
        if interval is not None:
            self._poll_interval[repo] = interval
        reset = reset_at(reply, now=self._clock())
        remaining, limit = reply.number("x-ratelimit-remaining"), reply.number("x-ratelimit-limit")
        if remaining is not None and limit is not None and reset is not None:
            budget = RateBudget(int(remaining), int(limit), reset, installation=installation)
            self._budgets[installation] = budget
        if reply.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            # a success that spent the last request: the next one need not be asked to know
            self._hold(installation, reset)

    def _hold(self, installation: int | None, until_epoch: float) -> None:
        until = self._monotonic() + until_epoch - self._clock()
        self._blocked[installation] = max(self._blocked.get(installation, 0.0), until)


def _at(path: str, since: str | None, number: int) -> str:
    return path + (f"&since={since}" if since else "") + (f"&page={number}" if number > 1 else "")


def _next_page(
    since: str | None, number: int, page: list[dict[str, Any]], key: str, where: str
) -> tuple[str | None, int]:
    """Where the listing goes on after a full page: from its last entry's second, when that is later
    than `since` and the page spans more than one second; else to the next page number."""
    try:
        first, last = (payloads.format_time(payloads.parse_time(str(page[i][key]))) for i in (0, -1))
    except (KeyError, ValueError) as error:
        raise TrackerError(f"{where}: malformed entry in the reply ({error!r})") from error
    if (since is None or last > since) and first != last:
        return last, 1
    return since, number + 1
