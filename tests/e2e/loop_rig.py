"""A whole the-loop on one machine for e2e runs: a config, the sandbox tracker, the harness
simulator on a private tmux server, and the real CLI as subprocesses (`poll` in the background)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from adapters.clock import SystemClock
from adapters.postgres.store import PostgresStateStore
from adapters.sandbox.tracker import SandboxTracker
from adapters.sqlite.store import SqliteStateStore
from domain.events import Event
from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef
from tests.e2e.cli import clean_env, run_cli
from tests.tmux_support import SIM, RealTmux, kinds, pasted, wait_for

REPO = RepoRef.parse("sandbox/demo")


@dataclass
class Poller:
    """A `poll` running in the background; its stderr goes to a file."""

    process: subprocess.Popen[bytes]
    stderr_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8")

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=60)


@dataclass
class Loop:
    root: Path
    tmux: RealTmux
    interval_seconds: int = 1
    submit_delay_ms: int = 0
    max_concurrent: int = 4
    sources: list[dict[str, Any]] = field(
        default_factory=lambda: [{"provider": "sandbox", "repos": [str(REPO)], "label": "loop"}]
    )
    extra: dict[str, Any] = field(default_factory=dict)  # more top-level keys
    receipts: str = "file"  # the simulator writes receipts like Claude Code's hooks
    state_keys: dict[str, Any] = field(default_factory=dict)  # more `state` keys (backend, dsn)
    workspace: dict[str, Any] = field(default_factory=dict)  # routing.workspace; given: a folder per item
    env: dict[str, str] = field(default_factory=dict)  # more environment for the CLI (gh's, for a stand-in)
    pollers: list[Poller] = field(default_factory=list)
    harness: str = "sim"  # or a built-in one: "demo" ends its turns (a Stop receipt), the simulator never does

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def record(self) -> Path:
        return self.root / "harness.jsonl"

    @property
    def log(self) -> Path:
        return self.state / "logs" / "events.jsonl"

    def write_config(self) -> Path:
        (self.root / "work").mkdir(exist_ok=True)
        sim = {
            "binary": sys.executable,
            "args": [str(SIM), "--record", str(self.record)],
            "sessionIdArgs": ["--session-id", "{session_id}"],
            "submitDelayMs": self.submit_delay_ms,
            "receipts": self.receipts,
            "readySeconds": 10,
            "confirmSeconds": 5,
        }
        config = {
            "state": {"root": str(self.state), **self.state_keys},
            "polling": {
                "intervalSeconds": self.interval_seconds,
                "sources": self.sources,
            },
            "routing": {
                "authorizedUsers": ["demo"],
                "defaultHarness": self.harness,
                "harnesses": {"sim": sim},
                "maxConcurrentDispatches": self.max_concurrent,
                "spawnWorkdir": str(self.root / "work" / "{slug}" if self.workspace else self.root / "work"),
                "tmux": {"socketName": self.tmux.socket, "harnessKillGraceSeconds": 2},
                **({"workspace": self.workspace} if self.workspace else {}),
            },
            "cluster": {"maxSessions": 20},  # as many agents whatever the machine's memory (its default)
            **self.extra,
        }
        path = self.root / "loop.yaml"
        path.write_text(json.dumps(config, indent=1), encoding="utf-8")  # JSON is YAML
        return path

    # --- the CLI ------------------------------------------------------------------------

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(self.root, "--config", str(self.write_config()), *args, env=self.tmux.env | self.env)

    def json_lines(self, *args: str) -> list[dict[str, Any]]:
        result = self.cli(*args)
        assert result.returncode == 0, result.stderr
        return [json.loads(line) for line in result.stdout.splitlines()]

    def start_poll(self, *args: str) -> Poller:
        stderr = self.root / f"poll-{len(self.pollers)}.err"
        with stderr.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "app", "--config", str(self.write_config()), "poll", *args],
                cwd=self.root,
                env=clean_env(self.tmux.env | self.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        poller = Poller(process, stderr)
        self.pollers.append(poller)
        return poller

    def running_poll(self) -> Poller:
        """A `poll` that has finished its first cycle."""
        poller = self.start_poll()
        wait_for(lambda: Event.POLL_CYCLE in self.event_names() or poller.process.poll() is not None, what="a cycle")
        assert poller.process.poll() is None, poller.stderr
        return poller

    # --- the world ----------------------------------------------------------------------

    def sandbox(self) -> SandboxTracker:
        return SandboxTracker(self.state / "sandbox.sqlite3", clock=SystemClock().now)

    def items(self, count: int) -> list[WorkItemRef]:
        sandbox = self.sandbox()
        refs = [sandbox.create_item(REPO, f"item {n}", labels=("loop",)) for n in range(count)]
        sandbox.close()
        return refs

    def comment(self, ref: WorkItemRef, body: str) -> None:
        sandbox = self.sandbox()
        sandbox.add_comment(ref, body, author="demo")
        sandbox.close()

    def with_sessions(self, count: int) -> list[WorkItemRef]:
        """`count` labeled items whose sessions one `poll --once` spawned; each harness listening."""
        refs = self.items(count)
        result = self.cli("poll", "--once")
        assert result.returncode == 0, result.stderr
        wait_for(lambda: self.harness_kinds().count("ready") >= count, what="harnesses listening")
        return refs

    def store(self) -> StateStore:
        if self.state_keys.get("backend") == "postgres":
            return PostgresStateStore(self.state_keys["dsn"])
        return SqliteStateStore(self.state / "state.sqlite3")

    def events(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        # a line the daemon is writing has no newline yet: read once it has
        whole = self.log.read_text(encoding="utf-8").split("\n")[:-1]
        return [json.loads(line) for line in whole if line]

    def event_names(self) -> list[Event]:
        return [Event(event["event"]) for event in self.events()]

    def harness_kinds(self) -> list[str]:
        return kinds(self.record)

    def pasted(self) -> list[str]:
        return pasted(self.record)

    def pane_dead(self, ref: WorkItemRef) -> list[str]:
        return self.tmux.run("list-panes", "-s", "-t", f"={ref.target.name}:", "-F", "#{pane_dead}").split()

    def has_session(self, ref: WorkItemRef) -> bool:
        names = self.tmux.run("list-sessions", "-F", "#{session_name}", check=False).split()
        return ref.target.name in names

    def stop_all(self) -> None:
        for poller in self.pollers:
            if poller.process.poll() is None:
                poller.process.kill()
                poller.process.wait(timeout=10)


@pytest.fixture
def loop(real_tmux: RealTmux, tmp_path: Path) -> Iterator[Loop]:
    rig = Loop(tmp_path, real_tmux)
    try:
        yield rig
    finally:
        rig.stop_all()
