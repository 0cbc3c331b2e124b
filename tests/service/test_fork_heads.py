"""Fork heads through the poll cycle, over fakes: the harness of a fork's pull request is
started so that none of its folder's own settings, hooks or MCP servers load, and its folder is
trusted only so started; a harness with no such start is not started there at all."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.config.harnesses import BUILTIN_HARNESSES
from app.config.settings import Settings
from app.usecases.cycle.meta import vouch
from app.usecases.delivery.workspaces import NotVouched, WorkspaceConfig
from domain.events import Event
from domain.model import ItemKind
from domain.refs import WorkItemRef
from domain.workspace import Dirt, WorkspaceMode
from tests.service.world import CLAUDE, CURSOR, REPO, World

SAFE = BUILTIN_HARNESSES["claude"].unvouched_args or ()
PULL = 12


def fork_world(*, harness: str = "claude", trust_forks: bool = False, head: str | None = "mallory/widgets") -> World:
    world = World(
        workspace=WorkspaceConfig(mode=WorkspaceMode.WORKTREE, setup="npm ci", trust_forks=trust_forks),
        harness=harness,
        harnesses={"claude": replace(CLAUDE, unvouched_args=SAFE), "cursor": CURSOR},
    )
    world.git.add_remote(REPO)
    sha = world.git.open_pull(REPO, PULL)
    world.tracker.add_item(WorkItemRef(REPO, PULL), kind=ItemKind.PULL_REQUEST, head=head, sha=sha)
    return world


def test_a_forks_harness_starts_ignoring_its_folders_settings_and_is_trusted_only_so() -> None:
    world = fork_world()
    ref = WorkItemRef(REPO, PULL)

    world.cycle()

    argv = world.session(ref).argv
    assert SAFE and argv[1 : 1 + len(SAFE)] == SAFE
    assert world.trust.trusted == [world.record(ref).cwd]
    assert world.git.setups == [] and len(world.events.named(Event.WORKSPACE_SETUP_SKIPPED)) == 1


def test_a_pull_request_from_the_repository_itself_starts_as_always() -> None:
    world = fork_world(head=None)
    ref = WorkItemRef(REPO, PULL)

    world.cycle()

    assert not set(SAFE) & set(world.session(ref).argv) and world.git.setups == ["npm ci"]


def test_a_vouched_fork_head_starts_as_always() -> None:
    world = fork_world()
    ref = WorkItemRef(REPO, PULL)
    vouch(world.store, ref, world.git.remotes[REPO].pulls[PULL])

    world.cycle()

    assert not set(SAFE) & set(world.session(ref).argv) and world.git.setups == ["npm ci"]


def test_a_harness_without_a_safe_start_is_not_started_in_a_forks_folder() -> None:
    world = fork_world(harness="cursor")
    ref = WorkItemRef(REPO, PULL)

    world.cycle()

    assert ref.target.name not in world.tmux.sessions and world.trust.trusted == []
    failed = world.events.named(Event.SESSION_SPAWN_FAILED)
    assert failed and "cursor has no start that ignores its folder's own settings" in failed[0]["reason"]
    assert "sessions vouch" in failed[0]["reason"]


def test_with_trust_forks_on_a_forks_harness_starts_as_always() -> None:
    world = fork_world(harness="cursor", trust_forks=True)
    ref = WorkItemRef(REPO, PULL)

    world.cycle()

    assert world.session(ref).argv[0] == "cursor-agent" and world.git.setups == ["npm ci"]


def test_sessions_vouch_records_only_the_head_it_names_and_a_later_push_is_not_covered() -> None:
    world = fork_world()
    ref = WorkItemRef(REPO, PULL)
    reviewed = world.git.remotes[REPO].pulls[PULL]
    with pytest.raises(NotVouched, match="not 0123456789"):
        world.workspaces.vouch(ref, "0123456789")
    world.workspaces.vouch(ref, reviewed)
    pushed = world.git.open_pull(REPO, PULL)  # mallory pushes after the review
    world.tracker.set_head(ref, "mallory/widgets", pushed)

    world.cycle()

    assert world.session(ref).argv[1 : 1 + len(SAFE)] == SAFE and world.git.setups == []
    (vouched,) = world.events.named(Event.WORKSPACE_VOUCHED)
    assert (vouched["head"], vouched["source"]) == (reviewed, "operator")


def codex_fork_world() -> World:
    world = World(
        workspace=WorkspaceConfig(mode=WorkspaceMode.WORKTREE, setup="npm ci"),
        harness="codex",
        harnesses={"codex": Settings().harness_spec("codex")},
    )
    world.git.add_remote(REPO)
    sha = world.git.open_pull(REPO, PULL)
    world.tracker.add_item(WorkItemRef(REPO, PULL), kind=ItemKind.PULL_REQUEST, head="mallory/widgets", sha=sha)
    return world


def test_codex_in_a_forks_folder_is_not_started_and_its_folder_not_trusted() -> None:
    world = codex_fork_world()
    ref = WorkItemRef(REPO, PULL)

    world.cycle()

    assert ref.target.name not in world.tmux.sessions and world.trust.trusted == []
    assert "codex has no start that ignores" in world.events.named(Event.SESSION_SPAWN_FAILED)[0]["reason"]


def test_a_vouched_forks_folder_is_trusted_in_codex_configuration() -> None:
    world = codex_fork_world()
    ref = WorkItemRef(REPO, PULL)
    vouch(world.store, ref, world.git.remotes[REPO].pulls[PULL])

    world.cycle()

    assert world.trust.trusted == [world.record(ref).cwd] and world.trust.kinds == ["codex"]


def test_a_vouch_for_a_forks_new_head_starts_the_harness_plainly_only_in_a_worktree_made_at_that_head() -> None:
    world = fork_world()
    ref = WorkItemRef(REPO, PULL)
    world.cycle()  # started without its folder's settings, in a worktree at the first head
    pushed = world.git.open_pull(REPO, PULL)
    world.tracker.set_head(ref, "mallory/widgets", pushed)
    world.workspaces.vouch(ref, pushed)
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    plain = not set(SAFE) & set(world.session(ref).argv)
    assert (world.git.worktrees[world.record(ref).cwd].commit, plain) == (pushed, True)
    assert world.git.setups == ["npm ci"]  # in the worktree made again, at the vouched head


def test_a_vouch_does_not_cover_settings_the_unvouched_agent_wrote_in_its_worktree() -> None:
    world = fork_world()
    ref = WorkItemRef(REPO, PULL)
    world.cycle()
    tree = world.git.worktrees[world.record(ref).cwd]
    tree.files.append(".claude/settings.json")
    tree.dirt.add(Dirt.UNTRACKED)
    world.workspaces.vouch(ref, world.git.remotes[REPO].pulls[PULL])
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    argv = world.session(ref).argv
    assert any(argv[i : i + len(SAFE)] == SAFE for i in range(len(argv)))
    assert world.git.worktrees[world.record(ref).cwd] is tree and tree.files == [".claude/settings.json"]
    (unvouched,) = world.events.named(Event.WORKSPACE_UNVOUCHED)
    assert "untracked file" in unvouched["reason"]


def _vouched_agent_moves_to_another_branch(*, work: set[Dirt]) -> tuple[World, WorkItemRef]:
    """A vouched fork's agent runs plainly in a worktree made at the vouched head, checks out
    another branch there (with its own `.claude/settings.json`), and its harness is started again."""
    world = fork_world()
    ref = WorkItemRef(REPO, PULL)
    vouch(world.store, ref, world.git.remotes[REPO].pulls[PULL])
    world.cycle()
    tree = world.git.worktrees[world.record(ref).cwd]
    tree.commit = "c" * 40  # what `git checkout other-branch` leaves: another HEAD, a clean tree
    tree.dirt |= work
    world.vanish(ref)
    world.comment(ref)
    world.cycle()
    return world, ref


def test_a_vouched_worktree_its_agent_moved_to_another_branch_is_made_again_at_the_vouched_head() -> None:
    world, ref = _vouched_agent_moves_to_another_branch(work=set())

    plain = not set(SAFE) & set(world.session(ref).argv)
    vouched_head = world.git.remotes[REPO].pulls[PULL]
    assert (world.git.worktrees[world.record(ref).cwd].commit, plain) == (vouched_head, True)
    (remade,) = world.events.named(Event.WORKSPACE_REMADE)
    assert f"not the vouched {vouched_head[:12]}" in remade["reason"]


def test_a_vouched_worktree_its_agent_moved_to_another_branch_with_work_in_it_starts_unvouched() -> None:
    world, ref = _vouched_agent_moves_to_another_branch(work={Dirt.UNPUSHED})

    argv = world.session(ref).argv
    assert any(argv[i : i + len(SAFE)] == SAFE for i in range(len(argv)))
    assert world.git.worktrees[world.record(ref).cwd].commit == "c" * 40
    assert world.events.named(Event.WORKSPACE_UNVOUCHED)
