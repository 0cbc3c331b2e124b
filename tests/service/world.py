"""A whole the-loop over fakes: the poll cycle wired as the container wires it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from app.usecases.closing import CloseConfig, Closer
from app.usecases.dispatcher import DispatchConfig, Dispatcher
from app.usecases.item_worker import ItemWorker, WorkerConfig
from app.usecases.poll import CycleSummary, PollConfig, PollCycle
from app.usecases.workspaces import WorkspaceConfig, Workspaces
from domain.ledger import Ledger
from domain.model import Comment, HarnessSpec, SessionRecord, Source, SpawnMode
from domain.ports import TmuxPort
from domain.refs import RepoRef, WorkItemRef
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.fakes.store import FakeStateStore
from tests.fakes.tmux import FakeSession, FakeTmux
from tests.fakes.tracker import FakeTracker
from tests.fakes.workspaces import FakeWorkspaces

REPO = RepoRef.parse("acme/widgets")
CLAUDE = HarnessSpec("claude", "claude", (), ("--session-id", "{session_id}"), ("--resume", "{session_id}"))
CURSOR = HarnessSpec("cursor", "cursor-agent")


@dataclass
class World:
    harness: str = "claude"
    authorized: tuple[str, ...] = ("alice",)
    spawn_mode: SpawnMode = SpawnMode.LABELED
    max_retries: int = 3
    version: str = "1.0.0"
    max_concurrent: int = 4
    repos: tuple[RepoRef, ...] = (REPO,)
    close: CloseConfig = field(default_factory=CloseConfig)
    tmux: TmuxPort = field(default_factory=FakeTmux)
    tracker: FakeTracker = field(default_factory=FakeTracker)
    store: FakeStateStore = field(default_factory=FakeStateStore)
    events: RecordingEvents = field(default_factory=RecordingEvents)
    clock: FakeClock = field(default_factory=FakeClock)
    harnesses: dict[str, HarnessSpec] = field(default_factory=lambda: {"claude": CLAUDE, "cursor": CURSOR})
    resume_probe_seconds: float = 3
    workdir: str = "/work/{slug}"
    workspace: WorkspaceConfig = field(default_factory=WorkspaceConfig)
    git: FakeWorkspaces = field(default_factory=FakeWorkspaces)

    def __post_init__(self) -> None:
        ids = (f"sid-{n}" for n in itertools.count(1))
        self.tracker.now = self.clock.epoch
        self.workspaces = Workspaces(
            port=self.git,
            tmux=self.tmux,
            store=self.store,
            events=self.events,
            clock=self.clock,
            config=self.workspace,
        )
        self.dispatcher = Dispatcher(
            tmux=self.tmux,
            clock=self.clock,
            events=self.events,
            store=self.store,
            config=DispatchConfig(
                harnesses=self.harnesses,
                default_harness=self.harness,
                workdir=self.workdir,
                resume_probe_seconds=self.resume_probe_seconds,
            ),
            new_session_id=lambda: next(ids),
            workspaces=self.workspaces,
        )
        self.worker = self._worker()
        self.closer = Closer(
            tmux=self.tmux,
            store=self.store,
            events=self.events,
            clock=self.clock,
            config=self.close,
            workspaces=self.workspaces,
        )
        self.poll = self._poll()

    def _worker(self) -> ItemWorker:
        return ItemWorker(
            tracker_for=lambda _ref: self.tracker,
            store=self.store,
            events=self.events,
            clock=self.clock,
            dispatcher=self.dispatcher,
            config=WorkerConfig(
                authorized=frozenset(self.authorized), max_retries=self.max_retries, version=self.version
            ),
        )

    def _poll(self) -> PollCycle:
        config = PollConfig(
            sources=tuple(Source("github", repo, "loop") for repo in self.repos),
            spawn_mode=self.spawn_mode,
            max_concurrent=self.max_concurrent,
        )
        return PollCycle(
            trackers={"github": self.tracker},
            store=self.store,
            events=self.events,
            clock=self.clock,
            worker=self.worker,
            closer=self.closer,
            config=config,
        )

    def restart(self, *, version: str) -> None:
        """A new run of the daemon (a new process) on the same state, possibly a new version."""
        self.version = version
        self.worker = self._worker()
        self.poll = self._poll()

    # --- arranging ----------------------------------------------------------------------

    def item(
        self, number: int = 1, *, author: str = "alice", labels: tuple[str, ...] = ("loop",), repo: RepoRef = REPO
    ) -> WorkItemRef:
        ref = WorkItemRef(repo, number)
        self.tracker.add_item(ref, author=author, labels=labels, body="Fix the widget.")
        return ref

    def watched(self, number: int = 1, **kwargs: object) -> WorkItemRef:
        """An item seen once (baselined); with the default settings its session is spawned."""
        ref = self.item(number, **kwargs)  # type: ignore[arg-type]
        self.cycle()
        return ref

    def comment(self, ref: WorkItemRef, body: str = "please add a test", *, author: str | None = "alice") -> Comment:
        return self.tracker.add_comment(ref, body, author=author, created_at=self.clock.advance(1))

    def vanish(self, ref: WorkItemRef) -> None:
        """The session disappears behind the daemon's back (someone ran `tmux kill-session`)."""
        del self.tmux.sessions[ref.target.name]

    def cycle(self) -> CycleSummary:
        summary = self.poll.run()
        self.clock.advance(60)
        return summary

    # --- reading ------------------------------------------------------------------------

    def record(self, ref: WorkItemRef) -> SessionRecord:
        record = self.store.session(ref)
        assert record is not None, f"no session record for {ref}"
        return record

    def ledger(self, ref: WorkItemRef) -> Ledger:
        ledger = self.store.ledger(ref)
        assert ledger is not None, f"no ledger for {ref}"
        return ledger

    def session(self, ref: WorkItemRef) -> FakeSession:
        return self.tmux.sessions[ref.target.name]

    def spawns(self) -> int:
        return sum(1 for op, _ in self.tmux.calls if op == "spawn")

    def kills(self) -> int:
        return sum(1 for op, _ in self.tmux.calls if op == "kill")
