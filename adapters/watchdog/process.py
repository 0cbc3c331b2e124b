"""`ProcessWatchdog`: the daemon's side of the agent watchdog — record the deadline, start the
watchdog process outside the daemon's session and process group (a SIGSTOP or SIGTERM of the
daemon's group does not reach it)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from adapters.eventlog.rotation import Rotation
from adapters.watchdog import deadline as files
from adapters.watchdog.lock import running
from domain.cluster import LeaseTiming
from domain.ports import AgentWatchdogPort

log = logging.getLogger(__name__)


class ProcessWatchdog(AgentWatchdogPort):
    def __init__(
        self,
        *,
        state_root: Path,
        events: Path,
        socket_name: str,
        timing: LeaseTiming,
        grace_seconds: float,
        rotation: Rotation | None = None,
    ) -> None:
        self._root = state_root
        self._file = state_root / files.FILE_NAME
        self._events = events
        self._rotation = rotation or Rotation()  # the event log's, as the daemon writes it
        self._socket = socket_name
        self._timing = timing
        self._grace = timing.kill_grace(grace_seconds)
        self._deadline: float | None = None
        self._process: subprocess.Popen[bytes] | None = None

    def arm(self, deadline: float) -> None:
        try:
            files.write(self._file, files.Armed(deadline, os.getpid(), files.boot_id()))
        except OSError as error:  # the earlier deadline stays: the agents end sooner, never later
            log.warning("could not record the agents' deadline in %s: %s", self._file, error)
            return
        self._deadline = deadline
        if self._gone() and not running(self._root):  # killed, or it left while this daemon was away
            log.warning("the agent watchdog of %s is not running: starting it again", self._root)
            self.start()

    def deadline(self) -> float | None:
        return self._deadline

    def _gone(self) -> bool:
        """The watchdog this daemon started has exited (it may have found another running)."""
        return self._process is not None and self._process.poll() is not None

    def start(self) -> None:
        argv = [sys.executable, "-m", "adapters.watchdog", "--state-root", str(self._root.absolute())]
        argv += ["--events", str(self._events.absolute()), "--socket", self._socket]
        argv += ["--grace", f"{self._grace:g}", "--every", f"{self._timing.watch_every_seconds:g}"]
        argv += ["--log-max-bytes", str(self._rotation.max_bytes), "--log-keep", str(self._rotation.keep)]
        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
        with (self._root / "watchdog.err").open("ab") as stderr:
            # a session of its own: no signal to the daemon's process group or terminal reaches it
            self._process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env,
                start_new_session=True, close_fds=True,
            )  # fmt: skip
