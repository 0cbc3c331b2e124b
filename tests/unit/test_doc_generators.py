"""The docs generators take one argument, the project root, and never a flag for a path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GENERATORS = ["app.cli.event_docs", "app.config.reference"]


@pytest.mark.parametrize("module", GENERATORS)
@pytest.mark.parametrize("flag", ["--help", "-h", "--check"])
def test_a_generator_given_a_flag_refuses_it_and_writes_nothing(module: str, flag: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", module, flag], cwd=tmp_path, check=False, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2
    assert "usage:" in run.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", GENERATORS)
def test_a_generator_given_a_root_writes_its_page_there(module: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", module, str(tmp_path)], check=False, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert [p.name for p in (tmp_path / "docs").iterdir()] in (["events.md"], ["config.md"])


def test_the_stray_copy_of_the_event_catalog_is_gone() -> None:
    root = Path(__file__).resolve().parents[2]
    assert not (root / "--help").exists()
