"""Which processes use a folder, read from Linux's /proc: their working and root directories and
the files they hold open."""

from __future__ import annotations

import os
from pathlib import Path

from domain.workspace import Occupants

PROC = Path("/proc")


def occupants(folder: Path, *, proc: Path = PROC) -> Occupants:
    """Processes of this user inside `folder`, and those of this user that could not be looked
    into (they may be). Other users' processes are not ours: the-loop's agents run as its own
    user (and a process made undumpable shows as root's in /proc). The namespace's init (parent
    0) is never in a worktree. Without /proc nothing can be said, and that is said."""
    inside: list[int] = []
    unreadable: list[int] = []
    target = os.path.realpath(folder)
    try:
        pids = sorted(int(name) for name in os.listdir(proc) if name.isdigit())
    except OSError:
        return Occupants(listed=False)
    me = os.getuid()
    for pid in pids:
        where = proc / str(pid)
        try:
            if where.stat().st_uid != me or _parent(where) == 0:
                continue
            if any(_within(link, target) for link in _links(where)):
                inside.append(pid)
        except FileNotFoundError:
            continue  # it ended while we looked
        except OSError:
            unreadable.append(pid)
    return Occupants(tuple(inside), tuple(unreadable))


def _parent(where: Path) -> int:
    # `pid (comm) state ppid …`; comm may hold spaces and parentheses: read after the last ')'
    stat = (where / "stat").read_text(encoding="utf-8", errors="replace")
    return int(stat.rsplit(")", 1)[1].split()[1])


def _links(where: Path) -> list[str]:
    links = [os.readlink(where / "cwd"), os.readlink(where / "root")]
    for fd in os.listdir(where / "fd"):
        try:
            links.append(os.readlink(where / "fd" / fd))
        except FileNotFoundError:
            continue  # closed while we looked
    return links


def _within(link: str, target: str) -> bool:
    path = link.removesuffix(" (deleted)")
    return path == target or path.startswith(target.rstrip("/") + "/")
