"""Several hosts over fakes: one store, one tracker, one cluster database and one clock shared;
each host with its own tmux server (and so its own harnesses and receipts) and event log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from domain.cluster import LeaseTiming
from domain.refs import WorkItemRef
from tests.fakes.clock import FakeClock
from tests.fakes.cluster import FakeCluster, FakeClusterDb
from tests.fakes.store import FakeStateStore
from tests.fakes.tmux import FakeSession
from tests.fakes.tracker import FakeTracker
from tests.service.world import World

TIMING = LeaseTiming(expiry_seconds=30, renew_deadline_seconds=20)


@dataclass
class Hosts:
    clock: FakeClock = field(default_factory=FakeClock)
    store: FakeStateStore = field(default_factory=FakeStateStore)
    tracker: FakeTracker = field(default_factory=FakeTracker)
    worlds: dict[str, World] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.db = FakeClusterDb(clock=self.clock)

    def add(self, name: str, *, max_sessions: int = 20, harness: str = "claude", **settings: Any) -> World:
        """A host joined to the others; `settings`: its own (`hibernate_after_seconds`, its memory …)."""
        cluster = FakeCluster(self.db, host=name, max_sessions=max_sessions, timing=TIMING)
        world = World(
            cluster=cluster, store=self.store, tracker=self.tracker, clock=self.clock, timing=TIMING, harness=harness,
            **settings,
        )  # fmt: skip
        cluster.join(pid=len(self.worlds) + 1, version=world.version)
        world.leases.renew()
        if world.watchdog is not None:
            world.watchdog.start()
        self.worlds[name] = world
        return world

    def __getitem__(self, name: str) -> World:
        return self.worlds[name]

    def cycle(self, *names: str) -> None:
        """A heartbeat, then a cycle, on each host named (all, in order, when none is)."""
        for name in names or tuple(self.worlds):
            world = self.worlds[name]
            world.leases.renew()
            world.poll.run()

    def port(self, name: str) -> FakeCluster:
        port = self.worlds[name].cluster
        assert isinstance(port, FakeCluster)
        return port

    def holder(self, ref: WorkItemRef) -> str:
        """Who holds `ref`, read in the database itself ("" nobody)."""
        lease = self.db.leases.get(ref)
        return lease.host if lease is not None and lease.expires_at > self.db.now else ""

    def sessions(self, name: str) -> dict[str, FakeSession]:
        return self.worlds[name].tmux.sessions

    def dies(self, name: str) -> None:
        """The host's process and its tmux server are gone: nothing of it renews or answers."""
        self.port(name).unreachable = True
        self.worlds[name].tmux.sessions.clear()

    def given(self, name: str) -> list[str]:
        """Every prompt a host's harnesses got: spawn prompts and pastes, in order per session."""
        return [
            text
            for session in self.sessions(name).values()
            for pane in session.panes
            for text in ([pane.prompt] if pane.prompt else []) + pane.received
        ]
