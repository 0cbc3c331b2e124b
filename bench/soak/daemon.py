"""The soak's daemon: `the-loop poll` as its own process on the sandbox tracker, a private tmux
server, the load campaign's light harness (it writes receipts as Claude Code's hooks would and
records each paste whole); its CPU and memory read from /proc, its cycles from its report."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.daemon import DaemonProcess

SOCKET = "the-loop-soak"
AUTHORIZED, STRANGER = "alice", "bob"
LABEL = "loop"
_CYCLE = re.compile(r"cycle took ([0-9.]+)s")


class SoakDaemon(DaemonProcess):
    def __init__(self, folder: Path, *, repo: str, log_max_bytes: int, log_keep: int, concurrent: int) -> None:
        super().__init__(folder, socket=SOCKET)
        self.state = folder / "state"
        self.config = self._write_config(repo, log_max_bytes, log_keep, concurrent)
        self.runs = 0

    @property
    def stderr(self) -> Path:
        return self.folder / f"daemon-{self.runs}.err"

    def start(self) -> None:
        self.runs += 1
        self.launch("poll")
        self.wait_for(lambda: self.cycles() >= 1, timeout=120, what="the first cycle")

    def restart(self) -> None:
        """SIGTERM, as systemd restarts it; the tmux server and its harnesses live on."""
        self.stop_daemon()
        self.start()

    def stop_daemon(self) -> None:
        self.terminate()

    def stop(self) -> None:
        self.stop_daemon()
        self.kill_tmux()

    def cycles(self) -> int:
        """Cycles this run of the daemon finished."""
        return len(_CYCLE.findall(self.stderr.read_text(encoding="utf-8", errors="replace")))

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def pastes(self) -> list[str]:
        """The delivery id of each paste the harnesses recorded, in order."""
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [str(json.loads(line)["delivery"]) for line in lines if line.endswith("}")]

    def _write_config(self, repo: str, log_max_bytes: int, log_keep: int, concurrent: int) -> Path:
        return self.write_config(
            {
                # the month is compressed (a day in about a minute): the pruning horizon trails the reads
                # by the least the setting takes, a minute, not an hour that would outlast the whole run
                "state": {"root": str(self.state), "pruneMarginSeconds": 60, "prunePassSeconds": 10},
                "eventLog": {"maxBytes": log_max_bytes, "keep": log_keep},
                "polling": {
                    "intervalSeconds": 1,
                    "sources": [{"provider": "sandbox", "repos": [repo], "label": LABEL}],
                },
                "routing": {
                    "authorizedUsers": [AUTHORIZED],
                    "defaultHarness": "light",
                    "harnesses": {"light": self.light_harness()},
                    "maxConcurrentDispatches": concurrent,
                    "spawnWorkdir": str(self.folder / "work"),
                    # a closed item's session ends with it: the month spawns and ends a hundred
                    "tmux": {"socketName": SOCKET, "keepSessionOnClose": False, "harnessKillGraceSeconds": 2},
                },
            }
        )
