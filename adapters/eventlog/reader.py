"""Reading the event log back: filters for `events`, and the tail that `events --follow` and the
page's feed read new lines through."""

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

if TYPE_CHECKING:  # annotations only: `events` starts without the refs' patterns
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


@dataclass(slots=True)
class Skipped:
    """Lines a reader skipped as no record: a write cut short by a crash leaves one (an empty line
    and a last line still being written are not counted)."""

    lines: int = 0


def read_events(
    path: Path,
    *,
    since: datetime | None = None,
    types: str | None = None,
    work_item: WorkItemRef | None = None,
    level: Level | None = None,
    limit: int | None = None,
    skipped: Skipped | None = None,
) -> list[Record]:
    """The matching records of the log and its rotated files, oldest first; with `limit`, only the
    newest `limit` of them. Each broken line is skipped, and counted in `skipped`."""
    wanted = EventFilter(since=since, types=types, work_item=work_item, level=level)
    skipped = skipped if skipped is not None else Skipped()
    found: list[Record] = []
    with reading(path):  # no rotation while the files are read: each line is read once
        for part in files_oldest_first(path):
            try:
                with part.open("rb") as log:
                    # the live file's last line may still be written; a rotated file's is never finished
                    lines = (line for line in log if line.endswith(b"\n") or part != path)
                    found.extend(r for r in _parsed(lines, skipped) if wanted.matches(r))
            except FileNotFoundError:
                continue
    if limit is None:
        return found
    return found[-limit:] if limit > 0 else []


class Tail:
    """The records appended to the log, read on from where the last read ended: what the page's
    feed and `events --follow` both read through.

    It starts at the live file's end, or `history` bytes before it (whole lines only). A line
    still being written waits for its newline, and is read again from its start then: its bytes
    may have changed meanwhile (a write cut short is blanked in place). Across a rotation, the rest of the file that was
    renamed is read first, then every file rotated after it (a reader slower than the rotations),
    then the new one from its start; a log truncated in place starts over."""

    def __init__(self, path: Path, history: int = 0, *, wanted: EventFilter = EventFilter()) -> None:
        self.path, self._wanted = path, wanted
        self.skipped = Skipped()
        self._cut = False  # the first line read is the end of a line begun before `history`
        self._read_last: int | None = None  # while no file is held: the inode of the last one read
        self._log = _open(path)
        if self._log is not None:
            start = max(0, os.fstat(self._log.fileno()).st_size - history)
            self._log.seek(max(0, start - 1))
            self._cut = start > 0  # the byte before `start` is read too: a newline there cuts nothing
        else:  # none live yet: what is written from now on is new, though rotated away before the first look
            self._read_last = _newest_rotated(path)

    def read(self) -> list[Record]:
        """The whole records appended since the last read, oldest first; never waits."""
        found: list[Record] = []
        while True:
            if self._log is None:
                if self._read_last is None:
                    self._log = _open(self.path)
                else:  # files may have been made and rotated away since none was live: read those first
                    self._log, between, self._read_last = _after(self.path, self._read_last)
                    found += self._matching(between)
                if self._log is None:
                    return found
                self._read_last = None
            if (lines := self._whole_lines()) is not None:
                return found + self._matching(lines)
            if _moved_on(self.path, self._log):
                found += self._next_file()
            elif self._log.tell() > os.fstat(self._log.fileno()).st_size:
                # truncated in place: the file held shrank (the name's size would be a rotation's
                # new file, and starting over there would read the held one twice)
                self._log.seek(0)
                self._cut = False
            else:
                return found

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def _whole_lines(self) -> list[bytes] | None:
        """The lines ended since the last read (None: not one); the file is left at the start of
        the line still unfinished, never holding its bytes."""
        assert self._log is not None
        *lines, unfinished = self._log.read().split(b"\n")
        self._log.seek(self._log.tell() - len(unfinished))
        if not lines:
            return None
        if self._cut:
            lines, self._cut = lines[1:], False
        return lines

    def _next_file(self) -> list[Record]:
        """Rotated: every write to the held file came before its rename, so what it holds now is
        all it will ever hold (a cut last line stays cut); then the files rotated after it."""
        assert self._log is not None
        lines = self._log.read().split(b"\n")
        if self._cut:
            lines = lines[1:]
        held = os.fstat(self._log.fileno()).st_ino
        self._log.close()
        self._log, between, self._read_last = _after(self.path, held)
        self._cut = False
        return self._matching([*lines, *between])

    def _matching(self, lines: Iterable[bytes]) -> list[Record]:
        return [r for r in _parsed(lines, self.skipped) if self._wanted.matches(r)]


def follow_events(
    path: Path,
    wanted: EventFilter = EventFilter(),
    *,
    poll_seconds: float = 0.25,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Record]:
    """Records appended after this call, as they arrive (`Tail`); never ends."""
    return _followed(Tail(path, wanted=wanted), poll_seconds, sleep)  # at the end now, not at the first `next`


def _followed(tail: Tail, poll_seconds: float, sleep: Callable[[float], None]) -> Iterator[Record]:
    try:
        while True:
            if found := tail.read():
                yield from found
            else:
                sleep(poll_seconds)
    finally:
        tail.close()


def _after(path: Path, held: int) -> tuple[BinaryIO | None, list[bytes], int]:
    """The live file, the lines of every rotated file newer than the one whose inode is `held`, and
    the inode of the last of those read (`held` when none): all opened under the readers' lock, so
    no rotation renames them while they are listed and opened; read after, from the descriptors,
    whatever rotates meanwhile."""
    with reading(path):
        live = _open(path)
        rotated = [f for f in (_open(p) for p in files_oldest_first(path)[:-1]) if f is not None]
    live_inode = os.fstat(live.fileno()).st_ino if live is not None else None
    try:
        inodes = [os.fstat(f.fileno()).st_ino for f in rotated]
        start = inodes.index(held) + 1 if held in inodes else 0  # not there: deleted, the oldest
        end = inodes.index(live_inode) if live_inode in inodes else len(rotated)
        lines = [line for f in rotated[start:end] for line in f.read().split(b"\n")]
        last = inodes[end - 1] if end > start else held
    finally:
        for f in rotated:
            f.close()
    return live, lines, last


def _newest_rotated(path: Path) -> int:
    """The inode of the newest rotated file now (-1: none, so every one rotated later is read)."""
    rotated = files_oldest_first(path)[:-1]
    try:
        return os.stat(rotated[-1]).st_ino if rotated else -1
    except FileNotFoundError:
        return -1


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


def _parsed(lines: Iterable[bytes], skipped: Skipped) -> Iterator[Record]:
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if isinstance(record, dict):
            yield record
        elif line.strip():
            skipped.lines += 1


def _at(record: Record) -> datetime | None:
    try:
        return _aware(datetime.fromisoformat(str(record.get("ts"))))
    except ValueError:
        return None


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)
