"""ShTmux: the tmux port on the real tmux binary, through one logged, timed-out runner."""

from __future__ import annotations

import logging
import signal
import time
import uuid
from collections.abc import Mapping, Sequence

from adapters.tmux import commands as cmd
from adapters.tmux.local import make_start_directory, signal_pids
from adapters.tmux.prompt_file import write_prompt_file
from adapters.tmux.runner import ShRunner, TmuxRunner, names_missing_target, names_no_server
from domain.errors import LoopError, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import SessionState, SpawnRequest
from domain.ports import TmuxPort
from domain.refs import TmuxTarget

log = logging.getLogger(__name__)
_POLL_SECONDS = 0.05
# The prompt becomes the harness's last argument: Linux caps one argument at 128 KiB
# (MAX_ARG_STRLEN, with its NUL), and a bigger one would only kill the harness at exec.
MAX_PROMPT_BYTES = 128 * 1024 - 1


class ShTmux(TmuxPort):
    """Probes use `probe_timeout`; commands whose answer matters (spawn, paste, kill) wait
    `command_timeout`, so a busy server is waited for rather than misread."""

    def __init__(
        self,
        *,
        socket_name: str = "",
        binary: str = "tmux",
        probe_timeout: float = 10.0,
        command_timeout: float = 1800.0,
        env: Mapping[str, str] | None = None,
        runner: TmuxRunner | None = None,
    ) -> None:
        self._prefix = ["-L", socket_name] if socket_name else []
        self._runner = runner or ShRunner(binary=binary, env=env)
        self._probe_timeout = probe_timeout
        self._command_timeout = command_timeout

    def session_state(self, target: TmuxTarget) -> SessionState:
        try:
            out = self._tmux(cmd.session_state(target), timeout=self._probe_timeout)
        except TmuxUnanswered:
            return SessionState.UNKNOWN
        except TmuxFailed as exc:
            if _absent(exc):
                return SessionState.ABSENT
            log.warning("tmux probe of %s failed, state unknown: %s", target, exc)
            return SessionState.UNKNOWN
        dead_flags = out.split()
        if not dead_flags:
            return SessionState.UNKNOWN
        return SessionState.DEAD if all(f == "1" for f in dead_flags) else SessionState.LIVE

    def spawn(self, request: SpawnRequest) -> str:
        if not request.argv:
            raise ValueError(f"no harness command to spawn in {request.target}")
        data = request.prompt.encode()
        if len(data) > MAX_PROMPT_BYTES:
            raise ValueError(f"spawn prompt is {len(data)} bytes; one argument holds at most {MAX_PROMPT_BYTES}")
        make_start_directory(request.cwd)
        prompt_file = write_prompt_file(data)
        try:
            args = cmd.new_session(
                request.target,
                cwd=request.cwd,
                env=request.env,
                prompt_file=str(prompt_file),
                argv=request.argv,
                remain_on_exit=request.remain_on_exit,
            )
            out = self._tmux(args)
        except BaseException:
            prompt_file.unlink(missing_ok=True)  # on success the wrapper in the pane removes it
            raise
        pane_id = out.strip()
        if not cmd.is_pane_id(pane_id):
            raise TmuxFailed("new-session", 0, f"tmux started {request.target} but named no pane: {out!r}")
        return pane_id

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, submit_delay_ms: int = 0, pane: str = ""
    ) -> None:
        if pane and not cmd.is_pane_id(pane):  # from the registry: never into a tmux command as is
            raise SessionMissing(f"{target}: the recorded pane {pane!r} is not a tmux pane id")
        token = uuid.uuid4().hex  # buffer names are ours alone, never derived from the event
        buffers = (f"the-loop-{token}-prompt", f"the-loop-{token}-submit")
        log.debug("delivering %s into %s %s", delivery_id, target, pane or "(active pane)")
        try:
            self._paste(target, prompt.encode(), buffers, submit_delay_ms, pane)
        except (TmuxFailed, TmuxUnanswered) as exc:
            self._discard(buffers)
            if isinstance(exc, TmuxFailed) and _absent(exc):
                raise SessionMissing(f"{target} is absent") from exc
            raise

    def kill(self, target: TmuxTarget) -> None:
        self._tmux(["kill-session", "-t", target.exact])

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str = "") -> None:
        pids = self._live_pids(target, pane)
        signal_pids(pids, signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        while pids and time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS)
            pids &= self._live_pids(target, pane)  # only processes tmux still shows as the pane's
        signal_pids(pids, signal.SIGKILL)

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        flags = ["-r"] if read_only else []
        return self._runner.foreground([*self._prefix, "attach-session", *flags, "-t", target.exact])

    def _paste(
        self, target: TmuxTarget, data: bytes, buffers: tuple[str, str], submit_delay_ms: int, pane: str
    ) -> None:
        prompt_buffer, submit_buffer = buffers
        prompt_paste = cmd.paste(target, prompt_buffer, bracketed=True, pane_id=pane)
        submit_paste = cmd.paste(target, submit_buffer, bracketed=False, pane_id=pane)
        load = [*cmd.load_buffers(prompt_buffer, submit_buffer), cmd.SEP]
        if submit_delay_ms <= 0:
            self._guarded(target, load, buffers, [prompt_paste, submit_paste], data, pane=pane)
            return
        self._guarded(target, load, buffers, [prompt_paste], data, pane=pane)
        time.sleep(submit_delay_ms / 1000)
        self._guarded(target, [], [submit_buffer], [submit_paste], None, pane=pane)

    def _guarded(
        self,
        target: TmuxTarget,
        before: list[str],
        buffers: Sequence[str],
        pastes: list[str],
        stdin: bytes | None,
        *,
        pane: str,
    ) -> None:
        out = self._tmux([*before, *cmd.guarded(target, buffers, pastes, pane_id=pane)], stdin=stdin)
        if cmd.DEAD_MARKER in out:
            gone = f"pane {pane} is dead or no longer in {target}" if pane else f"{target}: every pane is dead"
            raise SessionMissing(gone)

    def _discard(self, buffers: Sequence[str]) -> None:
        try:
            self._tmux(cmd.delete_buffers(buffers), timeout=self._probe_timeout)
        except LoopError as exc:
            log.warning("could not delete tmux buffers %s: %s", ", ".join(buffers), exc)

    def _live_pids(self, target: TmuxTarget, pane: str) -> set[int]:
        """The live pane processes of `target`; with `pane`, that pane's only (listed from the
        session itself, so a pane that moved elsewhere is never signalled)."""
        try:
            out = self._tmux(cmd.pane_pids(target), timeout=self._probe_timeout)
        except TmuxFailed as exc:
            if _absent(exc):
                return set()
            raise
        rows = (line.split() for line in out.splitlines())
        return {
            int(pid)
            for pane_id, dead, pid in (row for row in rows if len(row) == 3)
            if dead == "0" and pid.isdigit() and pane in ("", pane_id)
        }

    def _tmux(self, args: list[str], *, timeout: float = 0.0, stdin: bytes | None = None) -> str:
        return self._runner([*self._prefix, *args], timeout=timeout or self._command_timeout, stdin=stdin)


def _absent(exc: TmuxFailed) -> bool:
    return names_missing_target(exc.stderr) or names_no_server(exc.stderr)
