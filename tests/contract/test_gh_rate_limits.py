"""GhTracker reads GitHub's primary and secondary rate limits and says until when to back off."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from adapters.github import GhTracker
from domain.budget import RateBudget
from domain.errors import RateLimited
from domain.model import Comment, Reaction
from domain.refs import RepoRef, WorkItemRef
from tests.github_standin import StandIn, World
from tests.github_standin.rigs import LABEL, standin

__all__ = ["standin"]  # a fixture, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"
NOW = 1_800_000_000.0


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


def test_a_spent_primary_limit_backs_off_until_its_reset_as_far_off_on_our_clock_as_on_githubs(
    standin: StandIn, world: World
) -> None:
    world.rate_remaining = 0
    reset = int(world.now.timestamp()) + 3600  # GitHub's moment; our clock (NOW) reads otherwise
    error = limited(standin)
    assert error.until_epoch == NOW + (reset - world.now.timestamp()) and REPO in str(error)


def test_faults_a_machine_clock_an_hour_behind_githubs_waits_for_the_reset_not_an_hour_more(
    standin: StandIn, world: World
) -> None:
    world.rate_remaining = 0
    github_now = world.now.timestamp()
    error = limited(standin, clock=github_now - 3600)
    assert error.until_epoch == github_now - 3600 + 3600  # the reset is an hour off on either clock


def test_a_secondary_limit_with_retry_after_backs_off_that_long(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=429, headers={"Retry-After": "30"})
    assert limited(standin).until_epoch == NOW + 30


def test_a_secondary_limit_without_headers_backs_off_a_minute(standin: StandIn, world: World) -> None:
    body = b'{"message": "You have exceeded a secondary rate limit."}'
    world.fail("/issues", status=403, body=body)
    assert limited(standin).until_epoch == NOW + 60


def test_a_limit_spent_by_the_last_request_holds_the_next_without_asking(standin: StandIn, world: World) -> None:
    world.rate_remaining = 1
    clock = world.now.timestamp()
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=lambda: clock)
    repo = RepoRef.parse(REPO, host=standin.host)
    gh.work_items(repo, LABEL)
    served = world.requests
    with pytest.raises(RateLimited):
        gh.new_comments(repo, None)
    assert world.requests == served


# --- a secondary limit holds the whole host, reads and writes alike ---------------------


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def secondary_limited(standin: StandIn, world: World, clock: Clock) -> GhTracker:
    """A tracker that one repository's read just ran into a secondary limit of 30 s."""
    world.add_issue("acme/other", 1)
    world.add_comment("acme/other", 1, "go")  # id 1001
    world.fail("/repos/acme/widgets/", status=429, headers={"Retry-After": "30"})
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=clock)
    with pytest.raises(RateLimited):
        gh.work_items(RepoRef.parse(REPO, host=standin.host), LABEL)
    return gh


def test_a_secondary_limit_on_one_repository_holds_another_without_asking(standin: StandIn, world: World) -> None:
    gh = secondary_limited(standin, world, Clock(NOW))
    served = world.requests
    with pytest.raises(RateLimited) as raised:
        gh.work_items(RepoRef.parse("acme/other", host=standin.host), LABEL)
    assert world.requests == served and raised.value.until_epoch == NOW + 30


def _react(gh: GhTracker, item: WorkItemRef) -> None:
    comment = Comment("1001", item, "alice", "go", datetime(2025, 1, 1, tzinfo=UTC))
    gh.react(comment, Reaction.STARTED)


def _post(gh: GhTracker, item: WorkItemRef) -> None:
    gh.post_comment(item, "notice")


@pytest.mark.parametrize("write", [_react, _post], ids=["reaction", "comment"])
def test_a_secondary_limit_holds_writes_without_asking(
    standin: StandIn, world: World, write: Callable[[GhTracker, WorkItemRef], None]
) -> None:
    gh = secondary_limited(standin, world, Clock(NOW))
    served = world.requests
    with pytest.raises(RateLimited):
        write(gh, WorkItemRef(RepoRef.parse("acme/other", host=standin.host), 1))
    assert world.requests == served and world.posted == world.reactions == []


def test_the_host_is_asked_again_once_the_secondary_limit_has_passed(standin: StandIn, world: World) -> None:
    clock = Clock(NOW)
    gh = secondary_limited(standin, world, clock)
    clock.now = NOW + 30
    items = gh.work_items(RepoRef.parse("acme/other", host=standin.host), LABEL)
    assert [item.ref.number for item in items] == [1]


def test_faults_a_limit_held_without_asking_ends_on_time_when_our_clock_is_set_back_an_hour(
    standin: StandIn, world: World
) -> None:
    wall, ticks = Clock(NOW), Clock(500.0)
    world.add_issue("acme/other", 1)
    world.fail("/repos/acme/widgets/", status=429, headers={"Retry-After": "30"})
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=wall, monotonic=ticks)
    with pytest.raises(RateLimited):
        gh.work_items(RepoRef.parse(REPO, host=standin.host), LABEL)
    wall.now, ticks.now = NOW - 3600 + 31, 531.0  # 31 s passed; the wall clock was set back an hour

    items = gh.work_items(RepoRef.parse("acme/other", host=standin.host), LABEL)

    assert [item.ref.number for item in items] == [1]


def test_the_budget_github_states_is_kept_from_each_reply_even_a_304(standin: StandIn, world: World) -> None:
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=lambda: NOW)
    repo = RepoRef.parse(REPO, host=standin.host)
    assert gh.budget(repo) is None  # nothing asked yet: not known
    cursor = None
    for _ in range(3):  # the way the poll cycle reads: the listing, then the new comments
        gh.work_items(repo, LABEL)
        cursor = gh.new_comments(repo, cursor).cursor
    reset = NOW + 3600  # GitHub's reset is an hour after its Date; on our clock, an hour after NOW
    assert gh.budget(repo) == RateBudget(remaining=world.rate_remaining, limit=5000, reset_epoch=reset)
    world.rate_remaining = 4873  # spent elsewhere with the same token
    world.reset_counters()
    gh.work_items(repo, LABEL)
    gh.new_comments(repo, cursor)  # an idle cycle: only 304s, which cost nothing and still say it
    assert world.requests == world.not_modified > 0
    assert gh.budget(repo) == RateBudget(remaining=4873, limit=5000, reset_epoch=reset)


def test_a_rate_limited_reply_leaves_the_budget_at_none_left(standin: StandIn, world: World) -> None:
    world.rate_remaining = 0
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20, clock=lambda: NOW)
    repo = RepoRef.parse(REPO, host=standin.host)
    with pytest.raises(RateLimited):
        gh.work_items(repo, LABEL)
    assert gh.budget(repo) == RateBudget(remaining=0, limit=5000, reset_epoch=NOW + 3600)
