"""Who may steer: the listed logins, a permission on the item's repository, and deny over both."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from domain.authorize import Authorized, Permission, Standing, is_authorized, permission_key
from domain.ledger import Screen, screen
from domain.model import Comment
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import Pushed, sender_decision

REPO = RepoRef.parse("acme/widgets")
FORK = RepoRef.parse("bob/widgets")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _rule(permission: Permission | None = Permission.WRITE, **answers: Permission) -> Authorized:
    rule = Authorized.parse(["alice"], deny=["mallory"], permission=permission)
    return rule.knowing({permission_key(REPO, login): held for login, held in answers.items()})


@pytest.mark.parametrize(
    ("held", "steers"),
    [
        (Permission.NONE, False),
        (Permission.READ, False),
        (Permission.TRIAGE, False),
        (Permission.WRITE, True),
        (Permission.MAINTAIN, True),
        (Permission.ADMIN, True),
    ],
)
def test_a_permission_at_least_the_named_one_authorizes_and_a_lower_one_does_not(
    held: Permission, steers: bool
) -> None:
    assert is_authorized("bob", _rule(bob=held), repo=REPO) is steers


def test_the_named_level_is_the_least_that_authorizes() -> None:
    maintain = _rule(Permission.MAINTAIN, bob=Permission.WRITE, carol=Permission.MAINTAIN, dave=Permission.ADMIN)
    assert [maintain.standing(login, repo=REPO) for login in ("bob", "carol", "dave")] == [
        Standing.BELOW,
        Standing.PERMITTED,
        Standing.PERMITTED,
    ]


def test_deny_wins_over_the_list_and_over_any_permission() -> None:
    rule = Authorized.parse(["alice", "mallory"], deny=["Mallory"], permission=Permission.WRITE)
    rule = rule.knowing({permission_key(REPO, "mallory"): Permission.ADMIN})
    assert rule.standing("mallory", repo=REPO) is Standing.DENIED
    assert not is_authorized("MALLORY", rule, repo=REPO)


def test_a_listed_user_steers_whatever_their_permission_and_without_one_being_asked() -> None:
    rule = _rule(alice=Permission.NONE)
    assert rule.standing("Alice", repo=REPO) is Standing.LISTED
    assert not rule.to_ask("alice", repo=REPO)


def test_without_a_named_permission_only_the_list_decides_and_nothing_is_asked() -> None:
    rule = _rule(None, bob=Permission.ADMIN)
    assert rule.standing("bob", repo=REPO) is Standing.NOT_LISTED
    assert not rule.to_ask("bob", repo=REPO)


def test_a_permission_not_known_is_never_a_guess_and_is_what_to_ask() -> None:
    rule = _rule()
    assert rule.standing("bob", repo=REPO) is Standing.UNKNOWN
    assert rule.to_ask("bob", repo=REPO)
    assert screen(Comment("1", WorkItemRef(REPO, 1), "bob", "go", T0), authorized=rule) is Screen.UNAUTHORIZED


def test_no_login_is_nobody_and_nothing_is_asked_for_it() -> None:
    assert _rule().standing(None, repo=REPO) is Standing.NOT_LISTED
    assert not _rule().to_ask("", repo=REPO)


def test_a_permission_counts_only_on_the_repository_it_was_read_on() -> None:
    """A fork's author who administers their fork holds nothing on the base repository by it."""
    rule = _rule().knowing({permission_key(FORK, "bob"): Permission.ADMIN})
    assert rule.standing("bob", repo=FORK) is Standing.PERMITTED
    assert rule.standing("bob", repo=REPO) is Standing.UNKNOWN


def test_a_permission_is_a_login_s_on_one_host() -> None:
    ghe = RepoRef.parse("acme/widgets", host="ghe.example.com")
    rule = _rule().knowing({permission_key(ghe, "bob"): Permission.ADMIN})
    assert rule.standing("bob", repo=ghe) is Standing.PERMITTED
    assert rule.standing("bob", repo=REPO) is Standing.UNKNOWN


def test_a_comment_screens_by_the_permission_of_its_author_and_of_its_editor() -> None:
    rule = _rule(bob=Permission.WRITE, carol=Permission.READ)
    comment = Comment("1", WorkItemRef(REPO, 1), "bob", "go", T0)
    assert screen(comment, authorized=rule) is Screen.CANDIDATE
    assert screen(replace(comment, edited=True, editor="carol"), authorized=rule) is Screen.EDITED_BY_OTHER
    assert screen(replace(comment, author="carol"), authorized=rule) is Screen.UNAUTHORIZED


def test_a_webhook_keeps_an_author_whose_permission_is_not_known_yet_and_drops_one_known_too_low() -> None:
    watched = {REPO: frozenset({"loop"})}
    rule = _rule(carol=Permission.READ)

    def kept(author: str) -> tuple[bool, str]:
        decision = sender_decision(Pushed(Comment("1", WorkItemRef(REPO, 1), author, "go", T0)), watched=watched,
                                   authorized=rule)  # fmt: skip
        return decision.choice, decision.reason

    assert [kept(author) for author in ("bob", "carol", "mallory")] == [
        (True, "sender"),
        (False, "unauthorized"),
        (False, "unauthorized"),
    ]
