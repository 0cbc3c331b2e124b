"""What an installation of the GitHub App lacks of what the-loop needs, from what GitHub says it holds."""

from __future__ import annotations

from domain.github_app import EVENTS, PERMISSIONS, Access, InstallationGrant, missing_events, shortfalls

EVERY = {permission.key: permission.access.value for permission in PERMISSIONS}


def grant(
    permissions: dict[str, str], *, organization: bool = True, events: tuple[str, ...] = EVENTS
) -> InstallationGrant:
    return InstallationGrant(7, "acme", organization=organization, permissions=permissions, events=events)


def test_an_installation_holding_more_than_needed_lacks_nothing() -> None:
    assert shortfalls(grant({**EVERY, "issues": "admin", "contents": "write"})) == []


def test_a_permission_below_what_is_needed_and_one_not_held_are_each_a_shortfall_in_the_tables_order() -> None:
    lacking = shortfalls(grant({**{k: v for k, v in EVERY.items() if k != "contents"}, "issues": "read"}))
    assert [(short.permission.key, short.granted) for short in lacking] == [("issues", Access.READ), ("contents", None)]


def test_a_users_own_installation_is_not_held_to_an_organizations_permission_nor_its_events() -> None:
    repository = {k: v for k, v in EVERY.items() if k != "members"}
    events = ("issue_comment", "issues", "pull_request_review_comment", "pull_request_review", "pull_request")
    assert shortfalls(grant(repository, organization=False, events=events)) == []
    assert missing_events(grant(repository, organization=False, events=events)) == []
    assert missing_events(grant(repository, events=events)) == ["member", "membership", "organization", "team"]


def test_a_level_github_may_add_later_counts_as_not_held() -> None:
    [short] = shortfalls(grant({**EVERY, "issues": "superpower"}))
    assert (short.permission.key, short.granted) == ("issues", None)
