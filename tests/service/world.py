"""A whole the-loop over fakes: the use cases built by the container's own composition root."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta

from adapters.sqlite.cluster import SingleHost
from app.usecases.cluster.leases import Leases
from app.usecases.cluster.orphans import Orphans
from app.usecases.cycle.ledger_pruning import PASS_EVERY_SECONDS
from app.usecases.cycle.poll import CycleSummary, PollConfig, PollCycle
from app.usecases.cycle.webhook import WebhookIntake
from app.usecases.delivery.asks import Asks
from app.usecases.delivery.closing import CloseConfig, Closer
from app.usecases.delivery.hibernation import Hibernation
from app.usecases.delivery.item_worker import ItemWorker
from app.usecases.delivery.spawner import SpawnConfig, Spawner
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.delivery.workspaces import WorkspaceConfig, Workspaces
from app.usecases.unit_of_work import UnitOfWork
from app.usecases.views.sessions_admin import AdminConfig, SessionsAdmin
from app.usecases.wiring import Configs, PortSet, UseCases
from domain.authorize import Authorized, Permission
from domain.budget import DEFAULT_RATE_FLOOR
from domain.cluster import LeaseTiming
from domain.ledger import PRUNE_MARGIN, Ledger
from domain.model import Comment, HarnessSpec, SessionRecord, Source, SpawnMode
from domain.ports import ClusterPort, ReceiptPort, TmuxPort, TrustPort, UsagePort
from domain.pricing import PriceTable
from domain.receipts import ReceiptMode
from domain.refs import RepoRef, WorkItemRef
from domain.routing import Rule
from domain.spending import Budget
from domain.webhook import InboxLimits
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.fakes.receipts import FakeReceipts, FakeTrust
from tests.fakes.store import FakeStateStore
from tests.fakes.tmux import FakeSession, FakeTmux
from tests.fakes.tracker import FakeTracker
from tests.fakes.usage import FakeUsage
from tests.fakes.watchdog import FakeWatchdog
from tests.fakes.workspaces import FakeWorkspaces

REPO = RepoRef.parse("acme/widgets")
CLAUDE = HarnessSpec(
    "claude",
    "claude",
    (),
    ("--session-id", "{session_id}"),
    ("--resume", "{session_id}"),
    receipts=ReceiptMode.HOOKS,
    hooks="claude",
    ready_seconds=60,
    confirm_seconds=30,
    trust_workdir=True,
    session_rules=True,
)
CURSOR = HarnessSpec("cursor", "cursor-agent", ready_seconds=3, confirm_seconds=3)


class _EveryName(dict[str, FakeWorkspaces]):
    """One fake git for every named workspace: it keeps the worktrees of them all, as one
    `<state.root>/clones` does."""

    def __init__(self, git: FakeWorkspaces) -> None:
        super().__init__()
        self._git = git

    def __missing__(self, name: str) -> FakeWorkspaces:
        return self._git


@dataclass
class World:
    harness: str = "claude"
    authorized: tuple[str, ...] = ("alice",)
    permission: Permission | None = None  # routing.authorize.permission: who else steers, by their role
    deny: tuple[str, ...] = ()  # routing.authorize.deny
    authorize_cache_seconds: float = 600.0  # routing.authorize.cacheSeconds
    spawn_mode: SpawnMode = SpawnMode.LABELED
    max_retries: int = 3
    version: str = "1.0.0"
    max_concurrent: int = 4
    repos: tuple[RepoRef, ...] = (REPO,)
    close: CloseConfig = field(default_factory=CloseConfig)
    tmux: FakeTmux = field(default_factory=FakeTmux)  # a real ShTmux in integration tests
    tracker: FakeTracker = field(default_factory=FakeTracker)
    store: FakeStateStore = field(default_factory=FakeStateStore)
    events: RecordingEvents = field(default_factory=RecordingEvents)
    clock: FakeClock = field(default_factory=FakeClock)
    harnesses: dict[str, HarnessSpec] = field(default_factory=lambda: {"claude": CLAUDE, "cursor": CURSOR})
    workdir: str = "/work/{slug}"
    secret: str = "test-secret"
    trigger: str = ""
    receipts: ReceiptPort | None = None  # None: a FakeReceipts harness inside the FakeTmux
    trust_port: TrustPort | None = None  # None: `trust`, a FakeTrust (a real ClaudeTrust with real Claude)
    usage: UsagePort | None = None  # None: a FakeUsage (each turn's cost given by its turn id)
    session_ids: Callable[[], str] | None = None  # None: sid-1, sid-2, … (real Claude wants UUIDs)
    workspace: WorkspaceConfig = field(default_factory=WorkspaceConfig)
    named_workspaces: dict[str, WorkspaceConfig] = field(default_factory=dict)  # routing.workspaces, by name
    workdirs: dict[str, str] = field(default_factory=dict)  # each named workspace's spawnWorkdir
    git: FakeWorkspaces = field(default_factory=FakeWorkspaces)
    cluster: ClusterPort | None = None  # None: a single host, as the embedded default
    timing: LeaseTiming = field(default_factory=LeaseTiming)
    environ: dict[str, str] = field(default_factory=dict)  # the daemon's, read by `env` and `passEnv`
    prune_every_seconds: float = PASS_EVERY_SECONDS  # how often a ledger pruning pass may begin
    prune_margin: timedelta = PRUNE_MARGIN  # how far the horizon trails the last read
    ask_wait_seconds: float = 600.0  # how long a permission request's hook waits for an answer from the item
    rules: tuple[Rule, ...] = ()  # routing.rules, as the domain matches them
    variants: dict[tuple[str, str], HarnessSpec] = field(default_factory=dict)  # harnesses as rules override them
    hibernate_after_seconds: float | None = None  # routing.hibernateAfterSeconds (None: off)
    min_free_memory: int | None = None  # cluster.minFreeMemoryMiB, in bytes (None: off)
    free_memory: int | None = None  # the host's available memory the admission reads (None: unread)
    # the stand-in meminfo reader itself, for a memory that follows what runs (None: `free_memory`, as set)
    meminfo: Callable[[], int | None] | None = None
    prices: PriceTable = field(default_factory=lambda: PriceTable((), dated=""))  # pricing (none: tokens only)
    budgets: tuple[Budget, ...] = ()  # budgets
    rate_floor: int = DEFAULT_RATE_FLOOR  # integrations.github.rateFloor

    def __post_init__(self) -> None:
        ids = (f"sid-{n}" for n in itertools.count(1))
        self.tracker.now = self.clock.epoch
        if self.receipts is None:
            assert isinstance(self.tmux, FakeTmux), "a real tmux needs real receipts"
            self.receipts = FakeReceipts(self.tmux, self.clock)
        if self.cluster is None:
            self.cluster = SingleHost(host="solo", max_sessions=20)
        self.host = self.cluster.host if self.cluster.shared else ""
        self.watchdog = FakeWatchdog(self.tmux, self.clock) if isinstance(self.tmux, FakeTmux) else None
        self.trust = FakeTrust()
        self.usage = self.usage or FakeUsage()
        self.new_id = self.session_ids or (lambda: next(ids))
        self.ports = PortSet(
            store=self.store, events=self.events, clock=self.clock, tmux=self.tmux,
            leased_tmux=lambda _leases: self.tmux, cluster=self.cluster, watchdog=self.watchdog,
            receipts=self.receipts, trust=self.trust_port or self.trust, usage=self.usage, workspace=self.git,
            trackers={"github": self.tracker}, tracker_for=lambda _ref: self.tracker,
            named_workspaces=_EveryName(self.git),
        )  # fmt: skip
        self.usecases = UseCases(self.ports, self.configs())

    def configs(self) -> Configs:
        """The settings of this world, as the container reads them from the configuration."""
        return Configs(
            spawn=SpawnConfig(
                harnesses=self.harnesses,
                default_harness=self.harness,
                rules=self.rules,
                variant=lambda name, mode: self.variants.get((name, mode)),
                host=self.host,
                environ=self.environ,
            ),
            workspace=self.workspace,
            close=self.close,
            poll=PollConfig(
                sources=tuple(Source("github", repo, "loop") for repo in self.repos),
                spawn_mode=self.spawn_mode,
                max_concurrent=self.max_concurrent,
                rate_floor=self.rate_floor,
            ),
            authorized=self.authorized_logins,
            version=self.version,
            workdir=lambda item, workspace: self.workdirs.get(workspace, self.workdir).replace("{slug}", item.ref.slug),
            workspaces=self.named_workspaces,
            host=self.host,
            secret=self.secret,
            trigger=self.trigger,
            max_retries=self.max_retries,
            ask_wait_seconds=self.ask_wait_seconds,
            timing=self.timing,
            new_id=self.new_id,
            prune_every_seconds=self.prune_every_seconds,
            prune_margin=self.prune_margin,
            hibernate_after_seconds=self.hibernate_after_seconds,
            min_free_memory=self.min_free_memory,
            free_memory=lambda: self.meminfo() if self.meminfo is not None else self.free_memory,
            prices=self.prices,
            budgets=self.budgets,
            authorize_cache_seconds=self.authorize_cache_seconds,
        )

    # --- the use cases, as the container has them ------------------------------------

    @property
    def uow(self) -> UnitOfWork:
        return self.usecases.uow

    @property
    def leases(self) -> Leases:
        return self.usecases.leases

    @property
    def guarded(self) -> TmuxPort:
        return self.usecases.tmux

    @property
    def orphans(self) -> Orphans:
        return self.usecases.orphans

    @property
    def workspaces(self) -> Workspaces:
        return self.usecases.workspaces

    @property
    def watch(self) -> HarnessWatch:
        return self.usecases.watch

    @property
    def spawner(self) -> Spawner:
        return self.usecases.spawner

    @property
    def asks(self) -> Asks:
        return self.usecases.asks

    @property
    def hibernation(self) -> Hibernation:
        return self.usecases.hibernation

    @property
    def closer(self) -> Closer:
        return self.usecases.closer

    @property
    def worker(self) -> ItemWorker:
        return self.usecases.worker

    @property
    def poll(self) -> PollCycle:
        return self.usecases.poll

    def intake(self, limits: InboxLimits | None = None) -> WebhookIntake:
        """The webhook's intake over this world, as the container wires it."""
        configs = replace(self.configs(), inbox_limits=limits or InboxLimits())
        return UseCases(self.ports, configs).webhook_intake

    def admin(self, **config: object) -> SessionsAdmin:
        return replace(self.usecases.sessions_admin, config=AdminConfig(**config))  # type: ignore[arg-type]

    def restart(self, *, version: str) -> None:
        """A new run of the daemon (a new process) on the same state, possibly a new version."""
        self.version = version
        self.ports = replace(self.ports, trackers={"github": self.tracker})  # a tracker swapped meanwhile
        self.usecases = UseCases(self.ports, self.configs())

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

    def crash_after(self, event_name: str) -> None:
        """A cycle whose daemon dies (a SIGKILL) right after `event_name` is emitted; then the next
        run starts on the same state."""
        original = self.events.emit

        def emit(event, **fields):  # type: ignore[no-untyped-def]
            original(event, **fields)
            if event.value == event_name:
                raise KeyboardInterrupt

        self.events.emit = emit  # type: ignore[method-assign]
        with contextlib.suppress(KeyboardInterrupt):
            self.cycle()
        self.events.emit = original  # type: ignore[method-assign]
        self.restart(version=self.version)

    def crash_in(self, owner: object, method: str) -> None:
        """A cycle whose daemon dies (a SIGKILL) when it calls `owner.method`; the next run starts
        on the same state."""
        original = getattr(owner, method)

        def crash(*args, **kwargs):  # type: ignore[no-untyped-def]
            raise KeyboardInterrupt

        setattr(owner, method, crash)
        with contextlib.suppress(KeyboardInterrupt):
            self.cycle()
        setattr(owner, method, original)
        self.restart(version=self.version)

    # --- reading ------------------------------------------------------------------------

    def record(self, ref: WorkItemRef) -> SessionRecord:
        record = self.store.session(ref)
        assert record is not None, f"no session record for {ref}"
        return record

    def ledger(self, ref: WorkItemRef) -> Ledger:
        ledger = self.store.ledger(ref)
        assert ledger is not None, f"no ledger for {ref}"
        return ledger

    @property
    def authorized_logins(self) -> Authorized:
        """`authorized` as the container reads it: a bare login is one of the configured GitHub host,
        here the host of the first watched repository."""
        return Authorized.parse(self.authorized, host=self.repos[0].host, deny=self.deny, permission=self.permission)

    def session(self, ref: WorkItemRef) -> FakeSession:
        return self.tmux.sessions[ref.target.name]

    def spawns(self) -> int:
        return sum(1 for op, _ in self.tmux.calls if op == "spawn")

    def kills(self) -> int:
        return sum(1 for op, _ in self.tmux.calls if op == "kill")
