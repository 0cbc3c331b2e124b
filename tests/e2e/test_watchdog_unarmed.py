"""A host whose agent watchdog was SIGKILLed and cannot be started again (the real watchdog process,
a real tmux server on a private socket, the real failure): its lease heartbeat lives on, says so,
acts on none of its items and ends its agents itself until a watchdog runs again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.tmux_support import RealTmux, real_tmux

__all__ = ["real_tmux"]

ROOT = Path(__file__).resolve().parents[2]


def run_host(mode: str, state_root: Path, tmux: RealTmux) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tests.e2e.unarmed_host", mode, str(state_root), tmux.socket],
        env={**os.environ, **tmux.env}, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_a_watchdog_restart_that_meets_emfile_leaves_the_heartbeat_renewing_and_the_host_acting_on_nothing(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    seen = run_host("emfile", tmp_path, real_tmux)

    assert seen["held_before"] is True
    assert seen["heartbeat_alive"] is True, "the heartbeat thread ended"
    (unarmed,) = seen["events"]["cluster.watchdog_unarmed"]
    assert "Too many open files" in unarmed["cause"]
    assert seen["holds_while_unarmed"][0] is False and "watchdog" in seen["holds_while_unarmed"][1]
    assert seen["rearmed"] is True and seen["renewed_after"] is True and seen["holds_after"] is True
    assert len(seen["events"]["cluster.watchdog_armed"]) == 1


def test_a_host_that_cannot_start_its_watchdog_ends_its_agents_itself(real_tmux: RealTmux, tmp_path: Path) -> None:
    seen = run_host("blocked", tmp_path, real_tmux)

    assert seen["heartbeat_alive"] is True, "the heartbeat thread ended"
    assert seen["holds_while_unarmed"][0] is False
    assert seen["agent"] == "dead"
    (ended,) = [e for e in seen["events"]["cluster.agent_ended"] if e.get("ended")]
    assert ended["source"] == "daemon"
    assert seen["rearmed"] is True and seen["holds_after"] is True
