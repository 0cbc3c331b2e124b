"""The deadline file the daemon writes at each renewal and the watchdog reads: one JSON object,
replaced atomically (a reader sees the old deadline or the new one, never half of either)."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "agents-deadline.json"


@dataclass(frozen=True, slots=True)
class Armed:
    deadline: float  # the host's boot-time clock (CLOCK_BOOTTIME): every process of the machine reads the same
    pid: int  # the daemon that set it
    boot: str  # the machine's boot id: a deadline from before a reboot means nothing


def boot_id() -> str:
    with contextlib.suppress(OSError):
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    return ""


def write(path: Path, armed: Armed) -> None:
    """`OSError` when it cannot be written (the old deadline, if any, stays)."""
    data = json.dumps({"deadline": armed.deadline, "pid": armed.pid, "boot": armed.boot}).encode()
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def read(path: Path) -> Armed | None:
    """None when there is no readable deadline."""
    try:
        raw = json.loads(path.read_bytes())
        return Armed(float(raw["deadline"]), int(raw["pid"]), str(raw["boot"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
