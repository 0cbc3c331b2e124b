"""ShTmux over a recording runner: the exact tmux argv it sends and how it reads tmux's answers."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from adapters.tmux.adapter import ShTmux
from adapters.tmux.commands import SPAWN_WRAPPER
from adapters.tmux.runner import ShRunner, TmuxRunner
from domain.errors import DuplicateSession, ServerLost, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import Probe, SessionState, SpawnRequest
from domain.refs import TmuxTarget

A = TmuxTarget("loop-a")


@dataclass
class Call:
    args: list[str]
    stdin: bytes | None


@dataclass
class RecordingRunner(TmuxRunner):
    """Answers each call with the next scripted reply: stdout text, or an exception to raise."""

    replies: list[str | Exception] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str:
        self.calls.append(Call(list(args), stdin))
        reply = self.replies.pop(0) if self.replies else ""
        if isinstance(reply, Exception):
            raise reply
        return reply

    def foreground(self, args: Sequence[str]) -> int:
        self.calls.append(Call(list(args), None))
        return 0


def tmux_with(*replies: str | Exception) -> tuple[ShTmux, RecordingRunner]:
    runner = RecordingRunner(list(replies))
    return ShTmux(socket_name="sock", runner=runner), runner


def buffers_of(call: Call) -> tuple[str, str]:
    prompt_buffer, submit_buffer = call.args[4], call.args[9]
    assert re.fullmatch(r"the-loop-[0-9a-f]{32}-prompt", prompt_buffer)
    assert re.fullmatch(r"the-loop-[0-9a-f]{32}-submit", submit_buffer)
    return prompt_buffer, submit_buffer


MARK = "0f" * 16
OURS = (
    "#{?#{&&:#{&&:#{==:#{pane_id},%7},#{==:#{session_name},loop-a}},#{==:#{@the-loop-harness},"
    + MARK
    + "}},#{pane_dead},1}"
)


def test_a_delivery_is_one_tmux_invocation_into_the_harness_pane_guarded_by_its_mark() -> None:
    tmux, runner = tmux_with("")
    tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=MARK)
    p, s = buffers_of(runner.calls[0])
    assert [(c.args, c.stdin) for c in runner.calls] == [
        (
            [
                "-L", "sock",
                "load-buffer", "-b", p, "-", ";",
                "set-buffer", "-b", s, "\r", ";",
                "if-shell", "-F", "-t", "%7", OURS,
                f"delete-buffer -b {p} ; delete-buffer -b {s} ; display-message -p the-loop:pane-dead",
                f"paste-buffer -p -d -b {p} -t %7 ; paste-buffer -d -b {s} -t %7",
            ],
            b"hello",
        )
    ]  # fmt: skip


@pytest.mark.parametrize("pane", ["", "%", "7", "%7 ; kill-server", "%7\n", "=loop-a:", "%-1"])
def test_a_delivery_without_a_proven_harness_pane_never_reaches_tmux(pane: str) -> None:
    tmux, runner = tmux_with("")
    with pytest.raises(SessionMissing):
        tmux.deliver(A, "hello", delivery_id="d-1", pane=pane, mark=MARK)
    assert runner.calls == []


@pytest.mark.parametrize("mark", ["ZZ", "0f ; kill-server", "}", "0" * 33])
def test_a_mark_that_is_not_ours_never_reaches_tmux(mark: str) -> None:
    tmux, runner = tmux_with("")
    with pytest.raises(SessionMissing):
        tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=mark)
    assert runner.calls == []


def test_a_harness_pane_that_is_dead_elsewhere_or_unmarked_is_reported_missing() -> None:
    tmux, _ = tmux_with("the-loop:pane-dead\n")
    with pytest.raises(SessionMissing, match="pane %7 is dead, no longer in loop-a or no longer the harness's"):
        tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=MARK)


def test_a_delivery_never_uses_send_keys_nor_puts_the_prompt_on_an_argv() -> None:
    tmux, runner = tmux_with("", "")
    tmux.deliver(A, "PROMPT-TEXT", delivery_id="d-1", pane="%7", mark=MARK, submit_delay_ms=1)
    words = [word for call in runner.calls for arg in call.args for word in arg.split()]
    assert ("send-keys" in words, any("PROMPT-TEXT" in w for w in words)) == (False, False)


def test_a_submit_delay_splits_the_submit_into_a_second_guarded_invocation() -> None:
    tmux, runner = tmux_with("", "")
    tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=MARK, submit_delay_ms=1)
    _, s = buffers_of(runner.calls[0])
    assert runner.calls[1].args == [
        "-L", "sock",
        "if-shell", "-F", "-t", "%7", OURS,
        f"delete-buffer -b {s} ; display-message -p the-loop:pane-dead",
        f"paste-buffer -d -b {s} -t %7",
    ]  # fmt: skip


def test_a_dead_pane_is_reported_missing_without_another_invocation() -> None:
    tmux, runner = tmux_with("the-loop:pane-dead\n")
    with pytest.raises(SessionMissing):
        tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=MARK)
    assert len(runner.calls) == 1


def test_an_absent_target_is_reported_missing_and_both_buffers_are_deleted() -> None:
    tmux, runner = tmux_with(TmuxFailed("load-buffer", 1, "can't find pane: %7\n"), "")
    with pytest.raises(SessionMissing):
        tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=MARK)
    p, s = buffers_of(runner.calls[0])
    assert runner.calls[1].args == [
        "-L", "sock",
        "set-buffer", "-b", p, "x", ";", "delete-buffer", "-b", p, ";",
        "set-buffer", "-b", s, "x", ";", "delete-buffer", "-b", s,
    ]  # fmt: skip


def test_an_unanswered_delivery_stays_unanswered_never_missing() -> None:
    tmux, _ = tmux_with(TmuxUnanswered("timed out"), TmuxUnanswered("timed out"))
    with pytest.raises(TmuxUnanswered):
        tmux.deliver(A, "hello", delivery_id="d-1", pane="%7", mark=MARK)


@pytest.mark.parametrize(
    ("rows", "harness", "pane", "others"),
    [
        (f"%7 0 100 {MARK}\n", SessionState.LIVE, "%7", False),
        (f"%7 1 100 {MARK}\n%8 0 101 \n", SessionState.DEAD, "%7", True),  # dead beside an operator's live pane
        ("%8 0 101 \n", SessionState.ABSENT, "", True),  # a stranger holds the name
        (f"%8 0 101 {'1' * 32}\n", SessionState.ABSENT, "", True),  # another spawn's mark
    ],
)  # fmt: skip
def test_the_probe_finds_the_harness_by_its_mark(rows: str, harness: SessionState, pane: str, others: bool) -> None:
    tmux, runner = tmux_with(rows)
    probe = tmux.probe(A, mark=MARK)
    assert (probe.harness, probe.pane, probe.others_live) == (harness, pane, others)
    assert runner.calls[0].args == [
        "-L", "sock", "list-panes", "-s", "-t", "=loop-a:", "-F",
        "#{pane_id} #{pane_dead} #{pane_pid} #{@the-loop-harness}",
    ]  # fmt: skip


def test_a_probe_that_lost_its_server_asks_once_more_and_reads_the_answer() -> None:
    gone = TmuxFailed("list-panes", 1, "no server running on /t/sock\n")
    tmux, runner = tmux_with(ServerLost("lost server"), gone)
    assert tmux.probe(A, mark=MARK) == Probe(SessionState.ABSENT, SessionState.ABSENT)
    assert len(runner.calls) == 2


def test_a_record_from_before_marks_finds_its_harness_by_the_recorded_pane_only_while_unmarked() -> None:
    tmux, _ = tmux_with("%7 0 100 \n%8 0 101 \n", f"%7 0 100 {MARK}\n")
    assert tmux.probe(A, mark="", pane="%7").pane == "%7"
    assert tmux.probe(A, mark="", pane="%7").harness is SessionState.ABSENT


def test_clearing_kills_each_dead_pane_only_while_it_is_still_dead_never_the_session() -> None:
    tmux, runner = tmux_with("%7 1 100 x\n%8 0 101 \n%9 1 102 \n", "")
    tmux.clear_dead(A)
    assert runner.calls[1].args == [
        "-L", "sock",
        "if-shell", "-F", "-t", "%7", "#{pane_dead}", "kill-pane -t %7", ";",
        "if-shell", "-F", "-t", "%9", "#{pane_dead}", "kill-pane -t %9",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "state"),
    [
        ("0\n", SessionState.LIVE),
        ("1\n0\n", SessionState.LIVE),
        ("1\n1\n", SessionState.DEAD),
        (TmuxFailed("list-panes", 1, "can't find session: loop-a\n"), SessionState.ABSENT),
        (TmuxFailed("list-panes", 1, "no server running on /t/sock\n"), SessionState.ABSENT),
        (TmuxFailed("list-panes", 1, "error connecting to /t/sock (No such file or directory)\n"), SessionState.ABSENT),
        (TmuxFailed("list-panes", 1, "error connecting to /t/sock (Permission denied)\n"), SessionState.UNKNOWN),
        (TmuxFailed("list-panes", 1, "server exited unexpectedly\n"), SessionState.UNKNOWN),
        (TmuxUnanswered("timed out"), SessionState.UNKNOWN),
    ],
)  # fmt: skip
def test_the_probe_reads_tmux_answers_as_states(reply: str | Exception, state: SessionState) -> None:
    tmux, _ = tmux_with(reply)
    assert tmux.session_state(A) is state


def test_the_probe_is_one_exact_list_panes() -> None:
    tmux, runner = tmux_with("0\n")
    tmux.session_state(A)
    assert [c.args for c in runner.calls] == [
        ["-L", "sock", "list-panes", "-s", "-t", "=loop-a:", "-F", "#{pane_dead}"]
    ]


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def spawned(*, remain_on_exit: bool, window: bool = False) -> list[str]:
    tmux, runner = tmux_with("%3\n")
    request = SpawnRequest(
        target=A,
        argv=("claude", "--x;"),
        cwd="/",
        prompt="PROMPT-TEXT",
        mark=MARK,
        remain_on_exit=remain_on_exit,
        env=(("K", "v"),),
        window=window,
    )
    tmux.spawn(request)
    return runner.calls[0].args


def test_spawn_starts_the_harness_through_the_wrapper_and_marks_its_pane_in_the_same_invocation(
    private_tmp: Path,
) -> None:
    args = spawned(remain_on_exit=True)
    assert args == [
        "-L", "sock", "new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "loop-a", "-c", "/", "-e", "K=v",
        "--", "/bin/sh", "-c", SPAWN_WRAPPER, "the-loop-spawn", args[18], "claude", "--x\\;",
        ";", "set-option", "-p", "-t", "=loop-a:", "@the-loop-harness", MARK,
        ";", "set-option", "-t", "=loop-a:", "remain-on-exit", "on",
    ]  # fmt: skip


def test_a_harness_beside_an_operators_window_gets_a_window_of_its_own_marked_by_name(
    private_tmp: Path,
) -> None:
    args = spawned(remain_on_exit=True, window=True)
    window = f"=loop-a:=the-loop-{MARK}"
    assert args[:10] == ["-L", "sock", "new-window", "-d", "-P", "-F", "#{pane_id}", "-n", f"the-loop-{MARK}", "-t"]
    assert args[-12:] == [
        ";", "set-option", "-p", "-t", window, "@the-loop-harness", MARK,
        ";", "set-option", "-w", "-t", window, "remain-on-exit", "on",
    ][-12:]  # fmt: skip


def test_spawn_hands_the_prompt_over_in_a_private_file_only(private_tmp: Path) -> None:
    args = spawned(remain_on_exit=False)
    prompt_file = Path(args[18])
    assert (prompt_file.read_text(), prompt_file.stat().st_mode & 0o777, "PROMPT-TEXT" in "".join(args)) == (
        "PROMPT-TEXT",
        0o600,
        False,
    )


def test_spawn_removes_the_prompt_file_when_tmux_refuses(private_tmp: Path) -> None:
    tmux, _ = tmux_with(DuplicateSession("new-session", 1, "duplicate session: loop-a\n"))
    with pytest.raises(DuplicateSession):
        tmux.spawn(SpawnRequest(target=A, argv=("claude",), cwd="/", prompt="go", mark=MARK))
    assert list(private_tmp.glob("the-loop-prompt-*")) == []


def test_attach_read_only_runs_attach_session_r_on_the_exact_target() -> None:
    tmux, runner = tmux_with()
    tmux.attach(A, read_only=True)
    assert runner.calls[0].args == ["-L", "sock", "attach-session", "-r", "-t", "=loop-a"]


def test_kill_is_kill_session_on_the_exact_target() -> None:
    tmux, runner = tmux_with("")
    tmux.kill(A)
    assert runner.calls[0].args == ["-L", "sock", "kill-session", "-t", "=loop-a"]


def fake_tmux_binary(tmp_path: Path, body: str) -> str:
    script = tmp_path / "tmux"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_the_runner_reads_a_missing_binary_as_unanswered(tmp_path: Path) -> None:
    with pytest.raises(TmuxUnanswered):
        ShRunner(binary=str(tmp_path / "no-tmux-here"))(["list-sessions"], timeout=5)


def test_the_runner_reads_a_timeout_as_unanswered(tmp_path: Path) -> None:
    with pytest.raises(TmuxUnanswered):
        ShRunner(binary=fake_tmux_binary(tmp_path, "exec sleep 30"))(["list-sessions"], timeout=0.2)


def test_the_runner_reads_duplicate_session_as_its_own_failure(tmp_path: Path) -> None:
    binary = fake_tmux_binary(tmp_path, "echo 'duplicate session: loop-a' >&2; exit 1")
    with pytest.raises(DuplicateSession) as refused:
        ShRunner(binary=binary)(["new-session"], timeout=5)
    assert (refused.value.status, refused.value.stderr) == (1, "duplicate session: loop-a\n")


def test_the_runner_reads_a_client_killed_by_a_signal_as_unanswered(tmp_path: Path) -> None:
    with pytest.raises(TmuxUnanswered):
        ShRunner(binary=fake_tmux_binary(tmp_path, "kill -KILL $$"))(["list-sessions"], timeout=5)


def test_the_runner_returns_stdout_and_passes_stdin(tmp_path: Path) -> None:
    out = ShRunner(binary=fake_tmux_binary(tmp_path, 'cat; echo " $*"'))(["a", "b"], timeout=5, stdin=b"in")
    assert out == "in a b\n"


@pytest.fixture
def no_umask() -> Iterator[None]:
    """umask 0, so a directory's mode is exactly the mode it was created with."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


def test_spawn_creates_a_missing_start_directory_and_its_parents_0755(private_tmp: Path, no_umask: None) -> None:
    tmux, _ = tmux_with("%0\n")
    workdir = private_tmp / "work" / "github-acme-widgets-7"
    tmux.spawn(SpawnRequest(target=A, argv=("claude",), cwd=str(workdir), prompt="go"))
    assert [oct(d.stat().st_mode & 0o777) for d in (workdir.parent, workdir)] == ["0o755", "0o755"]


def test_spawn_refuses_a_start_directory_that_is_a_file(private_tmp: Path) -> None:
    tmux, runner = tmux_with("%0\n")
    (private_tmp / "taken").write_text("not a directory")
    with pytest.raises(TmuxFailed, match="start directory is not a directory"):
        tmux.spawn(SpawnRequest(target=A, argv=("claude",), cwd=str(private_tmp / "taken"), prompt="go"))
    assert runner.calls == []


def test_spawn_returns_the_pane_id_tmux_printed(private_tmp: Path) -> None:
    tmux, _ = tmux_with("%42\n")
    assert tmux.spawn(SpawnRequest(target=A, argv=("claude",), cwd="/", prompt="go")) == "%42"


def test_a_spawn_tmux_answers_without_a_pane_id_fails(private_tmp: Path) -> None:
    tmux, _ = tmux_with("")
    with pytest.raises(TmuxFailed, match="named no pane"):
        tmux.spawn(SpawnRequest(target=A, argv=("claude",), cwd="/", prompt="go", mark=MARK))


def test_spawn_refuses_a_prompt_too_big_to_be_one_argument(private_tmp: Path) -> None:
    tmux, runner = tmux_with("")
    with pytest.raises(ValueError, match="spawn prompt is 131072 bytes"):
        tmux.spawn(SpawnRequest(target=A, argv=("claude",), cwd="/", prompt="é" * 65536))
    assert (runner.calls, list(private_tmp.iterdir())) == ([], [])


def test_spawn_sweeps_prompt_files_orphaned_for_over_an_hour_and_keeps_recent_ones(private_tmp: Path) -> None:
    orphan, recent = private_tmp / "the-loop-prompt-orphan", private_tmp / "the-loop-prompt-recent"
    orphan.write_text("old prompt")
    recent.write_text("a prompt another spawn is handing over")
    two_hours_ago = orphan.stat().st_mtime - 7200
    os.utime(orphan, (two_hours_ago, two_hours_ago))
    spawned(remain_on_exit=False)
    assert (orphan.exists(), recent.exists()) == (False, True)
