"""Workspaces as an operator meets them: `poll` spawns each item's agent in its own git
worktree; `sessions prune` removes closed sessions' clean worktrees and says why it keeps the
others; `doctor` checks git and the clone URLs. Real git (file:// origins), real tmux, real CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain.events import Event
from domain.model import ItemKind
from tests.e2e.cli import run_cli, tree
from tests.e2e.loop_rig import REPO, Loop, loop
from tests.git_support import Origins, git, require_git
from tests.tmux_support import real_tmux

__all__ = ["loop", "real_tmux"]


@pytest.fixture
def worktrees(loop: Loop) -> Loop:
    require_git()
    origins = Origins(loop.root / "remote")
    origins.make(REPO)
    loop.workspace = {"mode": "worktree", "cloneUrl": origins.template}
    return loop


def test_each_items_agent_is_spawned_in_its_own_worktree_of_the_repository(worktrees: Loop) -> None:
    loop = worktrees
    first, second = loop.with_sessions(2)

    for ref in (first, second):
        folder = loop.root / "work" / ref.slug
        shown = loop.tmux.run("display-message", "-p", "-t", f"={ref.target.name}:", "#{pane_current_path}")
        assert Path(shown.strip()) == folder
        assert git("symbolic-ref", "--short", "HEAD", cwd=folder) == f"the-loop/{ref.slug}"
        assert git("rev-parse", "HEAD", cwd=folder) == Origins(loop.root / "remote").tip(REPO)
    assert loop.event_names().count(Event.WORKSPACE_READY) == 2


def test_sessions_prune_removes_a_clean_closed_worktree_and_keeps_a_dirty_one(worktrees: Loop) -> None:
    loop = worktrees
    clean, dirty = loop.with_sessions(2)
    (loop.root / "work" / dirty.slug / "notes.txt").write_text("the agent's notes\n", encoding="utf-8")
    for ref in (clean, dirty):
        assert loop.cli("sessions", "close", "--work-item", str(ref), "--kill-tmux").returncode == 0

    dry = loop.cli("sessions", "prune", "--dry-run")
    still_there = [(loop.root / "work" / ref.slug).is_dir() for ref in (clean, dirty)]
    done = loop.cli("sessions", "prune")

    assert dry.returncode == 0 and still_there == [True, True], dry.stderr
    would_remove, would_keep, would_total = dry.stdout.splitlines()
    assert would_remove.startswith(f"would remove {loop.root / 'work' / clean.slug} ({clean}): ")
    assert would_keep == f"would keep {loop.root / 'work' / dirty.slug} ({dirty}): untracked file"
    assert would_total.startswith("would free ") and would_total.endswith(" in total (2 worktrees looked at)")
    assert done.returncode == 0, done.stderr
    removed, kept, total = done.stdout.splitlines()
    assert removed == would_remove.replace("would remove", "removed", 1)
    assert kept == f"kept {loop.root / 'work' / dirty.slug} ({dirty}): untracked file"
    assert total == would_total.replace("would free", "freed", 1)
    assert not (loop.root / "work" / clean.slug).exists() and (loop.root / "work" / dirty.slug / "notes.txt").exists()
    (event,) = [e for e in loop.events() if e["event"] == "workspace.removed"]
    assert (event["work_item"], event["source"], event["by"]) == (str(clean), "operator", "prune")


def test_sessions_prune_with_no_state_store_says_so_and_creates_nothing(worktrees: Loop) -> None:
    result = worktrees.cli("sessions", "prune")

    assert (result.returncode, result.stdout) == (0, "")
    assert result.stderr == "nothing to prune: no state store yet\n"
    assert not worktrees.state.exists()


def test_doctor_checks_git_and_that_each_clone_url_answers(worktrees: Loop) -> None:
    loop = worktrees
    loop.sources = [{"provider": "sandbox", "repos": [str(REPO), "sandbox/gone"], "label": "loop"}]

    result = loop.cli("doctor")

    lines = result.stdout.splitlines()
    url = f"file://{loop.root}/remote/sandbox"
    assert result.returncode == 1, result.stdout + result.stderr
    assert any(line.startswith("✓ git: git version ") for line in lines)
    assert f"✓ clone sandbox/demo: {url}/demo.git answers (default branch main)" in lines
    assert (
        f"✗ clone sandbox/gone: git ls-remote {url}/gone.git: fatal: '{loop.root}/remote/sandbox/gone.git' does not "
        "appear to be a git repository — fix: check routing.workspace.cloneUrl; for https, that gh is logged in "
        "and can read the repository"
    ) in lines


def test_a_worktree_mode_without_a_folder_per_item_is_refused_before_anything_starts(tmp_path: Path) -> None:
    (tmp_path / "loop.yaml").write_text("routing: {workspace: {mode: worktree}}\n", encoding="utf-8")

    result = run_cli(tmp_path, "--config", "loop.yaml", "poll", "--once")

    assert result.returncode == 2
    assert result.stderr == (
        "the-loop: loop.yaml: routing.spawnWorkdir: must contain {slug} when workspace.mode is worktree (each item "
        "needs its own folder)\n"
    )
    assert tree(tmp_path) == ["loop.yaml"]


def test_a_dry_run_lists_the_ignored_files_that_would_go_and_keeps_hidden_edits_and_env(
    worktrees: Loop,
) -> None:
    loop = worktrees
    hidden, env, installed = loop.with_sessions(3)
    folder = {ref: loop.root / "work" / ref.slug for ref in (hidden, env, installed)}
    git("update-index", "--assume-unchanged", "file1.txt", cwd=folder[hidden])
    (folder[hidden] / "file1.txt").write_text("the agent's edit git status does not show\n", encoding="utf-8")
    (folder[env] / ".env").write_text("API_KEY=written-by-the-agent\n", encoding="utf-8")
    (folder[installed] / "node_modules" / "left-pad").mkdir(parents=True)
    (folder[installed] / "node_modules" / "left-pad" / "index.js").write_bytes(b"x" * 200_000)
    for ref in (hidden, env, installed):
        assert loop.cli("sessions", "close", "--work-item", str(ref), "--kill-tmux").returncode == 0

    dry = loop.cli("sessions", "prune", "--dry-run")
    done = loop.cli("sessions", "prune")

    assert dry.returncode == 0, dry.stderr
    keep_hidden, keep_env, would_remove, _total = dry.stdout.splitlines()
    assert keep_hidden == (
        f"would keep {folder[hidden]} ({hidden}): change git status does not show (skip-worktree or assume-unchanged)"
    )
    assert keep_env == f"would keep {folder[env]} ({env}): ignored file worth keeping (routing.workspace.keepIgnored)"
    assert would_remove.startswith(f"would remove {folder[installed]} ({installed}): ")
    assert re.search(r"iB; ignored, lost with it: node_modules/ \((19\d|2\d\d)\.\d KiB\)$", would_remove), would_remove
    assert done.returncode == 0, done.stderr
    assert folder[hidden].is_dir() and folder[env].is_dir() and not folder[installed].exists()
    assert (folder[hidden] / "file1.txt").read_text(encoding="utf-8").startswith("the agent's edit")


def test_with_no_keep_patterns_an_ignored_env_file_goes_and_is_named(worktrees: Loop) -> None:
    loop = worktrees
    loop.workspace = {**loop.workspace, "keepIgnored": []}
    (ref,) = loop.with_sessions(1)
    (loop.root / "work" / ref.slug / ".env").write_text("API_KEY=x\n", encoding="utf-8")
    assert loop.cli("sessions", "close", "--work-item", str(ref), "--kill-tmux").returncode == 0

    done = loop.cli("sessions", "prune")

    assert done.returncode == 0, done.stderr
    assert re.search(r"iB; ignored, lost with it: \.env \(\d+(\.\d)? (bytes|KiB)\)$", done.stdout.splitlines()[0]), (
        done.stdout
    )
    assert not (loop.root / "work" / ref.slug).exists()


def test_a_forks_pull_request_waits_for_sessions_vouch_before_its_setup_and_agent_run(
    worktrees: Loop,
) -> None:
    loop = worktrees
    marker = loop.root / "setup-ran"
    sha = Origins(loop.root / "remote").pull_request(REPO, 3, files={"evil.sh": f"echo ran > {marker}\n"})
    loop.workspace["setup"] = "sh ./evil.sh"
    sandbox = loop.sandbox()
    ref = sandbox.create_item(
        REPO, "a fork's change", labels=("loop",), kind=ItemKind.PULL_REQUEST, number=3, head_repo="mallory/demo",
        head_sha=sha,
    )  # fmt: skip
    sandbox.close()

    unvouched = loop.cli("poll", "--once")
    refused = [e for e in loop.events() if e["event"] == "session.spawn_failed"]
    asked = loop.cli("sessions", "vouch", "--work-item", str(ref))
    vouched = loop.cli("sessions", "vouch", "--work-item", str(ref), "--head", sha[:12])
    sessions_before = sessions(loop)
    after = loop.cli("poll", "--once")

    assert unvouched.returncode == 0, unvouched.stderr
    assert not marker.exists() and loop.event_names().count(Event.WORKSPACE_SETUP_SKIPPED) == 1
    assert refused and "sim has no start that ignores its folder's own settings" in refused[0]["reason"]
    assert ref.target.name not in sessions_before
    assert asked.returncode == 1 and f"--head {sha}" in asked.stdout
    assert vouched.returncode == 0 and vouched.stdout == f"vouched for {ref} at {sha} of mallory/demo\n"
    assert after.returncode == 0 and ref.target.name in sessions(loop)  # vouched: its agent starts
    assert not marker.exists()  # setup runs when a worktree is made; this one was made before the vouch


def sessions(loop: Loop) -> list[str]:
    return loop.tmux.run("list-sessions", "-F", "#{session_name}", check=False).split()
