"""What this host may act on: its leases as its last successful renewal left them, trusted only
within the renew deadline — and a tmux that refuses every action on a session whose item this host
does not hold right then."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from domain.cluster import Held, LeaseTiming, trusted
from domain.errors import LeaseLost, WatchdogUnarmed
from domain.model import Probe, SessionState, SpawnRequest
from domain.policy import Decision
from domain.ports import AgentWatchdogPort, ClusterPort, TmuxPort
from domain.refs import TmuxTarget, WorkItemRef


@dataclass(kw_only=True, eq=False)
class Leases:
    """In the daemon, the heartbeat calls `renew()` and every check reads what it left (no round
    trip per tmux action); in a command (nothing renews) each check asks the database and trusts a
    lease only with more than the margin (expiry minus deadline) left. A single host's leases are its
    slots, given and given up in its own cycle: it may act on every session (no other host can take one).

    Each successful renewal also gives the host's watchdog its agents' new deadline: an agent never
    outlives its host's lease, whatever becomes of the daemon. While the watchdog does not guard
    that deadline (`unarmed`), nothing of this host is trusted: no agent is unguarded and at work."""

    cluster: ClusterPort
    timing: LeaseTiming
    monotonic: Callable[[], float]
    watchdog: AgentWatchdogPort | None = None
    # whether this host's own free memory is below its `cluster.minFreeMemoryMiB`: said with each
    # renewal, so a host placing items gives this one no new agent while it is
    memory_short: Callable[[], bool] = lambda: False
    _renewed_at: float | None = field(init=False, default=None)
    _lost: set[WorkItemRef] = field(init=False, default_factory=set)
    _unarmed: str | None = field(init=False, default=None)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._held = Held()

    @property
    def host(self) -> str:
        return self.cluster.host

    @property
    def shared(self) -> bool:
        return self.cluster.shared

    def renew(self) -> frozenset[WorkItemRef]:
        """Renew every lease this host holds; the items it held before and holds no more.
        `StateError` (nothing changes here) when the database refused or could not be reached.
        A single host's slots are only ever given up by itself: nothing to renew, nothing lost."""
        if not self.shared:
            return frozenset()
        short = self.memory_short()
        sent = self.monotonic()  # before the request: the lease runs from a moment after this
        held = self.cluster.renew(memory_short=short)
        with self._lock:
            lost = frozenset(self._held.items - held.items)
            self._held, self._renewed_at = held, sent
            self._lost |= lost
        self.rearm()
        return lost

    def give_back(self, item: WorkItemRef) -> None:
        """This host gives `item` up now: released in the database, and held here no more (not only
        from the next renewal on); what it ran for the item here ends as an orphan's, as after a renewal."""
        self.cluster.release(item)
        if not self.shared:
            return
        with self._lock:
            if item in self._held.items:
                self._held = Held(self._held.items - {item}, everything=self._held.everything)
                self._lost.add(item)

    def rearm(self) -> str | None:
        """Gives the watchdog the last renewal's deadline again; why it does not guard it (None: it does)."""
        if self.watchdog is None or not self.shared or self._renewed_at is None:
            return None
        try:
            self.watchdog.arm(self.timing.agents_deadline(sent=self._renewed_at))
        except WatchdogUnarmed as error:
            unarmed: str | None = str(error)
        else:
            unarmed = None
        with self._lock:
            self._unarmed = unarmed
        return unarmed

    @property
    def unarmed(self) -> str | None:
        """Why the watchdog does not guard the agents' deadline; None while it does."""
        with self._lock:
            return self._unarmed

    def held(self) -> Held:
        """What this host may work now: nothing once its last renewal is past the deadline; on a
        single host, the items holding its slots right now."""
        if not self.shared:
            return self.cluster.renew()
        with self._lock:
            return self._held if self._trust().choice else Held()

    def owned(self) -> Held:
        """The items whose state only this host writes: those it holds where hosts share the work,
        every item on a single host (its slots bound its agents, not whose state it keeps)."""
        return self.held() if self.shared else Held(everything=True)

    def take_lost(self) -> frozenset[WorkItemRef]:
        """Items lost since the last call: their sessions here are orphans to end."""
        with self._lock:
            lost, self._lost = frozenset(self._lost), set()
        return lost

    def holds(self, target: TmuxTarget) -> Decision[bool]:
        """Whether this host may act on `target`'s session right now."""
        if not self.shared:
            return Decision(True, "a single host: no other host can take an item")
        with self._lock:
            if self._renewed_at is not None:
                trust = self._trust()
                if not trust.choice:
                    return trust
                found = any(target in item.targets for item in self._held.items)
                return Decision(found, "held" if found else "not held by this host")
        return self._ask(target)

    def require(self, target: TmuxTarget) -> None:
        """`LeaseLost` unless this host may act on `target`'s session right now."""
        decision = self.holds(target)
        if not decision.choice:
            raise LeaseLost(str(target), reason=decision.reason)

    def _trust(self) -> Decision[bool]:
        if self._unarmed is not None:
            return Decision(False, f"its agents' watchdog is not armed: {self._unarmed}")
        return trusted(renewed_at=self._renewed_at, now=self.monotonic(), timing=self.timing)

    def _ask(self, target: TmuxTarget) -> Decision[bool]:
        named = [lease for lease in self.cluster.leases() if target in lease.item.targets]
        # the item this name is minted for first; an item's pre-upgrade name only when none is
        lease = next((lease for lease in named if lease.item.target == target), next(iter(named), None))
        if lease is None or not lease.live:
            return Decision(False, "no host holds it")
        if lease.host != self.host or lease.starts_in_seconds > 0:
            return Decision(False, f"held by host {lease.host}")
        if lease.expires_in_seconds <= self.timing.margin_seconds:
            return Decision(False, "its lease is about to expire")
        return Decision(True, "held")


class LeasedTmux(TmuxPort):
    """The tmux port, but spawning, pasting, clearing, ending or killing a session raises
    `LeaseLost` unless this host holds the session's item right then (checked right before each
    action; the inner tmux checks again as its very last step before a spawn's or a paste's tmux call,
    see `Leases.require`). Looking (state, probe, screen) and attaching are never refused."""

    def __init__(self, inner: TmuxPort, leases: Leases) -> None:
        self._inner = inner
        self._leases = leases

    def _check(self, target: TmuxTarget) -> None:
        self._leases.require(target)

    def session_state(self, target: TmuxTarget) -> SessionState:
        return self._inner.session_state(target)

    def probe(self, target: TmuxTarget, *, mark: str, pane: str = "") -> Probe:
        return self._inner.probe(target, mark=mark, pane=pane)

    def spawn(self, request: SpawnRequest) -> str:
        self._check(request.target)
        return self._inner.spawn(request)

    def deliver(
        self, target: TmuxTarget, prompt: str, *, delivery_id: str, pane: str, mark: str, submit_delay_ms: int = 0
    ) -> None:
        self._check(target)
        self._inner.deliver(
            target, prompt, delivery_id=delivery_id, pane=pane, mark=mark, submit_delay_ms=submit_delay_ms
        )

    def clear_dead(self, target: TmuxTarget) -> None:
        self._check(target)
        self._inner.clear_dead(target)

    def kill(self, target: TmuxTarget) -> None:
        self._check(target)
        self._inner.kill(target)

    def terminate_harness(self, target: TmuxTarget, *, grace_seconds: float, pane: str, mark: str) -> None:
        self._check(target)
        self._inner.terminate_harness(target, grace_seconds=grace_seconds, pane=pane, mark=mark)

    def submit(self, target: TmuxTarget, *, pane: str, mark: str) -> None:
        self._check(target)
        self._inner.submit(target, pane=pane, mark=mark)

    def harness_group(self, target: TmuxTarget, *, pane: str, mark: str) -> str:
        return self._inner.harness_group(target, pane=pane, mark=mark)

    def end_group(self, group: str, *, grace_seconds: float) -> bool:
        return self._inner.end_group(group, grace_seconds=grace_seconds)

    def group_memory(self, group: str) -> int | None:
        return self._inner.group_memory(group)

    def screen(self, target: TmuxTarget, pane: str, *, lines: int = 20) -> str:
        return self._inner.screen(target, pane, lines=lines)

    def attach(self, target: TmuxTarget, *, read_only: bool) -> int:
        return self._inner.attach(target, read_only=read_only)

    def clients(self, target: TmuxTarget) -> int | None:
        return self._inner.clients(target)
