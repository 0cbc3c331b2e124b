"""Real Claude Code in tmux: a server carrying its environment, and spawns and pastes the-loop's way."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from adapters.tmux.adapter import ShTmux
from adapters.tmux.screen import ShTmuxScreen
from domain.model import SpawnRequest
from domain.refs import TmuxTarget
from tests.claude.home import ClaudeHome
from tests.claude.hooks import HookLog
from tests.tmux_support import RealTmux, wait_for


@dataclass(frozen=True, slots=True)
class ClaudeSession:
    """One Claude process in its own tmux session, spawned the way the-loop spawns it."""

    target: TmuxTarget
    pane: str
    session_id: str
    cwd: Path
    mark: str = ""  # the harness pane's mark, set at spawn


@dataclass
class ClaudeTmux(RealTmux):
    """A private tmux server started with Claude's environment: panes inherit the server's
    environment, not the client's."""

    server_env: dict[str, str] = field(default_factory=dict)

    def start(self, env: dict[str, str]) -> None:
        self.server_env = env
        conf = self.tmpdir / "tmux.conf"
        # stays up with no session; panes wide enough that Claude's lines are not wrapped
        conf.write_text("set -g exit-empty off\nset -g default-size 160x50\n", encoding="utf-8")
        subprocess.run(
            ["tmux", "-L", self.socket, "-f", str(conf), "start-server"],
            env={**env, **self.env},
            check=True,
            timeout=10,
        )

    def global_env(self) -> dict[str, str]:
        rows = self.run("show-environment", "-g").splitlines()
        return dict(row.split("=", 1) for row in rows if "=" in row and not row.startswith("-"))

    def screen(self, session: ClaudeSession) -> str:
        return ShTmuxScreen(socket_name=self.socket, env=self.env).text(session.target)


@dataclass
class ClaudeRig:
    """Spawns Claude in tmux through the-loop's own tmux adapter, with hooks recorded per event."""

    binary: Path
    home: ClaudeHome
    tmux: ClaudeTmux
    hooks: HookLog
    root: Path  # folders to spawn in: `trusted/` was recorded in the home before any Claude ran
    spawned: list[ClaudeSession] = field(default_factory=list)

    @property
    def trusted_root(self) -> Path:
        return self.root / "trusted"

    def folder(self, *, trusted: bool = True) -> Path:
        """A new empty folder inside the trusted root, or outside any trusted folder."""
        folder = (self.trusted_root if trusted else self.root / "untrusted") / uuid.uuid4().hex[:8]
        folder.mkdir(parents=True)
        return folder

    def spawn(self, cwd: Path, *args: str, prompt: str = "", session_id: str = "") -> ClaudeSession:
        """`claude --settings <hooks> [--session-id ID] ARGS PROMPT` in a new tmux session, as
        the-loop's spawn does it (the prompt reaches Claude as its last argument)."""
        session_id = session_id or str(uuid.uuid4())
        target = TmuxTarget(f"loop-claude-{uuid.uuid4().hex[:8]}")
        ids = [] if "--resume" in args else ["--session-id", session_id]
        argv = (str(self.binary), "--settings", str(self.hooks.settings), *ids, *args)
        mark = uuid.uuid4().hex
        request = SpawnRequest(target=target, argv=argv, cwd=str(cwd), prompt=prompt, mark=mark, remain_on_exit=True)
        session = ClaudeSession(target, self.adapter().spawn(request), session_id, cwd, mark)
        self.spawned.append(session)
        return session

    def paste(self, session: ClaudeSession, text: str) -> None:
        """The-loop's delivery: a bracketed paste of `text`, then a carriage return unbracketed."""
        delivery = f"fact-{uuid.uuid4().hex[:6]}"
        self.adapter().deliver(session.target, text, delivery_id=delivery, pane=session.pane, mark=session.mark)

    def adapter(self) -> ShTmux:
        return self.tmux.adapter()

    def crash(self, session: ClaudeSession) -> None:
        """SIGKILL Claude (the pane's process: the spawn wrapper execs it), leaving the dead pane."""
        pid = self._pid(session)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: _gone(pid), what=f"Claude {pid} killed")

    def end(self, session: ClaudeSession) -> None:
        """Close its tmux session (tmux sends Claude SIGHUP) and wait until Claude has exited:
        it rewrites ~/.claude.json on its way out, which would race the next test's trust."""
        pid = self._pid(session) if not self.pane_dead(session) else 0
        self.tmux.run("kill-session", "-t", session.target.exact, check=False)
        if pid:
            wait_for(lambda: _gone(pid), what=f"Claude {pid} exited")

    def close(self, since: int = 0) -> None:
        """End the sessions spawned since the `since`th (all by default)."""
        for session in self.spawned[since:]:
            self.end(session)
        del self.spawned[since:]

    def pane_dead(self, session: ClaudeSession) -> bool:
        return self._pane(session, "#{pane_dead}") == "1"

    def exit_status(self, session: ClaudeSession) -> int:
        """Claude's exit status, from tmux (remain-on-exit keeps the dead pane) or, where tmux
        3.3 marked the pane dead but never reaped the process, from the zombie's /proc entry."""
        pid = self._pid(session)
        return int(wait_for(lambda: self._pane(session, "#{pane_dead_status}") or _zombie_status(pid), what="a status"))

    def _pane(self, session: ClaudeSession, fmt: str) -> str:
        return self.tmux.run("display-message", "-p", "-t", session.pane, fmt, check=False).strip()

    def _pid(self, session: ClaudeSession) -> int:
        return int(self._pane(session, "#{pane_pid}") or 0)


def _zombie_status(pid: int) -> str:
    """The exit status of an unreaped process ('' while it runs or once reaped): the last
    field of /proc/PID/stat holds it as waitpid(2) would report it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except OSError:
        return ""
    return str(int(fields[-1]) >> 8) if fields[0] == "Z" else ""


def _gone(pid: int) -> bool:
    """The process has exited (a zombie counts: this container's init may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")
