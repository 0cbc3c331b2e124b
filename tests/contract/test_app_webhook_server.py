"""The webhook receiver as the GitHub App's: deliveries signed with the App's webhook secret carry
their installation, and only they say what changed of an installation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from adapters.github.webhook import GhWebhookServer
from domain.installations import InstallationAction, InstallationChange
from domain.refs import RepoRef
from domain.webhook import Pushed
from tests.webhook_support import post_delivery

APP_SECRET = "app-s3cret"
REPO_SECRET = "repo-s3cret"
INSTALLATION = {"id": 7, "html_url": "https://github.com/organizations/acme/settings/installations/7"}


@dataclass
class Heard:
    pushed: list[Pushed] = field(default_factory=list)
    changes: list[InstallationChange] = field(default_factory=list)
    server: GhWebhookServer | None = None

    def post(self, event: str, payload: Any, *, secret: str = APP_SECRET) -> int:
        assert self.server is not None
        host, port = self.server.address
        return post_delivery(host, port, event, json.dumps(payload).encode(), secret=secret)


def _serve(heard: Heard, *, secret: str) -> Iterator[Heard]:
    heard.server = GhWebhookServer(
        host="127.0.0.1", port=0, secret=secret, app_secret=APP_SECRET, accept=heard.pushed.append,
        installation_changed=heard.changes.append,
    )  # fmt: skip
    heard.server.start()
    try:
        yield heard
    finally:
        heard.server.stop()


@pytest.fixture
def app() -> Iterator[Heard]:
    yield from _serve(Heard(), secret="")  # the App's webhook alone: no repository secret


@pytest.fixture
def both() -> Iterator[Heard]:
    yield from _serve(Heard(), secret=REPO_SECRET)


def _comment(**extra: Any) -> dict[str, Any]:
    return {
        "action": "created",
        "repository": {"full_name": "acme/widgets"},
        "issue": {"number": 7, "labels": [{"name": "loop"}]},
        "comment": {
            "id": 4242,
            "user": {"login": "alice"},
            "body": "go",
            "created_at": "2026-11-30T10:00:00Z",
            "html_url": "https://github.com/acme/widgets/issues/7#issuecomment-4242",
            "issue_url": "https://api.github.com/repos/acme/widgets/issues/7",
        },
        **extra,
    }


def test_the_apps_comment_delivery_carries_the_installation_it_came_through(app: Heard) -> None:
    status = app.post("issue_comment", _comment(installation={"id": 7, "node_id": "MDIz"}))

    assert (status, [(p.comment.id, p.installation) for p in app.pushed]) == (202, [("4242", 7)])


def test_the_apps_comment_delivery_naming_no_installation_is_malformed(app: Heard) -> None:
    assert (app.post("issue_comment", _comment()), app.pushed) == (400, [])


def test_with_the_app_alone_a_delivery_signed_with_an_empty_secret_is_refused(app: Heard) -> None:
    status = app.post("issue_comment", _comment(installation={"id": 7}), secret="")

    assert (status, app.pushed) == (401, [])


def test_a_repository_webhooks_delivery_beside_the_apps_carries_no_installation(both: Heard) -> None:
    statuses = [
        both.post("issue_comment", _comment(), secret=REPO_SECRET),
        both.post("issue_comment", _comment(installation={"id": 7}), secret="another"),
    ]

    assert (statuses, [p.installation for p in both.pushed]) == ([202, 401], [None])


def test_installation_events_say_which_repositories_each_installation_gained_and_lost(app: Heard) -> None:
    repos = [{"full_name": "acme/widgets"}, {"full_name": "acme/gears"}]
    statuses = [
        app.post("installation", {"action": "created", "installation": INSTALLATION, "repositories": repos}),
        app.post(
            "installation_repositories",
            {
                "action": "removed",
                "installation": INSTALLATION,
                "repositories_added": [],
                "repositories_removed": repos[:1],
            },
        ),
        app.post(
            "installation_repositories",
            {"action": "added", "installation": INSTALLATION, "repositories_added": repos[1:]},
        ),
        app.post("installation", {"action": "deleted", "installation": INSTALLATION, "repositories": repos}),
        app.post("installation", {"action": "new_permissions_accepted", "installation": INSTALLATION}),
        app.post("installation", {"action": "something_new", "installation": INSTALLATION}),  # not read
    ]

    widgets, gears = RepoRef.parse("acme/widgets"), RepoRef.parse("acme/gears")
    assert statuses == [202, 202, 202, 202, 202, 204]
    assert [(c.action, sorted(map(str, c.added)), sorted(map(str, c.removed))) for c in app.changes] == [
        (InstallationAction.CREATED, sorted([str(widgets), str(gears)]), []),
        (InstallationAction.REMOVED, [], [str(widgets)]),
        (InstallationAction.ADDED, [str(gears)], []),
        (InstallationAction.DELETED, [], []),
        (InstallationAction.NEW_PERMISSIONS_ACCEPTED, [], []),
    ]
    assert {c.installation for c in app.changes} == {7}


def test_an_installations_repositories_are_on_its_own_host(app: Heard) -> None:
    installation = {"id": 3, "html_url": "https://ghe.example.com/organizations/acme/settings/installations/3"}
    app.post("installation_repositories", {"action": "added", "installation": installation,
                                           "repositories_added": [{"full_name": "acme/widgets"}]})  # fmt: skip

    assert [sorted(c.added) for c in app.changes] == [[RepoRef("ghe.example.com", "acme", "widgets")]]


def test_an_installation_event_signed_with_the_repository_secret_is_not_heeded(both: Heard) -> None:
    deleted = {"action": "deleted", "installation": INSTALLATION}

    assert (both.post("installation", deleted, secret=REPO_SECRET), both.changes) == (204, [])


@pytest.mark.parametrize(
    "installation", [{"id": 7}, {"id": "7", "html_url": INSTALLATION["html_url"]}, {"id": 7, "html_url": "nowhere"}]
)
def test_an_installation_event_without_its_id_or_host_is_malformed(app: Heard, installation: dict[str, Any]) -> None:
    assert (app.post("installation", {"action": "suspend", "installation": installation}), app.changes) == (400, [])
