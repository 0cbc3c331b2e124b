"""GhTracker reads GitHub's primary and secondary rate limits and says until when to back off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.github import GhTracker
from domain.errors import RateLimited
from domain.refs import RepoRef
from tests.github_standin import StandIn, World
from tests.github_standin.rigs import LABEL, require_gh

pytestmark = pytest.mark.gh
REPO = "acme/widgets"
NOW = 1_800_000_000.0


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    require_gh()
    server = StandIn(Path(tmp_path_factory.mktemp("standin")))
    yield server
    server.close()


@pytest.fixture
def world(standin: StandIn) -> World:
    fresh = standin.reset()
    fresh.add_issue(REPO, 1)
    return fresh


def limited(standin: StandIn, *, clock: float = NOW) -> RateLimited:
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=lambda: clock)
    with pytest.raises(RateLimited) as raised:
        gh.work_items(RepoRef.parse(REPO, host=standin.host), LABEL)
    return raised.value


def test_a_spent_primary_limit_backs_off_until_its_reset(standin: StandIn, world: World) -> None:
    world.rate_remaining = 0
    reset = int(world.now.timestamp()) + 3600
    error = limited(standin)
    assert error.until_epoch == reset and REPO in str(error)


def test_a_secondary_limit_with_retry_after_backs_off_that_long(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=429, headers={"Retry-After": "30"})
    assert limited(standin).until_epoch == NOW + 30


def test_a_secondary_limit_without_headers_backs_off_a_minute(standin: StandIn, world: World) -> None:
    body = b'{"message": "You have exceeded a secondary rate limit."}'
    world.fail("/issues", status=403, body=body)
    assert limited(standin).until_epoch == NOW + 60


def test_a_limit_spent_by_the_last_request_holds_the_next_without_asking(
    standin: StandIn, world: World
) -> None:
    world.rate_remaining = 1
    clock = world.now.timestamp()
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=lambda: clock)
    repo = RepoRef.parse(REPO, host=standin.host)
    gh.work_items(repo, LABEL)
    served = world.requests
    with pytest.raises(RateLimited):
        gh.new_comments(repo, None)
    assert world.requests == served
