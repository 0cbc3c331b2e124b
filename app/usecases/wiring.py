"""The one composition root of the use cases: the container builds them over the adapters, the
service tests over fakes, so the two cannot wire them differently."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from typing import Protocol

from app.usecases.cluster.heartbeat import LeaseHeartbeat
from app.usecases.cluster.leases import LeasedTmux, Leases
from app.usecases.cluster.moving import Mover
from app.usecases.cluster.orphans import Orphans
from app.usecases.cluster.slots import MemoryAdmission
from app.usecases.cluster.start_gate import StartGate
from app.usecases.cycle.authorization import CACHE_SECONDS, Authorization
from app.usecases.cycle.daemon import HEARTBEAT
from app.usecases.cycle.intake import Intake, IntakeConfig
from app.usecases.cycle.ledger_pruning import PASS_EVERY_SECONDS, LedgerPruner
from app.usecases.cycle.poll import PollConfig, PollCycle
from app.usecases.cycle.turn_ends import TurnEnds
from app.usecases.cycle.webhook import WebhookIntake
from app.usecases.delivery.asks import AskConfig, Asks
from app.usecases.delivery.closing import CloseConfig, Closer
from app.usecases.delivery.control import ControlConfig, Controls
from app.usecases.delivery.delivery import Delivery, DeliveryConfig
from app.usecases.delivery.dispatcher import DispatchConfig, Dispatcher
from app.usecases.delivery.feedback import Feedback
from app.usecases.delivery.hibernation import HibernateConfig, Hibernation
from app.usecases.delivery.item_worker import ItemWorker, WorkerConfig
from app.usecases.delivery.parking import Parking
from app.usecases.delivery.secret import receipt_secret
from app.usecases.delivery.spawner import SpawnConfig, Spawner
from app.usecases.delivery.spending import Spending
from app.usecases.delivery.switching import HarnessSwitch
from app.usecases.delivery.watch import HarnessWatch
from app.usecases.delivery.workspaces import WorkspaceConfig, Workspaces
from app.usecases.unit_of_work import UnitOfWork
from app.usecases.views.fleet import Fleet
from app.usecases.views.session_listing import SessionsListing
from app.usecases.views.sessions_admin import AdminConfig, SessionsAdmin
from domain.authorize import Authorized
from domain.cluster import LeaseTiming
from domain.ledger import PRUNE_MARGIN
from domain.model import WorkItem
from domain.ports import (
    AgentWatchdogPort,
    ClockPort,
    ClusterPort,
    EventSink,
    InstallationsPort,
    ReceiptPort,
    StateStore,
    TmuxPort,
    TrackerPort,
    TrustPort,
    UsagePort,
    WorkspacePort,
)
from domain.pricing import PriceTable
from domain.refs import WorkItemRef
from domain.routing import Routing
from domain.spending import Budget
from domain.webhook import InboxLimits


class Ports(Protocol):
    """The adapters the use cases are built over. The container's are made when first asked for
    (opening a store creates its file: a command that needs no store must not open one)."""

    @property
    def store(self) -> StateStore: ...
    @property
    def events(self) -> EventSink: ...
    @property
    def clock(self) -> ClockPort: ...
    @property
    def tmux(self) -> TmuxPort: ...  # this host's own tmux server, unguarded
    @property
    def leased_tmux(self) -> Callable[[Leases], TmuxPort]: ...  # the tmux a lease guard wraps
    @property
    def cluster(self) -> ClusterPort: ...
    @property
    def watchdog(self) -> AgentWatchdogPort | None: ...
    @property
    def receipts(self) -> ReceiptPort: ...
    @property
    def trust(self) -> TrustPort: ...
    @property
    def usage(self) -> UsagePort: ...
    @property
    def workspace(self) -> WorkspacePort: ...  # the default workspace's (`routing.workspace`)
    @property
    def named_workspaces(self) -> Mapping[str, WorkspacePort]: ...  # each of `routing.workspaces`, by name
    @property
    def trackers(self) -> Mapping[str, TrackerPort]: ...
    @property
    def tracker_for(self) -> Callable[[WorkItemRef], TrackerPort]: ...
    @property
    def installations(self) -> InstallationsPort | None: ...  # the GitHub App's; None without one


@dataclass(frozen=True, slots=True)
class PortSet:
    """Ports given as they are (the service tests' fakes)."""

    store: StateStore
    events: EventSink
    clock: ClockPort
    tmux: TmuxPort
    leased_tmux: Callable[[Leases], TmuxPort]
    cluster: ClusterPort
    watchdog: AgentWatchdogPort | None
    receipts: ReceiptPort
    trust: TrustPort
    usage: UsagePort
    workspace: WorkspacePort
    trackers: Mapping[str, TrackerPort]
    tracker_for: Callable[[WorkItemRef], TrackerPort]
    named_workspaces: Mapping[str, WorkspacePort] = field(default_factory=dict)
    installations: InstallationsPort | None = None


@dataclass(frozen=True, slots=True)
class Configs:
    """Every value the use cases are configured with; what one use case's settings say of another's
    (a close's grace is a reset's) is read from the one place here."""

    spawn: SpawnConfig
    workspace: WorkspaceConfig
    close: CloseConfig
    poll: PollConfig
    authorized: Authorized
    version: str
    workdir: Callable[[WorkItem, str], str]  # an item's folder in a workspace ("": the default one)
    host: str = ""  # this host's id where hosts share the work ("": one host)
    secret: str | None = None  # keys the receipt tags; None: the store's own
    trigger: str = ""
    max_retries: int = 3
    resume_on_respawn: bool = True
    ask_wait_seconds: float = 0.0
    reactions: bool = True
    timing: LeaseTiming = field(default_factory=LeaseTiming)
    new_id: Callable[[], str] = lambda: str(uuid.uuid4())
    prune_every_seconds: float = PASS_EVERY_SECONDS
    prune_margin: timedelta = PRUNE_MARGIN
    prune_host: str = ""  # where this host's pruning pass stands is its own
    interval_seconds: float = 0.0  # the poll interval
    inbox_limits: InboxLimits = field(default_factory=InboxLimits)
    heartbeat_key: str = HEARTBEAT
    workspaces: Mapping[str, WorkspaceConfig] = field(default_factory=dict)  # `routing.workspaces`, by name
    hibernate_after_seconds: float | None = None  # `routing.hibernateAfterSeconds` (None: off)
    min_free_memory: int | None = None  # `cluster.minFreeMemoryMiB`, in bytes (None: off)
    free_memory: Callable[[], int | None] = lambda: None  # the host's available memory, in bytes
    prices: PriceTable = field(default_factory=lambda: PriceTable((), dated=""))  # `pricing` over the pinned table
    budgets: tuple[Budget, ...] = ()  # `budgets`
    authorize_cache_seconds: float = CACHE_SECONDS  # `routing.authorize.cacheSeconds`


class UseCases:
    """Each use case built once, when first asked for, over `ports` and `configs`."""

    def __init__(self, ports: Ports, configs: Configs) -> None:
        self.ports, self.configs = ports, configs

    @cached_property
    def uow(self) -> UnitOfWork:
        return UnitOfWork(store=self.ports.store, events=self.ports.events, clock=self.ports.clock)

    @cached_property
    def secret(self) -> str:
        return self.configs.secret if self.configs.secret is not None else receipt_secret(self.ports.store)

    @cached_property
    def leases(self) -> Leases:
        ports = self.ports
        return Leases(
            cluster=ports.cluster, timing=self.configs.timing, monotonic=ports.clock.monotonic, watchdog=ports.watchdog,
            memory_short=self.admission.short,
        )  # fmt: skip

    @cached_property
    def admission(self) -> MemoryAdmission:
        """This host's memory, read for its own spawns and said in its heartbeat; hibernation is built
        over the cycle that uses it, so it is looked up only when memory runs short."""
        configs = self.configs
        return MemoryAdmission(
            configs.min_free_memory, configs.free_memory,
            relieve=lambda: self.hibernation.relieve(), relieve_now=lambda: self.hibernation.relieve_now(),  # noqa: PLW0108
        )  # fmt: skip

    @cached_property
    def start_gate(self) -> StartGate:
        return StartGate(admission=self.admission, leases=self.leases, events=self.ports.events)

    @cached_property
    def tmux(self) -> TmuxPort:
        """Several hosts: no tmux action on a session whose item this host does not hold right then."""
        leases = self.leases
        return LeasedTmux(self.ports.leased_tmux(leases), leases) if leases.shared else self.ports.tmux

    @cached_property
    def orphans(self) -> Orphans:
        return Orphans(tmux=self.ports.tmux, cluster=self.ports.cluster, events=self.ports.events)

    @cached_property
    def lease_heartbeat(self) -> LeaseHeartbeat:
        ports = self.ports
        return LeaseHeartbeat(
            leases=self.leases,
            cluster=ports.cluster,
            events=ports.events,
            monotonic=ports.clock.monotonic,
            watchdog=ports.watchdog,
        )

    @cached_property
    def workspaces(self) -> Workspaces:
        ports, configs = self.ports, self.configs
        named = {name: (config, ports.named_workspaces[name]) for name, config in configs.workspaces.items()}
        return Workspaces(
            port=ports.workspace, tmux=self.tmux, uow=self.uow, config=configs.workspace,
            tracker_for=ports.tracker_for, named=named,
        )  # fmt: skip

    @cached_property
    def watch(self) -> HarnessWatch:
        return HarnessWatch(tmux=self.tmux, receipts=self.ports.receipts, clock=self.ports.clock)

    @cached_property
    def routing(self) -> Routing:
        return self.configs.spawn.routing

    @cached_property
    def spawner(self) -> Spawner:
        ports, configs = self.ports, self.configs
        return Spawner(
            tmux=self.tmux, uow=self.uow, watch=self.watch, receipts=ports.receipts, trust=ports.trust,
            workdir=configs.workdir, config=configs.spawn, new_id=configs.new_id, workspaces=self.workspaces,
        )  # fmt: skip

    @cached_property
    def dispatcher(self) -> Dispatcher:
        config = DispatchConfig(resume_on_respawn=self.configs.resume_on_respawn, host=self.configs.host)
        return Dispatcher(
            tmux=self.tmux, events=self.ports.events, watch=self.watch, spawner=self.spawner, config=config,
            admit=self.start_gate.admits,
        )  # fmt: skip

    @cached_property
    def feedback(self) -> Feedback:
        return Feedback(tracker_for=self.ports.tracker_for, events=self.ports.events, reactions=self.configs.reactions)

    @cached_property
    def asks(self) -> Asks:
        ports, configs = self.ports, self.configs
        return Asks(
            uow=self.uow, watch=self.watch, receipts=ports.receipts,
            feedback=self.feedback, config=AskConfig(wait_seconds=configs.ask_wait_seconds, host=configs.host),
            harness=self.spawner.spec,
        )  # fmt: skip

    @cached_property
    def closer(self) -> Closer:
        ports = self.ports
        return Closer(
            tmux=self.tmux, uow=self.uow, config=self.configs.close,
            workspaces=self.workspaces, receipts=ports.receipts,
        )  # fmt: skip

    @cached_property
    def controls(self) -> Controls:
        return Controls(
            tmux=self.tmux, uow=self.uow, closer=self.closer,
            watch=self.watch, feedback=self.feedback, harness=self.spawner.harness,
            config=ControlConfig(keep_session_on_close=self.configs.close.keep_session_on_close),
            switch=self.switch, routing=self.routing, asks=self.asks,
        )  # fmt: skip

    @cached_property
    def switch(self) -> HarnessSwitch:
        return HarnessSwitch(
            tmux=self.tmux, uow=self.uow, known=self.configs.spawn.startable or tuple(self.configs.spawn.harnesses),
            grace_seconds=self.configs.close.grace_seconds,
        )  # fmt: skip

    @cached_property
    def delivery(self) -> Delivery:
        ports, configs = self.ports, self.configs
        return Delivery(
            uow=self.uow, dispatcher=self.dispatcher, watch=self.watch,
            receipts=ports.receipts, feedback=self.feedback, tracker_for=ports.tracker_for,
            config=DeliveryConfig(max_retries=configs.max_retries, version=configs.version, secret=self.secret),
            routing=self.routing,
        )  # fmt: skip

    @cached_property
    def authorization(self) -> Authorization:
        """One per process: the poll cycle, the webhook and parking share what was read."""
        ports, configs = self.ports, self.configs
        return Authorization(
            rule=configs.authorized, tracker_for=ports.tracker_for, events=ports.events, clock=ports.clock,
            cache_seconds=configs.authorize_cache_seconds,
        )  # fmt: skip

    @cached_property
    def intake(self) -> Intake:
        ports, configs = self.ports, self.configs
        return Intake(
            tracker_for=ports.tracker_for, uow=self.uow,
            config=IntakeConfig(version=configs.version), authorization=self.authorization,
        )  # fmt: skip

    @cached_property
    def parking(self) -> Parking:
        ports = self.ports
        return Parking(
            uow=self.uow, feedback=self.feedback,
            tracker_for=ports.tracker_for, authorization=self.authorization,
        )  # fmt: skip

    @cached_property
    def spending(self) -> Spending:
        configs = self.configs
        return Spending(
            store=self.ports.store, prices=configs.prices, budgets=configs.budgets,
            clock=self.ports.clock, events=self.ports.events, notify=self.feedback.notify,
        )  # fmt: skip

    @cached_property
    def worker(self) -> ItemWorker:
        configs = self.configs
        return ItemWorker(
            uow=self.uow, intake=self.intake, delivery=self.delivery,
            controls=self.controls, watch=self.watch, feedback=self.feedback, parking=self.parking, asks=self.asks,
            switch=self.switch, config=WorkerConfig(secret=self.secret, trigger=configs.trigger, host=configs.host),
            routing=self.routing, usage=self.ports.usage, spending=self.spending,
        )  # fmt: skip

    @cached_property
    def pruner(self) -> LedgerPruner:
        configs = self.configs
        return LedgerPruner(
            uow=self.uow, pass_every_seconds=configs.prune_every_seconds,
            margin=configs.prune_margin, host=configs.prune_host, interval_seconds=configs.interval_seconds,
        )  # fmt: skip

    @cached_property
    def poll(self) -> PollCycle:
        ports = self.ports
        return PollCycle(
            trackers=ports.trackers, uow=self.uow, worker=self.worker,
            closer=self.closer, config=self.configs.poll, cluster=ports.cluster, leases=self.leases,
            orphans=self.orphans, pruner=self.pruner, feedback=self.feedback, authorized=self.authorization.of_author,
            admission=self.admission,
        )  # fmt: skip

    @cached_property
    def hibernation(self) -> Hibernation:
        configs = self.configs
        return Hibernation(
            uow=self.uow, tmux=self.tmux, watch=self.watch, harness=self.spawner.harness, on_lane=self.poll.aside,
            on_lane_here=self.poll.aside_here,
            config=HibernateConfig(configs.hibernate_after_seconds, configs.close.grace_seconds, configs.host),
        )  # fmt: skip

    @cached_property
    def turn_ends(self) -> TurnEnds:
        return TurnEnds(store=self.ports.store, watch=self.watch, cycle=self.poll, host=self.configs.host)

    @cached_property
    def webhook_intake(self) -> WebhookIntake:
        ports, configs = self.ports, self.configs
        return WebhookIntake(
            uow=self.uow, sources=configs.poll.sources, authorization=self.authorization, cluster=ports.cluster,
            limits=configs.inbox_limits, installations=ports.installations,
        )  # fmt: skip

    @cached_property
    def sessions_admin(self) -> SessionsAdmin:
        close = self.configs.close
        return SessionsAdmin(
            uow=self.uow, views=self.sessions_listing, tmux=self.tmux, watch=self.watch, closer=self.closer,
            config=AdminConfig(grace_seconds=close.grace_seconds, keep_session_on_close=close.keep_session_on_close),
            switch=self.switch,
        )  # fmt: skip

    @cached_property
    def sessions_listing(self) -> SessionsListing:
        ports = self.ports
        return SessionsListing(
            cluster=ports.cluster, tmux=self.tmux, store=self.uow.store, watch=self.watch,
            harnesses=self.configs.spawn.harnesses, clock=ports.clock,
        )  # fmt: skip

    @cached_property
    def mover(self) -> Mover:
        ports = self.ports
        return Mover(
            cluster=ports.cluster, leases=self.leases, uow=self.uow, tmux=ports.tmux,
            grace_seconds=self.configs.close.grace_seconds, pause=ports.clock.sleep,
        )  # fmt: skip

    @cached_property
    def fleet(self) -> Fleet:
        ports, key = self.ports, self.configs.heartbeat_key
        return Fleet(
            admin=self.sessions_admin, uow=self.uow, cluster=ports.cluster,
            tmux=ports.tmux,  # the page only reads a pane's last lines
            heartbeat=lambda: ports.store.meta().get(key), asks=self.asks,
        )  # fmt: skip
