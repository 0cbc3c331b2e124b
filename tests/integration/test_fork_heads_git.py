"""Fork heads on real git: a fork's pull request runs none of its code on the host while
its worktree is made, unless the operator vouched for its head; `setup` never sees the daemon's
tokens. Bare origins by file:// URL; the tracker, tmux, store and event log are fakes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.git.adapter import GitWorkspaces
from app.usecases.cycle.meta import vouch
from app.usecases.delivery.workspaces import WorkspaceConfig, Workspaces
from app.usecases.unit_of_work import UnitOfWork
from domain.events import Event
from domain.model import ItemKind, WorkItem
from domain.refs import RepoRef, WorkItemRef
from domain.workspace import WorkspaceMode
from tests.fakes.clock import FakeClock
from tests.fakes.events import RecordingEvents
from tests.fakes.store import FakeStateStore
from tests.fakes.tmux import FakeTmux
from tests.fakes.tracker import FakeTracker
from tests.git_support import Origins, git, require_git

REPO = RepoRef.parse("acme/widgets")
PULL = 5


class Rig:
    def __init__(self, tmp: Path, *, setup: str, trust_forks: bool = False, **port: object) -> None:
        require_git()
        self.tmp = tmp
        self.origins = Origins(tmp / "remote")
        self.origins.make(REPO)
        self.marker = tmp / "marker"
        self.tracker = FakeTracker()
        self.store = FakeStateStore()
        self.events = RecordingEvents()
        self.port: GitWorkspaces = self.origins.workspaces(tmp / "state", **port)
        self.workspaces = Workspaces(
            port=self.port,
            tmux=FakeTmux(),
            uow=UnitOfWork(store=self.store, events=self.events, clock=FakeClock()),
            config=WorkspaceConfig(mode=WorkspaceMode.WORKTREE, setup=setup, trust_forks=trust_forks),
            tracker_for=lambda _ref: self.tracker,
        )

    def pull(self, *, head: str | None) -> str:
        """Pull request PULL whose head adds `evil.sh`, writing the marker when anything runs it;
        its head in `head` (None: the repository itself)."""
        evil = f"echo ran > {self.marker}\n"
        sha = self.origins.pull_request(REPO, PULL, files={"evil.sh": evil, "package.json": "{}\n"})
        self.tracker.add_item(WorkItemRef(REPO, PULL), kind=ItemKind.PULL_REQUEST, head=head, sha=sha)
        return sha

    def folder(self) -> Path:
        return self.tmp / "agents" / WorkItemRef(REPO, PULL).slug

    def prepare(self, *, kind: ItemKind = ItemKind.PULL_REQUEST) -> Path:
        item = WorkItem(WorkItemRef(REPO, PULL), "t", "mallory", frozenset(), kind)
        return Path(self.workspaces.prepare(item, str(self.folder()), first=True).path)


def test_a_forks_pull_request_gets_its_worktree_without_its_setup_running(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="sh ./evil.sh")
    sha = rig.pull(head="mallory/widgets")

    folder = rig.prepare()

    assert git("rev-parse", "HEAD", cwd=folder) == sha and (folder / "evil.sh").is_file()
    assert not rig.marker.exists()
    (skipped,) = rig.events.named(Event.WORKSPACE_SETUP_SKIPPED)
    assert "mallory/widgets" in skipped["reason"] and "sessions vouch" in skipped["reason"]
    assert rig.events.named(Event.WORKSPACE_SETUP_RAN) == []


def test_a_deleted_forks_pull_request_does_not_run_its_setup_either(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="sh ./evil.sh")
    rig.pull(head="")

    rig.prepare()

    assert not rig.marker.exists() and len(rig.events.named(Event.WORKSPACE_SETUP_SKIPPED)) == 1


def test_a_pull_request_from_the_repository_itself_runs_its_setup(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="sh ./evil.sh")
    rig.pull(head=None)

    rig.prepare()

    assert rig.marker.exists() and rig.events.named(Event.WORKSPACE_SETUP_SKIPPED) == []


def test_a_fork_head_the_operator_vouched_for_runs_its_setup(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="sh ./evil.sh")
    sha = rig.pull(head="mallory/widgets")
    vouch(rig.store, WorkItemRef(REPO, PULL), sha)

    rig.prepare()

    assert rig.marker.exists()


def test_a_vouch_for_an_earlier_head_does_not_cover_a_later_push(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="sh ./evil.sh")
    rig.pull(head="mallory/widgets")
    vouch(rig.store, WorkItemRef(REPO, PULL), "0" * 40)  # the head the operator read, before a push

    rig.prepare()

    assert not rig.marker.exists()
    (skipped,) = rig.events.named(Event.WORKSPACE_SETUP_SKIPPED)
    assert "vouched for 000000000000, not" in skipped["reason"]


def test_with_trust_forks_on_a_forks_setup_runs(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="sh ./evil.sh", trust_forks=True)
    rig.pull(head="mallory/widgets")

    rig.prepare()

    assert rig.marker.exists()


def test_setup_sees_a_scrubbed_environment_without_the_operators_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "GH_TOKEN": "gho_secret1",
        "GITHUB_TOKEN": "ghp_secret2",
        "GH_ENTERPRISE_TOKEN": "secret3",
        "ANTHROPIC_API_KEY": "sk-ant-secret4",
        "THE_LOOP_CONFIG": "/etc/loop.yaml",
        "NPM_CONFIG_REGISTRY": "https://registry.example",
        "LC_CTYPE": "C.UTF-8",
    }.items():
        monkeypatch.setenv(name, value)
    rig = Rig(tmp_path, setup="env > setup-env.txt", setup_env=("NPM_CONFIG_REGISTRY",))
    rig.pull(head=None)

    folder = rig.prepare()

    seen = dict(line.split("=", 1) for line in (folder / "setup-env.txt").read_text(encoding="utf-8").splitlines())
    assert not [value for value in seen.values() if "secret" in value]
    assert not {"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "ANTHROPIC_API_KEY", "THE_LOOP_CONFIG"} & set(seen)
    assert seen["PATH"] == os.environ["PATH"] and seen["HOME"] == os.environ["HOME"]
    assert seen["NPM_CONFIG_REGISTRY"] == "https://registry.example" and seen["LC_CTYPE"] == "C.UTF-8"
