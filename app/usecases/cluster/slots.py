"""A host's slots, given out once a cycle after the repositories were read: a held item that needs
no agent gives its slot up, then the items that need one and hold none get the free slots (on the
host with the most, where several share the work), the one waiting longest first; the rest wait,
said and shown (`SlotWaits`). A new agent goes only to a host whose own free memory admits it, and a
hibernated one back to the host holding its conversation while that host is up (`Placement`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.usecases.cluster.leases import Leases
from app.usecases.cluster.slot_wait import SlotWaits, waits
from domain.authorize import Authorized, is_authorized
from domain.cluster import HostState, Listed, Placement
from domain.events import Event, Level
from domain.model import SessionRecord, SpawnMode, WorkItem
from domain.policy import Decision, spawn_armed
from domain.ports import ClockPort, ClusterPort, EventSink, StateStore
from domain.refs import RepoRef, WorkItemRef
from domain.slots import (
    MIB,
    Claim,
    admits_new_agent,
    agent_runs,
    conversation_host,
    slot_order,
    waiting_since,
    wants_slot,
)

Records = Mapping[WorkItemRef, SessionRecord]
Listings = Mapping[RepoRef, Sequence[Listed]]  # each repository's shared listing


@dataclass(frozen=True, slots=True)
class SlotConfig:
    """What says whether an item's first look starts its agent, as the intake decides it: armed by
    `spawn_mode`, and its author authorized (`authorized`: the rule with their permission read)."""

    spawn_mode: SpawnMode = SpawnMode.LABELED
    authorized: Callable[[WorkItem], Authorized] = lambda _item: Authorized()


@dataclass(frozen=True, slots=True)
class MemoryAdmission:
    """No new agent on this host while its free memory is below `min_free` bytes (None: off);
    `relieve` hibernates its longest-idle agent to make room (its item, or None when none could be),
    `relieve_now` the same, waited for (its item once that agent ended)."""

    min_free: int | None = None
    available: Callable[[], int | None] = lambda: None
    relieve: Callable[[], WorkItemRef | None] = lambda: None
    relieve_now: Callable[[], WorkItemRef | None] = lambda: None

    def short(self) -> bool:
        """Whether this host's own memory, read now, admits no new agent (what its heartbeat says)."""
        return not admits_new_agent(self.available(), min_free=self.min_free).choice


@dataclass(kw_only=True, eq=False)
class Slots:
    store: StateStore
    events: EventSink
    clock: ClockPort
    cluster: ClusterPort
    leases: Leases
    waits: SlotWaits
    config: SlotConfig = field(default_factory=SlotConfig)
    admission: MemoryAdmission = field(default_factory=MemoryAdmission)
    # items found needing no slot, with the listing and record that said so: an idle cycle reads no
    # ledger of theirs again until one of these changes or a comment is kept for them
    _idle: dict[WorkItemRef, tuple[Listed, SessionRecord | None]] = field(init=False, default_factory=dict)
    _short: bool = field(init=False, default=False)  # its memory was short with items waiting, said once

    def give(self, *, read: Sequence[RepoRef], worked: Sequence[RepoRef], records: Records) -> None:
        """`worked`: the repositories this host works this cycle, whose items it gives slots up for;
        `read`: those it read (it places their items); `records`: as the cycle read them."""
        kept = self._kept()
        listings = {repo: self.cluster.shared_listing(repo).listed for repo in worked}
        self._give_up(listings, records, kept)
        to_place = {repo: listings[repo] for repo in read if repo in listings}
        if to_place:
            self._place(to_place, records, kept)
        elif self.admission.min_free is not None:  # it places nothing: its memory may still hold others' waits
            available = self.admission.available()
            self._relieve(admits_new_agent(available, min_free=self.admission.min_free), available, waiting=0)

    def _kept(self) -> dict[WorkItemRef, datetime]:
        """Each item's oldest comment kept in the inbox: undelivered, whatever holds it."""
        oldest: dict[WorkItemRef, datetime] = {}
        for entry in self.store.inbox_index():
            oldest[entry.item] = min(entry.created_at, oldest.get(entry.item, entry.created_at))
        return oldest

    def _give_up(self, listings: Listings, records: Records, kept: Mapping[WorkItemRef, object]) -> None:
        listed = {entry.item.ref: entry for entries in listings.values() for entry in entries}
        for item in sorted(self.leases.held().items):
            if item.repo not in listings or agent_runs(records.get(item)):
                continue
            # read again, the ledger first: an agent started on the item's lane since the cycle's read
            # cleared its start only after its record was written
            ledger = self.store.ledger(item)
            entry = listed.get(item)
            starts = ledger is None and entry is not None and self._starts(entry)
            wanted = wants_slot(self.store.session(item), ledger, kept=item in kept, listed=entry is not None,
                                starts=starts)  # fmt: skip
            if not wanted.choice:
                self.cluster.release(item)  # several hosts: its session here ends as an orphan's

    def _place(self, read: Listings, records: Records, kept: Mapping[WorkItemRef, datetime]) -> None:
        leased = {lease.item for lease in self.cluster.leases() if lease.live}
        began = {WorkItemRef.parse(wait.item): wait.since for wait in waits(self.store.meta())}
        now = self.clock.now()
        wanting: dict[RepoRef, list[WorkItemRef]] = {}
        claims = []
        for repo, entries in read.items():
            wanting[repo] = []
            for entry in entries:
                item, record = entry.item.ref, records.get(entry.item.ref)
                if item in leased:
                    wanting[repo].append(item)  # it holds one: no longer waits
                elif self._wants(entry, record, kept):
                    wanting[repo].append(item)
                    since = waiting_since(oldest_comment=kept.get(item), wait_began=began.get(item), now=now)
                    claims.append(Claim(item, agent_runs(record), since, kept.get(item)))
        available = self.admission.available()  # this host's own, read now: where its own spawns go
        admitted = admits_new_agent(available, min_free=self.admission.min_free)
        starts = frozenset(claim.item for claim in claims if not claim.runs)
        homes = {item: home for item in starts if (home := conversation_host(records.get(item)))}
        placing = Placement(starts, homes, memory_short=not admitted.choice)
        placed = self.cluster.place(slot_order(claims), placing)
        left = starts - {lease.item for lease in placed}
        for lease in placed:
            self.events.emit(
                Event.CLUSTER_LEASE_PLACED, work_item=str(lease.item), host=lease.host, how=lease.how.value,
                previous=lease.previous or None,
            )  # fmt: skip
        if any(lease.host == self.leases.host for lease in placed):
            self.leases.renew()  # this host works what it was just given, in this cycle
        self.waits.memory_short = bool(left) and self._memory_holds(short_here=not admitted.choice)
        self.waits.homes = homes
        self._relieve(admitted, available, waiting=len(left))
        for repo, items in wanting.items():
            self.waits.seen(repo, items, now=now)  # the waits this cycle begins begin together
        listed = {entry.item.ref for entries in read.values() for entry in entries}
        self._idle = {item: was for item, was in self._idle.items() if item.repo not in read or item in listed}

    def _memory_holds(self, *, short_here: bool) -> bool:
        """Whether memory, not slots, keeps the items that wait: a live host with a free slot is short
        of it (this host by its own reading now, the others by their heartbeats)."""
        return any(
            view.state is HostState.ALIVE and view.free > 0
            and (short_here if view.host == self.leases.host else view.memory_short)
            for view in self.cluster.hosts()
        )  # fmt: skip

    def _relieve(self, admitted: Decision[bool], available: int | None, *, waiting: int) -> None:
        """Below `cluster.minFreeMemoryMiB` while items wait for a new agent (`waiting` of those this
        host placed, else the waits memory began), this host's longest-idle agent is hibernated to make
        room: its own memory is what it can free. Said once each time the memory falls short."""
        if not waiting and not admitted.choice:
            waiting = sum(1 for wait in waits(self.store.meta()) if wait.memory)
        if admitted.choice:
            self._short = False  # the memory is back: a later shortage is said again
        if admitted.choice or not waiting:
            return
        relieved = self.admission.relieve()
        if self._short:
            return
        self._short = True
        self.events.emit(
            Event.CLUSTER_MEMORY_LOW, level=Level.WARNING,
            available_mib=available // MIB if available is not None else None,
            min_free_mib=(self.admission.min_free or 0) // MIB, waiting=waiting,
            hibernated=str(relieved) if relieved is not None else None, reason=admitted.reason,
        )  # fmt: skip

    def _wants(self, entry: Listed, record: SessionRecord | None, kept: Mapping[WorkItemRef, object]) -> bool:
        item = entry.item.ref
        if agent_runs(record) or item in kept:
            self._idle.pop(item, None)
            return True
        if self._idle.get(item) == (entry, record):
            return False
        ledger = self.store.ledger(item)
        wanted = wants_slot(record, ledger, kept=False, listed=True, starts=ledger is None and self._starts(entry))
        if wanted.choice:
            self._idle.pop(item, None)
        else:
            self._idle[item] = (entry, record)
        return wanted.choice

    def _starts(self, entry: Listed) -> bool:
        """Whether the item's first look starts its agent (the intake's rule for a start)."""
        item = entry.item
        armed = spawn_armed(item, mode=self.config.spawn_mode, label=entry.label).choice
        return armed and is_authorized(item.author, self.config.authorized(item), repo=item.ref.repo)
