"""The append-only event log: one JSON object a line in `<state.root>/logs/events.jsonl`."""

from __future__ import annotations

import enum
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.eventlog.rotation import Rotation, append
from domain.events import Event, Level
from domain.ports import EventSink

HEADER = ("ts", "source", "event", "level")
_log = logging.getLogger(__name__)


class JsonlEventLog(EventSink):
    """Writes each event as one line with one `write()` on an `O_APPEND` descriptor.

    On a local file system an append of one buffer is never split by another writer's append,
    so processes sharing the log (the daemon, the CLI) leave only whole lines; the log is rotated
    by size (`rotation`: how, safely with those other writers). A log that cannot be written (disk
    full, permissions) never stops the daemon: the failure and the event go to the process's
    logger (stderr) instead.
    """

    def __init__(self, path: Path, *, clock: Callable[[], datetime], rotation: Rotation | None = None) -> None:
        self.path = path
        self._clock = clock
        self.written: Callable[[], None] = lambda: None  # a cue to a follower in this process (the page)
        self._rotation = rotation or Rotation()

    def emit(self, event: Event, *, level: Level = Level.INFO, source: str = "poller", **fields: Any) -> None:
        record: dict[str, Any] = {
            "ts": timestamp(self._clock()),
            "source": source,
            "event": event.value,
            "level": level.value,
        }
        for key, value in fields.items():
            record[f"field_{key}" if key in HEADER else key] = value
        line = encode(record)
        try:
            append(self.path, line, self._rotation)
        except OSError as error:
            _log.error("event log %s not written (%s): %s", self.path, error, line.decode("ascii").rstrip())
            return
        self.written()


def timestamp(when: datetime) -> str:
    # fixed width (always microseconds, always Z) so the text sorts as the time does
    return when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def encode(record: dict[str, Any]) -> bytes:
    # ASCII only: untrusted text (authors, causes) can put no control byte on an operator's terminal
    return (json.dumps(record, ensure_ascii=True, default=_plain) + "\n").encode("ascii")


def _plain(value: object) -> object:
    """What json cannot encode natively, as the log's readers expect it."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return timestamp(value) if value.tzinfo else value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)  # refs, targets, delivery ids, paths, exceptions: their display form
