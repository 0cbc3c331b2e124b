"""The quick benchmarks still run and print their ratios: a benchmark that rotted since its figures
were published (an adapter's signature changed under it) fails here, not in front of a reader."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.e2e.cli import ROOT, clean_env
from tests.github_standin.rigs import require_gh
from tests.postgres_support import server_binaries
from tests.tmux_support import require_tmux

pytestmark = [pytest.mark.tmux, pytest.mark.gh]
RATIO = r"\d+\.\d+"


def _bench(*argv: str) -> str:
    result = subprocess.run(
        [sys.executable, *argv], cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=240, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_tmux_cost_prints_the_delivery_ratio_against_the_six_command_sequence() -> None:
    require_tmux()
    out = _bench("bench/tmux_cost.py", "--rounds", "3")
    assert re.search(rf"^delivery cost ratio\s+{RATIO}$", out, re.M), out
    assert re.search(r"^probe of a stopped server: unknown after", out, re.M), out


def test_poll_cost_prints_the_cron_ratio_and_refuses_a_size_it_cannot_build() -> None:
    require_gh()
    out = _bench("-m", "bench.poll_cost", "--repos", "1", "--items", "10")
    assert re.search(rf"^ratio cron before / after, idle run:\s+{RATIO}x$", out, re.M), out
    refused = subprocess.run(
        [sys.executable, "-m", "bench.poll_cost", "--items", "5"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert refused.returncode == 2 and "--items must be at least 10" in refused.stderr


def test_state_store_prints_postgresql_against_sqlite() -> None:
    server_binaries()  # PostgreSQL missing fails loudly
    out = _bench("-m", "bench.state_store", "50")
    assert re.search(rf"PostgreSQL \(socket\): {RATIO} ms \({RATIO}x SQLite\)", out), out


def test_cli_start_prints_each_read_only_commands_ratio_against_a_bare_interpreter() -> None:
    out = _bench("-m", "bench.cli_start", "--rounds", "2")
    assert re.search(rf"^bare start \(python -c pass\)\s+wall\s+{RATIO} ms", out, re.M), out
    for command in ("status", "sessions list", "events", "sessions list, 5 sessions", "  its start-up \\(imports\\)"):
        assert re.search(rf"^{command}\s+wall .* ratio {RATIO}x \(cpu {RATIO}x\)$", out, re.M), out


def test_page_costs_prints_the_cost_books_refresh_against_a_read_of_the_last_days() -> None:
    out = _bench("-m", "bench.page_costs", "--turns-a-day", "20", "--older", "200", "--rounds", "2")
    assert re.search(rf"^ratio, a 14-day read / the book's refresh: {RATIO}x$", out, re.M), out


def test_ui_bench_prints_the_items_view_size_and_the_idle_cycle_ratio() -> None:
    require_tmux()
    out = _bench(
        "-m", "bench.ui", "--items", "200", "--sessions", "20", "--idle-sessions", "2", "--window", "3",
        "--rounds", "1", "--history", "100",
    )  # fmt: skip
    assert re.search(r"^items view, 200 items and 20 sessions: [\d,]+ bytes", out, re.M), out
    assert re.search(r"^under 2 MB: yes$", out, re.M), out
    assert re.search(r"^closed windows spread \(the noise\): \d+% of their mean$", out, re.M), out
    assert re.search(rf"^idle cycle cost ratio, page open / closed: {RATIO}$", out, re.M), out


def test_idle_cost_prints_the_ratio_of_two_backlogs() -> None:
    require_tmux()
    require_gh()
    out = _bench("-m", "bench.idle_cost", "--scales", "10,50", "--cycles", "2", "--sessions", "1")
    assert re.search(rf"^idle cost ratio 50 / 10 items: {RATIO}$", out, re.M), out


def test_the_soak_prints_start_middle_and_end_and_loses_and_duplicates_no_comment() -> None:
    require_tmux()
    out = _bench("-m", "bench.soak")
    assert re.findall(r"^(start|middle|end) +\d+ ", out, re.M) == ["start", "middle", "end"], out
    assert re.search(rf"^end / middle: state {RATIO} .* RSS {RATIO};", out, re.M), out
    assert out.splitlines()[-1] == "800 comments: 0 lost, 0 duplicated", out


def test_capacity_on_real_tmux_delivers_every_comment_once_with_no_more_agents_than_slots() -> None:
    require_tmux()
    out = _bench(
        "-m", "bench.capacity", "--harness", "demo", "--items", "4", "--slots", "2", "--hibernate-after", "2",
        "--rate", "1200", "--hours", "0.01",
    )  # fmt: skip
    sent = re.search(r"^  comments: (\d+) sent, (\d+) delivered once, 0 lost, 0 duplicated$", out, re.M)
    assert sent and sent[1] == sent[2] and int(sent[1]) > 0, out
    assert re.search(r"^  live agents: at most [12] \(slots 2\)$", out, re.M), out
    assert re.search(r"^  hibernations [1-9]\d*, wakes \d+$", out, re.M), out
