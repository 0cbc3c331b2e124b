"""Several hosts sharing the work: hosts, leases on work items, what a repository's reader listed,
and the rules for placing an item and for trusting a lease."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from domain.model import ItemState, WorkItem
from domain.policy import Decision
from domain.prompts import one_line
from domain.refs import WorkItemRef


@dataclass(frozen=True, slots=True)
class LeaseTiming:
    """How long a lease lasts after its holder's last renewal (judged on the database's clock), and
    how long the holder trusts that renewal itself (on its own monotonic clock). The deadline is
    shorter than the expiry, so a holder that can no longer renew stops acting on an item before
    anyone else can take it; the difference bounds how long one tmux action may take."""

    expiry_seconds: float = 30.0
    renew_deadline_seconds: float = 20.0

    def __post_init__(self) -> None:
        if not 0 < self.renew_deadline_seconds < self.expiry_seconds:
            raise ValueError(
                f"the renew deadline ({self.renew_deadline_seconds:g}s) must be above 0 and shorter than "
                f"the lease's expiry ({self.expiry_seconds:g}s)"
            )

    @property
    def renew_every_seconds(self) -> float:
        """Two renewals may fail before the deadline passes."""
        return self.renew_deadline_seconds / 3

    @property
    def margin_seconds(self) -> float:
        return self.expiry_seconds - self.renew_deadline_seconds

    def agents_deadline(self, *, sent: float) -> float:
        """When this host's agents must end (its own monotonic clock) unless a later renewal
        succeeds, for a renewal whose request left at `sent`: the renew deadline, the moment the
        host stops trusting that renewal. The database runs the lease from a moment after `sent`,
        so the lease can pass to another host no earlier than `sent + expiry`: the margin is left
        to end the agents in (see `kill_grace`) and to absorb clocks that run at different rates."""
        return sent + self.renew_deadline_seconds

    def kill_grace(self, configured: float) -> float:
        """How long an agent asked to end (SIGTERM) is given before it is killed: within half the
        margin, so it is gone before its lease can pass."""
        return max(0.0, min(configured, self.margin_seconds / 2))

    def arm_retry_seconds(self, tries: int) -> float:
        """How long the heartbeat waits, after its `tries`-th failed arm of the watchdog in a row,
        before trying again: doubling from a tenth of a second, never longer than between renewals."""
        return min(self.renew_every_seconds, 0.1 * 2.0 ** max(0, tries - 1))

    @property
    def watch_every_seconds(self) -> float:
        """How often the host's watchdog looks at the deadline: a small part of the margin."""
        return min(1.0, self.margin_seconds / 10)


class HostState(enum.Enum):
    ALIVE = "alive"  # its heartbeat is younger than the lease expiry
    STOPPED = "stopped"  # it stopped cleanly; its leases run out or are renewed when it starts again
    LOST = "lost"  # no heartbeat within the lease expiry: its leases expire and are taken over


@dataclass(frozen=True, slots=True)
class HostView:
    """One host as the database sees it (ages on the database's clock)."""

    host: str
    max_sessions: int
    leases: int  # leases it holds that have not expired
    heartbeat_age_seconds: float
    state: HostState
    version: str = ""
    pid: int = 0
    memory_short: bool = False  # its free memory, at its last heartbeat, was below its cluster.minFreeMemoryMiB

    @property
    def free(self) -> int:
        return max(0, self.max_sessions - self.leases)


class Handover(enum.Enum):
    """How a lease came to its holder."""

    PLACED = "placed"  # a new item, to the host with the most free slots
    TAKEN_OVER = "taken-over"  # its holder's lease expired (a lost host)
    MOVED = "moved"  # an operator's `sessions move`


@dataclass(frozen=True, slots=True)
class Lease:
    """Which host holds a work item; times in seconds from now on the database's clock."""

    item: WorkItemRef
    host: str
    expires_in_seconds: float  # 0 or less: expired, free to be taken
    starts_in_seconds: float = 0.0  # a moved lease waits until the host it left stopped trusting it
    previous: str = ""
    how: Handover = Handover.PLACED

    @property
    def live(self) -> bool:
        return self.expires_in_seconds > 0


@dataclass(frozen=True, slots=True)
class Held:
    """What one renewal said this host holds; `everything`: every item (whose state only this host
    writes, a single host's)."""

    items: frozenset[WorkItemRef] = frozenset()
    everything: bool = False

    def __contains__(self, item: object) -> bool:
        return self.everything or item in self.items


@dataclass(frozen=True, slots=True)
class Listed:
    """An open item the repository's reader listed, with what a spawn needs (the item itself) and
    how the cycle found it: the label it carries, and whether it was listed in the repository's
    first cycle (what it held then is history, never asked of the tracker again)."""

    item: WorkItem
    label: str
    history: bool = False


@dataclass(frozen=True, slots=True)
class Departed:
    """A session whose item left the watched list: closed, merged, or no longer labelled."""

    item: WorkItemRef
    state: ItemState


@dataclass(frozen=True, slots=True)
class Shared:
    """What a repository's reader last shared for every host to work from."""

    listed: tuple[Listed, ...] = ()
    departed: tuple[Departed, ...] = ()

    @property
    def refs(self) -> list[WorkItemRef]:
        return [entry.item.ref for entry in self.listed]


@dataclass(frozen=True, slots=True)
class Placement:
    """What narrows which host an item may be placed on, beside its free slots: an agent that starts
    (or resumes) for it takes memory on the host that runs it, and a hibernated agent's conversation
    lies on the host it ran on (a harness keeps its transcripts on its own machine)."""

    starts: frozenset[WorkItemRef] = frozenset()  # no agent runs for these: one starts where they go
    homes: Mapping[WorkItemRef, str] = field(default_factory=dict)  # a hibernated item's conversation's host
    memory_short: bool = False  # the placer's own memory as it read it now, fresher than its heartbeat's

    def host_for(self, item: WorkItemRef, hosts: Iterable[HostView], *, placer: str, timing: LeaseTiming) -> str | None:
        """The host `item` goes to, or None: it waits (see `choose_host`)."""
        views = [replace(h, memory_short=self.memory_short) if h.host == placer else h for h in hosts]
        home = self.homes.get(item, "")
        return choose_host(views, starts=item in self.starts, home=home_up(views, home, timing=timing)).choice


def home_up(hosts: Iterable[HostView], home: str, *, timing: LeaseTiming) -> HostView | None:
    """The host holding a hibernated item's conversation, while it is up: alive, or stopped less than
    a lease's expiry ago (a restart: it comes back with the conversation). None once it is gone (its
    heartbeat expired), or unknown: the item may start afresh elsewhere."""
    found = next((h for h in hosts if home and h.host == home), None)
    if found is None or found.state is HostState.LOST:
        return None
    if found.state is HostState.STOPPED and found.heartbeat_age_seconds >= timing.expiry_seconds:
        return None
    return found


def choose_host(
    hosts: Iterable[HostView], *, starts: bool = False, home: HostView | None = None
) -> Decision[str | None]:
    """The live host with the most free slots (ties: the lowest id, so every placer agrees). An item
    whose agent starts there (`starts`) goes only to a host whose own memory admits a new agent; a
    hibernated item whose conversation's host is up (`home`) only there, to be resumed: it waits for
    that host's slot or memory rather than start afresh elsewhere."""
    candidates = [h for h in ([home] if home is not None else hosts) if h.state is HostState.ALIVE and h.free > 0]
    if not candidates:
        if home is not None:
            return Decision(None, f"its conversation's host {home.host} is up without a free slot")
        return Decision(None, "no live host has a free slot")
    if starts:
        candidates = [h for h in candidates if not h.memory_short]
        if not candidates:
            return Decision(None, "no live host with a free slot has the memory for a new agent")
    best = min(candidates, key=lambda h: (-h.free, h.host))
    return Decision(best.host, f"{best.host} has the most free slots ({best.free})")


def trusted(*, renewed_at: float | None, now: float, timing: LeaseTiming) -> Decision[bool]:
    """Whether a holder may still act on what its last successful renewal said (its own monotonic
    clock): only within the renew deadline, which ends before the lease can expire."""
    if renewed_at is None:
        return Decision(False, "no renewal has succeeded yet")
    age = now - renewed_at
    if age < timing.renew_deadline_seconds:
        return Decision(True, f"renewed {age:.1f}s ago")
    return Decision(False, f"last renewal {age:.1f}s ago, past the {timing.renew_deadline_seconds:g}s deadline")


def agents_may_run(*, deadline: float | None, now: float) -> Decision[bool]:
    """Whether this host's agents may still run (its own monotonic clock): only until the deadline
    its last successful renewal set (`LeaseTiming.agents_deadline`). No deadline recorded: no
    renewal ever succeeded, so nothing here may run for the cluster."""
    if deadline is None:
        return Decision(False, "no renewal has set a deadline")
    if now < deadline:
        return Decision(True, f"the lease holds for {deadline - now:.1f}s more")
    return Decision(False, f"the lease was not renewed: its deadline passed {now - deadline:.1f}s ago")


def handover_note(previous_host: str, *, lost: bool) -> str:
    """What a fresh conversation is told about the one before it, on another host (the host id is
    the operator's configuration, never a commenter's)."""
    why = "that host was lost" if lost else "an operator moved the item here"
    return (
        f"[the-loop] An earlier conversation on this item ran on host {one_line(previous_host)}; {why}, and its "
        "transcript stays there. This is a fresh conversation: read the item and its comments on GitHub "
        "to catch up.\n\n"
    )
