"""An in-memory cluster: one shared 'database' with its own clock, and a `ClusterPort` per host."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from domain.cluster import (
    Departed,
    Handover,
    Held,
    HostState,
    HostView,
    Lease,
    LeaseTiming,
    Listed,
    Placement,
    Shared,
)
from domain.errors import LeaseLost, StoreUnreachable
from domain.model import ItemState
from domain.ports import ClusterPort
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.clock import FakeClock


@dataclass
class _Host:
    max_sessions: int
    heartbeat_at: datetime
    stopped: bool = False
    pid: int = 0
    version: str = ""
    memory_short: bool = False


@dataclass
class _Lease:
    host: str
    expires_at: datetime
    starts_at: datetime
    previous: str = ""
    how: Handover = Handover.PLACED


@dataclass
class FakeClusterDb:
    """The shared tables, and the database's clock (`now`, moved by `advance`)."""

    clock: FakeClock = field(default_factory=FakeClock)
    hosts: dict[str, _Host] = field(default_factory=dict)
    leases: dict[WorkItemRef, _Lease] = field(default_factory=dict)
    listings: dict[RepoRef, dict[WorkItemRef, tuple[Listed | Departed, bool]]] = field(default_factory=dict)
    poll_locks: dict[RepoRef, str] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    @property
    def now(self) -> datetime:
        return self.clock.now()

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.clock.advance(seconds)


class FakeCluster(ClusterPort):
    """One host's view of a `FakeClusterDb`. `unreachable` makes every call raise
    `StoreUnreachable`, and drops this host's repository locks (its connection is gone)."""

    def __init__(self, db: FakeClusterDb, *, host: str, max_sessions: int = 20, timing: LeaseTiming | None = None):
        self.db = db
        self._host = host
        self._max = max_sessions
        self.timing = timing or LeaseTiming(30, 20)
        self._unreachable = False
        self.fail_renewals = False  # only renewals fail (a heartbeat stuck while the rest works)

    @property
    def host(self) -> str:
        return self._host

    @property
    def shared(self) -> bool:
        return True

    @property
    def unreachable(self) -> bool:
        return self._unreachable

    @unreachable.setter
    def unreachable(self, value: bool) -> None:
        self._unreachable = value
        if value:
            self.drop()

    def drop(self) -> None:
        """The connection ends: the repository locks go with it."""
        with self.db.lock:
            self.db.poll_locks = {r: h for r, h in self.db.poll_locks.items() if h != self._host}

    def _check(self) -> None:
        if self._unreachable:
            raise StoreUnreachable(f"fake cluster: {self._host} cannot reach the database")

    def _beat(self, *, memory_short: bool = False) -> None:
        host = self.db.hosts.setdefault(self._host, _Host(self._max, self.db.now))
        host.heartbeat_at, host.stopped, host.max_sessions = self.db.now, False, self._max
        host.memory_short = memory_short

    def join(self, *, pid: int, version: str) -> None:
        self._check()
        with self.db.lock:
            self._beat()
            self.db.hosts[self._host].pid, self.db.hosts[self._host].version = pid, version

    def renew(self, *, memory_short: bool = False) -> Held:
        self._check()
        if self.fail_renewals:
            raise StoreUnreachable(f"fake cluster: {self._host}'s renewal timed out")
        with self.db.lock:
            self._beat(memory_short=memory_short)
            held = set()
            for item, lease in self.db.leases.items():
                if lease.host == self._host:
                    lease.expires_at = self.db.now + timedelta(seconds=self.timing.expiry_seconds)
                    if lease.starts_at <= self.db.now:
                        held.add(item)
            return Held(frozenset(held))

    def leave(self) -> None:
        self._check()
        with self.db.lock:
            if self._host in self.db.hosts:
                self.db.hosts[self._host].stopped = True

    def hosts(self) -> list[HostView]:
        self._check()
        with self.db.lock:
            return [self._view(name) for name in sorted(self.db.hosts)]

    def _view(self, name: str) -> HostView:
        host = self.db.hosts[name]
        age = (self.db.now - host.heartbeat_at).total_seconds()
        state = (
            HostState.STOPPED
            if host.stopped
            else (HostState.ALIVE if age < self.timing.expiry_seconds else HostState.LOST)
        )
        count = sum(1 for lease in self.db.leases.values() if lease.host == name and lease.expires_at > self.db.now)
        return HostView(name, host.max_sessions, count, age, state, host.version, host.pid, host.memory_short)

    def leases(self) -> list[Lease]:
        self._check()
        with self.db.lock:
            return [self._lease(item, lease) for item, lease in sorted(self.db.leases.items()) if lease.host]

    def _lease(self, item: WorkItemRef, lease: _Lease) -> Lease:
        expires = (lease.expires_at - self.db.now).total_seconds()
        starts = max(0.0, (lease.starts_at - self.db.now).total_seconds())
        return Lease(item, lease.host, expires, starts, lease.previous, lease.how)

    def place(self, items: Iterable[WorkItemRef], placement: Placement | None = None) -> list[Lease]:
        self._check()
        placing = placement or Placement()
        made = []
        with self.db.lock:
            for item in dict.fromkeys(items):  # in the order given
                lease = self.db.leases.get(item)
                if lease is not None and lease.host and lease.expires_at > self.db.now:
                    continue
                views = [self._view(name) for name in self.db.hosts]
                chosen = placing.host_for(item, views, placer=self._host, timing=self.timing)
                if chosen is None:
                    continue
                previous = lease.host if lease else ""
                how = Handover.TAKEN_OVER if previous else Handover.PLACED
                expires = self.db.now + timedelta(seconds=self.timing.expiry_seconds)
                self.db.leases[item] = _Lease(chosen, expires, self.db.now, previous, how)
                made.append(self._lease(item, self.db.leases[item]))
        return made

    def release(self, item: WorkItemRef) -> None:
        self._check()
        with self.db.lock:
            lease = self.db.leases.get(item)
            if lease is not None and lease.host == self._host:
                del self.db.leases[item]

    def hand_over(self, item: WorkItemRef, to: str) -> Lease:
        self._check()
        with self.db.lock:
            lease = self.db.leases.get(item)
            if lease is None or lease.host != self._host or lease.expires_at <= self.db.now:
                raise LeaseLost(str(item), holder=lease.host if lease else "")
            if to == self._host or to not in self.db.hosts or self._view(to).state is not HostState.ALIVE:
                raise ValueError(f"host {to!r} is not another live host of this cluster")
            starts = self.db.now + timedelta(seconds=self.timing.renew_deadline_seconds)
            expires = starts + timedelta(seconds=self.timing.expiry_seconds)
            self.db.leases[item] = replace(
                lease, host=to, previous=self._host, how=Handover.MOVED, starts_at=starts, expires_at=expires
            )
            return self._lease(item, self.db.leases[item])

    def poll_lock(self, repo: RepoRef) -> bool:
        self._check()
        with self.db.lock:
            return self.db.poll_locks.setdefault(repo, self._host) == self._host

    def share(self, repo: RepoRef, listed: Sequence[Listed], departed: Sequence[Departed]) -> None:
        self._check()
        with self.db.lock:
            before = self.db.listings.get(repo, {})
            now: dict[WorkItemRef, tuple[Listed | Departed, bool]] = {}
            for entry in listed:
                kept = before.get(entry.item.ref)
                history = entry.history or (kept is not None and isinstance(kept[0], Listed) and kept[1])
                now[entry.item.ref] = (entry, history)
            for gone in departed:
                now[gone.item] = (gone, False)
            self.db.listings[repo] = now

    def shared_listing(self, repo: RepoRef) -> Shared:
        self._check()
        with self.db.lock:
            rows = self.db.listings.get(repo, {})
            listed = [replace(e, history=h) for e, h in rows.values() if isinstance(e, Listed)]
            departed = [e for e, _ in rows.values() if isinstance(e, Departed) and e.state is not ItemState.OPEN]
        return Shared(tuple(sorted(listed, key=lambda e: e.item.ref)), tuple(sorted(departed, key=lambda d: d.item)))
