"""Claude Code's own lock on `~/.claude.json`, taken the way Claude Code takes it, so that a running
Claude and the-loop never rewrite the file at the same time.

Claude Code (a bundled `proper-lockfile`) makes the directory `<file>.lock` beside the file's own
name (not its symlink target) before it reads and rewrites the file, and removes it after; a
directory whose mtime is more than 10 s old is stale and is removed by whoever finds it. A live
holder refreshes the mtime every 5 s; this lock is held for milliseconds and does not. A Claude that
finds the lock held retries (from 200 ms) and, past about 1.5 s at start-up or 10-20 s later on,
writes without it: so it must never be held long. Pinned in `tests/claude/test_claude_config_lock_facts.py`.
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
    _take(lock, sleep=sleep)
    try:
        yield
    finally:
        try:
            lock.rmdir()
        except FileNotFoundError:
            pass  # found stale and removed by another writer: nothing of ours is left
        except OSError as exc:
            raise TrustError(f"{lock}: cannot release: {exc}") from exc


def _take(lock: Path, *, sleep: Callable[[float], None]) -> None:
    waited = 0.0
    for attempt in itertools.count():
        try:
            lock.mkdir()
            return
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
    """Remove the lock when its holder stopped refreshing it; whether it is gone (or was already)."""
    try:
        if os.stat(lock).st_mtime >= now - STALE_SECONDS:
            return False
        lock.rmdir()
    except FileNotFoundError:
        return True
    except OSError:
        return False  # not ours to judge (not empty, no permission): wait as for a live holder
    return True
