"""Files written whole: a reader sees the old content or the new, and a failed write leaves nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from adapters.files import atomic
from adapters.files.atomic import write_whole


def test_it_puts_text_or_bytes_at_the_path_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old")
    write_whole(path, "new ✓")
    assert path.read_text(encoding="utf-8") == "new ✓"
    write_whole(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes" and [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_the_file_is_private_unless_a_mode_is_asked_for_and_the_umask_cuts_that(tmp_path: Path) -> None:
    before = os.umask(0o022)
    try:
        write_whole(tmp_path / "private", "x")
        write_whole(tmp_path / "shared", "x", mode=0o666)
    finally:
        os.umask(before)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes == {"private": 0o600, "shared": 0o644}


def test_it_flushes_to_disk_before_the_rename_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(atomic.os, "fsync", synced.append)
    write_whole(tmp_path / "a", "x", fsync=False)
    assert synced == []
    write_whole(tmp_path / "b", "x")
    assert len(synced) == 1


def test_the_temporary_file_is_named_as_the_caller_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: seen.extend(os.listdir(tmp_path)))
    write_whole(tmp_path / "listing.json", "x", prefix=".listing-", suffix=".tmp")
    (temporary,) = seen
    assert temporary.startswith(".listing-") and temporary.endswith(".tmp")
    seen.clear()
    write_whole(tmp_path / "deadline.json", "x")
    assert [name for name in seen if name.startswith(".deadline.json.")]


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path: Path) -> None:
    path = tmp_path / "taken"
    path.mkdir()
    (path / "inside").write_text("kept")
    with pytest.raises(OSError):
        write_whole(path, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"] and (path / "inside").read_text() == "kept"
