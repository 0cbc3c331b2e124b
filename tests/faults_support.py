"""Faults made for real: a small ext4 file system the test mounts (filled to the last block, or
made immutable, which even root cannot write through), and another process holding SQLite's
write lock."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

FILLER = ".filler"


@dataclass
class SmallDisk:
    """An ext4 image of its own, loop-mounted at `mount` (no blocks reserved for root: full is full)."""

    mount: Path
    image: Path

    def fill(self) -> None:
        """Write until the file system says ENOSPC, in smaller and smaller pieces, then sync."""
        fd = os.open(self.mount / FILLER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 20, 1 << 16, 1 << 12, 1 << 9):
                _write_until_full(fd, size)
            with suppress(OSError):
                os.fsync(fd)
            _write_until_full(fd, 1 << 9)  # what the sync gave back
        finally:
            os.close(fd)

    def free(self) -> None:
        (self.mount / FILLER).unlink(missing_ok=True)
        os.sync()

    def probe_full(self) -> bool:
        """A new file's first block is refused."""
        try:
            fd = os.open(self.mount / ".probe", os.O_WRONLY | os.O_CREAT, 0o600)
        except OSError:
            return True
        try:
            os.write(fd, b"x" * 4096)
            os.fsync(fd)
        except OSError as error:
            return error.errno == errno.ENOSPC
        finally:
            os.close(fd)
            (self.mount / ".probe").unlink()
        return False

    def read_only(self) -> None:
        """Every file and folder immutable (`chattr +i`): no write through a descriptor already
        open, no new file — for root too. SQLite's `-shm` index is left out: it is memory-mapped,
        and a write fault on an immutable mapping is SIGBUS, not an error SQLite could report."""
        paths = [self.mount, *(p for p in self.mount.rglob("*") if not p.name.endswith("-shm"))]
        _chattr("+i", [p for p in paths if p.name != "lost+found"])

    def writable(self) -> None:
        _chattr("-i", [self.mount, *self.mount.rglob("*")])


def _write_until_full(fd: int, size: int) -> None:
    block = b"\0" * size
    while True:
        try:
            os.write(fd, block)
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            return


def _chattr(flag: str, paths: list[Path]) -> None:
    for start in range(0, len(paths), 200):
        subprocess.run(["chattr", flag, *map(str, paths[start : start + 200])], check=True, capture_output=True)


@contextmanager
def small_disk(mount: Path, image: Path, *, megabytes: int = 16) -> Iterator[SmallDisk]:
    """Skips loudly where mounting is not allowed (a container without CAP_SYS_ADMIN)."""
    for tool in ("mkfs.ext4", "mount", "umount", "chattr"):
        if shutil.which(tool) is None:
            pytest.skip(f"SKIPPED LOUDLY: {tool} is not installed (e2fsprogs, mount)")
    mount.mkdir(parents=True, exist_ok=True)
    with image.open("wb") as out:
        out.truncate(megabytes << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)], check=True, capture_output=True)
    mounted = subprocess.run(
        ["mount", "-o", "loop", str(image), str(mount)], check=False, capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"SKIPPED LOUDLY: cannot mount a loop file system here: {mounted.stderr.strip()}")
    disk = SmallDisk(mount, image)
    try:
        yield disk
    finally:
        with suppress(subprocess.CalledProcessError):
            disk.writable()
        # lazily: a process the test started may still hold a file open; the loop device goes with it
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


@contextmanager
def write_locked(path: Path) -> Iterator[None]:
    """Another process holds SQLite's write lock on `path` (BEGIN IMMEDIATE) until the block ends."""
    script = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
        "db.execute('ROLLBACK')\n"
    )
    locker = subprocess.Popen([sys.executable, "-c", script, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert locker.stdin is not None and locker.stdout is not None
    try:
        assert locker.stdout.readline() == b"locked\n", "the other process did not take the write lock"
        yield
    finally:
        locker.stdin.close()
        locker.wait(timeout=30)
