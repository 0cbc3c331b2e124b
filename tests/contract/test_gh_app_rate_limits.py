"""The real gh as a GitHub App against the stand-in: each installation's rate limit and budget are its
own, so one spent installation holds its own repositories and the others' are still read."""

from __future__ import annotations

import pytest

from domain.budget import RateBudget
from domain.errors import RateLimited
from domain.refs import RepoRef
from tests.github_standin import StandIn
from tests.github_standin.app import AppSide
from tests.github_standin.app_rig import AppKeyFile, app_key, app_mode, app_tracker
from tests.github_standin.rigs import LABEL, standin

__all__ = ["app_key", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
SPENT, READ = "acme/widgets", "globex/gadgets"


def two_installations(standin: StandIn, app_key: AppKeyFile) -> AppSide:
    """Installation 7 on acme with its limit spent, 9 on globex with plenty left; an issue in each."""
    app = app_mode(standin, app_key)
    app.install(7, "acme").rate_remaining = 0
    app.install(9, "globex").rate_remaining = 4200
    for name in (SPENT, READ):
        standin.world.add_issue(name, 1)
    return app


def repo_on(standin: StandIn, name: str) -> RepoRef:
    return RepoRef.parse(name, host=standin.host)


def test_one_installation_s_spent_limit_holds_its_repositories_and_not_another_s(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    two_installations(standin, app_key)
    gh = app_tracker(standin, app_key)
    with pytest.raises(RateLimited):
        gh.work_items(repo_on(standin, SPENT), LABEL)

    items = gh.work_items(repo_on(standin, READ), LABEL)

    assert [item.ref.number for item in items] == [1]


def test_a_spent_installation_is_held_without_asking_again(standin: StandIn, app_key: AppKeyFile) -> None:
    two_installations(standin, app_key)
    gh = app_tracker(standin, app_key)
    with pytest.raises(RateLimited):
        gh.work_items(repo_on(standin, SPENT), LABEL)
    served = standin.world.requests

    with pytest.raises(RateLimited) as raised:
        gh.new_comments(repo_on(standin, SPENT), None)

    assert standin.world.requests == served and "installation 7" in str(raised.value)


def test_each_installation_s_budget_is_kept_and_said_apart(standin: StandIn, app_key: AppKeyFile) -> None:
    two_installations(standin, app_key)
    gh = app_tracker(standin, app_key)
    with pytest.raises(RateLimited):
        gh.work_items(repo_on(standin, SPENT), LABEL)
    gh.work_items(repo_on(standin, READ), LABEL)

    reset = standin.world.now.timestamp() + 3600
    assert gh.budget(repo_on(standin, SPENT)) == RateBudget(0, 5000, reset, installation=7)
    assert gh.budget(repo_on(standin, READ)) == RateBudget(4199, 5000, reset, installation=9)


def test_a_repository_whose_installation_is_not_known_yet_has_no_budget_and_asks_nothing(
    standin: StandIn, app_key: AppKeyFile
) -> None:
    two_installations(standin, app_key)
    gh = app_tracker(standin, app_key)
    gh.work_items(repo_on(standin, READ), LABEL)
    served = standin.world.requests

    assert gh.budget(repo_on(standin, SPENT)) is None
    assert standin.world.requests == served
