"""The state root is the operator's alone: folders 0700 and files 0600 whatever the umask, and
what an earlier version (or another umask) left open closed at start."""

from __future__ import annotations

import os
import stat
from contextlib import suppress
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """`path` and its missing parents, each made 0700 (mkdir's mode alone is cut by the umask,
    and `parents=True` ignores it)."""
    missing = []
    at = path
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # another process made it: tightened at start if it is open
        os.chmod(folder, DIR_MODE)
    return path


def open_private(path: Path, flags: int) -> int:
    """`os.open` of `path`, created 0600 (and its folder 0700) when missing. A file there already
    keeps its mode: `tighten` closes it at start, and says so."""
    private_dir(path.parent)
    return os.open(path, flags | os.O_CREAT, FILE_MODE)


def create_private(path: Path) -> None:
    """`path` created empty and 0600 when missing; a file there already is left as it is (it may
    be read-only, or on a read-only folder: a reader still opens it)."""
    if path.exists():
        return
    with suppress(FileExistsError):  # another process made it meanwhile
        os.close(open_private(path, os.O_WRONLY | os.O_EXCL))


def write_private(path: Path, text: str) -> None:
    """`path` holding `text`, made 0600 when new."""
    fd = open_private(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)


def tighten(root: Path, *files: Path) -> list[tuple[Path, int]]:
    """Close the state root, what lies directly in it, and `files` (the event log, wherever it
    is) to other users; each path whose mode changed, with its mode before. A folder closed makes
    all it holds unreachable, so nothing deeper is walked."""
    paths = [root]
    try:
        paths += sorted(root.iterdir())
    except OSError:
        return []
    changed = []
    for path in dict.fromkeys([*paths, *files]):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
            continue  # never follow a link; never touch what is not ours
        mode = stat.S_IMODE(info.st_mode)
        wanted = mode & (DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE)
        if mode != wanted and mode & 0o077:
            os.chmod(path, wanted)
            changed.append((path, mode))
    return changed


def close_tree(top: Path) -> None:
    """`top` and all under it closed to other users (a few files another program just made)."""
    if not top.exists():
        return
    for path in [top, *top.rglob("*")]:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            continue
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            os.chmod(path, mode & ~0o077)
