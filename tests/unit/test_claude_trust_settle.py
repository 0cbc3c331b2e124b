"""ClaudeTrust against a running Claude Code that writes its older copy of ~/.claude.json over a
new trust record (seen with the real binary: tests/claude/test_poll_cycle_with_claude.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.harnesses.claude.trust import ROUNDS, ClaudeTrust
from domain.errors import TrustError

FOLDER = "/home/op/agents/github-acme-widgets-2"


def claude_writing_its_copy(path: Path, *, times: int) -> tuple[Callable[[float], None], list[float]]:
    """A sleep during which a running Claude writes the file as it was before, the first `times` sleeps."""
    before, slept = path.read_text(encoding="utf-8"), []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) <= times:
            path.write_text(before, encoding="utf-8")

    return sleep, slept


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / ".claude.json"
    path.write_text(json.dumps({"hasCompletedOnboarding": True, "projects": {}}), encoding="utf-8")
    return path


def trusted(path: Path) -> bool:
    projects = json.loads(path.read_text(encoding="utf-8"))["projects"]
    return projects.get(FOLDER, {}).get("hasTrustDialogAccepted") is True


def test_a_trust_a_running_claude_wrote_over_is_written_again_and_kept(config: Path) -> None:
    sleep, slept = claude_writing_its_copy(config, times=1)

    assert ClaudeTrust(config, settle_seconds=1.0, sleep=sleep).trust(FOLDER) is True

    assert trusted(config)
    assert slept == [1.0, 1.0]  # lost once, written again, then read back in place


def test_a_trust_written_over_every_time_is_refused_with_the_file_named(config: Path) -> None:
    sleep, _ = claude_writing_its_copy(config, times=ROUNDS + 1)

    with pytest.raises(TrustError, match=str(config)):
        ClaudeTrust(config, sleep=sleep).trust(FOLDER)


def test_a_folder_trusted_already_costs_no_wait(config: Path) -> None:
    ClaudeTrust(config, sleep=lambda _: None).trust(FOLDER)
    sleep, slept = claude_writing_its_copy(config, times=0)

    assert ClaudeTrust(config, sleep=sleep).trust(FOLDER) is False
    assert slept == []


def test_a_missing_file_is_created_private_with_the_record(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".claude.json"

    assert ClaudeTrust(path, sleep=lambda _: None).trust(FOLDER) is True

    assert trusted(path)
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == [".claude.json"]  # no temp, no lock left
