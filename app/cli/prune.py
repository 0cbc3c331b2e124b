"""`sessions prune`: remove closed sessions' worktrees that are clean, say why the others stay."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from app.cli.context import CliContext, Commands, command, work_item

SHOWN_IGNORED = 5  # ignored entries named per worktree; the rest counted

if TYPE_CHECKING:
    from app.usecases.delivery.workspaces import Workspaces
    from domain.workspace import Pruned


def add_prune(sessions: Commands) -> None:
    prune = command(
        sessions,
        "prune",
        run_prune,
        """
        remove closed sessions' clean worktrees

        For every closed session whose folder is a the-loop worktree: remove the worktree and its
        branch when nothing can be lost (no uncommitted change, no untracked file, no commit missing from
        every remote branch, no change hidden from git status, no ignored file worth keeping, no live tmux
        session or process inside); otherwise keep it and say why. Prints the space freed and the ignored
        files that went with each worktree.
        """,
    )
    prune.add_argument("--dry-run", action="store_true", help="say what would be removed and kept; change nothing")


def add_vouch(sessions: Commands) -> None:
    vouch = command(
        sessions,
        "vouch",
        run_vouch,
        """
        let a fork's pull request's head run on this host

        A fork's pull request is read by its agent, never run: its worktree's setup is skipped and
        its harness ignores the folder's own settings, hooks and MCP servers (docs/workspaces.md). Once you
        have read its head, vouch for that commit: from its next worktree and spawn on, they run as for the
        repository's own. A later push is not covered. Without --head, prints the head to review.
        """,
    )
    vouch.add_argument("--work-item", type=work_item, required=True, metavar="REF", help="github:owner/repo#N")
    vouch.add_argument("--head", metavar="SHA", help="the head commit you reviewed (7 hex digits or more)")


def run_vouch(args: argparse.Namespace, context: CliContext) -> int:
    workspaces: Workspaces = context.provided("workspaces")
    if not args.head:
        head = workspaces.head(args.work_item)
        print(f"{args.work_item}: head {head.sha} of {head.repo or 'a deleted repository'}; review it, then")
        print(f"  the-loop sessions vouch --work-item {args.work_item} --head {head.sha}")
        return 1
    head = workspaces.vouch(args.work_item, args.head)
    print(f"vouched for {args.work_item} at {head.sha} of {head.repo or 'a deleted repository'}")
    return 0


def run_prune(args: argparse.Namespace, context: CliContext) -> int:
    if not context.container.store_present():  # looking must not create a state store
        print("nothing to prune: no state store yet", file=sys.stderr)
        return 0
    workspaces: Workspaces = context.provided("workspaces")
    results = workspaces.prune(dry_run=args.dry_run)
    for result in results:
        print(line(result, dry_run=args.dry_run))
    freed = sum(r.bytes for r in results if r.removed)
    print(f"{'would free' if args.dry_run else 'freed'} {human(freed)} in total ({len(results)} worktrees looked at)")
    return 0


def line(result: Pruned, *, dry_run: bool) -> str:
    where = f"{result.path} ({result.item})"
    text = (
        f"{'would remove' if dry_run else 'removed'} {where}: {human(result.bytes)}{lost(result)}"
        if result.removed
        else f"{'would keep' if dry_run else 'kept'} {where}: {result.reason}"
    )
    return text.encode("unicode_escape").decode("ascii")  # git's messages and file names shown, never sent raw


def lost(result: Pruned) -> str:
    """The ignored files and folders that go with a worktree, largest first."""
    if not result.ignored:
        return ""
    shown = [f"{i.path} ({human(i.bytes)})" for i in result.ignored[:SHOWN_IGNORED]]
    more = len(result.ignored) - SHOWN_IGNORED
    return "; ignored, lost with it: " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def human(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    value, units = size / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while value >= 1024 and len(units) > 1:
        value, units = value / 1024, units[1:]
    return f"{value:.1f} {units[0]}"
