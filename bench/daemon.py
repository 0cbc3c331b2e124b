"""the-loop as its own process for a benchmark: on a private tmux server, with the load campaign's
light harness (it writes receipts as Claude Code's hooks would and records each paste); its CPU
read from /proc. The load campaign and the soak each say which command it runs and how."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "bench" / "load" / "harness.py"
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds (the process's own, and its reaped children's: gh, tmux clients) at an instant."""

    own: float
    children: float

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.own - other.own, self.children - other.children)


class DaemonProcess:
    """The process, its private tmux server (`socket`) and the file the harnesses record pastes in."""

    config: Path

    def __init__(self, folder: Path, *, socket: str) -> None:
        self.folder, self.socket = folder, socket
        self.record = folder / "pastes.jsonl"
        self.tmux_env = {"TMUX_TMPDIR": str(folder / "tmux")}
        (folder / "tmux").mkdir(parents=True)
        (folder / "work").mkdir()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def stderr(self) -> Path:
        """Where the running daemon's report goes."""
        return self.folder / "daemon.err"

    def launch(self, command: str, env: Mapping[str, str] = {}) -> None:
        """`the-loop COMMAND` on the configuration, with none of the caller's the-loop, gh or tmux
        settings: only `env`'s."""
        clean = {k: v for k, v in os.environ.items() if not k.upper().startswith(("THE_LOOP_", "GH_", "TMUX"))}
        with self.stderr.open("wb") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "--config", str(self.config), command],
                cwd=self.folder,
                env=clean | dict(env) | self.tmux_env | {"PYTHONPATH": str(ROOT)},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def usage(self) -> Usage:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        return Usage((utime + stime) / _TICKS, (cutime + cstime) / _TICKS)

    def terminate(self) -> int:
        """SIGTERM, as systemd stops it; its exit status (-1: it was not running)."""
        if self.process is None or self.process.poll() is not None:
            return -1
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill_tmux(self) -> None:
        """The tmux server and every harness on it."""
        kill = ["tmux", "-L", self.socket, "kill-server"]
        subprocess.run(kill, env=os.environ | self.tmux_env, capture_output=True, check=False)

    def wait_for(self, predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if not self.alive():
                raise RuntimeError(f"the daemon exited while waiting for {what}: {self.stderr.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")
            time.sleep(0.2)

    def light_harness(self) -> dict[str, Any]:
        """The harness's profile: receipts as files, each paste recorded."""
        return {
            "binary": sys.executable,
            "args": ["-S", str(HARNESS), "--record", str(self.record)],
            "sessionIdArgs": ["--session-id", "{session_id}"],
            "receipts": "file",
            "readySeconds": 60,
            "confirmSeconds": 30,
        }

    def write_config(self, config: Mapping[str, Any]) -> Path:
        path = self.folder / "loop.yaml"
        path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
        return path
