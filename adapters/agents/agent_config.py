"""Where each agent CLI keeps its user configuration, found from an environment as the agent finds it.

One function per agent, used both by `doctor` (in the panes' environment, and in the daemon's to
say where the-loop writes) and by what writes there (in the daemon's): Claude Code's and Codex's
trust writers, the Gemini CLI extension. opencode has none: the-loop hands it its configuration in
the spawn's environment (`adapters.harnesses.opencode.plugin`) and neither reads nor writes a file of its.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def _home(env: Mapping[str, str]) -> Path:
    """`$HOME`, else the user's home as Python finds it."""
    return Path(env.get("HOME") or Path.home())


def claude_config_file(env: Mapping[str, str]) -> Path:
    """Claude Code's user configuration: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`."""
    folder = env.get("CLAUDE_CONFIG_DIR")
    return (Path(folder) if folder else _home(env)) / ".claude.json"


def codex_home(env: Mapping[str, str]) -> Path:
    """Codex's folder (its `config.toml`, `auth.json`): `$CODEX_HOME`, else `~/.codex`."""
    folder = env.get("CODEX_HOME")
    return Path(folder) if folder else _home(env) / ".codex"


def codex_config_file(env: Mapping[str, str]) -> Path:
    """Codex's user configuration, `config.toml` in its folder."""
    return codex_home(env) / "config.toml"


def gemini_home(env: Mapping[str, str]) -> Path:
    """Gemini CLI's folder (its `settings.json`, `extensions/`): `$GEMINI_CLI_HOME/.gemini`, else
    `~/.gemini` (its `homedir()` honours `GEMINI_CLI_HOME`)."""
    return Path(env.get("GEMINI_CLI_HOME") or _home(env)) / ".gemini"
