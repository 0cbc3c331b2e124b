"""The GitHub webhook receiver: signed deliveries of new comments, handed on as domain comments."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from adapters.github.payloads import comment as parse_comment
from domain.errors import TrackerError
from domain.model import Comment, CommentKind
from domain.refs import RepoRef

MAX_BODY = 25 * 1024 * 1024  # GitHub caps a delivery's payload at 25 MB
_KINDS = {"issue_comment": CommentKind.ISSUE_COMMENT, "pull_request_review_comment": CommentKind.REVIEW_COMMENT}
_log = logging.getLogger(__name__)


def signature_ok(secret: bytes, body: bytes, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.encode())


def comment_of(event: str, payload: dict[str, Any], *, host: str) -> Comment | None:
    """The new comment a delivery announces, or None for anything else (edits, deletions, other events)."""
    kind = _KINDS.get(event)
    if kind is None or payload.get("action") != "created":
        return None
    try:
        repo = RepoRef.parse(str(payload["repository"]["full_name"]), host=host)
        return parse_comment(repo, payload["comment"], kind, f"{repo}: webhook {event}").comment
    except (KeyError, TypeError) as error:
        raise TrackerError(f"webhook {event}: malformed payload ({error!r})") from error


class GhWebhookServer:
    """`POST` deliveries signed with `X-Hub-Signature-256`; anything unsigned or badly signed is
    refused with 401 before its body is parsed. `accept` gets each new comment."""

    def __init__(
        self, *, host: str, port: int, secret: str, github_host: str, accept: Callable[[Comment], None]
    ) -> None:
        self._secret = secret.encode()
        self._github_host = github_host
        self._accept = accept
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def handle(self, event: str, body: bytes, signature: str) -> int:
        """The HTTP status for one delivery."""
        if not signature_ok(self._secret, body, signature):
            return 401
        if event == "ping":
            return 200
        try:
            payload = json.loads(body)
            comment = comment_of(event, payload, host=self._github_host) if isinstance(payload, dict) else None
        except (ValueError, TrackerError) as error:
            _log.warning("webhook delivery refused: %s", error)
            return 400
        if comment is None:
            return 204
        self._accept(comment)
        return 202

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server dispatches on
                length = int(self.headers.get("Content-Length") or 0)
                if length <= 0 or length > MAX_BODY:
                    self._reply(413 if length > MAX_BODY else 400)
                    return
                body = self.rfile.read(length)
                status = receiver.handle(
                    self.headers.get("X-GitHub-Event", ""), body, self.headers.get("X-Hub-Signature-256", "")
                )
                self._reply(status)

            def _reply(self, status: int) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                _log.debug("webhook: " + format, *args)

        return Handler
