"""opencode through the-loop's own poll cycle with the real opencode on real tmux, offline:
spawn in a never-seen git worktree -> ready -> prompt confirmed by receipt; a comment confirmed; a
comment while busy confirmed; a comment's turn end says what it cost; the session killed -> the next
comment resumes the same conversation (`--session ID`, its prompt submitted by the plugin); a harness
exiting at once fails every attempt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.opencode.plugin import receipt_channel
from adapters.receipts.files import FileReceipts
from app.config.settings import Settings
from domain.events import Event
from domain.model import HarnessSpec
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from tests.agent_tmux import AgentSession
from tests.claude.loop import (
    RunningWallClock,
    a_comment_while_busy,
    exits_at_once,
    idle,
    real_world,
    resumed_after_a_kill,
)
from tests.codex.test_poll_cycle_with_codex import events_of
from tests.openai_standin.server import OpenAIStandIn, Say
from tests.openai_standin.server import Usage as Served
from tests.opencode.rig import OpencodeRig, openai, opencode_binary, opencode_rig
from tests.real_agents import first_spawn
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["openai", "opencode_binary", "opencode_rig"]

pytestmark = pytest.mark.tmux


def opencode_spec(binary: Path, **keys: Any) -> HarnessSpec:
    """The built-in `opencode` harness as the-loop's settings make it, the pinned binary (and `keys`) laid over it."""
    entry = {"binary": str(binary), "readySeconds": 120, **keys}  # the TUI draws in 4-25 s on this shared machine
    return Settings.model_validate({"routing": {"harnesses": {"opencode": entry}}}).harness_spec("opencode")


def opencode_world(rig: OpencodeRig, base: Path, spec: HarnessSpec, **options: Any) -> World:
    """A world whose receipts reach opencode's spawns through its plugins, as the container wires them."""
    receipts = FileReceipts(base / "receipts", channels={"opencode": receipt_channel})
    return real_world(rig.tmux.adapter(), spec, base, receipts=receipts, **options)


def said(openai: OpenAIStandIn, text: str) -> bool:
    return any(text in " ".join(turn.user_texts()) for turn in openai.turns())


@pytest.fixture(scope="module")
def agent(
    opencode_rig: OpencodeRig, openai: OpenAIStandIn, tmp_path_factory: pytest.TempPathFactory
) -> tuple[World, WorkItemRef, Path]:
    # the next test's comment comes at once: before the TUI showed the session, it would start another
    return first_spawn(
        # opencode confirms a paste at once, busy or not: a paste it never took is tried again, as by the daemon
        lambda base: opencode_world(opencode_rig, base, opencode_spec(opencode_rig.binary), clock=RunningWallClock()),
        tmp_path_factory,
        openai,
    )


def test_a_spawn_in_a_never_seen_git_worktree_is_ready_and_its_prompt_confirmed_by_receipt(
    agent: tuple[World, WorkItemRef, Path],
) -> None:
    world, ref, _ = agent
    assert world.events.named(Event.SESSION_TRUSTED) == []  # no folder trust to grant: nothing blocks a new folder
    assert [e["source"] for e in world.events.named(Event.SESSION_READY)] == ["startup"]
    succeeded = world.events.named(Event.DISPATCH_SUCCEEDED)
    assert [(e["delivery_id"].split("-")[0], e["confirmed_by"]) for e in succeeded] == [("start", "receipt")]
    # opencode's own session id, from the plugin's ready receipt, is recorded
    (ready,) = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.kind is ReceiptKind.READY]
    assert world.record(ref).harness_session_id == ready.conversation
    assert ready.conversation.startswith("ses_")


def test_a_comment_to_a_ready_opencode_is_confirmed_by_its_receipt(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    comment_id = world.comment(ref, "please add a test").id
    world.cycle()
    (succeeded,) = events_of(world, Event.DISPATCH_SUCCEEDED, comment_id)
    prompts = [r for r in world.receipts.read(ref, world.record(ref).spawn_id) if r.kind is ReceiptKind.PROMPT]
    assert succeeded["confirmed_by"] == "receipt" and "please add a test" in prompts[-1].prompt
    assert prompts[-1].conversation == world.record(ref).harness_session_id  # the recorded conversation
    wait_for(lambda: said(openai, "please add a test"), timeout=60, what="the turn")


def test_a_comment_while_opencode_is_busy_is_confirmed_and_reaches_the_model(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    a_comment_while_busy(agent[0], agent[1], openai)  # the TUI queues it with the server


def test_a_comments_turn_end_says_what_it_cost_as_opencodes_store_says_it(
    agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    wait_for(lambda: idle(world, ref), timeout=60, what="opencode idle after its earlier turns")
    openai.reset(fallback=Say("test added", usage=Served(input=40, output=9, cached=30, reasoning=2)))
    comment = world.comment(ref, "please add one more test")
    world.cycle()
    wait_for(lambda: idle(world, ref), timeout=60, what="the comment's turn")

    world.cycle()

    (finished,) = events_of(world, Event.SESSION_TURN_FINISHED, comment.id)
    cost = {k: finished.get(k) for k in ("tokens_in", "tokens_out", "cache_write", "cache_read", "model")}
    assert cost == {"tokens_in": 10, "tokens_out": 9, "cache_write": 0, "cache_read": 30, "model": "standin-model"}, (
        str(finished)
    )


def test_a_killed_opencode_is_resumed_by_the_next_comment_in_the_same_conversation(
    opencode_rig: OpencodeRig, agent: tuple[World, WorkItemRef, Path], openai: OpenAIStandIn
) -> None:
    world, ref, _ = agent
    conversation = world.record(ref).harness_session_id
    record = world.record(ref)
    opencode_rig.kill(AgentSession(record.target, record.pane_id, Path(record.cwd), Path(record.cwd), ""))
    openai.reset()
    # the plugin submitted the prompt the TUI drops on a resume
    resumed_after_a_kill(world, ref, conversation, openai, earlier="Fix the widget.")


def test_an_opencode_that_exits_at_once_fails_every_attempt_posts_one_notice_and_never_celebrates(
    opencode_rig: OpencodeRig, tmp_path: Path
) -> None:
    spec = opencode_spec(opencode_rig.binary, args=["--no-such-flag"], readySeconds=30)
    exits_at_once(opencode_world(opencode_rig, tmp_path, spec), 30)
