"""The one runner of `gh api -i`: argv, environment, timeout, and failures named."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from contextlib import suppress
from functools import partial
from typing import Any, TypedDict

import sh

from adapters.github.reply import Reply, parse_reply
from domain.errors import TrackerError

log = logging.getLogger(__name__)
# sh's DEBUG lines hold each process's argv and everything it prints: a JWT on gh's argv, an
# installation token in a reply, comments' text. Its INFO line names a command as `_log_msg` says
logging.getLogger("sh").setLevel(logging.INFO)

GITHUB_COM = "github.com"
# every variable gh takes a token from, before its own stored login
_TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
_NOT_AUTHENTICATED = 4  # gh's exit status when it holds no token for the host
_STDERR_MAX = 300


class GhOptions(TypedDict, total=False):
    """How `gh` is run, passed on as given to `GhApi`, which alone says what each one defaults to."""

    binary: str
    host: str
    env: Mapping[str, str] | None
    timeout: float


class GhApi:
    """Runs `gh api -i` and returns the HTTP reply, whatever its status (gh exits 1 on a 304).

    A call is made with gh's own login, or with the `token` it is given: in gh's environment, never
    on its argv, in a file or in a git remote. `bearer` sends that token as `Authorization: Bearer`
    instead (a GitHub App's JWT), a header gh does not replace with its own (cli/cli
    `api.AddAuthTokenHeader` sets one only when the request has none).
    """

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

    def call(
        self,
        where: str,
        method: str,
        path: str,
        *,
        etag: str = "",
        payload: Any = None,
        token: str | None = None,
        bearer: bool = False,
    ) -> Reply:
        argv = ["api", "-i", "-X", method, path]
        if etag:
            argv += ["-H", f"If-None-Match: {etag}"]
        stdin = None
        if payload is not None:
            # text written to GitHub travels on stdin, never on an argv
            argv += ["--input", "-"]
            stdin = json.dumps(payload).encode()
        shown = " ".join(argv)
        log.debug("gh %s", shown)
        if bearer and token is not None:
            # after the argv is shown: a JWT is never logged. gh takes a header on its argv only; a
            # JWT lives ten minutes and can do nothing but ask for installation tokens
            argv += ["-H", f"Authorization: Bearer {token}"]
        env = self._env if token is None else self.token_env(token)
        result = self._run(where, argv, stdin, env, shown=shown)
        stdout: bytes = result.stdout
        if not stdout.strip():
            raise self._failure(where, result.exit_code, result.stderr)
        return parse_reply(stdout, where)

    def token_env(self, token: str) -> dict[str, str]:
        """gh's environment with `token` in place of any the operator's environment holds. gh reads
        GH_ENTERPRISE_TOKEN for an Enterprise Server host and GH_TOKEN for github.com (and a GHE.com
        tenancy); either wins over gh's stored login, for its API calls and for `gh auth
        git-credential` alike. Both are set: the one gh does not read for this host is ignored."""
        env = {name: value for name, value in self._env.items() if name not in _TOKEN_VARIABLES}
        return env | {"GH_TOKEN": token, "GH_ENTERPRISE_TOKEN": token}

    @staticmethod
    def token_in(env: Mapping[str, str]) -> str:
        """The token an environment of `token_env` holds ("" if none)."""
        return env.get("GH_TOKEN", "")

    def _run(self, where: str, argv: list[str], stdin: bytes | None, env: dict[str, str], *, shown: str) -> Any:
        try:
            # a group of its own: at the deadline gh goes with whatever it started (a wrapper's
            # child would otherwise live on, holding the output pipe sh waits on); sh's own log
            # names the command as `shown`, never with a header added after it
            running = sh.Command(self.binary)(
                *argv, _in=stdin, _env=env, _bg=True, _bg_exc=False, _ok_code=list(range(256)), _new_group=True,
                _log_msg=partial(_logged_as, f"{self.binary} {shown}"),
            )  # fmt: skip
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


def _logged_as(shown: str, ran: str, call_args: Any, pid: int | None = None) -> str:
    return f"<Command {shown!r}" + (f", pid {pid}>" if pid else ">")


def _expire(running: Any, expired: threading.Event) -> None:
    expired.set()
    with suppress(OSError):
        running.process.kill_group()
