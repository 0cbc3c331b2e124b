"""The agent watchdog of one state root, a process apart from the daemon (`python -m adapters.watchdog`).
Every few tenths of a second it reads the deadline the daemon's last renewal recorded; once
that has passed (the daemon is down, paused or cut off from the database) it ends every agent the
daemon started on this host's tmux server — SIGTERM to the harness pane's process group, SIGKILL
after the grace — and keeps ending any that appears, until a renewal sets a later deadline. It leaves
once the daemon is gone, the deadline has passed and no agent runs. One per state root (a lock).

A deadline recorded for another generation (another tmux server, settings or code version) means a
new daemon replaced the one it served: it lets go of the lock for the new generation's watchdog and
leaves — ending first the agents of its own server when the new daemon watches another one (no daemon
renews them any more: their items are the new daemon's, which starts its own)."""

from __future__ import annotations

import argparse
import contextlib
import enum
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.clock import SystemClock
from adapters.eventlog.rotation import DEFAULT_KEEP, DEFAULT_MAX_BYTES, Rotation
from adapters.eventlog.writer import JsonlEventLog
from adapters.files.atomic import write_whole
from adapters.tmux import commands as cmd
from adapters.tmux.answers import names_no_server
from adapters.tmux.local import signal_group
from adapters.tmux.runner import ShRunner
from adapters.tmux.server import root_mark
from adapters.watchdog import deadline as files
from adapters.watchdog.deadline import Guards
from adapters.watchdog.lock import PID_NAME, locked
from domain.cluster import agents_may_run
from domain.errors import TmuxFailed, TmuxUnanswered
from domain.events import Event, Level
from domain.policy import Decision

_POLL = 0.05
_PANES = f"#{{session_name}} #{{pane_id}} #{{pane_dead}} #{{pane_pid}} #{{{cmd.MARK_OPTION}}} #{{{cmd.ROOT_OPTION}}}"


@dataclass(frozen=True, slots=True)
class Agent:
    session: str
    pane: str
    pid: int


class Look(enum.Enum):
    WATCH = "watch"  # look again
    LEAVE = "leave"  # nothing left to watch
    SUPERSEDED = "superseded"  # the deadline is another generation's: its own watchdog takes over


class Watchdog:
    def __init__(self, guards: Guards, *, source: str = "watchdog") -> None:
        self.guards = guards
        self._file = Path(guards.state_root) / files.FILE_NAME
        self._clock = SystemClock()
        rotation = Rotation(guards.log_max_bytes, guards.log_keep)
        self._events = JsonlEventLog(Path(guards.events), clock=self._clock.now, rotation=rotation)
        self._source = source
        self._prefix = ["-L", guards.socket] if guards.socket else []
        self._runner = ShRunner(env={"TMUX_TMPDIR": guards.tmux_tmpdir} if guards.tmux_tmpdir else None)
        self._boot = files.boot_id()
        self._root_mark = root_mark(guards.state_root)
        self._unanswered_said = False

    def tick(self) -> Look:
        """One look."""
        armed = files.read(self._file)
        if armed is None:
            return Look.LEAVE  # nothing recorded (or removed): no daemon asks for a watch
        if armed.guards != self.guards:
            return Look.SUPERSEDED
        deadline = armed.deadline if armed.boot == self._boot else None  # a deadline of another boot means nothing
        may = agents_may_run(deadline=deadline, now=self._clock.monotonic())
        if may.choice:
            return Look.WATCH
        running = self._agents()
        if running:
            self._end(running, may, late=self._clock.monotonic() - (deadline or 0.0))
        return Look.WATCH if _alive(armed.pid) or running else Look.LEAVE

    def superseded(self) -> None:
        """Ends this server's agents when the deadline now recorded is for another server's."""
        armed = files.read(self._file)
        if armed is None or armed.guards is None or armed.guards.same_server(self.guards):
            return  # the same server (or unknown): its agents are the new daemon's
        running = self._agents()
        if running:
            why = Decision(False, "a daemon watching another tmux server replaced the one that started them")
            self._end(running, why, late=0.0)

    def end_now(self, why: Decision[bool], *, late: float) -> int:
        """Ends every agent on this server now; how many there were."""
        running = self._agents()
        if running:
            self._end(running, why, late=late)
        return len(running)

    def _agents(self) -> list[Agent]:
        """Live panes the daemon marked as its harnesses', on this host's server: marked as this state
        root's. Another root's daemon (another state root on a shared server) renews its own; a pane
        marked before panes named their root is not ended here, as it may be another root's."""
        try:
            out = self._runner([*self._prefix, "list-panes", "-a", "-F", _PANES], timeout=5.0)
        except TmuxFailed as error:
            return [] if names_no_server(error.stderr) else self._unanswered(error)
        except TmuxUnanswered as error:
            return self._unanswered(error)
        self._unanswered_said = False
        found = []
        for line in out.splitlines():
            fields = line.split(" ")
            if len(fields) != 6 or fields[2] != "0" or not fields[3].isdigit() or fields[5] != self._root_mark:
                continue
            if fields[4] and cmd.is_mark(fields[4]):
                found.append(Agent(fields[0], fields[1], int(fields[3])))
        return found

    def _unanswered(self, error: Exception) -> list[Agent]:
        if not self._unanswered_said:  # once per spell: it asks again at every look
            self._unanswered_said = True
            self._events.emit(Event.CLUSTER_AGENT_ENDED, level=Level.ERROR, source=self._source, ended=False,
                              cause=f"tmux did not list the panes: {error}")  # fmt: skip
        return []

    def _end(self, agents: Sequence[Agent], why: Decision[bool], *, late: float) -> None:
        for agent in agents:
            signal_group(agent.pid, signal.SIGTERM)
        until = time.monotonic() + self.guards.grace
        left = list(agents)
        while left and time.monotonic() < until:
            time.sleep(_POLL)
            still = {(a.pane, a.pid) for a in self._agents()}
            left = [a for a in left if (a.pane, a.pid) in still]
        for agent in left:
            signal_group(agent.pid, signal.SIGKILL)
        for agent in agents:
            self._events.emit(
                Event.CLUSTER_AGENT_ENDED, level=Level.WARNING, source=self._source, target=agent.session,
                pane=agent.pane, ended=True, killed=agent in left, late_seconds=round(late, 3), reason=why.reason,
            )  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m adapters.watchdog")
    parser.add_argument("--state-root", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--socket", default="")
    parser.add_argument("--tmux-tmpdir", default="")
    parser.add_argument("--code-version", default="")
    parser.add_argument("--grace", type=float, default=1.0)
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--log-max-bytes", type=int, default=DEFAULT_MAX_BYTES)  # eventLog.maxBytes
    parser.add_argument("--log-keep", type=int, default=DEFAULT_KEEP)  # eventLog.keep
    args = parser.parse_args(argv)
    guards = Guards(
        state_root=args.state_root, events=args.events, socket=args.socket, tmux_tmpdir=args.tmux_tmpdir,
        version=args.code_version, grace=args.grace, every=args.every, log_max_bytes=args.log_max_bytes,
        log_keep=args.log_keep,
    )  # fmt: skip
    root = Path(args.state_root)
    lock = locked(root, guards.argv())
    if lock is None:
        return 0
    watchdog = Watchdog(guards)
    look = Look.WATCH
    with contextlib.suppress(KeyboardInterrupt):
        with lock:
            write_whole(root / PID_NAME, f"{os.getpid()}\n")  # read by the next one and `holder`
            while (look := watchdog.tick()) is Look.WATCH:
                time.sleep(guards.every)
        if look is Look.SUPERSEDED:  # the lock let go first: the new generation's watchdog starts meanwhile
            watchdog.superseded()
    return 0
