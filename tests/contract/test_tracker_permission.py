"""TrackerPort's `permission`: a login's role on a repository, held by the fake, the sandbox and gh
on the stand-in alike; and what only GitHub's answers show (a 403, a custom role)."""

from __future__ import annotations

import pytest

from adapters.github import GhTracker
from domain.authorize import Permission
from domain.errors import TrackerError
from domain.refs import RepoRef
from tests.contract.tracker_rigs import rig
from tests.github_standin import StandIn
from tests.github_standin.rigs import Rig, standin

__all__ = ["rig", "standin"]  # fixtures, imported to be used here


def test_a_collaborator_s_permission_is_the_role_they_hold(rig: Rig) -> None:
    roles = {
        "ana": Permission.READ,
        "ben": Permission.TRIAGE,
        "cat": Permission.WRITE,
        "dan": Permission.MAINTAIN,
        "eve": Permission.ADMIN,
    }
    for login, role in roles.items():
        rig.grant(login, role)

    assert {login: rig.tracker.permission(rig.repo, login) for login in roles} == roles


def test_a_login_who_is_not_a_collaborator_has_none(rig: Rig) -> None:
    rig.grant("cat", Permission.WRITE)

    assert rig.tracker.permission(rig.repo, "stranger") is Permission.NONE


def test_a_permission_holds_whatever_the_case_of_the_login(rig: Rig) -> None:
    rig.grant("Cat", Permission.MAINTAIN)

    assert rig.tracker.permission(rig.repo, "cAT") is Permission.MAINTAIN


def test_a_permission_is_of_one_repository(rig: Rig) -> None:
    rig.grant("cat", Permission.ADMIN)

    assert rig.tracker.permission(RepoRef(rig.repo.host, "acme", "gadgets"), "cat") is Permission.NONE


def test_a_permission_that_cannot_be_read_is_a_tracker_error_naming_the_repository(rig: Rig) -> None:
    rig.grant("cat", Permission.WRITE)
    rig.break_reads()

    with pytest.raises(TrackerError, match=str(rig.repo)):
        rig.tracker.permission(rig.repo, "cat")


# --- what only GitHub answers --------------------------------------------------------------


def _gh(standin: StandIn) -> tuple[GhTracker, RepoRef]:
    world = standin.reset()
    world.add_repo("acme/widgets")
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20)
    return gh, RepoRef.parse("acme/widgets", host=standin.host)


@pytest.mark.gh
def test_a_token_that_may_not_read_permissions_is_a_tracker_error_not_a_permission(standin: StandIn) -> None:
    """GitHub answers 403 to a token without push access to the repository."""
    gh, repo = _gh(standin)
    standin.world.grant("acme/widgets", "cat", "admin")
    standin.world.fail("/collaborators/", status=403, times=None)

    with pytest.raises(TrackerError, match="403"):
        gh.permission(repo, "cat")


@pytest.mark.gh
def test_a_custom_role_counts_as_the_base_permission_github_gives_with_it(standin: StandIn) -> None:
    """`role_name` names an organization's custom role; `permission` is then its base role, as GitHub's
    legacy names say it (maintain reads as write, triage as read)."""
    gh, repo = _gh(standin)
    standin.world.grant("acme/widgets", "cat", "release-manager", permission="write")
    standin.world.grant("acme/widgets", "dan", "auditor", permission="read")

    assert (gh.permission(repo, "cat"), gh.permission(repo, "dan")) == (Permission.WRITE, Permission.READ)


@pytest.mark.gh
def test_the_lookup_asks_the_collaborator_permission_of_the_login_once(standin: StandIn) -> None:
    gh, repo = _gh(standin)
    standin.world.grant("acme/widgets", "cat", "write")
    standin.world.reset_counters()

    gh.permission(repo, "cat")

    assert standin.world.log == [("GET", "/repos/acme/widgets/collaborators/cat/permission", 200)]
