"""The agent watchdog of one state root, a process apart from the daemon (`python -m adapters.watchdog`).
Every few tenths of a second it reads the deadline the daemon's last renewal recorded; once
that has passed (the daemon is down, paused or cut off from the database) it ends every agent the
daemon started on this host's tmux server — SIGTERM to the harness pane's process group, SIGKILL
after the grace — and keeps ending any that appears, until a renewal sets a later deadline. It leaves
once the daemon is gone, the deadline has passed and no agent runs. One per state root (a lock)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from adapters.clock import SystemClock
from adapters.eventlog.rotation import DEFAULT_KEEP, DEFAULT_MAX_BYTES, Rotation
from adapters.eventlog.writer import JsonlEventLog
from adapters.tmux import commands as cmd
from adapters.tmux.answers import names_no_server
from adapters.tmux.local import signal_group
from adapters.tmux.runner import ShRunner
from adapters.watchdog import deadline as files
from adapters.watchdog.lock import locked
from domain.cluster import agents_may_run
from domain.errors import TmuxFailed, TmuxUnanswered
from domain.events import Event, Level
from domain.policy import Decision

_POLL = 0.05
_PANES = f"#{{session_name}} #{{pane_id}} #{{pane_dead}} #{{pane_pid}} #{{{cmd.MARK_OPTION}}}"


@dataclass(frozen=True, slots=True)
class Agent:
    session: str
    pane: str
    pid: int


class Watchdog:
    def __init__(
        self, *, state_root: Path, events: Path, socket: str, grace: float, rotation: Rotation | None = None
    ) -> None:
        self._file = state_root / files.FILE_NAME
        self._clock = SystemClock()
        self._events = JsonlEventLog(events, clock=self._clock.now, rotation=rotation)
        self._prefix = ["-L", socket] if socket else []
        self._runner = ShRunner()
        self._grace = grace
        self._boot = files.boot_id()
        self._unanswered_said = False

    def tick(self) -> bool:
        """One look; False once there is nothing left to watch."""
        armed = files.read(self._file)
        if armed is None:
            return False  # nothing recorded (or removed): no daemon asks for a watch
        deadline = armed.deadline if armed.boot == self._boot else None  # a deadline of another boot means nothing
        may = agents_may_run(deadline=deadline, now=self._clock.monotonic())
        if may.choice:
            return True
        running = self._agents()
        if running:
            self._end(running, may, late=self._clock.monotonic() - (deadline or 0.0))
        return _alive(armed.pid) or bool(running)

    def _agents(self) -> list[Agent]:
        """Live panes the daemon marked as its harnesses', on this host's server."""
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
            if len(fields) == 5 and fields[2] == "0" and fields[3].isdigit() and fields[4] and cmd.is_mark(fields[4]):
                found.append(Agent(fields[0], fields[1], int(fields[3])))
        return found

    def _unanswered(self, error: Exception) -> list[Agent]:
        if not self._unanswered_said:  # once per spell: it asks again at every look
            self._unanswered_said = True
            self._events.emit(Event.CLUSTER_AGENT_ENDED, level=Level.ERROR, source="watchdog", ended=False,
                              cause=f"tmux did not list the panes: {error}")  # fmt: skip
        return []

    def _end(self, agents: Sequence[Agent], why: Decision[bool], *, late: float) -> None:
        for agent in agents:
            signal_group(agent.pid, signal.SIGTERM)
        until = time.monotonic() + self._grace
        left = list(agents)
        while left and time.monotonic() < until:
            time.sleep(_POLL)
            still = {(a.pane, a.pid) for a in self._agents()}
            left = [a for a in left if (a.pane, a.pid) in still]
        for agent in left:
            signal_group(agent.pid, signal.SIGKILL)
        for agent in agents:
            self._events.emit(
                Event.CLUSTER_AGENT_ENDED, level=Level.WARNING, source="watchdog", target=agent.session,
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
    parser.add_argument("--state-root", required=True, type=Path)
    parser.add_argument("--events", required=True, type=Path)
    parser.add_argument("--socket", default="")
    parser.add_argument("--grace", type=float, default=1.0)
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--log-max-bytes", type=int, default=DEFAULT_MAX_BYTES)  # eventLog.maxBytes
    parser.add_argument("--log-keep", type=int, default=DEFAULT_KEEP)  # eventLog.keep
    args = parser.parse_args(argv)
    lock = locked(args.state_root)
    if lock is None:
        return 0
    with lock, contextlib.suppress(KeyboardInterrupt):
        (args.state_root / "watchdog.pid").write_text(f"{os.getpid()}\n", encoding="ascii")
        rotation = Rotation(args.log_max_bytes, args.log_keep)
        watchdog = Watchdog(
            state_root=args.state_root, events=args.events, socket=args.socket, grace=args.grace, rotation=rotation
        )
        while watchdog.tick():
            time.sleep(args.every)
    return 0
