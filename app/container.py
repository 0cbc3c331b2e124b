"""The dependency-injector container: the one module that knows the adapters."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dependency_injector import containers, providers

from adapters.agents.registration import Registration
from adapters.agents.usage import HarnessUsage, harness_usage
from adapters.clock import SystemClock
from adapters.doctor_probe import ShDoctorProbe
from adapters.eventlog.reader import EventFilter, Skipped, Tail, follow_events, read_events
from adapters.eventlog.rotation import Rotation
from adapters.eventlog.writer import JsonlEventLog
from adapters.files.private import tighten
from adapters.git.adapter import GitWorkspaces
from adapters.git.auth import RemoteEnv
from adapters.github.app_auth import GitHubApp
from adapters.github.tracker import GhTracker
from adapters.github.webhook import GhWebhookServer
from adapters.harnesses import registered, usage_readers
from adapters.harnesses.claude.first_run import ClaudeFirstRun
from adapters.lock import LockHeld, PollerLock
from adapters.memory import free_memory, machine_memory
from adapters.receipts.files import Channel, FileReceipts
from adapters.sandbox.tracker import SandboxTracker
from adapters.sqlite.cluster import SingleHost
from adapters.sqlite.store import FILE_NAME, SqliteStateStore
from adapters.stop_point import stop_point
from adapters.tmux.adapter import ShTmux
from adapters.tmux.screen import ShTmuxScreen
from adapters.tmux.server import root_mark
from adapters.watchdog.process import ProcessWatchdog
from app import version
from app.config.files import ConfigError
from app.config.sections import WorkspaceSettings
from app.config.settings import Settings
from app.usecases.cluster.heartbeat import LeaseHeartbeat
from app.usecases.cluster.leases import Leases
from app.usecases.cycle.daemon import HIBERNATE_SCAN_SECONDS, Daemon, heartbeat_key
from app.usecases.cycle.poll import PollConfig
from app.usecases.cycle.webhook import WebhookIntake
from app.usecases.delivery.closing import CloseConfig
from app.usecases.delivery.spawner import SpawnConfig
from app.usecases.delivery.workspaces import WorkspaceConfig
from app.usecases.wiring import Configs, UseCases
from domain.model import HarnessSpec, Reaction, ReceiptChannel, WorkItem
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
from domain.refs import RepoRef, TmuxTarget, WorkItemRef
from domain.slots import SessionBound, session_bound
from domain.webhook import InboxLimits

if TYPE_CHECKING:  # loaded in App mode only (PyJWT, cryptography)
    from adapters.github.app_probe import GhAppProbe

__all__ = ["Container", "EventFilter", "LockHeld", "Skipped", "Tail", "follow_events", "read_events"]


class HarnessTrust(TrustPort):
    """Each harness's trusted folders in its own user configuration, written by its package's
    writer (`adapters.harnesses.<name>.harness`); a harness whose package has none writes nothing."""

    def __init__(self, writers: Mapping[str, TrustPort]) -> None:
        self._writers = dict(writers)

    def trust(self, directory: str, *, hooks: str = "") -> bool:
        writer = self._writers.get(hooks)
        return writer.trust(directory, hooks=hooks) if writer is not None else False


def _harnesses(settings: Settings) -> dict[str, HarnessSpec]:
    return {name: settings.harness_spec(name) for name in settings.harness_names}


def _variant(settings: Settings, name: str, permission_mode: str) -> HarnessSpec | None:
    try:
        return settings.harness_spec(name, permission_mode=permission_mode)
    except LookupError:
        return None


def _workspace_config(settings: Settings, workspace: WorkspaceSettings) -> WorkspaceConfig:
    return WorkspaceConfig(
        mode=workspace.mode,
        setup=workspace.setup,
        remove_on_close=workspace.remove_on_close,
        trust_forks=workspace.trust_forks,
        host=_host(settings),
    )


def _spawn_config(settings: Settings) -> SpawnConfig:
    return SpawnConfig(
        harnesses=_harnesses(settings),
        default_harness=settings.routing.default_harness,
        rules=settings.routing_rules,
        variant=partial(_variant, settings),
        startable=settings.startable_harnesses,
        remain_on_exit=settings.routing.tmux.remain_on_exit,
        host=_host(settings),
        environ=dict(os.environ),
        grace_seconds=settings.routing.tmux.harness_kill_grace_seconds,
    )


def _workdir(settings: Settings) -> Callable[[WorkItem, str], str]:
    return lambda item, workspace: settings.spawn_workdir(item.ref, workspace)


def _close_config(settings: Settings) -> CloseConfig:
    tmux = settings.routing.tmux
    return CloseConfig(
        kill_harness_on_close=tmux.kill_harness_on_close,
        keep_session_on_close=tmux.keep_session_on_close,
        grace_seconds=tmux.harness_kill_grace_seconds,
    )


def _prune_margin(settings: Settings) -> timedelta:
    return timedelta(seconds=settings.state.prune_margin_seconds)


def _poll_config(settings: Settings) -> PollConfig:
    return PollConfig(
        sources=tuple(settings.sources()),
        spawn_mode=settings.spawn_mode,
        max_concurrent=settings.routing.max_concurrent_dispatches,
        unlisted_keep_seconds=settings.webhooks.gh_webhook.unlisted_keep_seconds,
        rate_floor=settings.integrations.github.rate_floor,
    )


def _inbox_limits(settings: Settings) -> InboxLimits:
    hook = settings.webhooks.gh_webhook
    return InboxLimits(hook.inbox_max_comments, hook.inbox_max_bytes)


def _configs(settings: Settings) -> Configs:
    """What the settings say each use case does."""
    return Configs(
        spawn=_spawn_config(settings),
        workspace=_workspace_config(settings, settings.routing.workspace),
        workspaces={name: _workspace_config(settings, w) for name, w in settings.routing.workspaces.items()},
        close=_close_config(settings),
        poll=_poll_config(settings),
        authorized=settings.authorized,
        authorize_cache_seconds=settings.routing.authorize.cache_seconds,
        version=version(),
        workdir=_workdir(settings),
        host=_host(settings),
        trigger=settings.routing.trigger,
        max_retries=settings.polling.max_retries,
        resume_on_respawn=settings.routing.tmux.resume_on_respawn,
        ask_wait_seconds=settings.routing.ask_wait_seconds,
        reactions=settings.routing.reactions.enabled,
        timing=settings.lease_timing,
        prune_every_seconds=settings.state.prune_pass_seconds,
        prune_margin=_prune_margin(settings),
        prune_host=settings.host_id,
        interval_seconds=settings.polling.interval_seconds,
        inbox_limits=_inbox_limits(settings),
        heartbeat_key=heartbeat_key(settings.host_id, shared=_shared(settings)),
        hibernate_after_seconds=settings.routing.hibernate_after_seconds,
        min_free_memory=_mib(settings.cluster.min_free_memory_mib),
        free_memory=free_memory,
        prices=settings.pricing.table(),
        budgets=settings.budget_list,
    )


def _hibernate_scan(settings: Settings) -> float:
    """How often idle agents are looked at: a quarter of `routing.hibernateAfterSeconds`, within
    a quarter second and the daemon's usual look."""
    after = settings.routing.hibernate_after_seconds
    return HIBERNATE_SCAN_SECONDS if after is None else min(HIBERNATE_SCAN_SECONDS, max(0.25, after / 4))


def _mib(mib: int | None) -> int | None:
    return None if mib is None else mib * 1024 * 1024


def _shared(settings: Settings) -> bool:
    return settings.state.backend == "postgres"


def _host(settings: Settings) -> str:
    """This host's id where hosts share the work; "" alone (nothing recorded, as before clusters)."""
    return settings.host_id if _shared(settings) else ""


def _rotation(settings: Settings) -> Rotation:
    return Rotation(settings.event_log.max_bytes, settings.event_log.keep)


def _events(settings: Settings, clock: SystemClock) -> JsonlEventLog:
    return JsonlEventLog(path=settings.event_log_path, clock=clock.now, rotation=_rotation(settings))


def _store(settings: Settings) -> StateStore:
    if _shared(settings):
        from adapters.postgres.store import PostgresStateStore  # psycopg: only on this backend

        return PostgresStateStore(settings.state.dsn.get_secret_value())
    return SqliteStateStore(settings.state_root / FILE_NAME)


def _store_present(settings: Settings) -> bool:
    """Whether a state store may be opened without creating one: looking must not create a file.
    (A PostgreSQL database is the operator's: opening it creates only the-loop's tables.)"""
    return _shared(settings) or (settings.state_root / FILE_NAME).exists()


def _lock(settings: Settings) -> PollerLock:
    return PollerLock(path=settings.state_root / "poller.lock")


def _cluster(settings: Settings, bound: SessionBound) -> ClusterPort:
    if _shared(settings):
        from adapters.postgres.cluster import PostgresCluster  # psycopg costs a command's start: loaded when used

        return PostgresCluster(
            settings.state.dsn.get_secret_value(),
            host=settings.host_id,
            max_sessions=bound.most,
            timing=settings.lease_timing,
        )
    return SingleHost(host=settings.host_id, max_sessions=bound.most)


def _session_bound(settings: Settings) -> SessionBound:
    """`cluster.maxSessions`, or the machine's memory's default."""
    return session_bound(settings.cluster.max_sessions, memory_bytes=machine_memory())


def _watchdog(settings: Settings) -> ProcessWatchdog:
    return ProcessWatchdog(
        state_root=settings.state_root,
        events=settings.event_log_path,
        socket_name=settings.routing.tmux.socket_name,
        timing=settings.lease_timing,
        grace_seconds=settings.routing.tmux.harness_kill_grace_seconds,
        version=version(),  # an upgraded daemon's watchdog replaces the one of the earlier code
        rotation=_rotation(settings),
    )


def _tmux(settings: Settings, last_check: Callable[[str, TmuxTarget], None] | None = None) -> ShTmux:
    return ShTmux(
        socket_name=settings.routing.tmux.socket_name,
        command_timeout=settings.routing.dispatch_timeout_seconds,
        last_check=last_check,
        root_mark=root_mark(str(settings.state_root.absolute())),
    )


def _leased_tmux(settings: Settings) -> Callable[[Leases], TmuxPort]:
    """This host's tmux whose spawn and paste check the lease once more as the very last step before
    the tmux call (then a fault test's pause point, which does nothing in production)."""

    def leased(leases: Leases) -> TmuxPort:
        pause = stop_point()

        def check(action: str, target: TmuxTarget) -> None:
            leases.require(target)
            pause(action)

        return _tmux(settings, last_check=check)

    return leased


def _github(settings: Settings, clock: SystemClock) -> GhTracker:
    github = settings.integrations.github
    return GhTracker(
        binary=github.cli.binary,
        host=github.host,
        timeout=github.cli.timeout_seconds,
        clock=clock.epoch,
        monotonic=clock.monotonic,
        reactions=_reactions(settings),
        # the labelled listing between processes, so `poll --once` from cron costs what the daemon does
        state_dir=settings.state_root / "github",
        app=_github_app(settings),
    )


def _github_app(settings: Settings) -> GitHubApp | None:
    """The GitHub App the-loop acts as, its key read now; a key that cannot be used stops the start."""
    app = settings.integrations.github.app
    if app is None:
        return None
    # PyJWT and cryptography are loaded only in App mode: a tenth of a second off every other start
    from adapters.github.app_key import AppKey, AppKeyError

    try:
        key = AppKey.read(app.id, Path(app.private_key_file).expanduser())
    except AppKeyError as error:
        raise ConfigError(f"integrations.github.app.privateKeyFile: {error}") from None
    return GitHubApp(key, installations=dict(app.installations), refresh_margin=app.token_refresh_margin_seconds)


def _github_app_probe(settings: Settings, clock: SystemClock) -> GhAppProbe | None:
    """What `doctor` asks of the configured GitHub App (`app.cli.doctor.GitHubAppProbe`); None without one."""
    app = settings.integrations.github.app
    if app is None:
        return None
    from adapters.github.app_probe import GhAppProbe  # PyJWT and cryptography: only in App mode

    github = settings.integrations.github
    return GhAppProbe(
        app_id=app.id,
        key_file=Path(app.private_key_file).expanduser(),
        installations=app.installations,
        clock=clock.epoch,
        monotonic=clock.monotonic,
        binary=github.cli.binary,
        host=github.host,
        timeout=github.cli.timeout_seconds,
    )


def _sandbox(settings: Settings, clock: SystemClock) -> SandboxTracker:
    return SandboxTracker(path=settings.state_root / "sandbox.sqlite3", clock=clock.now)


def _workspace_port(settings: Settings, workspace: WorkspaceSettings, github: Callable[[], GhTracker]) -> GitWorkspaces:
    """A workspace's git: every one's clones under the one `<state.root>/clones` (one per repository,
    its lock shared), each with its own clone URL, setup environment and ignored files worth keeping."""
    return GitWorkspaces(
        root=settings.state_root.absolute() / "clones",
        url_template=workspace.clone_url,
        gh=settings.integrations.github.cli.binary,
        timeout=settings.routing.dispatch_timeout_seconds,
        keep_ignored=workspace.keep_ignored,
        setup_env=workspace.setup_env,
        remote_env=_git_env(settings, github),
    )


def _named_workspace_ports(settings: Settings, github: Callable[[], GhTracker]) -> dict[str, GitWorkspaces]:
    workspaces = settings.routing.workspaces
    return {name: _workspace_port(settings, workspace, github) for name, workspace in workspaces.items()}


def _git_env(settings: Settings, github: Callable[[], GhTracker]) -> RemoteEnv | None:
    """As a GitHub App, each repository's fetches run with its installation token, replaced once when
    GitHub refuses it, as gh's calls do (the tracker is built at the first fetch, not with the
    workspaces); else gh's own login answers."""
    if settings.integrations.github.app is None:
        return None

    def token_env(repo: RepoRef, *, refused: Mapping[str, str] | None = None) -> Mapping[str, str] | None:
        return github().token_env(repo, refused=refused)

    return token_env


def receipt_channels(ask_wait_seconds: float) -> dict[str, Channel]:
    """Every harness package's receipt channel, by its name; a permission hook (Claude Code's,
    Codex's) waits `ask_wait_seconds` for an answer from the item."""
    return {name: partial(_channel, harness, ask_wait_seconds) for name, harness in registered().items()}


def _channel(harness: Registration, ask_wait_seconds: float, folder: Path) -> ReceiptChannel:
    return harness.channel(folder, ask_wait_seconds)


def _receipts(settings: Settings) -> FileReceipts:
    return FileReceipts(
        root=settings.state_root / "receipts",
        channels=receipt_channels(settings.routing.ask_wait_seconds),
    )


def _usage(settings: Settings) -> HarnessUsage:
    return harness_usage(_harnesses(settings), usage_readers())


def _trust() -> HarnessTrust:
    return HarnessTrust({name: harness.trust() for name, harness in registered().items() if harness.trust})


def _tighten(settings: Settings) -> Callable[[], list[tuple[str, str]]]:
    def tightened() -> list[tuple[str, str]]:
        changed = tighten(settings.state_root, settings.event_log_path)
        return [(str(path), oct(mode)) for path, mode in changed]

    return tightened


def _tidy(settings: Settings, github: GhTracker) -> Callable[[], None]:
    """The kept listings of GitHub repositories no longer watched go, so the state stays bounded."""
    watched = [source.repo for source in settings.sources() if source.provider == "github"]

    def tidied() -> None:
        github.forget_listings(watched)

    return tidied


def _beat(settings: Settings, usecases: UseCases) -> LeaseHeartbeat | None:
    """Several hosts: the daemon renews this host's leases; one host holds everything."""
    return usecases.lease_heartbeat if _shared(settings) else None


def _reactions(settings: Settings) -> dict[Reaction, str]:
    return {r: content for r in Reaction if (content := settings.reaction_content(r))}


def _tracker_for(settings: Settings, trackers: Mapping[str, TrackerPort]) -> Callable[[WorkItemRef], TrackerPort]:
    by_repo = {source.repo: trackers[source.provider] for source in settings.sources()}
    fallback = trackers["github"]
    return lambda item: by_repo.get(item.repo, fallback)


def _webhook_server(settings: Settings, intake: WebhookIntake, github: GhTracker) -> GhWebhookServer:
    hook = settings.webhooks.gh_webhook
    return GhWebhookServer(
        host=hook.host,
        port=hook.port,
        secret=hook.secret.get_secret_value(),
        app_secret=app.webhook_secret.get_secret_value() if (app := settings.integrations.github.app) else "",
        accept=intake.accept,
        max_body=hook.max_body_bytes,
        read_timeout=hook.read_timeout_seconds,
        max_connections=hook.max_connections,
        refused=intake.refused,
        access_changed=intake.access_changed,
        bot_login=github.bot_login,  # as a GitHub App, its own comments are told by its bot's login
        installation_changed=intake.installation_changed,
    )


class _Adapters:
    """The container's adapters as the use cases' ports, each resolved through its provider when
    first asked for (an override reaches the use cases too)."""

    def __init__(self, container: Any) -> None:
        self._c = container

    @property
    def store(self) -> StateStore:
        return cast(StateStore, self._c.store())

    @property
    def events(self) -> EventSink:
        return cast(EventSink, self._c.events())

    @property
    def clock(self) -> ClockPort:
        return cast(ClockPort, self._c.clock())

    @property
    def tmux(self) -> TmuxPort:
        return cast(TmuxPort, self._c.shell_tmux())

    @property
    def leased_tmux(self) -> Callable[[Leases], TmuxPort]:
        return _leased_tmux(self._c.settings())

    @property
    def cluster(self) -> ClusterPort:
        return cast(ClusterPort, self._c.cluster())

    @property
    def watchdog(self) -> AgentWatchdogPort | None:
        return cast(AgentWatchdogPort, self._c.watchdog())

    @property
    def receipts(self) -> ReceiptPort:
        return cast(ReceiptPort, self._c.receipts())

    @property
    def trust(self) -> TrustPort:
        return cast(TrustPort, self._c.trust())

    @property
    def usage(self) -> UsagePort:
        return cast(UsagePort, self._c.usage())

    @property
    def workspace(self) -> WorkspacePort:
        return cast(WorkspacePort, self._c.workspace_port())

    @property
    def named_workspaces(self) -> Mapping[str, WorkspacePort]:
        return cast(Mapping[str, WorkspacePort], self._c.named_workspace_ports())

    @property
    def trackers(self) -> Mapping[str, TrackerPort]:
        return cast(Mapping[str, TrackerPort], self._c.trackers())

    @property
    def tracker_for(self) -> Callable[[WorkItemRef], TrackerPort]:
        return cast(Callable[[WorkItemRef], TrackerPort], self._c.tracker_for())

    @property
    def installations(self) -> InstallationsPort | None:
        # the tracker's own: what the webhook says of an installation changes the tokens its calls use
        return self._c.github().app_installations if self._c.settings().integrations.github.app else None


class Container(containers.DeclarativeContainer):
    __self__ = providers.Self()
    settings = providers.Dependency(instance_of=Settings)

    clock = providers.Singleton(SystemClock)
    doctor_probe = providers.Singleton(ShDoctorProbe)
    github_app_probe = providers.Singleton(_github_app_probe, settings, clock)
    claude_first_run = providers.Singleton(ClaudeFirstRun)  # `doctor --fix`, with the operator's consent
    events = providers.Singleton(_events, settings, clock)
    store = providers.Singleton(_store, settings)
    store_present = providers.Callable(_store_present, settings)
    lock = providers.Singleton(_lock, settings)
    session_bound = providers.Singleton(_session_bound, settings)
    cluster = providers.Singleton(_cluster, settings, session_bound)
    watchdog = providers.Singleton(_watchdog, settings)
    # this host's own tmux server, unguarded: for looking, and for ending its own orphaned sessions
    shell_tmux = providers.Singleton(_tmux, settings)
    tmux_screen = providers.Singleton(ShTmuxScreen, socket_name=settings.provided.routing.tmux.socket_name)
    github = providers.Singleton(_github, settings, clock)
    sandbox = providers.Singleton(_sandbox, settings, clock)
    trackers = providers.Dict(github=github, sandbox=sandbox)
    tracker_for = providers.Callable(_tracker_for, settings, trackers)
    workspace_port = providers.Singleton(
        _workspace_port, settings, settings.provided.routing.workspace, github.provider
    )
    named_workspace_ports = providers.Singleton(_named_workspace_ports, settings, github.provider)
    receipts = providers.Singleton(_receipts, settings)
    trust = providers.Singleton(_trust)
    usage = providers.Singleton(_usage, settings)

    # every use case, built by the one composition root the service tests build theirs with
    usecases = providers.Singleton(
        UseCases, providers.Factory(_Adapters, __self__), providers.Callable(_configs, settings)
    )
    secret = usecases.provided.secret
    leases = usecases.provided.leases
    tmux = usecases.provided.tmux
    workspaces = usecases.provided.workspaces
    watch = usecases.provided.watch
    spawner = usecases.provided.spawner
    orphans = usecases.provided.orphans
    lease_heartbeat = usecases.provided.lease_heartbeat
    dispatcher = usecases.provided.dispatcher
    feedback = usecases.provided.feedback
    delivery = usecases.provided.delivery
    closer = usecases.provided.closer
    asks = usecases.provided.asks
    turn_ends = usecases.provided.turn_ends
    hibernation = usecases.provided.hibernation
    controls = usecases.provided.controls
    intake = usecases.provided.intake
    parking = usecases.provided.parking
    worker = usecases.provided.worker
    poll_cycle = usecases.provided.poll
    webhook_intake = usecases.provided.webhook_intake
    sessions_admin = usecases.provided.sessions_admin
    mover = usecases.provided.mover
    fleet = usecases.provided.fleet

    # a Factory: `poll` passes its own `report` (the per-cycle line on stderr)
    daemon = providers.Factory(
        Daemon,
        cycle=poll_cycle,
        uow=usecases.provided.uow,
        lock=lock,
        interval_seconds=settings.provided.polling.interval_seconds,
        version=providers.Callable(version),
        leases=providers.Callable(_beat, settings, usecases),
        orphans=orphans,
        heartbeat_key=usecases.provided.configs.heartbeat_key,
        watch=watch,
        tighten=providers.Callable(_tighten, settings),
        asks=asks.provided.sweep,
        turns=turn_ends.provided.sweep,
        hibernate=hibernation.provided.sweep,
        recover=hibernation.provided.recover,
        hibernate_scan_seconds=providers.Callable(_hibernate_scan, settings),
        tidy=providers.Callable(_tidy, settings, github),
    )
    webhook_server = providers.Singleton(_webhook_server, settings, webhook_intake, github)
