"""The GitHub App's webhook: which installation serves each repository after each `installation` and
`installation_repositories` event, and which App deliveries are kept — pure decisions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.installations import (
    DROPS_TOKENS,
    InstallationAction,
    InstallationChange,
    Installations,
    installation_changed,
)
from domain.model import Comment
from domain.refs import RepoRef, WorkItemRef
from domain.webhook import Pushed, installation_decision

REPO = RepoRef.parse("acme/widgets")
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
Action = InstallationAction


def _pushed(installation: int | None, repo: RepoRef = REPO) -> Pushed:
    return Pushed(Comment("1", WorkItemRef(repo, 7), "alice", "go", T0), installation=installation)


def _changed(
    known: Installations, action: Action, *, added: tuple[RepoRef, ...] = (), removed: tuple[RepoRef, ...] = ()
) -> Installations:
    return installation_changed(known, InstallationChange(7, action, frozenset(added), frozenset(removed)))


def test_a_repository_is_served_by_its_own_configured_entry_before_its_owners() -> None:
    known = Installations.configured({"Acme": 7, "acme/widgets": 9})

    assert (known.serving(REPO), known.serving(RepoRef.parse("acme/gears"))) == (9, 7)


def test_a_repository_added_to_an_installation_is_served_by_it_whatever_the_case_of_its_name() -> None:
    known = _changed(Installations(), Action.ADDED, added=(RepoRef.parse("ACME/Widgets"),))

    assert known.serving(REPO) == 7


def test_a_new_installation_serves_the_repositories_it_names() -> None:
    assert _changed(Installations(), Action.CREATED, added=(REPO,)).serving(REPO) == 7


def test_a_repository_removed_from_its_installation_is_looked_up_again_even_where_the_configuration_named_it() -> None:
    for known in (Installations().with_repos([REPO], 7), Installations.configured({"acme": 7})):
        assert _changed(known, Action.REMOVED, removed=(REPO,)).serving(REPO) is None


def test_a_repository_removed_from_another_installation_keeps_its_own() -> None:
    known = Installations().with_repos([REPO], 9)

    assert _changed(known, Action.REMOVED, removed=(REPO,)).serving(REPO) == 9


def test_a_deleted_installation_serves_nothing_it_was_found_or_configured_for() -> None:
    known = Installations.configured({"acme": 7}).with_repos([RepoRef.parse("other/thing")], 7)
    gone = _changed(known, Action.DELETED)

    assert (gone.serving(REPO), gone.serving(RepoRef.parse("other/thing")), gone.gone) == (None, None, {7})


@pytest.mark.parametrize("action", [Action.SUSPEND, Action.UNSUSPEND, Action.NEW_PERMISSIONS_ACCEPTED])
def test_a_suspension_its_end_and_new_permissions_change_no_repository(action: Action) -> None:
    known = Installations().with_repos([REPO], 7)

    assert _changed(known, action) == known


def test_tokens_are_dropped_when_github_would_refuse_them_or_they_carry_old_permissions() -> None:
    assert {Action.DELETED, Action.SUSPEND, Action.NEW_PERMISSIONS_ACCEPTED} == DROPS_TOKENS


@pytest.mark.parametrize(
    ("known", "installation", "expected"),
    [
        (Installations(), 7, (True, "installation")),  # not known yet: GitHub's signed word is taken
        (Installations().with_repos([REPO], 7), 7, (True, "installation")),
        (Installations().with_repos([REPO], 9), 7, (False, "installation-unwatched")),
        (Installations.configured({"acme": 9}), 7, (False, "installation-unwatched")),
        (Installations().deleted(7), 7, (False, "installation-unwatched")),
        (Installations().with_repos([REPO], 7).without_repos([REPO], 7), 7, (False, "repository-removed")),
        (Installations.configured({"acme": 7}).without_repos([REPO], 7), 7, (False, "repository-removed")),
        (Installations().without_repos([REPO], 7).with_repos([REPO], 7), 7, (True, "installation")),  # added back
        (Installations().with_repos([REPO], 9), None, (True, "not the App's")),  # a repository's own webhook
    ],
)
def test_an_app_delivery_is_kept_only_through_the_installation_serving_its_repository(
    known: Installations, installation: int | None, expected: tuple[bool, str]
) -> None:
    decision = installation_decision(_pushed(installation), known=known)

    assert (decision.choice, decision.reason) == expected
