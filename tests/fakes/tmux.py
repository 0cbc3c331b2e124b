"""A stateful tmux double: which sessions exist, which panes are dead, who is attached, and
whether an operator opened a window of their own."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from domain.errors import DuplicateSession, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import SessionState, SpawnRequest
from domain.ports import TmuxPort
from domain.refs import TmuxTarget

ExitRule = Callable[[tuple[str, ...]], bool]


@dataclass
class FakeClient:
    read_only: bool


@dataclass
class FakeSession:
    name: str
    argv: tuple[str, ...] = ("sh",)
    cwd: str = "/"
    prompt: str = ""  # the spawn prompt: the harness's last argument
    pane_dead: bool = False
    remain_on_exit: bool = True
    clients: list[FakeClient] = field(default_factory=list)
    received: list[str] = field(default_factory=list)  # prompts pasted, in order
    submits: int = 0
    env: tuple[tuple[str, str], ...] = ()
    pane_id: str = ""  # the harness's pane
    operator_pane: str = ""  # a window an operator opened: once set, the session's active pane
    operator_dead: bool = False
    operator_received: list[str] = field(default_factory=list)

    @property
    def all_dead(self) -> bool:
        return self.pane_dead and (not self.operator_pane or self.operator_dead)


def resume_fails_unless_known(known_ids: Iterable[str]) -> ExitRule:
    """Like claude (and tests/harness_sim.py): `--resume X` exits 1 at once for an unknown X."""
    known = frozenset(known_ids)

    def exits(argv: tuple[str, ...]) -> bool:
        return any(flag == "--resume" and value not in known for flag, value in pairwise(argv))

    return exits


class FakeTmux(TmuxPort):
    """Models real tmux closely enough that the contract suite passes against both."""

    def __init__(self) -> None:
        self.sessions: dict[str, FakeSession] = {}
        self.unresponsive = False  # tmux answers nothing at all
        self.unresponsive_targets: set[str] = set()  # only calls naming these hang
        self.kill_fails: set[str] = set()
        self.exit_on_spawn: ExitRule | None = None
        self.race_on_spawn: dict[str, bool] = {}  # name -> the occupant is dead
        self.calls: list[tuple[str, str]] = []
        self.buffers: dict[str, str] = {}
        self._next_buffer = 0
        self._next_pane = 0

    # -- planting state -------------------------------------------------------------------

    def add_session(
        self,
        name: str,
        *,
        dead: bool = False,
        argv: tuple[str, ...] = ("sh",),
        remain_on_exit: bool = True,
    ) -> FakeSession:
        session = FakeSession(
            name=name, argv=argv, pane_dead=dead, remain_on_exit=remain_on_exit, pane_id=self._new_pane()
        )
        self.sessions[name] = session
        return session

    def open_window(self, name: str) -> str:
        """An operator attaches and runs `tmux new-window`: a live shell, now the active pane."""
        session = self.sessions[name]
        session.operator_pane, session.operator_dead = self._new_pane(), False
        return session.operator_pane

    def occupy_on_next_spawn(self, name: str, *, dead: bool = False) -> None:
        """An occupant appears just before the next spawn of `name` (the probe missed it)."""
        self.race_on_spawn[name] = dead

    def exit_harness(self, name: str) -> None:
        """The harness in `name` exits by itself."""
        self._pane_exited(self.sessions[name])

    # -- the port ---------------------------------------------------------------------------

    def session_state(self, target: TmuxTarget) -> SessionState:
        try:
            self._call("session_state", target.name)
        except TmuxUnanswered:
            return SessionState.UNKNOWN
        session = self.sessions.get(target.name)
        if session is None:
            return SessionState.ABSENT
        return SessionState.DEAD if session.all_dead else SessionState.LIVE

    def spawn(self, request: SpawnRequest) -> str:
        name = request.target.name
        self._call("spawn", name)
        if name in self.race_on_spawn and name not in self.sessions:
            self.add_session(name, dead=self.race_on_spawn.pop(name))
        if name in self.sessions:
            raise DuplicateSession("new-session", 1, f"duplicate session: {name}\n")
        session = FakeSession(
            name=name,
            argv=request.argv,
            cwd=request.cwd,
            prompt=request.prompt,
            remain_on_exit=request.remain_on_exit,
            env=request.env,
            pane_id=self._new_pane(),
        )
        self.sessions[name] = session
        if self.exit_on_spawn is not None and self.exit_on_spawn(request.argv):
            self._pane_exited(session)
        return session.pane_id

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, submit_delay_ms: int = 0, pane: str = ""
    ) -> None:
        self._call("deliver", target.name)
        # read-only clients never matter: a paste is not a keystroke of any client
        prompt_buffer, submit_buffer = self._load(prompt), self._load("\r")
        try:
            session = self.sessions.get(target.name)
            if session is None:
                raise SessionMissing(f"{target.name}: absent")
            self._paste(session, prompt, pane or self._active(session))
        finally:
            del self.buffers[prompt_buffer], self.buffers[submit_buffer]

    def kill(self, target: TmuxTarget) -> None:
        name = target.name
        self._call("kill", name)
        if name not in self.sessions:
            raise TmuxFailed("kill-session", 1, f"can't find session: {name}\n")
        if name in self.kill_fails:
            raise TmuxFailed("kill-session", 1, f"kill-session failed: {name}\n")
        del self.sessions[name]

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str = "") -> None:
        self._call("terminate_harness", target.name)
        session = self.sessions.get(target.name)
        if session is None:
            return
        if not pane and session.operator_pane:
            session.operator_dead = True  # every pane's process is signalled, the operator's too
        if pane in ("", session.pane_id) and not session.pane_dead:
            self._pane_exited(session)

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        self._call("attach", target.name)
        session = self.sessions.get(target.name)
        if session is None:
            return 1
        session.clients.append(FakeClient(read_only=read_only))
        return 0

    # -- internals --------------------------------------------------------------------------

    def _call(self, operation: str, name: str) -> None:
        self.calls.append((operation, name))
        if self.unresponsive or name in self.unresponsive_targets:
            raise TmuxUnanswered(f"tmux did not answer {operation} {name}")

    def _load(self, data: str) -> str:
        self._next_buffer += 1
        name = f"loop-buffer-{self._next_buffer}"
        self.buffers[name] = data
        return name

    def _new_pane(self) -> str:
        self._next_pane += 1
        return f"%{self._next_pane}"

    def _active(self, session: FakeSession) -> str:
        return session.operator_pane or session.pane_id

    def _paste(self, session: FakeSession, prompt: str, pane: str) -> None:
        """Into `pane` if it is a live pane of `session` (the guard and the paste are one)."""
        if pane == session.pane_id and not session.pane_dead:
            session.received.append(prompt)
            session.submits += 1
        elif pane == session.operator_pane and not session.operator_dead:
            session.operator_received.append(prompt)
        else:
            raise SessionMissing(f"{session.name}: pane {pane} is dead or not this session's")

    def _pane_exited(self, session: FakeSession) -> None:
        # without remain-on-exit the pane closes; the session goes with its last pane (a pane
        # that is gone reads like a dead one here: nothing is pasted into it again)
        session.pane_dead = True
        if not session.remain_on_exit and (not session.operator_pane or session.operator_dead):
            del self.sessions[session.name]
