"""Test support for real tmux: a private server, the harness simulator, bounded polling."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.tmux.adapter import ShTmux
from adapters.tmux.runner import ShRunner, TmuxRunner

SIM = Path(__file__).with_name("harness_sim.py")


def require_tmux() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("SKIPPED LOUDLY: the tmux binary is not installed (CI installs it)")


# How long an awaited event may take before the test calls it lost. Not how long it should take: a
# process started on a machine running the suite side by side with other work may take tens of seconds
# to import and make its first cycle. The bound only turns a lost event into a failure, not a hang.
LOST_AFTER = 60.0


def wait_for(predicate: Callable[[], Any], *, timeout: float = LOST_AFTER, what: str = "condition") -> Any:
    """Poll `predicate` until it is truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def sim_argv(record: Path, *extra: str) -> tuple[str, ...]:
    return (sys.executable, str(SIM), "--record", str(record), *extra)


def records(path: Path) -> list[dict[str, Any]]:
    """The harness's complete records: a line still being written (a large paste's record is
    flushed in pieces) is not one yet."""
    if not path.exists():
        return []
    complete = path.read_bytes().rpartition(b"\n")[0]  # bytes: a piece may end mid-character
    return [json.loads(line) for line in complete.decode("utf-8").split("\n") if line]


def kinds(path: Path) -> list[str]:
    return [r["kind"] for r in records(path)]


def pasted(path: Path) -> list[str]:
    """Pasted texts as the harness saw them; tmux pastes a newline as CR, like a terminal."""
    return [r["text"].replace("\r", "\n") for r in records(path) if r["kind"] == "paste"]


@dataclass
class RealTmux:
    """A tmux server on a private socket under a private TMUX_TMPDIR."""

    tmpdir: Path
    socket: str = field(default_factory=lambda: f"lt-{uuid.uuid4().hex[:8]}")
    stopped_pid: int = 0

    @property
    def env(self) -> dict[str, str]:
        return {"TMUX_TMPDIR": str(self.tmpdir)}

    def adapter(self, **overrides: Any) -> ShTmux:
        options: dict[str, Any] = {"probe_timeout": 2.0, "command_timeout": 10.0, **overrides}
        return ShTmux(socket_name=self.socket, env=self.env, **options)

    def run(self, *args: str, check: bool = True, input: bytes | None = None) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args],
            env={**os.environ, **self.env},
            input=input,
            capture_output=True,
            timeout=10,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"tmux {args} failed: {done.stderr.decode()}")
        return done.stdout.decode()

    def plant(self, name: str, *, dead: bool = False) -> None:
        """An occupant not started by the adapter: a long sleep, or a pane that has exited."""
        command = "true" if dead else "sleep 600"
        self.run("new-session", "-d", "-s", name, command, ";", "set-option", "-t", f"={name}:", "remain-on-exit", "on")
        if dead:
            wait_for(
                lambda: self.run("list-panes", "-s", "-t", f"={name}:", "-F", "#{pane_dead}").split() == ["1"],
                what=f"{name} dead",
            )

    @contextmanager
    def read_only_client(self, session: str) -> Iterator[None]:
        """`tmux attach-session -r` on a pseudo-terminal, attached like an operator's observer."""
        master, slave = os.openpty()
        client = subprocess.Popen(
            ["tmux", "-L", self.socket, "attach-session", "-r", "-t", session],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**os.environ, **self.env, "TERM": "xterm"},
            start_new_session=True,
        )
        os.close(slave)
        threading.Thread(target=_drain, args=(master,), daemon=True).start()
        try:
            wait_for(lambda: self.run("list-clients", "-F", "#{client_readonly}").split() == ["1"], what="observer")
            yield
        finally:
            client.kill()
            client.wait(timeout=10)

    def buffers(self) -> list[str]:
        return self.run("list-buffers", "-F", "#{buffer_name}", check=False).split()

    def server_pid(self) -> int:
        return int(self.run("display-message", "-p", "#{pid}"))

    def stop(self) -> None:
        """The server stops answering (the reporter's 'too busy to answer')."""
        self.stopped_pid = self.server_pid()
        os.kill(self.stopped_pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.stopped_pid:
            os.kill(self.stopped_pid, signal.SIGCONT)
            self.stopped_pid = 0

    def kill_server(self) -> None:
        self.resume()
        self.run("kill-server", check=False)


class KillsTheServerMidCall(TmuxRunner):
    """Runs tmux, but the first call naming `command` meets a server that stops, takes the
    call, and is SIGKILLed while the client waits for its answer."""

    def __init__(self, server: RealTmux, command: str) -> None:
        self._inner = ShRunner(env=server.env)
        self._server, self._command = server, command
        self.fired = False

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str:
        if self._command in args and not self.fired:
            self.fired = True
            self._server.stop()
            pid, self._server.stopped_pid = self._server.stopped_pid, 0
            threading.Timer(1.0, os.kill, (pid, signal.SIGKILL)).start()
        return self._inner(args, timeout=timeout, stdin=stdin)

    def foreground(self, args: Sequence[str]) -> int:
        return self._inner.foreground(args)


def _drain(fd: int) -> None:
    """Read the observer's screen so tmux never waits on a full terminal."""
    with suppress(OSError):
        while os.read(fd, 65536):
            pass
    os.close(fd)


@pytest.fixture
def real_tmux(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealTmux]:
    require_tmux()
    server = RealTmux(tmp_path_factory.mktemp("tmux"))
    try:
        yield server
    finally:
        server.kill_server()
