"""One HTTP reply as `gh api -i` prints it: status line, headers, body — and what it means."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from domain.errors import RateLimited, TrackerError

_STATUS_RE = re.compile(r"^HTTP/\S+ (?P<code>[0-9]{3})\b")
_NEXT_RE = re.compile(r'<(?P<url>[^>]+)>\s*;\s*rel="next"')
_ETAG_RE = re.compile(r'^(?:W/)?"[\x21\x23-\x7e]*"$')
_SECONDARY_WAIT = 60.0  # GitHub: without retry-after, wait at least a minute
_MESSAGE_MAX = 200


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    @property
    def etag(self) -> str:
        # the ETag goes back on gh's argv: keep only a well-formed one
        value = self.headers.get("etag", "")
        return value if _ETAG_RE.match(value) else ""

    @property
    def server_time(self) -> float | None:
        try:
            return parsedate_to_datetime(self.headers["date"]).timestamp()
        except (KeyError, TypeError, ValueError):
            return None

    @property
    def has_next(self) -> bool:
        """Whether the `Link` header names a next page (of the same query, when it was answered)."""
        return _NEXT_RE.search(self.headers.get("link", "")) is not None

    def number(self, name: str) -> float | None:
        try:
            return float(self.headers[name])
        except (KeyError, ValueError):
            return None

    def json(self, where: str) -> Any:
        try:
            return json.loads(self.body)
        except ValueError as error:
            raise TrackerError(f"{where}: malformed JSON in the reply ({error})") from error

    def message(self) -> str:
        try:
            text = str(json.loads(self.body).get("message", ""))
        except (ValueError, AttributeError):
            text = ""
        return "".join(c for c in text if c.isprintable())[:_MESSAGE_MAX]


def parse_reply(raw: bytes, where: str) -> Reply:
    """Status line, header lines up to the first empty one, then the body byte for byte."""
    position, lines = 0, []
    while True:
        end = raw.find(b"\n", position)
        if end < 0:
            raise TrackerError(f"{where}: gh printed no HTTP reply")
        line = raw[position:end].rstrip(b"\r").decode("latin-1")
        position = end + 1
        if not line:
            break
        lines.append(line)
    match = _STATUS_RE.match(lines[0]) if lines else None
    if match is None:
        raise TrackerError(f"{where}: gh printed no HTTP status line")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    return Reply(int(match["code"]), headers, raw[position:])


def next_path(reply: Reply, host: str, where: str) -> str | None:
    """The `rel="next"` link as a path for `gh api`; a link to another host is refused."""
    match = _NEXT_RE.search(reply.headers.get("link", ""))
    if match is None:
        return None
    url = urlsplit(match["url"])
    api_host = "api.github.com" if host == "github.com" else host
    if url.scheme != "https" or url.netloc != api_host:
        raise TrackerError(f"{where}: pagination link leaves {api_host}: {url.netloc}")
    path = url.path.removeprefix("/api/v3")
    return path.lstrip("/") + (f"?{url.query}" if url.query else "")


def check(reply: Reply, where: str, *, now: float | None) -> None:
    """Raise the `TrackerError` (or `RateLimited`) a non-success reply means."""
    status = reply.status
    if status < 300 or status == 304:
        return
    if status in (403, 429):
        _raise_if_rate_limited(reply, where, now=now)
    cause = {
        401: "not authenticated (bad or missing token)",
        403: "forbidden",
        404: "not found or not visible",
    }.get(status, "server error" if status >= 500 else "request refused")
    detail = reply.message()
    needed = _accepted_permissions(reply) if status == 403 else ""
    lacks = f"; the token lacks the permission GitHub asks for here: {needed}" if needed else ""
    raise TrackerError(f"{where}: {cause} (HTTP {status}{': ' + detail if detail else ''}){lacks}")


def _accepted_permissions(reply: Reply) -> str:
    """GitHub's `x-accepted-github-permissions` (sent to a GitHub App's or a fine-grained token's
    request) in words: each set that would do, `;`-separated, its permissions `,`-separated."""
    sets = [
        " and ".join(part.strip() for part in each.split(",") if part.strip())
        for each in reply.headers.get("x-accepted-github-permissions", "").split(";")
    ]
    return ", or ".join(each for each in sets if each)


def reset_at(reply: Reply, *, now: float | None) -> float | None:
    """`x-ratelimit-reset` on our clock: GitHub's moment, as far from our `now` as it is from the
    reply's `Date` — a machine clock an hour behind GitHub's must not wait an hour more."""
    reset = reply.number("x-ratelimit-reset")
    server = reply.server_time
    if reset is None or now is None or server is None:
        return reset
    return now + (reset - server)


def _raise_if_rate_limited(reply: Reply, where: str, *, now: float | None) -> None:
    retry_after = reply.number("retry-after")
    reset = reset_at(reply, now=now)
    base = now if now is not None else (reply.server_time or 0.0)
    if retry_after is not None:
        until = base + retry_after
    elif reply.headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        until = reset
    elif reply.status == 429 or "rate limit" in reply.message().lower():
        until = base + _SECONDARY_WAIT
    else:
        return
    raise RateLimited(f"{where}: rate limited (HTTP {reply.status}) until {until:.0f}", until_epoch=until)
