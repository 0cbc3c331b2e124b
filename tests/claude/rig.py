"""Real Claude Code in a private tmux server: spawns and pastes the-loop's way, its hooks recorded."""

from __future__ import annotations

import os
import signal
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from adapters.tmux.adapter import ShTmux
from domain.model import SpawnRequest
from domain.refs import TmuxTarget
from tests.agent_tmux import AgentTmux, end_since, pane_pid, paste
from tests.claude.home import ClaudeHome
from tests.claude.hooks import HookLog
from tests.processes import gone, zombie_status
from tests.tmux_support import wait_for


@dataclass(frozen=True, slots=True)
class ClaudeSession:
    """One Claude process in its own tmux session, spawned the way the-loop spawns it."""

    target: TmuxTarget
    pane: str
    session_id: str
    cwd: Path
    mark: str = ""  # the harness pane's mark, set at spawn


@dataclass
class ClaudeRig:
    """Spawns Claude in tmux through the-loop's own tmux adapter, with hooks recorded per event."""

    binary: Path
    home: ClaudeHome
    tmux: AgentTmux
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
        paste(self.tmux, session, text)

    def adapter(self) -> ShTmux:
        return self.tmux.adapter()

    def crash(self, session: ClaudeSession) -> None:
        """SIGKILL Claude (the pane's process: the spawn wrapper execs it), leaving the dead pane."""
        pid = self._pid(session)
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: gone(pid), what=f"Claude {pid} killed")

    def end(self, session: ClaudeSession) -> None:
        """Close its tmux session (tmux sends Claude SIGHUP) and wait until Claude has exited:
        it rewrites ~/.claude.json on its way out, which would race the next test's trust."""
        pid = self._pid(session) if not self.pane_dead(session) else 0
        self.tmux.run("kill-session", "-t", session.target.exact, check=False)
        if pid:
            wait_for(lambda: gone(pid), what=f"Claude {pid} exited")

    def close(self, since: int = 0) -> None:
        """End the sessions spawned since the `since`th (all by default)."""
        end_since(self.spawned, self.end, since)

    def pane_dead(self, session: ClaudeSession) -> bool:
        return self._pane(session, "#{pane_dead}") == "1"

    def exit_status(self, session: ClaudeSession) -> int:
        """Claude's exit status, from tmux (remain-on-exit keeps the dead pane) or, where tmux
        3.3 marked the pane dead but never reaped the process, from the zombie's /proc entry."""
        pid = self._pid(session)
        return int(wait_for(lambda: self._pane(session, "#{pane_dead_status}") or zombie_status(pid), what="a status"))

    def _pane(self, session: ClaudeSession, fmt: str) -> str:
        return self.tmux.run("display-message", "-p", "-t", session.pane, fmt, check=False).strip()

    def _pid(self, session: ClaudeSession) -> int:
        return pane_pid(self.tmux, session.pane)
