"""A stateful tmux double: which sessions exist, which panes are dead, who is attached."""

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

    # -- planting state -------------------------------------------------------------------

    def add_session(
        self,
        name: str,
        *,
        dead: bool = False,
        argv: tuple[str, ...] = ("sh",),
        remain_on_exit: bool = True,
    ) -> FakeSession:
        session = FakeSession(name=name, argv=argv, pane_dead=dead, remain_on_exit=remain_on_exit)
        self.sessions[name] = session
        return session

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
        return SessionState.DEAD if session.pane_dead else SessionState.LIVE

    def spawn(self, request: SpawnRequest) -> None:
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
        )
        self.sessions[name] = session
        if self.exit_on_spawn is not None and self.exit_on_spawn(request.argv):
            self._pane_exited(session)

    def deliver(self, target: TmuxTarget, prompt: str, *, delivery_id: str, submit_delay_ms: int = 0) -> None:
        self._call("deliver", target.name)
        # read-only clients never matter: a paste is not a keystroke of any client
        prompt_buffer, submit_buffer = self._load(prompt), self._load("\r")
        try:
            session = self.sessions.get(target.name)
            if session is None or session.pane_dead:
                raise SessionMissing(f"{target.name}: absent or dead")
            session.received.append(prompt)
            session.submits += 1
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

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float) -> None:
        self._call("terminate_harness", target.name)
        session = self.sessions.get(target.name)
        if session is not None and not session.pane_dead:
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

    def _pane_exited(self, session: FakeSession) -> None:
        if session.remain_on_exit:
            session.pane_dead = True
        else:
            del self.sessions[session.name]
