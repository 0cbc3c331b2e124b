"""Workspaces through the poll cycle, over fakes: an item's agent starts in its own
worktree; a workspace that cannot be made is a failed attempt with git's message, retried, then
abandoned with the one notice; a respawn reuses the worktree; a clean one goes on close."""

from __future__ import annotations

import threading

from app.usecases.delivery.closing import CloseConfig
from app.usecases.delivery.workspaces import WorkspaceConfig
from domain.events import Event
from domain.ledger import Resolution
from domain.model import ItemKind, ItemState, SessionStatus
from domain.refs import RepoRef, WorkItemRef
from domain.routing import RepoPattern, Rule
from domain.workspace import Dirt, SetupResult, WorkspaceMode, WorkspaceSpec
from tests.fakes.workspaces import FakeWorkspaces
from tests.service.world import REPO, World

WORKTREE = WorkspaceConfig(mode=WorkspaceMode.WORKTREE)


def worktree_world(**config: object) -> World:
    world = World(workspace=WorkspaceConfig(mode=WorkspaceMode.WORKTREE, **config))  # type: ignore[arg-type]
    world.git.add_remote(REPO)
    return world


def test_an_issues_agent_starts_in_a_worktree_at_the_default_branchs_tip() -> None:
    world = worktree_world()

    ref = world.watched(7)

    folder = "/work/github-acme-widgets-7"
    assert world.session(ref).cwd == folder == world.record(ref).cwd
    tree = world.git.worktrees[folder]
    assert (tree.ready, tree.commit, tree.spec.branch) == (True, world.git.remotes[REPO].tip, "the-loop/" + ref.slug)
    (ready,) = world.events.named(Event.WORKSPACE_READY)
    assert (ready["work_item"], ready["branch"], ready["start"]) == (str(ref), tree.spec.branch, tree.spec.start)
    assert world.events.names().index(Event.WORKSPACE_READY) < world.events.names().index(Event.SESSION_SPAWNED)


def test_a_pull_requests_agent_starts_on_the_pull_requests_head() -> None:
    world = worktree_world()
    ref = WorkItemRef(REPO, 12)
    head = world.git.open_pull(REPO, 12)
    world.tracker.add_item(ref, kind=ItemKind.PULL_REQUEST)

    world.cycle()

    assert world.git.worktrees[world.record(ref).cwd].commit == head


def test_mode_none_keeps_todays_empty_folder_and_asks_git_nothing() -> None:
    world = World()

    ref = world.watched(7)

    assert world.session(ref).cwd == "/work/github-acme-widgets-7"
    assert (world.git.fetches, world.git.worktrees) == (0, {})
    assert not [name for name in world.events.names() if name.value.startswith("workspace.")]


def test_a_failing_clone_is_a_failed_attempt_with_gits_message_then_abandoned_with_one_notice() -> None:
    world = World(workspace=WORKTREE, max_retries=2)  # no remote: the clone is refused
    ref = world.watched(7)  # the item's start: attempt 1
    comment = world.comment(ref, "please fix")

    for _ in range(3):  # the start's attempt 2 (abandoned), then the comment's two
        world.cycle()

    failed = world.events.named(Event.DISPATCH_FAILED)
    mine = [f["will_retry"] for f in failed if f.get("comment_id") == comment.id]
    assert [f["will_retry"] for f in failed if "comment_id" not in f] == [True, False]  # the start
    assert mine == [True, False]
    assert all("fatal: repository 'https://github.com/acme/widgets.git/' not found" in f["error"] for f in failed)
    assert "fatal: repository" in world.events.named(Event.WORKSPACE_FAILED)[0]["cause"]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.ABANDONED
    assert len(world.tracker.posted) == 2 and not any("fatal" in body for _, body in world.tracker.posted)
    assert ref.target.name not in world.tmux.sessions and world.store.session(ref) is None


def test_a_failing_setup_is_a_failed_attempt_with_its_message_and_leaves_nothing_ready() -> None:
    world = worktree_world(setup="npm ci")
    world.git.setup = SetupResult(1, "npm ERR! code ENOENT\x1b[0m")
    ref = world.watched(7)  # the item's start fails its first attempt
    world.comment(ref)

    world.cycle()  # and its second

    failed, _ = world.events.named(Event.DISPATCH_FAILED)
    assert failed["error"] == "workspace failed: setup `npm ci` exited 1 in /work/github-acme-widgets-7"
    ran = world.events.named(Event.WORKSPACE_SETUP_RAN)
    assert [(r["exit_status"], r["output_tail"]) for r in ran] == [(1, "npm ERR! code ENOENT␛[0m")] * 2
    assert world.git.worktrees == {} and world.git.branches == {}
    assert ref.target.name not in world.tmux.sessions


def test_after_a_failed_setup_the_next_attempt_makes_the_worktree_afresh_and_delivers() -> None:
    world = worktree_world(setup="npm ci")
    world.git.setup = SetupResult(1, "flaky")
    ref = world.watched(7)
    comment = world.comment(ref)
    world.cycle()
    world.git.setup = SetupResult(0, "ok")

    world.cycle()

    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert world.git.worktrees[world.record(ref).cwd].ready


def test_a_respawn_reuses_the_worktree_with_the_agents_changes() -> None:
    world = worktree_world()
    ref = world.watched(7)
    tree = world.git.worktrees[world.record(ref).cwd]
    tree.files.append("half-done.py")
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    assert world.events.named(Event.SESSION_RESPAWNED)
    assert world.git.worktrees[world.record(ref).cwd] is tree and tree.files == ["half-done.py"]
    assert (world.git.created, world.git.fetches) == (1, 1)


def test_a_respawn_after_the_worktree_was_removed_makes_it_again() -> None:
    world = worktree_world()
    ref = world.watched(7)
    world.git.discard(world.git.worktrees[world.record(ref).cwd].spec)
    world.vanish(ref)
    world.comment(ref)

    world.cycle()

    assert world.git.worktrees[world.record(ref).cwd].ready and world.git.created == 2


def test_a_first_spawn_into_a_folder_holding_other_work_is_refused_and_the_folder_untouched() -> None:
    world = worktree_world()
    world.git.foreign.add("/work/github-acme-widgets-7")

    ref = world.watched(7)

    (failed,) = world.events.named(Event.WORKSPACE_FAILED)
    assert failed["cause"] == (
        "/work/github-acme-widgets-7 exists, is not empty and is not a the-loop worktree; move it away"
    )
    assert world.git.created == 0 and ref.target.name not in world.tmux.sessions


def test_remove_on_close_removes_a_clean_worktree_when_the_item_closes() -> None:
    world = worktree_world(remove_on_close=True)
    ref = world.watched(7)
    folder = world.record(ref).cwd
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert world.record(ref).status is SessionStatus.CLOSED
    assert folder not in world.git.worktrees
    (removed,) = world.events.named(Event.WORKSPACE_REMOVED)
    assert (removed["by"], removed["bytes_freed"]) == ("close", 8192)


def test_remove_on_close_keeps_a_worktree_with_unpushed_work_and_says_why() -> None:
    world = worktree_world(remove_on_close=True)
    ref = world.watched(7)
    world.git.worktrees[world.record(ref).cwd].dirt.add(Dirt.UNPUSHED)
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert world.record(ref).cwd in world.git.worktrees
    (kept,) = world.events.named(Event.WORKSPACE_KEPT)
    assert (kept["by"], kept["reason"]) == ("close", "commit missing from every remote branch")


def test_without_remove_on_close_a_closed_items_worktree_stays() -> None:
    world = worktree_world()
    ref = world.watched(7)
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert world.record(ref).cwd in world.git.worktrees
    assert not world.events.named(Event.WORKSPACE_REMOVED) and not world.events.named(Event.WORKSPACE_KEPT)


def test_close_keeps_the_worktree_of_a_harness_left_running() -> None:
    world = World(
        workspace=WorkspaceConfig(WorkspaceMode.WORKTREE, remove_on_close=True),
        close=CloseConfig(kill_harness_on_close=False),
    )
    world.git.add_remote(REPO)
    ref = world.watched(7)
    world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert world.record(ref).cwd in world.git.worktrees
    assert world.events.named(Event.WORKSPACE_KEPT)[0]["reason"] == "its tmux session is live"


class PausingWorkspaces(FakeWorkspaces):
    """Its removal waits, under the repository's lock prune holds, until the test lets it go on."""

    def __init__(self) -> None:
        super().__init__()
        self.removing, self.go_on = threading.Event(), threading.Event()

    def remove(self, spec: WorkspaceSpec) -> None:
        self.removing.set()
        assert self.go_on.wait(timeout=60)
        super().remove(spec)


def test_a_respawn_waits_for_a_removal_under_way_and_gets_a_fresh_worktree() -> None:
    git = PausingWorkspaces()
    world = World(workspace=WORKTREE, git=git)
    git.add_remote(REPO)
    ref = world.watched(7)
    folder = world.record(ref).cwd
    world.admin().close(ref, keep_tmux=False)
    pruning = threading.Thread(target=world.workspaces.prune, kwargs={"dry_run": False})
    pruning.start()
    assert git.removing.wait(timeout=60)  # prune looked again under the lock: clean, closed; it removes
    world.admin().reopen(ref)
    world.comment(ref, "one more thing")
    respawning = threading.Thread(target=world.cycle)
    respawning.start()
    respawning.join(timeout=0.5)  # a respawn that does not wait for the lock is done by now

    git.go_on.set()
    pruning.join(timeout=60)
    respawning.join(timeout=60)

    assert world.record(ref).status is SessionStatus.ACTIVE and world.session(ref).cwd == folder
    assert folder in world.git.worktrees and world.git.created == 2  # made afresh after the removal
    assert world.events.names().count(Event.SESSION_RESPAWNED) == 1


def test_a_closed_items_worktree_goes_as_the_workspace_its_record_names_says() -> None:
    gone, kept = RepoRef.parse("acme/api"), REPO
    world = World(
        workspace=WORKTREE,  # keeps its worktrees
        named_workspaces={"api": WorkspaceConfig(WorkspaceMode.WORKTREE, remove_on_close=True)},
        workdirs={"api": "/srv/api/{slug}"},
        rules=(Rule("claude", (RepoPattern("github.com", "acme", "api"),), workspace="api"), Rule("claude")),
        repos=(gone, kept),
    )
    for repo in (gone, kept):
        world.git.add_remote(repo)
    api, widgets = world.item(1, repo=gone), world.item(2, repo=kept)
    world.cycle()
    for ref in (api, widgets):
        world.tracker.set_state(ref, ItemState.CLOSED)

    world.cycle()

    assert list(world.git.worktrees) == [f"/work/{widgets.slug}"]
    (removed,) = world.events.named(Event.WORKSPACE_REMOVED)
    assert removed["path"] == f"/srv/api/{api.slug}"
