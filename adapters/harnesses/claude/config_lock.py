"""Claude Code's own lock on `~/.claude.json`, taken the way Claude Code takes it, so that a running
Claude and the-loop never rewrite the file at the same time.

Claude Code (a bundled `proper-lockfile`) makes the directory `<file>.lock` beside the file's own
name (not its symlink target) before it reads and rewrites the file, and removes it after; a
directory whose mtime is more than 10 s old is stale and is removed by whoever finds it. A live
holder refreshes the mtime every 5 s; this lock is held for milliseconds and does not. A Claude that
finds the lock held retries (from 200 ms) and, past about 1.5 s at start-up or 10-20 s later on,
writes without it: so it must never be held long. It is removed only while it is still the directory
that was made (or judged stale): one a Claude made meanwhile is left. Pinned in
`tests/claude/test_claude_config_lock_facts.py`.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from adapters.clock import SystemClock
from domain.errors import TrustError

STALE_SECONDS = 10.0  # proper-lockfile's default, which Claude Code keeps for this file
WAIT_SECONDS = 2 * STALE_SECONDS  # a live holder is done by then, a dead one's lock stale
RETRY_SECONDS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05)
_Identity = tuple[int, int, int]  # device, inode, mtime (ns): one directory, as it was when looked at


def lock_path(config: Path) -> Path:
    return config.with_name(config.name + ".lock")


@contextmanager
def claude_config_lock(
    config: Path,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[None]:
    """Hold Claude Code's lock on `config` (its path as Claude names it, symlinks unresolved)."""
    lock = lock_path(config)
    try:
        config.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrustError(f"{config}: cannot lock: {exc}") from exc
    made = _take(lock, sleep=sleep)
    try:
        yield
    finally:
        _release(lock, made)


def _release(lock: Path, made: _Identity | None) -> None:
    """Remove the lock only while it is still the directory this process made: had the-loop stalled
    past the staleness while holding it, a Claude may have removed it as stale and made its own."""
    if made is None or _identity(lock) != made:
        return
    try:
        lock.rmdir()
    except FileNotFoundError:
        pass  # found stale and removed by another writer: nothing of ours is left
    except OSError as exc:
        raise TrustError(f"{lock}: cannot release: {exc}") from exc


def _take(lock: Path, *, sleep: Callable[[float], None]) -> _Identity | None:
    """The lock taken, and the directory made (None: it could not be looked at once made, and is
    left to go stale rather than risk removing another's)."""
    waited = 0.0
    for attempt in itertools.count():
        try:
            lock.mkdir()
            return _identity(lock)
        except FileExistsError:
            pass
        except OSError as exc:
            raise TrustError(f"{lock}: cannot lock: {exc}") from exc
        # judged as Claude Code judges it: wall time against the directory's mtime
        if _removed_as_stale(lock, now=SystemClock().epoch()):
            continue
        if waited >= WAIT_SECONDS:
            break
        pause = RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)]
        sleep(pause)
        waited += pause
    raise TrustError(f"{lock}: held by another writer for more than {WAIT_SECONDS:.0f} s and not stale; not trusted")


def _removed_as_stale(lock: Path, *, now: float) -> bool:
    """Remove the lock when its holder stopped refreshing it; whether it is gone (or was already).
    Only the directory judged stale is removed: looked at again right before the removal, one that
    was replaced (another writer removed it as stale and took a fresh one) or refreshed is left.
    What remains is the instant between that last look and `rmdir`: no call removes a directory only
    if it is still the one looked at."""
    try:
        seen = os.stat(lock)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if seen.st_mtime >= now - STALE_SECONDS or _identity(lock) != _identity_of(seen):
        return False  # fresh, or replaced or refreshed since the look: a live holder's, waited for
    try:
        lock.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False  # not ours to judge (not empty, no permission): wait as for a live holder
    return True


def _identity_of(seen: os.stat_result) -> _Identity:
    """An inode number may be given again to a directory made right after one was removed: the mtime
    tells them apart (the-loop never refreshes its own lock, a Claude makes its lock fresh)."""
    return seen.st_dev, seen.st_ino, seen.st_mtime_ns


def _identity(lock: Path) -> _Identity | None:
    try:
        return _identity_of(os.stat(lock))
    except OSError:
        return None
