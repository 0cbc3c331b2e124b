"""`ProcessWatchdog`: the daemon's side of the agent watchdog — record the deadline, start the
watchdog process outside the daemon's session and process group (a SIGSTOP or SIGTERM of the
daemon's group does not reach it), and start it again whenever none of this daemon's generation runs;
and, while none can be, the daemon's own hand on its agents (`end_now`: the watchdog's ending, run here)."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from pathlib import Path

from adapters.eventlog.rotation import Rotation
from adapters.watchdog import deadline as files
from adapters.watchdog.deadline import Guards
from adapters.watchdog.lock import MODULE, serving
from adapters.watchdog.watch import Watchdog
from domain.cluster import LeaseTiming
from domain.errors import WatchdogUnarmed
from domain.policy import Decision
from domain.ports import AgentWatchdogPort

log = logging.getLogger(__name__)


def code_digest(folder: Path = Path(__file__).parent) -> str:
    """A short digest of the watchdog's own source: a checkout changed under the same package version
    (an upgrade from git) is still another generation, whose watchdog replaces the running one."""
    digest = hashlib.sha256()
    for source in sorted(folder.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:12]


class ProcessWatchdog(AgentWatchdogPort):
    def __init__(
        self,
        *,
        state_root: Path,
        events: Path,
        socket_name: str,
        timing: LeaseTiming,
        grace_seconds: float,
        version: str,
        rotation: Rotation | None = None,
    ) -> None:
        self._root = state_root
        self._file = state_root / files.FILE_NAME
        rotation = rotation or Rotation()  # the event log's, as the daemon writes it
        version = f"{version}+{code_digest()}"
        self._guards = Guards(
            state_root=str(state_root.absolute()), events=str(events.absolute()), socket=socket_name,
            tmux_tmpdir=os.environ.get("TMUX_TMPDIR", ""), version=version, grace=timing.kill_grace(grace_seconds),
            every=timing.watch_every_seconds, log_max_bytes=rotation.max_bytes, log_keep=rotation.keep,
        )  # fmt: skip
        self._deadline: float | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._own: Watchdog | None = None  # the daemon's own hand, while no watchdog process guards

    def arm(self, deadline: float) -> None:
        armed = files.Armed(deadline, os.getpid(), files.boot_id(), self._guards)
        try:
            files.write(self._file, armed)
        except OSError as error:  # the earlier deadline stays: the watchdog ends the agents sooner, never later
            raise WatchdogUnarmed(f"the agents' deadline could not be recorded in {self._file}: {error}") from error
        self._deadline = deadline
        if self._process is not None and not self._starting() and not serving(self._root, self._guards.argv()):
            # killed, left while this daemon was away, or one of an earlier daemon's generation
            log.warning("no agent watchdog of this daemon's generation keeps %s: starting one", self._root)
            try:
                self.start()
            except (OSError, subprocess.SubprocessError) as error:
                raise WatchdogUnarmed(f"the agent watchdog could not be started again: {error}") from error

    def end_now(self, *, reason: str) -> int:
        if self._own is None:  # one for the daemon's life: a tmux that does not answer is said once per spell
            self._own = Watchdog(self._guards, source="daemon")
        return self._own.end_now(Decision(False, reason), late=0.0)

    def deadline(self) -> float | None:
        return self._deadline

    def _starting(self) -> bool:
        """The watchdog this daemon started last still runs: it keeps the lock, or is about to (`start`
        comes after the first renewal's arm: it starts the first)."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        argv = [sys.executable, "-m", MODULE, *self._guards.argv()]
        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
        with (self._root / "watchdog.err").open("ab") as stderr:
            # a session of its own: no signal to the daemon's process group or terminal reaches it
            self._process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env,
                start_new_session=True, close_fds=True,
            )  # fmt: skip
