"""The machine's memory, as Linux states it (`/proc/meminfo`): its total for the default of
`cluster.maxSessions`, what is available for admitting a new agent (`cluster.minFreeMemoryMiB`)."""

from __future__ import annotations

import os
from pathlib import Path

from domain.slots import memory_available, memory_total

MEMINFO = Path("/proc/meminfo")


def machine_memory(meminfo: Path = MEMINFO) -> int | None:
    """The machine's memory in bytes: `MemTotal`, else what the system's page counts say (not
    Linux); None when neither can be read."""
    try:
        found = memory_total(meminfo.read_text(encoding="ascii", errors="replace"))
    except OSError:
        found = None
    return found if found is not None else _pages()


def _pages() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def free_memory(meminfo: Path = MEMINFO) -> int | None:
    """What a new process can take without swapping, in bytes (`MemAvailable`); None when it
    cannot be read (not Linux)."""
    try:
        return memory_available(meminfo.read_text(encoding="ascii", errors="replace"))
    except OSError:
        return None
