"""Every way GitHub or gh can fail is one TrackerError naming the repository and the cause."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from adapters.github import GhTracker
from domain.errors import RateLimited, TrackerError
from domain.refs import RepoRef
from tests.github_standin import StandIn, World
from tests.github_standin.rigs import LABEL, require_gh, standin

__all__ = ["standin"]  # a fixture, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"


@pytest.fixture
def world(standin: StandIn) -> World:
    fresh = standin.reset()
    fresh.add_issue(REPO, 1)
    return fresh


def tracker(standin: StandIn, **options: object) -> GhTracker:
    settings: dict[str, object] = {"host": standin.host, "env": standin.gh_env(), "timeout": 20.0}
    return GhTracker(**(settings | options))  # type: ignore[arg-type]


def failure_of(gh: GhTracker, repo: RepoRef) -> str:
    with pytest.raises(TrackerError) as raised:
        gh.work_items(repo, LABEL)
    return str(raised.value)


def repo_on(standin: StandIn, name: str = REPO) -> RepoRef:
    return RepoRef.parse(name, host=standin.host)


def test_a_missing_gh_binary_is_named(standin: StandIn, world: World) -> None:
    message = failure_of(tracker(standin, binary="gh-is-not-installed"), repo_on(standin))
    assert str(repo_on(standin)) in message and "gh not found" in message


def test_a_rejected_token_is_not_authenticated(standin: StandIn, world: World) -> None:
    gh = tracker(standin, env=standin.gh_env(GH_ENTERPRISE_TOKEN="wrong"))
    message = failure_of(gh, repo_on(standin))
    assert str(repo_on(standin)) in message and "not authenticated" in message and "401" in message


def test_gh_without_any_token_is_not_authenticated(tmp_path: Path) -> None:
    require_gh()
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path), "GH_CONFIG_DIR": str(tmp_path)}
    repo = RepoRef.parse("acme/widgets")
    message = failure_of(GhTracker(env=env, timeout=20), repo)
    assert "acme/widgets" in message and "not authenticated for github.com" in message


def test_a_repository_that_does_not_exist_is_not_found(standin: StandIn, world: World) -> None:
    message = failure_of(tracker(standin), repo_on(standin, "acme/nothing"))
    assert "acme/nothing" in message and "not found or not visible (HTTP 404" in message


def test_a_repository_the_token_cannot_see_is_not_found(standin: StandIn, world: World) -> None:
    world.add_repo("acme/secret", visible=False)
    message = failure_of(tracker(standin), repo_on(standin, "acme/secret"))
    assert "acme/secret" in message and "not found or not visible" in message


def test_a_5xx_is_a_server_error(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=503)
    message = failure_of(tracker(standin), repo_on(standin))
    assert str(repo_on(standin)) in message and "server error (HTTP 503" in message


def test_a_server_that_does_not_answer_in_time_is_a_timeout(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=200, delay=3.0)
    message = failure_of(tracker(standin, timeout=1.0), repo_on(standin))
    assert str(repo_on(standin)) in message and "did not answer within 1s" in message


def test_a_reply_that_is_not_json_is_malformed(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=200, body=b'[{"number": 1,')
    message = failure_of(tracker(standin), repo_on(standin))
    assert str(repo_on(standin)) in message and "malformed JSON" in message


def test_a_reply_of_the_wrong_shape_is_malformed(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=200, body=b'{"number": 1}')
    message = failure_of(tracker(standin), repo_on(standin))
    assert str(repo_on(standin)) in message and "malformed reply" in message


def test_an_unreachable_host_is_named(standin: StandIn, world: World) -> None:
    gh = GhTracker(host="localhost:1", env=standin.gh_env(), timeout=20)
    message = failure_of(gh, RepoRef.parse(REPO, host="localhost:1"))
    assert "localhost:1/acme/widgets" in message and "connection refused" in message


def test_a_failing_repository_leaves_another_one_readable(standin: StandIn, world: World) -> None:
    world.add_issue("acme/other", 1)
    world.fail("/repos/acme/widgets/", status=500, times=None)
    gh = tracker(standin)
    failure_of(gh, repo_on(standin))
    assert [i.ref.number for i in gh.work_items(repo_on(standin, "acme/other"), LABEL)] == [1]


def test_a_forbidden_reply_that_is_no_rate_limit_is_a_plain_tracker_error(standin: StandIn, world: World) -> None:
    world.fail("/issues", status=403, body=b'{"message": "Resource not accessible by integration"}')
    with pytest.raises(TrackerError) as raised:
        tracker(standin).work_items(repo_on(standin), LABEL)
    assert not isinstance(raised.value, RateLimited) and "forbidden (HTTP 403" in str(raised.value)


def test_a_gh_host_inherited_from_the_environment_does_not_redirect_github_com(standin: StandIn, world: World) -> None:
    gh = GhTracker(env=standin.gh_env(GH_HOST=standin.host), timeout=20)
    failure_of(gh, RepoRef.parse(REPO))  # github.com is out of reach here, or refuses us
    assert world.requests == 0


def test_a_gh_that_never_answers_is_killed_at_its_timeout_with_everything_it_started(tmp_path: Path) -> None:
    """Fault: gh hanging past its timeout. A gh that hands its work to a child (a shell
    wrapper, a credential helper) must not leave that child running, nor the pipe it holds open."""
    child = tmp_path / "child.pid"
    hanging = tmp_path / "gh"
    hanging.write_text(f'#!/bin/sh\nsleep 300 &\necho $! > "{child}"\nwait\n', encoding="utf-8")
    hanging.chmod(0o755)
    gh = GhTracker(binary=str(hanging), env={"PATH": "/usr/bin:/bin"}, timeout=1.0)

    message = failure_of(gh, RepoRef.parse(REPO))

    assert "did not answer within 1s" in message
    assert _gone(int(child.read_text(encoding="utf-8"))), "the hanging gh's child still runs"


def _gone(pid: int) -> bool:
    for _ in range(100):  # the kill is sent when the call returns; give the kernel its moment
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False
