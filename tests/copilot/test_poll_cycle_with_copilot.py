"""GitHub Copilot CLI through the-loop's own poll cycle, with the real binary on real tmux, offline
(its custom provider on the OpenAI stand-in): spawn in a never-seen git worktree -> trusted, ready
-> its start confirmed by receipt; a comment confirmed; the session killed -> the next comment
resumes the same conversation (`--resume ID`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses import registered
from adapters.harnesses.copilot.trust import CopilotTrust
from adapters.receipts.files import FileReceipts
from domain.events import Event
from domain.refs import WorkItemRef
from tests.claude.loop import a_comment_confirmed, builtin_spec, idle, real_world, resumed_after_a_kill, said
from tests.copilot.rig import CopilotRig, copilot_binary, copilot_rig, openai
from tests.openai_standin.server import Busy, Call, OpenAIStandIn, Say
from tests.real_agents import first_spawn
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["copilot_binary", "copilot_rig", "openai"]

pytestmark = pytest.mark.copilot

TRUST_QUESTION = "Confirm folder trust"


def world_for(rig: CopilotRig, base: Path, **options: Any) -> World:
    """A world on the rig's tmux whose harness is the built-in copilot, its receipts and its trust
    as the container hands them (the package's registration)."""
    spec = builtin_spec("copilot", rig.binary)
    harness = registered()["copilot"]
    receipts = FileReceipts(base / "receipts", channels={"copilot": lambda folder: harness.channel(folder, 0.0)})
    trust = CopilotTrust(rig.copilot_dir / "config.json", settle_seconds=0.2)
    return real_world(rig.tmux.adapter(), spec, base, receipts=receipts, trust_port=trust, **options)


@pytest.fixture(scope="module")
def agent(
    copilot_rig: CopilotRig, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> tuple[World, WorkItemRef, Path]:
    return first_spawn(lambda base: world_for(copilot_rig, base), tmp_path_factory, openai)


def test_a_spawn_in_a_never_seen_git_worktree_is_trusted_ready_and_its_start_confirmed_by_receipt(
    copilot_rig: CopilotRig, agent: tuple[World, WorkItemRef, Path]
) -> None:
    world, ref, folder = agent
    text = (copilot_rig.copilot_dir / "config.json").read_text(encoding="utf-8")
    trusted = json.loads("\n".join(line for line in text.splitlines() if not line.startswith("//")))
    assert str(folder.resolve()) in trusted["trustedFolders"]
    assert [e["source"] for e in world.events.named(Event.SESSION_READY)] == ["new"]
    succeeded = world.events.named(Event.DISPATCH_SUCCEEDED)
    assert [(e["delivery_id"].split("-")[0], e["confirmed_by"]) for e in succeeded] == [("start", "receipt")]
    (ready,) = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.source == "new"]
    assert ready.conversation == world.record(ref).harness_session_id  # the id the-loop chose
    screen = copilot_rig.tmux.run("capture-pane", "-p", "-t", world.record(ref).pane_id, check=False)
    assert TRUST_QUESTION not in screen


def test_a_comment_to_a_ready_copilot_is_confirmed_by_its_receipt(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    wait_for(lambda: idle(world, ref), timeout=60, what="Copilot idle after its start's turn")
    a_comment_confirmed(world, ref, openai, "please add a test")


def test_a_comment_while_copilot_works_waits_for_its_turn_to_end_and_goes_in_once(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    """Typed mid-turn, Copilot would take the comment into the running turn with no receipt: the
    comment waits, not pasted, and the first cycle after the turn's end delivers it, once."""
    world, ref, _ = agent
    wait_for(lambda: idle(world, ref), timeout=60, what="Copilot idle after its earlier turns")
    openai.reset()
    # the held request then asks for a tool that needs no permission: a message typed meanwhile
    # would join the next request of this turn
    openai.script(Busy(60, then=Call("view", json.dumps({"path": "."}))), Say("first done"))
    first = world.comment(ref, "keep the model busy")
    world.cycle()
    wait_for(lambda: said(openai, "keep the model busy"), timeout=30, what="the model request held")
    second = world.comment(ref, "arrives while busy")
    world.cycle()
    assert [e for e in world.events.named(Event.DISPATCH_PASTED) if e.get("comment_id") == second.id] == []
    assert not said(openai, "arrives while busy")
    openai.release()
    wait_for(lambda: idle(world, ref), timeout=60, what="the busy turn's end")
    world.cycle()
    for comment in (first, second):
        confirmed = [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e.get("comment_id") == comment.id]
        assert [e["confirmed_by"] for e in confirmed] == ["receipt"]
    wait_for(lambda: said(openai, "arrives while busy"), timeout=30, what="the waiting comment's turn")
    prompts = [r.prompt for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.prompt]
    assert sum("arrives while busy" in prompt for prompt in prompts) == 1


def test_a_killed_copilot_is_resumed_by_the_next_comment_in_the_same_conversation(
    copilot_rig: CopilotRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id
    pid = int(copilot_rig.tmux.run("display-message", "-p", "-t", world.record(ref).pane_id, "#{pane_pid}").strip())
    copilot_rig.tmux.run("kill-session", "-t", ref.target.exact)
    wait_for(lambda: not Path(f"/proc/{pid}").exists(), timeout=20, what="Copilot gone")
    openai.reset()
    resumed_after_a_kill(world, ref, conversation, openai, earlier="Fix the widget.")
