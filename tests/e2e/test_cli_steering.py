"""Steering end to end: control comments through the real gh (against the GitHub stand-in) and the
real tmux, with the recording harness, through `poll --once` runs of the real CLI."""

from __future__ import annotations

import pytest

from tests.e2e.cli import run_cli
from tests.e2e.loop_rig import Loop, loop
from tests.github_standin import StandIn
from tests.github_standin.rigs import standin
from tests.tmux_support import real_tmux, records, wait_for

__all__ = ["loop", "real_tmux", "standin"]

pytestmark = [pytest.mark.gh, pytest.mark.tmux]
REPO = "acme/widgets"


def _poll(loop: Loop, standin: StandIn) -> None:
    result = run_cli(
        loop.root, "--config", str(loop.write_config()), "poll", "--once", env=loop.tmux.env | standin.gh_env()
    )
    assert result.returncode == 0, result.stderr


def _given(loop: Loop) -> list[str]:
    starts = [str(r["prompt"]) for r in records(loop.record) if r["kind"] == "start"]
    return starts + loop.pasted()


def test_pause_comments_resume_status_through_gh_and_tmux(loop: Loop, standin: StandIn) -> None:
    world = standin.reset()
    world.add_repo(REPO)
    loop.sources = [{"provider": "github", "repos": [REPO], "label": "loop"}]
    loop.extra = {"integrations": {"github": {"host": standin.host}}}
    _poll(loop, standin)  # the repository's streams start: what it held is history
    world.tick(5)
    world.add_issue(REPO, 7, author="demo")
    _poll(loop, standin)  # first sight: the agent is started
    wait_for(lambda: "ready" in [r["kind"] for r in records(loop.record)], what="the harness listening")
    world.tick(5)
    pause = world.add_comment(REPO, 7, "the-loop pause", author="demo")
    world.tick(1)
    world.add_comment(REPO, 7, "first, once resumed", author="demo")
    world.tick(1)
    _poll(loop, standin)
    paused_given = list(_given(loop))
    world.tick(5)
    world.add_comment(REPO, 7, "/the-loop resume", author="demo")
    world.tick(1)
    world.add_comment(REPO, 7, "the-loop status", author="demo")
    world.tick(1)

    _poll(loop, standin)

    wait_for(lambda: any("first, once resumed" in text for text in _given(loop)), what="the waiting comment")
    assert not any("first, once resumed" in text for text in paused_given)  # it waited while paused
    assert not any("the-loop" in line for text in _given(loop) for line in text.splitlines() if "pause" in line)
    (status,) = [body for repo, number, body in world.posted if number == 7]
    assert "status of github:localhost" in status and "Comments waiting: 0" in status
    assert (REPO, pause.id, "+1") in world.reactions  # each executed control comment gets 👍
