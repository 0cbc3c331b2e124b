"""Claude Code's own lock on ~/.claude.json, pinned against the real binary in tmux, offline: what
`adapters.harnesses.claude.config_lock` takes the same way (docs/claude-code.md)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from adapters.clock import SystemClock
from adapters.harnesses.claude.config_lock import STALE_SECONDS, claude_config_lock, lock_path
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.rig import ClaudeRig
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

HELD = "Failed to save config with lock: Error: Lock file is already being held"
START = 90.0  # a Claude starting on a loaded machine


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None


@contextmanager
def _held_fresh(config: Path) -> Iterator[int]:
    """Hold the lock as a live holder does, taken as ClaudeTrust takes it and its mtime refreshed
    while held; yields the directory's inode."""
    lock = lock_path(config)
    done = threading.Event()

    def refresh() -> None:
        while not done.wait(0.5):
            os.utime(lock)

    with claude_config_lock(config):
        refresher = threading.Thread(target=refresh, daemon=True)
        refresher.start()
        try:
            yield os.stat(lock).st_ino
        finally:
            done.set()
            refresher.join()


def test_a_lock_directory_older_than_the_stale_limit_is_taken_over_by_a_starting_claude(claude: ClaudeRig) -> None:
    lock = lock_path(claude.home.config_file)
    lock.mkdir()
    then = SystemClock().epoch() - STALE_SECONDS - 50
    os.utime(lock, (then, then))
    planted = os.stat(lock).st_ino

    claude.spawn(claude.folder())

    # removed as stale, then made and removed again around each of its writes
    wait_for(lambda: _inode(lock) != planted, timeout=START, what="Claude to take the stale lock over")


def test_a_starting_claude_leaves_a_lock_kept_fresh_alone_and_soon_writes_without_it(
    claude: ClaudeRig, tmp_path: Path
) -> None:
    config = claude.home.config_file
    debug = tmp_path / "debug.log"
    with _held_fresh(config) as planted:
        before = config.stat().st_ino
        claude.spawn(claude.folder(), "--debug-file", str(debug))
        wait_for(lambda: HELD in _text(debug), timeout=START, what="Claude to find its config lock held")
        wait_for(lambda: config.stat().st_ino != before, timeout=START, what="Claude to write without the lock")

        assert _inode(lock_path(config)) == planted


def test_a_claude_on_its_way_out_writes_the_file_without_asking_for_the_lock(claude: ClaudeRig, tmp_path: Path) -> None:
    """With the feature flags it has offline. A change of the-loop's can be lost to such a write,
    which ClaudeTrust's read-back covers."""
    debug = tmp_path / "debug.log"
    session = claude.spawn(claude.folder(), "--debug-file", str(debug))
    claude.hooks.wait("SessionStart", session.session_id, timeout=START)
    with _held_fresh(claude.home.config_file) as planted:
        held_from = debug.stat().st_size
        claude.end(session)  # tmux sends SIGHUP; it has exited when this returns

        assert _inode(lock_path(claude.home.config_file)) == planted
    # all it logged once the lock was held: on a loaded machine its write can be logged before its
    # `SessionEnd` hook's line, not only after it; and a save of its start still under way when the
    # lock was taken asks for it, gives up (HELD) and skips its write — so the way out's write is
    # one logged after the last such give-up: a locked write that gave up would not write at all
    while_held = debug.read_bytes()[held_from:].decode("utf-8", errors="replace")
    assert "SessionEnd:other" in while_held
    assert "written atomically" in while_held.rsplit(HELD, 1)[-1]


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
