"""`python -m bench.costs --quick` with each real agent: what the-loop recorded of its turns — the start
prompt's and two comments' (the store's costs) — is what the model API's stand-in served for them,
token for token in each kind, and in money within the price table's rounding (half a micro-dollar a turn)."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest

from tests.e2e.cli import ROOT, clean_env
from tests.pinned_tools import required
from tests.tmux_support import require_tmux

pytestmark = pytest.mark.tmux


def costs_of(agent: str) -> tuple[dict[str, Any], str]:
    """The bench's figures for `agent` (2 comments), and what it said on stderr."""
    result = subprocess.run(
        [sys.executable, "-m", "bench.costs", "--quick", "--json", "--agents", agent],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.stdout, result.stderr[-3000:]
    (figures,) = json.loads(result.stdout)["agents"]
    assert result.returncode == (0 if figures["accurate"] else 1), result.stderr[-3000:]
    return figures, result.stderr[-3000:]


def assert_recorded_as_served(figures: dict[str, Any]) -> None:
    money = figures["micro_dollars"]
    assert (figures["turns"], figures["unknown"], figures["problems"]) == (3, [], [])  # the start's and 2 comments'
    assert figures["recorded"] == figures["served"]
    assert abs(Decimal(money["recorded"]) - Decimal(money["exact"])) <= Decimal("0.5") * 3
    assert figures["accurate"] is True


@pytest.mark.claude
def test_claude_codes_turns_are_recorded_as_the_stand_in_served_them() -> None:
    required("claude_code")
    require_tmux()
    figures, stderr = costs_of("claude")
    assert_recorded_as_served(figures)
    assert figures["requests"] >= 2, stderr


@pytest.mark.codex
def test_codexs_turns_are_recorded_as_the_stand_in_served_them_its_task_titles_apart() -> None:
    required("codex")
    require_tmux()
    figures, stderr = costs_of("codex")
    assert_recorded_as_served(figures)
    assert figures["not_counted"]["side"]["requests"] >= 2, stderr  # a task title beside each comment's prompt
