"""The commands that run and steer the daemon: registered with their options, wired by the container."""

from __future__ import annotations

import argparse

from app.cli_context import CliContext, Commands, Handler, NotWired, command, group, work_item
from domain.model import SessionStatus


def _not_wired(name: str) -> Handler:
    def handler(args: argparse.Namespace, context: CliContext) -> int:
        raise NotWired(f"`{name}` is not wired yet")

    return handler


def add_poll(commands: Commands) -> None:
    parser = command(
        commands,
        "poll",
        help_text="run the poller in the foreground (one per state root)",
        description="Poll the configured sources and deliver new authorized comments, cycle after cycle.\n"
        "SIGTERM or SIGINT finishes the item in hand and stops cleanly.",
        handler=_not_wired("poll"),
    )
    parser.add_argument("--once", action="store_true", help="run one cycle and exit (for cron): 0 when it ran")


def add_status(commands: Commands) -> None:
    parser = command(
        commands,
        "status",
        help_text="is the poller running, and how did its last cycle go",
        handler=_not_wired("status"),
    )
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")


def add_sessions(commands: Commands) -> None:
    sessions = group(commands, "sessions", help_text="list, attach to, reset or close work-item sessions")
    listing = command(
        sessions, "list", help_text="every session with its live tmux state", handler=_not_wired("sessions list")
    )
    listing.add_argument("--status", choices=[s.value for s in SessionStatus], help="only sessions with this status")
    listing.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    attach = command(
        sessions, "attach", help_text="attach this terminal to a session", handler=_not_wired("sessions attach")
    )
    attach.add_argument("--work-item", type=work_item, required=True, metavar="REF", help="github:owner/repo#N")
    attach.add_argument("--read-only", action="store_true", help="watch without typing (always, for a closed item)")
    reset = command(
        sessions,
        "reset",
        help_text="end a harness and forget its session and ledger",
        description="End the live harness, forget the session record and the item's ledger: its next\n"
        "comments are treated as first sight.",
        handler=_not_wired("sessions reset"),
    )
    which = reset.add_mutually_exclusive_group(required=True)
    which.add_argument("--work-item", type=work_item, action="append", metavar="REF", help="repeatable")
    which.add_argument("--all", action="store_true", help="every recorded session")
    reset.add_argument("--dry-run", action="store_true", help="say what would be done; change nothing")
    close = command(sessions, "close", help_text="close a session by hand", handler=_not_wired("sessions close"))
    close.add_argument("--work-item", type=work_item, required=True, metavar="REF", help="github:owner/repo#N")
    tmux = close.add_mutually_exclusive_group()
    tmux.add_argument(
        "--keep-tmux", action="store_true", help="keep the tmux session (default: routing.tmux.keepSessionOnClose)"
    )
    tmux.add_argument("--kill-tmux", action="store_true", help="kill the tmux session")


def add_demo(commands: Commands) -> None:
    command(
        commands,
        "demo",
        help_text="try the-loop on this machine: a sandbox item, its session, one delivered comment",
        handler=_not_wired("demo"),
    )


def add_sandbox(commands: Commands) -> None:
    sandbox = group(commands, "sandbox", help_text="the local sandbox tracker: work items and comments, no network")
    new = command(sandbox, "new", help_text="open a work item", handler=_not_wired("sandbox new"))
    new.add_argument("--repo", default="sandbox/demo", metavar="OWNER/REPO", help="default: sandbox/demo")
    new.add_argument("--title", required=True)
    new.add_argument("--body", default="")
    new.add_argument("--label", action="append", default=[], metavar="LABEL", help="repeatable")
    new.add_argument("--author", default="demo")
    comment = command(sandbox, "comment", help_text="comment on a work item", handler=_not_wired("sandbox comment"))
    comment.add_argument("--work-item", type=work_item, required=True, metavar="REF")
    comment.add_argument("--body", required=True)
    comment.add_argument("--author", default="demo")
    close = command(sandbox, "close", help_text="close a work item", handler=_not_wired("sandbox close"))
    close.add_argument("--work-item", type=work_item, required=True, metavar="REF")
    listing = command(sandbox, "list", help_text="the sandbox's work items", handler=_not_wired("sandbox list"))
    listing.add_argument("--json", action="store_true", help="JSON lines instead of a table")


def add_webhook(commands: Commands) -> None:
    command(
        commands,
        "webhook",
        help_text="serve GitHub webhooks (webhooks.ghWebhook) in the foreground",
        handler=_not_wired("webhook"),
    )
