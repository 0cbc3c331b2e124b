"""`sessions move`: hand a work item to another host cleanly — its lease first (the receiver starts
only once this host has stopped trusting it), then its session here is ended, and the receiver
starts it: resuming the conversation when its harness can there, else fresh (told it moved)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace

from app.usecases.cluster.leases import Leases
from app.usecases.unit_of_work import UnitOfWork
from domain.errors import TmuxFailed, TmuxUnanswered
from domain.events import Event
from domain.ledger import StartRequest
from domain.model import SessionRecord, SessionState, SessionStatus
from domain.ports import ClusterPort, TmuxPort
from domain.refs import WorkItemRef

OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class Moved:
    item: WorkItemRef
    to: str
    ended_here: bool  # a session of it ran here, and is gone now
    starts_in_seconds: float


class Mover:
    def __init__(
        self,
        *,
        cluster: ClusterPort,
        leases: Leases,
        uow: UnitOfWork,
        tmux: TmuxPort,
        grace_seconds: float,
        pause: Callable[[float], None],
    ) -> None:
        self._cluster = cluster
        self._leases = leases
        self._uow = uow
        self._store, self._events, self._clock = uow.store, uow.events, uow.clock
        self._tmux = tmux  # this host's own server: once handed over, the session here is an orphan
        self._grace = grace_seconds
        self._pause = pause

    def move(self, item: WorkItemRef, to: str) -> Moved:
        """`LeaseLost` when this host does not hold `item`; `ValueError` when `to` is not another
        live host (nothing changed then)."""
        before = self._store.session(item)
        ran_here = self._tmux.session_state(item.target) in {SessionState.LIVE, SessionState.DEAD}
        lease = self._cluster.hand_over(item, to)
        # only once the daemon here has let go of the item: until then it may still work it (and
        # would take a start request as its own, the harness here still running)
        self._wait_untrusted()
        # the daemon here may have ended it first, as the orphan it now is: ended either way
        self._end_here(item, pane=before.pane_id if before else "", mark=before.spawn_id if before else "")
        ended = ran_here and self._tmux.session_state(item.target) is SessionState.ABSENT
        self._record_moved(item, to)
        self._events.emit(
            Event.SESSION_MOVED, source=OPERATOR, work_item=str(item), to=to, ended_here=ended,
            starts_in_seconds=lease.starts_in_seconds,
        )  # fmt: skip
        return Moved(item, to, ended, lease.starts_in_seconds)

    def _record_moved(self, item: WorkItemRef, to: str) -> None:
        """The receiver may resume the conversation (its harness decides); an open session starts
        there right away, before any comment."""

        def moved(record: SessionRecord) -> SessionRecord:
            saved = self._store.save_session(
                replace(record, host=to, previous_host=self._cluster.host, last_event="session.moved")
            )
            ledger = self._store.ledger(item)
            active = record.status is SessionStatus.ACTIVE
            if active and ledger is not None and ledger.start is None and not ledger.stopped:
                self._store.save_ledger(replace(ledger, start=StartRequest("moved", self._clock.now())))
            return saved

        # the daemon here may be saving them too: read again and decide again
        self._uow.save(moved, read=lambda: self._store.session(item), tries=3)

    def _wait_untrusted(self) -> None:
        """Until this host's daemon has renewed since (and so knows the item is gone) or its trust
        in the last renewal has run out: only then is the session here surely left alone."""
        handed = self._clock.now()
        deadline = self._leases.timing.renew_deadline_seconds
        while (waited := (self._clock.now() - handed).total_seconds()) < deadline:
            me = next((h for h in self._cluster.hosts() if h.host == self._cluster.host), None)
            if me is None or me.heartbeat_age_seconds < waited or me.heartbeat_age_seconds >= deadline:
                return  # renewed since the hand-over, or no daemon renews here at all
            self._pause(min(0.2, deadline - waited))

    def _end_here(self, item: WorkItemRef, *, pane: str, mark: str) -> None:
        """The harness is ended gracefully first (it may write its transcript), then its session."""
        state = self._tmux.session_state(item.target)
        if state in {SessionState.ABSENT, SessionState.UNKNOWN}:
            return
        with suppress(TmuxFailed, TmuxUnanswered):
            if mark and state is SessionState.LIVE:
                self._tmux.terminate_harness(item.target, grace_seconds=self._grace, pane=pane, mark=mark)
        with suppress(TmuxFailed, TmuxUnanswered):
            self._tmux.kill(item.target)
