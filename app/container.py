"""The dependency-injector container: the one module that knows the adapters."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from dependency_injector import containers, providers

from adapters.clock import SystemClock
from adapters.doctor_probe import ShDoctorProbe
from adapters.eventlog.reader import EventFilter, follow_events, read_events
from adapters.eventlog.writer import JsonlEventLog
from adapters.git.adapter import GitWorkspaces
from adapters.github.tracker import GhTracker
from adapters.github.webhook import GhWebhookServer
from adapters.lock import LockHeld, PollerLock
from adapters.sandbox.tracker import SandboxTracker
from adapters.sqlite.store import FILE_NAME, SqliteStateStore
from adapters.tmux.adapter import ShTmux
from adapters.tmux.screen import ShTmuxScreen
from app import version
from app.config.settings import Settings
from app.usecases.closing import CloseConfig, Closer
from app.usecases.daemon import Daemon
from app.usecases.dispatcher import DispatchConfig, Dispatcher
from app.usecases.item_worker import ItemWorker, WorkerConfig
from app.usecases.poll import PollConfig, PollCycle
from app.usecases.sessions_admin import AdminConfig, SessionsAdmin
from app.usecases.webhook import WebhookIntake
from app.usecases.workspaces import WorkspaceConfig, Workspaces
from domain.model import Reaction
from domain.ports import TrackerPort
from domain.refs import WorkItemRef

__all__ = ["Container", "EventFilter", "LockHeld", "follow_events", "read_events"]


def _dispatch_config(settings: Settings) -> DispatchConfig:
    harnesses = {name: settings.harness_spec(name) for name in settings.harness_names}
    tmux = settings.routing.tmux
    return DispatchConfig(
        harnesses=harnesses,
        default_harness=settings.routing.default_harness,
        workdir=str(Path(settings.routing.spawn_workdir).expanduser().absolute()),  # `{slug}` is the dispatcher's
        remain_on_exit=tmux.remain_on_exit,
        resume_on_respawn=tmux.resume_on_respawn,
        resume_probe_seconds=tmux.resume_probe_seconds,
    )


def _workspace_config(settings: Settings) -> WorkspaceConfig:
    workspace = settings.routing.workspace
    return WorkspaceConfig(mode=workspace.mode, setup=workspace.setup, remove_on_close=workspace.remove_on_close)


def _poll_config(settings: Settings) -> PollConfig:
    return PollConfig(
        sources=tuple(settings.sources()),
        spawn_mode=settings.spawn_mode,
        max_concurrent=settings.routing.max_concurrent_dispatches,
    )


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
    events = providers.Singleton(JsonlEventLog, path=settings.provided.event_log_path, clock=clock.provided.now)
    store_path = providers.Callable(lambda s: s.state_root / FILE_NAME, settings)
    store = providers.Singleton(SqliteStateStore, path=store_path)
    lock = providers.Singleton(PollerLock, path=providers.Callable(lambda s: s.state_root / "poller.lock", settings))
    tmux = providers.Singleton(
        ShTmux,
        socket_name=settings.provided.routing.tmux.socket_name,
        command_timeout=settings.provided.routing.dispatch_timeout_seconds,
    )
    tmux_screen = providers.Singleton(ShTmuxScreen, socket_name=settings.provided.routing.tmux.socket_name)
    github = providers.Singleton(
        GhTracker,
        binary=settings.provided.integrations.github.cli.binary,
        host=settings.provided.integrations.github.host,
        clock=clock.provided.epoch,
        reactions=providers.Callable(_reactions, settings),
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
    )
    workspaces = providers.Singleton(
        Workspaces,
        port=workspace_port,
        tmux=tmux,
        store=store,
        events=events,
        clock=clock,
        config=providers.Callable(_workspace_config, settings),
    )
    dispatcher = providers.Singleton(
        Dispatcher,
        tmux=tmux,
        clock=clock,
        events=events,
        store=store,
        config=providers.Callable(_dispatch_config, settings),
        workspaces=workspaces,
    )
    worker = providers.Singleton(
        ItemWorker,
        tracker_for=tracker_for,
        store=store,
        events=events,
        clock=clock,
        dispatcher=dispatcher,
        config=providers.Callable(
            lambda s: WorkerConfig(
                authorized=s.authorized_users,
                max_retries=s.polling.max_retries,
                version=version(),
                reactions=s.routing.reactions.enabled,
            ),
            settings,
        ),
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
    )
    webhook_intake = providers.Singleton(
        WebhookIntake,
        inbox=poll_cycle.provided.inbox,
        watched=providers.Callable(lambda s: [source.repo for source in s.sources()], settings),
        events=events,
    )
    webhook_server = providers.Singleton(
        GhWebhookServer,
        host=settings.provided.webhooks.gh_webhook.host,
        port=settings.provided.webhooks.gh_webhook.port,
        secret=providers.Callable(lambda s: s.webhooks.gh_webhook.secret.get_secret_value(), settings),
        github_host=settings.provided.integrations.github.host,
        accept=webhook_intake.provided.accept,
    )
    sessions_admin = providers.Singleton(
        SessionsAdmin,
        tmux=tmux,
        store=store,
        events=events,
        closer=closer,
        config=providers.Callable(
            lambda s: AdminConfig(
                grace_seconds=s.routing.tmux.harness_kill_grace_seconds,
                keep_session_on_close=s.routing.tmux.keep_session_on_close,
            ),
            settings,
        ),
    )
