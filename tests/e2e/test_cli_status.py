"""`status` before, during and after a poller: running or not (the lock), its last cycle (the
heartbeat), and an exit status scripts can test (0 running, 3 not running)."""

from __future__ import annotations

import json

from tests.e2e.cli import tree
from tests.e2e.loop_rig import Loop, loop
from tests.tmux_support import real_tmux

__all__ = ["loop", "real_tmux"]


def test_status_before_any_poller_says_not_running_and_creates_nothing(loop: Loop) -> None:
    result = loop.cli("status")

    assert (result.returncode, result.stdout) == (3, "not running\nlast cycle: none recorded\nneeds attention: none\n")
    assert tree(loop.root) == ["loop.yaml", "work"]  # no state root


def test_status_during_a_poller_names_its_pid_and_its_last_cycle(loop: Loop) -> None:
    poller = loop.running_poll()

    result = loop.cli("status", "--json")

    status = json.loads(result.stdout)
    assert result.returncode == 0, result.stderr
    assert (status["running"], status["pid"], status["overdue"]) == (True, poller.pid, False)
    assert status["last_cycle"]["pid"] == poller.pid and status["last_cycle"]["summary"]["items"] == 0


def test_status_during_a_poller_in_text_says_running_and_on_time(loop: Loop) -> None:
    poller = loop.running_poll()

    result = loop.cli("status")

    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stderr
    assert lines[0].startswith(f"running: pid {poller.pid}, started ")
    assert lines[1].startswith("last cycle: ") and f"pid {poller.pid}), took " in lines[1]
    assert lines[2] == "on time: cycles every 1s; overdue after 32s without one"


def test_status_after_the_poller_stopped_shows_its_last_cycle(loop: Loop) -> None:
    loop.items(2)
    loop.cli("poll", "--once")

    result = loop.cli("status")

    lines = result.stdout.splitlines()
    assert result.returncode == 3
    assert lines[0] == "not running"
    assert "s ago, pid " in lines[1] and "items=2 delivered=0 failed=0 abandoned=0 skipped=0 spawned=2" in lines[1]


def test_a_host_alone_at_its_bound_shows_the_waiting_item_in_status_and_sessions_list(loop: Loop) -> None:
    loop.extra = {"cluster": {"maxSessions": 1}}
    first, second = loop.items(2)
    for _ in range(2):  # the wait is said in the first cycle, told on the item in the next
        assert loop.cli("poll", "--once").returncode == 0

    text = loop.cli("status").stdout
    shown = json.loads(loop.cli("status", "--json").stdout)
    listed = loop.cli("sessions", "list").stdout

    assert loop.has_session(first) and not loop.has_session(second)
    assert [e["work_item"] for e in loop.events() if e["event"] == "cluster.slot_waiting"] == [str(second)]
    assert [w["work_item"] for w in shown["waiting_for_slot"]] == [str(second)]
    assert "slots: 1 of 1 in use (cluster.maxSessions: 1 (from configuration))" in text
    assert f"waiting for a free slot: {second} since" in text and f"waiting for a free slot: {second} since" in listed
    assert [e["notice"] for e in loop.events() if e["event"] == "notice.posted"] == ["slot-wait"]
