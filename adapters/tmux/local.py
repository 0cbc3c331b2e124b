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


def signal_pids(pids: set[int], signum: signal.Signals) -> None:
    for pid in pids:
        if pid <= 1:  # never signal init or a process group by accident
            continue
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass
        except PermissionError as exc:
            log.warning("may not signal pane process %d: %s", pid, exc)
