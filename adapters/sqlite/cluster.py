"""The cluster of one: with the embedded SQLite store this host reads every repository, and its
leases are its slots — at most `cluster.maxSessions` items at once, given and given up through the
same port, in the same order, as where several hosts share the work."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Sequence

from domain.cluster import Departed, Held, HostState, HostView, Lease, Listed, Placement, Shared
from domain.ports import ClusterPort
from domain.refs import RepoRef, WorkItemRef


class SingleHost(ClusterPort):
    """`ClusterPort` where nothing is shared: every repository lock is this host's, a listing is kept
    in memory from its read to its work in the same cycle, and so are the leases, which never expire
    (no other host could take them). A new run starts with none: the first cycle gives the items
    whose agent runs their slots back before any waiting item gets one."""

    def __init__(self, *, host: str, max_sessions: int) -> None:
        self._host = host
        self._max_sessions = max_sessions
        self._listings: dict[RepoRef, Shared] = {}
        self._leased: dict[WorkItemRef, None] = {}  # in the order they were given
        self._lock = threading.Lock()

    @property
    def host(self) -> str:
        return self._host

    @property
    def shared(self) -> bool:
        return False

    def join(self, *, pid: int, version: str) -> None:
        pass

    def renew(self, *, memory_short: bool = False) -> Held:
        with self._lock:
            return Held(frozenset(self._leased))

    def leave(self) -> None:
        pass

    def hosts(self) -> list[HostView]:
        with self._lock:
            return [HostView(self._host, self._max_sessions, len(self._leased), 0.0, HostState.ALIVE)]

    def leases(self) -> list[Lease]:
        with self._lock:
            return [Lease(item, self._host, math.inf) for item in sorted(self._leased)]

    def place(self, items: Iterable[WorkItemRef], placement: Placement | None = None) -> list[Lease]:
        """This host's memory is the placer's own reading (`placement.memory_short`), never a heartbeat's."""
        placing = placement or Placement()
        made = []
        with self._lock:
            for item in dict.fromkeys(items):
                if item in self._leased or (placing.memory_short and item in placing.starts):
                    continue
                if len(self._leased) >= self._max_sessions:
                    break
                self._leased[item] = None
                made.append(Lease(item, self._host, math.inf))
        return made

    def release(self, item: WorkItemRef) -> None:
        with self._lock:
            self._leased.pop(item, None)

    def hand_over(self, item: WorkItemRef, to: str) -> Lease:
        raise ValueError(
            f"host {to!r} is not another live host of this cluster: with state.backend sqlite this host works alone"
        )

    def poll_lock(self, repo: RepoRef) -> bool:
        return True

    def share(self, repo: RepoRef, listed: Sequence[Listed], departed: Sequence[Departed]) -> None:
        self._listings[repo] = Shared(tuple(listed), tuple(departed))

    def shared_listing(self, repo: RepoRef) -> Shared:
        return self._listings.get(repo, Shared())
