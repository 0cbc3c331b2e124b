"""Who edited a comment before its first read, asked of GitHub's GraphQL through the real gh
(a defect once suspected: a comment edited by someone else went under its author's name)."""

from __future__ import annotations

import json

import pytest

from adapters.github import GhTracker
from domain.errors import TrackerError
from domain.refs import RepoRef
from tests.github_standin import StandIn, World
from tests.github_standin.rigs import LABEL, standin

__all__ = ["standin"]  # a fixture, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"


@pytest.fixture
def world(standin: StandIn) -> World:
    fresh = standin.reset()
    fresh.add_issue(REPO, 1)
    return fresh


def _started(standin: StandIn) -> tuple[GhTracker, RepoRef, str]:
    gh = GhTracker(host=standin.host, env=standin.gh_env(), timeout=20.0)
    repo = RepoRef.parse(REPO, host=standin.host)
    gh.work_items(repo, LABEL)
    return gh, repo, gh.new_comments(repo, None).cursor


def test_one_request_asks_for_every_edited_comment_and_none_for_untouched_ones(standin: StandIn, world: World) -> None:
    gh, repo, cursor = _started(standin)
    world.tick(5)
    ids = [world.add_comment(REPO, 1, f"v1 {n}").id for n in range(3)]
    world.tick(5)
    world.edit_comment(REPO, ids[0], "v2", editor="mallory")
    world.edit_comment(REPO, ids[1], "v2")
    world.reset_counters()
    gh.work_items(repo, LABEL)
    batch = gh.new_comments(repo, cursor)
    asked = [entry for entry in world.log if entry[1] == "/api/graphql"]
    assert [(c.edited, c.editor) for c in batch.comments] == [(True, "mallory"), (True, "alice"), (False, None)]
    assert asked == [("POST", "/api/graphql", 200)]


def test_a_comment_deleted_before_graphql_is_asked_stays_edited_by_nobody_known(standin: StandIn, world: World) -> None:
    gh, repo, cursor = _started(standin)
    world.tick(5)
    gone = world.add_comment(REPO, 1, "v1").id
    world.tick(5)
    world.edit_comment(REPO, gone, "v2")
    world.after("/issues/comments", lambda: world.delete_comment(REPO, gone))
    gh.work_items(repo, LABEL)
    [found] = gh.new_comments(repo, cursor).comments
    assert (found.edited, found.editor) == (True, None)  # never taken for an authorized person


def test_a_graphql_error_fails_the_read_naming_the_repository(standin: StandIn, world: World) -> None:
    gh, repo, cursor = _started(standin)
    world.tick(5)
    edited = world.add_comment(REPO, 1, "v1").id
    world.tick(5)
    world.edit_comment(REPO, edited, "v2")
    body = json.dumps({"errors": [{"type": "FORBIDDEN", "message": "Resource not accessible\x1b[31m"}]}).encode()
    world.fail("/api/graphql", status=200, body=body)
    gh.work_items(repo, LABEL)
    with pytest.raises(TrackerError) as raised:
        gh.new_comments(repo, cursor)
    assert str(repo) in str(raised.value) and "Resource not accessible" in str(raised.value)
    assert "\x1b" not in str(raised.value)
