"""Several hosts on one machine for the cluster's end-to-end runs: each its own state root, tmux server
(its own TMUX_TMPDIR and socket), host id and `poll` daemon with the recording harness; one
PostgreSQL schema they all share, each reaching it through a TCP proxy the test controls; one
GitHub stand-in behind the real gh."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from adapters.clock import SystemClock
from adapters.postgres.store import PostgresStateStore
from domain.refs import RepoRef, WorkItemRef
from tests.e2e.loop_rig import Loop, Poller
from tests.e2e.pg_proxy import PgProxy
from tests.github_standin import StandIn
from tests.postgres_support import APP_PASSWORD, APP_USER, SHARED_DB, PgCluster
from tests.tmux_support import RealTmux, records, require_tmux, wait_for

REPO = "acme/widgets"
LEASE_SECONDS, RENEW_DEADLINE_SECONDS = 3.0, 2.0


@dataclass
class Host:
    name: str
    loop: Loop
    proxy: PgProxy
    poller: Poller | None = None

    def start(self) -> Host:
        self.poller = self.loop.start_poll()
        return self

    def kill(self) -> float:
        """SIGKILL the daemon and its tmux server at once (the machine is gone); when, as a timestamp."""
        assert self.poller is not None
        server = self.loop.tmux.server_pid()
        os.kill(self.poller.pid, signal.SIGKILL)
        os.kill(server, signal.SIGKILL)
        self.poller.process.wait(timeout=10)
        return SystemClock().epoch()

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        found = self.loop.events()
        return [e for e in found if e["event"] == name] if name else found

    def given(self) -> list[str]:
        """Every prompt this host's harnesses got: spawn prompts and pastes."""
        found = records(self.loop.record)
        starts = [str(r["prompt"]) for r in found if r["kind"] == "start" and r.get("prompt")]
        return starts + self.loop.pasted()

    def sessions(self) -> list[str]:
        names = self.loop.tmux.run("list-sessions", "-F", "#{session_name}", check=False).split()
        return sorted(name for name in names if name.startswith("loop-"))


@dataclass
class Cluster:
    root: Path
    postgres: PgCluster
    standin: StandIn
    schema: str = field(default_factory=lambda: f"cl_{uuid.uuid4().hex[:10]}")
    hosts: dict[str, Host] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.world = self.standin.reset()
        self.world.add_repo(REPO)
        self.postgres.sql(SHARED_DB, f"CREATE SCHEMA {self.schema} AUTHORIZATION {APP_USER}")
        self.repo = RepoRef.parse(REPO, host=self.standin.host)

    @property
    def dsn(self) -> str:
        """Straight to the server (the test's own view), never through a host's proxy."""
        return f"{self.postgres.dsn(SHARED_DB)} options='-c search_path={self.schema}'"

    def add(self, name: str, *, max_sessions: int = 20, **loop: Any) -> Host:
        proxy = PgProxy(self.postgres.port)
        tmux = RealTmux(self.root / name / "tmux")
        (self.root / name / "tmux").mkdir(parents=True)
        rig = Loop(self.root / name, tmux, **loop)
        rig.state_keys = {
            "backend": "postgres",
            "dsn": f"host=127.0.0.1 port={proxy.port} dbname={SHARED_DB} user={APP_USER} password={APP_PASSWORD} "
            f"sslmode=disable options='-c search_path={self.schema}'",
        }
        rig.sources = [{"provider": "github", "repos": [REPO], "label": "loop"}]
        rig.extra = {
            "cluster": {"hostId": name, "maxSessions": max_sessions, "leaseSeconds": LEASE_SECONDS,
                        "renewDeadlineSeconds": RENEW_DEADLINE_SECONDS},
            "integrations": {"github": {"host": self.standin.host}},
        }  # fmt: skip
        rig.env = self.standin.gh_env()
        self.hosts[name] = Host(name, rig, proxy)
        return self.hosts[name]

    def __getitem__(self, name: str) -> Host:
        return self.hosts[name]

    def started(self) -> None:
        """Every host's daemon running, and the repository's streams started (what was there is history)."""
        for host in self.hosts.values():
            host.start()
        for host in self.hosts.values():
            wait_for(lambda h=host: h.events("poll.cycle"), timeout=30, what=f"{host.name}'s first cycle")

    def issues(self, count: int) -> list[WorkItemRef]:
        with self.world.lock:
            self.world.tick(5)
            made = [self.world.add_issue(REPO, author="demo") for _ in range(count)]
        return [WorkItemRef(self.repo, issue.number) for issue in made]

    def comment(self, ref: WorkItemRef, body: str) -> str:
        with self.world.lock:
            self.world.tick(1)
            return str(self.world.add_comment(REPO, ref.number, body, author="demo").id)

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.dsn, autocommit=True) as db:
            return db.execute(sql).fetchall()  # type: ignore[arg-type]

    def holders(self) -> dict[WorkItemRef, str]:
        rows = self.query("SELECT item, host FROM leases WHERE host <> '' AND expires_at > now()")
        return {WorkItemRef.parse(item): host for item, host in rows}

    def store(self) -> PostgresStateStore:
        return PostgresStateStore(self.dsn)

    def delivered(self, refs: list[WorkItemRef]) -> set[str]:
        """Comment ids the shared ledgers resolved as delivered."""
        store = self.store()
        try:
            ledgers = [store.ledger(ref) for ref in refs]
        finally:
            store.close()
        return {cid for led in ledgers if led for cid, r in led.resolved.items() if r.kind.value == "delivered"}

    def close(self) -> None:
        for host in self.hosts.values():
            host.loop.stop_all()
            host.loop.tmux.kill_server()
            host.proxy.close()
        with contextlib.suppress(Exception):
            self.postgres.sql(SHARED_DB, f"DROP SCHEMA {self.schema} CASCADE")


def event_time(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["ts"]).timestamp()


def dumped(cluster: Cluster) -> str:
    """What to look at when a run fails: each host's cycle reports and cluster events."""
    lines = []
    for host in cluster.hosts.values():
        lines.append(f"== {host.name}: {host.poller.stderr if host.poller else ''}")
        lines += [json.dumps(e) for e in host.events() if e["event"].startswith(("cluster.", "store.", "poll.item"))]
    return "\n".join(lines)


@pytest.fixture
def cluster(postgres: PgCluster, standin: StandIn, tmp_path: Path) -> Iterator[Cluster]:
    require_tmux()
    rig = Cluster(tmp_path, postgres, standin)
    try:
        yield rig
    finally:
        rig.close()
