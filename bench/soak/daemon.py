"""The soak's daemon: `the-loop poll` as its own process on the sandbox tracker, a private tmux
server, the load campaign's light harness (it writes receipts as Claude Code's hooks would and
records each paste whole); its CPU and memory read from /proc, its cycles from its report."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from bench.load.daemon import Usage

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "bench" / "load" / "harness.py"
SOCKET = "the-loop-soak"
AUTHORIZED, STRANGER = "alice", "bob"
LABEL = "loop"
_CYCLE = re.compile(r"cycle took ([0-9.]+)s")
_TICKS = os.sysconf("SC_CLK_TCK")


class SoakDaemon:
    def __init__(self, folder: Path, *, repo: str, log_max_bytes: int, log_keep: int, concurrent: int) -> None:
        self.folder = folder
        self.state = folder / "state"
        self.record = folder / "pastes.jsonl"
        self.tmux_env = {"TMUX_TMPDIR": str(folder / "tmux")}
        (folder / "tmux").mkdir(parents=True)
        (folder / "work").mkdir()
        self.config = self._write_config(repo, log_max_bytes, log_keep, concurrent)
        self.runs = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def stderr(self) -> Path:
        return self.folder / f"daemon-{self.runs}.err"

    def start(self) -> None:
        self.runs += 1
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("THE_LOOP_", "GH_", "TMUX"))}
        env |= self.tmux_env | {"PYTHONPATH": str(ROOT)}
        with self.stderr.open("wb") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "--config", str(self.config), "poll"],
                cwd=self.folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        self.wait_for(lambda: self.cycles() >= 1, timeout=120, what="the first cycle")

    def restart(self) -> None:
        """SIGTERM, as systemd restarts it; the tmux server and its harnesses live on."""
        self.stop_daemon()
        self.start()

    def stop_daemon(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def stop(self) -> None:
        self.stop_daemon()
        kill = ["tmux", "-L", SOCKET, "kill-server"]
        subprocess.run(kill, env=os.environ | self.tmux_env, capture_output=True, check=False)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def cycles(self) -> int:
        """Cycles this run of the daemon finished."""
        return len(_CYCLE.findall(self.stderr.read_text(encoding="utf-8", errors="replace")))

    def usage(self) -> Usage:
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        return Usage((utime + stime) / _TICKS, (cutime + cstime) / _TICKS)

    def rss_kib(self) -> int:
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def pastes(self) -> list[str]:
        """The delivery id of each paste the harnesses recorded, in order."""
        if not self.record.exists():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [str(json.loads(line)["delivery"]) for line in lines if line.endswith("}")]

    def wait_for(self, predicate: Callable[[], bool], *, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if not self.alive():
                raise RuntimeError(f"the daemon exited while waiting for {what}: {self.stderr.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")
            time.sleep(0.2)

    def _write_config(self, repo: str, log_max_bytes: int, log_keep: int, concurrent: int) -> Path:
        harness = {
            "binary": sys.executable,
            "args": ["-S", str(HARNESS), "--record", str(self.record)],
            "sessionIdArgs": ["--session-id", "{session_id}"],
            "receipts": "file",
            "readySeconds": 60,
            "confirmSeconds": 30,
        }
        config = {
            # the month is compressed (a day in about a minute): the pruning horizon trails the reads by
            # the least the setting takes, a minute, not an hour that would outlast the whole run
            "state": {"root": str(self.state), "pruneMarginSeconds": 60, "prunePassSeconds": 10},
            "eventLog": {"maxBytes": log_max_bytes, "keep": log_keep},
            "polling": {"intervalSeconds": 1, "sources": [{"provider": "sandbox", "repos": [repo], "label": LABEL}]},
            "routing": {
                "authorizedUsers": [AUTHORIZED],
                "defaultHarness": "light",
                "harnesses": {"light": harness},
                "maxConcurrentDispatches": concurrent,
                "spawnWorkdir": str(self.folder / "work"),
                # a closed item's session ends with it: the month spawns and ends a hundred
                "tmux": {"socketName": SOCKET, "keepSessionOnClose": False, "harnessKillGraceSeconds": 2},
            },
        }
        path = self.folder / "loop.yaml"
        path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
        return path
