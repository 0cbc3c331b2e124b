"""The tmux runner's bare exec: its deadline, its reaping, and how it reads an answer."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from adapters.tmux.runner import ShRunner
from domain.errors import TmuxFailed, TmuxUnanswered


def fake_tmux(tmp_path: Path, body: str) -> str:
    script = tmp_path / "tmux"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def gone(pid: int) -> bool:
    """No such process, not even a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def leftover(tmp_path: Path) -> Iterator[Path]:
    """Where a fake tmux writes the pid of a process it leaves behind; that process is ended."""
    pidfile = tmp_path / "leftover.pid"
    yield pidfile
    if pidfile.exists():
        with suppress(ProcessLookupError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_a_client_past_its_deadline_is_unanswered_killed_and_reaped(tmp_path: Path) -> None:
    pidfile = tmp_path / "client.pid"
    binary = fake_tmux(tmp_path, f"echo $$ > {pidfile}; exec sleep 30")
    with pytest.raises(TmuxUnanswered, match=r"did not answer within 1\.0s"):
        ShRunner(binary=binary)(["list-panes"], timeout=1.0)
    assert gone(int(pidfile.read_text()))


def test_without_a_pidfd_a_client_past_its_deadline_is_still_unanswered_and_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "pidfd_open", raising=False)  # as on a kernel or system without pidfds
    pidfile = tmp_path / "client.pid"
    binary = fake_tmux(tmp_path, f"echo $$ > {pidfile}; exec sleep 30")
    with pytest.raises(TmuxUnanswered, match=r"did not answer within 1\.0s"):
        ShRunner(binary=binary)(["list-panes"], timeout=1.0)
    assert gone(int(pidfile.read_text()))


def test_the_answer_is_read_when_the_client_exits_though_a_process_it_left_holds_its_output(
    tmp_path: Path, leftover: Path
) -> None:
    # what a stopped tmux server does to the client's stdout and stderr: holds them open
    binary = fake_tmux(tmp_path, f"sleep 600 & echo $! > {leftover}; echo answered")
    assert ShRunner(binary=binary)(["list-panes"], timeout=5.0) == "answered\n"


def test_a_non_zero_exit_is_an_answer_with_its_status_and_stderr_not_unanswered(tmp_path: Path) -> None:
    binary = fake_tmux(tmp_path, 'echo "can\'t find session: loop-a" >&2; exit 3')
    with pytest.raises(TmuxFailed) as failed:
        ShRunner(binary=binary)(["-L", "sock", "list-panes"], timeout=5.0)
    assert (failed.value.command, failed.value.status, failed.value.stderr) == (
        "list-panes",
        3,
        "can't find session: loop-a\n",
    )


def test_the_environment_given_is_laid_over_this_process_environment(tmp_path: Path) -> None:
    binary = fake_tmux(tmp_path, 'echo "$TMUX_TMPDIR $HOME"')
    out = ShRunner(binary=binary, env={"TMUX_TMPDIR": "/private"})(["x"], timeout=5.0)
    assert out == f"/private {os.environ['HOME']}\n"


def test_a_client_that_lost_its_server_mid_command_is_unanswered_not_an_answer(tmp_path: Path) -> None:
    binary = fake_tmux(tmp_path, "echo 'server exited unexpectedly' >&2; exit 1")
    with pytest.raises(TmuxUnanswered, match="lost its server"):
        ShRunner(binary=binary)(["load-buffer"], timeout=5.0)


def test_without_memfd_the_runner_still_passes_stdin_and_returns_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "memfd_create", raising=False)  # as on a system without memfd
    out = ShRunner(binary=fake_tmux(tmp_path, 'cat; echo " $*"'))(["a", "b"], timeout=5.0, stdin=b"in")
    assert out == "in a b\n"


def test_the_debug_log_of_a_spawn_names_its_variables_never_their_values(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runner = ShRunner(binary=fake_tmux(tmp_path, "exit 0"))
    with caplog.at_level("DEBUG", logger="adapters.tmux.runner"):
        runner(["new-session", "-d", "-e", "ANTHROPIC_API_KEY=sk-secret-value", "-s", "loop-x"], timeout=10)
    assert "ANTHROPIC_API_KEY=" in caplog.text
    assert "sk-secret-value" not in caplog.text
