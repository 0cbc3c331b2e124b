"""What `init` writes: the starter configuration's text, with a comment on each key saying what it is for."""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BUILT_IN_PERMISSION_MODE = "auto"  # the built-in claude profile's (app/config/harnesses.py; a test holds them equal)
# each mode init explains, as Claude Code 2.1.328 runs it (docs/claude-code.md, "The permission mode")
PERMISSION_MODES = {
    "auto": "Claude's own check runs what it deems safe unasked and asks for the rest (the built-in)",
    "default": "asks before every risky tool; each ask reaches the item, answered in a comment "
    "(`the-loop allow` / `deny`): a person sees each command first, at a round trip per tool",
}
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"


class ClaudeLogin(enum.Enum):
    API_KEY = "api-key"  # ANTHROPIC_API_KEY, passed by name from the daemon's environment
    ACCOUNT = "account"  # a /login made once in the daemon's HOME


@dataclass(frozen=True, slots=True)
class ClaudeStart:
    """How every spawn of Claude Code starts: the operator's answers for production."""

    permission_mode: str
    login: ClaudeLogin
    base_url: str = ""


@dataclass(frozen=True, slots=True)
class AppStart:
    """The GitHub App the-loop acts as (docs/github-app.md): its id and its key file's absolute path."""

    app_id: int
    private_key_file: str


@dataclass(frozen=True, slots=True)
class Starter:
    """What the starter file says: the operator's answers, and where its state and tmux server are."""

    repos: tuple[str, ...]
    label: str
    users: tuple[str, ...]
    harness: str
    state_root: str
    socket: str = "the-loop"
    claude: ClaudeStart | None = None
    app: AppStart | None = None


def own_place(path: Path) -> tuple[str, str]:
    """A file's own state folder (beside it, named for it) and tmux server (named for its absolute
    path): two files never share a poller lock, a ledger or a server's sessions."""
    path = path.absolute()
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
    return str(path.parent / f"{path.stem}.state"), f"the-loop-{digest}"


def _flow(values: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(value) for value in values) + "]"  # JSON is YAML: any text stays one value


def render(starter: Starter) -> str:
    """The starter file: the answers, and a comment on each key saying what it is for."""
    return f"""\
# the-loop configuration, written by `the-loop init`.
# Every key, its default and its THE_LOOP_... variable: docs/config.md. Every command reads this
# file unless --config, $THE_LOOP_CLI_CONFIG or ./.the-loop/cli-config.yaml names another.

state:
  # ledgers, sessions, the event log and the poller's lock (one poller per state root)
  root: {json.dumps(starter.state_root)}

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
    # a private tmux server for the agents: tmux -L {starter.socket} ls
    socketName: {json.dumps(starter.socket)}
{_claude(starter.claude) if starter.claude else ""}
{_github(starter.app)}"""


def _github(app: AppStart | None) -> str:
    if app is None:
        return """\
# on GitHub Enterprise, the host the repositories above are on:
# integrations:
#   github:
#     host: ghe.example.com
"""
    return f"""\
integrations:
  github:
    # on GitHub Enterprise, the host the repositories above are on:
    # host: ghe.example.com
{_app(app)}"""


def app_block(app: AppStart) -> str:
    """The App's settings as a block of their own, for a file that has no `integrations` yet."""
    return f"""
integrations:
  github:
{_app(app)}"""


def _app(app: AppStart) -> str:
    return f"""\
    # act as this GitHub App (docs/github-app.md); `the-loop doctor` checks its key, its
    # installations and what each was granted
    app:
      id: {app.app_id}
      # mode 0600: a key others may read is refused at start
      privateKeyFile: {json.dumps(app.private_key_file)}
"""


def _claude(claude: ClaudeStart) -> str:
    """Claude Code for a daemon (docs/claude-code-production.md): no secret's value, ever."""
    base_url = f"\n        ANTHROPIC_BASE_URL: {json.dumps(claude.base_url)}" if claude.base_url else ""
    if claude.login is ClaudeLogin.API_KEY:
        login = (
            "      # the API key by name: its value stays in the daemon's environment (the unit's\n"
            "      # EnvironmentFile, mode 0600), never in this file\n"
            f"      passEnv: [{API_KEY_VARIABLE}]\n"
        )
    else:
        login = "      # logged in with an account: `claude` run once by hand as the daemon's user, then /login\n"
    explained = "\n".join(f"      #   {mode}: {text}" for mode, text in PERMISSION_MODES.items())
    return f"""\
  harnesses:
    claude:
      # Claude Code updates itself while it runs unless this is set: every spawn keeps the version
      # `the-loop doctor` checked{" (and the API base URL)" if base_url else ""}
      env:
        DISABLE_AUTOUPDATER: "1"{base_url}
{login}\
      # what Claude Code runs unasked (docs/claude-code.md, "The permission mode"):
{explained}
      permissionMode: {claude.permission_mode}
"""
