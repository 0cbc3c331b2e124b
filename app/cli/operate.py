"""The commands that run and steer the daemon: `poll`, `status`, `sessions …` (in `app.cli.sessions`)."""

from __future__ import annotations

import argparse
import json
import sys

from app.cli.context import CliContext, Commands, command
from app.cli.sessions import add_sessions
from app.usecases.poller_status import Exit, describe, poller_status
from domain.errors import LoopError

__all__ = ["add_poll", "add_sessions", "add_status"]

_STATUS_EPILOG = f"""\
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
        help_text="run the poller in the foreground (one per state root)",
        description="Poll the configured sources and deliver new authorized comments, cycle after cycle;\n"
        "the interval counts from the end of each cycle. One line per cycle on stderr.\n"
        "SIGTERM or SIGINT finishes the item in hand and stops cleanly (exit 0).\n\n"
        "exit status: 0 stopped cleanly (--once: the cycle ran), 1 another poller holds the state root,\n"
        "the state cannot be read, or (--once) no source could be read; 2 usage or configuration error.",
        handler=run_poll,
    )
    parser.add_argument("--once", action="store_true", help="run one cycle and exit (for cron): 0 when it ran")


def run_poll(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.daemon import Blocked, Daemon, install_signal_handlers  # the use cases load only when run

    clock = context.provided("clock")

    def report(line: str) -> None:
        print(f"{clock.now():%H:%M:%S} {line}", file=sys.stderr, flush=True)

    daemon: Daemon = context.container.daemon(report=report)
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


def add_status(commands: Commands) -> None:
    parser = command(
        commands,
        "status",
        help_text="is the poller running, and how did its last cycle go",
        description="Whether a poller holds the state root (its pid and start), its last cycle and summary,\n"
        "how long ago, and whether that is overdue.\n\n" + _STATUS_EPILOG,
        handler=run_status,
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


def run_status(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.daemon import HEARTBEAT

    container = context.container
    holder = container.lock().holder()
    # a state root no poller ever used stays untouched: `status` writes nothing
    beat = container.store().meta().get(HEARTBEAT) if container.store_present() else None
    status = poller_status(
        holder=holder,
        heartbeat_text=beat,
        now=container.clock().now(),
        interval_seconds=context.settings.polling.interval_seconds,
    )
    print(json.dumps(status.as_json()) if args.json else "\n".join(describe(status)))
    return int(status.exit)
