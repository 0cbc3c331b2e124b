"""`python -m bench.turn_end_latency --quick` completes in both modes, and every turn gets its 🚀
once — none missing, none said again by the cycle that follows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.cli import bench_json
from tests.github_standin.rigs import require_gh
from tests.tmux_support import require_tmux

pytestmark = [pytest.mark.tmux, pytest.mark.gh]


@pytest.fixture(scope="module")
def bench() -> dict[str, Any]:
    require_tmux()
    require_gh()
    return bench_json("bench.turn_end_latency")


def test_the_turn_end_latency_bench_runs_poll_and_webhook_mode(bench: dict[str, Any]) -> None:
    assert [run["mode"] for run in bench["runs"]] == ["poll", "webhook"]


def test_every_turn_gets_its_rocket_once(bench: dict[str, Any]) -> None:
    turns = bench["form"]["turns"]
    counts = [(run["turns"], run["said_once"], run["missing"], run["doubled"]) for run in bench["runs"]]

    assert counts == [(turns, turns, 0, 0)] * 2
