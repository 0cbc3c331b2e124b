"""What `status` and `sessions list` show of the hosts sharing the work: each host, its heartbeat,
its sessions and free slots (a host alone: its slots, once an item waits for one), and the items
waiting for a free slot; and, when the database cannot be reached, what the poller here says of the
outage."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from app.usecases.cluster.slot_wait import Wait
from domain.cluster import HostState, HostView
from domain.model import SessionRecord, SessionStatus
from domain.ports import ClusterPort
from domain.slots import SessionBound


@dataclass(frozen=True, slots=True)
class ClusterView:
    host: str  # this host
    shared: bool
    hosts: tuple[HostView, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "shared": self.shared,
            "hosts": [
                {
                    "host": view.host,
                    "state": view.state.value,
                    "heartbeat_seconds_ago": round(view.heartbeat_age_seconds, 3),
                    "sessions": view.leases,
                    "max_sessions": view.max_sessions,
                    "free": view.free,
                    "memory_short": view.memory_short,
                    "version": view.version or None,
                    "pid": view.pid or None,
                    "this_host": view.host == self.host,
                }
                for view in self.hosts
            ],
        }

    def lines(self) -> list[str]:
        alive = sum(1 for view in self.hosts if view.state is HostState.ALIVE)
        lines = [f"cluster: this host is {self.host}; {alive} of {len(self.hosts)} hosts alive"]
        width = max((len(view.host) for view in self.hosts), default=0)
        for view in self.hosts:
            lines.append(
                f"  {view.host.ljust(width)}  {view.state.value:<7}  heartbeat {view.heartbeat_age_seconds:.0f}s ago"
                f"  sessions {view.leases}/{view.max_sessions}  free {view.free}"
                + ("  short of memory: no new agent" if view.memory_short else "")
                + ("  (this host)" if view.host == self.host else "")
            )
        return lines


def cluster_view(cluster: ClusterPort, records: Iterable[SessionRecord]) -> ClusterView:
    """The hosts as the database sees them; alone, this host's sessions are its open records."""
    hosts = cluster.hosts()
    if not cluster.shared:
        count = sum(1 for record in records if record.status is not SessionStatus.CLOSED)
        hosts = [replace(view, leases=count) for view in hosts]
    return ClusterView(cluster.host, cluster.shared, tuple(hosts))


def slot_lines(view: ClusterView, bound: SessionBound, waiting: Sequence[Wait], now: datetime) -> list[str]:
    """The hosts and the waits, where hosts share the work; a host alone says its slots only while
    an item waits for one (what it shows otherwise is what it always did)."""
    waits = [wait.line(now) for wait in waiting]
    if view.shared:
        return [*view.lines(), *waits]
    if not waiting:
        return []
    used = sum(host.leases for host in view.hosts)
    return [f"slots: {used} of {bound.most} in use (cluster.maxSessions: {bound.said()})", *waits]


def outage_lines(error: str, holder: Mapping[str, Any] | None) -> list[str]:
    """The database could not be reached by `status`; the poller here may say more (its lock)."""
    lines = [f"database: UNREACHABLE: {error}"]
    failing = (holder or {}).get("failing")
    if isinstance(failing, Mapping):
        lines.append(
            f"poller: its cycles fail since {failing.get('since', '?')} ({failing.get('cycles', '?')} in a row); "
            "it tries again less and less often, counts no delivery meanwhile, and its sessions keep running "
            "(their agents only until the renew deadline: then this host's watchdog ends them)"
        )
    return lines
