"""Just enough HTTP/1.1 for webhook deliveries: one POST per connection, refused early and cheaply."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from http import HTTPStatus

MAX_HEAD = 16 * 1024  # request line and headers; a delivery's are well under 2 KiB


@dataclass(frozen=True, slots=True)
class Delivery:
    """A request read whole: its event name, signature header and body."""

    event: str
    signature: str
    body: bytes


@dataclass(frozen=True, slots=True)
class Refused:
    """A request answered before it was read whole; `status` says why."""

    status: int


async def read_delivery(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, max_body: int
) -> Delivery | Refused | None:
    """The delivery on this connection, or why it was refused, or None when the client left.

    The head decides everything before a byte of the body is read: a malformed one (400), a
    method other than POST (405), no `X-Hub-Signature-256` (401), no `Content-Length` or a
    `Transfer-Encoding` (411), a length over `max_body` (413).
    """
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    except asyncio.LimitOverrunError:
        return Refused(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
    parsed = _parse_head(head)
    if isinstance(parsed, Refused):
        return parsed
    checked = _checked(*parsed, max_body=max_body)
    if isinstance(checked, Refused):
        return checked
    headers, length = checked
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # the client waits for it before sending the body
    try:
        body = await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None
    return Delivery(headers.get("x-github-event", ""), headers["x-hub-signature-256"], body)


def response(status: int) -> bytes:
    phrase = HTTPStatus(status).phrase
    return f"HTTP/1.1 {status} {phrase}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()


def _parse_head(head: bytes) -> tuple[str, dict[str, str]] | Refused:
    lines = head.decode("latin-1").split("\r\n")[:-2]
    parts = lines[0].split(" ") if lines else []
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return Refused(HTTPStatus.BAD_REQUEST)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        key = name.lower()
        # a folded line, a header without a name, or a second Content-Length is a smuggling attempt
        if not colon or not key or key != key.strip() or (key in headers and key == "content-length"):
            return Refused(HTTPStatus.BAD_REQUEST)
        headers[key] = value.strip()
    return parts[0], headers


def _checked(method: str, headers: dict[str, str], *, max_body: int) -> tuple[dict[str, str], int] | Refused:
    if method != "POST":
        return Refused(HTTPStatus.METHOD_NOT_ALLOWED)
    if not headers.get("x-hub-signature-256"):
        return Refused(HTTPStatus.UNAUTHORIZED)
    if "transfer-encoding" in headers or "content-length" not in headers:
        return Refused(HTTPStatus.LENGTH_REQUIRED)
    length = headers["content-length"]
    if not (length.isascii() and length.isdigit()) or not length.strip("0"):
        return Refused(HTTPStatus.BAD_REQUEST)
    if len(length.lstrip("0")) > len(str(max_body)) or int(length) > max_body:  # no int() of 10,000 digits
        return Refused(HTTPStatus.REQUEST_ENTITY_TOO_LARGE)
    return headers, int(length)
