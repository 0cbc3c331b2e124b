"""`demo` and `sandbox …`: try the-loop on one machine, and drive the local sandbox tracker."""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.cli.context import CliContext, Commands, UsageProblem, command, group, work_item
from app.cli.events_view import as_json
from domain.errors import InvalidRef, LoopError
from domain.events import Level
from domain.model import ItemState
from domain.refs import RepoRef

if TYPE_CHECKING:
    from app.demo.sandbox import SandboxAdmin

_TMUX_INSTALL = (
    "install it (Debian/Ubuntu: sudo apt-get install tmux; macOS: brew install tmux) or run scripts/bootstrap.sh"
)


def add_demo(commands: Commands) -> None:
    command(
        commands,
        "demo",
        run_demo,
        """
        try the-loop on this machine: a sandbox item, its session, one delivered comment

        Open a sandbox work item, run one poll cycle (its session spawns on a private tmux
        server), post a comment, run another cycle (it is delivered), then say how to watch.
        Each run opens a new item. Needs tmux; no GitHub account, no network.
        """,
    ).set_defaults(users_config=False)  # the built-in demo configuration, whatever `init` wrote


def add_sandbox(commands: Commands) -> None:
    sandbox = group(commands, "sandbox", "the local sandbox tracker: work items and comments, no network")
    new = command(sandbox, "new", run_new, "open a work item; prints its ref")
    new.add_argument("--repo", type=_repo, metavar="OWNER/REPO", help="default: the first sandbox source's")
    new.add_argument("--title", required=True)
    new.add_argument("--body", default="", help="the description ('-': read it from stdin)")
    new.add_argument("--label", action="append", default=[], metavar="LABEL", help="repeatable; default: the source's")
    new.add_argument("--author", default="demo")
    comment = command(sandbox, "comment", run_comment, "comment on a work item")
    comment.add_argument("--work-item", type=work_item, required=True, metavar="REF")
    comment.add_argument("--body", required=True, help="the comment ('-': read it from stdin)")
    comment.add_argument("--author", default="demo")
    close = command(sandbox, "close", run_close, "close a work item")
    close.add_argument("--work-item", type=work_item, required=True, metavar="REF")
    close.add_argument("--merged", action="store_true", help="closed as a merged pull request")
    listing = command(sandbox, "list", run_list, "work items, their comments, reactions and the-loop's notices")
    listing.add_argument("--json", action="store_true", help="one JSON object per work item, a line each")
    for each in (new, comment, close, listing):
        each.set_defaults(users_config=False)  # the demo's sandbox, as `demo` left it


def run_demo(args: argparse.Namespace, context: CliContext) -> int:
    from app.container import read_events
    from app.demo.run import Demo, DemoFailed, plan_for  # the demo's machinery: only when it runs
    from app.demo.view import report_lines

    plan = plan_for(context.settings)
    tmux_version = _tmux_version(context)
    clock = context.provided("clock")
    started = clock.now()
    demo = Demo(
        sandbox=context.provided("sandbox"),
        cycle=context.provided("poll_cycle"),
        store=context.provided("store"),
        tmux=context.provided("tmux"),
        screen=context.provided("tmux_screen"),
        clock=clock,
        plan=plan,
    )
    log = context.settings.event_log_path
    try:
        with _poller_lock(context, started):
            report = demo.run()
    except DemoFailed as failed:  # the log knows why; say it on the same line
        errors = read_events(log, since=started, level=Level.ERROR)
        cause = next((f"{r['event']}: {r.get('reason') or r.get('cause')}" for r in reversed(errors)), "")
        raise DemoFailed(f"{failed}{'; ' + cause if cause else ''}") from None
    config = f" --config {shlex.quote(str(context.loaded.path))}" if context.loaded.path else ""
    app = f"{_python()} -m app{config}"
    events = read_events(log, since=started)
    for text in report_lines(report, settings=context.settings, events=events, tmux=tmux_version, app=app):
        print(text)
    return 0


def _python() -> str:
    """This interpreter as the operator can type it: `python` when that is what PATH finds,
    else its path (`.venv/bin/python` after scripts/demo.sh, where PATH's python lacks the project)."""
    here = Path(sys.executable).absolute()
    found = shutil.which("python")
    if found and Path(found).absolute() == here:
        return "python"
    with suppress(ValueError):
        return shlex.quote(str(here.relative_to(Path.cwd())))
    return shlex.quote(str(here))


def _tmux_version(context: CliContext) -> str:
    from app.demo.run import DemoFailed

    try:
        version: str = context.provided("doctor_probe").version("tmux")
    except LoopError as error:
        raise DemoFailed(f"tmux is needed: {error}; {_TMUX_INSTALL}") from None
    return version


@contextmanager
def _poller_lock(context: CliContext, started: datetime) -> Iterator[None]:
    """One poller per state root: the demo runs cycles, so it is one while it runs."""
    from app.container import LockHeld
    from app.demo.run import DemoFailed

    lock = context.provided("lock")
    try:
        lock.acquire({"pid": os.getpid(), "started": started.isoformat(), "command": "demo"})
    except LockHeld as held:
        raise DemoFailed(f"a poller runs on this state root ({held}); post with `sandbox comment` instead") from None
    try:
        yield
    finally:
        lock.release()


def run_new(args: argparse.Namespace, context: CliContext) -> int:
    sandbox = _sandbox(context)
    sources = [s for s in context.settings.sources() if s.provider == "sandbox"]
    repo = args.repo or (sources[0].repo if sources else RepoRef.parse("sandbox/demo"))
    labels = tuple(args.label) or tuple(s.label for s in sources if s.repo == repo)
    print(sandbox.create_item(repo, args.title, _text(args.body), author=args.author or None, labels=labels))
    return 0


def run_comment(args: argparse.Namespace, context: CliContext) -> int:
    body = _text(args.body)
    if not body.strip():
        raise UsageProblem("sandbox comment: the comment is empty (GitHub refuses those too)")
    comment = _sandbox(context).add_comment(args.work_item, body, author=args.author or None)
    print(f"comment {comment.id} on {comment.item}")
    return 0


def run_close(args: argparse.Namespace, context: CliContext) -> int:
    state = ItemState.MERGED if args.merged else ItemState.CLOSED
    _sandbox(context).close_item(args.work_item, state)
    print(f"{args.work_item} {state.value}")
    return 0


def run_list(args: argparse.Namespace, context: CliContext) -> int:
    from app.demo.sandbox import entry_lines, entry_record

    sandbox = _sandbox(context)
    reactions: dict[str, list[str]] = defaultdict(list)
    for comment_id, reaction in sandbox.reactions():
        reactions[comment_id].append(reaction.value)
    records: list[dict[str, Any]] = [
        entry_record(entry, sandbox.comments(entry.item.ref), reactions, sandbox.login)
        for entry in sandbox.list_items()
    ]
    for record in records:
        print(as_json(record) if args.json else "\n".join(entry_lines(record)))
    if not records and not args.json:
        print("the sandbox holds no work items (open one: sandbox new --title …)", file=sys.stderr)
    return 0


def _sandbox(context: CliContext) -> SandboxAdmin:
    sandbox: SandboxAdmin = context.provided("sandbox")
    return sandbox


def _repo(text: str) -> RepoRef:
    try:
        return RepoRef.parse(text)
    except InvalidRef as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _text(value: str) -> str:
    if value != "-":
        return value
    if sys.stdin.isatty():
        raise UsageProblem("--body -: reads stdin, but stdin is a terminal (pipe the text in)")
    return sys.stdin.read()
