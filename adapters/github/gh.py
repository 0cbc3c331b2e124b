"""The one runner of `gh api -i`: argv, environment, timeout, and failures named."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from contextlib import suppress
from typing import Any, TypedDict

import sh

from adapters.github.reply import Reply, parse_reply
from domain.errors import TrackerError

log = logging.getLogger(__name__)

GITHUB_COM = "github.com"
_NOT_AUTHENTICATED = 4  # gh's exit status when it holds no token for the host
_STDERR_MAX = 300


class GhOptions(TypedDict, total=False):
    """How `gh` is run, passed on as given to `GhApi`, which alone says what each one defaults to."""

    binary: str
    host: str
    env: Mapping[str, str] | None
    timeout: float


class GhApi:
    """Runs `gh api -i` and returns the HTTP reply, whatever its status (gh exits 1 on a 304)."""

    def __init__(
        self,
        *,
        binary: str = "gh",
        host: str = GITHUB_COM,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.binary = binary
        self.host = host
        self.timeout = timeout
        base = dict(os.environ if env is None else env)
        base |= {"GH_NO_UPDATE_NOTIFIER": "1", "GH_PROMPT_DISABLED": "1", "NO_COLOR": "1"}
        base.pop("GH_HOST", None)  # an inherited one must not send us to another host
        if host != GITHUB_COM:
            # `gh api --hostname` refuses host:port; GH_HOST takes it
            base["GH_HOST"] = host
        self._env = base

    def call(self, where: str, method: str, path: str, *, etag: str = "", payload: Any = None) -> Reply:
        argv = ["api", "-i", "-X", method, path]
        if etag:
            argv += ["-H", f"If-None-Match: {etag}"]
        stdin = None
        if payload is not None:
            # text written to GitHub travels on stdin, never on an argv
            argv += ["--input", "-"]
            stdin = json.dumps(payload).encode()
        log.debug("gh %s", " ".join(argv))
        result = self._run(where, argv, stdin)
        stdout: bytes = result.stdout
        if not stdout.strip():
            raise self._failure(where, result.exit_code, result.stderr)
        return parse_reply(stdout, where)

    def _run(self, where: str, argv: list[str], stdin: bytes | None) -> Any:
        try:
            # a group of its own: at the deadline gh goes with whatever it started (a wrapper's
            # child would otherwise live on, holding the output pipe sh waits on)
            running = sh.Command(self.binary)(
                *argv, _in=stdin, _env=self._env, _bg=True, _bg_exc=False, _ok_code=list(range(256)), _new_group=True
            )
        except sh.CommandNotFound as error:
            raise TrackerError(f"{where}: gh not found ({self.binary!r} is not on PATH)") from error
        except OSError as error:
            raise TrackerError(f"{where}: gh could not run ({error})") from error
        # our own deadline: sh's `_timeout` polls, which costs ~60 ms on every gh call
        expired = threading.Event()
        timer = threading.Timer(self.timeout, _expire, (running, expired))
        timer.start()
        try:
            running.wait()
        except sh.ErrorReturnCode as error:  # only a signal gets past `_ok_code`
            if not expired.is_set():
                raise TrackerError(f"{where}: gh was killed ({error.exit_code})") from error
        finally:
            timer.cancel()
        if expired.is_set():
            raise TrackerError(f"{where}: gh did not answer within {self.timeout:g}s ({argv[3]} {argv[4]})")
        return running

    def _failure(self, where: str, status: int, stderr: bytes) -> TrackerError:
        text = stderr.decode("utf-8", "replace")
        text = " ".join("".join(c for c in text if c.isprintable() or c == "\n").split())
        if status == _NOT_AUTHENTICATED:
            return TrackerError(f"{where}: gh is not authenticated for {self.host} ({text})")
        return TrackerError(f"{where}: gh failed (exit {status}): {text[:_STDERR_MAX]}")


def _expire(running: Any, expired: threading.Event) -> None:
    expired.set()
    with suppress(OSError):
        running.process.kill_group()
