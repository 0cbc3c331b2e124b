"""`sessions list|attach|reset|close|prune|vouch`: the operator's hands on the work-item sessions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from app.cli.context import CliContext, Commands, UsageProblem, command, group, work_item
from app.cli.prune import add_prune, add_vouch
from app.cli.read_views import COLUMNS, no_sessions_line, session_json, session_row, table
from app.usecases.views.sessions_admin import STOPPED, UnknownWorkItem
from domain.model import SessionStatus

if TYPE_CHECKING:
    from app.usecases.views.sessions_admin import SessionsAdmin
    from domain.refs import WorkItemRef

_REF_HELP = "github:owner/repo#N, owner/repo#N, #N (the one watched repository) or the item's URL"


def add_sessions(commands: Commands) -> None:
    sessions = group(commands, "sessions", "list, attach to, reset, close or prune work-item sessions")
    listing = command(
        sessions,
        "list",
        run_list,
        """
        every session with its live tmux state

        Every recorded session, and every item `the-loop pause` / `stop` holds that has none (STATE
        "no session"). STATE is what tmux says of the harness's own pane now: live, dead (the harness
        exited), absent (no such pane) or unknown (tmux did not answer). AGENT is what the
        harness says of itself (its receipts): starting, ready, busy, tool (about to run a tool, for 2 s:
        it may ask first), idle, blocked (waiting on a dialog: on what — permission TOOL, question or
        dialog — and for how long), ended or dead; LAST RECEIPT is the last thing it said, and when.
        ITEM STATE is the item's state as the page, `status` and the status reply show it (parked, blocked,
        paused, stopped, abandoned, closed, or what the harness does), with since when, until when and why.
        """,
    )
    listing.add_argument(
        "--status",
        choices=[*(s.value for s in SessionStatus), STOPPED],
        help="only these: active, paused (a paused record, or an item `the-loop pause` holds), closed, "
        "stopped (an item `the-loop stop` holds)",
    )
    listing.add_argument(
        "--json", action="store_true", help="JSON lines instead of a table (each with `config` and `state_root`)"
    )
    attach = command(
        sessions,
        "attach",
        run_attach,
        """
        attach this terminal to a session

        Attach this terminal to the work item's tmux session (detach: Ctrl-b d).
        A closed session is always attached read-only. A hibernated item's session
        is gone (unless a window of yours keeps it): exit 1, saying so.
        """,
    )
    attach.add_argument("--work-item", type=work_item, required=True, metavar="REF", help=_REF_HELP)
    attach.add_argument("--read-only", action="store_true", help="watch without typing (always, for a closed item)")
    _add_reset(sessions)
    close = command(
        sessions,
        "close",
        run_close,
        """
        close a session by hand

        Close the work item's session (reason: operator): the harness is ended
        (routing.tmux.killHarnessOnClose) and no comment is delivered any more. The close holds until
        `sessions reopen`, even while the item stays open and labelled upstream.
        """,
    )
    close.add_argument("--work-item", type=work_item, required=True, metavar="REF", help=_REF_HELP)
    tmux = close.add_mutually_exclusive_group()
    tmux.add_argument(
        "--keep-tmux", action="store_true", help="keep the tmux session (default: routing.tmux.keepSessionOnClose)"
    )
    tmux.add_argument("--kill-tmux", action="store_true", help="kill the tmux session")
    reopen = command(
        sessions,
        "reopen",
        run_reopen,
        """
        reopen a closed session

        Undo a close: comments to the item are delivered again; a harness that is gone is
        respawned (resuming its conversation when the harness can) at the next comment.
        """,
    )
    reopen.add_argument("--work-item", type=work_item, required=True, metavar="REF", help=_REF_HELP)
    start = command(
        sessions,
        "start",
        run_start,
        """
        start an item's agent, or give it another

        As `the-loop start` on the item: the daemon starts the item's agent at its next look at it (an
        item waiting for one, or whose agent is gone). With --harness, the item gets that harness from
        then on: one it runs that is another is ended, and the named one starts in a fresh conversation.
        """,
    )
    start.add_argument("--work-item", type=work_item, required=True, metavar="REF", help=_REF_HELP)
    start.add_argument("--harness", default="", metavar="NAME", help="a configured harness (routing.harnesses)")
    add_prune(sessions)
    add_vouch(sessions)
    _add_move(sessions)


def _add_move(sessions: Commands) -> None:
    move = command(
        sessions,
        "move",
        run_move,
        """
        hand a work item to another host (state.backend postgres)

        Run on the host holding the item: its lease goes to HOST (which starts it once this host
        has stopped trusting it, within cluster.renewDeadlineSeconds), its session here is ended, and HOST
        starts it: resuming the conversation when its harness can there, else fresh, told it moved.
        """,
    )
    move.add_argument("--work-item", type=work_item, required=True, metavar="REF", help=_REF_HELP)
    move.add_argument("--to", required=True, metavar="HOST", help="the cluster.hostId of a live host")


def _add_reset(sessions: Commands) -> None:
    reset = command(
        sessions,
        "reset",
        run_reset,
        """
        end a harness and forget its session and ledger

        End the live harness, forget the session record and the item's ledger: its next
        comments are treated as first sight. Also the remedy for a first spawn refused by a live
        session holding the item's tmux name.
        """,
    )
    which = reset.add_mutually_exclusive_group(required=True)
    which.add_argument("--work-item", type=work_item, action="append", metavar="REF", help="repeatable")
    which.add_argument("--all", action="store_true", help="every work item the state store knows")
    reset.add_argument("--dry-run", action="store_true", help="say what would be done; change nothing")


def _has_state(context: CliContext) -> bool:
    """Whether a state store exists: looking at sessions must not create one."""
    return bool(context.container.store_present())


def _admin(context: CliContext, items: Sequence[WorkItemRef] = ()) -> SessionsAdmin:

    if items and not _has_state(context):
        raise UnknownWorkItem(items[0])
    admin: SessionsAdmin = context.provided("sessions_admin")
    return admin


def run_list(args: argparse.Namespace, context: CliContext) -> int:
    views = _admin(context).listed(args.status) if _has_state(context) else []
    shared = bool(views) and _admin(context).shared
    hosts = _hosts(context) if shared else {}
    if args.json:
        for view in views:
            print(session_json(view, context.where_json(), hosts.get(view.host)))
        return 0
    if not views:
        print(no_sessions_line(args.status, context.state_root), file=sys.stderr)
        return 0
    header = ("HOST", *COLUMNS) if shared else COLUMNS
    for row in table([header, *(session_row(view, shared=shared) for view in views)]):
        print(row)
    # several hosts: each one's heartbeat, sessions and free slots; alone, its slots while an item
    # waits for one: as `status` shows them
    from app.usecases.cluster.cluster_view import cluster_view, slot_lines
    from app.usecases.cluster.slot_wait import waits

    store = context.provided("store")
    cluster = cluster_view(context.provided("cluster"), [] if shared else store.sessions())
    found = waits(store.meta())
    lines = slot_lines(cluster, context.provided("session_bound"), found, context.provided("clock").now())
    if lines:
        print("\n".join(["", *lines]))
    return 0


def _hosts(context: CliContext) -> dict[str, dict[str, object]]:
    """What each session line says of its host (`--json`): its state, heartbeat and free slots."""
    from app.usecases.cluster.cluster_view import cluster_view

    shown = cluster_view(context.provided("cluster"), []).as_json()["hosts"]
    return {
        row["host"]: {
            "host_state": row["state"],
            "host_heartbeat_seconds_ago": row["heartbeat_seconds_ago"],
            "host_sessions": row["sessions"],
            "host_free": row["free"],
        }
        for row in shown
    }


def run_attach(args: argparse.Namespace, context: CliContext) -> int:
    admin = _admin(context, [args.work_item])
    attachment = admin.attachment(args.work_item, read_only=args.read_only)
    if attachment.hibernated:
        print(
            f"{args.work_item} is hibernated: its agent was ended and its tmux session removed, its conversation "
            "kept; its next comment resumes it (then there is a session to attach to)",
            file=sys.stderr,
        )
        return 1
    if attachment.forced:
        print(f"{args.work_item} is closed: attaching read-only", file=sys.stderr)
    return admin.attach(attachment)


def run_reset(args: argparse.Namespace, context: CliContext) -> int:
    admin = _admin(context, args.work_item or [])
    plans = admin.plan_reset(None if args.all else args.work_item) if _has_state(context) else []
    if not plans:
        print("nothing to reset: the state store knows no work item", file=sys.stderr)
    for plan in plans:
        if args.dry_run:
            print(f"would reset {plan.describe(done=False)}")
            continue
        admin.reset(plan)
        print(f"reset {plan.describe(done=True)}")
    return 0


def run_close(args: argparse.Namespace, context: CliContext) -> int:
    keep = True if args.keep_tmux else False if args.kill_tmux else None
    if _admin(context, [args.work_item]).close(args.work_item, keep_tmux=keep):
        print(f"closed {args.work_item}; it stays closed until: the-loop sessions reopen --work-item {args.work_item}")
    else:
        print(f"{args.work_item} was closed already; nothing to do (--kill-tmux also ends its tmux session)")
    return 0


def run_reopen(args: argparse.Namespace, context: CliContext) -> int:
    if _admin(context, [args.work_item]).reopen(args.work_item):
        print(f"reopened {args.work_item}")
    else:
        print(f"{args.work_item} is not closed; nothing to do")
    return 0


def run_start(args: argparse.Namespace, context: CliContext) -> int:
    try:
        print(_admin(context, [args.work_item]).start(args.work_item, harness=args.harness))
    except ValueError as error:
        raise UsageProblem(f"sessions start: {error}") from None
    return 0


def run_move(args: argparse.Namespace, context: CliContext) -> int:
    from app.usecases.cluster.moving import Mover

    mover: Mover = context.provided("mover")
    try:
        moved = mover.move(args.work_item, args.to)
    except ValueError as error:
        raise UsageProblem(f"sessions move: {error}") from None
    here = "its session here ended" if moved.ended_here else "no session of it ran here"
    print(f"moved {moved.item} to {moved.to}: {here}; {moved.to} starts it within {moved.starts_in_seconds:g}s")
    return 0
