"""`init`: write a commented starter configuration where every command will find it."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from app.cli.context import CliContext, Commands, UsageProblem, command
from app.cli.init_app import (
    add_app_options,
    added,
    app_start,
    free,
    manifest,
    say_how_to_register,
    say_what_to_select,
    write_into,
    write_manifest,
)
from app.cli.starter import (
    API_KEY_VARIABLE,
    BUILT_IN_PERMISSION_MODE,
    PERMISSION_MODES,
    AppStart,
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

        With --app --app-id N --private-key FILE the-loop acts as that GitHub App (docs/github-app.md):
        its settings go into the new file, or are added to the one at --path (its only change), after its key
        passes the checks the start makes (mode 0600 or 0400, an RSA PEM; else exit 2 and nothing written);
        the permissions and events to select for the App on GitHub are printed. With --manifest FILE it
        writes a manifest GitHub registers the App from, with those permissions and events.
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
    add_app_options(parser)


def run_init(args: argparse.Namespace, context: CliContext) -> int:
    mine = user_path(os.environ).absolute()
    path = Path(args.path).expanduser().absolute() if args.path else mine
    # everything is checked before anything is written: a refusal leaves no file changed
    app, document = app_start(args), manifest(args)
    manifest_path = Path(args.manifest).expanduser().absolute() if document is not None else None
    if manifest_path is not None:
        free(manifest_path)
    if manifest_path is not None and document is not None and app is None:  # the App has no id yet
        write_manifest(manifest_path, document)
        say_what_to_select()
        say_how_to_register(manifest_path)
        return 0
    existing = path.exists() or path.is_symlink()
    if existing and app is None:
        raise UsageProblem(f"init: {path} exists already; not overwritten")
    starter = None if existing else _starter(args, path, mine, app)
    if starter is None:
        assert app is not None
        _no_answers_for(args, path)
        text = added(path, app)
        _check(text, origin=str(path))
    else:
        text = render(starter)
        _check(text, origin="the starter")
    if manifest_path is not None and document is not None:
        write_manifest(manifest_path, document)
    if starter is None:
        write_into(path, text)
    else:
        _create(path, text)
    if starter is not None and starter.claude is not None and starter.claude.login is ClaudeLogin.API_KEY:
        print(
            f"Claude Code's key: set {API_KEY_VARIABLE} in the daemon's environment (the unit's EnvironmentFile, "
            "mode 0600), never in the file (docs/claude-code-production.md)"
        )
    if app is not None:
        say_what_to_select()
        if manifest_path is not None:
            say_how_to_register(manifest_path)
    config = "" if path == mine else f"--config {shlex.quote(str(path))} "
    reads = "every command finds it" if path == mine else f"commands read it with {config.strip()}"
    print(f"wrote {path}: {reads}; check this machine against it: the-loop {config}doctor")
    return 0


def _starter(args: argparse.Namespace, path: Path, mine: Path, app: AppStart | None) -> Starter:
    state_root, socket = (_state_root(os.environ), "the-loop") if path == mine else own_place(path)
    ask = _ask if sys.stdin.isatty() and sys.stdout.isatty() else None
    return replace(_answers(args, ask=ask, state_root=state_root, socket=socket), app=app)


def _no_answers_for(args: argparse.Namespace, path: Path) -> None:
    """The App alone is added to an existing file: the starter's answers are for a new one."""
    flags = {
        "--repo": args.repo, "--user": args.user, "--label": args.label, "--harness": args.harness,
        "--permission-mode": args.permission_mode, "--claude-login": args.claude_login,
        "--api-base-url": args.api_base_url,
    }  # fmt: skip
    given = [flag for flag, value in flags.items() if value]
    if given:
        raise UsageProblem(
            f"init: {path} exists already: --app adds the App to it alone; {', '.join(given)} are for a new file"
        )


def _create(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: a file made meanwhile is not overwritten either; 0600 whatever the umask: the
        # webhook secret and a DSN go in this file later
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
    except FileExistsError:
        raise UsageProblem(f"init: {path} exists already; not overwritten") from None


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


def _check(text: str, *, origin: str) -> None:
    """The file must load as every command will load it; else nothing is written."""
    import yaml  # the configuration's model and parser: only when `init` runs
    from pydantic import ValidationError

    from app.config.errors import describe
    from app.config.settings import Settings

    try:
        settings = Settings(**yaml.safe_load(text))
        settings.harness_spec()
    except ValidationError as error:
        raise UsageProblem(f"init: {describe(error, origin=origin)}") from None
    except LookupError as error:
        raise UsageProblem(f"init: --harness: {error.args[0]}") from None
