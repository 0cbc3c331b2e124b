"""The event log as the page sees it: the recent records in memory, read on from where it left
off, and a server-sent event stream of each new one. Reading the log costs no GitHub request."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import Counter, deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from domain.events import Event

Record = Mapping[str, Any]
KEEP = 20_000  # records held for the views: a day of a busy fleet's events
# an event this process writes is pushed at once (`poke`); another process's (a CLI command) is
# found by looking at the log's end (one stat) this often
CHECK_SECONDS = 1.0
PING_SECONDS = 15.0
_SHOWN_FIELDS = ("event", "work_item", "comment_id", "ts", "level")
# events that change no item: the page refreshes only its hosts and daemon (no tmux probe) on them
TICKS = frozenset({Event.POLL_CYCLE, Event.POLL_BACKOFF, Event.POLL_SOURCE_FAILED})
HISTORY = 4 * 1024 * 1024  # the end of the live file read first: a long log costs what it holds lately


class Counted(Protocol):
    @property
    def lines(self) -> int: ...


class LogTail(Protocol):
    """The event log's reader (`events --follow` reads through the same): each `read` the whole
    records appended since the last, across rotations; `skipped.lines` the broken lines passed."""

    @property
    def skipped(self) -> Counted: ...

    def read(self) -> list[dict[str, Any]]: ...


class Feed:
    def __init__(self, path: Path, tail: Callable[[Path, int], LogTail], *, keep: int = KEEP) -> None:
        self._tail = tail(path, HISTORY)
        self._lock = threading.Lock()
        self._seq = 0
        self._recent: deque[tuple[int, Record]] = deque(maxlen=keep)
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._tally = Tally()

    def poke(self) -> None:
        """Something was appended (called from any thread): every open stream looks now."""
        with self._lock:
            waiting = list(self._waiting)
        for loop, event in waiting:
            loop.call_soon_threadsafe(event.set)

    def catch_up(self) -> int:
        """Read what was appended; the sequence number of the newest record held."""
        with self._lock:
            for record in self._tail.read():
                self._seq += 1
                self._recent.append((self._seq, record))
                self._tally.add(record)
            return self._seq

    def tally(self) -> Tally:
        """What the log said of the daemon since the page started reading it, counted as it was
        read: a tick's daemon panel costs what is new, not a pass over every record held."""
        self.catch_up()
        with self._lock:
            return self._tally.copy()

    def skipped_lines(self) -> int:
        """Lines of the log read so far that were no record (a write cut short by a crash)."""
        with self._lock:
            return self._tail.skipped.lines

    def recent(self, *, work_item: str | None = None, after: int = 0) -> list[tuple[int, Record]]:
        self.catch_up()
        with self._lock:
            # newest first, only as far back as `after`: a stream's next records cost what is new,
            # not a pass over the thousands held
            found = []
            for seq, record in reversed(self._recent):
                if seq <= after:
                    break
                if work_item is None or record.get("work_item") == work_item:
                    found.append((seq, record))
            return found[::-1]

    async def stream(self) -> AsyncGenerator[bytes, None]:
        """`retry`, then one message per new record, a comment line now and then to keep it open."""
        yield b"retry: 1000\n\n"
        seen = self.catch_up()
        woken = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiting.add(woken)
        try:
            async for chunk in self._follow(woken[1], seen):
                yield chunk
        finally:
            with self._lock:
                self._waiting.discard(woken)

    async def _follow(self, woken: asyncio.Event, seen: int) -> AsyncIterator[bytes]:
        quiet, clock = 0.0, asyncio.get_running_loop().time
        while True:
            started = clock()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(woken.wait(), CHECK_SECONDS)
            woken.clear()
            quiet += clock() - started
            if self.catch_up() > seen:
                for seq, record in self.recent(after=seen):
                    tick = Event.named(record.get("event")) in TICKS
                    # a tick carries its cycle's figures: the page shows them without asking back
                    shown = _figures(record) if tick else {k: record.get(k) for k in _SHOWN_FIELDS if k in record}
                    kind = "event: tick\n" if tick else ""
                    yield f"{kind}id: {seq}\ndata: {json.dumps(shown, ensure_ascii=True)}\n\n".encode()
                    seen = seq
                quiet = 0.0
            elif quiet >= PING_SECONDS:
                yield b": ping\n\n"
                quiet = 0.0


@dataclass
class Tally:
    counts: Counter[Event] = field(default_factory=Counter)  # by event (one this version does not know: none)
    levels: Counter[str] = field(default_factory=Counter)  # by the record's level, as the log spells it
    last: dict[Event, Record] = field(default_factory=dict)  # the newest record of each event

    def add(self, record: Record) -> None:
        self.levels[str(record.get("level"))] += 1
        event = Event.named(record.get("event"))
        if event is not None:
            self.counts[event] += 1
            self.last[event] = record

    def copy(self) -> Tally:
        return Tally(Counter(self.counts), Counter(self.levels), dict(self.last))


def _figures(record: Record) -> dict[str, Any]:
    return {k: v for k, v in record.items() if isinstance(v, int | float) and not isinstance(v, bool)}
