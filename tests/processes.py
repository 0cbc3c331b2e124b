"""A process's end as /proc shows it: gone, its exit status while unreaped, what is left of its group.
This container's init may never reap a child, so a zombie counts as gone."""

from __future__ import annotations

from pathlib import Path


def _stat_fields(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command's name (its state first); OSError once it is reaped."""
    return Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()


def gone(pid: int) -> bool:
    """The process has exited (a zombie counts)."""
    try:
        return _stat_fields(pid)[0] in ("Z", "X")
    except OSError:
        return True


def zombie_status(pid: int) -> str:
    """The exit status of an unreaped process ('' while it runs or once reaped): the last
    field of /proc/PID/stat holds it as waitpid(2) would report it."""
    try:
        fields = _stat_fields(pid)
    except OSError:
        return ""
    return str(int(fields[-1]) >> 8) if fields[0] == "Z" else ""


def group_members(group: int) -> list[int]:
    """Live processes of process group `group` (zombies left out)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _stat_fields(entry.name)
        except OSError:
            continue
        if int(fields[2]) == group and not gone(int(entry.name)):
            members.append(int(entry.name))
    return members
