"""The load bench: `python -m bench.load` in its short form completes and its figures are sane."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from tests.e2e.cli import ROOT, clean_env
from tests.github_standin.rigs import require_gh
from tests.tmux_support import require_tmux

pytestmark = [pytest.mark.tmux, pytest.mark.gh]


@pytest.fixture(scope="module")
def campaign() -> dict[str, Any]:
    require_tmux()
    require_gh()
    result = subprocess.run(
        [sys.executable, "-m", "bench.load", "--json"],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(json.loads(result.stdout))


def test_the_load_campaign_short_form_completes_at_two_scales(campaign: dict[str, Any]) -> None:
    assert [run["items"] for run in campaign["runs"]] == list(campaign["form"]["scales"])


def test_every_comment_of_the_load_stream_is_pasted_once_neither_lost_nor_duplicated(
    campaign: dict[str, Any],
) -> None:
    counts = [(run["sent"], run["pasted_once"], run["lost"], run["duplicated"]) for run in campaign["runs"]]

    assert all(sent > 0 for sent, _, _, _ in counts)
    assert counts == [(sent, sent, 0, 0) for sent, _, _, _ in counts]


def test_an_idle_cycle_under_load_costs_two_requests_per_repository(campaign: dict[str, Any]) -> None:
    repos = campaign["form"]["repos"]

    assert [run["idle_requests_per_cycle"] for run in campaign["runs"]] == [2.0 * repos] * len(campaign["runs"])


def test_the_load_figures_are_sane(campaign: dict[str, Any]) -> None:
    for run in campaign["runs"]:
        assert run["busy_cycles"] >= 1 and run["idle_cycles"] == campaign["form"]["idle_cycles"]
        assert run["idle_cycle_s"] > 0 and 0 < run["busy_cycle_s"] <= run["busy_cycle_max_s"]
        assert run["idle_cpu_s"] > 0 and run["busy_cpu_s"] > 0 and run["busy_children_cpu_s"] > 0
        assert 0 < run["rss_mib"] <= run["peak_rss_mib"]
        assert 0 < run["poll_p50_s"] <= run["poll_p99_s"] and 0 < run["webhook_p50_s"] <= run["webhook_p99_s"]
        assert 0 <= run["webhook_received_p50_s"] <= run["webhook_taken_p50_s"] <= run["webhook_p99_s"]
        assert 0 < run["budget_per_hour"] <= run["requests_per_hour"] and run["budget_per_comment"] > 0
