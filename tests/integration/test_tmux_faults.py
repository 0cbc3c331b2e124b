"""tmux faults against ShTmux on real tmux 3.3: a stopped server, a killed server, a killed harness."""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from adapters.tmux.adapter import ShTmux
from domain.errors import SessionMissing, TmuxUnanswered
from domain.model import SessionState, SpawnRequest
from domain.refs import TmuxTarget
from tests.tmux_support import KillsTheServerMidCall, RealTmux, kinds, pasted, real_tmux, sim_argv, wait_for

__all__ = ["real_tmux"]
pytestmark = pytest.mark.tmux
MARK = "fa" * 16

A = TmuxTarget("loop-a")


def spawn_sim(tmux: ShTmux, tmp: Path) -> tuple[Path, str]:
    record = tmp / "harness.jsonl"
    request = SpawnRequest(target=A, argv=sim_argv(record), cwd=str(tmp), prompt="go", mark=MARK, remain_on_exit=True)
    pane = tmux.spawn(request)
    wait_for(lambda: "ready" in kinds(record), what="harness listening")
    return record, pane


def harness_pid(server: RealTmux) -> int:
    return int(server.run("list-panes", "-t", f"{A.exact}:", "-F", "#{pane_pid}"))


def test_a_delivery_to_a_stopped_server_is_unanswered_after_its_timeout_and_never_lands_later(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    tmux = real_tmux.adapter(probe_timeout=0.5, command_timeout=1.0)
    record, pane = spawn_sim(tmux, tmp_path)
    pid = harness_pid(real_tmux)
    real_tmux.stop()
    try:
        with pytest.raises(TmuxUnanswered, match=r"did not answer within 1\.0s"):
            tmux.deliver(A, "stalled", delivery_id="d-1", pane=pane, mark=MARK)
    finally:
        real_tmux.resume()
    tmux.deliver(A, "after SIGCONT", delivery_id="d-2", pane=pane, mark=MARK)
    wait_for(lambda: "submit" in kinds(record), what="submit")
    # the stalled call's client was killed: the resumed server must not paste it after all
    assert (pasted(record), kinds(record).count("submit"), harness_pid(real_tmux), real_tmux.buffers()) == (
        ["after SIGCONT"],
        1,
        pid,
        [],
    )


def test_a_server_killed_mid_delivery_reads_absent_and_leaves_no_buffer_and_no_temp_file(
    real_tmux: RealTmux, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    runner = KillsTheServerMidCall(real_tmux, "load-buffer")
    tmux = ShTmux(socket_name=real_tmux.socket, runner=runner, probe_timeout=0.5, command_timeout=5.0)
    _, pane = spawn_sim(tmux, tmp_path)
    with pytest.raises(TmuxUnanswered):
        tmux.deliver(A, "doomed", delivery_id="d-1", pane=pane, mark=MARK)
    assert (runner.fired, tmux.session_state(A), real_tmux.buffers(), sorted(os.listdir(temp))) == (
        True,
        SessionState.ABSENT,
        [],
        [],
    )


def test_a_harness_killed_by_sigkill_leaves_its_pane_dead_and_a_delivery_is_refused(
    real_tmux: RealTmux, tmp_path: Path
) -> None:
    tmux = real_tmux.adapter()
    _, pane = spawn_sim(tmux, tmp_path)
    os.kill(harness_pid(real_tmux), signal.SIGKILL)
    wait_for(lambda: tmux.session_state(A) is not SessionState.LIVE, what="the harness gone")
    with pytest.raises(SessionMissing):
        tmux.deliver(A, "into a dead pane", delivery_id="d-1", pane=pane, mark=MARK)
    assert (tmux.session_state(A), real_tmux.buffers()) == (SessionState.DEAD, [])
