"""The host's heartbeat: its leases renewed on a thread of their own, every third of the renew
deadline — a cycle may take minutes (a spawn waits for its harness), a lease lasts seconds. Nothing
ends that thread: a failed renewal or a failed arm of the watchdog is said, and tried again."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from app.usecases.cluster.leases import Leases
from domain.errors import StateError
from domain.events import Event, Level
from domain.ports import AgentWatchdogPort, ClusterPort, EventSink

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class Unarmed:
    """A spell without a watchdog guarding the agents' deadline."""

    since: float
    tries: int = 0
    retry_at: float = 0.0


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
    _renew_at: float = field(init=False, default=0.0)
    _unarmed: Unarmed | None = field(init=False, default=None)

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
        self._renew_at = self.monotonic() + self.leases.timing.renew_every_seconds
        if self.watchdog is not None:
            self.watchdog.start()
        timing = self.leases.timing
        self.events.emit(
            Event.CLUSTER_JOINED, host=self.cluster.host, lease_seconds=timing.expiry_seconds,
            renew_deadline_seconds=timing.renew_deadline_seconds,
            renew_every_seconds=round(timing.renew_every_seconds, 3),
        )  # fmt: skip
        self._guard()
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
        while not self._stop.wait(self._pause()):
            try:
                self.beat()
            except Exception:  # whatever one beat met, the next comes: a heartbeat that ends is a lost host
                log.exception("a lease heartbeat failed; the next one comes as planned")

    def _pause(self) -> float:
        due = self._renew_at if self._unarmed is None else min(self._renew_at, self._unarmed.retry_at)
        return max(0.0, due - self.monotonic())

    def beat(self) -> None:
        """A renewal when one is due, else another try at arming the watchdog while it is not armed."""
        now = self.monotonic()
        if now >= self._renew_at:
            self._renew_at = now + self.leases.timing.renew_every_seconds
            self._renew()
        elif self._unarmed is not None and now >= self._unarmed.retry_at:
            self.leases.rearm()
        else:
            return
        self._guard()

    def _renew(self) -> None:
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

    def _guard(self) -> None:
        """While no watchdog guards the agents' deadline this host acts on none of its items (see
        `Leases`) and ends its agents itself at each try — any left, or started meanwhile — so none
        outlives its lease even if the daemon dies next; said once when the spell starts and ends."""
        cause, now = self.leases.unarmed, self.monotonic()
        spell = self._unarmed
        if cause is None:
            if spell is not None:
                self._unarmed = None
                self.events.emit(
                    Event.CLUSTER_WATCHDOG_ARMED, unarmed_seconds=round(now - spell.since, 3), tries=spell.tries
                )
            return
        if spell is None:
            spell = self._unarmed = Unarmed(since=now)
            self.events.emit(Event.CLUSTER_WATCHDOG_UNARMED, level=Level.ERROR, cause=cause)
        spell.tries += 1
        spell.retry_at = now + self.leases.timing.arm_retry_seconds(spell.tries)
        if self.watchdog is not None:
            self.watchdog.end_now(reason=f"no watchdog guards this host's agents: {cause}")
