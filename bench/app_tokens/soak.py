"""The soak's world: the GitHub stand-in in App mode on the wall clock, two installations, and the
hosts acting as the App — one on SQLite, two sharing a PostgreSQL schema (tests/e2e/cluster_rig.py) —
each with its own items, sessions of the demo harness and gh naming it to the stand-in."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.postgres.store import PostgresStateStore
from domain.ports import StateStore
from domain.refs import RepoRef, WorkItemRef
from tests.e2e.cluster_rig import Cluster
from tests.e2e.loop_rig import Loop
from tests.github_standin import StandIn
from tests.github_standin.app import AppSide
from tests.github_standin.app_rig import APP_ID, make_key
from tests.postgres_support import PgCluster
from tests.tmux_support import RealTmux, wait_for

INSTALLATIONS = {7: "acme", 8: "umbrella"}  # each covers every repository of its account
AUTHOR = "demo"  # the rigs' authorized user: its items get a session, its comments are prompts
TAGGED_GH = Path(__file__).resolve().parents[2] / "tests" / "github_standin" / "tagged_gh.sh"
LITE, CLUSTER = "sqlite", "postgres"


@dataclass(frozen=True, slots=True)
class Form:
    token_seconds: int
    margin: float  # tokenRefreshMarginSeconds
    expiries: int  # each installation's token replaced this many times by the steady readers
    comment_seconds: float
    cluster_items: int = 2  # per repository: spread over the two hosts by their leases


@dataclass
class Posted:
    setup: str  # LITE or CLUSTER
    ref: WorkItemRef
    comment_id: str


@dataclass
class Soak:
    root: Path
    pg: PgCluster
    standin: StandIn
    form: Form
    posted: list[Posted] = field(default_factory=list)
    items: dict[str, list[WorkItemRef]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True)
        self.cluster = Cluster(self.root / CLUSTER, self.pg, self.standin)  # a fresh world of the stand-in
        self.world = self.cluster.world
        key = make_key(self.root / "app.pem")
        self.key_path = key.path
        self.app = AppSide(APP_ID, key.private.public_key(), token_seconds=self.form.token_seconds)
        self.world.app = self.app
        for number, account in INSTALLATIONS.items():
            self.app.install(number, account)
        for full_name in self.repos(LITE) + self.repos(CLUSTER):
            self.world.add_repo(full_name)
        self._stop = threading.Event()
        self._follow()  # the JWT is signed on the machine's clock, checked on the world's
        self._ticker = threading.Thread(target=self._follow_loop, name="standin-clock", daemon=True)
        self._ticker.start()
        self.lite = Loop(self.root / LITE, RealTmux(self.root / LITE / "tmux"), harness="demo")
        (self.root / LITE / "tmux").mkdir(parents=True)
        self._as_app(self.lite, LITE, "lite")
        for name in ("host-a", "host-b"):
            self._as_app(self.cluster.add(name, harness="demo").loop, CLUSTER, name)

    @property
    def hosts(self) -> dict[str, Loop]:
        """Each host's rig by the name its gh gives the stand-in."""
        return {"lite": self.lite} | {name: host.loop for name, host in self.cluster.hosts.items()}

    def repos(self, setup: str) -> list[str]:
        return [f"{account}/{setup}" for account in INSTALLATIONS.values()]

    def start(self) -> None:
        """Every daemon running, then each repository's items labelled and their sessions spawned."""
        poller = self.lite.start_poll()
        self.cluster.started()
        wait_for(lambda: self.lite.events() or poller.process.poll() is not None, timeout=60, what="lite's start")
        self.items = {LITE: self._issues(LITE, 1), CLUSTER: self._issues(CLUSTER, self.form.cluster_items)}
        every = len(self.items[LITE]) + len(self.items[CLUSTER])
        wait_for(lambda: self.sessions() >= every, timeout=180, what="every item's session")

    def sessions(self) -> int:
        return sum(len(_sessions(host)) for host in self.hosts.values())

    def post_until(self, done: threading.Event) -> threading.Thread:
        """A comment every `comment_seconds` on the next item, round the items, until `done`."""
        turns = [(setup, ref) for setup, refs in self.items.items() for ref in refs]

        def post() -> None:
            count = 0
            while not done.wait(self.form.comment_seconds):
                setup, ref = turns[count % len(turns)]
                with self.world.lock:
                    note = self.world.add_comment(ref.repo.full_name, ref.number, f"soak {count}", author=AUTHOR)
                self.posted.append(Posted(setup, ref, str(note.id)))
                count += 1

        poster = threading.Thread(target=post, name="poster", daemon=True)
        poster.start()
        return poster

    def store(self, setup: str) -> StateStore:
        return self.lite.store() if setup == LITE else PostgresStateStore(self.cluster.dsn)

    def stop(self) -> None:
        """SIGTERM to every daemon: each leaves its store as a clean stop does."""
        for host in self.hosts.values():
            for poller in host.pollers:
                if poller.process.poll() is None:
                    poller.stop()

    def close(self) -> None:
        self._stop.set()
        self._ticker.join()
        self.lite.stop_all()
        self.lite.tmux.kill_server()
        self.cluster.close()

    def _as_app(self, loop: Loop, setup: str, client: str) -> None:
        loop.sources = [{"provider": "github", "repos": self.repos(setup), "label": "loop"}]
        app = {
            "id": APP_ID,
            "privateKeyFile": str(self.key_path),
            "installations": {account: number for number, account in INSTALLATIONS.items()},
            "tokenRefreshMarginSeconds": self.form.margin,
        }
        github: dict[str, Any] = {"host": self.standin.host, "cli": {"binary": str(TAGGED_GH)}, "app": app}
        loop.extra = loop.extra | {"integrations": {"github": github}}
        loop.env = self.standin.gh_env(STANDIN_CLIENT=client)

    def _issues(self, setup: str, per_repo: int) -> list[WorkItemRef]:
        made = []
        with self.world.lock:
            for full_name in self.repos(setup):
                repo = RepoRef.parse(full_name, host=self.standin.host)
                made += [
                    WorkItemRef(repo, self.world.add_issue(full_name, author=AUTHOR).number) for _ in range(per_repo)
                ]
        return made

    def _follow_loop(self) -> None:
        while not self._stop.wait(0.1):
            self._follow()

    def _follow(self) -> None:
        """The stand-in's clock (its `Date`, every time stamp) is the wall clock, whole seconds."""
        with self.world.lock:
            second = datetime.fromtimestamp(int(time.time()), UTC)  # noqa: TID251 - GitHub's clock is the wall's
            self.world.now = max(self.world.now, second)


def _sessions(loop: Loop) -> list[str]:
    names = loop.tmux.run("list-sessions", "-F", "#{session_name}", check=False).split()
    return [name for name in names if name.startswith("loop-")]
