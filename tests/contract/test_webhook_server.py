"""The webhook receiver on loopback: signatures, event kinds, malformed and oversized deliveries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from adapters.github.webhook import GhWebhookServer
from domain.authorize import AccessChange
from domain.model import Comment, CommentKind
from domain.refs import RepoRef
from domain.webhook import Pushed
from tests.webhook_support import post_delivery

SECRET = "s3cret"


def _payload(action: str = "created", **comment: Any) -> dict[str, Any]:
    return {
        "action": action,
        "repository": {"full_name": "acme/widgets"},
        "comment": {
            "id": 4242,
            "user": {"login": "alice"},
            "body": "please \x1b[201~ fix",
            "created_at": "2026-11-30T10:00:00Z",
            "html_url": "https://github.com/acme/widgets/issues/7#issuecomment-4242",
            "issue_url": "https://api.github.com/repos/acme/widgets/issues/7",
            **comment,
        },
    }


@pytest.fixture
def server() -> Iterator[tuple[GhWebhookServer, list[Comment]]]:
    got: list[Comment] = []
    receiver = GhWebhookServer(
        host="127.0.0.1", port=0, secret=SECRET, accept=lambda pushed: got.append(pushed.comment)
    )
    receiver.start()
    try:
        yield receiver, got
    finally:
        receiver.stop()


def _post(receiver: GhWebhookServer, event: str, body: bytes, *, secret: str = SECRET, signed: bool = True) -> int:
    host, port = receiver.address
    return post_delivery(host, port, event, body, secret=secret if signed else None)


def test_a_signed_new_issue_comment_is_accepted_as_a_domain_comment(server) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server

    status = _post(receiver, "issue_comment", json.dumps(_payload()).encode())

    assert status == 202
    assert [(c.id, str(c.item), c.author, c.kind) for c in got] == [
        ("4242", "github:acme/widgets#7", "alice", CommentKind.ISSUE_COMMENT)
    ]
    assert str(got[0].delivery_id) == "poll-comment-4242"  # the same id the poll stream gives it


def test_a_new_review_comment_is_accepted_with_its_path_and_line(server) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server
    body = _payload(pull_request_url="https://api.github.com/repos/acme/widgets/pulls/9", path="a.py", line=3)

    assert _post(receiver, "pull_request_review_comment", json.dumps(body).encode()) == 202
    assert (str(got[0].item), got[0].path, got[0].line) == ("github:acme/widgets#9", "a.py", 3)


@pytest.mark.parametrize(("secret", "signed"), [("wrong", True), (SECRET, False)])
def test_an_unsigned_or_badly_signed_delivery_is_refused(server, secret: str, signed: bool) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server

    assert _post(receiver, "issue_comment", json.dumps(_payload()).encode(), secret=secret, signed=signed) == 401
    assert got == []


def test_edits_deletions_and_other_events_are_ignored(server) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server

    assert _post(receiver, "issue_comment", json.dumps(_payload(action="edited")).encode()) == 204
    assert _post(receiver, "issues", json.dumps({"action": "opened"}).encode()) == 204
    assert _post(receiver, "ping", b'{"zen": "hi"}') == 200
    assert got == []


def test_a_malformed_delivery_is_a_bad_request_and_accepts_nothing(server) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server

    assert _post(receiver, "issue_comment", b"{not json") == 400
    assert _post(receiver, "issue_comment", json.dumps({"action": "created", "comment": {}}).encode()) == 400
    assert got == []


@pytest.mark.parametrize(
    ("event", "extra"),
    [
        ("issue_comment", {}),
        ("pull_request_review_comment", {"pull_request_url": "https://api.github.com/repos/acme/widgets/pulls/9"}),
    ],
)
def test_a_comment_names_the_event_it_came_by(server, event: str, extra: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server

    assert _post(receiver, event, json.dumps(_payload(**extra)).encode()) == 202
    assert got[0].kind.event == event


def test_a_new_comment_already_updated_when_delivered_is_marked_edited(server) -> None:  # type: ignore[no-untyped-def]
    receiver, got = server
    body = _payload(created_at="2026-11-30T10:00:00Z", updated_at="2026-11-30T10:00:07Z")

    assert _post(receiver, "issue_comment", json.dumps(body).encode()) == 202
    assert got[0].edited


def test_a_delivery_from_another_github_host_is_taken_as_that_hosts_repository(server) -> None:  # type: ignore[no-untyped-def]
    # the receiver serves github.com; the same owner/repo on an Enterprise host is another repository
    receiver, got = server
    body = _payload(
        html_url="https://ghe.example.com/acme/widgets/issues/7#issuecomment-4242",
        issue_url="https://ghe.example.com/api/v3/repos/acme/widgets/issues/7",
    )

    assert _post(receiver, "issue_comment", json.dumps(body).encode()) == 202
    assert [str(c.item) for c in got] == ["github:ghe.example.com/acme/widgets#7"]


def test_a_delivery_carries_the_labels_its_item_has_on_github() -> None:
    pushed: list[Pushed] = []
    receiver = GhWebhookServer(host="127.0.0.1", port=0, secret=SECRET, accept=pushed.append)
    receiver.start()
    try:
        issue = {**_payload(), "issue": {"number": 7, "labels": [{"name": "loop"}, {"name": "bug"}]}}
        review = {
            **_payload(pull_request_url="https://api.github.com/repos/acme/widgets/pulls/9"),
            "pull_request": {"number": 9, "labels": [{"name": "loop"}]},
        }
        statuses = [
            _post(receiver, "issue_comment", json.dumps(issue).encode()),
            _post(receiver, "pull_request_review_comment", json.dumps(review).encode()),
            _post(receiver, "issue_comment", json.dumps(_payload(id=4243)).encode()),  # no labels given
        ]
    finally:
        receiver.stop()

    assert statuses == [202, 202, 202]
    assert [sorted(p.labels) for p in pushed] == [["bug", "loop"], ["loop"], []]


def test_a_delivery_naming_no_host_is_refused() -> None:
    receiver = GhWebhookServer(host="127.0.0.1", port=0, secret=SECRET, accept=lambda pushed: None)
    receiver.start()
    try:
        status = _post(receiver, "issue_comment", json.dumps(_payload(html_url="")).encode())
    finally:
        receiver.stop()

    assert status == 400


def test_a_signed_change_of_access_is_handed_on_and_an_unsigned_one_is_refused() -> None:
    changes: list[AccessChange] = []
    receiver = GhWebhookServer(host="127.0.0.1", port=0, secret=SECRET, accept=lambda pushed: None,
                               access_changed=changes.append)  # fmt: skip
    removed = {
        "action": "removed",
        "member": {"login": "bob"},
        "repository": {"full_name": "acme/widgets", "html_url": "https://github.com/acme/widgets"},
    }
    receiver.start()
    try:
        statuses = [
            _post(receiver, "member", json.dumps(removed).encode()),
            _post(receiver, "organization", json.dumps({"action": "member_removed"}).encode()),
            _post(receiver, "membership", json.dumps({"action": "removed", "scope": "team"}).encode()),
            _post(receiver, "team", json.dumps({"action": "edited"}).encode()),
            _post(receiver, "member", json.dumps(removed).encode(), signed=False),
        ]
    finally:
        receiver.stop()

    assert statuses == [202, 202, 202, 202, 401]
    assert changes == [
        AccessChange("member", RepoRef.parse("acme/widgets")),
        AccessChange("organization"),
        AccessChange("membership"),
        AccessChange("team"),
    ]


def test_a_new_comment_by_the_apps_bot_is_ours_without_the_marker_and_a_persons_is_not() -> None:
    got: list[Comment] = []
    asked: list[str] = []

    def bot_login() -> str:
        asked.append("GET /app")
        return "acme-loop[bot]"

    def accept(pushed: Pushed) -> None:
        got.append(pushed.comment)

    receiver = GhWebhookServer(host="127.0.0.1", port=0, secret=SECRET, accept=accept, bot_login=bot_login)
    bot = {"login": "Acme-Loop[bot]", "type": "Bot"}  # GitHub's logins ignore case
    receiver.start()
    try:
        statuses = [
            _post(receiver, "issue_comment", json.dumps(_payload(id=1, user=bot, body="Starting.")).encode()),
            _post(
                receiver, "issue_comment", json.dumps(_payload(id=2, body="> <!-- the-loop:agent-comment -->")).encode()
            ),
            _post(receiver, "issues", json.dumps({"action": "opened"}).encode()),  # no comment: nothing asked
        ]
    finally:
        receiver.stop()

    assert statuses == [202, 202, 204]
    assert [(c.id, c.by_us, c.is_ours) for c in got] == [("1", True, True), ("2", False, False)]
    assert len(asked) == 2  # the receiver asks; the tracker behind it keeps the answer for the process
