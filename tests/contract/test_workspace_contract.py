"""The WorkspacePort contract, run against FakeWorkspaces and against real git (bare origin
repositories made on the spot, reached by file:// URLs; no network)."""

from __future__ import annotations

import shlex
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from domain.errors import WorkspaceError
from domain.ports import WorkspacePort
from domain.refs import RepoRef, WorkItemRef
from domain.vouching import Checkout
from domain.workspace import Dirt, Found, Ignored, Occupants, SetupResult, WorkspaceSpec
from tests.fakes.workspaces import FakeWorkspaces
from tests.git_support import Origins, git, require_git

REPO = RepoRef.parse("acme/widgets")


class FakeRig:
    def __init__(self, tmp: Path) -> None:
        self.fake = FakeWorkspaces()
        self.port: WorkspacePort = self.fake
        self.tmp = tmp

    def remote(self, repo: RepoRef = REPO) -> None:
        self.fake.add_remote(repo)

    def spec(self, number: int, *, pull: bool = False, repo: RepoRef = REPO) -> WorkspaceSpec:
        item = WorkItemRef(repo, number)
        return WorkspaceSpec(item, str(self.tmp / "agents" / item.slug), number if pull else None)

    def tip(self, repo: RepoRef = REPO) -> str:
        return self.fake.remotes[repo].tip

    def advance(self, repo: RepoRef = REPO) -> str:
        return self.fake.advance(repo)

    def open_pull(self, number: int, repo: RepoRef = REPO) -> str:
        return self.fake.open_pull(repo, number)

    def head(self, spec: WorkspaceSpec) -> str:
        return self.fake.worktrees[spec.path].commit

    def has_branch(self, spec: WorkspaceSpec) -> bool:
        return (spec.repo, spec.branch) in self.fake.branches

    def dirty(self, spec: WorkspaceSpec, dirt: Dirt) -> None:
        self.fake.worktrees[spec.path].dirt.add(dirt)

    def install(self, spec: WorkspaceSpec) -> None:
        """A setup's ignored `node_modules/` of 100,000 bytes."""
        self.fake.worktrees[spec.path].ignored.append(Ignored("node_modules/", 102_400))

    @contextmanager
    def working_in(self, spec: WorkspaceSpec) -> Iterator[int]:
        tree = self.fake.worktrees[spec.path]
        tree.occupants = Occupants(inside=(4242,))
        yield 4242
        tree.occupants = Occupants()

    def plant_foreign(self, path: str) -> None:
        self.fake.foreign.add(path)

    def setup_that(self, *, exits: int, prints: str) -> str:
        self.fake.setup = SetupResult(exits, prints)
        return "make setup"


class RealRig(FakeRig):
    def __init__(self, tmp: Path) -> None:
        require_git()
        self.origins = Origins(tmp / "remote")
        self.port = self.origins.workspaces(tmp / "state")
        self.tmp = tmp

    def remote(self, repo: RepoRef = REPO) -> None:
        self.origins.make(repo)

    def tip(self, repo: RepoRef = REPO) -> str:
        return self.origins.tip(repo)

    def advance(self, repo: RepoRef = REPO) -> str:
        return self.origins.commit(repo, "later.txt")

    def open_pull(self, number: int, repo: RepoRef = REPO) -> str:
        return self.origins.pull_request(repo, number)

    def head(self, spec: WorkspaceSpec) -> str:
        assert git("symbolic-ref", "--short", "HEAD", cwd=Path(spec.path)) == spec.branch
        return git("rev-parse", "HEAD", cwd=Path(spec.path))

    def has_branch(self, spec: WorkspaceSpec) -> bool:
        clone = self.tmp / "state" / "clones" / spec.repo.host / spec.repo.owner / f"{spec.repo.name}.git"
        return clone.is_dir() and bool(git("for-each-ref", f"refs/heads/{spec.branch}", cwd=clone))

    def dirty(self, spec: WorkspaceSpec, dirt: Dirt) -> None:
        here = Path(spec.path)
        if dirt is Dirt.UNCOMMITTED:
            (here / "file0.txt").write_text("changed\n", encoding="utf-8")
        elif dirt is Dirt.UNTRACKED:
            (here / "notes.txt").write_text("new\n", encoding="utf-8")
        elif dirt is Dirt.HIDDEN:
            git("update-index", "--skip-worktree", "file1.txt", cwd=here)
            (here / "file1.txt").write_text("hidden from git status\n", encoding="utf-8")
        elif dirt is Dirt.KEPT_IGNORED:
            (here / ".env").write_text("TOKEN=made-by-hand\n", encoding="utf-8")  # the origin ignores .env
        else:
            (here / "work.txt").write_text("committed, never pushed\n", encoding="utf-8")
            git("add", "work.txt", cwd=here)
            git("commit", "--quiet", "-m", "local work", cwd=here)

    def install(self, spec: WorkspaceSpec) -> None:
        (Path(spec.path) / "node_modules" / "left-pad").mkdir(parents=True)
        (Path(spec.path) / "node_modules" / "left-pad" / "index.js").write_bytes(b"x" * 100_000)

    @contextmanager
    def working_in(self, spec: WorkspaceSpec) -> Iterator[int]:
        process = subprocess.Popen(["sleep", "600"], cwd=spec.path)
        try:
            yield process.pid
        finally:
            process.kill()
            process.wait(timeout=10)

    def plant_foreign(self, path: str) -> None:
        Path(path).mkdir(parents=True)
        (Path(path) / "mine.txt").write_text("someone's work\n", encoding="utf-8")

    def setup_that(self, *, exits: int, prints: str) -> str:
        return f"printf %s {shlex.quote(prints)}; exit {exits}"


@pytest.fixture(params=["fake", "real"])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> FakeRig:
    rig = FakeRig(tmp_path) if request.param == "fake" else RealRig(tmp_path)
    rig.remote()
    return rig


def made(rig: FakeRig, spec: WorkspaceSpec) -> WorkspaceSpec:
    rig.port.create(spec)
    rig.port.mark_ready(spec)
    return spec


def test_an_issues_worktree_is_on_its_own_branch_at_the_default_branchs_tip(rig: FakeRig) -> None:
    spec = made(rig, rig.spec(7))

    assert spec.branch == "the-loop/github-acme-widgets-7"
    assert rig.head(spec) == rig.tip()
    assert rig.has_branch(spec)


def test_a_pull_requests_worktree_is_at_the_pull_requests_head(rig: FakeRig) -> None:
    head = rig.open_pull(12)

    spec = made(rig, rig.spec(12, pull=True))

    assert rig.head(spec) == head != rig.tip()


def test_a_pull_requests_worktree_pinned_to_its_head_commit_is_made(rig: FakeRig) -> None:
    head = rig.open_pull(12)

    spec = made(rig, replace(rig.spec(12, pull=True), commit=head))

    assert rig.head(spec) == head


def test_a_head_that_moved_from_the_commit_judged_is_refused_and_leaves_nothing(rig: FakeRig) -> None:
    judged = rig.open_pull(12)
    rig.open_pull(12)  # a push after the head was read
    spec = replace(rig.spec(12, pull=True), commit=judged)

    with pytest.raises(WorkspaceError, match="the head of pull request 12 moved"):
        rig.port.create(spec)

    assert rig.port.found(spec) is Found.MISSING and not rig.has_branch(spec)


def test_a_later_worktree_starts_from_what_the_remote_holds_now(rig: FakeRig) -> None:
    made(rig, rig.spec(1))
    newer = rig.advance()

    later = made(rig, rig.spec(2))

    assert rig.head(later) == newer


def test_nothing_is_ready_until_it_is_marked_ready(rig: FakeRig) -> None:
    spec = rig.spec(1)
    before = rig.port.found(spec)
    rig.port.create(spec)
    unmarked = rig.port.found(spec)
    rig.port.mark_ready(spec)

    assert (before, unmarked, rig.port.found(spec)) == (Found.MISSING, Found.UNFINISHED, Found.READY)


def test_a_repository_the_remote_does_not_have_fails_with_gits_message_and_leaves_nothing(rig: FakeRig) -> None:
    spec = rig.spec(1, repo=RepoRef.parse("acme/missing"))

    with pytest.raises(WorkspaceError) as error:
        rig.port.create(spec)

    assert "acme/missing" in str(error.value) and "fatal:" in str(error.value)
    assert rig.port.found(spec) is Found.MISSING and not rig.has_branch(spec)


def test_a_pull_request_without_a_head_fails_with_gits_message(rig: FakeRig) -> None:
    spec = rig.spec(99, pull=True)

    with pytest.raises(WorkspaceError, match="refs/pull/99/head"):
        rig.port.create(spec)

    assert rig.port.found(spec) is Found.MISSING and not rig.has_branch(spec)


def test_a_branch_name_taken_by_other_work_fails_and_the_branch_is_untouched(rig: FakeRig) -> None:
    first = made(rig, rig.spec(1))
    rig.dirty(first, Dirt.UNPUSHED)
    elsewhere = WorkspaceSpec(first.item, first.path + "-copy")

    with pytest.raises(WorkspaceError, match="already exists"):
        rig.port.create(elsewhere)

    assert rig.port.found(elsewhere) is Found.MISSING
    assert rig.has_branch(first) and rig.port.inspect(first) == {Dirt.UNPUSHED}


def test_a_folder_holding_something_else_is_foreign_and_never_touched(rig: FakeRig) -> None:
    spec = rig.spec(1)
    rig.plant_foreign(spec.path)

    with pytest.raises(WorkspaceError, match="already exists"):
        rig.port.create(spec)

    assert rig.port.found(spec) is Found.FOREIGN and not rig.has_branch(spec)


def test_a_fresh_worktree_is_clean(rig: FakeRig) -> None:
    assert rig.port.inspect(made(rig, rig.spec(1))) == frozenset()


@pytest.mark.parametrize("dirt", list(Dirt))
def test_each_kind_of_work_in_a_worktree_is_seen(rig: FakeRig, dirt: Dirt) -> None:
    spec = made(rig, rig.spec(1))
    rig.dirty(spec, dirt)

    assert rig.port.inspect(spec) == {dirt}


def test_a_fresh_worktree_holds_only_its_head(rig: FakeRig) -> None:
    spec = made(rig, rig.spec(1))

    assert rig.port.checkout(spec) == Checkout(rig.head(spec), only_head=True)


@pytest.mark.parametrize("dirt", list(Dirt))
def test_each_kind_of_work_in_a_worktree_makes_it_hold_more_than_its_head(rig: FakeRig, dirt: Dirt) -> None:
    spec = made(rig, rig.spec(1))
    head = rig.head(spec)
    rig.dirty(spec, dirt)

    assert rig.port.checkout(spec) != Checkout(head, only_head=True)


def test_an_ignored_file_makes_a_worktree_hold_more_than_its_head(rig: FakeRig) -> None:
    spec = made(rig, rig.spec(1))
    rig.install(spec)

    assert rig.port.checkout(spec) == Checkout(rig.head(spec), only_head=False)


def test_a_folder_that_is_not_a_worktree_has_no_head_to_tell(rig: FakeRig) -> None:
    spec = rig.spec(1)
    rig.plant_foreign(spec.path)

    assert rig.port.checkout(spec) == Checkout("", only_head=False)


def test_an_untouched_pull_request_worktree_counts_as_pushed(rig: FakeRig) -> None:
    rig.open_pull(5)
    assert rig.port.inspect(made(rig, rig.spec(5, pull=True))) == frozenset()


def test_removing_a_clean_worktree_frees_its_space_and_drops_its_branch(rig: FakeRig) -> None:
    spec = made(rig, rig.spec(1))
    size = rig.port.size(spec)

    rig.port.remove(spec)

    assert size > 0
    assert rig.port.found(spec) is Found.MISSING and not rig.has_branch(spec) and rig.port.size(spec) == 0


def test_the_ignored_files_a_removal_would_lose_are_listed_with_their_size(rig: FakeRig) -> None:
    spec = made(rig, rig.spec(1))
    before = rig.port.ignored(spec)
    rig.install(spec)

    listed = rig.port.ignored(spec)

    assert before == () and [i.path for i in listed] == ["node_modules/"] and listed[0].bytes >= 100_000
    assert rig.port.inspect(spec) == frozenset()  # not worth keeping: it does not make the worktree dirty


def test_a_process_working_in_a_worktree_is_seen(rig: FakeRig) -> None:
    spec = made(rig, rig.spec(1))
    before = rig.port.occupants(spec)

    with rig.working_in(spec) as pid:
        seen = rig.port.occupants(spec)

    assert pid not in before.inside and pid in seen.inside and pid not in rig.port.occupants(spec).inside


def test_the_repository_lock_excludes_other_threads_and_is_held_again_by_its_own(rig: FakeRig) -> None:
    got: list[str] = []

    def take() -> None:
        with rig.port.lock(REPO):
            got.append("other")

    other = threading.Thread(target=take)
    with rig.port.lock(REPO), rig.port.lock(REPO):  # a spawn holding it around a prepare that takes it
        made(rig, rig.spec(1))
        other.start()
        other.join(timeout=0.5)
        got.append("holder")
    other.join(timeout=30)

    assert got == ["holder", "other"]


@pytest.mark.parametrize("dirt", [Dirt.UNCOMMITTED, Dirt.UNTRACKED])
def test_git_refuses_to_remove_a_worktree_holding_changes(rig: FakeRig, dirt: Dirt) -> None:
    spec = made(rig, rig.spec(1))
    rig.dirty(spec, dirt)

    with pytest.raises(WorkspaceError, match="modified or untracked"):
        rig.port.remove(spec)

    assert rig.port.found(spec) is Found.READY and rig.has_branch(spec)


def test_discard_takes_back_an_unfinished_worktree_and_its_branch(rig: FakeRig) -> None:
    spec = rig.spec(1)
    rig.port.create(spec)
    rig.dirty(spec, Dirt.UNTRACKED)  # a setup's leftovers

    rig.port.discard(spec)

    assert rig.port.found(spec) is Found.MISSING and not rig.has_branch(spec)
    rig.port.create(spec)  # and the same item can be made again
    assert rig.port.found(spec) is Found.UNFINISHED


def test_a_failing_setup_is_a_result_with_its_status_and_its_output_made_inert(rig: FakeRig) -> None:
    spec = rig.spec(1)
    rig.port.create(spec)
    command = rig.setup_that(exits=3, prints="npm ERR! missing\x1b[31m")

    result = rig.port.run_setup(spec, command)

    assert (result.ok, result.exit_status, result.timed_out) == (False, 3, False)
    assert result.output_tail == "npm ERR! missing␛[31m"


def test_a_succeeding_setup_is_ok(rig: FakeRig) -> None:
    spec = rig.spec(1)
    rig.port.create(spec)

    assert rig.port.run_setup(spec, rig.setup_that(exits=0, prints="done")).ok
