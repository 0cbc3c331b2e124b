"""The one way the git adapter runs a command: logged, timed out, its failures named."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

import sh

from adapters.git.auth import QUIET_ENV, credentials_refused
from domain.errors import CredentialsRefused, WorkspaceError
from domain.prompts import sanitize

log = logging.getLogger(__name__)

MESSAGE_LINES = 5  # of git's stderr kept in an error: the `fatal:` line and what led to it


class GitRunner:
    """Runs `git <args>`; returns stdout, or raises `WorkspaceError` naming the command, the
    place it worked on and git's own message (also for a timeout and a missing binary):
    `CredentialsRefused` when that message says the remote refused git's credentials."""

    def __init__(
        self,
        *,
        timeout: float,
        binary: str = "git",
        env: Mapping[str, str] | None = None,
        inherit: Mapping[str, str] | None = None,
    ) -> None:
        """`inherit`: the environment git starts from instead of the daemon's; `env`: set over it."""
        self.timeout = timeout
        self.binary = binary
        self.env = {**(os.environ if inherit is None else inherit), **QUIET_ENV, **(env or {})}

    def with_env(self, **extra: str) -> GitRunner:
        return GitRunner(timeout=self.timeout, binary=self.binary, env={**self.env, **extra})

    def inheriting(self, inherit: Mapping[str, str]) -> GitRunner:
        """This runner with git started from `inherit` instead of the daemon's environment."""
        return GitRunner(timeout=self.timeout, binary=self.binary, inherit=inherit)

    def __call__(
        self, *args: str, where: str, cwd: Path | None = None, stdin: str | None = None, private: bool = True
    ) -> str:
        """`private`: what git creates is the operator's alone (umask 077): the shared clones live
        in the state root. Only a worktree's checkout (the operator's folder) is made without."""
        log.debug("git %s (in %s)", " ".join(args), cwd or ".")
        what = f"git {_verb(args)}"
        extra: dict[str, object] = {"_in": stdin} if stdin is not None else {}
        if private:
            extra["_preexec_fn"] = _private_umask
        running = start(self.binary, args, env=self.env, cwd=cwd, where=where, **extra)
        with deadline(running, self.timeout) as expired:
            try:
                running.wait()
            except sh.ErrorReturnCode as exc:
                if expired.is_set():
                    raise WorkspaceError(f"{what} did not finish within {self.timeout:g} s ({where})") from None
                said = f"{what} exited {exc.exit_code} ({where}): {message(exc.stderr)}"
                if credentials_refused(exc.stderr.decode("utf-8", "replace")):
                    raise CredentialsRefused(said) from None
                raise WorkspaceError(said) from None
        return str(running)


def _private_umask() -> None:
    os.umask(0o077)  # in the child, between fork and exec: the-loop's own umask is untouched


def start(
    binary: str, args: tuple[str, ...], *, env: Mapping[str, str], cwd: Path | None, where: str, **extra: Any
) -> sh.RunningCommand:
    """Start one command in a process group of its own, so a timeout also ends what it started."""
    try:
        running: sh.RunningCommand = sh.Command(binary)(
            *args, _cwd=str(cwd) if cwd else None, _env=dict(env), _bg=True, _bg_exc=False, _new_group=True, **extra
        )
    except sh.CommandNotFound:
        raise WorkspaceError(f"{binary} not found on PATH ({where})") from None
    except OSError as exc:
        raise WorkspaceError(f"{binary} could not run ({where}): {exc.strerror}") from None
    return running


def run_shell(line: str, *, cwd: Path, env: Mapping[str, str], timeout: float, out: IO[bytes]) -> tuple[int, bool]:
    """`sh -c line` in `cwd`, stdout and stderr into `out`; its exit status and whether it timed out."""
    running = start("sh", ("-c", line), env=env, cwd=cwd, where=str(cwd), _out=out, _err_to_out=True)
    with deadline(running, timeout) as expired:
        try:
            running.wait()
        except sh.ErrorReturnCode as exc:
            return int(exc.exit_code), expired.is_set()
    return 0, False


def message(stderr: bytes) -> str:
    """git's last lines, control characters made visible: what git said, bounded."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return sanitize(" / ".join(lines[-MESSAGE_LINES:])) or "no message"


def _verb(args: tuple[str, ...]) -> str:
    # skip `-C dir` and `-c key=value` so errors name what git was asked to do
    rest = list(args)
    while len(rest) > 1 and rest[0] in {"-C", "-c", "--no-pager"}:
        rest = rest[1:] if rest[0] == "--no-pager" else rest[2:]
    return " ".join(rest[:2]) if rest and rest[0] == "worktree" else (rest[0] if rest else "")


@contextmanager
def deadline(running: sh.RunningCommand, seconds: float) -> Iterator[threading.Event]:
    """Kill `running`'s process group after `seconds`. (sh's own `_timeout` polls every 0.1 s.)"""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        with suppress(OSError):
            running.kill_group()

    timer = threading.Timer(seconds, expire)
    timer.start()
    try:
        yield expired
    finally:
        timer.cancel()
