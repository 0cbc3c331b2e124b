"""What is at a work item's folder, read from the filesystem alone: ours (ready or not) or not."""

from __future__ import annotations

import os
from pathlib import Path

from domain.workspace import Found

READY_MARK = "the-loop-ready"  # in the worktree's own git folder: no file appears in the worktree


def admin_dir(folder: Path, clone: Path) -> Path | None:
    """The worktree's administrative folder inside `clone`, when `folder` is a worktree of it."""
    try:
        text = (folder / ".git").read_text(encoding="utf-8").strip()
        if not text.startswith("gitdir: "):
            return None
        admin = Path(text.removeprefix("gitdir: ")).resolve()
        back = Path((admin / "gitdir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        return None
    ours = admin.parent == (clone / "worktrees").resolve() and back == (folder / ".git").resolve()
    return admin if ours else None


def found_at(folder: Path, clone: Path) -> Found:
    try:
        if not os.path.lexists(folder) or (folder.is_dir() and not any(folder.iterdir())):
            return Found.MISSING
    except OSError:
        return Found.FOREIGN
    admin = admin_dir(folder, clone)
    if admin is None:
        return Found.FOREIGN
    return Found.READY if (admin / READY_MARK).is_file() else Found.UNFINISHED


def size_on_disk(folder: Path) -> int:
    """Bytes allocated to everything under `folder` (symbolic links not followed); 0 when gone."""
    total = 0
    for root, dirs, files in os.walk(folder, onerror=lambda _error: None):
        for name in (*dirs, *files):
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                continue  # went away while we counted
    return total
