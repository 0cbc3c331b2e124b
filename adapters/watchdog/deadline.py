"""The deadline file the daemon writes at each renewal and the watchdog reads: one JSON object,
replaced atomically (a reader sees the old deadline or the new one, never half of either). It names
what it guards — the state root, the tmux server, the code's version and the watchdog's settings —
so a watchdog left by an earlier daemon of another generation knows it is no longer the one asked for."""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from adapters.files.atomic import write_whole
from adapters.tmux.server import socket_path

FILE_NAME = "agents-deadline.json"


@dataclass(frozen=True, slots=True)
class Guards:
    """One generation of the watchdog: what it watches and how. Its command line says exactly this,
    so the watchdog's own argv and the deadline file can be compared."""

    state_root: str
    events: str
    socket: str  # the tmux server: `-L` name (empty: the default one) ...
    tmux_tmpdir: str  # ... under this TMUX_TMPDIR (empty: tmux's default)
    version: str  # the daemon's code: an upgrade brings a watchdog of the new code
    grace: float
    every: float
    log_max_bytes: int
    log_keep: int

    def argv(self) -> list[str]:
        """`python -m adapters.watchdog`'s arguments (`str` of a float reads back as the same float)."""
        return [
            "--state-root", self.state_root, "--events", self.events, "--socket", self.socket,
            "--tmux-tmpdir", self.tmux_tmpdir, "--code-version", self.version, "--grace", str(self.grace),
            "--every", str(self.every), "--log-max-bytes", str(self.log_max_bytes), "--log-keep", str(self.log_keep),
        ]  # fmt: skip

    def same_server(self, other: Guards) -> bool:
        """Whether both name one tmux server, however each spells it (`default` or no name, a
        TMUX_TMPDIR with a trailing slash or through a link, unset or /tmp)."""
        return socket_path(self.socket, self.tmux_tmpdir) == socket_path(other.socket, other.tmux_tmpdir)


@dataclass(frozen=True, slots=True)
class Armed:
    deadline: float  # the host's boot-time clock (CLOCK_BOOTTIME): every process of the machine reads the same
    pid: int  # the daemon that set it
    boot: str  # the machine's boot id: a deadline from before a reboot means nothing
    guards: Guards | None = None  # None: written by a daemon that did not say (an older one)


def boot_id() -> str:
    with contextlib.suppress(OSError):
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    return ""


def write(path: Path, armed: Armed) -> None:
    """`OSError` when it cannot be written (the old deadline, if any, stays)."""
    record: dict[str, Any] = {"deadline": armed.deadline, "pid": armed.pid, "boot": armed.boot}
    if armed.guards is not None:
        record["guards"] = asdict(armed.guards)
    write_whole(path, json.dumps(record))  # a reader sees the old deadline or the new, never half


def read(path: Path) -> Armed | None:
    """None when there is no readable deadline."""
    try:
        raw = json.loads(path.read_bytes())
        guards = Guards(**raw["guards"]) if isinstance(raw.get("guards"), dict) else None
        return Armed(float(raw["deadline"]), int(raw["pid"]), str(raw["boot"]), guards)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
