"""Ending this host's own sessions of items another host now holds: a host back from a partition,
or restarted while its tmux server lived on, finds its leases gone and ends what it ran for them."""

from __future__ import annotations

from collections.abc import Iterable

from domain.errors import StateError, TmuxFailed, TmuxUnanswered
from domain.events import Event, Level
from domain.model import SessionState
from domain.ports import ClusterPort, EventSink, TmuxPort
from domain.refs import WorkItemRef


class Orphans:
    """`tmux` is this host's own server, unguarded: the items are, by definition, no longer held
    here. Nothing on another host is ever touched: each host has its own tmux server. A session
    tmux did not answer about is tried again next time."""

    def __init__(self, *, tmux: TmuxPort, cluster: ClusterPort, events: EventSink) -> None:
        self._tmux = tmux
        self._cluster = cluster
        self._events = events
        self._pending: set[WorkItemRef] = set()

    def end(self, lost: Iterable[WorkItemRef]) -> int:
        """End the sessions here of the items this host lost (and of those not ended last time)."""
        self._pending |= set(lost)
        ended = 0
        for item in sorted(self._pending):
            state = self._tmux.session_state(item.target)
            if state is SessionState.UNKNOWN:
                continue
            self._pending.discard(item)
            if state is SessionState.ABSENT:
                continue
            try:
                self._tmux.kill(item.target)
            except (TmuxFailed, TmuxUnanswered) as error:
                self._events.emit(Event.CLUSTER_ORPHAN_ENDED, level=Level.WARNING, work_item=str(item),
                                  ended=False, cause=str(error))  # fmt: skip
                self._pending.add(item)
                continue
            ended += 1
            self._events.emit(Event.CLUSTER_ORPHAN_ENDED, work_item=str(item), ended=True, state_before=state.value)
        return ended

    def sweep(self) -> int:
        """At start: end the sessions here of every item another host holds (this host may have
        been away while they were taken)."""
        if not self._cluster.shared:
            return 0
        try:
            leases = self._cluster.leases()
        except StateError:
            return 0  # the next renewal reports the outage
        return self.end(lease.item for lease in leases if lease.live and lease.host != self._cluster.host)
