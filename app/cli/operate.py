"""The commands that run and steer the daemon: `poll`, `status`, `sessions …` (in `app.cli.sessions`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from app.cli.context import CliContext, Commands, UsageProblem, command
from app.cli.read_views import status_output
from app.cli.sessions import add_sessions
from app.config.files import ConfigError
from app.usecases.views.poller_status import Exit, describe, poller_status
from domain.errors import LoopError, StoreUnreachable

if TYPE_CHECKING:
    from app.usecases.cycle.daemon import Daemon

__all__ = ["add_poll", "add_sessions", "add_status"]

_STATUS = f"""\
is the poller running, and how did its last cycle go

Whether a poller holds the state root (its pid and start), its last cycle and summary,
how long ago, and whether that is overdue; then "needs attention": each item the store says is
parked, blocked on a request, paused, stopped, waiting for a slot or has a comment given up, by
the state's word and line as the page and `sessions list` show it (docs/operating.md says what each
means and what to do).

exit status: {Exit.RUNNING.value} running and on time, {Exit.NOT_RUNNING.value} not running, \
{Exit.OVERDUE.value} running but overdue
(no cycle finished within twice the interval plus 30s), {Exit.FAILING.value} running but its cycles fail (the
state store cannot be written: disk full, read-only, locked; the cause is shown), 1 the state cannot be
read, 2 usage or configuration error. Like `systemctl status`: scripts can test the status without
parsing it."""


class PollerBlocked(LoopError):
    """Another poller holds the state root (exit status 1)."""


class NothingPolled(LoopError):
    """`poll --once` ran a cycle in which no source could be read (exit status 1)."""


def add_poll(commands: Commands) -> None:
    parser = command(
        commands,
        "poll",
        run_poll,
        """
        run the poller in the foreground (one per state root)

        Poll the configured sources and deliver new authorized comments, cycle after cycle;
        the interval counts from the end of each cycle. One line per cycle on stderr.
        SIGTERM or SIGINT finishes the item in hand and stops cleanly (exit 0).
        With webhooks.ghWebhook.enabled, it also serves GitHub's signed webhook deliveries on
        webhooks.ghWebhook.host:port (not with --once): a comment pushed wakes it at once.

        exit status: 0 stopped cleanly (--once: the cycle ran), 1 another poller holds the state root,
        the state cannot be read, or (--once) no source could be read; 2 usage or configuration error
        (webhooks.ghWebhook.port in use included).
        """,
    )
    parser.add_argument("--once", action="store_true", help="run one cycle and exit (for cron): 0 when it ran")


def run_poll(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.cycle.daemon import Blocked, install_signal_handlers  # the use cases load only when run

    missing = context.settings.missing_variables(os.environ)  # before any spawn could meet it
    if missing:
        raise ConfigError("\n".join(f"{context.loaded.origin}: {line}" for line in missing))
    clock = context.provided("clock")

    def report(line: str) -> None:
        print(f"{clock.now():%H:%M:%S} {line}", file=sys.stderr, flush=True)

    daemon: Daemon = context.container.daemon(report=report)
    if not args.once:
        daemon.serve = lambda: serve_beside(context, daemon, report)
    install_signal_handlers(daemon)
    sources = context.settings.sources()
    if not sources:
        report("no polling.sources configured: each cycle has nothing to read")
    try:
        daemon.run(once=args.once)
    except Blocked as blocked:
        raise PollerBlocked(f"poll: another poller is running: {blocked}") from None
    last = daemon.last
    if args.once and sources and last is not None and last.sources_failed >= len(sources):
        raise NothingPolled(f"poll: the cycle ran but no source could be read ({last.line()}); see `the-loop events`")
    if not args.once:
        report("stopped")
    return 0


def serve_beside(context: CliContext, daemon: Daemon, report: Callable[[str], None]) -> Callable[[], None]:
    """What serves beside the cycles, when enabled: the fleet page and the webhook receiver. Started
    once the poller lock is held, so a second poller is told it is blocked, never that a port is in
    use. Returns how to stop them."""
    from app.cli.ui import page_served

    stack = ExitStack()
    try:
        stack.enter_context(page_served(context, report))
        if context.settings.webhooks.gh_webhook.enabled:
            stack.callback(serve_webhooks(context, daemon, report))
    except BaseException:
        stack.close()  # the page stops when the receiver cannot start
        raise
    return stack.close


def serve_webhooks(context: CliContext, daemon: Daemon, report: Callable[[str], None]) -> Callable[[], None]:
    """The webhook receiver beside the poller: a kept comment wakes it. Returns how to stop it."""
    hook = context.settings.webhooks.gh_webhook
    context.container.webhook_intake().notify = daemon.wake
    try:
        server = context.container.webhook_server()
    except OSError as error:
        raise UsageProblem(
            f"webhooks.ghWebhook.port: cannot serve on {hook.host}:{hook.port} ({error.strerror or error}); "
            "free the port or set another"
        ) from None
    server.start()
    host, port = server.address
    report(f"serving GitHub webhooks on http://{host}:{port}/")
    return server.stop


def add_status(commands: Commands) -> None:
    parser = command(commands, "status", run_status, _STATUS)
    parser.add_argument(
        "--json", action="store_true", help="one JSON object instead of text (with `config` and `state_root`)"
    )


def run_status(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.cluster.cluster_view import cluster_view, slot_lines
    from app.usecases.cycle.daemon import heartbeat_key
    from app.usecases.views.attention import attention

    container, settings = context.container, context.settings
    holder = container.lock().holder()
    try:
        # a state root no poller ever used stays untouched: `status` writes nothing
        store = container.store() if container.store_present() else None
        key = heartbeat_key(settings.host_id, shared=settings.state.backend == "postgres")
        beat = store.meta().get(key) if store else None
        view = cluster_view(container.cluster(), store.sessions() if store else [])
        held = attention(store) if store else {}
    except StoreUnreachable as error:
        return _unreachable(args, context, holder, error)
    status = poller_status(
        holder=holder,
        heartbeat_text=beat,
        now=container.clock().now(),
        interval_seconds=settings.polling.interval_seconds,
        monotonic=container.clock().monotonic(),
    )
    from app.usecases.cluster.slot_wait import waits

    found = waits(store.meta()) if store else []
    cluster: dict[str, Any] | None = view.as_json() if view.shared else None
    lines = tuple(slot_lines(view, container.session_bound(), found, container.clock().now()))
    print(
        status_output(
            status,
            context.where_json(),
            json_out=args.json,
            cluster=cluster,
            cluster_lines=lines,
            slot_waits=[wait.as_json() for wait in found],
            attention=held,
        )
    )
    return int(status.exit)


def _unreachable(
    args: argparse.Namespace, context: CliContext, holder: dict[str, Any] | None, error: StoreUnreachable
) -> int:
    """The database cannot be reached: what the lock says of the poller here, and of the outage."""
    from app.usecases.cluster.cluster_view import outage_lines

    if args.json:
        store = {"reachable": False, "error": str(error), "poller": (holder or {}).get("failing")}
        shown = {"running": holder is not None, "host": context.settings.host_id, "store": store}
        print(json.dumps(shown | context.where_json()))
        return 1
    status = poller_status(
        holder=holder,
        heartbeat_text=None,
        now=context.container.clock().now(),
        interval_seconds=context.settings.polling.interval_seconds,
        monotonic=context.container.clock().monotonic(),
    )
    print("\n".join([describe(status)[0], *outage_lines(str(error), holder)]))
    return 1
