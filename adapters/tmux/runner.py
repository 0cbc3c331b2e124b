"""The one way the tmux adapter runs tmux: logged, timed out, its answers classified.

A captured call is a bare exec (`subprocess.Popen`: vfork and exec in C) with in-memory files
for its stdio, waited on through a pidfd; not `sh`. Measured on a private tmux 3.3 server, one
`list-panes` took 7.2 ms through `sh` against 2.6 ms as a bare exec: `sh` forks the whole
interpreter and runs Python in the child before exec while the parent blocks on a pipe (about
3.4 ms), and starts four threads per command (about 0.7 ms each); no `sh` option avoids either.
Three temporary files on an ext4 /tmp cost another 2.2 ms under load, three memfds 0.02 ms.
The pidfd makes the deadline a `poll` timeout instead of a timer thread or `Popen.wait`'s sleep
loop. bench/tmux_cost.py: probe + delivery 18-19 ms through `sh`, 6.5-8 ms now, against 16-25 ms
for the original six bare execs (ratio 1.0-1.2 before, 0.32-0.39 now). `sh` keeps the foreground
call (attach), whose cost does not matter; it is imported there only: its own import (asyncio,
importlib.metadata, pty, its version lookup) costs a command's start more than all of this adapter.
"""

from __future__ import annotations

import logging
import math
import os
import select
import subprocess
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Protocol

from adapters.tmux.answers import names_duplicate_session, names_lost_server
from domain.errors import DuplicateSession, ServerLost, TmuxFailed, TmuxUnanswered

if TYPE_CHECKING:
    import sh

log = logging.getLogger(__name__)


class TmuxRunner(Protocol):
    """Runs one tmux invocation (`args` exclude the binary).

    Returns stdout. Raises `TmuxUnanswered` when tmux did not answer (timeout, OSError, no
    binary, the client killed by a signal or losing its server mid-command) and `TmuxFailed` /
    `DuplicateSession` when it answered non-zero.
    """

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str: ...

    def foreground(self, args: Sequence[str]) -> int:
        """Run tmux on the calling terminal; return its exit status."""


class ShRunner(TmuxRunner):
    """Runs tmux with `env` laid over this process's environment: captured calls as a bare
    exec, the foreground call through `sh`."""

    def __init__(self, *, binary: str = "tmux", env: Mapping[str, str] | None = None) -> None:
        self._binary = binary
        self._env = {**os.environ, **(env or {})}

    def __call__(self, args: Sequence[str], *, timeout: float, stdin: bytes | None = None) -> str:
        command = _subcommand(args)
        log.debug("tmux %s", " ".join(redacted(args)))
        # Files, not pipes: the tmux client hands its stdin and stdout to the server, so a
        # pipe stays open while a stopped server holds it; the client's exit is what we wait for.
        with _input(stdin) as source, _scratch() as out, _scratch() as err:
            try:
                client = subprocess.Popen([self._binary, *args], stdin=source, stdout=out, stderr=err, env=self._env)
            except OSError as exc:
                raise TmuxUnanswered(f"tmux {command} could not run: {exc}") from exc
            status = _wait(client, timeout)
            if status is None:
                raise TmuxUnanswered(f"tmux {command} did not answer within {timeout}s")
            if status != 0:
                err.seek(0)
                raise _answered(command, status, err.read())
            out.seek(0)
            return out.read().decode("utf-8", "replace")

    def foreground(self, args: Sequence[str]) -> int:
        import sh  # only attach runs tmux through `sh`: the others start without its import

        log.debug("tmux %s (foreground)", " ".join(redacted(args)))
        try:
            self._command()(*args, _fg=True, _env=self._env)
        except sh.ErrorReturnCode as exc:
            return int(exc.exit_code)
        except OSError as exc:
            raise TmuxUnanswered(f"tmux could not run: {exc}") from exc
        return 0

    def _command(self) -> sh.Command:
        import sh

        try:
            return sh.Command(self._binary)
        except sh.CommandNotFound as exc:
            raise TmuxUnanswered(f"tmux binary not found: {self._binary}") from exc


def redacted(args: Sequence[str]) -> list[str]:
    """`args` as logged: each `-e NAME=value` shows its name only (values may be keys)."""
    shown = list(args)
    for index in range(1, len(shown)):
        if shown[index - 1] == "-e" and "=" in shown[index]:
            shown[index] = shown[index].split("=", 1)[0] + "=…"
    return shown


def _input(data: bytes | None) -> IO[bytes]:
    if data is None:
        return open(os.devnull, "rb")  # closed by the caller's `with`
    source = _scratch()
    source.write(data)
    source.seek(0)
    return source


def _scratch() -> IO[bytes]:
    """A nameless file, closed by the caller: in memory where Linux offers it, else a temporary
    file unlinked at once."""
    try:
        return os.fdopen(os.memfd_create("the-loop-tmux", os.MFD_CLOEXEC), "w+b")
    except (AttributeError, OSError):
        import tempfile  # no memfd: rare, and a start does without the import

        return tempfile.TemporaryFile()


def _wait(client: subprocess.Popen[bytes], timeout: float) -> int | None:
    """The client's exit status (negative: the signal that killed it), or None when it was
    still running after `timeout` seconds, in which case it is killed and reaped."""
    try:
        exited = _exits_within(client, timeout)
    except BaseException:
        client.kill()
        client.wait()
        raise
    if not exited:
        client.kill()
        client.wait()
        return None
    return client.wait()


def _exits_within(client: subprocess.Popen[bytes], timeout: float) -> bool:
    try:
        pidfd = os.pidfd_open(client.pid)
    except (AttributeError, OSError):  # not Linux 5.3+: Popen's own wait, which sleeps in steps
        try:
            client.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        ready = select.poll()
        ready.register(pidfd, select.POLLIN)
        return bool(ready.poll(max(0, math.ceil(timeout * 1000))))  # readable once the client exited
    finally:
        os.close(pidfd)


def _subcommand(args: Sequence[str]) -> str:
    # skip the `-L socket` prefix so errors name what tmux was asked to do
    return args[2] if len(args) > 2 and args[0] == "-L" else (args[0] if args else "")


def _answered(command: str, status: int, raw_stderr: bytes) -> TmuxFailed | TmuxUnanswered:
    if status < 0:  # the client died of a signal: tmux never answered
        return TmuxUnanswered(f"tmux {command} killed by signal {-status}")
    stderr = raw_stderr.decode("utf-8", "replace")
    if names_lost_server(stderr):
        return ServerLost(f"tmux {command} lost its server before answering: {stderr.strip()}")
    if names_duplicate_session(stderr):
        return DuplicateSession(command, status, stderr)
    return TmuxFailed(command, status, stderr)
