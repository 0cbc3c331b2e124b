"""`poll --once` from cron on GitHub: each run a new process, each idle run 2 requests, both 304."""

from __future__ import annotations

import pytest

from tests.e2e.cli import run_cli
from tests.e2e.loop_rig import Loop, loop
from tests.github_standin import StandIn
from tests.github_standin.rigs import standin
from tests.tmux_support import real_tmux

__all__ = ["loop", "real_tmux", "standin"]  # fixtures, imported to be used here

pytestmark = pytest.mark.gh
REPO = "acme/widgets"


def test_poll_once_from_cron_costs_two_requests_per_idle_repository_both_304(loop: Loop, standin: StandIn) -> None:
    world = standin.reset()
    for number in range(1, 251):  # three pages of labelled items, by nobody authorized: no spawn
        world.add_issue(REPO, number, author="bob", pull_request=number % 10 == 0)
    world.tick(3600)
    loop.sources = [{"provider": "github", "repos": [REPO], "label": "loop"}]
    loop.extra = {"integrations": {"github": {"host": standin.host}}}
    runs = []
    for _ in range(4):
        world.reset_counters()
        result = run_cli(
            loop.root, "--config", str(loop.write_config()), "poll", "--once", env=loop.tmux.env | standin.gh_env()
        )
        assert result.returncode == 0, result.stderr
        runs.append((world.requests, world.not_modified))
        world.tick(300)
    # the first run lists (3 pages) and starts both comment streams; the second asks the moved
    # windows once unconditionally; from then on every run is idle
    assert runs == [(5, 0), (2, 0), (2, 2), (2, 2)]
    assert (loop.state / "github").is_dir()
