"""`doctor` as a person runs it: tmux or gh missing from PATH is said, with the fix, exit 1."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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


def test_issue19_item8_a_state_root_under_a_file_is_said_to_be_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    (tmp_path / "loop.yaml").write_text("state: {root: afile/state}\n", encoding="utf-8")
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env={"PATH": str(tmp_path)})
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("✗ state root:")]
    assert "afile is a file, not a directory" in line and "not writable" not in line, line


def test_issue19_item8_a_state_root_that_is_a_file_is_said_to_be_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    (tmp_path / "loop.yaml").write_text("state: {root: afile}\n", encoding="utf-8")
    result = run_cli(tmp_path, "--config", "loop.yaml", "doctor", env={"PATH": str(tmp_path)})
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("✗ state root:")]
    assert "afile is a file, not a directory" in line and "not writable" not in line, line
