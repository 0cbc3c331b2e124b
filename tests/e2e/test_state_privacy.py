"""The state root is the operator's alone, whatever the umask (a defect once suspected): the
store (the receipt secret, comment bodies), the event log, the receipts and the clones of private
repositories are neither readable nor listable by other local users."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.loop_rig import REPO, Loop, loop
from tests.git_support import Origins, require_git
from tests.tmux_support import real_tmux

__all__ = ["loop", "real_tmux"]


@pytest.fixture
def umask_022() -> Iterator[None]:
    """The usual umask: what the-loop creates would be 0644/0755 unless it says otherwise."""
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def _open_to_others(root: Path) -> list[str]:
    """Every path under `root` (and `root`) with a group or other permission bit. Receipts are the
    harness's files, made with its umask (Claude's hooks run `umask 077`; the simulator does not):
    their folders are checked, 0700, not the files."""
    paths = [root, *(p for p in root.rglob("*") if p.suffix != ".receipt")]
    return sorted(
        f"{oct(stat.S_IMODE(p.lstat().st_mode))} {p.relative_to(root.parent)}"
        for p in paths
        if not p.is_symlink() and stat.S_IMODE(p.lstat().st_mode) & 0o077
    )


def test_state_everything_under_the_state_root_is_the_operators_alone_with_umask_022(
    loop: Loop, umask_022: None
) -> None:
    require_git()
    origins = Origins(loop.root / "remote")
    origins.make(REPO)
    loop.workspace = {"mode": "worktree", "cloneUrl": origins.template}

    loop.with_sessions(1)

    assert {"logs", "receipts", "clones", "state.sqlite3", "poller.lock"} <= {p.name for p in loop.state.iterdir()}
    assert _open_to_others(loop.state) == []


def test_state_a_state_root_left_open_by_an_earlier_version_is_closed_at_start_with_an_event(
    loop: Loop, umask_022: None
) -> None:
    loop.items(1)  # the state root, the sandbox's database
    assert loop.cli("poll", "--once").returncode == 0
    for path in (loop.state, loop.state / "logs"):
        path.chmod(0o755)
    for path in (loop.state / "state.sqlite3", loop.log):
        path.chmod(0o644)

    result = loop.cli("poll", "--once")

    assert result.returncode == 0, result.stderr
    assert _open_to_others(loop.state) == []
    tightened = [e for e in loop.events() if e["event"] == "state.permissions_tightened"]
    assert {(e["path"], e["mode_before"]) for e in tightened} >= {
        (str(loop.state), "0o755"),
        (str(loop.state / "state.sqlite3"), "0o644"),
        (str(loop.log), "0o644"),
    }
