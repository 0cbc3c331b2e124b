"""The host's heartbeat: its leases renewed on a thread of their own, every third of the renew
deadline — a cycle may take minutes (a spawn waits for its harness), a lease lasts seconds."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from app.usecases.leases import Leases
from domain.errors import StateError
from domain.events import Event, Level
from domain.ports import AgentWatchdogPort, ClusterPort, EventSink


@dataclass(kw_only=True, eq=False)
class LeaseHeartbeat:
    leases: Leases
    cluster: ClusterPort
    events: EventSink
    monotonic: Callable[[], float]
    watchdog: AgentWatchdogPort | None = None
    _stop: threading.Event = field(init=False, default_factory=threading.Event)
    _thread: threading.Thread | None = field(init=False, default=None)
    _failing_since: float | None = field(init=False, default=None)

    @property
    def failing_for(self) -> float | None:
        """Seconds since renewals began to fail; None while they succeed."""
        since = self._failing_since
        return None if since is None else self.monotonic() - since

    def start(self, *, pid: int, version: str) -> None:
        """Join and renew once before the first cycle (`StateError` if the database is not there),
        start the host's agent watchdog (`OSError` if it cannot be: no agent may run unguarded),
        then keep renewing in the background. A single host has nothing to renew, and its agents
        nothing to fear: no other host can take its items."""
        if not self.cluster.shared:
            return
        self.cluster.join(pid=pid, version=version)
        self.leases.renew()  # records the agents' deadline before the watchdog reads it
        if self.watchdog is not None:
            self.watchdog.start()
        timing = self.leases.timing
        self.events.emit(
            Event.CLUSTER_JOINED, host=self.cluster.host, lease_seconds=timing.expiry_seconds,
            renew_deadline_seconds=timing.renew_deadline_seconds,
            renew_every_seconds=round(timing.renew_every_seconds, 3),
        )  # fmt: skip
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=30)
        self._thread = None
        try:
            self.cluster.leave()
            self.events.emit(Event.CLUSTER_LEFT, host=self.cluster.host)
        except StateError:
            pass  # its heartbeat simply stops: the leases run out as for a lost host

    def _run(self) -> None:
        while not self._stop.wait(self.leases.timing.renew_every_seconds):
            self.beat()

    def beat(self) -> None:
        """One renewal; a failure is logged once per outage, and the recovery once, with what other
        hosts took meanwhile (its sessions here are ended by the next cycle)."""
        try:
            lost = self.leases.renew()
        except StateError as error:
            if self._failing_since is None:
                self._failing_since = self.monotonic()
                self.events.emit(Event.CLUSTER_RENEW_FAILED, level=Level.WARNING, cause=str(error))
            return
        failed_for = self.failing_for
        self._failing_since = None
        if failed_for is not None or lost:
            self.events.emit(
                Event.CLUSTER_RENEWED, failed_for_seconds=round(failed_for or 0.0, 3), lost=sorted(map(str, lost))
            )
