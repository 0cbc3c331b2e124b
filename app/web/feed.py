"""The event log as the page sees it: the recent records in memory, read on from where it left
off, and a server-sent event stream of each new one. Reading the log costs no GitHub request."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

Record = Mapping[str, Any]
ReadFrom = Callable[[Path, int], tuple[list[dict[str, Any]], int]]
KEEP = 20_000  # records held for the views: a day of a busy fleet's events
CHECK_SECONDS = 0.05  # how often an open stream looks at the log's end (one stat)
PING_SECONDS = 15.0
_SHOWN_FIELDS = ("event", "work_item", "comment_id", "ts", "level")
# events that change no item: the page refreshes only its hosts and daemon (no tmux probe) on them
TICKS = frozenset({"poll.cycle", "poll.backoff", "poll.source_failed"})


class Feed:
    def __init__(self, path: Path, read_from: ReadFrom, *, keep: int = KEEP) -> None:
        self._path, self._read_from = path, read_from
        self._lock = threading.Lock()
        self._offset = 0
        self._seq = 0
        self._recent: deque[tuple[int, Record]] = deque(maxlen=keep)

    def catch_up(self) -> int:
        """Read what was appended; the sequence number of the newest record held."""
        with self._lock:
            records, self._offset = self._read_from(self._path, self._offset)
            for record in records:
                self._seq += 1
                self._recent.append((self._seq, record))
            return self._seq

    def recent(self, *, work_item: str | None = None, after: int = 0) -> list[tuple[int, Record]]:
        self.catch_up()
        with self._lock:
            return [
                (seq, record)
                for seq, record in self._recent
                if seq > after and (work_item is None or record.get("work_item") == work_item)
            ]

    async def stream(self) -> AsyncIterator[bytes]:
        """`retry`, then one message per new record, a comment line now and then to keep it open."""
        yield b"retry: 1000\n\n"
        seen = self.catch_up()
        quiet = 0.0
        while True:
            await asyncio.sleep(CHECK_SECONDS)
            quiet += CHECK_SECONDS
            if self.catch_up() > seen:
                for seq, record in self.recent(after=seen):
                    shown = {key: record.get(key) for key in _SHOWN_FIELDS if key in record}
                    kind = "event: tick\n" if record.get("event") in TICKS else ""
                    yield f"{kind}id: {seq}\ndata: {json.dumps(shown, ensure_ascii=True)}\n\n".encode()
                    seen = seq
                quiet = 0.0
            elif quiet >= PING_SECONDS:
                yield b": ping\n\n"
                quiet = 0.0
