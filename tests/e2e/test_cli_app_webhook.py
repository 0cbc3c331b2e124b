"""The GitHub App's one webhook end to end: deliveries signed with the App's webhook secret for
every installation, kept only through the installation that serves a watched repository, and
`installation` / `installation_repositories` events changing which repositories each one serves."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from adapters.clock import SystemClock
from domain.events import Event
from tests.e2e.loop_rig import REPO, Loop, loop
from tests.github_standin import StandIn
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode
from tests.github_standin.rigs import standin
from tests.tmux_support import real_tmux, wait_for
from tests.webhook_support import post_delivery

__all__ = ["app_key", "loop", "real_tmux", "standin"]  # fixtures, imported to be used here
APP_SECRET = "e2e-app-secret"
INSTALLATION = 7


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _deliver(
    port: int, payload: Mapping[str, object], *, event: str = "issue_comment", secret: str = APP_SECRET
) -> int:
    return post_delivery("127.0.0.1", port, event, json.dumps(payload).encode(), secret=secret)


def _comment(number: int, comment_id: int, body: str, *, installation: int = INSTALLATION, repo: str = str(REPO),
             host: str = "github.com") -> dict[str, object]:  # fmt: skip
    return {
        "action": "created",
        "installation": {"id": installation, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNw=="},
        "repository": {"full_name": repo},
        "issue": {"number": number, "labels": [{"name": "loop"}]},
        "comment": {
            "id": comment_id,
            "user": {"login": "demo"},
            "body": body,
            "created_at": f"{SystemClock().now():%Y-%m-%dT%H:%M:%SZ}",  # new: after the item was armed
            "html_url": f"https://{host}/{repo}/issues/{number}#issuecomment-{comment_id}",
            "issue_url": f"https://api.{host}/repos/{repo}/issues/{number}",
        },
    }


def _repositories(action: str, repo: str, *, host: str = "github.com") -> dict[str, object]:
    return {
        "action": action,
        "installation": {"id": INSTALLATION, "html_url": f"https://{host}/settings/installations/{INSTALLATION}"},
        f"repositories_{action}": [{"full_name": repo}],
    }


def _app_mode(loop: Loop, key: AppKeyFile, port: int, **github: Any) -> None:
    """The App's webhook served alone (no repository secret), the sandbox owner's installation named."""
    app = {"id": APP_ID, "privateKeyFile": str(key.path), "webhookSecret": APP_SECRET,
           "installations": {REPO.owner: INSTALLATION}}  # fmt: skip
    loop.interval_seconds = 3600  # only a kept delivery can make the next cycle come soon
    loop.extra = {
        "webhooks": {"ghWebhook": {"enabled": True, "port": port}},
        "integrations": {"github": {"app": app, **github}},
    }


def _app_api(loop: Loop, standin: StandIn, key: AppKeyFile) -> None:
    """GitHub's App API on the stand-in: the receiver asks it the App's bot login (`GET /app`) before
    it reads a comment delivery, to tell the App's own comments; the items stay the sandbox's."""
    app_mode(standin, key)
    standin.world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock
    loop.extra["integrations"]["github"]["host"] = standin.host
    loop.env = standin.gh_env()


def _serving_app_webhook(loop: Loop, standin: StandIn, key: AppKeyFile) -> int:
    """The App's webhook served alone on a free port (returned), the App's API on the stand-in."""
    port = _free_port()
    _app_mode(loop, key, port)
    _app_api(loop, standin, key)
    return port


def _dropped(loop: Loop) -> list[tuple[str, int]]:
    return [(e["reason"], e["count"]) for e in loop.events() if e["event"] == "webhook.dropped"]


@pytest.mark.gh
def test_an_app_delivery_through_the_installation_of_a_watched_repository_reaches_the_session(
    loop: Loop, standin: StandIn, app_key: AppKeyFile
) -> None:
    port = _serving_app_webhook(loop, standin, app_key)
    (ref,) = loop.with_sessions(1)
    poller = loop.start_poll()
    try:
        wait_for(lambda: "serving GitHub webhooks" in poller.stderr, what="the receiver")
        answered = _deliver(port, _comment(ref.number, 987654, "through the app"))
        wait_for(lambda: any("through the app" in text for text in loop.pasted()), what="the pushed comment")
    finally:
        status = poller.stop()

    assert (status, answered) == (0, 202)
    [received] = [e for e in loop.events() if e["event"] == "webhook.received"]
    assert received["comment_id"] == "987654"


@pytest.mark.gh
def test_an_app_delivery_badly_signed_is_refused_and_one_through_another_installation_or_repository_is_dropped(
    loop: Loop, standin: StandIn, app_key: AppKeyFile
) -> None:
    port = _serving_app_webhook(loop, standin, app_key)
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    try:
        statuses = [
            _deliver(port, _comment(ref.number, 11, "forged"), secret="not-the-apps"),
            _deliver(port, _comment(ref.number, 12, "elsewhere", installation=9)),
            _deliver(port, _comment(1, 13, "not watched", repo="acme/other")),
        ]
        wait_for(lambda: len(_dropped(loop)) == 2, what="both drops said")
    finally:
        status = poller.stop()

    assert (status, statuses) == (0, [401, 202, 202])
    assert [e["reason"] for e in loop.events() if e["event"] == "webhook.refused"] == ["bad-signature"]
    assert sorted(_dropped(loop)) == [("installation-unwatched", 1), ("unwatched", 1)]
    assert loop.store().inbox_index() == []


@pytest.mark.gh
def test_a_repository_removed_from_the_installation_has_its_deliveries_dropped_until_it_is_added_back(
    loop: Loop, standin: StandIn, app_key: AppKeyFile
) -> None:
    port = _serving_app_webhook(loop, standin, app_key)
    (ref,) = loop.items(1)
    poller = loop.running_poll()
    try:
        removed = _deliver(port, _repositories("removed", str(REPO)), event="installation_repositories")
        dropped = _deliver(port, _comment(ref.number, 21, "while removed"))
        wait_for(lambda: _dropped(loop) != [], what="the drop said")
        added = _deliver(port, _repositories("added", str(REPO)), event="installation_repositories")
        kept = _deliver(port, _comment(ref.number, 22, "added back"))
        wait_for(lambda: Event.WEBHOOK_RECEIVED in loop.event_names(), what="the kept delivery")
    finally:
        status = poller.stop()

    assert (status, removed, dropped, added, kept) == (0, 202, 202, 202, 202)
    assert _dropped(loop) == [("repository-removed", 1)]
    [received] = [e for e in loop.events() if e["event"] == "webhook.received"]
    changes = [
        (e["action"], e["added"], e["removed"]) for e in loop.events() if e["event"] == "webhook.installation_changed"
    ]
    assert (received["comment_id"], changes) == ("22", [("removed", [], [str(REPO)]), ("added", [str(REPO)], [])])


@pytest.mark.gh
def test_a_deleted_installation_drops_its_token_and_then_its_deliveries(
    loop: Loop, standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(INSTALLATION, "acme")
    world = standin.world
    world.now = SystemClock().now().replace(microsecond=0)  # the JWT is signed on the machine's clock
    world.add_issue("acme/widgets", 1, author="bob")  # by nobody authorized: nothing spawns
    port = _free_port()
    _app_mode(loop, app_key, port, host=standin.host)
    loop.extra["integrations"]["github"]["app"]["installations"] = {}  # looked up, as GitHub names it
    loop.sources = [{"provider": "github", "repos": ["acme/widgets"], "label": "loop"}]
    loop.env = standin.gh_env()
    poller = loop.running_poll()
    try:
        wait_for(lambda: len(app.exchanges_of(INSTALLATION)) == 1, what="the installation's token")
        deleted = {"action": "deleted", "installation": {"id": INSTALLATION,
                   "html_url": f"https://{standin.host}/settings/installations/{INSTALLATION}"}}  # fmt: skip
        answered = _deliver(port, deleted, event="installation")
        wait_for(lambda: Event.WEBHOOK_INSTALLATION_CHANGED in loop.event_names(), what="the deletion taken in")
        after = _deliver(port, _comment(1, 31, "after the deletion", repo="acme/widgets", host=standin.host))
        wait_for(lambda: _dropped(loop) != [], what="the drop said")
    finally:
        status = poller.stop()

    assert (status, answered, after) == (0, 202, 202)
    [changed] = [e for e in loop.events() if e["event"] == "webhook.installation_changed"]
    assert (changed["action"], changed["installation"], changed["token_dropped"]) == ("deleted", INSTALLATION, True)
    assert _dropped(loop) == [("installation-unwatched", 1)]
    assert APP_SECRET not in (loop.log.read_text(encoding="utf-8") + poller.stderr)
