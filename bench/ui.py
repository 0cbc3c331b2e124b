"""What the fleet page costs.

Size: the items view of 1,000 items, 100 of them with a session, rendered on the server (the use
cases over the fakes, as the daemon wires them) — its bytes must stay under 2 MB.

Idle: a real `poll` daemon with SESSIONS sessions of the harness simulator on a private tmux
server and the page enabled; its CPU per cycle (the daemon's and the tmux server's, from /proc)
over windows with no page open and with a page open (a client that does what the browser's
script does: follows /events, fetches the view on each event), alternated — closed, open, closed,
open, closed — so a drift over the run weighs on both. Same run, so the ratio open / closed is the
figure, printed with the spread of the closed windows (the noise it is within); the absolute times
depend on the machine. The log starts with HISTORY records, as a day of a busy fleet leaves it:
the page holds that many, and what it does per record shows.

Run: .venv/bin/python -m bench.ui [--sessions N] [--window SECONDS] [--rounds N] [--history N]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

from adapters.eventlog.reader import Tail
from adapters.sqlite.cluster import SingleHost
from app.usecases.views.fleet import Fleet
from app.web.auth import Guard
from app.web.feed import Feed
from app.web.http import Request, Response
from app.web.page import FleetPage
from domain.events import Event
from domain.ledger import Ledger
from domain.refs import WorkItemRef
from tests.e2e.loop_rig import Loop
from tests.service.world import REPO, World
from tests.tmux_support import RealTmux, wait_for

LIMIT = 2 * 1024 * 1024
PULSE = 10.0  # page.js: the hosts and the daemon at most this often on ticks


def items_view_bytes(items: int, sessions: int, log: Path) -> tuple[int, float]:
    world = World(cluster=SingleHost(host="solo", max_sessions=sessions))
    for number in range(1, sessions + 1):
        world.watched(number)
    for number in range(sessions + 1, items + 1):
        world.store.save_ledger(Ledger(item=WorkItemRef(REPO, number), baseline_at=world.clock.now()))
    assert world.cluster is not None
    fleet = Fleet(
        admin=world.admin(), uow=world.uow, cluster=world.cluster, tmux=world.tmux,
    )  # fmt: skip
    page = FleetPage(fleet=fleet, feed=Feed(log, Tail), guard=Guard(""), now=world.clock.now, where="bench")
    start = time.perf_counter()
    answer = page(Request("GET", "/", {}, {}))
    took = time.perf_counter() - start
    assert isinstance(answer, Response) and answer.status == 200
    rows = answer.body.count(b"<tr data-item=")
    assert rows == items, f"{rows} rows for {items} items"
    return len(answer.body), took


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class Browser(threading.Thread):
    """What page.js does: follow /events; on a tick fetch the hosts and daemon (at most every
    PULSE seconds; the tick's own figures are shown as they come), on any other event the view."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(daemon=True)
        self.host, self.port, self.stopping, self.fetches = host, port, False, 0

    def run(self) -> None:
        stream = http.client.HTTPConnection(self.host, self.port, timeout=60)
        stream.request("GET", "/events")
        answer = stream.getresponse()
        kind, pulse = "", time.monotonic()
        while not self.stopping:
            line = answer.fp.readline().decode()
            if line.startswith("event:"):
                kind = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and kind != "tick":
                self._fetch("1")
            elif line.startswith("data:") and time.monotonic() - pulse >= PULSE:
                pulse = time.monotonic()
                self._fetch("pulse")
            if line.startswith("data:"):
                kind = ""
        stream.close()

    def _fetch(self, fragment: str) -> None:
        client = http.client.HTTPConnection(self.host, self.port, timeout=60)
        client.request("GET", "/", headers={"X-Fragment": fragment})
        client.getresponse().read()
        client.close()
        self.fetches += 1


def _history(log: Path, records: int) -> None:
    """`records` copies of the log's last `poll.cycle` appended: what a day of cycles leaves."""
    cycles = [line for line in log.read_text(encoding="utf-8").splitlines() if '"poll.cycle"' in line]
    if records and cycles:
        with log.open("a", encoding="utf-8") as out:
            out.write((cycles[-1] + "\n") * records)


def idle_ratio(sessions: int, window: float, *, rounds: int = 2, history: int = 0) -> list[tuple[str, float, int]]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "tmux").mkdir()
        tmux = RealTmux(root / "tmux")
        loop = Loop(root, tmux, max_concurrent=sessions, extra={"ui": {"enabled": True, "port": 0}})
        try:
            loop.with_sessions(sessions)
            _history(loop.log, history)
            poller = loop.running_poll()
            found = wait_for(lambda: re.search(r"the fleet page: http://([\d.]+):(\d+)/", poller.stderr), what="page")
            server = int(tmux.run("display-message", "-p", "#{pid}").strip())
            time.sleep(2 * loop.interval_seconds)  # past the first cycles' spawns and readiness
            measured = [_window("closed", poller.pid, server, loop, window)]
            fetches = 0
            for _ in range(rounds):
                browser = Browser(found.group(1), int(found.group(2)))
                browser.start()
                measured.append(_window("open", poller.pid, server, loop, window))
                browser.stopping = True
                fetches += browser.fetches
                measured.append(_window("closed", poller.pid, server, loop, window))
            print(f"the page fetched {fetches} times while open")
            return measured
        finally:
            loop.stop_all()
            tmux.kill_server()


def _window(name: str, pid: int, server: int, loop: Loop, seconds: float) -> tuple[str, float, int]:
    cycles = loop.event_names().count(Event.POLL_CYCLE)
    cpu = _cpu_seconds(pid) + _cpu_seconds(server)
    time.sleep(seconds)
    done = loop.event_names().count(Event.POLL_CYCLE) - cycles
    return name, (_cpu_seconds(pid) + _cpu_seconds(server) - cpu) / max(done, 1), done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--idle-sessions", type=int, default=10, help="sessions of the real daemon")
    parser.add_argument("--window", type=float, default=15.0, help="seconds per measured window")
    parser.add_argument("--rounds", type=int, default=2, help="open windows, each between two closed ones")
    parser.add_argument("--history", type=int, default=20_000, help="records in the log before the daemon starts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        size, took = items_view_bytes(args.items, args.sessions, Path(folder) / "events.jsonl")
    print(f"items view, {args.items} items and {args.sessions} sessions: {size:,} bytes in {took * 1000:.0f} ms")
    print(f"under 2 MB: {'yes' if size < LIMIT else 'NO'}")
    measured = idle_ratio(args.idle_sessions, args.window, rounds=args.rounds, history=args.history)
    for name, per_cycle, cycles in measured:
        print(f"idle cycle, page {name}: {per_cycle * 1000:.1f} ms CPU a cycle over {cycles} cycles")
    closed = [per for name, per, _ in measured if name == "closed"]
    opened = [per for name, per, _ in measured if name == "open"]
    # /proc counts CPU in clock ticks: a short window (the quick form) may read 0; one tick over the
    # shortest window is the least it can tell apart from nothing
    floor = 1 / os.sysconf("SC_CLK_TCK") / max(1, min(cycles for _, _, cycles in measured))
    mean = max(sum(closed) / len(closed), floor)
    open_mean = max(sum(opened) / len(opened), floor)
    if floor in {mean, open_mean}:
        print("a window read less than one clock tick: too short to measure, the ratio is only a bound")
    spread = (max(closed) - min(closed)) / mean
    print(f"closed windows spread (the noise): {spread * 100:.0f}% of their mean")
    print(f"idle cycle cost ratio, page open / closed: {open_mean / mean:.2f}")
    return 0 if size < LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
