"""Codex through the-loop's own poll cycle with the real Codex on real tmux, offline:
spawn in a never-seen git worktree -> ready -> prompt confirmed by receipt; a comment confirmed;
the session killed -> the next comment resumes the same conversation (`codex resume ID`)."""

from __future__ import annotations

import os
import signal
import tomllib
from pathlib import Path
from typing import Any

import pytest

from domain.events import Event
from domain.refs import WorkItemRef
from tests.claude.loop import (
    a_comment_confirmed,
    a_comment_while_busy,
    builtin_spec,
    exits_at_once,
    resumed_after_a_kill,
)
from tests.codex.rig import CodexRig, codex_binary, codex_rig, openai, world_for
from tests.openai_standin.server import OpenAIStandIn
from tests.real_agents import first_spawn
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["codex_binary", "codex_rig", "openai"]

pytestmark = pytest.mark.codex

TRUST_QUESTION = "Trust this folder?"


def events_of(world: World, name: Event, comment_id: str) -> list[dict[str, Any]]:
    return [e for e in world.events.named(name) if e.get("comment_id") == comment_id]


@pytest.fixture(scope="module")
def agent(
    codex_rig: CodexRig, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> tuple[World, WorkItemRef, Path]:

    def never_trusted(folder: Path) -> None:
        assert str(folder) not in tomllib.loads(codex_rig.config.read_text()).get("projects", {})

    return first_spawn(lambda base: world_for(codex_rig, base), tmp_path_factory, openai, before=never_trusted)


def test_a_spawn_in_a_never_seen_git_worktree_is_trusted_ready_and_its_prompt_confirmed_by_receipt(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path]
) -> None:
    world, ref, folder = agent
    projects = tomllib.loads(codex_rig.config.read_text())["projects"]
    assert projects[str(folder.resolve())] == {"trust_level": "trusted"}
    assert [e["directory"] for e in world.events.named(Event.SESSION_TRUSTED)] == [str(folder)]
    assert [e["source"] for e in world.events.named(Event.SESSION_READY)] == ["startup"]
    succeeded = world.events.named(Event.DISPATCH_SUCCEEDED)
    assert [(e["delivery_id"].split("-")[0], e["confirmed_by"]) for e in succeeded] == [("start", "receipt")]
    # Codex's own conversation id, from its SessionStart receipt, is recorded
    (ready,) = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "startup"]
    assert world.record(ref).harness_session_id == ready.conversation
    pane = world.record(ref).pane_id
    assert TRUST_QUESTION not in codex_rig.tmux.run("capture-pane", "-p", "-t", pane, check=False)


def test_a_comment_to_a_ready_codex_is_confirmed_by_its_receipt(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    a_comment_confirmed(world, ref, openai, "please add a test")


def test_a_killed_codex_is_resumed_by_the_next_comment_in_the_same_conversation(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id  # its first spawn's, whichever test ran before
    pid = int(codex_rig.tmux.run("display-message", "-p", "-t", world.record(ref).pane_id, "#{pane_pid}").strip())
    codex_rig.tmux.run("kill-session", "-t", ref.target.exact)
    wait_for(
        lambda: not Path(f"/proc/{pid}/cmdline").exists() or b"codex" not in Path(f"/proc/{pid}/cmdline").read_bytes(),
        timeout=20,
        what="Codex gone",
    )
    openai.reset()
    resumed_after_a_kill(world, ref, conversation, openai, earlier="Fix the widget.")


def test_a_sigkilled_resumed_codex_is_resumed_again_in_the_same_conversation(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id
    pane = world.record(ref).pane_id
    pid = int(codex_rig.tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}").strip())
    os.kill(pid, signal.SIGKILL)
    wait_for(
        lambda: codex_rig.tmux.run("display-message", "-p", "-t", pane, "#{pane_dead}", check=False).strip() == "1",
        what="tmux to see the pane dead",
    )
    comment = world.comment(ref, "carry on after SIGKILL")

    world.cycle()

    assert events_of(world, Event.DISPATCH_SUCCEEDED, comment.id)[0]["confirmed_by"] == "receipt"
    assert [e["resumed"] for e in world.events.named(Event.SESSION_RESPAWNED)][-1] is True
    assert world.record(ref).harness_session_id == conversation


def test_a_comment_while_codex_is_busy_is_confirmed_and_reaches_the_model(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    a_comment_while_busy(world, ref, openai)


def test_a_codex_that_exits_at_once_fails_every_attempt_posts_one_notice_and_never_celebrates(
    codex_rig: CodexRig, openai: OpenAIStandIn, tmp_path: Path
) -> None:
    exits_at_once(world_for(codex_rig, tmp_path, builtin_spec("codex", codex_rig.binary, args=["--no-such-flag"])), 30)
