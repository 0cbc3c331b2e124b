"""`doctor` as a person runs it: tmux or gh missing from PATH is said, with the fix, exit 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adapters.agents.pins import PINNED_CLAUDE_CODE
from tests.e2e.cli import run_cli, tree

GITHUB_SOURCE = "polling: {sources: [{repos: [octo/api], label: loop}]}\nrouting: {tmux: {socketName: doctor-e2e}}\n"


def test_doctor_with_tmux_and_gh_missing_from_path_says_so_and_fails(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "loop.yaml").write_text(GITHUB_SOURCE, encoding="utf-8")
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env={"PATH": str(tmp_path / "bin")})
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stderr
    assert "✗ tmux: tmux not found on PATH — fix: install tmux 3.3 or newer (apt install tmux)" in lines
    assert any(line.startswith("✗ gh: gh not found on PATH — fix: install gh") for line in lines)
    assert tree(tmp_path) == ["bin", "loop.yaml"]


def test_doctor_on_the_embedded_defaults_needs_only_tmux(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("SKIPPED LOUDLY: the tmux binary is not installed (CI installs it)")
    work, sockets = tmp_path / "work", tmp_path / "tmux"
    work.mkdir()
    sockets.mkdir()
    result = run_cli(work, "doctor", env={"TMUX_TMPDIR": str(sockets)})  # tmux makes its socket dir there
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "✓ config: valid (built-in defaults)"
    assert "– gh: not needed: no github source configured" in result.stdout.splitlines()
    assert tree(work) == []


def test_a_state_root_under_a_file_is_said_to_be_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    (tmp_path / "loop.yaml").write_text("state: {root: afile/state}\n", encoding="utf-8")
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env={"PATH": str(tmp_path)})
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("✗ state root:")]
    assert "afile is a file, not a directory" in line and "not writable" not in line, line


def test_a_state_root_that_is_a_file_is_said_to_be_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    (tmp_path / "loop.yaml").write_text("state: {root: afile}\n", encoding="utf-8")
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env={"PATH": str(tmp_path)})
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("✗ state root:")]
    assert "afile is a file, not a directory" in line and "not writable" not in line, line


CLAUDE_SANDBOX = (
    "polling: {sources: [{provider: sandbox, repos: [sandbox/demo], label: loop}]}\n"
    "routing: {defaultHarness: claude, tmux: {socketName: doctor-e2e}}\n"
    "state: {root: state}\n"
)


def test_doctor_with_claude_off_the_path_says_so_with_the_fix_and_fails(tmp_path: Path) -> None:
    """The closing note's output: before, every line was ✓ and three spawns failed later."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "home").mkdir()
    tmux = shutil.which("tmux")
    if tmux:
        (tmp_path / "bin" / "tmux").symlink_to(tmux)
    (tmp_path / "loop.yaml").write_text(CLAUDE_SANDBOX, encoding="utf-8")
    env = {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path / "home"), "TMUX_TMPDIR": str(tmp_path)}
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env=env)
    print(result.stdout)  # shown with -s: the closing note quotes it
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        f"✗ harness claude: claude not found on the panes' PATH ({tmp_path / 'bin'}) — fix: install it for the "
        "daemon's user so it is on the daemon's PATH, or set routing.harnesses.claude.binary to its absolute path "
        "(docs/claude-code-production.md)"
    ) in result.stdout.splitlines()


def test_doctor_passes_a_claude_that_is_installed_onboarded_and_given_its_key(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("SKIPPED LOUDLY: the tmux binary is not installed (CI installs it)")
    (tmp_path / "bin").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "bin" / "tmux").symlink_to(shutil.which("tmux") or "")
    fake = tmp_path / "bin" / "claude"
    fake.write_text(f'#!/bin/sh\necho "{PINNED_CLAUDE_CODE} (Claude Code)"\n', encoding="utf-8")
    fake.chmod(0o755)
    key = "sk-ant-api03-" + "x" * 40 + "A" * 20
    config = {"hasCompletedOnboarding": True, "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []}}
    (tmp_path / "home" / ".claude.json").write_text(json.dumps(config), encoding="utf-8")
    (tmp_path / "loop.yaml").write_text(
        CLAUDE_SANDBOX.replace(
            "defaultHarness: claude,",
            "defaultHarness: claude, "
            "harnesses: {claude: {passEnv: [ANTHROPIC_API_KEY], env: {DISABLE_AUTOUPDATER: '1'}}},",
        ),
        encoding="utf-8",
    )
    env = {
        "PATH": str(tmp_path / "bin"),
        "HOME": str(tmp_path / "home"),
        "TMUX_TMPDIR": str(tmp_path),
        "ANTHROPIC_API_KEY": key,
    }
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    harness = [line for line in result.stdout.splitlines() if line.startswith("✓ harness claude")]
    assert harness == [
        "✓ harness claude environment: every spawn gets DISABLE_AUTOUPDATER, ANTHROPIC_API_KEY (tmux -e)",
        f"✓ harness claude: {PINNED_CLAUDE_CODE} (Claude Code) ({fake})",
        "✓ harness claude autoupdater: off in every spawn (DISABLE_AUTOUPDATER)",
        f"✓ harness claude onboarding: done ({tmp_path / 'home' / '.claude.json'})",
        "✓ harness claude login: an API key (ANTHROPIC_API_KEY), approved",
        f"✓ harness claude trust: {tmp_path / 'home' / '.claude.json'} is writable",
    ]
    assert key[-20:] not in result.stdout


def claude_unready(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    """A pinned Claude Code given its key, never run by the daemon's user: its first run not done,
    its key not approved; what `doctor --fix` can write. Its ~/.claude.json, the environment, the key."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "home").mkdir()
    fake = tmp_path / "bin" / "claude"
    fake.write_text(f'#!/bin/sh\necho "{PINNED_CLAUDE_CODE} (Claude Code)"\n', encoding="utf-8")
    fake.chmod(0o755)
    file = tmp_path / "home" / ".claude.json"
    file.write_text(json.dumps({"theme": "dark", "projects": {"/srv/x": {"hasTrustDialogAccepted": True}}}))
    harness = "harnesses: {claude: {passEnv: [ANTHROPIC_API_KEY], env: {DISABLE_AUTOUPDATER: '1'}}},"
    (tmp_path / "loop.yaml").write_text(
        CLAUDE_SANDBOX.replace("defaultHarness: claude,", f"defaultHarness: claude, {harness}")
    )
    key = "sk-ant-api03-" + "y" * 40 + "B" * 20
    env = {"PATH": str(tmp_path / "bin"), "HOME": str(tmp_path / "home"), "TMUX_TMPDIR": str(tmp_path)}
    return file, {**env, "ANTHROPIC_API_KEY": key}, key


def test_doctor_fix_with_consent_records_the_first_run_done_and_the_key_approved_keeping_every_other_key(
    tmp_path: Path,
) -> None:
    file, env, key = claude_unready(tmp_path)
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", "--fix", "--yes", env=env)
    config = json.loads(file.read_text(encoding="utf-8"))
    assert config["hasCompletedOnboarding"] is True
    assert config["customApiKeyResponses"]["approved"] == [key[-20:]]
    assert (config["theme"], config["projects"]) == ("dark", {"/srv/x": {"hasTrustDialogAccepted": True}})
    assert key[-20:] not in result.stdout + result.stderr
    assert f"✓ harness claude onboarding: done ({file})" in result.stdout.splitlines(), result.stdout


def test_doctor_fix_without_consent_writes_nothing_and_says_how_to_give_it(tmp_path: Path) -> None:
    file, env, _ = claude_unready(tmp_path)
    before = file.read_bytes()
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", "--fix", env=env)  # no terminal to ask on
    assert result.returncode == 1
    assert file.read_bytes() == before
    assert any("not written" in line and "--yes" in line for line in result.stdout.splitlines()), result.stdout


def test_doctor_without_fix_writes_nothing(tmp_path: Path) -> None:
    file, env, _ = claude_unready(tmp_path)
    before = file.read_bytes()
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env=env)
    assert result.returncode == 1 and file.read_bytes() == before
