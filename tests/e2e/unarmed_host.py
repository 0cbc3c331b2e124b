"""A host's lease heartbeat with the real watchdog process over a real tmux server, whose watchdog is
SIGKILLed and cannot be started again: `python -m tests.e2e.unarmed_host MODE STATE_ROOT SOCKET`
(TMUX_TMPDIR set). MODE `emfile`: the restart meets EMFILE (the open-file limit lowered so that
recording the deadline still works and starting a process does not), lifted once the failure is
seen. MODE `blocked`: every restart fails (its stderr file is a directory) until the agent has
ended. Prints what it saw as one JSON object."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapters.clock import SystemClock
from adapters.eventlog.writer import JsonlEventLog
from adapters.tmux.adapter import ShTmux
from adapters.tmux.server import root_mark
from adapters.watchdog.process import ProcessWatchdog
from app.usecases.cluster.heartbeat import LeaseHeartbeat
from app.usecases.cluster.leases import Leases
from domain.cluster import LeaseTiming
from domain.model import SpawnRequest
from domain.refs import WorkItemRef
from tests.fakes.cluster import FakeCluster, FakeClusterDb

TIMING = LeaseTiming(expiry_seconds=12, renew_deadline_seconds=6)
ITEM = WorkItemRef.parse("github:acme/widgets#7")


def until(predicate: Callable[[], Any], seconds: float = 30.0) -> bool:
    """Whether `predicate` came true within `seconds` (a bound for a run that went wrong)."""
    end = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def events(path: Path, name: str) -> list[dict[str, Any]]:
    try:
        lines = path.read_text().splitlines() if path.exists() else []
    except OSError as error:
        if error.errno != errno.EMFILE:
            raise
        # while the limit is lowered, the one free file may be the heartbeat's (recording its deadline,
        # writing an event) at the moment this looks: nothing seen yet, look again
        return []
    return [record for record in map(json.loads, lines) if record["event"] == name]


def pid_of(root: Path) -> int:
    try:
        return int((root / "watchdog.pid").read_text())
    except (OSError, ValueError):
        return 0


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}/cmdline").exists() and Path(f"/proc/{pid}/cmdline").read_bytes() != b""


def lowest_free_fd() -> int:
    used = {int(name) for name in os.listdir("/proc/self/fd")}
    return next(fd for fd in range(len(used) + 2) if fd not in used)


def main(mode: str, root: Path, socket: str) -> dict[str, Any]:
    clock, log = SystemClock(), root / "events.jsonl"
    tmux = ShTmux(socket_name=socket, root_mark=root_mark(str(root)))  # as the container makes it
    mark = uuid.uuid4().hex
    tmux.spawn(SpawnRequest(ITEM.target, ("sh", "-c", "sleep 600"), str(root), "", mark=mark, remain_on_exit=True))
    cluster = FakeCluster(FakeClusterDb(), host="host-a", timing=TIMING)
    watchdog = ProcessWatchdog(state_root=root, events=log, socket_name=socket, timing=TIMING, grace_seconds=1,
                               version="1")  # fmt: skip
    leases = Leases(cluster=cluster, timing=TIMING, monotonic=clock.monotonic, watchdog=watchdog)
    heartbeat = LeaseHeartbeat(
        leases=leases, cluster=cluster, events=JsonlEventLog(log, clock=clock.now), monotonic=clock.monotonic,
        watchdog=watchdog,
    )  # fmt: skip
    cluster.join(pid=os.getpid(), version="1")
    cluster.place([ITEM])
    heartbeat.start(pid=os.getpid(), version="1")
    until(lambda: alive(pid_of(root)))
    first = pid_of(root)
    held_before = leases.holds(ITEM.target).choice
    thread = heartbeat._thread
    assert thread is not None

    def failed() -> bool:
        return not thread.is_alive() or bool(events(log, "cluster.watchdog_unarmed"))

    if mode == "emfile":
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        os.kill(first, signal.SIGKILL)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free_fd() + 1, hard))  # room for one more file
        until(failed)
        holds_unarmed = leases.holds(ITEM.target)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    else:
        (root / "watchdog.err").unlink(missing_ok=True)
        (root / "watchdog.err").mkdir()
        os.kill(first, signal.SIGKILL)
        until(failed)
        holds_unarmed = leases.holds(ITEM.target)
        until(lambda: tmux.probe(ITEM.target, mark=mark).harness.value != "live")
        shutil.rmtree(root / "watchdog.err")
    deadline = watchdog.deadline() or 0.0
    rearmed = until(lambda: pid_of(root) not in (0, first) and alive(pid_of(root)))
    renewed = until(lambda: (watchdog.deadline() or 0.0) > deadline + TIMING.renew_every_seconds / 2)
    result = {
        "held_before": held_before,
        "heartbeat_alive": thread.is_alive(),
        "holds_while_unarmed": [holds_unarmed.choice, holds_unarmed.reason],
        "rearmed": rearmed,
        "renewed_after": renewed,
        "holds_after": leases.holds(ITEM.target).choice,
        "agent": tmux.probe(ITEM.target, mark=mark).harness.value,
        "events": {
            name: events(log, name)
            for name in ("cluster.watchdog_unarmed", "cluster.watchdog_armed", "cluster.agent_ended")
        },
    }
    (root / "agents-deadline.json").unlink(missing_ok=True)  # the new watchdog leaves
    return result


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3])))
