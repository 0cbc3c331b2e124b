"""`init`: write a commented starter configuration where every command will find it."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.cli.context import CliContext, Commands, UsageProblem, command
from app.config.files import user_path
from domain.errors import InvalidRef
from domain.refs import RepoRef

_DEFAULT_LABEL = "agent"
_DEFAULT_HARNESS = "claude"


@dataclass(frozen=True, slots=True)
class Starter:
    """What the starter file says: the operator's answers."""

    repos: tuple[str, ...]
    label: str
    users: tuple[str, ...]
    harness: str


def add_init(commands: Commands) -> None:
    parser = command(
        commands,
        "init",
        run_init,
        """
        write a starter configuration file (never over an existing one)

        Write a commented starter configuration to --path (default: $XDG_CONFIG_HOME/the-loop/
        cli-config.yaml, where every command finds it): the repositories to watch, the label that arms
        a work item, whose comments become prompts, and the harness. With no flags on a terminal it asks;
        with no terminal --repo and --user are needed. An existing file is never overwritten (exit 2).
        """,
    )
    parser.set_defaults(loads_config=False)
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/REPO", help="watch it (repeatable)")
    parser.add_argument("--label", metavar="LABEL", help=f"the label that arms a work item (default {_DEFAULT_LABEL})")
    parser.add_argument("--user", action="append", default=[], metavar="LOGIN", help="authorize it (repeatable)")
    parser.add_argument("--harness", metavar="NAME", help=f"the agent to run (default {_DEFAULT_HARNESS})")
    parser.add_argument("--path", metavar="PATH", help="where to write it (default: the XDG path)")


def run_init(args: argparse.Namespace, context: CliContext) -> int:
    path = Path(args.path).expanduser() if args.path else user_path(os.environ)
    if path.exists() or path.is_symlink():
        raise UsageProblem(f"init: {path} exists already; not overwritten")
    starter = _answers(args, ask=_ask if sys.stdin.isatty() and sys.stdout.isatty() else None)
    text = render(starter, state_root=_state_root(os.environ))
    _check(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: a file made meanwhile is not overwritten either; 0600 whatever the umask: the
        # webhook secret and a DSN go in this file later
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
    except FileExistsError:
        raise UsageProblem(f"init: {path} exists already; not overwritten") from None
    found = path.absolute() == user_path(os.environ).absolute()
    reads = "every command finds it" if found else f"commands read it with --config {shlex.quote(str(path))}"
    print(f"wrote {path}: {reads}; check this machine against it: the-loop doctor")
    return 0


def _answers(args: argparse.Namespace, *, ask: Callable[[str, str], str] | None) -> Starter:
    repos, users = tuple(args.repo), tuple(args.user)
    if ask is None and (not repos or not users):
        missing = " and ".join(
            flag for flag, given in (("--repo OWNER/REPO", repos), ("--user LOGIN", users)) if not given
        )
        raise UsageProblem(f"init: no terminal to ask on: give {missing} (each repeatable)")
    if ask is not None:
        repos = repos or tuple(ask("repositories to watch (owner/repo, space-separated)", "").split())
        users = users or tuple(ask("whose comments become prompts (GitHub logins, space-separated)", "").split())
    label = args.label or (ask("the label that arms a work item", _DEFAULT_LABEL) if ask else _DEFAULT_LABEL)
    harness = args.harness or (
        ask("the harness (claude, codex, cursor, gemini, opencode)", _DEFAULT_HARNESS) if ask else _DEFAULT_HARNESS
    )
    if not repos or not users:
        raise UsageProblem("init: at least one repository and one authorized user are needed")
    for repo in repos:
        try:
            RepoRef.parse(repo)
        except InvalidRef as error:
            raise UsageProblem(f"init: --repo: {error}") from None
    return Starter(repos=repos, label=label, users=users, harness=harness)


def _ask(question: str, default: str) -> str:
    # on stdout, where the terminal is: input() would write the question to stderr
    print(f"{question}{f' [{default}]' if default else ''}: ", end="", flush=True)
    return sys.stdin.readline().strip() or default


def _state_root(environ: Mapping[str, str]) -> str:
    """`$XDG_STATE_HOME/the-loop`, default ~/.local/state/the-loop: the same whatever the directory."""
    base = environ.get("XDG_STATE_HOME", "")
    return str(Path(base) / "the-loop") if base and Path(base).is_absolute() else "~/.local/state/the-loop"


def _flow(values: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(value) for value in values) + "]"  # JSON is YAML: any text stays one value


def render(starter: Starter, *, state_root: str) -> str:
    """The starter file: the answers, and a comment on each key saying what it is for."""
    return f"""\
# the-loop configuration, written by `the-loop init`.
# Every key, its default and its THE_LOOP_... variable: docs/config.md. Every command reads this
# file unless --config, $THE_LOOP_CLI_CONFIG or ./.the-loop/cli-config.yaml names another.

state:
  # ledgers, sessions, the event log and the poller's lock (one poller per state root)
  root: {json.dumps(state_root)}

polling:
  intervalSeconds: 60
  sources:
    # the watched repositories: a work item carrying the label gets an agent
    - provider: github
      repos: {_flow(starter.repos)}
      label: {json.dumps(starter.label)}

routing:
  # whose comments become prompts; empty: nobody's (another host's login: host/login)
  authorizedUsers: {_flow(starter.users)}
  # the agent each work item gets: claude, codex, cursor, gemini, opencode (docs/harnesses.md)
  defaultHarness: {json.dumps(starter.harness)}
  # each work item's directory, created at its first spawn ({{slug}}: the work item)
  spawnWorkdir: "~/agents/{{slug}}"
  tmux:
    # a private tmux server for the agents: tmux -L the-loop ls
    socketName: the-loop

# on GitHub Enterprise, the host the repositories above are on:
# integrations:
#   github:
#     host: ghe.example.com
"""


def _check(text: str) -> None:
    """The starter must load as every command will load it; else nothing is written."""
    import yaml  # the configuration's model and parser: only when `init` runs
    from pydantic import ValidationError

    from app.config.errors import describe
    from app.config.settings import Settings

    try:
        settings = Settings(**yaml.safe_load(text))
        settings.harness_spec()
    except ValidationError as error:
        raise UsageProblem(f"init: {describe(error, origin='the starter')}") from None
    except LookupError as error:
        raise UsageProblem(f"init: --harness: {error.args[0]}") from None
