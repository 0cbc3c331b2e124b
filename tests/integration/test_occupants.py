"""Which processes use a worktree, read from a /proc laid out by the test: the
real /proc is exercised by tests/integration/test_workspaces_git.py."""

from __future__ import annotations

from pathlib import Path

from adapters.git.occupants import occupants
from domain.workspace import Occupants


def process(proc: Path, pid: int, *, cwd: str, parent: int = 1, fds: tuple[str, ...] = ()) -> None:
    where = proc / str(pid)
    (where / "fd").mkdir(parents=True)
    (where / "stat").write_text(f"{pid} (a (strange) name) S {parent} {pid} {pid} 0 -1\n", encoding="utf-8")
    (where / "root").symlink_to("/")
    if cwd == "unreadable":
        (where / "cwd").write_text("not a link: reading it fails as a denied one does\n", encoding="utf-8")
    else:
        (where / "cwd").symlink_to(cwd)
    for n, target in enumerate(fds):
        (where / "fd" / str(n)).symlink_to(target)


def test_processes_working_in_or_holding_files_in_a_worktree_are_found(tmp_path: Path) -> None:
    proc, folder = tmp_path / "proc", tmp_path / "agents" / "github-acme-widgets-7"
    folder.mkdir(parents=True)
    process(proc, 10, cwd=str(folder / "src"))
    process(proc, 11, cwd="/", fds=("/dev/null", str(folder / "notes.txt")))
    process(proc, 12, cwd=f"{folder} (deleted)")  # its folder removed and made again under it
    process(proc, 13, cwd=f"{folder}-copy")  # a neighbour whose name starts the same: not inside
    process(proc, 14, cwd="unreadable")
    process(proc, 15, cwd="unreadable", parent=0)  # the namespace's init: never in a worktree
    (proc / "self").mkdir()  # not a process id

    assert occupants(folder, proc=proc) == Occupants(inside=(10, 11, 12), unreadable=(14,))


def test_without_proc_the_processes_are_said_unknown(tmp_path: Path) -> None:
    assert occupants(tmp_path, proc=tmp_path / "no-proc") == Occupants(listed=False)
