"""The cluster of one: with the embedded SQLite store this host holds every item and reads every
repository, as the-loop did before several hosts could share the work."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from domain.cluster import Departed, Held, HostState, HostView, Lease, Listed, Shared
from domain.ports import ClusterPort
from domain.refs import RepoRef, WorkItemRef


class SingleHost(ClusterPort):
    """`ClusterPort` where nothing is shared: every renewal holds everything, every repository lock
    is this host's, and a listing is kept in memory from its read to its work in the same cycle."""

    def __init__(self, *, host: str, max_sessions: int) -> None:
        self._host = host
        self._max_sessions = max_sessions
        self._listings: dict[RepoRef, Shared] = {}

    @property
    def host(self) -> str:
        return self._host

    @property
    def shared(self) -> bool:
        return False

    def join(self, *, pid: int, version: str) -> None:
        pass

    def renew(self) -> Held:
        return Held(everything=True)

    def leave(self) -> None:
        pass

    def hosts(self) -> list[HostView]:
        return [HostView(self._host, self._max_sessions, 0, 0.0, HostState.ALIVE)]

    def leases(self) -> list[Lease]:
        return []

    def place(self, items: Iterable[WorkItemRef]) -> list[Lease]:
        return []  # everything is this host's already

    def release(self, item: WorkItemRef) -> None:
        pass

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
