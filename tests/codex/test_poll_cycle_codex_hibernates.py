"""Hibernation through the-loop's own poll cycle with the real Codex on real tmux, offline: Codex
idle past `routing.hibernateAfterSeconds` is ended, its conversation kept; the next comment resumes
it (`codex resume ID`, the id its receipts named); a client attached to its session keeps it awake.
One Codex for the module, spawned by a cycle (tests/claude/loop_hibernation.py says how its tests
share it)."""

from __future__ import annotations

from functools import partial

import pytest

from domain.refs import WorkItemRef
from tests.claude import loop_hibernation as hibernation
from tests.codex.rig import CodexRig, codex_binary, codex_rig, openai, world_for
from tests.openai_standin.server import OpenAIStandIn
from tests.real_agents import first_spawn
from tests.service.world import World

__all__ = ["codex_binary", "codex_rig", "openai"]

pytestmark = pytest.mark.codex


@pytest.fixture(scope="module")
def agent(
    codex_rig: CodexRig, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> tuple[World, WorkItemRef]:
    """An item in a never-seen git worktree, its Codex spawned by one cycle, hibernation on."""
    world_in = partial(world_for, codex_rig, hibernate_after_seconds=hibernation.AFTER)
    world, ref, _ = first_spawn(world_in, tmp_path_factory, openai)
    return world, ref


def test_codex_idle_past_the_setting_is_hibernated_its_process_ended_its_conversation_kept(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef]
) -> None:
    world, ref = agent
    hibernation.an_idle_agent_is_hibernated_its_conversation_kept(world, ref, codex_rig.tmux)


def test_the_next_comment_resumes_the_hibernated_codex_conversation_confirmed_once(
    agent: tuple[World, WorkItemRef], openai: OpenAIStandIn
) -> None:
    world, ref = agent
    hibernation.the_next_comment_resumes_the_hibernated_conversation(world, ref, openai, earlier="Fix the widget.")


def test_a_client_attached_to_codexs_session_keeps_it_awake_until_it_detaches(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef]
) -> None:
    world, ref = agent
    hibernation.an_attached_client_keeps_the_agent_awake_until_it_detaches(world, ref, codex_rig.tmux)
