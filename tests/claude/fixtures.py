"""Pytest fixtures for real Claude Code: the binary, the Anthropic stand-in, and the rig around them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude.home import ClaudeHome, claude_env
from tests.claude.hooks import HookLog
from tests.claude.rig import ClaudeRig
from tests.real_agents import binary_fixture, for_one_test, private_tmux, running, serving
from tests.tmux_support import require_tmux

claude_binary = binary_fixture("claude_binary", "claude_code")


@pytest.fixture(scope="module")
def anthropic() -> Iterator[AnthropicStandIn]:
    yield from serving(AnthropicStandIn())


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
    tmux = private_tmux(base / "tmux", claude_env(home, anthropic.base_url) | extra_env)
    yield from running(ClaudeRig(claude_binary, home, tmux, HookLog(base / "hooks"), root=base / "folders"), tmux)


@pytest.fixture
def claude(claude_rig: ClaudeRig, anthropic: AnthropicStandIn) -> Iterator[ClaudeRig]:
    """The module's rig with a fresh stand-in script; the Claude sessions a test spawned end with it."""
    yield from for_one_test(claude_rig, anthropic)
