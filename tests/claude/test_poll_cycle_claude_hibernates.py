"""Hibernation through the-loop's own poll cycle with the real Claude Code on real tmux, offline:
Claude idle past `routing.hibernateAfterSeconds` is ended, its conversation kept; the next comment
resumes it (`claude --resume ID`); a client attached to its session keeps it awake. One Claude for
the module, spawned by a cycle (tests/claude/loop_hibernation.py says how its tests share it)."""

from __future__ import annotations

import pytest

from domain.refs import WorkItemRef
from tests.anthropic_standin.server import AnthropicStandIn
from tests.claude import loop_hibernation as hibernation
from tests.claude.fixtures import anthropic, claude_binary, claude_config, claude_rig
from tests.claude.loop import ClaudeLoop
from tests.claude.rig import ClaudeRig
from tests.service.world import World

__all__ = ["anthropic", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude


@pytest.fixture(scope="module")
def loop(claude_rig: ClaudeRig, tmp_path_factory: pytest.TempPathFactory) -> ClaudeLoop:
    return ClaudeLoop(claude_rig, tmp_path_factory.mktemp("loop"))


@pytest.fixture(scope="module")
def agent(loop: ClaudeLoop, anthropic: AnthropicStandIn) -> tuple[World, WorkItemRef]:
    """An item armed on first sight, its Claude spawned by one cycle, hibernation on."""
    anthropic.reset()
    world = loop.world(hibernate_after_seconds=hibernation.AFTER)
    ref = world.item(1)
    world.cycle()
    return world, ref


def test_claude_idle_past_the_setting_is_hibernated_its_process_ended_its_conversation_kept(
    loop: ClaudeLoop, agent: tuple[World, WorkItemRef]
) -> None:
    world, ref = agent
    hibernation.an_idle_agent_is_hibernated_its_conversation_kept(world, ref, loop.rig.tmux)
    # unlike Codex, Claude runs its SessionEnd hook on the SIGTERM: its receipts say the conversation
    # ended (a state the item's hibernated status and the resume both take)
    assert loop.wait_hook(world, ref, "SessionEnd")["reason"] == "other"


def test_the_next_comment_resumes_the_hibernated_claude_conversation_confirmed_once(
    agent: tuple[World, WorkItemRef], anthropic: AnthropicStandIn
) -> None:
    world, ref = agent
    hibernation.the_next_comment_resumes_the_hibernated_conversation(world, ref, anthropic, earlier="Fix the widget.")


def test_a_client_attached_to_claudes_session_keeps_it_awake_until_it_detaches(
    loop: ClaudeLoop, agent: tuple[World, WorkItemRef]
) -> None:
    world, ref = agent
    hibernation.an_attached_client_keeps_the_agent_awake_until_it_detaches(world, ref, loop.rig.tmux)
