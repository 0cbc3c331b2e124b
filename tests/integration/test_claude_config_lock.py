"""ClaudeTrust takes Claude Code's own lock on ~/.claude.json (`~/.claude.json.lock`, a directory)
as Claude Code takes it: waits while a live holder has it, takes over one left stale, never keeps
it (docs/claude-code.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.clock import SystemClock
from adapters.harnesses.claude.config_lock import STALE_SECONDS, WAIT_SECONDS, claude_config_lock
from adapters.harnesses.claude.trust import ClaudeTrust
from domain.errors import TrustError

FOLDER = "/home/op/agents/github-acme-widgets-2"
SETTLE = 0.25  # told apart from the lock's own short waits by its length


def _config(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / ".claude.json"
    config.write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {}}), encoding="utf-8")
    return config


def _held(config: Path, *, age: float = 0.0) -> Path:
    lock = config.with_name(config.name + ".lock")
    lock.mkdir()
    then = SystemClock().epoch() - age
    os.utime(lock, (then, then))
    return lock


def _trusted(config: Path) -> bool:
    return (
        json.loads(config.read_text(encoding="utf-8"))["projects"].get(FOLDER, {}).get("hasTrustDialogAccepted") is True
    )


def test_a_trust_waits_while_claude_code_holds_its_lock_and_is_written_once_it_is_released(tmp_path: Path) -> None:
    config = _config(tmp_path)
    lock = _held(config, age=STALE_SECONDS - 1)  # old, but not yet stale
    seen_while_held: list[bool] = []

    def sleep(seconds: float) -> None:
        if seconds < SETTLE and lock.exists():
            seen_while_held.append(_trusted(config))
            lock.rmdir()  # the holder is done

    assert ClaudeTrust(config, settle_seconds=SETTLE, sleep=sleep).trust(FOLDER) is True

    assert seen_while_held == [False]  # it waited, and wrote nothing while the lock was held
    assert _trusted(config)
    assert not lock.exists()


def test_a_lock_left_stale_by_its_holder_is_taken_over(tmp_path: Path) -> None:
    config = _config(tmp_path)
    lock = _held(config, age=STALE_SECONDS + 1)
    waits: list[float] = []

    assert ClaudeTrust(config, settle_seconds=SETTLE, sleep=waits.append).trust(FOLDER) is True

    assert _trusted(config)
    assert waits == [SETTLE]  # no wait for the lock, only the read-back
    assert not lock.exists()


def test_a_lock_kept_fresh_by_its_holder_longer_than_the_wait_refuses_the_trust_naming_it(tmp_path: Path) -> None:
    config = _config(tmp_path)
    lock = _held(config)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        os.utime(lock)  # a live holder refreshes it

    before = config.read_bytes()
    with pytest.raises(TrustError, match=str(lock)):
        ClaudeTrust(config, settle_seconds=SETTLE, sleep=sleep).trust(FOLDER)

    assert sum(waits) >= WAIT_SECONDS
    assert config.read_bytes() == before
    assert lock.exists()  # the live holder's, left alone


def test_a_folder_trusted_already_is_found_so_without_waiting_for_the_lock_claude_code_holds(tmp_path: Path) -> None:
    config = _config(tmp_path)
    ClaudeTrust(config, settle_seconds=SETTLE, sleep=lambda _: None).trust(FOLDER)
    lock = _held(config)  # a running Claude Code is changing the file
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        os.utime(lock)  # a live holder refreshes it

    assert ClaudeTrust(config, settle_seconds=SETTLE, sleep=sleep).trust(FOLDER) is False

    assert waits == []
    assert lock.exists()  # the live holder's, left alone


def test_the_lock_of_a_symlinked_config_is_beside_the_name_claude_code_uses(tmp_path: Path) -> None:
    target = _config(tmp_path / "dotfiles")
    config = tmp_path / "home" / ".claude.json"
    config.parent.mkdir()
    config.symlink_to(target)
    lock = _held(config)
    seen_while_held: list[bool] = []

    def sleep(seconds: float) -> None:
        if seconds < SETTLE and lock.exists():
            seen_while_held.append(_trusted(target))
            lock.rmdir()

    assert ClaudeTrust(config, settle_seconds=SETTLE, sleep=sleep).trust(FOLDER) is True

    assert seen_while_held == [False]
    assert _trusted(target) and config.is_symlink()


def test_a_lock_claude_code_took_over_while_the_loop_stalled_holding_it_is_left_to_claude(tmp_path: Path) -> None:
    config = _config(tmp_path)
    lock = config.with_name(config.name + ".lock")

    with claude_config_lock(config):
        stalled = SystemClock().epoch() - STALE_SECONDS - 1
        os.utime(lock, (stalled, stalled))  # the-loop stalled past the staleness while holding it ...
        lock.rmdir()  # ... so Claude Code removed it as stale
        _held(config)  # and took its own

    assert lock.exists(), "the-loop removed the lock Claude Code holds"


def test_a_stale_lock_replaced_by_a_fresh_one_between_its_judgement_and_its_removal_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path)
    lock = _held(config, age=STALE_SECONDS + 1)
    real_stat, replaced = os.stat, []

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        seen = real_stat(path, *args, **kwargs)
        if Path(path) == lock and not replaced:  # right after the-loop looked at the stale lock:
            replaced.append(True)
            lock.rmdir()  # another Claude removed it as stale ...
            _held(config)  # ... and took it
        return seen

    held_at_wait: list[bool] = []

    def sleep(seconds: float) -> None:
        held_at_wait.append(lock.exists())
        if lock.exists():
            lock.rmdir()  # that Claude is done

    monkeypatch.setattr(os, "stat", stat)
    with claude_config_lock(config, sleep=sleep):
        pass

    assert replaced and held_at_wait[:1] == [True], "the-loop removed the fresh lock another writer had just taken"
