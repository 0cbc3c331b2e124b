"""On real git: a vouch lets a fork's harness start plainly only in a worktree that holds exactly
the vouched commit. A worktree left at an earlier head, or holding what an agent started without
its folder's settings wrote, is made again from the vouched commit when that loses nothing, and
otherwise its harness keeps starting without its folder's settings."""

from __future__ import annotations

import json
from pathlib import Path

from domain.events import Event
from domain.model import ItemKind, WorkItem
from domain.refs import WorkItemRef
from tests.git_support import git
from tests.integration.test_fork_heads_git import PULL, REPO, Rig

HOOK = json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "sh ./evil.sh"}]}]}})
ITEM = WorkItem(WorkItemRef(REPO, PULL), "t", "mallory", frozenset(), ItemKind.PULL_REQUEST)


def respawn(rig: Rig) -> tuple[bool, Path]:
    """A later spawn's prepare: whether the harness may start plainly, and its folder."""
    readied = rig.workspaces.prepare(ITEM, str(rig.folder()), first=False)
    return readied.vouched.choice, Path(readied.path)


def fork_with_a_hook(rig: Rig) -> str:
    """The fork's first head, carrying Claude Code project settings with a hook; its worktree made
    (nobody vouched for it)."""
    sha = rig.origins.pull_request(REPO, PULL, files={".claude/settings.json": HOOK, "evil.sh": "echo ran\n"})
    rig.tracker.add_item(ITEM.ref, kind=ItemKind.PULL_REQUEST, head="mallory/widgets", sha=sha)
    rig.prepare()
    return sha


def test_a_vouch_for_a_forks_new_head_remakes_the_worktree_left_at_the_old_head(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="")
    fork_with_a_hook(rig)
    harmless = rig.origins.force_push_pull(REPO, PULL, files={"README.md": "harmless\n"})
    rig.tracker.set_head(ITEM.ref, "mallory/widgets", harmless)
    rig.workspaces.vouch(ITEM.ref, harmless)

    plain, folder = respawn(rig)

    assert (plain, git("rev-parse", "HEAD", cwd=folder)) == (True, harmless)
    assert not (folder / ".claude").exists() and (folder / "README.md").is_file()


def test_settings_an_unvouched_agent_wrote_keep_its_harness_unvouched_after_a_vouch_for_the_same_head(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, setup="")
    rig.pull(head="mallory/widgets")
    folder = rig.prepare()
    (folder / ".claude").mkdir()
    (folder / ".claude" / "settings.json").write_text(HOOK, encoding="utf-8")  # the agent's own write
    rig.workspaces.vouch(ITEM.ref, git("rev-parse", "HEAD", cwd=folder))

    plain, _ = respawn(rig)

    assert not plain
    assert (folder / ".claude" / "settings.json").read_text(encoding="utf-8") == HOOK  # nothing destroyed
    (kept,) = rig.events.named(Event.WORKSPACE_UNVOUCHED)
    assert "untracked file" in kept["reason"]


def test_an_ignored_file_an_unvouched_agent_wrote_goes_with_the_worktree_made_again(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="")
    sha = rig.pull(head="mallory/widgets")
    folder = rig.prepare()
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "hook.js").write_text("evil\n", encoding="utf-8")
    rig.workspaces.vouch(ITEM.ref, sha)

    plain, _ = respawn(rig)

    assert plain and not (folder / "node_modules").exists() and (folder / "evil.sh").is_file()


def test_an_unvouched_agents_commit_is_never_lost_to_a_vouch(tmp_path: Path) -> None:
    rig = Rig(tmp_path, setup="")
    sha = rig.pull(head="mallory/widgets")
    folder = rig.prepare()
    (folder / "work.txt").write_text("the agent's work\n", encoding="utf-8")
    git("add", "work.txt", cwd=folder)
    git("commit", "--quiet", "-m", "work", cwd=folder)
    rig.workspaces.vouch(ITEM.ref, sha)

    plain, _ = respawn(rig)

    assert not plain and (folder / "work.txt").is_file()


def test_a_worktree_made_from_the_vouched_head_keeps_starting_plainly_with_what_its_agent_wrote(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, setup="")
    sha = rig.pull(head="mallory/widgets")
    rig.workspaces.vouch(ITEM.ref, sha)
    folder = rig.prepare()
    (folder / "half-done.py").write_text("pass\n", encoding="utf-8")  # by the harness it vouched for

    plain, _ = respawn(rig)

    assert plain and (folder / "half-done.py").is_file()


def test_a_vouched_worktree_started_unvouched_after_a_push_is_not_trusted_when_the_head_comes_back(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, setup="")
    sha = rig.pull(head="mallory/widgets")
    rig.workspaces.vouch(ITEM.ref, sha)
    folder = rig.prepare()
    rig.tracker.set_head(ITEM.ref, "mallory/widgets", "f" * 40)  # a push nobody vouched for
    assert respawn(rig)[0] is False
    (folder / ".claude").mkdir()
    (folder / ".claude" / "settings.json").write_text(HOOK, encoding="utf-8")  # by the unvouched agent
    rig.tracker.set_head(ITEM.ref, "mallory/widgets", sha)  # pushed back to the vouched commit

    plain, _ = respawn(rig)

    assert not plain


def push_a_branch_with_a_hook(rig: Rig) -> str:
    """A branch `other` on the origin whose tree carries Claude Code project settings with a hook."""
    work = rig.origins.root / "work" / REPO.owner / REPO.name
    git("checkout", "--quiet", "-b", "other", "main", cwd=work)
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(HOOK, encoding="utf-8")
    git("add", "--all", cwd=work)
    git("commit", "--quiet", "-m", "other", cwd=work)
    git("push", "--quiet", str(rig.origins.bare(REPO)), "HEAD:refs/heads/other", cwd=work)
    git("checkout", "--quiet", "main", cwd=work)
    return git("rev-parse", "refs/heads/other", cwd=rig.origins.bare(REPO))


def test_a_vouched_worktree_its_agent_checked_another_branch_out_in_is_made_again_at_the_vouched_head(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, setup="")
    sha = rig.pull(head="mallory/widgets")
    rig.workspaces.vouch(ITEM.ref, sha)
    folder = rig.prepare()
    other = push_a_branch_with_a_hook(rig)
    git("fetch", "--quiet", "origin", "other", cwd=folder)  # what the vouched agent was told to do
    git("checkout", "--quiet", "FETCH_HEAD", cwd=folder)
    assert (folder / ".claude" / "settings.json").is_file() and git("rev-parse", "HEAD", cwd=folder) == other

    plain, _ = respawn(rig)

    assert (plain, git("rev-parse", "HEAD", cwd=folder)) == (True, sha)
    assert not (folder / ".claude").exists()


def test_a_vouched_worktree_its_agent_merged_another_branch_into_starts_unvouched_and_keeps_the_merge(
    tmp_path: Path,
) -> None:
    rig = Rig(tmp_path, setup="")
    sha = rig.pull(head="mallory/widgets")
    rig.workspaces.vouch(ITEM.ref, sha)
    folder = rig.prepare()
    push_a_branch_with_a_hook(rig)
    git("fetch", "--quiet", "origin", "other", cwd=folder)
    git("-c", "user.name=a", "-c", "user.email=a@b", "merge", "--quiet", "--no-edit", "FETCH_HEAD", cwd=folder)

    plain, _ = respawn(rig)

    assert not plain and (folder / ".claude" / "settings.json").read_text(encoding="utf-8") == HOOK
    (kept,) = rig.events.named(Event.WORKSPACE_UNVOUCHED)
    assert f"not the vouched {sha[:12]}" in kept["reason"]
