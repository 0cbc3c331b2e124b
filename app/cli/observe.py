"""The commands that look without touching: `events` (the log) and `doctor` (the machine)."""

from __future__ import annotations

import argparse
import itertools
import os
from typing import TYPE_CHECKING

from app.cli.context import CliContext, Commands, UsageProblem, command, work_item
from app.cli.events_view import parse_since, show_events
from domain.events import Level

if TYPE_CHECKING:
    from domain.ports import ClockPort


def add_events(commands: Commands) -> None:
    parser = command(
        commands,
        "events",
        run_events,
        """
        the event log as a table, JSON lines, or a live tail

        Show the event log (eventLog.path), oldest first. Every event is listed in docs/events.md.
        """,
    )
    parser.add_argument("--type", metavar="GLOB", help="event names matching GLOB, e.g. 'session.*'")
    parser.add_argument("--work-item", type=work_item, metavar="REF", help="only events of this work item")
    parser.add_argument("--since", metavar="15m|ISO", help="only events since then: 30s, 15m, 2h, 1d or an ISO time")
    levels = [level.value for level in Level]
    parser.add_argument("--level", choices=levels, help="only events at this level or above")
    parser.add_argument("--limit", type=_count, default=50, metavar="N", help="the newest N (default 50; 0: all)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line, as logged")
    parser.add_argument("--follow", "-f", action="store_true", help="then keep showing new events until interrupted")


def run_events(args: argparse.Namespace, context: CliContext) -> int:
    # the reader lives with the adapters; app.container re-exports it for the CLI
    from app.container import EventFilter, Skipped, follow_events, read_events

    path = context.settings.event_log_path
    clock: ClockPort = context.provided("clock")
    try:
        since = parse_since(args.since, now=clock.now()) if args.since else None
    except ValueError as error:
        raise UsageProblem(f"events: argument --since: {error}") from None
    wanted = {
        "since": since,
        "types": args.type,
        "work_item": args.work_item,
        "level": args.level and Level(args.level),
    }
    tail = follow_events(path, EventFilter(**wanted)) if args.follow else iter(())  # starts at today's end
    skipped = Skipped()
    shown = read_events(path, **wanted, limit=args.limit or None, skipped=skipped)
    return show_events(shown, tail, path=path, json_lines=args.json, follow=args.follow, skipped=skipped.lines)


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a whole number, 0 or more (got {text!r})")
    return int(text)


def add_doctor(commands: Commands) -> None:
    command(
        commands,
        "doctor",
        run_doctor,
        """
        check this machine: tmux, each harness as its panes start it, gh and its login, the state root, each repository

        One line per check, ✓ or ✗ with the fix (– when the configuration does not need it).
        Exit status 1 when any check fails.
        """,
    )


def run_doctor(args: argparse.Namespace, context: CliContext) -> int:
    from app.cli.doctor import DoctorProbe, Mark, diagnose, parked_checks  # the settings model: only when run

    probe: DoctorProbe = context.provided("doctor_probe")
    failed = False
    checks = diagnose(context.settings, origin=context.loaded.origin, probe=probe, environ=os.environ)
    if context.container.store_present():  # never creates a store to look at it
        checks = itertools.chain(checks, parked_checks(context.provided("store").sessions()))
    for check in checks:
        print(check.line(), flush=True)
        failed = failed or check.mark is Mark.FAILED
    return 1 if failed else 0
