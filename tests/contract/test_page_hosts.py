"""The page answers only the names it is reached by: its own address, `localhost` and `[::1]` with
its port, and the names of `ui.allowedHosts`. Another site's name resolved to 127.0.0.1 (DNS
rebinding) is answered 421 on every route, with a token too. Real HTTP against the real page."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest

from app.web.hosts import answered_hosts
from app.web.http import PageServer
from tests.service.test_fleet_page import TOKEN, _page
from tests.service.world import World

SECRET = "sk-pane-secret-0123456789"
REBOUND = "rebind.attacker.example"


@contextmanager
def served(tmp_path: Path, *, token: str = "", allowed: tuple[str, ...] = ()) -> Iterator[tuple[PageServer, str]]:
    world = World()
    ref = world.watched(1)
    world.session(ref).panes[0].screen = f"export KEY={SECRET}"
    page = _page(world, tmp_path / "events.jsonl", token)
    server = PageServer(host="127.0.0.1", port=0, handler=page, allowed_hosts=allowed)
    server.start()
    try:
        yield server, f"/item?ref={quote(str(ref), safe='')}"
    finally:
        server.stop()


def _answer(server: PageServer, path: str, *headers: str) -> bytes:
    """The status line and head, and as much of the body as came with them (a stream never ends)."""
    with socket.create_connection(server.address, timeout=30) as client:
        client.sendall(f"GET {path} HTTP/1.1\r\n{''.join(h + chr(13) + chr(10) for h in headers)}\r\n".encode())
        found = b""
        while b"\r\n\r\n" not in found and (chunk := client.recv(65536)):
            found += chunk
        return found


def _status(server: PageServer, path: str, *headers: str) -> str:
    return _answer(server, path, *headers).split(b"\r\n", 1)[0].decode()


def test_a_rebound_name_is_answered_421_on_every_route_and_shows_no_pane(tmp_path: Path) -> None:
    with served(tmp_path) as (server, item):
        port = server.address[1]
        answers = {
            path: _answer(server, path, f"Host: {REBOUND}:{port}")
            for path in [item, "/api/fleet", "/events", "/", "/login", "/static/page.js"]
        }

    assert {path: a.split(b"\r\n", 1)[0] for path, a in answers.items()} == dict.fromkeys(
        answers, b"HTTP/1.1 421 Misdirected Request"
    )
    assert not any(SECRET.encode() in answer for answer in answers.values())


def test_the_pages_own_names_with_its_port_are_answered(tmp_path: Path) -> None:
    with served(tmp_path) as (server, item):
        port = server.address[1]
        statuses = [
            _status(server, item, f"Host: {name}:{port}") for name in ("127.0.0.1", "localhost", "LocalHost", "[::1]")
        ]
        shown = _answer(server, item, f"Host: localhost:{port}")

    assert statuses == ["HTTP/1.1 200 OK"] * 4
    assert SECRET.encode() in shown  # the pane's lines are there for the page's own names


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "localhost:1", "[::1]", "127.0.0.1.nip.io:{port}", ""])
def test_a_loopback_name_without_its_port_or_with_another_is_refused(tmp_path: Path, host: str) -> None:
    with served(tmp_path) as (server, _):
        status = _status(server, "/api/fleet", f"Host: {host.format(port=server.address[1])}")

    assert status == "HTTP/1.1 421 Misdirected Request"


def test_a_request_without_a_host_or_with_two_is_a_bad_request(tmp_path: Path) -> None:
    with served(tmp_path) as (server, _):
        port = server.address[1]
        without = _status(server, "/api/fleet")
        twice = _status(server, "/api/fleet", f"Host: localhost:{port}", f"Host: {REBOUND}:{port}")

    assert (without, twice) == ("HTTP/1.1 400 Bad Request", "HTTP/1.1 400 Bad Request")


def test_a_name_of_allowed_hosts_is_answered_with_the_pages_port_or_none_and_one_with_a_port_only_with_it(
    tmp_path: Path,
) -> None:
    with served(tmp_path, allowed=("fleet.example.org", "other.example.org:8443")) as (server, _):
        port = server.address[1]
        hosts = ["fleet.example.org", f"FLEET.example.org:{port}", "fleet.example.org:9", "other.example.org:8443"]
        hosts += ["other.example.org", f"other.example.org:{port}"]
        statuses = [_status(server, "/api/fleet", f"Host: {host}").split(" ", 1)[1] for host in hosts]

    assert statuses == ["200 OK", "200 OK", "421 Misdirected Request", "200 OK"] + ["421 Misdirected Request"] * 2


def test_with_a_token_a_rebound_name_is_refused_before_the_token_is_looked_at(tmp_path: Path) -> None:
    with served(tmp_path, token=TOKEN) as (server, item):
        port = server.address[1]
        rebound = _status(server, item, f"Host: {REBOUND}:{port}", f"Authorization: Bearer {TOKEN}")
        own = _status(server, item, f"Host: 127.0.0.1:{port}", f"Authorization: Bearer {TOKEN}")

    assert (rebound, own) == ("HTTP/1.1 421 Misdirected Request", "HTTP/1.1 200 OK")


def test_on_the_default_port_a_loopback_name_without_a_port_is_the_same_origin() -> None:
    on_80 = answered_hosts(("127.0.0.1", 80), ())
    on_8788 = answered_hosts(("::1", 8788), ())

    assert {"localhost", "localhost:80", "127.0.0.1", "[::1]"} <= on_80
    assert {"localhost:8788", "[::1]:8788", "127.0.0.1:8788"} <= on_8788 and "localhost" not in on_8788
