"""Requests to one GitHub host through `gh`: status checks, rate limits, poll interval, paging."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from adapters.github import payloads
from adapters.github.gh import GhApi
from adapters.github.reply import Reply, check, next_path
from domain.errors import RateLimited, TrackerError
from domain.refs import RepoRef

PER_PAGE = 100


@dataclass(frozen=True, slots=True)
class Pages:
    entries: list[dict[str, Any]]
    etag: str  # empty unless the listing was one page that did not fill up
    server_time: float | None
    full: bool  # the listing filled a page: a window over it should move on


class GhClient:
    """Every request of `GhTracker`; a failure is a `TrackerError` naming the repository."""

    def __init__(
        self,
        *,
        binary: str,
        host: str,
        env: Mapping[str, str] | None,
        timeout: float,
        clock: Callable[[], float] | None,
    ) -> None:
        self.host = host
        self._api = GhApi(binary=binary, host=host, env=env, timeout=timeout)
        self._clock = clock  # None: the server's Date header is "now"
        self._poll_interval: dict[RepoRef, float] = {}
        self._blocked_until = 0.0

    def min_interval_seconds(self, repo: RepoRef) -> float:
        return self._poll_interval.get(repo, 0.0)

    def pages(self, repo: RepoRef, path: str, *, etag: str = "") -> Pages | None:
        """Every page of a listing, each parsed on its own; None when the first page is a 304."""
        where = str(repo)
        first = self.send(repo, "GET", path, etag=etag)
        if first.status == 304:
            return None
        entries = payloads.as_list(first.json(where), where)
        count, reply = len(entries), first
        while (following := next_path(reply, self.host, where)) is not None:
            reply = self.send(repo, "GET", following)
            entries += payloads.as_list(reply.json(where), where)
        full = count >= PER_PAGE or reply is not first
        # a 304 on page one says nothing of later pages: only a lone page's ETag is kept
        return Pages(entries, "" if full else first.etag, first.server_time, full)

    def send(
        self, repo: RepoRef, method: str, path: str, *, etag: str = "", payload: Any = None
    ) -> Reply:
        where = str(repo)
        if repo.host != self.host:
            raise TrackerError(f"{where}: not on the configured host {self.host}")
        if self._clock is not None and self._clock() < self._blocked_until:
            raise RateLimited(
                f"{where}: rate limit spent until {self._blocked_until:.0f}",
                until_epoch=self._blocked_until,
            )
        reply = self._api.call(where, method, path, etag=etag, payload=payload)
        self._note_limits(repo, reply)
        check(reply, where, now=self._clock() if self._clock else None)
        return reply

    def server_now(self, reply: Reply) -> datetime:
        moment = reply.server_time
        if moment is None:
            moment = self._clock() if self._clock else 0.0
        return datetime.fromtimestamp(moment, UTC)

    def _note_limits(self, repo: RepoRef, reply: Reply) -> None:
        interval = reply.number("x-poll-interval")
        if interval is not None:
            self._poll_interval[repo] = interval
        reset = reply.number("x-ratelimit-reset")
        if reply.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
            # the primary limit belongs to the token, so it holds every repository of the host
            self._blocked_until = max(self._blocked_until, reset)


def settled(times: list[datetime], server_time: float | None) -> bool:
    """Nothing in the reply changed while it was being paged (so moving `since` loses nothing)."""
    return server_time is None or all(t.timestamp() < server_time for t in times)
