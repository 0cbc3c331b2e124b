"""Pytest fixtures for real Claude Code: the binary, the Anthropic stand-in, and the rig around them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.home import ClaudeHome, claude_env
from tests.claude.hooks import HookLog
from tests.claude.rig import ClaudeRig, ClaudeTmux
from tests.pinned_tools import required
from tests.tmux_support import require_tmux


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    """The pinned Claude Code; in CI its absence fails the run, elsewhere it skips loudly."""
    return required("claude_code")


@pytest.fixture(scope="module")
def anthropic() -> Iterator[AnthropicStandIn]:
    standin = AnthropicStandIn()
    try:
        yield standin
    finally:
        standin.close()


@pytest.fixture(scope="module")
def claude_config() -> dict[str, Any]:
    """Keys added to the module's ~/.claude.json; a test module overrides this fixture."""
    return {}


@pytest.fixture(scope="module")
def claude_rig(
    claude_binary: Path,
    anthropic: AnthropicStandIn,
    claude_config: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[ClaudeRig]:
    """One HOME, one hook log and one private tmux server (started with Claude's environment, and
    the module's `CLAUDE_EXTRA_ENV` when it has one) for a module's tests."""
    extra_env: dict[str, str] = getattr(request.module, "CLAUDE_EXTRA_ENV", {})
    require_tmux()
    base = tmp_path_factory.mktemp("claude")
    (base / "folders" / "trusted").mkdir(parents=True)
    home = ClaudeHome(base / "home", trusted=(base / "folders" / "trusted",), extra=claude_config)
    tmux = ClaudeTmux(base / "tmux")
    tmux.tmpdir.mkdir()
    tmux.start(claude_env(home, anthropic.base_url) | extra_env)
    rig = ClaudeRig(claude_binary, home, tmux, HookLog(base / "hooks"), root=base / "folders")
    try:
        yield rig
    finally:
        rig.close()
        tmux.kill_server()


@pytest.fixture
def claude(claude_rig: ClaudeRig, anthropic: AnthropicStandIn) -> Iterator[ClaudeRig]:
    """The module's rig with a fresh stand-in script; the Claude sessions a test spawned end with it."""
    anthropic.reset()
    before = len(claude_rig.spawned)
    try:
        yield claude_rig
    finally:
        anthropic.release()
        claude_rig.close(since=before)
