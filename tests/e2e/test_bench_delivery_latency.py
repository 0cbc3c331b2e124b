"""`python -m bench.delivery_latency --quick` completes, and every comment of both
harnesses is pasted once and confirmed once — none lost, none doubled, no failed attempt."""

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
    return bench_json("bench.delivery_latency")


def test_the_delivery_latency_bench_runs_both_harnesses(bench: dict[str, Any]) -> None:
    assert [run["receipts"] for run in bench["runs"]] == ["none", "file"]
    assert all(run["cycles_while_spawning"] >= 1 for run in bench["runs"])


def test_every_back_to_back_comment_is_pasted_once_and_confirmed_once(bench: dict[str, Any]) -> None:
    comments = 2 * bench["form"]["pairs"]
    counts = [
        (run["comments"], run["pasted_once"], run["confirmed_once"], run["lost"], run["duplicated"], run["failed"])
        for run in bench["runs"]
    ]

    assert counts == [(comments, comments, comments, 0, 0, 0)] * 2
