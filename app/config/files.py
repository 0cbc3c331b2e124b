"""Where the configuration file is looked for, and the error when it cannot be used.

Imports nothing heavy: the parser's help names these before any configuration is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from domain.errors import LoopError

CONFIG_PATH_VARIABLE = "THE_LOOP_CLI_CONFIG"  # where the file is, not a key in it
DEFAULT_PATH = Path(".the-loop") / "cli-config.yaml"  # in the working directory
USER_PATH = Path("the-loop") / "cli-config.yaml"  # under $XDG_CONFIG_HOME, default ~/.config


class ConfigError(LoopError):
    """The configuration cannot be used; the message names the file (or variable) and the key."""


def user_path(environ: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/the-loop/cli-config.yaml`; an unset, empty or relative variable means ~/.config."""
    base = environ.get("XDG_CONFIG_HOME", "")
    if base and Path(base).is_absolute():
        return Path(base) / USER_PATH
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    return home / ".config" / USER_PATH
