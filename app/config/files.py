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


def locate(flag: str | None, environ: Mapping[str, str], *, users: bool = True) -> tuple[Path | None, bool]:
    """The file to read (None: none, the built-in defaults) and whether it was asked for explicitly
    (then it must exist): `--config`, `$THE_LOOP_CLI_CONFIG`, `./.the-loop/…`, then the user's
    (not with `users=False`: the demo and the sandbox run on the built-in demo configuration even
    where `the-loop init` wrote the operator's real one)."""
    if flag:
        return Path(flag), True
    if environ.get(CONFIG_PATH_VARIABLE):
        return Path(environ[CONFIG_PATH_VARIABLE]), True
    found = (DEFAULT_PATH, user_path(environ)) if users else (DEFAULT_PATH,)
    return next((path for path in found if path.exists()), None), False
