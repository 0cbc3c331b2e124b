"""Workspaces on real git: bare origin repositories made by the test, file:// URLs,
no network; tmux, the store and the event log are fakes."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from adapters.git.adapter import GitWorkspaces
from app.usecases.delivery.workspaces import WorkspaceConfig, Workspaces
from app.usecases.unit_of_work import UnitOfWork
from domain.errors import WorkspaceError
from domain.events import Event
from domain.model import SessionRecord, SessionStatus, WorkItem
from domain.refs import RepoRef, WorkItemRef
from domain.workspace import Found, Pruned, WorkspaceMode, WorkspaceSpec
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.fakes.store import FakeStateStore
from tests.fakes.tmux import FakeTmux
from tests.git_support import Origins, git, require_git

REPO = RepoRef.parse("acme/widgets")


class PausingPort(GitWorkspaces):
    """Real git; its first `size` (prune's slow first look) waits until the test lets it go on."""

    def __init__(self, measuring: threading.Event, go_on: threading.Event, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.measuring, self.go_on = measuring, go_on

    def size(self, spec: WorkspaceSpec) -> int:
        if not self.measuring.is_set():
            self.measuring.set()
            assert self.go_on.wait(timeout=120)
        return super().size(spec)


class Rig:
    def __init__(self, tmp: Path, *, pausing: bool = False, **config: object) -> None:
        require_git()
        self.tmp = tmp
        self.origins = Origins(tmp / "remote")
        self.origins.make(REPO)
        self.measuring, self.go_on = threading.Event(), threading.Event()
        self.port = (
            PausingPort(
                self.measuring,
                self.go_on,
                root=tmp / "state" / "clones",
                url_template=self.origins.template,
                timeout=60,
            )
            if pausing
            else self.origins.workspaces(tmp / "state")
        )
        self.tmux = FakeTmux()
        self.store = FakeStateStore()
        self.events = RecordingEvents()
        self.workspaces = Workspaces(
            port=self.port,
            tmux=self.tmux,
            uow=UnitOfWork(store=self.store, events=self.events, clock=FakeClock()),
            config=WorkspaceConfig(mode=WorkspaceMode.WORKTREE, **config),  # type: ignore[arg-type]
        )

    def folder(self, number: int) -> Path:
        return self.tmp / "agents" / WorkItemRef(REPO, number).slug

    def prepare(self, number: int, *, first: bool = True) -> Path:
        item = WorkItem(WorkItemRef(REPO, number), "t", "alice", frozenset())
        return Path(self.workspaces.prepare(item, str(self.folder(number)), first=first).path)

    def closed_session(self, number: int) -> SessionRecord:
        record = SessionRecord(WorkItemRef(REPO, number), "claude", "sid", str(self.folder(number)))
        self.store.save_session(replace(record, status=SessionStatus.CLOSED))
        return record

    def clone(self) -> Path:
        return self.tmp / "state" / "clones" / "github.com" / "acme" / "widgets.git"

    def branches(self) -> list[str]:
        return git("for-each-ref", "--format=%(refname:short)", "refs/heads/", cwd=self.clone()).split()


def test_two_items_of_one_repository_made_at_once_each_get_their_worktree(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    errors: list[BaseException] = []

    def make(number: int) -> None:
        try:
            rig.prepare(number)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=make, args=(n,)) for n in (1, 2, 3, 4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert errors == []
    assert [git("rev-parse", "HEAD", cwd=rig.folder(n)) for n in (1, 2, 3, 4)] == [rig.origins.tip(REPO)] * 4
    assert len(rig.events.named(Event.WORKSPACE_READY)) == 4
    assert sorted(rig.branches()) == [f"the-loop/{WorkItemRef(REPO, n).slug}" for n in (1, 2, 3, 4)]


def test_a_worktree_waits_for_the_repository_lock_another_process_holds(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.prepare(1)  # the clone exists; its lock file beside it
    lock = rig.clone().with_name("widgets.lock")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys; f=open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); sys.stdin.read()",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    second = threading.Thread(target=rig.prepare, args=(2,))
    second.start()
    second.join(timeout=1.0)
    waited = (
        second.is_alive() and rig.port.found(WorkspaceSpec(WorkItemRef(REPO, 2), str(rig.folder(2)))) is Found.MISSING
    )

    assert holder.stdin is not None
    holder.stdin.close()  # the other process lets go
    holder.wait(timeout=10)
    second.join(timeout=60)

    assert waited
    assert not second.is_alive() and (rig.folder(2) / "file0.txt").is_file()


def test_a_respawn_reuses_the_worktree_with_its_changes(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    folder = rig.prepare(7)
    (folder / "file0.txt").write_text("the agent's edit\n", encoding="utf-8")
    (folder / "scratch.txt").write_text("notes\n", encoding="utf-8")
    rig.origins.commit(REPO, "upstream.txt")  # a fetch now would move nothing of ours either

    again = rig.prepare(7, first=False)

    assert again == folder
    assert (folder / "file0.txt").read_text(encoding="utf-8") == "the agent's edit\n"
    assert (folder / "scratch.txt").is_file() and not (folder / "upstream.txt").exists()
    assert len(rig.events.named(Event.WORKSPACE_READY)) == 1


def test_an_unfinished_worktree_from_an_interrupted_attempt_is_made_again(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    spec = WorkspaceSpec(WorkItemRef(REPO, 7), str(rig.folder(7)))
    rig.port.create(spec)  # then the daemon died before the ready mark
    (rig.folder(7) / "partial-setup-output").write_text("x", encoding="utf-8")

    rig.prepare(7)

    assert rig.port.found(spec) is Found.READY and not (rig.folder(7) / "partial-setup-output").exists()


def test_a_failing_clone_says_gits_message_in_the_event_and_leaves_nothing(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    item = WorkItem(WorkItemRef(RepoRef.parse("acme/gone"), 1), "t", "alice", frozenset())

    with pytest.raises(WorkspaceError):
        rig.workspaces.prepare(item, str(tmp_path / "agents" / "gone"), first=True)

    (failed,) = rig.events.named(Event.WORKSPACE_FAILED)
    assert "git fetch exited 128 (acme/gone): fatal: '" in failed["cause"]
    assert "does not appear to be a git repository" in failed["cause"]
    assert not (tmp_path / "agents" / "gone").exists()
    assert list((tmp_path / "state" / "clones" / "github.com" / "acme").glob("gone.git*")) == []


def test_a_failing_setup_says_its_status_and_output_and_leaves_no_worktree(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="echo installing; echo 'npm ERR! missing script: ci' >&2; exit 1")

    with pytest.raises(WorkspaceError, match="exited 1"):
        rig.prepare(7)

    (ran,) = rig.events.named(Event.WORKSPACE_SETUP_RAN)
    assert (ran["exit_status"], ran["output_tail"]) == (1, "installing\nnpm ERR! missing script: ci\n")
    assert rig.events.named(Event.WORKSPACE_FAILED)[0]["cause"].startswith("setup `echo installing;")
    assert not rig.folder(7).exists() and rig.branches() == []


def test_a_setup_runs_once_in_the_new_worktree(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="echo made >> setup-ran.txt")

    rig.prepare(7)
    rig.prepare(7, first=False)

    assert (rig.folder(7) / "setup-ran.txt").read_text(encoding="utf-8") == "made\n"


def test_prune_keeps_dirty_untracked_and_unpushed_worktrees_and_removes_a_clean_one(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    for number in (1, 2, 3, 4):
        rig.prepare(number)
        rig.closed_session(number)
    (rig.folder(1) / "file0.txt").write_text("changed\n", encoding="utf-8")
    (rig.folder(2) / "new.txt").write_text("new\n", encoding="utf-8")
    (rig.folder(3) / "work.txt").write_text("work\n", encoding="utf-8")
    git("add", "work.txt", cwd=rig.folder(3))
    git("commit", "--quiet", "-m", "local", cwd=rig.folder(3))
    (rig.folder(4) / "node_modules").mkdir()  # ignored files do not keep a worktree
    (rig.folder(4) / "node_modules" / "big.js").write_bytes(b"x" * 100_000)

    results = rig.workspaces.prune(dry_run=False)

    assert [(r.item.number, r.removed, r.reason) for r in results] == [
        (1, False, "uncommitted change"),
        (2, False, "untracked file"),
        (3, False, "commit missing from every remote branch"),
        (4, True, "clean: no uncommitted change, no untracked file, every commit on a remote branch"),
    ]
    assert results[3].bytes >= 100_000 and not rig.folder(4).exists()
    assert all(rig.folder(n).is_dir() for n in (1, 2, 3))
    assert f"the-loop/{WorkItemRef(REPO, 4).slug}" not in rig.branches() and len(rig.branches()) == 3
    (removed,) = rig.events.named(Event.WORKSPACE_REMOVED)
    assert (removed["by"], removed["source"], removed["bytes_freed"]) == ("prune", "operator", results[3].bytes)
    assert len(rig.events.named(Event.WORKSPACE_KEPT)) == 3


def test_prune_dry_run_says_what_it_would_free_and_changes_nothing(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.prepare(4)
    rig.closed_session(4)

    (result,) = rig.workspaces.prune(dry_run=True)

    assert result.removed and result.bytes > 0
    assert rig.folder(4).is_dir() and len(rig.branches()) == 1 and rig.events.records[-1]["event"] == "workspace.ready"


def test_prune_leaves_worktrees_of_sessions_that_are_not_closed(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.prepare(1)
    rig.store.save_session(SessionRecord(WorkItemRef(REPO, 1), "claude", "sid", str(rig.folder(1))))

    assert rig.workspaces.prune(dry_run=False) == []
    assert rig.folder(1).is_dir()


def test_prune_keeps_a_clean_worktree_whose_session_is_still_live(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.prepare(1)
    record = rig.closed_session(1)
    rig.tmux.add_session(record.target.name)

    (result,) = rig.workspaces.prune(dry_run=False)

    assert (result.removed, result.reason) == (False, "its tmux session is live") and rig.folder(1).is_dir()


@contextmanager
def agent_in(folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real process working in `folder`, as a respawned agent does."""
    agent = subprocess.Popen(["sleep", "600"], cwd=folder)
    try:
        yield agent
    finally:
        agent.kill()
        agent.wait(timeout=10)


def test_a_worktree_reopened_and_respawned_while_prune_looks_survives_with_its_agent(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, pausing=True)
    folder = rig.prepare(7)
    record = rig.closed_session(7)
    results: list[Pruned] = []
    pruning = threading.Thread(target=lambda: results.extend(rig.workspaces.prune(dry_run=False)))
    pruning.start()
    assert rig.measuring.wait(timeout=60)  # prune has made its first look and measures the tree
    closed = rig.store.session(record.item)
    assert closed is not None
    rig.store.save_session(replace(closed, status=SessionStatus.ACTIVE))  # `sessions reopen`
    with rig.workspaces.holding(WorkItem(record.item, "t", "alice", frozenset())):  # as a respawn does
        rig.prepare(7, first=False)
        rig.tmux.add_session(record.target.name)
    with agent_in(folder) as agent:
        rig.go_on.set()
        pruning.join(timeout=120)
        cwd = os.readlink(f"/proc/{agent.pid}/cwd")

    (result,) = results
    assert (result.removed, result.reason) == (False, "its session is no longer closed")
    assert cwd == str(folder) and (folder / "file0.txt").is_file()
    assert f"the-loop/{record.item.slug}" in rig.branches()


def test_prune_keeps_a_clean_worktree_a_live_process_works_in(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    folder = rig.prepare(3)
    rig.closed_session(3)
    (folder / "node_modules").mkdir()

    with agent_in(folder / "node_modules") as agent:
        (result,) = rig.workspaces.prune(dry_run=False)

    assert (result.removed, result.reason) == (False, f"process {agent.pid} works inside it")
    assert folder.is_dir() and len(rig.branches()) == 1


def test_prune_keeps_a_worktree_a_process_holds_a_file_open_in(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    folder = rig.prepare(3)
    rig.closed_session(3)

    with (folder / "file0.txt").open(encoding="utf-8"):
        (result,) = rig.workspaces.prune(dry_run=False)

    assert (result.removed, result.reason) == (False, f"process {os.getpid()} works inside it")
    assert folder.is_dir()


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_an_edit_git_status_does_not_show_keeps_the_worktree(tmp_path: Path, flag: str) -> None:
    rig = Rig(tmp_path)
    folder = rig.prepare(5)
    rig.closed_session(5)
    git("update-index", flag, "file1.txt", cwd=folder)
    (folder / "file1.txt").write_text("the agent's hidden edit\n", encoding="utf-8")

    (result,) = rig.workspaces.prune(dry_run=False)

    assert (result.removed, result.reason) == (
        False,
        "change git status does not show (skip-worktree or assume-unchanged)",
    )
    assert (folder / "file1.txt").read_text(encoding="utf-8") == "the agent's hidden edit\n"
    tag = git("ls-files", "-v", "file1.txt", cwd=folder)[:1]
    assert tag == {"--skip-worktree": "S", "--assume-unchanged": "h"}[flag]  # the worktree's index left as it was


def test_a_marked_file_left_as_it_was_keeps_nothing(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    folder = rig.prepare(5)
    rig.closed_session(5)
    git("update-index", "--skip-worktree", "file1.txt", cwd=folder)
    git("update-index", "--assume-unchanged", "file2.txt", cwd=folder)
    (folder / "file1.txt").unlink()  # a sparse checkout leaves skip-worktree files out: nothing is lost

    (result,) = rig.workspaces.prune(dry_run=False)

    assert result.removed and not folder.exists()


def test_an_ignored_env_file_keeps_the_worktree_and_a_dry_run_lists_what_else_would_go(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path)
    for number in (1, 2):
        rig.prepare(number)
        rig.closed_session(number)
    (rig.folder(1) / ".env").write_text("TOKEN=agent-made\n", encoding="utf-8")
    (rig.folder(2) / "node_modules").mkdir()
    (rig.folder(2) / "node_modules" / "big.js").write_bytes(b"x" * 100_000)
    (rig.folder(2) / "node_modules" / ".env.example").write_text("A=1\n", encoding="utf-8")  # a package's: not kept

    kept, removable = rig.workspaces.prune(dry_run=True)

    assert (kept.removed, kept.reason) == (False, "ignored file worth keeping (routing.workspace.keepIgnored)")
    assert removable.removed and [(i.path, i.bytes >= 100_000) for i in removable.ignored] == [("node_modules/", True)]


def test_the_shared_clone_is_collected_by_git_gc_auto_when_a_worktree_is_made(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.prepare(1)
    git("config", "fetch.unpackLimit", "1", cwd=rig.clone())  # each fetch leaves a pack
    git("config", "gc.autoPackLimit", "1", cwd=rig.clone())  # and two packs are enough for `gc --auto`
    git("config", "gc.autoDetach", "false", cwd=rig.clone())  # done when the worktree's making returns, not after
    for number, name in ((2, "later.txt"), (3, "again.txt")):
        rig.origins.commit(REPO, name)
        rig.prepare(number)

    counts = dict(line.split(": ") for line in git("count-objects", "-v", cwd=rig.clone()).splitlines())
    assert counts["packs"] == "1", counts
