"""Delivery through the-loop with the real Claude Code on real tmux, when things die: Claude's session
killed (resumed), a conversation that cannot be resumed (a fresh one), the-loop itself SIGKILLed
mid-delivery (recovered from the receipts). A module of its own: a SIGKILLed Claude marks its HOME."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Reaction
from domain.refs import WorkItemRef
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude_binary, claude_config, claude_rig
from tests.claude.loop import ClaudeLoop
from tests.claude.loop_cli import LoopCli
from tests.claude.rig import ClaudeRig
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude


@pytest.fixture(scope="module")
def loop(claude_rig: ClaudeRig, tmp_path_factory: pytest.TempPathFactory) -> ClaudeLoop:
    return ClaudeLoop(claude_rig, tmp_path_factory.mktemp("loop"))


def comment_events(world: World, name: Event, comment_id: str) -> list[dict[str, object]]:
    return [e for e in world.events.named(name) if e.get("comment_id") == comment_id]


def transcript_of(loop: ClaudeLoop, world: World, ref: WorkItemRef) -> Path:
    return Path(loop.wait_hook(world, ref, "SessionStart")["transcript_path"])


def replied(path: Path) -> bool:
    """The transcript --resume reads holds the reply (Claude writes it after the hooks)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return any(json.loads(line).get("type") == "assistant" for line in lines if line.endswith("}"))


def started(loop: ClaudeLoop, number: int) -> tuple[World, WorkItemRef, Path]:
    """An item whose Claude was spawned by a cycle, its first turn over and in its transcript."""
    world = loop.world()
    ref = world.item(number)
    world.cycle()
    loop.wait_hook(world, ref, "Stop")
    transcript = transcript_of(loop, world, ref)
    wait_for(lambda: replied(transcript), what="the reply in the transcript")
    return world, ref, transcript


def asked_with(anthropic: AnthropicStandIn, text: str) -> str:
    """The user texts of the first model request carrying `text`, joined; "" when none did."""
    texts = [" ".join(r.user_texts()) for r in anthropic.requests(Kind.TURN)]
    return next((t for t in texts if text in t), "")


@pytest.mark.parametrize("how", ["tmux kill-session", "SIGKILL"])
def test_a_killed_session_is_resumed_by_the_next_comment_in_the_same_conversation_confirmed(
    loop: ClaudeLoop, anthropic: AnthropicStandIn, how: str
) -> None:
    anthropic.reset()
    world, ref, _ = started(loop, 10 if how == "SIGKILL" else 11)
    conversation = world.record(ref).harness_session_id
    loop.crash(world, ref) if how == "SIGKILL" else loop.end(world, ref)
    comment = world.comment(ref, f"carry on after {how}")

    world.cycle()

    assert comment_events(world, Event.DISPATCH_SUCCEEDED, comment.id)[0]["confirmed_by"] == "receipt"
    assert len(comment_events(world, Event.DISPATCH_QUEUED, comment.id)) == 1
    assert world.events.named(Event.SESSION_RESPAWNED)[0]["resumed"] is True
    assert world.record(ref).harness_session_id == conversation
    starts = [h for h in loop.hooks(world, ref) if h["hook_event_name"] == "SessionStart"]
    assert [(h["source"], h["session_id"]) for h in starts] == [("resume", conversation)]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    assert (comment.id, Reaction.SUCCEEDED) in world.tracker.reactions
    asked = wait_for(lambda: asked_with(anthropic, f"carry on after {how}"), what="the comment at the model")
    assert "You are the agent for" in asked  # the same conversation: the spawn prompt came before it
    loop.end(world, ref)


def test_a_resume_of_a_conversation_never_written_falls_back_to_a_fresh_one_in_the_same_attempt_confirmed(
    loop: ClaudeLoop, anthropic: AnthropicStandIn
) -> None:
    anthropic.reset()
    world, ref, transcript = started(loop, 12)
    conversation = world.record(ref).harness_session_id
    loop.end(world, ref)
    transcript.unlink()  # as if Claude died before it wrote its conversation
    comment = world.comment(ref, "carry on, afresh")

    world.cycle()

    failed = world.events.named(Event.SESSION_RESUME_FAILED)
    assert [e["old_session_id"] for e in failed] == [conversation]
    fresh = world.record(ref).harness_session_id
    assert fresh == failed[0]["new_session_id"] != conversation
    assert len(comment_events(world, Event.DISPATCH_QUEUED, comment.id)) == 1  # one attempt
    assert comment_events(world, Event.DISPATCH_SUCCEEDED, comment.id)[0]["confirmed_by"] == "receipt"
    starts = [h for h in loop.hooks(world, ref) if h["hook_event_name"] == "SessionStart"]
    assert [(h["source"], h["session_id"]) for h in starts] == [("startup", fresh)]
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    loop.end(world, ref)


def test_the_loop_sigkilled_after_a_paste_claude_received_resolves_it_delivered_on_restart_without_pasting_again(
    claude_rig: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    anthropic.reset()
    cli = LoopCli(claude_rig, tmp_path)
    ref = cli.item()
    first = cli.poll_once()  # spawns Claude with the item's prompt; confirmed
    assert first.returncode == 0, first.stderr
    comment = cli.comment(ref, "delivered exactly once")
    line = f"Delivery: poll-comment-{comment.id} "

    crashed = cli.poll_once(crash_after_paste_of=line)

    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    store = cli.store()
    ledger = store.ledger(ref)
    assert ledger is not None and ledger.attempts(comment.id) == 1 and comment.id not in ledger.resolved
    assert cli.prompts_holding(line) == 1  # Claude has it; the-loop never recorded it

    restarted = cli.poll_once()

    assert restarted.returncode == 0, restarted.stderr
    ledger = store.ledger(ref)
    assert ledger is not None and ledger.resolved[comment.id].kind is Resolution.DELIVERED
    confirmed = [e for e in cli.events() if e["event"] == "dispatch.confirmed" and e.get("comment_id") == comment.id]
    assert [e["confirmed_by"] for e in confirmed] == ["receipt-on-retry"]
    assert cli.pastes == 1
    assert cli.prompts_holding(line) == 1
    store.close()
    claude_rig.tmux.run("kill-session", "-t", ref.target.exact, check=False)
