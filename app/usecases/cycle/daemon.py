"""The poller daemon: one per state root, a heartbeat per cycle, a clean stop on a signal; with a
shared database, the host's lease heartbeat beside it and, while the database cannot be reached,
retries with a backoff (its sessions keep running)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from app.usecases.cluster.heartbeat import LeaseHeartbeat
from app.usecases.cluster.orphans import Orphans
from app.usecases.cycle.outage import StoreOutage
from app.usecases.cycle.poll import CycleSummary, PollCycle
from app.usecases.cycle.receipt_watch import Look, ReceiptWatch
from app.usecases.cycle.trouble import Trouble
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.unit_of_work import InUnitOfWork, UnitOfWork
from app.usecases.views.rate_budgets import Budgets, sorted_installations
from domain.errors import StoreUnreachable
from domain.events import Event, Level

HEARTBEAT = "heartbeat"
# `status` holds the lock shared for an instant to see whether a poller holds it: not a poller
_ACQUIRE_TRIES, _ACQUIRE_PAUSE = 3, 0.02
# how often the receipts are looked at beside the cycle for turns that ended: a look is one read of
# the records and a folder listing per running session; a turn's end reaches its item within this
# and one reaction
TURN_SCAN_SECONDS = 0.25
HIBERNATE_SCAN_SECONDS = 15.0  # how often idle agents are looked at: hibernation counts minutes, not seconds


def heartbeat_key(host: str, *, shared: bool) -> str:
    """Where a poller's last cycle is kept: one key per host when hosts share the database."""
    return f"{HEARTBEAT}:{host}" if shared else HEARTBEAT


class Lock(Protocol):
    def acquire(self, info: dict[str, Any]) -> None:
        """Raises when another poller holds it; `OSError` when the lock file cannot be opened or
        written (a read-only or full state folder): no other poller is implied."""

    def release(self) -> None: ...

    def note(self, info: dict[str, Any]) -> None:
        """Replace what the lock says about its holder (`status` reads it); never fails."""


class Blocked(Exception):
    """Another poller holds the state root."""


@dataclass
class Daemon(InUnitOfWork):
    cycle: PollCycle
    uow: UnitOfWork  # its heartbeat, a meta value, has no version: no conflict to settle
    lock: Lock
    interval_seconds: float
    version: str
    report: Callable[[str], None] = lambda line: None
    wait: Callable[[float], object] | None = None  # how the pause between cycles is taken
    leases: LeaseHeartbeat | None = None  # several hosts: this host's lease heartbeat
    orphans: Orphans | None = None
    heartbeat_key: str = HEARTBEAT
    watch: HarnessWatch | None = None  # its confirmation waits end when the daemon stops
    # closes the state root to other users; each path it changed, with its mode before (octal)
    tighten: Callable[[], list[tuple[str, str]]] = lambda: []
    # what runs beside the cycles once the lock is held (the webhook receiver); returns its stop
    serve: Callable[[], Callable[[], None]] | None = None
    # looked at beside the cycle (ReceiptWatch), each every its scan interval: what the agents ask,
    # posted (Asks.sweep); their turns that ended, said (TurnEnds.sweep)
    asks: Callable[[], object] | None = None
    ask_scan_seconds: float = 1.0
    turns: Callable[[], object] | None = None
    turn_scan_seconds: float = TURN_SCAN_SECONDS
    hibernate: Callable[[], object] | None = None  # idle agents hibernated (Hibernation.sweep)
    hibernate_scan_seconds: float = HIBERNATE_SCAN_SECONDS
    tidy: Callable[[], None] = lambda: None  # at start, under the lock: what no longer serves goes
    # at start, under the lock, before the first cycle gives out the slots: hibernations a crash cut
    # short are finished (Hibernation.recover), so an agent that ended holds no slot
    recover: Callable[[], object] = lambda: None

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.cycle.stopping = self._stop.is_set
        if self.watch is not None:
            self.watch.stopping = self._stop.is_set
        self._wait = self.wait or self._pause
        self.last: CycleSummary | None = None
        self._outage = StoreOutage(self.events, self.clock, self.interval_seconds)

    def stop(self, signum: int = 0, frame: FrameType | None = None) -> None:
        """Finish the item in hand, then stop: the cycle checks this between items."""
        self._stop.set()
        self._wake.set()

    def wake(self) -> None:
        """Something (a webhook's comment, kept in the inbox) waits to be worked. While the items
        are worked beside the cycle, its item's lane takes it up at once, from the caller's thread
        (not after a cycle's GitHub reads); only a comment whose item no listing
        has yet ends the pause for a full cycle."""
        if self.cycle.beside and not self._stop.is_set():
            with contextlib.suppress(Exception):  # a fault here: the pause's own wake meets it, or the cycle
                if not self.cycle.kept_unlisted():
                    self.cycle.run_kept()
                    return
        self._wake.set()

    def _pause(self, seconds: float) -> None:
        """The interval between cycles. A wake works what the inbox holds at once, from the last
        listing and without reading GitHub; only a kept comment whose item no listing has yet (the
        label race) ends the pause for a full cycle. So a burst of deliveries costs at most one
        read of every repository per interval, plus one per kept comment."""
        deadline = time.monotonic() + seconds  # the wait is on the machine's clock, whatever `clock` is
        while not self._stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if not self._wake.wait(left):
                continue
            self._wake.clear()  # after the wait: a comment kept since is in the inbox already
            if self._stop.is_set() or self.cycle.kept_unlisted():
                return
            try:
                self.cycle.run_kept()
            except Exception:  # the next cycle meets the same fault, and says it
                return

    def run(self, *, once: bool = False) -> int:
        started = self.clock.now().isoformat()
        # the monotonic reading lets `status`, another process of this machine, judge "overdue"
        # whatever the wall clock does
        info = {
            "pid": os.getpid(),
            "started": started,
            "started_monotonic": self.clock.monotonic(),
            "version": self.version,
        }
        try:
            self._acquire(info)
        except OSError as error:
            cause = f"cannot take the poller lock: {error}"
            self.events.emit(Event.POLLER_FAILED, level=Level.ERROR, pid=os.getpid(), cause=cause)
            raise
        except Exception as error:
            self.events.emit(Event.POLLER_BLOCKED, level=Level.ERROR, cause=str(error))
            raise Blocked(str(error)) from error
        stop_serving: Callable[[], None] | None = None
        try:
            for path, mode_before in self.tighten():
                self.events.emit(
                    Event.STATE_PERMISSIONS_TIGHTENED, level=Level.WARNING, path=path, mode_before=mode_before
                )
            self.tidy()
            self.recover()
            if self.serve is not None:  # after the lock: a second poller is "blocked", not "port in use"
                stop_serving = self.serve()
            self._join()
            self._loop(once=once, started=started, trouble=Trouble(self.events, self.lock, self.report, info))
        except Exception as error:
            cause = f"{type(error).__name__}: {error}"
            self.events.emit(Event.POLLER_FAILED, level=Level.ERROR, pid=os.getpid(), cause=cause)
            raise
        finally:
            if stop_serving is not None:
                stop_serving()
            if self.leases is not None:
                self.leases.stop()
            self.lock.release()
        return 0

    def _join(self) -> None:
        """Several hosts: renew before the first cycle, and end what this host ran for items
        taken while it was away."""
        if self.leases is not None:
            self.leases.start(pid=os.getpid(), version=self.version)
        if self.orphans is not None:
            self.orphans.sweep()

    def _loop(self, *, once: bool, started: str, trouble: Trouble) -> None:
        self.events.emit(Event.POLLER_STARTED, pid=os.getpid(), once=once, version=self.version)
        self.cycle.beside = not once  # no item's wait holds the cycle
        if not once:
            self.report(
                f"started as pid {os.getpid()}, a cycle every {self.interval_seconds:g}s; "
                "SIGTERM or Ctrl-C stops after the item in hand"
            )
        looks = [
            ("asks", self.asks, self.ask_scan_seconds),
            ("turn-ends", self.turns, self.turn_scan_seconds),
            ("hibernation", self.hibernate, self.hibernate_scan_seconds),
        ]
        receipts = ReceiptWatch(
            [Look(name, take, every) for name, take, every in looks if take is not None and not once],
            events=self.events,
            stopping=self._stop.is_set,
        )
        receipts.start()
        try:
            while not self._stop.is_set():
                pause = self._cycle(started, trouble, once=once)
                if once:
                    break
                # the interval is counted after each cycle, so a slow cycle never overlaps the next
                self._wait(pause)
        finally:
            receipts.stop()  # before the drain: no item's work is started after it
        self.cycle.drain()  # the items' work in hand (a wait cut short by the stop) ends under the lock
        self.cycle.beside = False  # a cycle run after this daemon's (a test's, `--once`) waits for its items
        self.events.emit(Event.POLLER_STOPPED, pid=os.getpid(), once=once)

    def _cycle(self, started: str, trouble: Trouble, *, once: bool) -> float:
        """One cycle and its heartbeat; the pause that follows. A failed one is said and survived
        (the next may find the disk freed, the lock released); `poll --once` exits 1 on it."""
        pause = self.interval_seconds
        try:
            summary = self.last = self.cycle.run()
            pause = max(self.interval_seconds, summary.min_interval_seconds)
            self._heartbeat(summary, started)
        except Exception as error:
            if once:
                raise
            if isinstance(error, StoreUnreachable):  # the database away: tried again less and less often
                pause = self._outage.failed(error)
            trouble.failed(error, at=self.clock.now(), pause=pause)
            return pause
        self._outage.ended()
        trouble.cleared()
        took = ((summary.finished_at or summary.started_at) - summary.started_at).total_seconds()
        self.report(f"cycle took {took:.2f}s: {summary.line()}")
        return pause

    def _acquire(self, info: dict[str, Any]) -> None:
        for _ in range(_ACQUIRE_TRIES - 1):
            try:
                self.lock.acquire(info)
                return
            except Exception:
                time.sleep(_ACQUIRE_PAUSE)
        self.lock.acquire(info)

    def _heartbeat(self, summary: CycleSummary, started: str) -> None:
        beat = {
            "pid": os.getpid(),
            "started": started,
            "interval_seconds": max(self.interval_seconds, summary.min_interval_seconds),  # the pause that follows
            "last_cycle_started": summary.started_at.isoformat(),
            "last_cycle_finished": (summary.finished_at or summary.started_at).isoformat(),
            "last_cycle_finished_monotonic": self.clock.monotonic(),
            "summary": summary.fields(),
        }
        # per tracker host (in App mode, per installation), its request budget as the cycle's last
        # reply said it: `status` and the page show it
        beat |= Budgets(summary.budgets, sorted_installations(summary.installations.values())).as_json()
        self.store.save_meta(self.heartbeat_key, json.dumps(beat))


def install_signal_handlers(daemon: Daemon) -> None:
    """SIGTERM and SIGINT stop the daemon at once, whichever thread the kernel hands them to.

    A Python handler runs only when the main thread next runs bytecode, and the main thread may be
    blocked on a worker while another thread took the signal: the worker would start the next
    item first. The C-level handler writes each signal to the wakeup pipe right away, and a
    watcher thread stops the daemon from there (never inside a handler: `Event.set` takes a lock
    the interrupted main thread may hold)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _noted)

    def watch() -> None:
        if os.read(read_end, 1):
            daemon.stop()

    threading.Thread(target=watch, name="signals", daemon=True).start()


def _noted(signum: int, frame: FrameType | None) -> None:
    """The watcher acts on the signal; this handler only keeps the default action (exit) away."""
