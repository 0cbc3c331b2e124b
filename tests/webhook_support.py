"""Posting a webhook delivery as GitHub does: the body signed with the secret (`X-Hub-Signature-256`)."""

from __future__ import annotations

import hashlib
import hmac
import urllib.error
import urllib.request


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post_delivery(host: str, port: int, event: str, body: bytes, *, secret: str | None, timeout: float = 10.0) -> int:
    """The HTTP status the receiver answers `body` as an `event` delivery with; unsigned when `secret`
    is None."""
    headers = {"X-GitHub-Event": event, "Content-Type": "application/json"}
    if secret is not None:
        headers["X-Hub-Signature-256"] = signature(secret, body)
    request = urllib.request.Request(f"http://{host}:{port}/", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
