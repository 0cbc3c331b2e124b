"""The campaign's world: a state root, a private tmux server, the sandbox tracker, the agent (the
recording simulator, or a real one under its plug), and the real `poll` as a subprocess — each of
them killable with SIGKILL."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.clock import SystemClock
from adapters.sandbox.tracker import SandboxTracker
from adapters.sqlite.store import SqliteStateStore
from bench.chaos.agents import TAP_SECONDS, Agent
from bench.chaos.config import AUTHOR, REPO, write_config
from bench.chaos.records import HarnessRun, JsonlTail, harness_runs, running
from domain.ledger import Ledger
from domain.refs import WorkItemRef

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class World:
    root: Path
    agent: Agent  # the harness the items get, and how to read what it received
    socket: str = field(default_factory=lambda: f"chaos-{uuid.uuid4().hex[:8]}")
    poller: subprocess.Popen[bytes] | None = None
    pollers_started: int = 0
    killed_pids: set[int] = field(default_factory=set)  # harnesses the campaign SIGKILLed itself
    killed_servers: set[int] = field(default_factory=set)  # tmux servers it SIGKILLed: their harnesses went too
    exits: list[str] = field(default_factory=list)  # pollers that ended by themselves: how
    hibernate_after: float | None = None  # routing.hibernateAfterSeconds (None: off)

    def __post_init__(self) -> None:
        for folder in ("tmux", "tmp", "work"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        self.record.touch()
        entry, self.agent_env = self.agent.setup(self.root, self.record)
        self.config = write_config(
            self.root, name=self.agent.name, entry=entry, socket=self.socket, hibernate=self.hibernate_after
        )
        self.sandbox = SandboxTracker(self.state / "sandbox.sqlite3", clock=SystemClock().now)
        self.events = JsonlTail(self.state / "logs" / "events.jsonl")
        self._tapping = threading.Event()
        self._tap = threading.Thread(target=self._tap_loop, name="agent-tap", daemon=True)
        self._tap.start()

    def _tap_loop(self) -> None:
        """The agent's own records into the campaign's record, as they come (bench/chaos/agents.py)."""
        while not self._tapping.wait(TAP_SECONDS):
            self.agent.tap()

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def record(self) -> Path:
        return self.root / "harness.jsonl"

    @property
    def env(self) -> dict[str, str]:
        """This process's environment without THE_LOOP_ variables; tmux and temporary files private."""
        env = {k: v for k, v in os.environ.items() if not k.upper().startswith("THE_LOOP_") and k != "TMUX"}
        path = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
        private = {"TMUX_TMPDIR": str(self.root / "tmux"), "TMPDIR": str(self.root / "tmp")}
        return {**env, **self.agent_env, "PYTHONPATH": path, **private}

    def note(self, what: str, pid: int) -> None:
        """The campaign's own kills, timed like the event log, for reading a run afterwards."""
        line = {"ts": SystemClock().now().isoformat(), "kill": what, "pid": pid}
        with (self.root / "kills.jsonl").open("a", encoding="utf-8") as file:
            file.write(json.dumps(line) + "\n")

    # --- the poller -----------------------------------------------------------------------

    def start_poller(self) -> None:
        with (self.root / f"poll-{self.pollers_started}.err").open("wb") as sink:
            self.poller = subprocess.Popen(
                [sys.executable, "-m", "app", "--config", str(self.config), "poll"],
                cwd=self.root, env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=sink,
            )  # fmt: skip
        self.pollers_started += 1

    def poller_running(self) -> bool:
        """Whether a poller runs; one that ended by itself is noted (and is a finding)."""
        if self.poller is None:
            return False
        code = self.poller.poll()
        if code is None:
            return True
        err = self.root / f"poll-{self.pollers_started - 1}.err"
        self.exits.append(f"poller {self.poller.pid} exited {code}: {err.read_text(errors='replace')[-400:]}")
        self.poller = None
        return False

    def kill_poller(self) -> None:
        if self.poller is not None and self.poller_running():
            self.poller.kill()
            self.note("poller", self.poller.pid)
            self.poller.wait(timeout=30)
        self.poller = None

    def stop_poller(self) -> None:
        if self.poller is not None and self.poller_running():
            self.poller.send_signal(signal.SIGTERM)
            self.poller.wait(timeout=120)
        self.poller = None

    # --- tmux and the harnesses -----------------------------------------------------------

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        argv = ["tmux", "-L", self.socket, *args]
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=30, check=False)

    def kill_server(self) -> bool:
        found = self.tmux("display-message", "-p", "#{pid}").stdout.strip()
        if not found.isdigit():
            return False  # no server right now
        self.killed_servers.add(int(found))
        os.kill(int(found), signal.SIGKILL)
        self.note("tmux server", int(found))
        return True

    def runs(self) -> list[HarnessRun]:
        self.agent.tap()
        return harness_runs(self.record)

    def running_harnesses(self) -> list[HarnessRun]:
        return [run for run in self.runs() if running(run.pid, self.record)]

    def kill_harness(self, rng: random.Random, cwd: str | None = None) -> HarnessRun | None:
        pick = rng.random()  # drawn whatever runs now: a seed replays the same draws
        live = [run for run in self.running_harnesses() if cwd is None or run.cwd == cwd]
        if not live:
            return None
        victim = live[int(pick * len(live))]
        self.kill_pid(victim.pid)
        return victim

    def kill_pid(self, pid: int) -> None:
        self.killed_pids.add(pid)
        with contextlib.suppress(ProcessLookupError):  # it ended meanwhile: still the campaign's
            os.kill(pid, signal.SIGKILL)
        self.note("harness", pid)

    def workdir(self, ref: WorkItemRef) -> str:
        return str(self.root / "work" / ref.slug)

    # --- the tracker and the ledger -------------------------------------------------------

    def items(self, count: int) -> list[WorkItemRef]:
        return [self.sandbox.create_item(REPO, f"chaos item {n}", labels=("loop",)) for n in range(count)]

    def comment(self, ref: WorkItemRef, body: str) -> str:
        return self.sandbox.add_comment(ref, body, author=AUTHOR).id

    def notices(self) -> list[str]:
        return [comment.body for comment in self.sandbox.posted()]

    def reactions(self) -> list[tuple[str, str]]:
        return [(comment_id, reaction.value) for comment_id, reaction in self.sandbox.reactions()]

    def hung_spawns(self) -> set[str]:
        """The spawns the-loop ended as hung in their start (`session.not_ready` names each)."""
        lines = JsonlTail(self.state / "logs" / "events.jsonl").new()
        return {str(e["spawn_id"]) for e in events_named(lines, "session.not_ready") if e.get("spawn_id")}

    def hibernated_spawns(self) -> set[str]:
        """The spawns the-loop ended as idle (`session.hibernating` names each before its SIGTERM, so a
        poller killed before its `session.hibernated` still says it)."""
        lines = JsonlTail(self.state / "logs" / "events.jsonl").new()
        ending = [*events_named(lines, "session.hibernating"), *events_named(lines, "session.hibernated")]
        return {str(e["spawn_id"]) for e in ending if e.get("spawn_id")}

    def ledgers(self, refs: list[WorkItemRef]) -> dict[WorkItemRef, Ledger | None]:
        store = SqliteStateStore(self.state / "state.sqlite3")
        try:
            return {ref: store.ledger(ref) for ref in refs}
        finally:
            store.close()

    def close(self) -> None:
        self.stop_poller()
        self.sandbox.close()
        found = self.tmux("display-message", "-p", "#{pid}").stdout.strip()
        if found.isdigit():
            os.kill(int(found), signal.SIGKILL)
        self.end_leftovers()
        self._tapping.set()
        self._tap.join(timeout=10)
        self.agent.close()

    def end_leftovers(self) -> None:
        """An agent that outlives its tmux server (Gemini CLI does) is ended with the campaign."""
        for entry in os.scandir("/proc"):
            if entry.name.isdigit() and running(int(entry.name), self.record):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)


def events_named(events: list[dict[str, Any]], *names: str) -> list[dict[str, Any]]:
    return [event for event in events if event.get("event") in names]
