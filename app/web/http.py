"""Just enough HTTP/1.1 for the fleet page, on the standard library's asyncio: one request per
connection, a small form body at most, and one long answer kind — a server-sent event stream.

Only the names of `app.web.hosts` are answered (another `Host`: 421, none or two: 400). The same
limits as the webhook receiver: `read_timeout` seconds to send the request (then 408),
at most `max_connections` open at once (one more: 503, closed without a read), a head over 16 KiB
(431), a body over `max_body` (413)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from adapters.http_server.serving import LoopServer
from app.web.hosts import answered_hosts, refusal

MAX_HEAD = 16 * 1024
MAX_BODY = 64 * 1024  # a form of a few fields
READ_TIMEOUT = 10.0
MAX_CONNECTIONS = 64
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)  # names in lower case
    body: bytes = b""

    def form(self) -> dict[str, str]:
        return dict(parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True))

    def cookie(self, name: str) -> str:
        for part in self.headers.get("cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return ""


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Stream:
    """A server-sent event stream: each chunk is written as it comes, until the client leaves."""

    chunks: Callable[[], AsyncGenerator[bytes, None]]  # closed when the client leaves


Handler = Callable[[Request], Response | Stream]
_SECURITY = (
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    # the page's own origin on its forms' POSTs (the action guard compares it with the Host); `no-referrer`
    # made Chromium send `Origin: null`, refusing every button. Links off the page carry `rel="noreferrer"`.
    ("Referrer-Policy", "same-origin"),
    # nothing from another origin: the script and style are the package's own
    ("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"),
)


def head(response: Response | int, *, stream: bool = False) -> bytes:
    if isinstance(response, int):
        response = Response(response, HTTPStatus(response).phrase.encode(), "text/plain; charset=utf-8")
    lines = [f"HTTP/1.1 {response.status} {HTTPStatus(response.status).phrase}"]
    lines.append(f"Content-Type: {'text/event-stream' if stream else response.content_type}")
    if not stream:
        lines.append(f"Content-Length: {len(response.body)}")
    lines += [f"{name}: {value}" for name, value in (*_SECURITY, *response.headers)]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class PageServer(LoopServer):
    """Serves `handler` on host:port from an event loop of its own, on a thread; `handler` runs off
    the loop (it may read the store and ask tmux), a stream's chunks on it."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        handler: Handler,
        allowed_hosts: Iterable[str] = (),
        read_timeout: float = READ_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        max_body: int = MAX_BODY,
    ) -> None:
        super().__init__(host=host, port=port, max_connections=max_connections, max_head=MAX_HEAD, name="ui")
        self._handler = handler
        self._hosts = answered_hosts(self.address, allowed_hosts)  # the port bound, also when 0 was asked
        self._read_timeout, self._max_body = read_timeout, max_body

    def _busy(self) -> bytes:
        return head(HTTPStatus.SERVICE_UNAVAILABLE)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(self._read_timeout):
                request = await self._read(reader)
        except TimeoutError:
            request = HTTPStatus.REQUEST_TIMEOUT
        if request is None:
            return
        if isinstance(request, int):
            writer.write(_refused(request))
            await writer.drain()
            return
        try:
            answer = await asyncio.get_running_loop().run_in_executor(None, self._handler, request)
        except Exception:  # a fault of ours is a 500, never a dead page
            _log.exception("ui: %s %s failed", request.method, request.path)
            answer = Response(HTTPStatus.INTERNAL_SERVER_ERROR, b"internal error", "text/plain; charset=utf-8")
        if isinstance(answer, Response):
            writer.write(head(answer) + answer.body)
            await writer.drain()
            return
        writer.write(head(Response(HTTPStatus.OK), stream=True))
        await writer.drain()
        await _until_either(_send(answer, writer), _closed(reader))

    async def _read(self, reader: asyncio.StreamReader) -> Request | int | None:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        except asyncio.LimitOverrunError:
            return HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE
        parsed = _parse_head(raw, max_body=self._max_body)
        if isinstance(parsed, int):
            return parsed
        method, target, headers, length = parsed
        if (refused := refusal(headers.get("host"), self._hosts)) is not None:
            return refused
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return None
        url = urlsplit(target)
        return Request(method, url.path, dict(parse_qsl(url.query)), headers, body)


def _refused(status: int) -> bytes:
    if status != HTTPStatus.MISDIRECTED_REQUEST:
        return head(status)
    said = b"this page answers only its own address, localhost and the names of ui.allowedHosts"
    response = Response(status, said, "text/plain; charset=utf-8")
    return head(response) + response.body


async def _send(stream: Stream, writer: asyncio.StreamWriter) -> None:
    async with contextlib.aclosing(stream.chunks()) as chunks:
        async for chunk in chunks:
            writer.write(chunk)
            await writer.drain()


async def _closed(reader: asyncio.StreamReader) -> None:
    """Returns when the client closes its side: a quiet stream writes nothing that would fail, and
    must not hold its connection slot until its next message."""
    while await reader.read(1024):
        pass  # one request per connection: anything sent after it is not read as one


async def _until_either(*jobs: Coroutine[Any, Any, None]) -> None:
    """Runs the jobs until one of them ends (its exception raised), the others cancelled."""
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in done:
        task.result()


def _parse_head(raw: bytes, *, max_body: int) -> tuple[str, str, dict[str, str], int] | int:
    """The method, target, headers and body length; or the status refusing the request."""
    lines = raw.decode("latin-1").split("\r\n")[:-2]
    parts = lines[0].split(" ") if lines else []
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return HTTPStatus.BAD_REQUEST
    if parts[0] not in {"GET", "POST"}:
        return HTTPStatus.METHOD_NOT_ALLOWED
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        key = name.lower()
        # a folded line, a header without a name, or a second Content-Length or Host is a smuggling attempt
        if not colon or not key or key != key.strip() or (key in headers and key in {"content-length", "host"}):
            return HTTPStatus.BAD_REQUEST
        headers[key] = value.strip()
    length = _length(headers, max_body=max_body)
    return length if isinstance(length, HTTPStatus) else (parts[0], parts[1], headers, length)


def _length(headers: dict[str, str], *, max_body: int) -> int | HTTPStatus:
    text = headers.get("content-length", "0")
    if "transfer-encoding" in headers:
        return HTTPStatus.LENGTH_REQUIRED
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        return HTTPStatus.BAD_REQUEST
    return HTTPStatus.REQUEST_ENTITY_TOO_LARGE if int(text) > max_body else int(text)
