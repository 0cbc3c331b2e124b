"""Size-based rotation of the event log, safe with several writing processes (the daemon, a CLI
command, the watchdog): `events.jsonl` becomes `events.jsonl.1`, `.1` becomes `.2`, … up to `keep`.

Every append holds a shared `flock` on `events.jsonl.lock` from its `open` to its `write`; a
rotation holds it exclusively while it renames. So no line is ever written into a file being
renamed or dropped, and each line is one `write()` into one file: a rotation never loses or splits a
line. Writers open the log afresh for each line, so after a rotation every process writes to the new
file (the inode the name points at now). Readers take the shared lock too, for a consistent set.
"""

from __future__ import annotations

import enum
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from adapters.files.private import open_private

DEFAULT_MAX_BYTES = 16 * 1024 * 1024
DEFAULT_KEEP = 5


@dataclass(frozen=True, slots=True)
class Rotation:
    """`max_bytes`: the live file is rotated before a line would take it past this (0: never);
    `keep`: rotated files kept (`.1` the newest), older ones deleted."""

    max_bytes: int = DEFAULT_MAX_BYTES
    keep: int = DEFAULT_KEEP


def lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def generation(path: Path, number: int) -> Path:
    return path.with_name(f"{path.name}.{number}") if number else path


def files_oldest_first(path: Path) -> list[Path]:
    """The rotated files that exist, oldest first, then the live file (whether it exists or not)."""
    rotated: list[Path] = []
    number = 1
    while (older := generation(path, number)).exists():
        rotated.append(older)
        number += 1
    return [*reversed(rotated), path]


class _NotWritten(enum.Enum):
    FULL = "the line would take the file past the limit"
    AFTER_CUT = "the file does not end with a newline"


def append(path: Path, line: bytes, rotation: Rotation) -> None:
    """`line` appended whole to the live file, rotating it first when it would grow past the limit.
    A write cut short (a full disk, the file size limit) is taken back before the `OSError`, and a
    line a crash cut is ended before this one: a line is whole or not there."""
    rotations, cut_ended = 0, False
    while True:
        # another process may fill the new file before this one writes: look again; the fourth
        # time, a line bigger than the limit still goes, alone in its file
        fd, written = _try_append(path, line, rotation, force=rotations == 3, check_end=not cut_ended)
        try:
            if isinstance(written, int) and written < len(line):
                _take_back(path, fd, written)
                raise OSError(f"event log {path}: short write ({written} of {len(line)} bytes), taken back")
        finally:
            os.close(fd)
        if written is _NotWritten.FULL:
            rotate(path, rotation, adding=len(line))
            rotations += 1
        elif written is _NotWritten.AFTER_CUT:
            _end_cut_line(path)
            cut_ended = True
        else:
            return


def _try_append(
    path: Path, line: bytes, rotation: Rotation, *, force: bool, check_end: bool
) -> tuple[int, int | _NotWritten]:
    """Under the shared lock: the live file's descriptor (the caller closes it) and the bytes of
    `line` written, or why none were."""
    with _locked(path, fcntl.LOCK_SH):
        fd = open_private(path, os.O_RDWR | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            if not force and _over(size, len(line), rotation):
                return fd, _NotWritten.FULL
            # another writer's line may be half copied in now: only the exclusive lock can tell a cut
            if check_end and size and os.pread(fd, 1, size - 1) != b"\n":
                return fd, _NotWritten.AFTER_CUT
            return fd, os.write(fd, line)
        except BaseException:
            os.close(fd)
            raise


def _end_cut_line(path: Path) -> None:
    """Under the exclusive lock, no write is half done: a last line without its newline was cut (a
    crash mid-write) and is ended here, a broken line of its own, never the start of the next one."""
    with _locked(path, fcntl.LOCK_EX):
        fd = open_private(path, os.O_RDWR | os.O_APPEND)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                os.write(fd, b"\n")
        finally:
            os.close(fd)


def _take_back(path: Path, fd: int, written: int) -> None:
    """The `written` bytes just appended through `fd` made no line: overwritten in place as a blank
    line. Never cut off: a follower may have read them already, and a file that shrank under it
    would have it read from the wrong place; nor a move of the lines after them (another process
    may have appended since), which a full disk could stop halfway. Under the exclusive lock, so
    nothing is appended meanwhile; through the descriptor, as a rotation since has renamed the file."""
    if not written:
        return
    with _locked(path, fcntl.LOCK_EX):
        end = os.lseek(fd, 0, os.SEEK_CUR)  # an append leaves the offset just after its bytes
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_APPEND)  # else pwrite appends
        os.pwrite(fd, b" " * (written - 1) + b"\n", end - written)


def rotate(path: Path, rotation: Rotation, *, adding: int = 0) -> None:
    """Shift the generations by one under the exclusive lock: nothing is appending meanwhile.
    Done only if the live file is still over the limit (another process may have rotated it)."""
    with _locked(path, fcntl.LOCK_EX):
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return
        if not _over(size, max(adding, 1), rotation):
            return
        with suppress(FileNotFoundError):
            generation(path, rotation.keep).unlink()
        for number in range(rotation.keep - 1, -1, -1):
            with suppress(FileNotFoundError):
                os.rename(generation(path, number), generation(path, number + 1))
        number = rotation.keep + 1  # left by an earlier, larger `keep`: dropped too
        while generation(path, number).exists():
            generation(path, number).unlink()
            number += 1


@contextmanager
def reading(path: Path) -> Iterator[None]:
    """The shared lock for a reader, when it can take it (a read-only state folder: without)."""
    try:
        fd = os.open(lock_path(path), os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)


def _over(size: int, adding: int, rotation: Rotation) -> bool:
    return rotation.max_bytes > 0 and size > 0 and size + adding > rotation.max_bytes


@contextmanager
def _locked(path: Path, how: int) -> Iterator[None]:
    fd = open_private(lock_path(path), os.O_RDWR)
    try:
        fcntl.flock(fd, how)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
