"""A host's slots: how many agents it runs at once (`cluster.maxSessions`, by default from its
memory), which items need one (an item keeps its slot while its agent runs), and which waiting item
gets a slot that frees (the one waiting longest)."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from domain.ledger import Ledger
from domain.model import SessionRecord, SessionStatus
from domain.policy import Decision
from domain.refs import WorkItemRef

MIB = 1024**2
GIB = 1024**3
AGENT_BYTES = 2 * GIB  # an agent's share of the memory: its harness, the tools it runs, the host's own part
MOST_BY_MEMORY = 20  # a large machine's default stops here: more is the operator's to configure
UNKNOWN_MEMORY = 4  # no memory figure: a bound a small machine bears


class BoundFrom(enum.Enum):
    CONFIGURATION = "configuration"
    MEMORY = "memory"
    UNKNOWN = "unknown"  # the memory could not be read


@dataclass(frozen=True, slots=True)
class SessionBound:
    """How many agents this host runs at once, and where that number came from."""

    most: int
    source: BoundFrom
    memory_bytes: int | None = None

    def said(self) -> str:
        if self.source is BoundFrom.CONFIGURATION:
            return f"{self.most} (from configuration)"
        if self.source is BoundFrom.MEMORY and self.memory_bytes is not None:
            return f"{self.most} (from {_gib(self.memory_bytes)} GiB memory)"
        return f"{self.most} (the memory could not be read)"


def session_bound(configured: int | None, *, memory_bytes: int | None) -> SessionBound:
    """`cluster.maxSessions` when set; else one agent per `AGENT_BYTES` of the machine's memory
    (nearest, at least 1, at most `MOST_BY_MEMORY`)."""
    if configured is not None:
        return SessionBound(configured, BoundFrom.CONFIGURATION)
    if not memory_bytes or memory_bytes <= 0:
        return SessionBound(UNKNOWN_MEMORY, BoundFrom.UNKNOWN)
    most = max(1, min(MOST_BY_MEMORY, round(memory_bytes / AGENT_BYTES)))
    return SessionBound(most, BoundFrom.MEMORY, memory_bytes)


def memory_total(meminfo: str) -> int | None:
    """The machine's memory in bytes, from the text of Linux's `/proc/meminfo` (its `MemTotal`
    line, in kB); None when the text has no such line."""
    return _meminfo_bytes(meminfo, "MemTotal")


def memory_available(meminfo: str) -> int | None:
    """The memory a new process can take without swapping, in bytes (`MemAvailable`); None when
    the text has no such line."""
    return _meminfo_bytes(meminfo, "MemAvailable")


def admits_new_agent(available: int | None, *, min_free: int | None) -> Decision[bool]:
    """Whether this host has the memory for one more agent: `available` at least `min_free`
    (`cluster.minFreeMemoryMiB`). Off (None), or the memory unread: admitted (a guess never stops
    the work; `doctor` says when it cannot be read)."""
    if min_free is None:
        return Decision(True, "memory admission is off")
    if available is None:
        return Decision(True, "the free memory could not be read")
    if available < min_free:
        return Decision(False, f"{available // MIB} MiB free, below cluster.minFreeMemoryMiB {min_free // MIB}")
    return Decision(True, f"{available // MIB} MiB free")


class AtStart(enum.Enum):
    """What a host does right before a new agent would start on it (a spawn, or a hibernated agent's resume)."""

    START = "start"
    RELIEVE = "relieve"  # hibernate its agent resting longest, then read the memory again
    GIVE_BACK = "give-back"  # start nothing, and give the item's slot back


def at_start(available: int | None, *, min_free: int | None, relieved: bool) -> Decision[AtStart]:
    """Right before a new agent starts on this host for an item it holds, by its own memory read then
    (`available`): the placement weighed it earlier — another host's by its last heartbeat, up to a
    renewal old. Admitted, it starts; short, its agent resting longest is hibernated first and the
    memory read again (`relieved`: that was done); still short, nothing starts and the item's slot is
    given back, for a host whose memory admits it (or for this one, once its memory is back)."""
    admitted = admits_new_agent(available, min_free=min_free)
    if admitted.choice:
        return Decision(AtStart.START, admitted.reason)
    if not relieved:
        return Decision(AtStart.RELIEVE, f"{admitted.reason}: the agent resting longest is hibernated first")
    return Decision(AtStart.GIVE_BACK, f"{admitted.reason}: nothing starts, its slot is given back")


def _meminfo_bytes(meminfo: str, wanted: str) -> int | None:
    for line in meminfo.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() != wanted:
            continue
        parts = rest.split()
        if not parts or not parts[0].isdigit():
            return None
        unit = parts[1].lower() if len(parts) > 1 else "b"
        return int(parts[0]) * {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3}.get(unit, 1)
    return None


def _gib(size: int) -> str:
    gib = size / GIB
    return f"{gib:.0f}" if gib >= 10 else f"{gib:.1f}".removesuffix(".0")


def agent_runs(record: SessionRecord | None) -> bool:
    """An item's agent runs (or is to be resumed) while its session is not closed: an idle agent
    keeps its slot; closing or stopping the item frees it, and so does hibernating its agent (its
    next comment then waits for a slot like any other)."""
    return record is not None and record.status is not SessionStatus.CLOSED and record.hibernated_at is None


def conversation_host(record: SessionRecord | None) -> str:
    """The host a hibernated agent ran on, which keeps its conversation (a harness's transcripts stay
    on its machine): its next comment resumes it only there. "" when none is hibernated, or one host."""
    return record.host if record is not None and record.hibernated_at is not None else ""


def wants_slot(
    record: SessionRecord | None, ledger: Ledger | None, *, kept: bool, listed: bool, starts: bool = False
) -> Decision[bool]:
    """Whether an item needs one of its host's slots: while its agent runs, or while something waits
    for an agent — a kept comment, a start asked, comments in hand, or (`starts`) a first look that
    starts its agent (armed, by an authorized author). An item with none of these gives its slot up
    and gets none: nothing of it is worked until a comment comes. The ledger matters only when
    neither the record nor the inbox decides."""
    if agent_runs(record):
        return Decision(True, "its agent runs")
    if not listed:
        return Decision(False, "not listed, and no agent runs")
    return _waits_for_agent(ledger, kept=kept, starts=starts)


def _waits_for_agent(ledger: Ledger | None, *, kept: bool, starts: bool) -> Decision[bool]:
    if kept:
        return Decision(True, "a comment waits for it")
    if ledger is None:
        return Decision(starts, "its first look starts its agent" if starts else "nothing of it to look at yet")
    if ledger.start is not None:
        return Decision(True, "a start is asked")
    if ledger.pending or ledger.turns:
        return Decision(True, "comments in hand")
    return Decision(False, "nothing waits, and no agent runs")


@dataclass(frozen=True, slots=True)
class Claim:
    """A listed item that needs a slot and holds none."""

    item: WorkItemRef
    runs: bool  # its agent runs already: a restarted host, or a lost host's item
    waiting_since: datetime
    oldest_comment: datetime | None = None  # its oldest undelivered comment


def waiting_since(*, oldest_comment: datetime | None, wait_began: datetime | None, now: datetime) -> datetime:
    """How long an item has waited for an agent: since its oldest undelivered comment, or since its
    wait began (a start asked with no comment) when that is earlier; a new wait begins `now`."""
    return min(at for at in (oldest_comment, wait_began, now) if at is not None)


def slot_order(claims: Iterable[Claim]) -> list[WorkItemRef]:
    """The order free slots go in: first an item whose agent runs (it had a slot), then the one
    waiting longest; of those whose waits began together (in one cycle), the one whose oldest
    undelivered comment is oldest; then by the item. A busy item does not move ahead: a new comment
    never makes its wait older, and each later waiter's is younger than the oldest's."""

    def key(claim: Claim) -> tuple[bool, datetime, bool, datetime, WorkItemRef]:
        comment = claim.oldest_comment or claim.waiting_since
        return (not claim.runs, claim.waiting_since, claim.oldest_comment is None, comment, claim.item)

    return [claim.item for claim in sorted(claims, key=key)]
