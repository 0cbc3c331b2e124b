"""ShTmux: the tmux port on the real tmux binary, through one logged, timed-out runner."""

from __future__ import annotations

import logging
import signal
import time
from collections.abc import Callable, Mapping, Sequence

from adapters.tmux import commands as cmd
from adapters.tmux.answers import names_missing_target, names_no_server
from adapters.tmux.local import end_group, group_memory, group_of, make_start_directory, signal_group
from adapters.tmux.panes import PaneRow, harness_row, probe_of
from adapters.tmux.prompt_file import write_prompt_file
from adapters.tmux.runner import ShRunner, TmuxRunner
from domain.errors import LoopError, ServerLost, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import Probe, SessionState, SpawnRequest
from domain.ports import TmuxPort
from domain.refs import TmuxTarget

log = logging.getLogger(__name__)
_POLL_SECONDS = 0.05
# The prompt becomes the harness's last argument: Linux caps one argument at 128 KiB
# (MAX_ARG_STRLEN, with its NUL), and a bigger one would only kill the harness at exec.
MAX_PROMPT_BYTES = 128 * 1024 - 1


class ShTmux(TmuxPort):
    """Probes use `probe_timeout`; commands whose answer matters (spawn, paste, kill) wait
    `command_timeout`, so a busy server is waited for rather than misread. `last_check(action,
    target)`, when given, runs as the very last step before the tmux call that spawns or pastes (and
    may raise): a check made any earlier would leave more time for its answer to go stale.
    `root_mark` (`adapters.tmux.server.root_mark` of the state root) marks each harness pane as this
    state root's."""

    def __init__(
        self,
        *,
        socket_name: str = "",
        binary: str = "tmux",
        probe_timeout: float = 10.0,
        command_timeout: float = 1800.0,
        env: Mapping[str, str] | None = None,
        runner: TmuxRunner | None = None,
        last_check: Callable[[str, TmuxTarget], None] | None = None,
        root_mark: str = "",
    ) -> None:
        self._root_mark = root_mark  # set on each harness pane: its state root's watchdog ends it, no other
        self._last_check = last_check or (lambda action, target: None)
        self._prefix = ["-L", socket_name] if socket_name else []
        self._runner = runner or ShRunner(binary=binary, env=env)
        self._probe_timeout = probe_timeout
        self._command_timeout = command_timeout

    def session_state(self, target: TmuxTarget) -> SessionState:
        try:
            out = self._read(cmd.session_state(target))
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

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        try:
            rows = self._panes(target)
        except TmuxUnanswered:
            return Probe.unknown()
        except TmuxFailed as exc:
            if _absent(exc):
                return Probe(SessionState.ABSENT, SessionState.ABSENT)
            log.warning("tmux probe of %s failed, state unknown: %s", target, exc)
            return Probe.unknown()
        return probe_of(rows, mark=mark, pane=pane)

    def spawn(self, request: SpawnRequest) -> str:
        if not request.argv:
            raise ValueError(f"no harness command to spawn in {request.target}")
        if not cmd.is_mark(request.mark):
            raise ValueError(f"not a harness mark: {request.mark!r}")
        data = request.prompt.encode()
        if len(data) > MAX_PROMPT_BYTES:
            raise ValueError(f"spawn prompt is {len(data)} bytes; one argument holds at most {MAX_PROMPT_BYTES}")
        make_start_directory(request.cwd)
        prompt_file = write_prompt_file(data)
        try:
            args = cmd.spawn(
                request.target,
                cwd=request.cwd,
                env=request.env,
                prompt_file=str(prompt_file),
                argv=request.argv,
                remain_on_exit=request.remain_on_exit,
                mark=request.mark,
                window=request.window,
                root=self._root_mark,
            )
            self._last_check("spawn", request.target)
            out = self._tmux(args)
        except BaseException:
            prompt_file.unlink(missing_ok=True)  # on success the wrapper in the pane removes it
            raise
        pane_id = out.strip()
        if not cmd.is_pane_id(pane_id):
            raise TmuxFailed("new-session", 0, f"tmux started {request.target} but named no pane: {out!r}")
        return pane_id

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        # both come from the registry or the probe: never into a tmux command unchecked
        if not cmd.is_pane_id(pane) or not cmd.is_mark(mark):
            raise SessionMissing(f"{target}: no proven harness pane to deliver into (pane {pane!r})")
        import uuid  # only a paste needs it: a command that only looks starts without it

        token = uuid.uuid4().hex  # buffer names are ours alone, never derived from the event
        buffers = (f"the-loop-{token}-prompt", f"the-loop-{token}-submit")
        log.debug("delivering %s into %s %s", delivery_id, target, pane)
        try:
            self._paste(target, prompt.encode(), buffers, submit_delay_ms, pane=pane, mark=mark)
        except (TmuxFailed, TmuxUnanswered) as exc:
            self._discard(buffers)
            if isinstance(exc, TmuxFailed) and _absent(exc):
                raise SessionMissing(f"{target} is absent") from exc
            raise

    def submit(self, target: TmuxTarget, *, pane: str, mark: str) -> None:
        if not cmd.is_pane_id(pane) or not cmd.is_mark(mark):
            raise SessionMissing(f"{target}: no proven harness pane to submit in (pane {pane!r})")
        import uuid

        buffer = f"the-loop-{uuid.uuid4().hex}-submit"
        load = ["set-buffer", "-b", buffer, "\r", cmd.SEP]
        try:
            self._guarded(
                target, load, [buffer], [cmd.paste(buffer, bracketed=False, pane_id=pane)], None, pane=pane, mark=mark
            )
        except (TmuxFailed, TmuxUnanswered) as exc:
            self._discard([buffer])
            if isinstance(exc, TmuxFailed) and _absent(exc):
                raise SessionMissing(f"{target} is absent") from exc
            raise

    def clear_dead(self, target: TmuxTarget) -> None:
        try:
            rows = self._panes(target)
        except TmuxFailed as exc:
            if _absent(exc):
                return
            raise
        dead = [row.pane for row in rows if row.dead]
        if dead:
            self._tmux(cmd.kill_dead_panes(dead))

    def kill(self, target: TmuxTarget) -> None:
        self._tmux(["kill-session", "-t", target.exact])

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str, mark: str) -> None:
        """Signal the harness pane's process group (what the agent started goes too): SIGTERM,
        then SIGKILL after the grace period if the pane still runs."""
        row = self._harness_row(target, pane=pane, mark=mark)
        if row is None or row.dead:
            return
        signal_group(row.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_seconds
        while time.monotonic() < deadline:
            time.sleep(_POLL_SECONDS)
            now = self._harness_row(target, pane=pane, mark=mark)
            if now is None or now.dead or now.pid != row.pid:
                return
        signal_group(row.pid, signal.SIGKILL)

    def harness_group(self, target: TmuxTarget, *, pane: str, mark: str) -> str:
        try:
            row = self._harness_row(target, pane=pane, mark=mark)
        except LoopError:
            return ""
        return group_of(row.pid) if row is not None and not row.dead else ""

    def end_group(self, group: str, *, grace_seconds: float) -> bool:
        return end_group(group, grace_seconds=grace_seconds)

    def group_memory(self, group: str) -> int | None:
        return group_memory(group)

    def screen(self, target: TmuxTarget, pane: str, *, lines: int = 20) -> str:
        if not cmd.is_pane_id(pane):
            return ""
        try:
            return self._tmux(cmd.capture(pane, lines), timeout=self._probe_timeout)
        except LoopError:
            return ""

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        flags = ["-r"] if read_only else []
        return self._runner.foreground([*self._prefix, "attach-session", *flags, "-t", target.exact])

    def clients(self, target: TmuxTarget) -> int | None:
        try:
            out = self._read(cmd.clients(target))
        except TmuxUnanswered:
            return None
        except TmuxFailed as exc:
            if _absent(exc):
                return 0
            log.warning("tmux could not say who is attached to %s: %s", target, exc)
            return None
        return len(out.split())

    def _paste(
        self, target: TmuxTarget, data: bytes, buffers: tuple[str, str], submit_delay_ms: int, *, pane: str, mark: str
    ) -> None:
        prompt_buffer, submit_buffer = buffers
        prompt_paste = cmd.paste(prompt_buffer, bracketed=True, pane_id=pane)
        submit_paste = cmd.paste(submit_buffer, bracketed=False, pane_id=pane)
        load = [*cmd.load_buffers(prompt_buffer, submit_buffer), cmd.SEP]
        if submit_delay_ms <= 0:
            self._guarded(target, load, buffers, [prompt_paste, submit_paste], data, pane=pane, mark=mark)
            return
        self._guarded(target, load, buffers, [prompt_paste], data, pane=pane, mark=mark)
        time.sleep(submit_delay_ms / 1000)
        self._guarded(target, [], [submit_buffer], [submit_paste], None, pane=pane, mark=mark)

    def _guarded(
        self,
        target: TmuxTarget,
        before: list[str],
        buffers: Sequence[str],
        pastes: list[str],
        stdin: bytes | None,
        *,
        pane: str,
        mark: str,
    ) -> None:
        args = [*before, *cmd.guarded(target, buffers, pastes, pane_id=pane, mark=mark)]
        self._last_check("paste", target)
        out = self._tmux(args, stdin=stdin)
        if cmd.DEAD_MARKER in out:
            raise SessionMissing(f"pane {pane} is dead, no longer in {target} or no longer the harness's")

    def _discard(self, buffers: Sequence[str]) -> None:
        try:
            self._tmux(cmd.delete_buffers(buffers), timeout=self._probe_timeout)
        except LoopError as exc:
            log.warning("could not delete tmux buffers %s: %s", ", ".join(buffers), exc)

    def _panes(self, target: TmuxTarget) -> list[PaneRow]:
        out = self._read(cmd.panes(target))
        return [row for line in out.splitlines() if (row := PaneRow.parse(line)) is not None]

    def _read(self, args: list[str]) -> str:
        """A read asked again once when the server went away under it (its last session just
        closed): the second client meets no server, or a new one, and says so."""
        try:
            return self._tmux(args, timeout=self._probe_timeout)
        except ServerLost:
            return self._tmux(args, timeout=self._probe_timeout)

    def _harness_row(self, target: TmuxTarget, *, pane: str, mark: str) -> PaneRow | None:
        """The harness's pane, listed from the session itself (a pane moved elsewhere is not it)."""
        try:
            rows = self._panes(target)
        except TmuxFailed as exc:
            if _absent(exc):
                return None
            raise
        return harness_row(rows, mark=mark, pane=pane)

    def _tmux(self, args: list[str], *, timeout: float = 0.0, stdin: bytes | None = None) -> str:
        return self._runner([*self._prefix, *args], timeout=timeout or self._command_timeout, stdin=stdin)


def _absent(exc: TmuxFailed) -> bool:
    return names_missing_target(exc.stderr) or names_no_server(exc.stderr)
