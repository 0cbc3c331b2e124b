"""The dependency-injector container: the one module that knows the adapters."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import timedelta

from dependency_injector import containers, providers

from adapters.claude.first_run import ClaudeFirstRun
from adapters.claude.trust import ClaudeTrust
from adapters.clock import SystemClock
from adapters.codex import hooks as codex_hooks
from adapters.codex.trust import CodexTrust
from adapters.doctor_probe import ShDoctorProbe
from adapters.eventlog.reader import EventFilter, Skipped, Tail, follow_events, read_events
from adapters.eventlog.rotation import Rotation
from adapters.eventlog.writer import JsonlEventLog
from adapters.gemini import hooks as gemini_hooks
from adapters.git.adapter import GitWorkspaces
from adapters.github.tracker import GhTracker
from adapters.github.webhook import GhWebhookServer
from adapters.lock import LockHeld, PollerLock
from adapters.opencode import plugin as opencode_plugin
from adapters.receipts.files import Channel, FileReceipts
from adapters.sandbox.tracker import SandboxTracker
from adapters.sqlite.cluster import SingleHost
from adapters.sqlite.store import FILE_NAME, SqliteStateStore
from adapters.stop_point import stop_point
from adapters.support.private import tighten
from adapters.tmux.adapter import ShTmux
from adapters.tmux.screen import ShTmuxScreen
from adapters.tmux.server import root_mark
from adapters.watchdog.process import ProcessWatchdog
from app import version
from app.config.settings import Settings
from app.usecases.asks import AskConfig, Asks
from app.usecases.closing import CloseConfig, Closer
from app.usecases.control import ControlConfig, Controls
from app.usecases.daemon import Daemon, heartbeat_key
from app.usecases.delivery import Delivery, DeliveryConfig
from app.usecases.dispatcher import DispatchConfig, Dispatcher
from app.usecases.feedback import Feedback
from app.usecases.fleet import Fleet
from app.usecases.heartbeat import LeaseHeartbeat
from app.usecases.intake import Intake, IntakeConfig
from app.usecases.item_worker import ItemWorker, WorkerConfig
from app.usecases.leases import LeasedTmux, Leases
from app.usecases.ledger_pruning import LedgerPruner
from app.usecases.moving import Mover
from app.usecases.orphans import Orphans
from app.usecases.parking import Parking
from app.usecases.poll import PollConfig, PollCycle
from app.usecases.secret import receipt_secret
from app.usecases.sessions_admin import AdminConfig, SessionsAdmin
from app.usecases.spawner import SpawnConfig, Spawner
from app.usecases.watch import HarnessWatch
from app.usecases.webhook import WebhookIntake
from app.usecases.workspaces import WorkspaceConfig, Workspaces
from domain.model import HarnessSpec, Reaction, WorkItem
from domain.ports import ClusterPort, StateStore, TmuxPort, TrackerPort, TrustPort
from domain.receipts import ReceiptMode
from domain.refs import TmuxTarget, WorkItemRef
from domain.webhook import InboxLimits

__all__ = ["Container", "EventFilter", "LockHeld", "Skipped", "Tail", "follow_events", "read_events"]

# each harness's own receipt channel, which the receipt folders hand a spawn of its mode (Claude Code's
# and a plain receipt-file harness's they prepare themselves); Gemini CLI's extension goes to its own
# folder as it finds it at the spawn
RECEIPT_CHANNELS: Mapping[ReceiptMode, Channel] = {
    ReceiptMode.CODEX: codex_hooks.receipt_channel,
    ReceiptMode.GEMINI: gemini_hooks.receipt_channel,
    ReceiptMode.OPENCODE: opencode_plugin.receipt_channel,
}


class HarnessTrust(TrustPort):
    """Each harness's trusted folders in its own user configuration: Codex's `config.toml` for a
    Codex spawn, Claude Code's `~/.claude.json` for every other."""

    def __init__(self, claude: TrustPort, codex: TrustPort) -> None:
        self._claude, self._codex = claude, codex

    def trust(self, directory: str, *, kind: ReceiptMode = ReceiptMode.CLAUDE) -> bool:
        return (self._codex if kind is ReceiptMode.CODEX else self._claude).trust(directory, kind=kind)


def _harnesses(settings: Settings) -> dict[str, HarnessSpec]:
    return {name: settings.harness_spec(name) for name in settings.harness_names}


def _workspace_config(settings: Settings) -> WorkspaceConfig:
    workspace = settings.routing.workspace
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
        remain_on_exit=settings.routing.tmux.remain_on_exit,
        host=_host(settings),
        environ=dict(os.environ),
        grace_seconds=settings.routing.tmux.harness_kill_grace_seconds,
    )


def _workdir(settings: Settings) -> Callable[[WorkItem], str]:
    return lambda item: settings.spawn_workdir(item.ref)


def _prune_margin(settings: Settings) -> timedelta:
    return timedelta(seconds=settings.state.prune_margin_seconds)


def _poll_config(settings: Settings) -> PollConfig:
    return PollConfig(
        sources=tuple(settings.sources()),
        spawn_mode=settings.spawn_mode,
        max_concurrent=settings.routing.max_concurrent_dispatches,
        unlisted_keep_seconds=settings.webhooks.gh_webhook.unlisted_keep_seconds,
    )


def _inbox_limits(settings: Settings) -> InboxLimits:
    hook = settings.webhooks.gh_webhook
    return InboxLimits(hook.inbox_max_comments, hook.inbox_max_bytes)


def _shared(settings: Settings) -> bool:
    return settings.state.backend == "postgres"


def _host(settings: Settings) -> str:
    """This host's id where hosts share the work; "" alone (nothing recorded, as before clusters)."""
    return settings.host_id if _shared(settings) else ""


def _cluster(settings: Settings) -> ClusterPort:
    if _shared(settings):
        from adapters.postgres.cluster import PostgresCluster  # psycopg costs a command's start: loaded when used

        return PostgresCluster(
            settings.state.dsn.get_secret_value(),
            host=settings.host_id,
            max_sessions=settings.cluster.max_sessions,
            timing=settings.lease_timing,
        )
    return SingleHost(host=settings.host_id, max_sessions=settings.cluster.max_sessions)


def _guarded(tmux: TmuxPort, leased: TmuxPort, leases: Leases) -> TmuxPort:
    """Several hosts: no tmux action on a session whose item this host does not hold right then."""
    return LeasedTmux(leased, leases) if leases.shared else tmux


def _last_check(leases: Leases) -> Callable[[str, TmuxTarget], None]:
    """The lease checked once more as the very last step before a spawn's or a paste's tmux call
    (then a fault test's pause point, which does nothing in production)."""
    pause = stop_point()

    def check(action: str, target: TmuxTarget) -> None:
        leases.require(target)
        pause(action)

    return check


def _watchdog(settings: Settings) -> ProcessWatchdog:
    return ProcessWatchdog(
        state_root=settings.state_root,
        events=settings.event_log_path,
        socket_name=settings.routing.tmux.socket_name,
        timing=settings.lease_timing,
        grace_seconds=settings.routing.tmux.harness_kill_grace_seconds,
        version=version(),  # an upgraded daemon's watchdog replaces the one of the earlier code
        rotation=Rotation(settings.event_log.max_bytes, settings.event_log.keep),
    )


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


def _store(settings: Settings) -> StateStore:
    if settings.state.backend == "postgres":
        from adapters.postgres.store import PostgresStateStore  # psycopg: only on this backend

        return PostgresStateStore(settings.state.dsn.get_secret_value())
    return SqliteStateStore(settings.state_root / FILE_NAME)


def _store_present(settings: Settings) -> bool:
    """Whether a state store may be opened without creating one: looking must not create a file.
    (A PostgreSQL database is the operator's: opening it creates only the-loop's tables.)"""
    return settings.state.backend == "postgres" or (settings.state_root / FILE_NAME).exists()


def _reactions(settings: Settings) -> dict[Reaction, str]:
    return {r: content for r in Reaction if (content := settings.reaction_content(r))}


def _tracker_for(settings: Settings, trackers: Mapping[str, TrackerPort]) -> Callable[[WorkItemRef], TrackerPort]:
    by_repo = {source.repo: trackers[source.provider] for source in settings.sources()}
    fallback = trackers["github"]
    return lambda item: by_repo.get(item.repo, fallback)


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)

    clock = providers.Singleton(SystemClock)
    doctor_probe = providers.Singleton(ShDoctorProbe)
    claude_first_run = providers.Singleton(ClaudeFirstRun)  # `doctor --fix`, with the operator's consent
    events = providers.Singleton(
        JsonlEventLog,
        path=settings.provided.event_log_path,
        clock=clock.provided.now,
        rotation=providers.Callable(lambda s: Rotation(s.event_log.max_bytes, s.event_log.keep), settings),
    )
    store = providers.Singleton(_store, settings)
    store_present = providers.Callable(_store_present, settings)
    lock = providers.Singleton(PollerLock, path=providers.Callable(lambda s: s.state_root / "poller.lock", settings))
    cluster = providers.Singleton(_cluster, settings)
    watchdog = providers.Singleton(_watchdog, settings)
    leases = providers.Singleton(
        Leases,
        cluster=cluster,
        timing=settings.provided.lease_timing,
        monotonic=clock.provided.monotonic,
        watchdog=watchdog,
    )
    # this host's own tmux server, unguarded: for looking, and for ending its own orphaned sessions
    shell_tmux = providers.Singleton(
        ShTmux,
        socket_name=settings.provided.routing.tmux.socket_name,
        command_timeout=settings.provided.routing.dispatch_timeout_seconds,
        root_mark=providers.Callable(lambda s: root_mark(str(s.state_root.absolute())), settings),
    )
    leased_shell_tmux = providers.Singleton(
        ShTmux,
        socket_name=settings.provided.routing.tmux.socket_name,
        command_timeout=settings.provided.routing.dispatch_timeout_seconds,
        last_check=providers.Callable(_last_check, leases),
        root_mark=providers.Callable(lambda s: root_mark(str(s.state_root.absolute())), settings),
    )
    tmux = providers.Singleton(_guarded, shell_tmux, leased_shell_tmux, leases)
    tmux_screen = providers.Singleton(ShTmuxScreen, socket_name=settings.provided.routing.tmux.socket_name)
    github = providers.Singleton(
        GhTracker,
        binary=settings.provided.integrations.github.cli.binary,
        host=settings.provided.integrations.github.host,
        timeout=settings.provided.integrations.github.cli.timeout_seconds,
        clock=clock.provided.epoch,
        monotonic=clock.provided.monotonic,
        reactions=providers.Callable(_reactions, settings),
        # the labelled listing between processes, so `poll --once` from cron costs what the daemon does
        state_dir=providers.Callable(lambda s: s.state_root / "github", settings),
    )
    sandbox = providers.Singleton(
        SandboxTracker,
        path=providers.Callable(lambda s: s.state_root / "sandbox.sqlite3", settings),
        clock=clock.provided.now,
    )
    trackers = providers.Dict(github=github, sandbox=sandbox)
    tracker_for = providers.Callable(_tracker_for, settings, trackers)

    workspace_port = providers.Singleton(
        GitWorkspaces,
        root=providers.Callable(lambda s: s.state_root.absolute() / "clones", settings),
        url_template=settings.provided.routing.workspace.clone_url,
        gh=settings.provided.integrations.github.cli.binary,
        timeout=settings.provided.routing.dispatch_timeout_seconds,
        keep_ignored=settings.provided.routing.workspace.keep_ignored,
        setup_env=settings.provided.routing.workspace.setup_env,
    )
    workspaces = providers.Singleton(
        Workspaces,
        tracker_for=tracker_for,
        port=workspace_port,
        tmux=tmux,
        store=store,
        events=events,
        clock=clock,
        config=providers.Callable(_workspace_config, settings),
    )
    receipts = providers.Singleton(
        FileReceipts,
        root=providers.Callable(lambda s: s.state_root / "receipts", settings),
        ask_wait_seconds=providers.Callable(lambda s: s.routing.ask_wait_seconds, settings),
        channels=RECEIPT_CHANNELS,
    )
    trust = providers.Singleton(
        HarnessTrust, claude=providers.Singleton(ClaudeTrust), codex=providers.Singleton(CodexTrust)
    )
    secret = providers.Singleton(receipt_secret, store)
    watch = providers.Singleton(HarnessWatch, tmux=tmux, receipts=receipts, clock=clock)
    spawner = providers.Singleton(
        Spawner,
        tmux=tmux,
        store=store,
        events=events,
        clock=clock,
        watch=watch,
        receipts=receipts,
        trust=trust,
        workdir=providers.Callable(_workdir, settings),
        config=providers.Callable(_spawn_config, settings),
        workspaces=workspaces,
    )
    orphans = providers.Singleton(Orphans, tmux=shell_tmux, cluster=cluster, events=events)
    lease_heartbeat = providers.Singleton(
        LeaseHeartbeat,
        leases=leases,
        cluster=cluster,
        events=events,
        monotonic=clock.provided.monotonic,
        watchdog=watchdog,
    )
    dispatcher = providers.Singleton(
        Dispatcher,
        tmux=tmux,
        events=events,
        watch=watch,
        spawner=spawner,
        config=providers.Callable(
            lambda s: DispatchConfig(resume_on_respawn=s.routing.tmux.resume_on_respawn, host=_host(s)), settings
        ),
    )
    feedback = providers.Singleton(
        Feedback, tracker_for=tracker_for, events=events, reactions=settings.provided.routing.reactions.enabled
    )
    delivery = providers.Singleton(
        Delivery,
        store=store,
        events=events,
        clock=clock,
        dispatcher=dispatcher,
        watch=watch,
        receipts=receipts,
        feedback=feedback,
        tracker_for=tracker_for,
        config=providers.Callable(
            lambda s, secret: DeliveryConfig(max_retries=s.polling.max_retries, version=version(), secret=secret),
            settings,
            secret,
        ),
        default_harness=settings.provided.routing.default_harness,
    )
    closer = providers.Singleton(
        Closer,
        tmux=tmux,
        store=store,
        events=events,
        clock=clock,
        config=providers.Callable(
            lambda s: CloseConfig(
                kill_harness_on_close=s.routing.tmux.kill_harness_on_close,
                keep_session_on_close=s.routing.tmux.keep_session_on_close,
                grace_seconds=s.routing.tmux.harness_kill_grace_seconds,
            ),
            settings,
        ),
        workspaces=workspaces,
        receipts=receipts,
    )
    asks = providers.Singleton(
        Asks,
        store=store,
        events=events,
        clock=clock,
        watch=watch,
        receipts=receipts,
        feedback=feedback,
        config=providers.Callable(
            lambda s: AskConfig(wait_seconds=s.routing.ask_wait_seconds, host=_host(s)), settings
        ),
    )
    controls = providers.Singleton(
        Controls,
        tmux=tmux,
        store=store,
        events=events,
        clock=clock,
        closer=closer,
        watch=watch,
        feedback=feedback,
        harness=spawner.provided.harness,
        config=providers.Callable(
            lambda s: ControlConfig(keep_session_on_close=s.routing.tmux.keep_session_on_close), settings
        ),
        asks=asks,
    )
    intake = providers.Singleton(
        Intake,
        tracker_for=tracker_for,
        store=store,
        events=events,
        clock=clock,
        config=providers.Callable(lambda s: IntakeConfig(authorized=s.authorized, version=version()), settings),
    )
    parking = providers.Singleton(
        Parking,
        store=store,
        events=events,
        clock=clock,
        feedback=feedback,
        tracker_for=tracker_for,
        authorized=settings.provided.authorized,
    )
    worker = providers.Singleton(
        ItemWorker,
        store=store,
        events=events,
        clock=clock,
        intake=intake,
        delivery=delivery,
        controls=controls,
        watch=watch,
        feedback=feedback,
        parking=parking,
        asks=asks,
        config=providers.Callable(
            lambda s, secret: WorkerConfig(secret=secret, trigger=s.routing.trigger, host=_host(s)),
            settings,
            secret,
        ),
    )
    poll_cycle = providers.Singleton(
        PollCycle,
        trackers=trackers,
        store=store,
        events=events,
        clock=clock,
        worker=worker,
        closer=closer,
        config=providers.Callable(_poll_config, settings),
        cluster=cluster,
        leases=leases,
        orphans=orphans,
        pruner=providers.Singleton(
            LedgerPruner,
            store=store,
            events=events,
            clock=clock,
            pass_every_seconds=settings.provided.state.prune_pass_seconds,
            margin=providers.Callable(_prune_margin, settings),
            host=settings.provided.host_id,
            interval_seconds=settings.provided.polling.interval_seconds,
        ),
        feedback=feedback,
    )
    # a Factory: `poll` passes its own `report` (the per-cycle line on stderr)
    daemon = providers.Factory(
        Daemon,
        cycle=poll_cycle,
        store=store,
        events=events,
        clock=clock,
        lock=lock,
        interval_seconds=settings.provided.polling.interval_seconds,
        version=providers.Callable(version),
        leases=providers.Callable(lambda s, beat: beat if _shared(s) else None, settings, lease_heartbeat),
        orphans=orphans,
        heartbeat_key=providers.Callable(lambda s: heartbeat_key(s.host_id, shared=_shared(s)), settings),
        watch=watch,
        tighten=providers.Callable(_tighten, settings),
        asks=asks.provided.sweep,
        tidy=providers.Callable(_tidy, settings, github),
    )
    webhook_intake = providers.Singleton(
        WebhookIntake,
        store=store,
        sources=providers.Callable(lambda s: s.sources(), settings),
        authorized=settings.provided.authorized,
        cluster=cluster,
        events=events,
        clock=clock,
        limits=providers.Callable(_inbox_limits, settings),
    )
    webhook_server = providers.Singleton(
        GhWebhookServer,
        host=settings.provided.webhooks.gh_webhook.host,
        port=settings.provided.webhooks.gh_webhook.port,
        secret=providers.Callable(lambda s: s.webhooks.gh_webhook.secret.get_secret_value(), settings),
        accept=webhook_intake.provided.accept,
        max_body=settings.provided.webhooks.gh_webhook.max_body_bytes,
        read_timeout=settings.provided.webhooks.gh_webhook.read_timeout_seconds,
        max_connections=settings.provided.webhooks.gh_webhook.max_connections,
        refused=webhook_intake.provided.refused,
    )
    sessions_admin = providers.Singleton(
        SessionsAdmin,
        cluster=cluster,
        tmux=tmux,
        store=store,
        events=events,
        closer=closer,
        watch=watch,
        harnesses=providers.Callable(_harnesses, settings),
        clock=clock,
        config=providers.Callable(
            lambda s: AdminConfig(
                grace_seconds=s.routing.tmux.harness_kill_grace_seconds,
                keep_session_on_close=s.routing.tmux.keep_session_on_close,
            ),
            settings,
        ),
    )
    mover = providers.Singleton(
        Mover,
        cluster=cluster,
        leases=leases,
        store=store,
        tmux=shell_tmux,
        events=events,
        clock=clock,
        grace_seconds=settings.provided.routing.tmux.harness_kill_grace_seconds,
        pause=clock.provided.sleep,
    )
    fleet = providers.Singleton(
        Fleet,
        admin=sessions_admin,
        store=store,
        cluster=cluster,
        tmux=shell_tmux,  # the page only reads a pane's last lines
        events=events,
        clock=clock,
        heartbeat=providers.Callable(
            lambda store, s: lambda: store.meta().get(heartbeat_key(s.host_id, shared=_shared(s))), store, settings
        ),
    )
