"""The daemon under load: `the-loop webhook` as its own process, on a private tmux server, with the
light harness; what it costs read from /proc, its cycles from its report on stderr."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

from bench.daemon import DaemonProcess, Usage
from bench.load.github import AUTHORIZED, LABEL, LoadGitHub

__all__ = ["LoadDaemon", "Usage"]

SOCKET = "the-loop-load"
_CYCLE = re.compile(r"cycle took ([0-9.]+)s")


class LoadDaemon(DaemonProcess):
    def __init__(self, folder: Path, github: LoadGitHub, *, interval: float, secret: str) -> None:
        super().__init__(folder, socket=SOCKET)
        self.github = github
        self.port = _free_port()
        self.config = self._write_config(interval, secret)

    def start(self) -> None:
        self.launch("webhook", self.github.standin.gh_env())

    def cycles(self) -> list[float]:
        """Each finished cycle's duration, in order, from the daemon's report."""
        text = self.stderr.read_text(encoding="utf-8", errors="replace")
        return [float(m.group(1)) for m in _CYCLE.finditer(text)]

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
        status = self.terminate()
        self.kill_tmux()
        return status

    def _write_config(self, interval: float, secret: str) -> Path:
        return self.write_config(
            {
                "state": {"root": str(self.folder / "state")},
                "polling": {
                    "intervalSeconds": interval,
                    "sources": [{"provider": "github", "repos": self.github.repos, "label": LABEL}],
                },
                "routing": {
                    "authorizedUsers": [AUTHORIZED],
                    "defaultHarness": "light",
                    "harnesses": {"light": self.light_harness()},
                    "spawnWorkdir": str(self.folder / "work"),
                    "tmux": {"socketName": SOCKET},
                },
                "webhooks": {"ghWebhook": {"enabled": True, "port": self.port, "secret": secret}},
                "integrations": {"github": {"host": self.github.host}},
            }
        )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
