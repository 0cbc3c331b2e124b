"""The machine's memory, as Linux states it (`/proc/meminfo`), for the default of `cluster.maxSessions`."""

from __future__ import annotations

import os
from pathlib import Path

from domain.slots import memory_total

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
