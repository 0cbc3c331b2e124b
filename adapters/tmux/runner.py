"""The one way the tmux adapter runs tmux: logged, timed out, its answers classified."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import IO, Protocol

import sh

from domain.errors import DuplicateSession, TmuxFailed, TmuxUnanswered

log = logging.getLogger(__name__)


class TmuxRunner(Protocol):
    """Runs one tmux invocation (`args` exclude the binary).

    Returns stdout. Raises `TmuxUnanswered` when tmux did not answer (timeout, OSError, no
    binary, killed by a signal) and `TmuxFailed` / `DuplicateSession` when it answered non-zero.
    """

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str: ...

    def foreground(self, args: Sequence[str]) -> int:
        """Run tmux on the calling terminal; return its exit status."""


def names_missing_target(stderr: str) -> bool:
    """tmux answered: the session (or its window or pane) does not exist. "no current target" is
    what a server with no session left (it is shutting down) says for an exact target."""
    missing = any(f"can't find {what}" in stderr for what in ("session", "window", "pane"))
    return missing or "no current target" in stderr


def names_no_server(stderr: str) -> bool:
    """tmux answered: no server listens on the socket, so no session exists. A server that exits
    while we ask (its last session just closed, or it crashed) has no sessions either."""
    if "no server running" in stderr or "server exited unexpectedly" in stderr:
        return True
    return "error connecting to" in stderr and ("No such file or directory" in stderr or "Connection refused" in stderr)


def names_duplicate_session(stderr: str) -> bool:
    return "duplicate session" in stderr


class ShRunner(TmuxRunner):
    """Runs tmux through `sh`, with `env` laid over this process's environment."""

    def __init__(self, *, binary: str = "tmux", env: Mapping[str, str] | None = None) -> None:
        self._binary = binary
        self._env = {**os.environ, **(env or {})}

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str:
        command = _subcommand(args)
        log.debug("tmux %s", " ".join(args))
        # Files, not pipes: the tmux client hands its stdin and stdout to the server, so a
        # pipe stays open while a stopped server holds it and sh would wait past the deadline.
        with _input(stdin) as source, tempfile.TemporaryFile() as out:
            try:
                running = self._command()(*args, _in=source, _out=out, _env=self._env, _bg=True, _bg_exc=False)
            except OSError as exc:
                raise TmuxUnanswered(f"tmux {command} could not run: {exc}") from exc
            with _deadline(running, timeout) as expired:
                try:
                    running.wait()
                except sh.ErrorReturnCode as exc:
                    if expired.is_set():
                        raise TmuxUnanswered(f"tmux {command} did not answer within {timeout}s") from exc
                    raise _answered(command, exc.exit_code, exc.stderr) from exc
            out.seek(0)
            return out.read().decode("utf-8", "replace")

    def foreground(self, args: Sequence[str]) -> int:
        log.debug("tmux %s (foreground)", " ".join(args))
        try:
            self._command()(*args, _fg=True, _env=self._env)
        except sh.ErrorReturnCode as exc:
            return int(exc.exit_code)
        except OSError as exc:
            raise TmuxUnanswered(f"tmux could not run: {exc}") from exc
        return 0

    def _command(self) -> sh.Command:
        try:
            return sh.Command(self._binary)
        except sh.CommandNotFound as exc:
            raise TmuxUnanswered(f"tmux binary not found: {self._binary}") from exc


def _input(data: bytes | None) -> IO[bytes]:
    if data is None:
        return open(os.devnull, "rb")  # closed by the caller's `with`
    source = tempfile.TemporaryFile()  # noqa: SIM115 - unlinked at once, closed by the caller
    source.write(data)
    source.seek(0)
    return source


@contextmanager
def _deadline(running: sh.RunningCommand, seconds: float) -> Iterator[threading.Event]:
    """Kill `running` after `seconds`. (sh's own `_timeout` polls every 0.1 s, which would
    add 100 ms to every tmux call.)"""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        with suppress(OSError):
            running.kill()

    timer = threading.Timer(seconds, expire)
    timer.start()
    try:
        yield expired
    finally:
        timer.cancel()


def _subcommand(args: Sequence[str]) -> str:
    # skip the `-L socket` prefix so errors name what tmux was asked to do
    return args[2] if len(args) > 2 and args[0] == "-L" else (args[0] if args else "")


def _answered(command: str, status: int, raw_stderr: bytes) -> TmuxFailed | TmuxUnanswered:
    if status < 0:  # the client died of a signal: tmux never answered
        return TmuxUnanswered(f"tmux {command} killed by signal {-status}")
    stderr = raw_stderr.decode("utf-8", "replace")
    if names_duplicate_session(stderr):
        return DuplicateSession(command, status, stderr)
    return TmuxFailed(command, status, stderr)
