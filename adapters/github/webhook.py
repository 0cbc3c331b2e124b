"""The GitHub webhook receiver: signed deliveries of new comments, handed on as domain comments, of
changes to who may do what, and of the GitHub App's installations, handed on as such."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
from collections.abc import Callable
from dataclasses import replace
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

from adapters.github.app_webhook import installation_change_of, installation_of
from adapters.github.payloads import comment as parse_comment
from adapters.github.webhook_http import MAX_HEAD, Delivery, Refused, read_delivery, response
from adapters.http_server.serving import LoopServer
from domain.authorize import AccessChange
from domain.errors import InvalidRef, TrackerError
from domain.installations import InstallationChange
from domain.model import CommentKind
from domain.refs import RepoRef
from domain.webhook import Pushed, Refusal

# GitHub caps a payload at 25 MB, but a comment event is small: its comment and issue bodies are
# at most 65,536 characters each, so ~0.6 MB in the worst case
MAX_BODY = 1024 * 1024
READ_TIMEOUT = 10.0
MAX_CONNECTIONS = 256
_LINGER = 2.0  # after an early answer: how long unread input is drained so the answer is not reset
_KINDS = {"issue_comment": CommentKind.ISSUE_COMMENT, "pull_request_review_comment": CommentKind.REVIEW_COMMENT}
# events that say a login's role on repositories may have changed: a collaborator added, removed or
# given another role (`member`), a team's members or repositories (`membership`, `team`), an
# organization's members (`organization`)
ACCESS_EVENTS = frozenset({"member", "membership", "organization", "team"})
_log = logging.getLogger(__name__)
# why a request was refused, by its answer (the `webhook.refused` event's reason)
_REFUSALS = {
    HTTPStatus.BAD_REQUEST: Refusal.MALFORMED,
    HTTPStatus.UNAUTHORIZED: Refusal.BAD_SIGNATURE,
    HTTPStatus.METHOD_NOT_ALLOWED: Refusal.NOT_POST,
    HTTPStatus.REQUEST_TIMEOUT: Refusal.TIMEOUT,
    HTTPStatus.LENGTH_REQUIRED: Refusal.NO_LENGTH,
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: Refusal.TOO_LARGE,
    HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE: Refusal.HEAD_TOO_LARGE,
    HTTPStatus.SERVICE_UNAVAILABLE: Refusal.TOO_MANY_CONNECTIONS,
}


def signature_ok(secret: bytes, body: bytes, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.encode())


def pushed_of(event: str, payload: dict[str, Any], *, bot: str | None = None) -> Pushed | None:
    """The new comment a delivery announces, with its item's labels, or None for anything else
    (edits, deletions, other events). Its host is the one the delivery names (the comment's page):
    `acme/widgets` on an Enterprise host is not github.com's `acme/widgets`. `bot`: the login
    the-loop posts as (a GitHub App's), whose comments are its own."""
    kind = _KINDS.get(event)
    if kind is None or payload.get("action") != "created":
        return None
    try:
        raw = payload["comment"]
        host = urlsplit(str(raw["html_url"])).netloc
        if not host:
            raise ValueError(f"no host in {raw['html_url']!r}")
        repo = RepoRef.parse(str(payload["repository"]["full_name"]), host=host)
        if repo.host != host:  # a full name carrying a host of its own is not GitHub's
            raise ValueError(f"a host in {repo.full_name!r}")
        found = parse_comment(repo, raw, kind, f"{repo}: webhook {event}", bot=bot).comment
        item = payload.get("pull_request" if kind is CommentKind.REVIEW_COMMENT else "issue") or {}
        labels = frozenset(str(label["name"]) for label in item.get("labels") or ())
    except (KeyError, TypeError, ValueError, InvalidRef) as error:
        raise TrackerError(f"webhook {event}: malformed payload ({error!r})") from error
    return Pushed(found, labels)


def access_change_of(event: str, payload: dict[str, Any]) -> AccessChange | None:
    """The change of access a delivery announces, or None for any other event. A `member` or `team`
    event naming a repository changed roles on that one; any other may have changed them anywhere
    (a payload too odd to read says as much)."""
    if event not in ACCESS_EVENTS:
        return None
    raw = payload.get("repository") if event in {"member", "team"} else None
    try:
        host = urlsplit(str(raw["html_url"])).netloc if isinstance(raw, dict) else ""
        repo = RepoRef.parse(str(raw["full_name"]), host=host) if host and isinstance(raw, dict) else None
    except (KeyError, InvalidRef):
        repo = None
    return AccessChange(event, repo)


def said_by(
    event: str, payload: Any, *, by_app: bool, bot: str | None = None
) -> InstallationChange | AccessChange | Pushed | None:
    """What one delivery says that the-loop heeds, or None. What an installation changed is heeded
    from the GitHub App's delivery (`by_app`) alone, and its comment carries its installation. `bot`:
    the login the-loop writes as, when that is its App's bot (its comments are ours by it)."""
    if not isinstance(payload, dict):
        return None
    installed = installation_change_of(event, payload) if by_app else None
    said = installed or access_change_of(event, payload) or pushed_of(event, payload, bot=bot)
    if isinstance(said, Pushed) and by_app:
        return replace(said, installation=installation_of(event, payload))
    return said


class GhWebhookServer(LoopServer):
    """`POST` deliveries signed with `X-Hub-Signature-256`, one per connection; `accept` gets each
    new comment (it decides what is kept), `access_changed` each change of who may do what. Anything
    unsigned or badly signed is refused with 401 before it is parsed. `bot_login` names the login
    the-loop posts as when that is a GitHub App's bot (None: a person's); a comment event is answered
    500 when it cannot be told, rather than taking the bot's comment for a person's.

    A delivery signed with `app_secret` is the GitHub App's: its comment carries the installation it
    came through (a comment delivery naming none is malformed, 400), and only it may say what changed
    of an installation (`installation_changed`). One signed with `secret`, a repository's or an
    organization's webhook, is taken as before. An empty secret signs nothing.

    Limits: a request is answered from its head before its body is read when it has no signature
    header (401), no `Content-Length` (411) or one over `max_body` (413); a connection has
    `read_timeout` seconds in all to send its request, then it is answered 408 and closed; at most
    `max_connections` are open at once, and one more is answered 503 and closed without a read.
    Connections are read by one event loop, so an idle one costs a socket, not a thread.
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        secret: str,
        accept: Callable[[Pushed], None],
        max_body: int = MAX_BODY,
        read_timeout: float = READ_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
        refused: Callable[[Refusal, int], None] = lambda reason, status: None,
        access_changed: Callable[[AccessChange], None] = lambda change: None,
        bot_login: Callable[[], str | None] = lambda: None,
        app_secret: str = "",
        installation_changed: Callable[[InstallationChange], None] = lambda change: None,
    ) -> None:
        super().__init__(host=host, port=port, max_connections=max_connections, max_head=MAX_HEAD, name="webhook")
        self._secret, self._app_secret = secret.encode(), app_secret.encode()
        self._installation_changed = installation_changed
        self._accept = accept
        self._refused = refused  # told of each refused request: its reason and status
        self._access_changed = access_changed
        self._bot_login = bot_login
        self._max_body, self._read_timeout = max_body, read_timeout

    def _busy(self) -> bytes:
        return response(self._refuse(HTTPStatus.SERVICE_UNAVAILABLE))

    def handle(self, event: str, body: bytes, signature: str) -> int:
        """The HTTP status for one delivery."""
        by_app = bool(self._app_secret) and signature_ok(self._app_secret, body, signature)
        if not by_app and not (self._secret and signature_ok(self._secret, body, signature)):
            return self._refuse(HTTPStatus.UNAUTHORIZED)
        if event == "ping":
            return 200
        bot = self._bot_login() if event in _KINDS else None  # failing, it is ours: a 500 (`_handled`)
        try:
            said = said_by(event, json.loads(body), by_app=by_app, bot=bot)
        except (ValueError, TrackerError) as error:
            _log.warning("webhook delivery refused: %s", error)
            return self._refuse(HTTPStatus.BAD_REQUEST)
        if isinstance(said, InstallationChange):
            self._installation_changed(said)
        elif isinstance(said, AccessChange):
            self._access_changed(said)
        elif isinstance(said, Pushed):
            self._accept(said)  # kept or dropped, it is answered alike: nothing for GitHub to retry
        return 204 if said is None else 202

    def _refuse(self, status: int) -> int:
        try:
            self._refused(_REFUSALS[HTTPStatus(status)], int(status))
        except Exception:  # saying it never changes the answer
            _log.exception("webhook: a refusal could not be said")
        return int(status)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(self._read_timeout):
                delivery = await read_delivery(reader, writer, max_body=self._max_body)
        except TimeoutError:
            delivery = Refused(HTTPStatus.REQUEST_TIMEOUT)
        if delivery is None:
            return
        if isinstance(delivery, Delivery):
            writer.write(response(await self._handled(delivery)))
            await writer.drain()
            return
        _log.debug("webhook: request refused (%d)", delivery.status)
        writer.write(response(self._refuse(delivery.status)))
        await writer.drain()
        await _linger(reader, writer)

    async def _handled(self, delivery: Delivery) -> int:
        """`handle` off the loop's thread: `accept` may write to disk."""
        try:
            return await asyncio.get_running_loop().run_in_executor(
                None, self.handle, delivery.event, delivery.body, delivery.signature
            )
        except Exception:  # a fault of ours is the sender's 500, never a dead receiver
            _log.exception("webhook: delivery of %s failed", delivery.event)
            return HTTPStatus.INTERNAL_SERVER_ERROR


async def _linger(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Drain what the client still sends, briefly: closing on unread input would reset the
    connection and could destroy the answer before the client read it."""
    if writer.can_write_eof():
        writer.write_eof()
    with contextlib.suppress(TimeoutError, ConnectionError, OSError):
        async with asyncio.timeout(_LINGER):
            while await reader.read(64 * 1024):
                pass
