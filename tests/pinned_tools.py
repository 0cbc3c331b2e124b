"""The real agents the tests run, where `scripts/install_<name>.py` puts each (its `Pin`), and the
fixtures' check: skip loudly where one is missing, fail in CI (bootstrap installs every one)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"


def pin(name: str) -> Any:
    """`PIN` of scripts/install_<name>.py (a `pinned_npm.Pin`)."""
    if str(SCRIPTS) not in sys.path:
        sys.path.append(str(SCRIPTS))  # the installers import pinned_npm beside them
    path = SCRIPTS / f"install_{name}.py"
    spec = importlib.util.spec_from_file_location(f"install_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PIN


def installed(name: str) -> Path:
    """Where scripts/install_<name>.py installs its executable."""
    path: Path = pin(name).target(ROOT)
    return path


def required(name: str) -> Path:
    """The installed executable of scripts/install_<name>.py, or the test skipped loudly (failed in CI)."""
    tool = pin(name)
    path: Path = tool.target(ROOT)
    if not os.access(path, os.X_OK):
        reason = f"{tool.title} {tool.version} is not installed at {path}: scripts/bootstrap.sh --tests installs it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(f"SKIPPED LOUDLY: {reason}")
    return path
