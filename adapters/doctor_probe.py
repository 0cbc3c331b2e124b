"""What `doctor` asks the machine, through `sh`: versions, gh's login, tmux's server, paths."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sh

from adapters.git.auth import QUIET_ENV, credential_args, credentials_refused
from adapters.memory import machine_memory
from domain.errors import CredentialsRefused, LoopError
from domain.refs import RepoRef

_NO_SERVER = ("no server running", "error connecting to")


class ShDoctorProbe:
    """Implements `app.cli.doctor.DoctorProbe` (structurally: adapters do not import app).

    Failure modes: `LoopError` naming the cause — binary not found, non-zero exit (its last
    stderr line), no answer within `timeout` seconds.
    """

    def __init__(self, *, timeout: float = 10.0) -> None:
        self._timeout = timeout

    def version(self, binary: str) -> str:
        flag = "-V" if Path(binary).name == "tmux" else "--version"
        return self._run(binary, flag).strip().splitlines()[0]

    def gh_auth(self, binary: str, host: str) -> str:
        # gh 2.x writes the status to stderr even when it succeeds
        try:
            out = self._run(binary, "auth", "status", "--hostname", host, env={"GH_HOST": host}, merge=True)
        except _Failed as failed:
            lines = [line.strip(" X-") for line in failed.stderr.splitlines() if line.strip()]
            telling = [line for line in lines if any(w in line for w in ("not logged", "failed", "invalid"))]
            raise LoopError((telling or lines or ["not logged in"])[0]) from None
        logged = [line.strip(" ✓-") for line in out.splitlines() if "Logged in to" in line]
        return logged[0] if logged else "logged in"

    def tmux_server(self, socket_name: str | None) -> str:
        args = (["-L", socket_name] if socket_name else []) + ["list-sessions", "-F", "#{session_name}"]
        try:
            names = self._run("tmux", *args).split()
        except _Failed as failed:
            if any(marker in failed.stderr for marker in _NO_SERVER):
                return "not running yet (the first spawn starts it)"
            raise
        ours = sum(name.startswith("loop-") for name in names)
        return f"answers: {len(names)} sessions, {ours} of them the-loop's"

    def repo_visible(self, binary: str, repo: RepoRef) -> str:
        name = self._run(binary, "api", f"repos/{repo.full_name}", "--jq", ".full_name", env={"GH_HOST": repo.host})
        return f"visible as {name.strip()}"

    def git_remote(self, url: str, gh: str, env: Mapping[str, str] | None = None) -> str:
        # `--symref HEAD` asks for one ref only: the answer is small even for a huge repository; in
        # `env` (a GitHub App's token environment) alone when given, as the daemon's fetch runs
        args = (*credential_args(gh), "ls-remote", "--symref", url, "HEAD")
        try:
            if env is None:
                out = self._run("git", *args, env=QUIET_ENV)
            else:
                out = self._run("git", *args, env={**env, **QUIET_ENV}, inherit=False)
        except _Failed as failed:
            # git's first `fatal:` line says what went wrong; its last one is advice
            fatal = [line.strip() for line in failed.stderr.splitlines() if line.startswith("fatal:")]
            said = f"git ls-remote {url}: {fatal[0]}" if fatal else str(failed)
            raise (CredentialsRefused if credentials_refused(failed.stderr) else LoopError)(said) from None
        head = [line.split()[1] for line in out.splitlines() if line.startswith("ref:") and len(line.split()) > 1]
        return f"{url} answers (default branch {head[0].removeprefix('refs/heads/')})" if head else f"{url} answers"

    def writable(self, path: Path) -> str:
        if path.exists():
            if not path.is_dir():
                raise LoopError(f"{path} is a file, not a directory")
            if os.access(path, os.W_OK | os.X_OK):
                return f"{path} is writable"
            raise LoopError(f"{path} is not a writable directory")
        parent = next(p for p in path.absolute().parents if p.exists())
        if not parent.is_dir():  # said as it is: no permission would let a folder be made in a file
            raise LoopError(f"{path} cannot be created: {parent} is a file, not a directory")
        if os.access(parent, os.W_OK | os.X_OK):
            return f"{path} will be created (in {parent})"
        raise LoopError(f"{path} cannot be created: {parent} is not writable")

    def tmux_environment(self, socket_name: str | None) -> Mapping[str, str] | None:
        args = (["-L", socket_name] if socket_name else []) + ["show-environment", "-g"]
        try:
            out = self._run("tmux", *args)
        except _Failed as failed:
            if any(marker in failed.stderr for marker in _NO_SERVER):
                return None  # the first spawn starts one, in the daemon's environment
            raise
        # `-NAME` lines are variables removed from the global environment
        pairs = [line.split("=", 1) for line in out.splitlines() if "=" in line and not line.startswith("-")]
        return {name: value for name, value in pairs}

    def harness_version(self, binary: str, env: Mapping[str, str]) -> str:
        path = env.get("PATH", "")
        found = shutil.which(binary, path=path)
        if found is None:
            raise LoopError(f"{binary} not found on the panes' PATH ({path or 'empty'})")
        lines = self._run(found, "--version", env=env, inherit=False).strip().splitlines()
        return f"{lines[0] if lines else 'no version printed'} ({found})"

    def json_file(self, path: Path) -> Mapping[str, Any] | None:
        text = _text_of(path)
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            raise LoopError(f"{path}: not JSON") from None
        if not isinstance(data, dict):
            raise LoopError(f"{path}: not a JSON object")
        return data

    def toml_file(self, path: Path) -> Mapping[str, Any] | None:
        text = _text_of(path)
        if text is None:
            return None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            raise LoopError(f"{path}: not TOML") from None

    def file_writable(self, path: Path) -> str:
        folder = path.resolve().parent  # a symlinked dotfile: its target's folder gets the new copy
        if path.exists() and not os.access(path, os.W_OK):
            raise LoopError(f"{path} is not writable")
        if not folder.is_dir():
            raise LoopError(f"{folder} is not a directory")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise LoopError(f"{folder} is not writable (the file is replaced by a new copy written beside it)")
        return f"{path} is writable" if path.exists() else f"{path} will be created"

    def port_free(self, host: str, port: int) -> str:
        try:
            with socket.create_server((host, port)):
                pass
        except OSError as error:
            raise LoopError(f"cannot listen on {host}:{port}: {error.strerror}") from None
        return f"{host}:{port} is free"

    def memory_bytes(self) -> int | None:
        return machine_memory()

    def _run(
        self, binary: str, *args: str, env: Mapping[str, str] | None = None, merge: bool = False, inherit: bool = True
    ) -> str:
        base = os.environ if inherit else {}
        full_env = {**base, "GH_NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1", **(env or {})}
        try:
            command = sh.Command(binary)
            out = command(*args, _timeout=self._timeout, _env=full_env, _err_to_out=merge, _tty_out=False)
        except sh.CommandNotFound:
            raise LoopError(f"{binary} not found on PATH") from None
        except sh.TimeoutException:
            raise LoopError(f"{binary} did not answer within {self._timeout:g} s") from None
        except sh.ErrorReturnCode as exc:
            raise _Failed(binary, exc.exit_code, _text(exc.stderr) or _text(exc.stdout)) from None
        except OSError as exc:
            raise LoopError(f"{binary} could not run: {exc.strerror}") from None
        return str(out)


class _Failed(LoopError):
    def __init__(self, binary: str, status: int, stderr: str) -> None:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
        super().__init__(f"{binary} exited {status}: {last}")
        self.stderr = stderr


def _text(data: bytes | str) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data


def _text_of(path: Path) -> str | None:
    """The file's text; None when there is none; a clear error when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise LoopError(f"{path}: cannot read: {error}") from None
