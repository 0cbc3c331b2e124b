"""The tmux adapter's work outside tmux: the directory a spawn starts in, signals to pane processes."""

from __future__ import annotations

import logging
import os
import signal
import time
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


LEADS_WITHIN_SECONDS = 2.0  # a pane's process just forked by tmux leads its own group by then


def group_of(pid: int, *, within: float = LEADS_WITHIN_SECONDS, poll_seconds: float = 0.01) -> str:
    """`<pgid>:<start>` of the process group `pid` leads (tmux starts each pane's process as the
    leader of its own), its leader's start time in clock ticks telling it from a later process
    given the same number; "" when it cannot be read. tmux's child makes itself the leader (its
    `setsid`) a moment after the fork, and a look right after the spawn can come first on a loaded
    machine: it looks again until the process leads its group, is gone, or `within` seconds pass."""
    deadline = time.monotonic() + within
    while (start := _start_of(pid)) is not None:
        if _stat(pid)[2:3] == [str(pid)]:  # [] once it is gone
            return f"{pid}:{start}"
        if time.monotonic() >= deadline:
            break
        time.sleep(poll_seconds)
    return ""


def end_group(group: str, *, grace_seconds: float, poll_seconds: float = 0.05) -> bool:
    """SIGTERM what is left of a group `group_of` named, SIGKILL what is still there after
    `grace_seconds`; whether anything was left. A leader alive with another start time is another
    process now: nothing is signalled (a group's number is not given out while any member lives)."""
    pid, _, start = group.partition(":")
    if not pid.isdigit() or not start.isdigit() or int(pid) <= 1 or int(pid) == os.getpgrp():
        return False
    leader = _start_of(int(pid))
    if leader is not None and leader != int(start):
        return False
    if not members_of(int(pid)):
        return False
    for signum, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, grace_seconds)):
        try:
            os.killpg(int(pid), signum)
        except ProcessLookupError:
            return True
        except PermissionError as exc:
            log.warning("may not signal process group %s: %s", pid, exc)
            return True
        deadline = time.monotonic() + wait
        while members_of(int(pid)) and time.monotonic() < deadline:
            time.sleep(poll_seconds)
        if not members_of(int(pid)):
            break
    return True


def members_of(group: int) -> list[int]:
    """The live processes of process group `group` (a zombie is not one)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if len(fields) > 2 and fields[2] == str(group) and fields[0] not in {"Z", "X"}:
                found.append(int(entry.name))
    return found


def group_memory(group: str) -> int | None:
    """The resident memory of what is left of a group `group_of` named, in bytes: its live
    processes' RSS summed (an agent's node, its tools, their children); None when the group is
    gone, its leader is another process now, or nothing could be read."""
    pid, _, start = group.partition(":")
    if not pid.isdigit() or not start.isdigit():
        return None
    leader = _start_of(int(pid))
    if leader is not None and leader != int(start):
        return None
    sizes = [size for member in members_of(int(pid)) if (size := _rss(member)) is not None]
    return sum(sizes) if sizes else None


def _rss(pid: int) -> int | None:
    """A process's resident memory in bytes (`/proc/<pid>/statm`'s second field, in pages)."""
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as file:
            return int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return None


def _start_of(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if len(fields) > 19 and fields[0] not in {"Z", "X"} else None


def _stat(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command's name: state, ppid, pgrp, … ([] when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as file:
            return file.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []
