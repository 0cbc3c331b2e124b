"""Issue 18 item 3: the agent watchdog's contract (`AgentWatchdogPort`) on the fake and on the real
process with a real tmux server on a private socket — it ends the daemon's marked agents once the
deadline passes, never before, and never an operator's pane; and the tmux adapter's last check
before a spawn's or a paste's tmux call."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from adapters.eventlog.rotation import Rotation
from adapters.watchdog.deadline import FILE_NAME
from adapters.watchdog.process import ProcessWatchdog
from domain.cluster import LeaseTiming
from domain.errors import LeaseLost
from domain.model import SpawnRequest
from domain.ports import AgentWatchdogPort
from domain.refs import TmuxTarget
from tests.fakes.clock import FakeClock
from tests.fakes.tmux import FakeTmux
from tests.fakes.watchdog import FakeWatchdog
from tests.tmux_support import RealTmux, real_tmux, wait_for

__all__ = ["real_tmux"]

TIMING = LeaseTiming(expiry_seconds=3, renew_deadline_seconds=2)
AGENT, OPERATOR = TmuxTarget("loop-agent"), "operator-shell"


@pytest.fixture(params=["fake", "real"])
def port(request: pytest.FixtureRequest, tmp_path: Path) -> AgentWatchdogPort:
    if request.param == "fake":
        return FakeWatchdog(FakeTmux(), FakeClock())
    return ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name="x", timing=TIMING,
                           grace_seconds=5)  # fmt: skip


def test_issue18_item3_a_watchdog_keeps_the_deadline_it_was_last_given(port: AgentWatchdogPort) -> None:
    assert port.deadline() is None

    port.arm(100.0)
    port.arm(102.5)

    assert port.deadline() == 102.5


@pytest.fixture
def watched(real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ProcessWatchdog]:
    """A running watchdog over a real tmux server holding one agent the daemon marked and one
    operator's shell; it leaves once its deadline file is gone."""
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    real_tmux.adapter().spawn(
        SpawnRequest(AGENT, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=uuid.uuid4().hex, remain_on_exit=True)
    )
    real_tmux.plant(OPERATOR)
    watchdog = ProcessWatchdog(state_root=tmp_path, events=tmp_path / "events.jsonl", socket_name=real_tmux.socket,
                               timing=TIMING, grace_seconds=5)  # fmt: skip
    watchdog.arm(SystemClock().monotonic() + 60)
    watchdog.start()
    wait_for((tmp_path / "watchdog.pid").exists, what="the watchdog running")
    try:
        yield watchdog
    finally:
        (tmp_path / FILE_NAME).unlink(missing_ok=True)


def dead(tmux: RealTmux, session: str) -> list[str]:
    return tmux.run("list-panes", "-s", "-t", f"={session}:", "-F", "#{pane_dead}").split()


def test_issue18_item3_the_watchdog_ends_the_marked_agents_once_the_deadline_passes_and_no_other_pane(
    watched: ProcessWatchdog, real_tmux: RealTmux, tmp_path: Path
) -> None:
    time.sleep(4 * TIMING.watch_every_seconds)
    before = dead(real_tmux, AGENT.name)

    watched.arm(SystemClock().monotonic() - 0.01)  # what no renewal since the last one looks like
    wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="the agent ended")
    log = tmp_path / "events.jsonl"
    wait_for(lambda: log.exists() and "cluster.agent_ended" in log.read_text(), what="the ending logged")

    assert before == ["0"]  # not before its deadline
    assert dead(real_tmux, OPERATOR) == ["0"]
    assert '"killed": false' in log.read_text()  # it went on SIGTERM, within the grace


def test_issue23_item3_the_watchdog_rotates_the_event_log_as_configured_not_by_the_defaults(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", real_tmux.env["TMUX_TMPDIR"])
    real_tmux.adapter().spawn(
        SpawnRequest(AGENT, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=uuid.uuid4().hex, remain_on_exit=True)
    )
    log = tmp_path / "events.jsonl"
    log.write_text('{"event": "filler"}\n' * 100)  # 2 KB, past the configured 1 KB
    watchdog = ProcessWatchdog(state_root=tmp_path, events=log, socket_name=real_tmux.socket, timing=TIMING,
                               grace_seconds=5, rotation=Rotation(1024, 1))  # fmt: skip
    watchdog.arm(SystemClock().monotonic() - 0.01)
    watchdog.start()
    try:
        wait_for(lambda: log.exists() and "cluster.agent_ended" in log.read_text(), what="the ending logged")
    finally:
        (tmp_path / FILE_NAME).unlink(missing_ok=True)

    assert "filler" not in log.read_text()
    assert (tmp_path / "events.jsonl.1").read_text().count("filler") == 100


def test_issue18_item3_a_spawn_refused_by_the_last_check_starts_nothing_and_leaves_no_prompt_file(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    checked: list[str] = []

    def refuse(action: str, target: TmuxTarget) -> None:
        checked.append(action)
        raise LeaseLost(str(target), reason="past the deadline")

    tmux = real_tmux.adapter(last_check=refuse)
    with pytest.raises(LeaseLost):
        tmux.spawn(SpawnRequest(AGENT, ("sleep", "600"), str(tmp_path), "a prompt", mark="ab12"))

    assert checked == ["spawn"]
    assert real_tmux.run("list-sessions", "-F", "#{session_name}", check=False).split() == []


def test_issue18_item3_a_watchdog_that_was_killed_is_started_again_at_the_next_renewal(
    watched: ProcessWatchdog, real_tmux: RealTmux, tmp_path: Path
) -> None:
    first = int((tmp_path / "watchdog.pid").read_text())
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: not alive(first), what="the watchdog gone")

    watched.arm(SystemClock().monotonic() + 60)
    wait_for(lambda: int((tmp_path / "watchdog.pid").read_text()) != first, what="another watchdog")
    watched.arm(SystemClock().monotonic() - 0.01)

    wait_for(lambda: dead(real_tmux, AGENT.name) == ["1"], what="the agent ended by the new watchdog")


def alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped if it is this test's child: not a zombie
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_issue18_item3_a_paste_refused_by_the_last_check_loads_no_buffer_and_types_nothing(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    mark, checked = uuid.uuid4().hex, list[str]()

    def refuse(action: str, target: TmuxTarget) -> None:
        checked.append(action)
        raise LeaseLost(str(target), reason="past the deadline")

    request = SpawnRequest(AGENT, ("sh", "-c", "sleep 600"), str(tmp_path), "", mark=mark, remain_on_exit=True)
    pane = real_tmux.adapter().spawn(request)
    with pytest.raises(LeaseLost):
        real_tmux.adapter(last_check=refuse).deliver(AGENT, "a prompt", delivery_id="d1", pane=pane, mark=mark)

    assert checked == ["paste"] and real_tmux.buffers() == []
