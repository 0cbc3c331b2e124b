"""The page's HTTP server keeps the webhook receiver's limits, on a real socket."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import AsyncGenerator, Iterator

import pytest

from app.web.http import PageServer, Request, Response, Stream

STREAMS_ENDED = threading.Semaphore(0)


async def _quiet_after_one() -> AsyncGenerator[bytes, None]:
    """A stream with nothing more to send after its first message (a quiet fleet's feed)."""
    try:
        yield b"data: one\n\n"
        await asyncio.Event().wait()
    finally:
        STREAMS_ENDED.release()


def _handler(request: Request) -> Response | Stream:
    if request.path == "/stream":

        async def chunks() -> AsyncGenerator[bytes, None]:
            yield b"data: one\n\n"

        return Stream(chunks)
    if request.path == "/quiet":
        return Stream(_quiet_after_one)
    return Response(200, f"{request.method} {request.path} {request.query} {request.form()}".encode())


@pytest.fixture
def server() -> Iterator[PageServer]:
    started = PageServer(host="127.0.0.1", port=0, handler=_handler, read_timeout=0.5, max_connections=2, max_body=64)
    started.start()
    try:
        yield started
    finally:
        started.stop()


def _ask(server: PageServer, raw: bytes) -> bytes:
    """The whole answer to `raw`, its `{host}` the page's own name."""
    with socket.create_connection(server.address, timeout=5) as client:
        client.sendall(raw.replace(b"{host}", f"localhost:{server.address[1]}".encode()))
        found = b""
        while chunk := client.recv(65536):
            found += chunk
        return found


def test_a_get_and_a_form_post_are_answered(server: PageServer) -> None:
    got = _ask(server, b"GET /item?ref=x HTTP/1.1\r\nHost: {host}\r\n\r\n")
    posted = _ask(server, b"POST /action HTTP/1.1\r\nHost: {host}\r\nContent-Length: 8\r\n\r\naction=a")
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and got.endswith(b"GET /item {'ref': 'x'} {}")
    assert posted.endswith(b"POST /action {} {'action': 'a'}")
    assert b"Content-Security-Policy: default-src 'self'" in got


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"PUT / HTTP/1.1\r\n\r\n", b"405"),
        (b"nonsense\r\n\r\n", b"400"),
        (b"POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n", b"413"),
        (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"411"),
        (b"GET / HTTP/1.1\r\nX: " + b"x" * 20_000 + b"\r\n\r\n", b"431"),
    ],
)
def test_a_bad_request_is_refused_from_its_head(server: PageServer, raw: bytes, status: bytes) -> None:
    assert _ask(server, raw).startswith(b"HTTP/1.1 " + status)


def test_a_slow_request_is_answered_408(server: PageServer) -> None:
    assert _ask(server, b"GET / HTTP/1.1\r\n").startswith(b"HTTP/1.1 408")


def test_one_connection_over_the_cap_is_answered_503(server: PageServer) -> None:
    held = [socket.create_connection(server.address, timeout=5) for _ in range(2)]
    try:
        deadline = time.monotonic() + 5
        while server.open_connections < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _ask(server, b"").startswith(b"HTTP/1.1 503")  # answered before a byte is read
    finally:
        for client in held:
            client.close()


def test_a_stream_is_sent_as_server_sent_events(server: PageServer) -> None:
    answer = _ask(server, b"GET /stream HTTP/1.1\r\nHost: {host}\r\n\r\n")
    assert b"Content-Type: text/event-stream" in answer and answer.endswith(b"data: one\n\n")


def test_a_stream_the_client_closed_frees_its_connection_slot_though_nothing_more_is_sent(server: PageServer) -> None:
    for _ in range(2):  # as many as the server's slots
        with socket.create_connection(server.address, timeout=5) as client:
            client.sendall(f"GET /quiet HTTP/1.1\r\nHost: 127.0.0.1:{server.address[1]}\r\n\r\n".encode())
            received = b""
            while not received.endswith(b"data: one\n\n"):
                received += client.recv(65536)

    deadline = time.monotonic() + 30  # a bound for a failing run only: a freed slot is seen at once
    while server.open_connections and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.open_connections == 0
    assert [STREAMS_ENDED.acquire(timeout=0) for _ in range(2)] == [True, True]  # each stream was closed
    assert _ask(server, b"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n").startswith(b"HTTP/1.1 200")
