"""`webhook` end to end: a signed delivery wakes the poller and its comment is delivered once."""

from __future__ import annotations

import hashlib
import hmac
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping

import pytest

from adapters.clock import SystemClock
from domain.events import Event
from tests.e2e.cli import clean_env
from tests.e2e.loop_rig import REPO, Loop, loop
from tests.github_standin import StandIn
from tests.github_standin.rigs import standin
from tests.tmux_support import real_tmux, wait_for

__all__ = ["loop", "real_tmux", "standin"]
SECRET = "e2e-secret"
GH_REPO = "acme/widgets"
STRANGERS = 40


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _deliver(port: int, payload: Mapping[str, object], *, event: str = "issue_comment") -> int:
    body = json.dumps(payload).encode()
    signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=body,
        method="POST",
        headers={"X-GitHub-Event": event, "X-Hub-Signature-256": signature},
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return int(reply.status)


def test_a_signed_delivery_wakes_the_poller_and_its_comment_is_delivered_once(loop: Loop) -> None:
    port = _free_port()
    loop.interval_seconds = 3600  # only the webhook can make the next cycle come soon
    loop.extra = {"webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET}}}
    (ref,) = loop.with_sessions(1)
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "--config", str(loop.write_config()), "webhook"],
        cwd=loop.root,
        env=clean_env(loop.tmux.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: loop.event_names().count(Event.POLL_CYCLE) >= 2, what="the webhook's first cycle")
        payload = {
            "action": "created",
            "repository": {"full_name": str(REPO)},
            "issue": {"number": ref.number, "labels": [{"name": "loop"}]},
            "comment": {
                "id": 987654,
                "user": {"login": "demo"},
                "body": "from the webhook",
                "created_at": f"{SystemClock().now():%Y-%m-%dT%H:%M:%SZ}",  # new: after the item was armed
                "html_url": f"https://github.com/{REPO}/issues/{ref.number}#issuecomment-987654",
                "issue_url": f"https://api.github.com/repos/{REPO}/issues/{ref.number}",
            },
        }

        assert _deliver(port, payload) == 202
        wait_for(lambda: any("from the webhook" in text for text in loop.pasted()), what="the pushed comment")
        assert _deliver(port, payload) == 202  # GitHub redelivers: still once
        wait_for(lambda: loop.event_names().count(Event.WEBHOOK_RECEIVED) >= 2, what="the redelivery")
        wait_for(lambda: loop.store().inbox_items() == [], what="the redelivery worked")  # no cycle needed
    finally:
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)

    assert status == 0
    assert sum("from the webhook" in text for text in loop.pasted()) == 1
    succeeded = [e for e in loop.events() if e["event"] == "dispatch.succeeded" and "comment_id" in e]
    assert [e["delivery_id"] for e in succeeded] == ["poll-comment-987654"]


def test_webhook_refuses_to_start_when_it_is_not_enabled(loop: Loop) -> None:
    result = loop.cli("webhook")

    assert result.returncode == 2
    assert "webhooks.ghWebhook.enabled is false" in result.stderr


def test_the_configured_limits_reach_the_receiver(loop: Loop) -> None:
    port = _free_port()
    limits = {"maxBodyBytes": 1024, "readTimeoutSeconds": 1, "maxConnections": 8}
    loop.extra = {"webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET, **limits}}}
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "--config", str(loop.write_config()), "webhook"],
        cwd=loop.root,
        env=clean_env(loop.tmux.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: Event.POLL_CYCLE in loop.event_names(), what="the webhook's first cycle")
        with socket.create_connection(("127.0.0.1", port), timeout=10) as idle:
            timed_out = idle.recv(100)  # nothing sent: answered once the read timeout passed
        with pytest.raises(urllib.error.HTTPError) as refused:
            _deliver(port, {"action": "created", "padding": "x" * 2048})
    finally:
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)

    assert (status, refused.value.code, timed_out[:13]) == (0, 413, b"HTTP/1.1 408 ")


def _stranger(host: str, number: int, comment_id: int, body: str) -> dict[str, object]:
    """GitHub's delivery of a comment by someone not authorized, on an issue without the label."""
    return {
        "action": "created",
        "repository": {"full_name": GH_REPO},
        "issue": {"number": number, "labels": []},
        "comment": {
            "id": comment_id,
            "user": {"login": "mallory"},
            "body": body,
            "created_at": f"{SystemClock().now():%Y-%m-%dT%H:%M:%SZ}",
            "html_url": f"https://{host}/{GH_REPO}/issues/{number}#issuecomment-{comment_id}",
            "issue_url": f"https://{host}/api/v3/repos/{GH_REPO}/issues/{number}",
        },
    }


@pytest.mark.gh
def test_a_strangers_signed_deliveries_are_answered_kept_nowhere_and_cost_no_github_request(
    loop: Loop, standin: StandIn
) -> None:
    github = standin.reset()
    github.add_issue(GH_REPO, 1, author="demo")  # watched: the repository is read every cycle
    github.add_issue(GH_REPO, 2, author="mallory", labels=())  # anyone may comment here
    port = _free_port()
    loop.interval_seconds = 3600  # no cycle is due: only a wake could make one
    loop.sources = [{"provider": "github", "repos": [GH_REPO], "label": "loop"}]
    loop.extra = {
        "integrations": {"github": {"host": standin.host}},
        "webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET}},
    }
    loop.env = standin.gh_env()
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "--config", str(loop.write_config()), "webhook"],
        cwd=loop.root,
        env=clean_env(loop.tmux.env | loop.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(lambda: Event.POLL_CYCLE in loop.event_names(), timeout=60, what="the first cycle")
        wait_for(lambda: Event.SESSION_READY in loop.event_names(), timeout=60, what="item 1's harness")
        before = github.requests
        statuses = [_deliver(port, _stranger(standin.host, 2, 50_000 + n, f"spam {n}")) for n in range(STRANGERS)]
        # the last delivery's answer came after its handling; a cycle it woke would have started by now
        wait_for(lambda: Event.WEBHOOK_DROPPED in loop.event_names(), what="the drops said")
        time.sleep(1.0)
        after = github.requests
        kept = loop.store().inbox_index()
    finally:
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=60)

    assert status == 0
    assert statuses == [202] * STRANGERS  # answered alike: nothing for GitHub to retry, nothing told
    assert after == before, f"{after - before} GitHub requests for {STRANGERS} strangers' deliveries"
    assert kept == []
    dropped = [e for e in loop.events() if e["event"] == "webhook.dropped"]
    assert [(e["reason"], e["count"]) for e in dropped] == [("unauthorized", 1)]  # once a minute, counted


def _payload(number: int, comment_id: int, body: str) -> dict[str, object]:
    return {
        "action": "created",
        "repository": {"full_name": str(REPO)},
        "issue": {"number": number, "labels": [{"name": "loop"}]},
        "comment": {
            "id": comment_id,
            "user": {"login": "demo"},
            "body": body,
            "created_at": f"{SystemClock().now():%Y-%m-%dT%H:%M:%SZ}",
            "html_url": f"https://github.com/{REPO}/issues/{number}#issuecomment-{comment_id}",
            "issue_url": f"https://api.github.com/repos/{REPO}/issues/{number}",
        },
    }


def test_poll_serves_the_webhook_receiver_when_it_is_enabled(loop: Loop) -> None:
    port = _free_port()
    loop.interval_seconds = 3600  # only the webhook can make the next cycle come soon
    loop.extra = {"webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET}}}
    (ref,) = loop.with_sessions(1)
    poller = loop.running_poll()  # what the systemd unit runs
    try:
        wait_for(lambda: loop.event_names().count(Event.POLL_CYCLE) >= 2, what="the poller's first cycle")

        assert _deliver(port, _payload(ref.number, 987655, "pushed to poll")) == 202
        wait_for(lambda: any("pushed to poll" in text for text in loop.pasted()), what="the pushed comment")
    finally:
        status = poller.stop()

    assert status == 0
    assert f"serving GitHub webhooks on http://127.0.0.1:{port}/" in poller.stderr


def test_a_signed_member_delivery_drops_the_permissions_the_daemon_kept_for_its_repository(loop: Loop) -> None:
    port = _free_port()
    loop.interval_seconds = 3600
    loop.extra = {"webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET}}}
    poller = loop.running_poll()
    removed = {
        "action": "removed",
        "member": {"login": "carol"},
        "repository": {"full_name": str(REPO), "html_url": f"https://github.com/{REPO}"},
    }
    try:
        wait_for(lambda: Event.POLL_CYCLE in loop.event_names(), what="the poller's first cycle")
        answered = _deliver(port, removed, event="member")
        wait_for(lambda: Event.AUTHORIZE_FORGOTTEN in loop.event_names(), what="the permissions dropped")
    finally:
        status = poller.stop()

    assert (status, answered) == (0, 202)
    [dropped] = [e for e in loop.events() if e["event"] == "authorize.cache_dropped"]
    assert (dropped["github_event"], dropped["repo"], dropped["source"]) == ("member", str(REPO), "webhook")


def test_a_port_in_use_is_an_error_naming_the_key(loop: Loop) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        loop.extra = {"webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET}}}

        result = loop.cli("poll")

    assert result.returncode == 2, result.stderr
    assert "webhooks.ghWebhook.port" in result.stderr and str(port) in result.stderr


def _post(port: int, body: bytes, signature: str) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=body,
        method="POST",
        headers={"X-GitHub-Event": "issue_comment", "X-Hub-Signature-256": signature},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_refused_requests_leave_an_event_once_a_minute_per_reason(loop: Loop) -> None:
    port = _free_port()
    loop.interval_seconds = 3600
    loop.extra = {"webhooks": {"ghWebhook": {"enabled": True, "port": port, "secret": SECRET}}}
    poller = loop.running_poll()
    try:
        body = json.dumps(_payload(1, 5, "forged")).encode()
        statuses = [_post(port, body, "sha256=" + "0" * 64) for _ in range(3)]
        elsewhere = {**_payload(1, 6, "signed"), "repository": {"full_name": "someone/else"}}
        statuses += [_deliver(port, elsewhere) for _ in range(2)]  # signed, for a repository not watched
        wait_for(lambda: {Event.WEBHOOK_REFUSED, Event.WEBHOOK_DROPPED} <= set(loop.event_names()), what="both said")
    finally:
        status = poller.stop()

    assert (status, statuses) == (0, [401, 401, 401, 202, 202])
    refused = [e for e in loop.events() if e["event"] == "webhook.refused"]
    assert [(e["reason"], e["status"], e["count"], e["level"]) for e in refused] == [
        ("bad-signature", 401, 1, "warning")
    ]
    dropped = [e for e in loop.events() if e["event"] == "webhook.dropped"]
    assert [(e["reason"], e["count"]) for e in dropped] == [("unwatched", 1)]
