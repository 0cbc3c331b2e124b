"""Reading the event log back: filters for `events`, and a tail that follows new lines."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from adapters.eventlog.rotation import files_oldest_first, reading
from domain.events import Level

if TYPE_CHECKING:  # annotations only: `events` starts without the refs' patterns (issue 19 item 9)
    from domain.refs import WorkItemRef

Record = dict[str, Any]
_RANK = {level.value: rank for rank, level in enumerate(Level)}


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which records to show; `level` is a minimum (`warning` shows warnings and errors)."""

    since: datetime | None = None
    types: str | None = None  # a glob on the event name: `session.*`
    work_item: WorkItemRef | None = None
    level: Level | None = None

    def matches(self, record: Record) -> bool:
        if self.types is not None and not fnmatchcase(str(record.get("event", "")), self.types):
            return False
        if self.work_item is not None and record.get("work_item") != str(self.work_item):
            return False
        if self.level is not None and _RANK.get(record.get("level", ""), -1) < _RANK[self.level.value]:
            return False
        if self.since is None:
            return True
        at = _at(record)
        return at is not None and at >= _aware(self.since)


def read_events(
    path: Path,
    *,
    since: datetime | None = None,
    types: str | None = None,
    work_item: WorkItemRef | None = None,
    level: Level | None = None,
    limit: int | None = None,
) -> list[Record]:
    """The matching records of the log and its rotated files, oldest first; with `limit`, only the
    newest `limit` of them."""
    wanted = EventFilter(since=since, types=types, work_item=work_item, level=level)
    found: list[Record] = []
    with reading(path):  # no rotation while the files are read: each line is read once
        for part in files_oldest_first(path):
            try:
                with part.open("rb") as log:
                    # a crash mid-append can leave one cut last line: it does not parse and is skipped
                    found.extend(r for r in _parsed(log) if wanted.matches(r))
            except FileNotFoundError:
                continue
    if limit is None:
        return found
    return found[-limit:] if limit > 0 else []


def read_from(path: Path, offset: int, *, most: int = 4 * 1024 * 1024) -> tuple[list[Record], int]:
    """The whole records appended at or after byte `offset`, and the offset to read from next; at
    most the last `most` bytes (a first read of a long log starts near its end). A log truncated
    or replaced starts over; a line still being written waits for its newline."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return [], 0
    if size < offset:
        offset = 0
    if size == offset:
        return [], offset
    start = max(offset, size - most)
    with path.open("rb") as log:
        log.seek(start)
        chunk = log.read(size - start)
    if start > offset and b"\n" in chunk:
        chunk = chunk[chunk.index(b"\n") + 1 :]  # a cut first line
        start = size - len(chunk)
    whole = chunk[: chunk.rfind(b"\n") + 1]
    return list(_parsed(whole.split(b"\n"))), start + len(whole)


def follow_events(
    path: Path,
    wanted: EventFilter = EventFilter(),
    *,
    poll_seconds: float = 0.25,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Record]:
    """Records appended after this call, as they arrive; never ends. A line still being
    written is held back until its newline. Across a rotation, the rest of the file that was
    renamed is read first, then the new one from its start; a log truncated in place starts over."""
    log = _open(path)
    if log is not None:
        log.seek(0, os.SEEK_END)
    return _tail(path, log, wanted, poll_seconds, sleep)


def _tail(
    path: Path, log: BinaryIO | None, wanted: EventFilter, poll_seconds: float, sleep: Callable[[float], None]
) -> Iterator[Record]:
    partial = b""
    try:
        while True:
            if log is None:
                log, partial = _open(path), b""
                if log is None:
                    sleep(poll_seconds)
                    continue
            chunk = log.read()
            if chunk:
                *lines, partial = (partial + chunk).split(b"\n")
                yield from (r for r in _parsed(lines) if wanted.matches(r))
            elif _moved_on(path, log):
                # rotated: every write to the old file came before its rename, so what it holds now is
                # all it will ever hold; what came since the last read is read once more, then every
                # file rotated after it (a follower slower than the rotations), then the new file
                rest = log.read()
                lines = (partial + rest).split(b"\n")[:-1]
                yield from (r for r in _parsed(lines) if wanted.matches(r))
                held = os.fstat(log.fileno()).st_ino
                log.close()
                log, between = _after(path, held)
                partial = b""
                yield from (r for r in _parsed(between) if wanted.matches(r))
            elif log.tell() > os.fstat(log.fileno()).st_size:
                # truncated in place: the file held shrank (the name's size would be a rotation's
                # new file, and starting over there would read the held one twice)
                log.seek(0)
                partial = b""
            else:
                sleep(poll_seconds)
    finally:
        if log is not None:
            log.close()


def _after(path: Path, held: int) -> tuple[BinaryIO | None, list[bytes]]:
    """The live file and the lines of every rotated file newer than the one whose inode is
    `held`: all opened under the readers' lock, so no rotation renames them while they are listed
    and opened; read after, from the descriptors, whatever rotates meanwhile."""
    with reading(path):
        live = _open(path)
        rotated = [f for f in (_open(p) for p in files_oldest_first(path)[:-1]) if f is not None]
    live_inode = os.fstat(live.fileno()).st_ino if live is not None else None
    try:
        inodes = [os.fstat(f.fileno()).st_ino for f in rotated]
        start = inodes.index(held) + 1 if held in inodes else 0  # not there: deleted, the oldest
        end = inodes.index(live_inode) if live_inode in inodes else len(rotated)
        lines = [line for f in rotated[start:end] for line in f.read().split(b"\n") if line]
    finally:
        for f in rotated:
            f.close()
    return live, lines


def _open(path: Path) -> BinaryIO | None:
    try:
        return path.open("rb")
    except FileNotFoundError:
        return None


def _moved_on(path: Path, log: BinaryIO) -> bool:
    """Whether the name now points at another file than the one held (or at none)."""
    try:
        return path.stat().st_ino != os.fstat(log.fileno()).st_ino
    except FileNotFoundError:
        return True


def _parsed(lines: Iterable[bytes]) -> Iterator[Record]:
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _at(record: Record) -> datetime | None:
    try:
        return _aware(datetime.fromisoformat(str(record.get("ts"))))
    except ValueError:
        return None


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)
