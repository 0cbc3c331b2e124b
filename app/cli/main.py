"""`python -m app` / `the-loop`: the parser, the global options, and exit codes that mean something.

Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error. Errors go to stderr as one
line (a refused configuration: one line per problem), never a traceback. The configuration is
loaded (read only) before any command runs, so a bad one stops everything and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from app import version
from app.config.files import CONFIG_PATH_VARIABLE, DEFAULT_PATH, USER_PATH, ConfigError

if TYPE_CHECKING:
    from app.cli.context import Parser

PROG = "the-loop"
_EPILOG = f"""\
configuration: --config PATH, else ${CONFIG_PATH_VARIABLE}, else ./{DEFAULT_PATH},
else $XDG_CONFIG_HOME/{USER_PATH} (default ~/.config/…; `the-loop init` writes it);
with none: a sandbox demo. On a terminal each command first says which file and state root it
uses. Every key is in docs/config.md; THE_LOOP_<KEY>__<KEY> variables override.

work items: github:owner/repo#N, owner/repo#N, '#N' (the one watched repository) or the item's URL.

exit status: 0 ok, 1 runtime failure, 2 usage or configuration error."""


class _Version(argparse.Action):
    """argparse's `version` action, asking the installed metadata only when `--version` is given
    (reading it costs more than the rest of a command's start)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object, **__: object) -> None:
        print(f"{PROG} {version()}")
        parser.exit()


def build_parser() -> Parser:
    # the commands' modules are imported here: `status`, `sessions list` and `events` usually start
    # from `app.cli.fast_reads` and never build this parser
    from app.cli.context import Parser
    from app.cli.costs import add_budget, add_costs
    from app.cli.init import add_init
    from app.cli.observe import add_doctor, add_events
    from app.cli.operate import add_poll, add_sessions, add_status
    from app.cli.webhook import add_webhook
    from app.cli.why import add_why
    from app.demo.cli import add_demo, add_sandbox

    parser = Parser(
        prog=PROG,
        description="Deliver authorized GitHub comments into per-work-item coding-agent tmux sessions.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", metavar="PATH", help="the YAML configuration file to read")
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for add in (
        add_init,
        add_poll,
        add_status,
        add_sessions,
        add_events,
        add_why,
        add_costs,
        add_budget,
        add_doctor,
        add_demo,
        add_sandbox,
        add_webhook,
    ):
        add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from app.cli.fast_reads import run_fast

    try:
        fast = run_fast(sys.argv[1:] if argv is None else argv, os.environ)
        return fast if fast is not None else _run(build_parser(), argv)
    except SystemExit as done:  # --help and --version
        return done.code if isinstance(done.code, int) else 0
    except BrokenPipeError:  # `the-loop events | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # one line, never a traceback on an operator's screen
        return _fail(error)


def _run(parser: Parser, argv: Sequence[str] | None) -> int:
    from app.cli.context import CliContext

    args = parser.parse_args(argv)
    if args.command is None or not hasattr(args, "handler"):
        (parser if args.command is None else args.parser).print_help(sys.stderr)
        return 2
    context = CliContext(config_flag=args.config, users_config=getattr(args, "users_config", True))
    if getattr(args, "loads_config", True):  # `init` writes one: it reads none
        context.loaded  # noqa: B018 - a bad configuration stops here, before anything starts
        context.resolve_items(args)
        if sys.stdout.isatty() and not getattr(args, "json", False):  # piped output stays the data alone
            print(context.where_line(), flush=True)
    return int(args.handler(args, context))


def _fail(error: Exception) -> int:
    from app.cli.context import UsageProblem
    from domain.errors import LoopError

    kinds: tuple[tuple[type[Exception], int], ...] = ((UsageProblem, 2), (ConfigError, 2), (LoopError, 1), (OSError, 1))
    status = next((status for kind, status in kinds if isinstance(error, kind)), None)
    if status is None:  # a bug, still said in one line
        text, status = f"unexpected {type(error).__name__}: {error}", 1
    elif isinstance(error, OSError) and error.filename:
        text = f"{error.filename}: {error.strerror}"
    else:
        text = str(error)
    # a refused configuration says every problem, one line each; anything else is one line
    lines = text.splitlines() if isinstance(error, ConfigError) else [text]
    for line in lines or [text]:
        print(f"{PROG}: {' '.join(line.split())}", file=sys.stderr)
    return status
