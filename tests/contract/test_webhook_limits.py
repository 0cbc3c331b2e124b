"""The webhook receiver's limits on loopback: idle and slow connections, a connection cap, a body
cap, and refusals answered from the request's head before its body is read.

Each refusal "before the body" is shown by a client that never sends the body: the answer can
only arrive if the server did not wait for it (its read timeout is far longer than the client's).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from adapters.github.webhook import GhWebhookServer
from domain.model import Comment
from domain.webhook import Pushed
from tests.tmux_support import wait_for

SECRET = "s3cret"
PATIENT = 60.0  # a server read timeout no test waits for
CLIENT_WAIT = 10.0


def _body(comment_id: int = 4242) -> bytes:
    return json.dumps(
        {
            "action": "created",
            "repository": {"full_name": "acme/widgets"},
            "comment": {
                "id": comment_id,
                "user": {"login": "alice"},
                "body": "go",
                "created_at": "2026-11-30T10:00:00Z",
                "html_url": f"https://github.com/acme/widgets/issues/7#issuecomment-{comment_id}",
                "issue_url": "https://api.github.com/repos/acme/widgets/issues/7",
            },
        }
    ).encode()


def _signature(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


@contextmanager
def receiving(
    *, also: Callable[[GhWebhookServer], None] = lambda _: None, **limits: Any
) -> Iterator[tuple[GhWebhookServer, list[Comment]]]:
    """A started receiver and what it accepted; `also` runs with it as each comment is accepted."""
    got: list[Comment] = []

    def accept(pushed: Pushed) -> None:
        also(server)
        got.append(pushed.comment)

    server = GhWebhookServer(host="127.0.0.1", port=0, secret=SECRET, accept=accept, **limits)
    server.start()
    try:
        yield server, got
    finally:
        server.stop()


def post(server: GhWebhookServer, body: bytes, *, signed: bool = True) -> int:
    host, port = server.address
    headers = {"X-GitHub-Event": "issue_comment", "Content-Type": "application/json"}
    if signed:
        headers["X-Hub-Signature-256"] = _signature(body)
    request = urllib.request.Request(f"http://{host}:{port}/", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=CLIENT_WAIT) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def connect(server: GhWebhookServer, sent: bytes = b"") -> socket.socket:
    client = socket.create_connection(server.address, timeout=CLIENT_WAIT)
    if sent:
        client.sendall(sent)
    return client


def answer(client: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a client timeout fails the test)."""
    received = b""
    while chunk := client.recv(65536):
        received += chunk
    client.close()
    return received


def head(*lines: str) -> bytes:
    return ("\r\n".join(["POST / HTTP/1.1", "Host: localhost", *lines]) + "\r\n\r\n").encode()


SIGNED = f"X-Hub-Signature-256: {_signature(b'x' * 1000)}"


def test_a_signed_delivery_is_served_while_200_idle_connections_hang_and_those_close_after_the_timeout() -> None:
    open_then: list[int] = []
    with receiving(read_timeout=5.0, also=lambda server: open_then.append(server.open_connections)) as (server, got):
        silent = [connect(server) for _ in range(100)]
        half = [connect(server, head(SIGNED, "Content-Length: 1000")[:-2] if n % 2 else b"POST / HT")
                for n in range(100)]  # fmt: skip
        wait_for(lambda: server.open_connections == 200, what="200 idle connections")

        assert post(server, _body()) == 202
        assert [c.id for c in got] == ["4242"] and open_then[0] >= 201  # served beside all 200
        closed = [answer(client) for client in silent + half]
    assert all(reply.startswith(b"HTTP/1.1 408 ") for reply in closed)
    assert server.open_connections == 0


def test_a_connection_sending_a_byte_at_a_time_is_closed_at_the_timeout_not_kept_by_each_byte() -> None:
    """A timeout per read would keep it forever: each byte comes well within one."""
    with receiving(read_timeout=1.5) as (server, _):
        client = connect(server)
        with pytest.raises(OSError):  # the server closed: a send fails
            for byte in (head(SIGNED, "Content-Length: 1000") * 3)[:300]:  # 15 s of dripping at most
                client.send(bytes([byte]))
                time.sleep(0.05)
        client.close()


def test_connections_over_the_cap_are_answered_503_and_closed_at_once_and_a_freed_place_serves_again() -> None:
    with receiving(read_timeout=PATIENT, max_connections=4) as (server, got):
        idle = [connect(server) for _ in range(4)]
        wait_for(lambda: server.open_connections == 4, what="4 idle connections")
        assert answer(connect(server)).startswith(b"HTTP/1.1 503 ")
        idle.pop().close()
        wait_for(lambda: server.open_connections == 3, what="a place freed")
        assert post(server, _body()) == 202 and len(got) == 1


def test_a_delivery_without_a_signature_header_is_refused_before_its_body_is_read() -> None:
    with receiving(read_timeout=PATIENT) as (server, got):
        reply = answer(connect(server, head("X-GitHub-Event: issue_comment", "Content-Length: 1000")))
    assert reply.startswith(b"HTTP/1.1 401 ") and got == []


def test_a_delivery_over_the_body_cap_is_answered_413_before_its_body_is_read() -> None:
    with receiving(read_timeout=PATIENT, max_body=1024) as (server, got):
        reply = answer(connect(server, head(SIGNED, "Content-Length: 1025")))
        at_cap = answer(connect(server, head(SIGNED, "Content-Length: 1024") + b"x" * 1024))
    assert reply.startswith(b"HTTP/1.1 413 ") and at_cap.startswith(b"HTTP/1.1 401 ")  # read, then badly signed
    assert got == []


def test_the_default_body_cap_is_1_mib_and_a_client_sending_more_reads_its_413() -> None:
    with receiving() as (server, got):
        assert post(server, b"{" + b" " * (1024 * 1024)) == 413
        assert post(server, _body()) == 202 and len(got) == 1


@pytest.mark.parametrize("framing", [(), ("Transfer-Encoding: chunked",)], ids=["no length", "chunked"])
def test_a_delivery_without_a_content_length_is_answered_411(framing: tuple[str, ...]) -> None:
    with receiving(read_timeout=PATIENT) as (server, _):
        reply = answer(connect(server, head(SIGNED, *framing)))
    assert reply.startswith(b"HTTP/1.1 411 ")


@pytest.mark.parametrize(
    ("sent", "status"),
    [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"405"),
        (head(SIGNED, "Content-Length: 12", "Content-Length: 1000"), b"400"),
        (head(SIGNED, "Content-Length: -1"), b"400"),
        (head(SIGNED, "Content-Length: " + "9" * 5000), b"413"),
        (head(SIGNED, "X-Pad: " + "a" * 20000, "Content-Length: 10"), b"431"),
        (b"NONSENSE\r\n\r\n", b"400"),
    ],
    ids=["GET", "two lengths", "negative length", "a 5000-digit length", "a 20 KB head", "no request line"],
)
def test_a_malformed_request_is_answered_from_its_head(sent: bytes, status: bytes) -> None:
    with receiving(read_timeout=PATIENT) as (server, got):
        reply = answer(connect(server, sent))
    assert reply.startswith(b"HTTP/1.1 " + status + b" ") and got == []


def test_stopping_returns_while_connections_hang() -> None:
    with receiving(read_timeout=PATIENT) as (server, _):
        hanging = [connect(server, b"POST / HTTP/1.1\r\n") for _ in range(5)]
        wait_for(lambda: server.open_connections == 5, what="5 hanging connections")
    assert [answer(client) for client in hanging] == [b""] * 5
