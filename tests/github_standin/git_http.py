"""GitHub's git endpoint for tests: smart HTTP over HTTPS (`git http-backend` on the bare repositories
under a folder), every request let through only with the Basic credentials a check accepts."""

from __future__ import annotations

import base64
import binascii
import re
import ssl
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.github_standin.tls import self_signed

# user, password, the repository's `owner/name`: whether git may read it with them
Accepts = Callable[[str, str, str], bool]
_PATH = re.compile(r"^/(?P<owner>[^/]+)/(?P<name>[^/]+?)\.git/")


@dataclass(frozen=True)
class Asked:
    """A request that carried credentials: whose, for what, and whether they were taken."""

    user: str
    path: str
    accepted: bool


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        url = urlsplit(self.path)
        found = _PATH.match(url.path)
        body = self._body()
        credentials = _basic(self.headers.get("Authorization", ""))
        if found is None or credentials is None:
            self._refuse(404 if found is None else 401)
            return
        user, password = credentials
        accepted = self.server.accepts(user, password, f"{found['owner']}/{found['name']}")
        with self.server.lock:
            self.server.asked.append(Asked(user, url.path, accepted))
        if not accepted:
            self._refuse(401)
            return
        self._backend(url.path, url.query, user, body)

    def _backend(self, path: str, query: str, user: str, body: bytes) -> None:
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": user,
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
        }
        done = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        headers = [line.split(":", 1) for line in head.decode("latin-1").split("\r\n") if ":" in line]
        status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
        self.send_response(status)
        for name, value in headers:
            if name.lower() != "status":
                self.send_header(name, value.strip())
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while (size := int(self.rfile.readline().strip() or b"0", 16)) > 0:
                raw += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
            return raw
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _refuse(self, status: int) -> None:
        self.send_response(status)
        if status == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="GitHub"')
        self.send_header("Content-Length", "0")
        self.end_headers()


def _basic(header: str) -> tuple[str, str] | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, sep, password = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (user, password) if sep else None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    root: Path
    accepts: Accepts
    asked: list[Asked]
    lock: threading.Lock


class GitHttp:
    """Serves `<root>/<owner>/<repo>.git` at `https://localhost:<port>/<owner>/<repo>.git` with a
    certificate made for this run (`cert`: what git is told to trust, as `GIT_SSL_CAINFO`)."""

    def __init__(self, directory: Path, root: Path, *, accepts: Accepts) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.cert, key = self_signed(directory)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self._server.root, self._server.accepts = root, accepts
        self._server.asked, self._server.lock = [], threading.Lock()
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def template(self) -> str:
        """`routing.workspace.cloneUrl` for this server."""
        return f"https://localhost:{self._server.server_address[1]}/{{owner}}/{{repo}}.git"

    @property
    def asked(self) -> list[Asked]:
        with self._server.lock:
            return list(self._server.asked)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
