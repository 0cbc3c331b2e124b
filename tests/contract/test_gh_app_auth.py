"""The real gh acting as a GitHub App against the stand-in: installation tokens, refreshed on a 401,
and every way the App's side can fail named with the repository."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adapters.github.tracker import GhTracker
from domain.errors import TrackerError
from domain.installations import InstallationAction, InstallationChange
from domain.refs import RepoRef, WorkItemRef
from tests.github_standin import StandIn
from tests.github_standin.app import AppSide
from tests.github_standin.app_rig import APP_ID, AppKeyFile, app_key, app_mode, app_tracker, make_key
from tests.github_standin.rigs import LABEL, standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"


def repo_on(standin: StandIn, name: str = REPO) -> RepoRef:
    return RepoRef.parse(name, host=standin.host)


def installed_and_read(standin: StandIn, app_key: AppKeyFile) -> tuple[AppSide, GhTracker, WorkItemRef]:
    """The App installed on acme (installation 7), its tracker, and issue 1 read once with its token."""
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)
    item = WorkItemRef(repo_on(standin), 1)
    gh.item_state(item, LABEL)
    return app, gh, item


def test_a_read_and_a_post_are_made_with_the_installation_token(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)
    repo = repo_on(standin)

    items = gh.work_items(repo, LABEL)
    gh.post_comment(WorkItemRef(repo, 1), "on it")

    assert [item.ref.number for item in items] == [1]
    assert standin.world.posted == [(REPO, 1, "on it")]
    # the installation looked up once, one token for both calls; the operator's token (in gh's
    # environment too) would have been refused
    assert [(m, p) for m, p, _ in standin.world.log if "installation" in p] == [
        ("GET", f"/repos/{REPO}/installation"),
        ("POST", "/app/installations/7/access_tokens"),
    ]
    assert app.refused == 0


def test_an_installation_named_in_the_configuration_is_not_looked_up(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(9, "acme", {REPO})
    standin.world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key, installations={"acme/widgets": 9, "acme": 1})

    gh.item_state(WorkItemRef(repo_on(standin), 1), LABEL)

    assert [p for _, p, _ in standin.world.log if "installation" in p] == ["/app/installations/9/access_tokens"]


def test_a_token_that_expired_mid_run_is_refreshed_and_the_call_asked_again(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app, gh, item = installed_and_read(standin, app_key)

    app.expire_tokens()  # before the hour its expires_at said
    gh.post_comment(item, "still here")

    assert standin.world.posted == [(REPO, 1, "still here")]
    assert (len(app.exchanges_of(7)), app.refused) == (2, 1)


def test_a_token_refused_again_after_its_refresh_fails_the_call_after_one_retry(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)
    standin.world.fail(rf"^/repos/{REPO}/issues/1$", status=401, times=None)

    with pytest.raises(TrackerError) as raised:
        gh.item_state(WorkItemRef(repo_on(standin), 1), LABEL)

    assert str(repo_on(standin)) in str(raised.value) and "not authenticated" in str(raised.value)
    asked = [p for _, p, _ in standin.world.log if p == f"/repos/{REPO}/issues/1"]
    assert (len(asked), len(app.exchanges_of(7))) == (2, 2)


def test_a_revoked_installation_is_an_error_naming_the_repository(standin: StandIn, app_key: AppKeyFile) -> None:
    app, gh, item = installed_and_read(standin, app_key)

    app.revoke(7)
    with pytest.raises(TrackerError) as raised:
        gh.item_state(item, LABEL)

    message = str(raised.value)
    assert message.startswith(f"{repo_on(standin)}: ") and "installation 7 is gone" in message, message


def test_a_post_the_installation_holds_no_permission_for_names_the_repository_and_the_permission(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app, gh, item = installed_and_read(standin, app_key)  # a read it holds
    app.installations[7].permissions |= {"issues": "read", "pull_requests": "read"}

    with pytest.raises(TrackerError) as raised:
        gh.post_comment(item, "on it")

    message = str(raised.value)
    assert message.startswith(f"{repo_on(standin)}: forbidden (HTTP 403: Resource not accessible by integration)")
    assert message.endswith("the permission GitHub asks for here: issues=write, or pull_requests=write"), message
    assert standin.world.posted == []


def test_a_repository_the_app_is_not_installed_on_is_named(standin: StandIn, app_key: AppKeyFile) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "umbrella")
    standin.world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)

    with pytest.raises(TrackerError) as raised:
        gh.work_items(repo_on(standin), LABEL)

    assert f"the GitHub App {APP_ID} is not installed on {REPO}" in str(raised.value)


def test_a_jwt_signed_with_another_key_is_refused_with_what_to_check(
    standin: StandIn, app_key: AppKeyFile, tmp_path: Path
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    gh = app_tracker(standin, make_key(tmp_path / "other.pem"))

    with pytest.raises(TrackerError) as raised:
        gh.work_items(repo_on(standin), LABEL)

    message = str(raised.value)
    assert f"GitHub refused the GitHub App {APP_ID}'s JWT (HTTP 401" in message and "private key" in message


def test_neither_the_jwt_nor_a_token_is_logged(
    standin: StandIn, app_key: AppKeyFile, caplog: pytest.LogCaptureFixture
) -> None:
    app = app_mode(standin, app_key)
    app.install(7, "acme")
    standin.world.add_issue(REPO, 1)
    gh = app_tracker(standin, app_key)

    with caplog.at_level(logging.DEBUG):
        gh.post_comment(WorkItemRef(repo_on(standin), 1), "hello")

    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "access_tokens" in logged  # the calls are logged, so this looked where they are
    [token] = app.issued
    assert token not in logged and "Bearer" not in logged and "eyJ" not in logged  # a JWT starts eyJ


def test_a_deleted_installations_token_and_repositories_are_dropped_and_the_next_call_looks_again(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app, gh, item = installed_and_read(standin, app_key)
    app.revoke(7)  # uninstalled, then installed again: another installation
    app.install(8, "acme")
    installations = gh.app_installations
    assert installations is not None

    dropped = installations.changed(InstallationChange(7, InstallationAction.DELETED))
    gh.item_state(item, LABEL)

    assert (dropped, app.refused) == (True, 0)  # its old token was never sent again
    assert [(m, p) for m, p, _ in standin.world.log if "installation" in p][2:] == [
        ("GET", f"/repos/{REPO}/installation"),
        ("POST", "/app/installations/8/access_tokens"),
    ]


def test_a_repository_removed_from_its_installation_is_looked_up_again_and_the_token_kept(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    app, gh, item = installed_and_read(standin, app_key)
    installations = gh.app_installations
    assert installations is not None

    dropped = installations.changed(InstallationChange(7, InstallationAction.REMOVED, removed=frozenset({item.repo})))
    gh.item_state(item, LABEL)

    assert (dropped, len(app.exchanges_of(7))) == (False, 1)
    assert [p for _, p, _ in standin.world.log if p.endswith("/installation")] == [f"/repos/{REPO}/installation"] * 2
