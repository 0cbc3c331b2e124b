"""A stateful tmux double: sessions and their panes (which are dead, which carries the harness's
mark), who is attached, and windows an operator opened."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise

from domain.errors import DuplicateSession, SessionMissing, TmuxFailed, TmuxUnanswered
from domain.model import Probe, SessionState, SpawnRequest
from domain.ports import TmuxPort
from domain.refs import TmuxTarget

ExitRule = Callable[[tuple[str, ...]], bool]


@dataclass
class FakeClient:
    read_only: bool


@dataclass
class FakePane:
    id: str
    argv: tuple[str, ...] = ("sh",)
    cwd: str = "/"
    prompt: str = ""  # a spawn prompt: the program's last argument
    env: tuple[tuple[str, str], ...] = ()
    mark: str = ""
    dead: bool = False
    operator: bool = False  # a window an operator opened
    received: list[str] = field(default_factory=list)  # prompts pasted, in order
    submits: int = 0
    screen: str = ""
    signals: int = 0  # times its process group was signalled
    typed: str = ""  # a paste whose Enter became a newline, still in the input box
    redraws: list[str] = field(default_factory=list)  # what reads show before `screen`, one a read: a TUI mid-redraw


@dataclass
class FakeSession:
    name: str
    panes: list[FakePane]
    remain_on_exit: bool = True
    clients: list[FakeClient] = field(default_factory=list)
    harness_id: str = ""  # the pane the latest spawn started

    @property
    def harness(self) -> FakePane | None:
        return next((p for p in self.panes if p.id == self.harness_id), None)

    @property
    def operator(self) -> FakePane | None:
        return next((p for p in self.panes if p.operator), None)

    @property
    def all_dead(self) -> bool:
        return all(p.dead for p in self.panes)

    # the harness pane's fields, as most tests read them
    @property
    def received(self) -> list[str]:
        return self.harness.received if self.harness else []

    @property
    def submits(self) -> int:
        return self.harness.submits if self.harness else 0

    @property
    def prompt(self) -> str:
        return self.harness.prompt if self.harness else ""

    @property
    def argv(self) -> tuple[str, ...]:
        return self.harness.argv if self.harness else ()

    @property
    def cwd(self) -> str:
        return self.harness.cwd if self.harness else ""

    @property
    def env(self) -> tuple[tuple[str, str], ...]:
        return self.harness.env if self.harness else ()

    @property
    def pane_id(self) -> str:
        return self.harness_id

    @property
    def pane_dead(self) -> bool:
        return self.harness is None or self.harness.dead

    @property
    def operator_received(self) -> list[str]:
        return self.operator.received if self.operator else []

    @property
    def operator_dead(self) -> bool:
        return self.operator is not None and self.operator.dead

    @property
    def operator_pane(self) -> str:
        return self.operator.id if self.operator else ""


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
        self.kill_fails: set[str] = set()  # kill-session and kill-pane fail in these sessions
        self.swallowed_enters = 0  # the next Enters become newlines: the paste stays in the box
        self.outliving: set[str] = set()  # groups of killed sessions that left a process (--outlive)
        self.memory: dict[str, int] = {}  # a harness pane id -> the resident memory its group reports
        self.exit_on_spawn: ExitRule | None = None
        self.race_on_spawn: dict[str, bool] = {}  # name -> the occupant is dead
        self.calls: list[tuple[str, str]] = []
        self.buffers: dict[str, str] = {}
        self.on_deliver: Callable[[str], None] | None = None  # runs as a paste lands (races)
        # what a harness in a pane sees: ("spawn", pane) with its argv prompt, ("paste", pane) per paste
        self.listeners: list[Callable[[str, FakePane, str], None]] = []
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
        mark: str = "",
    ) -> FakeSession:
        """A session someone else started: its one pane carries no mark unless told."""
        pane = FakePane(self._new_pane(), argv=argv, dead=dead, mark=mark)
        session = FakeSession(name=name, panes=[pane], remain_on_exit=remain_on_exit, harness_id=pane.id)
        self.sessions[name] = session
        return session

    def open_window(self, name: str) -> str:
        """An operator attaches and runs `tmux new-window`: a live shell, now the active pane."""
        pane = FakePane(self._new_pane(), operator=True)
        self.sessions[name].panes.append(pane)
        return pane.id

    def occupy_on_next_spawn(self, name: str, *, dead: bool = False) -> None:
        """An occupant appears just before the next spawn of `name` (the probe missed it)."""
        self.race_on_spawn[name] = dead

    def exit_harness(self, name: str) -> None:
        """The harness in `name` exits by itself."""
        session = self.sessions[name]
        if session.harness is not None:
            self._pane_exited(session, session.harness)

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

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        try:
            self._call("probe", target.name)
        except TmuxUnanswered:
            return Probe.unknown()
        session = self.sessions.get(target.name)
        if session is None:
            return Probe(SessionState.ABSENT, SessionState.ABSENT)
        state = SessionState.DEAD if session.all_dead else SessionState.LIVE
        found = self._harness(session, mark=mark, pane=pane)
        if found is None:
            return Probe(state, SessionState.ABSENT, others_live=state is SessionState.LIVE)
        others = any(not p.dead for p in session.panes if p is not found)
        harness = SessionState.DEAD if found.dead else SessionState.LIVE
        return Probe(state, harness, found.id, others_live=others)

    def spawn(self, request: SpawnRequest) -> str:
        name = request.target.name
        self._call("spawn", name)
        if name in self.race_on_spawn and name not in self.sessions:
            self.add_session(name, dead=self.race_on_spawn.pop(name))
        pane = FakePane(
            self._new_pane(),
            argv=request.argv,
            cwd=request.cwd,
            prompt=request.prompt,
            env=request.env,
            mark=request.mark,
        )
        if request.window:
            session = self.sessions.get(name)
            if session is None:
                raise TmuxFailed("new-window", 1, f"can't find session: {name}\n")
            session.panes.append(pane)
        else:
            if name in self.sessions:
                raise DuplicateSession("new-session", 1, f"duplicate session: {name}\n")
            session = FakeSession(name=name, panes=[pane], remain_on_exit=request.remain_on_exit)
            self.sessions[name] = session
        session.harness_id = pane.id
        if self.exit_on_spawn is not None and self.exit_on_spawn(request.argv):
            self._pane_exited(session, pane)
        else:
            self._tell("spawn", pane, request.prompt)
        return pane.id

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        self._call("deliver", target.name)
        if not pane.startswith("%"):
            raise SessionMissing(f"{target.name}: no proven harness pane to deliver into")
        # read-only clients never matter: a paste is not a keystroke of any client
        prompt_buffer, submit_buffer = self._load(prompt), self._load("\r")
        try:
            session = self.sessions.get(target.name)
            into = next((p for p in session.panes if p.id == pane), None) if session else None
            if into is None or into.dead or into.mark != mark:
                raise SessionMissing(f"{target.name}: pane {pane} is dead, gone or not the harness's")
            into.received.append(prompt)
            into.submits += 1
            if self.swallowed_enters > 0:  # its Enter became a newline: the text waits in the box
                self.swallowed_enters -= 1
                into.typed = prompt
                into.screen = f"{into.screen}\n{'─' * 40}\n > {prompt}\n"
                return
            self._tell("paste", into, prompt)
            if self.on_deliver is not None:
                self.on_deliver(prompt)
        finally:
            del self.buffers[prompt_buffer], self.buffers[submit_buffer]

    def clear_dead(self, target: TmuxTarget) -> None:
        name = target.name
        self._call("clear_dead", name)
        session = self.sessions.get(name)
        if session is None or name in self.kill_fails:
            return
        session.panes = [p for p in session.panes if not p.dead]
        if not session.panes:
            del self.sessions[name]

    def kill(self, target: TmuxTarget) -> None:
        name = target.name
        self._call("kill", name)
        if name not in self.sessions:
            raise TmuxFailed("kill-session", 1, f"can't find session: {name}\n")
        if name in self.kill_fails:
            raise TmuxFailed("kill-session", 1, f"kill-session failed: {name}\n")
        self.outliving |= {f"group-{p.id}" for p in self.sessions[name].panes if not p.dead and "--outlive" in p.argv}
        del self.sessions[name]

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str, mark: str) -> None:
        self._call("terminate_harness", target.name)
        session = self.sessions.get(target.name)
        if session is None:
            return
        found = self._harness(session, mark=mark, pane=pane)
        if found is not None and not found.dead:
            found.signals += 1
            self._pane_exited(session, found)

    def submit(self, target: TmuxTarget, *, pane: str, mark: str) -> None:
        self._call("submit", target.name)
        session = self.sessions.get(target.name)
        into = next((p for p in session.panes if p.id == pane), None) if session else None
        if into is None or into.dead or into.mark != mark:
            raise SessionMissing(f"{target.name}: pane {pane} is dead, gone or not the harness's")
        into.submits += 1
        if not into.typed or self.swallowed_enters > 0:
            self.swallowed_enters -= 1 if into.typed else 0
            return
        typed, into.typed = into.typed, ""
        into.screen = into.screen.rsplit(f"\n{'─' * 40}\n", 1)[0] + f"\n > {typed}\n{'─' * 40}\n > \n"
        self._tell("paste", into, typed)

    def harness_group(self, target: TmuxTarget, *, pane: str, mark: str) -> str:
        session = self.sessions.get(target.name)
        found = self._harness(session, mark=mark, pane=pane) if session is not None else None
        return f"group-{found.id}" if found is not None and not found.dead else ""

    def group_memory(self, group: str) -> int | None:
        """What `memory` says of the group's harness pane (`group-%N`), while it lives."""
        pane = group.removeprefix("group-")
        alive = any(p.id == pane and not p.dead for s in self.sessions.values() for p in s.panes)
        return self.memory.get(pane) if alive else None

    def end_group(self, group: str, *, grace_seconds: float) -> bool:
        """What outlives a pane: the group of a harness started with `--outlive` (the simulator's
        child ignoring SIGHUP), once its session was killed."""
        self._call("end_group", group)
        if group not in self.outliving:
            return False
        self.outliving.discard(group)
        return True

    def screen(self, target: TmuxTarget, pane: str, *, lines: int = 20) -> str:
        session = self.sessions.get(target.name)
        found = next((p for p in session.panes if p.id == pane), None) if session else None
        if found is None:
            return ""
        shown = found.redraws.pop(0) if found.redraws else found.screen
        return "\n".join(shown.splitlines()[-lines:])

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        self._call("attach", target.name)
        session = self.sessions.get(target.name)
        if session is None:
            return 1
        session.clients.append(FakeClient(read_only=read_only))
        return 0

    def clients(self, target: TmuxTarget) -> int | None:
        if self.unresponsive or target.name in self.unresponsive_targets:
            return None
        session = self.sessions.get(target.name)
        return len(session.clients) if session is not None else 0

    # -- internals --------------------------------------------------------------------------

    def _call(self, operation: str, name: str) -> None:
        self.calls.append((operation, name))
        if self.unresponsive or name in self.unresponsive_targets:
            raise TmuxUnanswered(f"tmux did not answer {operation} {name}")

    def _tell(self, what: str, pane: FakePane, text: str) -> None:
        for listener in self.listeners:
            listener(what, pane, text)

    @staticmethod
    def _harness(session: FakeSession, *, mark: str, pane: str) -> FakePane | None:
        if mark:
            return next((p for p in session.panes if p.mark == mark), None)
        return next((p for p in session.panes if pane and p.id == pane and not p.mark), None)

    def _load(self, data: str) -> str:
        self._next_buffer += 1
        name = f"loop-buffer-{self._next_buffer}"
        self.buffers[name] = data
        return name

    def _new_pane(self) -> str:
        self._next_pane += 1
        return f"%{self._next_pane}"

    def _pane_exited(self, session: FakeSession, pane: FakePane) -> None:
        # without remain-on-exit the pane closes; the session goes with its last pane
        pane.dead = True
        if not session.remain_on_exit:
            session.panes.remove(pane)
            if not session.panes:
                del self.sessions[session.name]
