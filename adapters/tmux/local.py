"""The tmux adapter's work outside tmux: the directory a spawn starts in, signals to pane processes."""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

from domain.errors import TmuxFailed

log = logging.getLogger(__name__)


def make_start_directory(cwd: str) -> None:
    """Create a missing start directory and its missing parents, 0755 less the umask (tmux 3.3
    would silently start the harness somewhere else); refuse a path that is not a directory."""
    path = Path(cwd)
    if path.exists() and not path.is_dir():
        raise TmuxFailed("new-session", 1, f"start directory is not a directory: {cwd}")
    try:
        for directory in reversed([d for d in (path, *path.parents) if not d.exists()]):
            directory.mkdir(mode=0o755, exist_ok=True)  # another spawn may have just made it
    except OSError as exc:
        raise TmuxFailed("new-session", 1, f"cannot create start directory {cwd}: {exc}") from exc


def signal_group(pid: int, signum: signal.Signals) -> None:
    """Signal the process group `pid` leads or belongs to: the harness and what it started."""
    try:
        group = os.getpgid(pid)
    except ProcessLookupError:
        return
    if group <= 1 or group == os.getpgrp():  # never init's, never our own
        log.warning("not signalling process group %d of pane process %d", group, pid)
        return
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass
    except PermissionError as exc:
        log.warning("may not signal process group %d: %s", group, exc)
