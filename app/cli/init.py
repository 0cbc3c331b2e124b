"""`init`: write a commented starter configuration where every command will find it."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from app.cli.context import CliContext, Commands, UsageProblem, command
from app.cli.starter import (
    API_KEY_VARIABLE,
    BUILT_IN_PERMISSION_MODE,
    PERMISSION_MODES,
    ClaudeLogin,
    ClaudeStart,
    Starter,
    own_place,
    render,
)
from app.config.files import user_path
from domain.errors import InvalidRef
from domain.refs import RepoRef

_DEFAULT_LABEL = "agent"
_DEFAULT_HARNESS = "claude"
Ask = Callable[[str, str], str]


def add_init(commands: Commands) -> None:
    parser = command(
        commands,
        "init",
        run_init,
        """
        write a starter configuration file (never over an existing one)

        Write a commented starter configuration to --path (default: $XDG_CONFIG_HOME/the-loop/
        cli-config.yaml, where every command finds it): the repositories to watch, the label that arms
        a work item, whose comments become prompts, and the harness. For Claude Code also what a daemon
        needs (docs/claude-code-production.md): its auto-updater off, its API key passed by name from the
        daemon's environment (or an account's login), an API base URL if any, and its permission mode.
        A file at --path gets a state folder beside it and a tmux server of its own. With no flags on a
        terminal it asks; with no terminal --repo and --user are needed. An existing file is never
        overwritten (exit 2). The last line names the file written.
        """,
    )
    parser.set_defaults(loads_config=False)
    parser.add_argument("--repo", action="append", default=[], metavar="OWNER/REPO", help="watch it (repeatable)")
    parser.add_argument("--label", metavar="LABEL", help=f"the label that arms a work item (default {_DEFAULT_LABEL})")
    parser.add_argument("--user", action="append", default=[], metavar="LOGIN", help="authorize it (repeatable)")
    parser.add_argument("--harness", metavar="NAME", help=f"the agent to run (default {_DEFAULT_HARNESS})")
    parser.add_argument("--path", metavar="PATH", help="where to write it (default: the XDG path)")
    claude = parser.add_argument_group("Claude Code (--harness claude)")
    claude.add_argument(
        "--permission-mode",
        metavar="MODE",
        help=f"what it runs unasked: auto (the built-in) or default (asks before every risky tool, answered "
        f"from the item), or another of Claude Code's modes (default {BUILT_IN_PERMISSION_MODE})",
    )
    claude.add_argument(
        "--claude-login",
        choices=[login.value for login in ClaudeLogin],
        help=f"api-key: {API_KEY_VARIABLE} passed by name from the daemon's environment (the default); "
        "account: a /login in the daemon's HOME",
    )
    claude.add_argument("--api-base-url", metavar="URL", help="ANTHROPIC_BASE_URL for every spawn (a gateway)")


def run_init(args: argparse.Namespace, context: CliContext) -> int:
    mine = user_path(os.environ).absolute()
    path = Path(args.path).expanduser().absolute() if args.path else mine
    if path.exists() or path.is_symlink():
        raise UsageProblem(f"init: {path} exists already; not overwritten")
    state_root, socket = (_state_root(os.environ), "the-loop") if path == mine else own_place(path)
    ask = _ask if sys.stdin.isatty() and sys.stdout.isatty() else None
    starter = _answers(args, ask=ask, state_root=state_root, socket=socket)
    text = render(starter)
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
    if starter.claude is not None and starter.claude.login is ClaudeLogin.API_KEY:
        print(
            f"Claude Code's key: set {API_KEY_VARIABLE} in the daemon's environment (the unit's EnvironmentFile, "
            "mode 0600), never in the file (docs/claude-code-production.md)"
        )
    config = "" if path == mine else f"--config {shlex.quote(str(path))} "
    reads = "every command finds it" if path == mine else f"commands read it with {config.strip()}"
    print(f"wrote {path}: {reads}; check this machine against it: the-loop {config}doctor")
    return 0


def _answers(args: argparse.Namespace, *, ask: Ask | None, state_root: str, socket: str) -> Starter:
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
    claude = _claude(args, ask) if harness == "claude" else None
    if claude is None and (args.permission_mode or args.claude_login or args.api_base_url):
        raise UsageProblem("init: --permission-mode, --claude-login and --api-base-url are for --harness claude")
    return Starter(repos, label, users, harness, state_root=state_root, socket=socket, claude=claude)


def _claude(args: argparse.Namespace, ask: Ask | None) -> ClaudeStart:
    """Claude Code's production answers: each flag, else asked on a terminal, else its default."""
    mode = args.permission_mode
    if mode is None and ask is not None:
        print("Claude Code's permission mode (routing.harnesses.claude.permissionMode):")
        for name, text in PERMISSION_MODES.items():
            print(f"  {name}: {text}")
        mode = ask("permission mode (auto, default, or another of Claude Code's)", BUILT_IN_PERMISSION_MODE)
    mode = mode or BUILT_IN_PERMISSION_MODE
    known = _permission_modes()
    if mode not in known:
        raise UsageProblem(f"init: --permission-mode: {mode!r} is not one of Claude Code's: {', '.join(known)}")
    login = args.claude_login
    if login is None and ask is not None:
        question = f"how Claude Code logs in: api-key ({API_KEY_VARIABLE} from the daemon's environment) or account"
        login = ask(question, ClaudeLogin.API_KEY.value)
    try:
        chosen = ClaudeLogin(login or ClaudeLogin.API_KEY.value)
    except ValueError:
        raise UsageProblem(f"init: --claude-login: {login!r} is not api-key or account") from None
    base_url = args.api_base_url
    if base_url is None and ask is not None:
        base_url = ask("the API's base URL (ANTHROPIC_BASE_URL; empty: Anthropic's own)", "")
    if base_url and not base_url.startswith(("https://", "http://")):
        raise UsageProblem(f"init: --api-base-url: {base_url!r} is not an http(s) URL")
    return ClaudeStart(permission_mode=mode, login=chosen, base_url=base_url or "")


def _permission_modes() -> tuple[str, ...]:
    from typing import get_args  # the configuration's model: only when `init` runs

    from app.config.harnesses import PermissionMode

    return get_args(PermissionMode)


def _ask(question: str, default: str) -> str:
    # on stdout, where the terminal is: input() would write the question to stderr
    print(f"{question}{f' [{default}]' if default else ''}: ", end="", flush=True)
    return sys.stdin.readline().strip() or default


def _state_root(environ: Mapping[str, str]) -> str:
    """`$XDG_STATE_HOME/the-loop`, default ~/.local/state/the-loop: the same whatever the directory."""
    base = environ.get("XDG_STATE_HOME", "")
    return str(Path(base) / "the-loop") if base and Path(base).is_absolute() else "~/.local/state/the-loop"


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
