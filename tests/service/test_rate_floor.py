"""The cycle's reads and the rate budget: a repository whose budget (its App installation's) is down
to the floor kept for notices and replies waits for the reset; the others' are read."""

from __future__ import annotations

import json

from app.usecases.views.poller_status import Heartbeat
from domain.budget import RateBudget
from domain.events import Event
from domain.refs import RepoRef, WorkItemRef
from tests.service.test_daemon import HEARTBEAT, FakeLock, _daemon
from tests.service.world import REPO, World

GLOBEX = RepoRef.parse("globex/gadgets")


def two_installations(*, rate_floor: int = 100) -> World:
    """acme/widgets read with installation 7, globex/gadgets with 9, an item in each, both read once
    (their sessions started); then installation 7 is spent down to 40 requests, 9 has plenty left."""
    world = World(repos=(REPO, GLOBEX), rate_floor=rate_floor)
    world.item(1, repo=REPO)
    world.item(1, repo=GLOBEX)
    world.cycle()
    reset = world.clock.epoch() + 1800
    world.tracker.budgets_seen = {
        REPO: RateBudget(40, 5000, reset, installation=7),
        GLOBEX: RateBudget(4200, 5000, reset, installation=9),
    }
    return world


def test_a_spent_installation_s_repository_waits_while_another_installation_s_is_read() -> None:
    world = two_installations()
    spent, read = WorkItemRef(REPO, 1), WorkItemRef(GLOBEX, 1)
    world.comment(spent)
    world.comment(read)

    world.cycle()

    assert [len(world.session(ref).received) for ref in (spent, read)] == [0, 1]
    [backoff] = world.events.named(Event.POLL_BACKOFF)
    assert backoff["repo"] == "acme/widgets" and "installation 7" in backoff["cause"]
    assert "floor of 100" in backoff["cause"]


def test_the_held_repository_is_read_again_once_its_installation_s_budget_resets() -> None:
    world = two_installations()
    spent = WorkItemRef(REPO, 1)
    world.comment(spent)
    world.cycle()
    assert world.session(spent).received == []  # held

    world.clock.advance(1801)
    world.cycle()

    assert len(world.session(spent).received) == 1


def test_a_floor_of_zero_reads_down_to_the_last_request() -> None:
    world = two_installations(rate_floor=0)
    spent = WorkItemRef(REPO, 1)
    world.comment(spent)

    world.cycle()

    assert len(world.session(spent).received) == 1 and not world.events.named(Event.POLL_BACKOFF)


def test_the_heartbeat_carries_each_installation_s_budget_with_its_repositories_owner() -> None:
    world = two_installations()

    _daemon(world, FakeLock(), [], stop_after=1).run(once=True)

    beat = json.loads(world.store.meta()[HEARTBEAT])
    reset = world.tracker.budgets_seen[REPO].reset_epoch
    assert beat["budgets"] == {}
    assert beat["installation_budgets"] == [
        {"host": REPO.host, "installation": 7, "owners": ["acme"], "remaining": 40, "limit": 5000, "reset": reset},
        {"host": REPO.host, "installation": 9, "owners": ["globex"], "remaining": 4200, "limit": 5000, "reset": reset},
    ]
    parsed = Heartbeat.parse(world.store.meta()[HEARTBEAT])
    assert parsed is not None and [i.budget for i in parsed.installation_budgets] == [
        world.tracker.budgets_seen[REPO], world.tracker.budgets_seen[GLOBEX]
    ]  # fmt: skip
