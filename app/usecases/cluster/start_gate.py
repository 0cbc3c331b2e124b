"""This host's own memory, read right before a new agent starts on it for an item it holds (a first
spawn, or a hibernated agent's resume): the placement weighed it earlier — another host's by this
host's heartbeat, up to a renewal old. Short, the agent resting longest is hibernated first; still
short, nothing starts and the item's slot is given back (`cluster.start_held`)."""

from __future__ import annotations

from dataclasses import dataclass

from app.usecases.cluster.leases import Leases
from app.usecases.cluster.slots import MemoryAdmission
from domain.events import Event, Level
from domain.model import SessionRecord
from domain.policy import Decision
from domain.ports import EventSink
from domain.refs import WorkItemRef
from domain.slots import MIB, AtStart, agent_runs, at_start


@dataclass(kw_only=True, eq=False)
class StartGate:
    admission: MemoryAdmission
    leases: Leases
    events: EventSink

    def admits(self, item: WorkItemRef, record: SessionRecord | None) -> Decision[bool]:
        """Whether a new agent may start here for `item` now (`record`: its session as the start found
        it). One whose agent holds its slot (a respawn) was never placed by memory, nor is it here."""
        min_free = self.admission.min_free
        if min_free is None or agent_runs(record):
            return Decision(True, "no memory admission for it")  # nothing read
        available = self.admission.available()
        decision = at_start(available, min_free=min_free, relieved=False)
        hibernated = None
        if decision.choice is AtStart.RELIEVE:
            hibernated = self.admission.relieve_now()
            if hibernated is not None:
                available = self.admission.available()
            decision = at_start(available, min_free=min_free, relieved=True)
        if decision.choice is AtStart.GIVE_BACK:
            self._give_back(item, decision.reason, available=available, hibernated=hibernated)
        return Decision(decision.choice is AtStart.START, decision.reason)

    def _give_back(
        self, item: WorkItemRef, reason: str, *, available: int | None, hibernated: WorkItemRef | None
    ) -> None:
        """The slot goes back after the heartbeat says the shortage: a placement reading the heartbeat
        it replaced would give the item straight back to this host."""
        self.leases.renew()
        self.leases.give_back(item)
        self.events.emit(
            Event.CLUSTER_START_HELD, level=Level.WARNING, work_item=str(item),
            available_mib=available // MIB if available is not None else None,
            min_free_mib=(self.admission.min_free or 0) // MIB,
            hibernated=str(hibernated) if hibernated is not None else None, reason=reason,
        )  # fmt: skip
