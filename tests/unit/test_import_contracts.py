"""The import-linter contracts hold, and each one fails on a planted violation."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).with_name("lint-imports")
USECASES = "use cases import no CLI, configuration, demo or container BROKEN"
CONFIG = "the configuration imports no use case, CLI or demo BROKEN"
CIRCLE = "the domain's modules import one another without a circle BROKEN"


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for package in ("domain", "adapters", "app"):
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_real_tree_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("domain/planted.py", "import adapters.tmux.adapter\n", "domain is pure: no adapters, no app BROKEN"),
        ("domain/planted.py", "import app.usecases.cycle.poll\n", "domain is pure: no adapters, no app BROKEN"),
        ("domain/planted.py", "import subprocess\n", "domain imports no I/O or framework module BROKEN"),
        ("domain/planted.py", "import os\n", "domain imports no I/O or framework module BROKEN"),
        ("domain/planted.py", "import pydantic\n", "domain imports no I/O or framework module BROKEN"),
        # the registry entry holds a park's values, never the rules that import the model back
        ("domain/model.py", "from domain.parking import park_line\n", CIRCLE),
        ("domain/park.py", "from domain.model import Comment\n", CIRCLE),
        ("domain/prompts.py", "import domain.parking\n", CIRCLE),
        ("app/planted.py", "import adapters.tmux.adapter\n", "only app.container imports adapters BROKEN"),
        # the lean read path's exception names three modules, not the adapters
        ("app/cli/fast_reads.py", "import adapters.tmux.adapter\n", "only app.container imports adapters BROKEN"),
        ("app/cli/fast_reads.py", "import adapters.sqlite.store\n", "only app.container imports adapters BROKEN"),
        # the lean `sessions list`'s names the four light readers its listing looks with, no other
        ("app/cli/lean_listing.py", "import adapters.github.gh\n", "only app.container imports adapters BROKEN"),
        ("app/cli/lean_listing.py", "import adapters.postgres.store\n", "only app.container imports adapters BROKEN"),
        ("app/cli/lean_listing.py", "import adapters.tmux.adapter\n", "only app.container imports adapters BROKEN"),
        ("app/cli/lean_listing.py", "import adapters.sqlite.store\n", "only app.container imports adapters BROKEN"),
        # doctor finds a harness's own checks through the registry, never by the package's name
        ("app/cli/doctor.py", "import adapters.harnesses.codex.doctor\n", "only app.container imports adapters BROKEN"),
        # the fleet page shares the webhook receiver's server core, and no other adapter
        ("app/web/http.py", "import adapters.github.webhook\n", "only app.container imports adapters BROKEN"),
        ("adapters/planted.py", "import app.usecases.cycle.poll\n", "adapters do not import app BROKEN"),
        ("app/usecases/planted.py", "import app.cli.main\n", USECASES),
        ("app/usecases/planted.py", "import app.config.settings\n", USECASES),
        ("app/usecases/planted.py", "import pydantic\n", USECASES),
        ("app/config/planted.py", "import app.usecases.cycle.poll\n", CONFIG),
        ("app/web/planted.py", "import app.container\n", "the fleet page calls use cases and views"),
        ("app/web/planted.py", "import sqlite3\n", "the fleet page calls use cases and views"),
        ("adapters/tmux/planted.py", "import adapters.sqlite.store\n", "adapters are independent"),
        ("adapters/github/planted.py", "import adapters.tmux.commands\n", "adapters are independent"),
        # Codex's trust writes through adapters.agents, never through Claude Code's adapter
        ("adapters/harnesses/codex/planted.py", "import adapters.harnesses.claude.trust\n", "adapters are independent"),
        ("adapters/harnesses/codex/planted.py", "import adapters.receipts.files\n", "adapters are independent"),
        # every technology under adapters/ is one of the independent ones (shared: support, clock)
        ("adapters/harnesses/gemini/planted.py", "import adapters.tmux.commands\n", "adapters are independent"),
        ("adapters/harnesses/opencode/planted.py", "import adapters.sqlite.store\n", "adapters are independent"),
        ("adapters/watchdog/planted.py", "import adapters.github.gh\n", "adapters are independent"),
        ("adapters/stop_point.py", "import adapters.tmux.commands\n", "adapters are independent"),
        # the receipt folders hand each harness its channel through what the container gives them
        ("adapters/receipts/planted.py", "import adapters.harnesses.gemini.hooks\n", "adapters are independent"),
        ("adapters/receipts/files.py", "import adapters.harnesses.codex.hooks\n", "adapters are independent"),
        ("adapters/receipts/files.py", "import adapters.harnesses.claude.hooks\n", "adapters are independent"),
        ("adapters/receipts/hook_json.py", "import adapters.harnesses.gemini.hooks\n", "adapters are independent"),
        ("adapters/harnesses/codex/hooks.py", "import adapters.receipts.hook_json\n", "adapters are independent"),
        # the watchdog's exception names its own tmux and event-log imports, no other adapter
        ("adapters/watchdog/watch.py", "import adapters.sqlite.store\n", "adapters are independent"),
        ("adapters/watchdog/deadline.py", "import adapters.tmux.commands\n", "adapters are independent"),
    ],
)
def test_each_contract_fails_on_a_planted_violation(tree: Path, module: str, line: str, contract: str) -> None:
    planted = tree / module  # a module that exists keeps its own imports: the line is added to them
    planted.write_text((planted.read_text() if planted.exists() else '"""Planted."""\n') + line)

    result = _lint(tree)

    assert result.returncode != 0
    assert contract in result.stdout
