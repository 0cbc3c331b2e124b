"""The daemon under load: `the-loop webhook` as its own process, on a private tmux server, with the
light harness; what it costs read from /proc, its cycles from its report on stderr."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.load.github import AUTHORIZED, LABEL, LoadGitHub

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).with_name("harness.py")
SOCKET = "the-loop-load"
_CYCLE = re.compile(r"cycle took ([0-9.]+)s")
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Usage:
    """CPU seconds (the process's own, and its reaped children's: gh, tmux clients) at an instant."""

    own: float
    children: float

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.own - other.own, self.children - other.children)


class LoadDaemon:
    def __init__(self, folder: Path, github: LoadGitHub, *, interval: float, secret: str) -> None:
        self.folder, self.github = folder, github
        self.record = folder / "pastes.jsonl"
        self.port = _free_port()
        self.tmux_env = {"TMUX_TMPDIR": str(folder / "tmux")}
        (folder / "tmux").mkdir()
        (folder / "work").mkdir()
        self.config = self._write_config(interval, secret)
        self.stderr = folder / "daemon.err"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("THE_LOOP_", "GH_", "TMUX"))}
        env |= self.github.standin.gh_env() | self.tmux_env | {"PYTHONPATH": str(ROOT)}
        with self.stderr.open("wb") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "--config", str(self.config), "webhook"],
                cwd=self.folder,
                env=env,
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

    def cycles(self) -> list[float]:
        """Each finished cycle's duration, in order, from the daemon's report."""
        text = self.stderr.read_text(encoding="utf-8", errors="replace")
        return [float(m.group(1)) for m in _CYCLE.finditer(text)]

    def usage(self) -> Usage:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        return Usage((utime + stime) / _TICKS, (cutime + cstime) / _TICKS)

    def memory(self) -> tuple[int, int]:
        """Resident set now and at its peak, in KiB."""
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{self.pid}/status").read_text().splitlines() if ":" in line
        )
        return int(status["VmRSS"].split()[0]), int(status["VmHWM"].split()[0])

    @property
    def events_log(self) -> Path:
        return self.folder / "state" / "logs" / "events.jsonl"

    def pastes(self) -> list[dict[str, object]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text(encoding="utf-8").splitlines() if line]

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; then the tmux server and every harness on it."""
        status = -1
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                status = self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                status = self.process.wait()
        kill = ["tmux", "-L", SOCKET, "kill-server"]
        subprocess.run(kill, env=os.environ | self.tmux_env, capture_output=True, check=False)
        return status

    def wait_for(self, predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if not self.alive():
                raise RuntimeError(f"the daemon exited while waiting for {what}: {self.stderr.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")
            time.sleep(0.2)

    def _write_config(self, interval: float, secret: str) -> Path:
        harness = {
            "binary": sys.executable,
            "args": ["-S", str(HARNESS), "--record", str(self.record)],
            "sessionIdArgs": ["--session-id", "{session_id}"],
            "receipts": "file",
            "readySeconds": 60,
            "confirmSeconds": 30,
        }
        config = {
            "state": {"root": str(self.folder / "state")},
            "polling": {
                "intervalSeconds": interval,
                "sources": [{"provider": "github", "repos": self.github.repos, "label": LABEL}],
            },
            "routing": {
                "authorizedUsers": [AUTHORIZED],
                "defaultHarness": "light",
                "harnesses": {"light": harness},
                "spawnWorkdir": str(self.folder / "work"),
                "tmux": {"socketName": SOCKET},
            },
            "webhooks": {"ghWebhook": {"enabled": True, "port": self.port, "secret": secret}},
            "integrations": {"github": {"host": self.github.host}},
        }
        path = self.folder / "loop.yaml"
        path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
        return path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
