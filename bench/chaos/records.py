"""What the recording harness wrote (tests/harness_sim.py, or bench/chaos/wrapper.py and the hook tap
for a real agent), read back per harness process."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.chaos import wrapper


class JsonlTail:
    """The whole lines appended to a JSON-lines file since the last read (a torn last line waits)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0

    def new(self) -> list[dict[str, Any]]:
        try:
            with self.path.open("rb") as file:
                file.seek(self._offset)
                data = file.read()
        except FileNotFoundError:
            return []
        whole = data[: data.rfind(b"\n") + 1]
        self._offset += len(whole)
        found = []
        for line in whole.splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue  # a line cut by a SIGKILL, finished by nobody
        return found

    def skip(self) -> None:
        """Forget what is there now: only what comes after counts."""
        self.new()


_SPAWN = re.compile(r"/receipts/[^/\s]+/([0-9a-f]{32})(?:/|\s|$)")


@dataclass
class HarnessRun:
    """One harness process, from its own lines."""

    pid: int
    spawn: str = ""  # the-loop's spawn id, from its receipt folder on the command line or in the environment
    cwd: str = ""
    server: int | None = None
    resume: str | None = None
    argv_prompt: str | None = None
    ready: bool = False
    exited: bool = False  # it ended itself (an unknown --resume, --exit-after)
    signal: int | None = None  # SIGTERM or SIGHUP ended it
    peers: tuple[int, ...] = ()  # other harnesses of its folder running when it started
    accepted: list[str] = field(default_factory=list)  # what it took as prompts: argv once ready, submitted pastes
    unsubmitted: list[str] = field(default_factory=list)  # pasted, never submitted (it died first)
    _pasted: list[str] = field(default_factory=list)

    def take(self, line: dict[str, Any]) -> None:
        kind = line["kind"]
        if kind == "start":
            self.cwd, self.server, self.resume = line.get("cwd", ""), line.get("server"), line.get("resume")
            found = _SPAWN.search(" ".join([*line.get("argv", []), *line.get("env", [])]))
            self.spawn = found[1] if found else ""
            self.argv_prompt = line.get("prompt")
        elif kind == "ready":
            self.ready = True
            if self.argv_prompt:
                self.accepted.append(self.argv_prompt)  # it reads its argument once listening
        elif kind == "paste":
            self._pasted.append(line["text"])
        elif kind == "prompt":  # a whole prompt a real agent's hook confirmed (bench/chaos/agents.py)
            self.accepted.append(line["text"])
        elif kind == "submit" and self._pasted:
            self.accepted.append("".join(self._pasted))
            self._pasted.clear()
        elif kind == "exit":
            self.exited = True
        elif kind == "signal":
            self.signal = line["signum"]
        elif kind == "peers":
            self.peers = tuple(line["pids"])

    def finish(self) -> HarnessRun:
        self.unsubmitted, self._pasted = [*self._pasted], []
        return self


def harness_runs(path: Path) -> list[HarnessRun]:
    """Every harness that wrote to `path`, in the order they started."""
    runs: dict[int, HarnessRun] = {}
    for line in JsonlTail(path).new():
        pid = line.get("pid")
        if isinstance(pid, int):
            runs.setdefault(pid, HarnessRun(pid)).take(line)
    return [run.finish() for run in runs.values()]


def running(pid: int, record: Path) -> bool:
    """`pid` is still a harness of this record file (the simulator's argv, or a real agent's
    environment under bench/chaos/wrapper.py names it), and not a zombie."""
    return wrapper.running(pid, str(record))


def resumed(lines: JsonlTail, *, ready: bool) -> Callable[[], int]:
    """The pid of the next resumed harness once it starts (`ready`: once it said it is ready)."""
    seen: list[int] = []

    def moment() -> int:
        for line in lines.new():
            if line["kind"] == "start" and line.get("resume") and not seen:
                seen.append(line["pid"])
            if seen and (not ready or (line["kind"] == "ready" and line["pid"] == seen[0])):
                return seen[0]
        return 0

    return moment
