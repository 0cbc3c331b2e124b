"""The commands that look without touching: `events` (the log) and `doctor` (the machine)."""

from __future__ import annotations

import argparse
import itertools
import os
import sys
from collections.abc import Callable
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
    parser = command(
        commands,
        "doctor",
        run_doctor,
        """
        check this machine: tmux, each harness as its panes start it, gh and its login, the state root, each repository

        One line per check, ✓ or ✗ with the fix (– when the configuration does not need it).
        Exit status 1 when any check fails. It changes nothing, unless --fix: then what a failed check
        can write itself (Claude Code's first run recorded done, its API key approved) is written once
        the operator consents — asked on a terminal, or given with --yes — and the checks run again.
        """,
    )
    parser.add_argument("--fix", action="store_true", help="write what a failed check can fix, with your consent")
    parser.add_argument("--yes", action="store_true", help="with --fix: consent without being asked (scripts)")


def run_doctor(args: argparse.Namespace, context: CliContext) -> int:
    from app.cli.doctor import (  # the settings model: only when run
        Check,
        DoctorProbe,
        GitHubAppProbe,
        Mark,
        diagnose,
        fit_checks,
        parked_checks,
        unconfigured_checks,
    )
    from app.cli.doctor_fix import repair

    if args.yes and not args.fix:
        raise UsageProblem("doctor: --yes consents to --fix; give both")
    probe: DoctorProbe = context.provided("doctor_probe")
    app: GitHubAppProbe | None = context.provided("github_app_probe")

    def run(shown: Callable[[Check], bool]) -> list[Check]:
        checks = diagnose(context.settings, origin=context.loaded.origin, probe=probe, environ=os.environ, app=app)
        if context.container.store_present():  # never creates a store to look at it
            records = context.provided("store").sessions()
            checks = itertools.chain(
                checks,
                unconfigured_checks(context.settings, records),
                parked_checks(records),
                fit_checks(records, probe.memory_bytes()),
            )
        found = []
        for check in checks:
            if shown(check):
                print(check.line(), flush=True)
            found.append(check)
        return found

    found = run(lambda check: True)
    repairs = [check.repair for check in found if check.mark is Mark.FAILED and check.repair is not None]
    if args.fix and repairs:
        consent = (
            (lambda what: True) if args.yes else (_consent if sys.stdin.isatty() and sys.stdout.isatty() else None)
        )
        if repair(repairs, writer=context.provided("claude_first_run"), consent=consent, say=print):
            failing = {check.subject for check in found if check.mark is Mark.FAILED}
            print("after the fix:")
            found = run(lambda check: check.subject in failing)
    return 1 if any(check.mark is Mark.FAILED for check in found) else 0


def _consent(what: str) -> bool:
    print(f"{what}? [y/N] ", end="", flush=True)  # on stdout, where the terminal is
    return sys.stdin.readline().strip().lower() in {"y", "yes"}
