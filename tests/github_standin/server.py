"""The stand-in's HTTPS server: auth, injected failures, rate limits (per installation in App mode),
paging, ETag/304, counting."""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import threading
import time
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.github_standin.routes import Routes
from tests.github_standin.tls import self_signed
from tests.github_standin.world import Failure, World

if TYPE_CHECKING:
    from tests.github_standin.app import Installation

PREFIX = "/api/v3"  # gh's enterprise base: https://<host>/api/v3/...
# a header a wrapped gh adds (tagged_gh.sh) to say which host it runs for, so that several daemons on
# one stand-in are told apart; GitHub knows no such thing
CLIENT_HEADER = "X-Standin-Client"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the world's log is the record

    def date_time_string(self, timestamp: float | None = None) -> str:
        return format_datetime(self.server.world.now, usegmt=True)

    def _serve(self) -> None:
        world = self.server.world
        url = urlsplit(self.path)
        path = url.path.removeprefix(PREFIX)
        payload = self._read_payload()
        with world.lock:
            world.requests += 1
            failure = self._take_failure(world, path)
        if failure is not None and failure.delay:
            time.sleep(failure.delay)  # outside the lock: other requests carry on
        with world.lock:
            status, body, headers = self._answer(world, url.path, path, url.query, payload, failure)
            world.not_modified += status == 304
            world.log.append((self.command, f"{path}?{url.query}" if url.query else path, status))
            self._run_hooks(world, path)
        self._send(status, body, headers)

    def _run_hooks(self, world: World, path: str) -> None:
        for hook in [h for h in world.hooks if re.search(h.path, path)]:
            hook.times -= 1
            if hook.times <= 0:
                world.hooks.remove(hook)
            hook.action()

    def _answer(
        self, world: World, full: str, path: str, query: str, payload: Any, failure: Failure | None
    ) -> tuple[int, bytes, dict[str, str]]:
        headers = self._limit_headers(world, world)
        if failure is not None:
            body = failure.body if failure.body is not None else _doc({"message": "injected"})
            return failure.status, body, headers | failure.headers
        authorization = self.headers.get("Authorization", "")
        counter: World | Installation = world  # whose rate limit the request counts against
        if world.app is not None:
            client = self.headers.get(CLIENT_HEADER, "")
            answered = world.app.answer(self.command, path, authorization, world.now, client)
            if answered is None:
                answered = world.app.token_refusal(path, authorization, method=self.command, client=client)
            if answered is not None:
                status, doc, *own = answered
                return status, _doc(doc), headers | (own[0] if own else {})
            counter = world.app.installation_of(authorization) or world  # each installation its own
            headers = self._limit_headers(world, counter)
        elif authorization not in (f"token {world.token}", f"Bearer {world.token}"):
            return 401, _doc({"message": "Bad credentials"}), headers
        if counter.rate_remaining <= 0:
            return 403, _doc({"message": "API rate limit exceeded"}), headers
        params = dict(parse_qsl(query))
        status, doc = Routes(world).dispatch(self.command, path, params, payload)
        if isinstance(doc, list):
            doc, headers["Link"] = _page(doc, params, f"https://{world.host}{full}")
        body = _doc(doc)
        etag = 'W/"' + hashlib.sha1(body).hexdigest() + '"'
        if self.command == "GET" and status == 200:
            if self.headers.get("If-None-Match") == etag:
                return 304, b"", headers | {"ETag": etag}  # free: no rate-limit cost
            headers["ETag"] = etag
        counter.rate_remaining -= 1
        return status, body, headers | self._limit_headers(world, counter)

    def _limit_headers(self, world: World, counter: World | Installation) -> dict[str, str]:
        reset = int(world.now.timestamp()) + 3600
        headers = {
            "X-RateLimit-Limit": str(counter.rate_limit),
            "X-RateLimit-Remaining": str(max(counter.rate_remaining, 0)),
            "X-RateLimit-Reset": str(reset),
            "X-RateLimit-Used": str(counter.rate_limit - max(counter.rate_remaining, 0)),
            "X-RateLimit-Resource": "core",
        }
        if world.poll_interval is not None:
            headers["X-Poll-Interval"] = str(world.poll_interval)
        return headers

    def _take_failure(self, world: World, path: str) -> Failure | None:
        for failure in world.failures:
            if re.search(failure.path, path) and failure.method in (None, self.command):
                if failure.times is not None:
                    failure.times -= 1
                    if failure.times <= 0:
                        world.failures.remove(failure)
                return failure
        return None

    def _read_payload(self) -> Any:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""  # gh sends `--input -` chunked
            while (size := int(self.rfile.readline().strip() or b"0", 16)) > 0:
                raw += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        if status != 304:
            headers = headers | {"Content-Type": "application/json; charset=utf-8", "Content-Length": str(len(body))}
        for name, value in headers.items():
            if value:
                self.send_header(name, value)
        self.end_headers()
        if status != 304:
            self.wfile.write(body)


def _doc(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def _page(rows: list[Any], params: dict[str, str], base: str) -> tuple[list[Any], str]:
    size = min(int(params.get("per_page", "30")), 100)
    number = int(params.get("page", "1"))
    last = max((len(rows) + size - 1) // size, 1)
    links = []
    if number < last:
        for rel, target in (("next", number + 1), ("last", last)):
            links.append(f'<{base}?{urlencode(params | {"page": str(target)})}>; rel="{rel}"')
    return rows[(number - 1) * size : number * size], ", ".join(links)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    world: World

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-reply (the timeout tests) is expected, not news


class StandIn:
    """A GitHub REST stand-in on 127.0.0.1 over HTTPS with a certificate made for this run."""

    def __init__(self, directory: Path, world: World | None = None) -> None:
        self.world = world or World()
        self.cert, key = self_signed(directory)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.world = self.world
        self.world.host = self.host
        self._config = directory / "gh-config"
        self._config.mkdir(exist_ok=True)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def host(self) -> str:
        return f"localhost:{self._server.server_address[1]}"

    def gh_env(self, **extra: str) -> dict[str, str]:
        """The environment the real gh needs to reach this stand-in, and nothing of the caller's."""
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self._config),
            "GH_CONFIG_DIR": str(self._config),
            "GH_ENTERPRISE_TOKEN": self.world.token,
            "SSL_CERT_FILE": str(self.cert),
            "GH_NO_UPDATE_NOTIFIER": "1",
            "GH_PROMPT_DISABLED": "1",
        } | extra

    def reset(self) -> World:
        """A fresh world on the same server (one server per test module, one world per test)."""
        self.world = World(token=self.world.token, host=self.host)
        self._server.world = self.world
        return self.world

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
