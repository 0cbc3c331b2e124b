"""Delivery through the-loop's own poll cycle with the real Claude Code on real tmux, offline: each
test names the criterion it proves. One HOME and one tmux server for the module (tests/claude/rig.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.events import Event
from domain.ledger import Resolution
from domain.model import Reaction
from domain.refs import WorkItemRef
from tests.anthropic_standin.script import Busy, Say, UseTool
from tests.anthropic_standin.script import Usage as Served
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude_binary, claude_config, claude_rig
from tests.claude.loop import ClaudeLoop, claude_spec, exits_at_once, idle
from tests.claude.rig import ClaudeRig
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

PERMISSION_QUESTION = "Do you want to proceed?"
TRUST_QUESTION = "Is this a project you created or one you trust?"
NOTIFICATION_LAG = 20.0  # Claude's permission_prompt notification comes ~6 s after the dialog


@pytest.fixture(scope="module")
def loop(claude_rig: ClaudeRig, tmp_path_factory: pytest.TempPathFactory) -> ClaudeLoop:
    return ClaudeLoop(claude_rig, tmp_path_factory.mktemp("loop"))


@pytest.fixture
def fresh(anthropic: AnthropicStandIn) -> Iterator[AnthropicStandIn]:
    """A fresh stand-in script; whatever it held is let go at the end."""
    anthropic.reset()
    try:
        yield anthropic
    finally:
        anthropic.release()


def comment_events(world: World, name: Event, comment_id: str) -> list[dict[str, object]]:
    return [e for e in world.events.named(name) if e.get("comment_id") == comment_id]


def asked_with(anthropic: AnthropicStandIn, text: str) -> str:
    """The user texts of the first model request carrying `text`, joined; "" when none did."""
    texts = [" ".join(r.user_texts()) for r in anthropic.requests(Kind.TURN)]
    return next((t for t in texts if text in t), "")


@pytest.fixture(scope="module")
def agent(loop: ClaudeLoop, anthropic: AnthropicStandIn) -> tuple[World, WorkItemRef]:
    """An item armed on first sight, its Claude spawned by one cycle in a folder never trusted;
    the tests after the first go on in the same session."""
    anthropic.reset()
    world = loop.world()
    ref = world.item(1)
    assert str(loop.workdirs / ref.slug) not in loop.rig.home.config()["projects"]
    world.cycle()
    return world, ref


def test_a_spawn_in_a_folder_never_trusted_records_trust_and_claude_confirms_the_spawn_prompt(
    loop: ClaudeLoop, agent: tuple[World, WorkItemRef]
) -> None:
    world, ref = agent
    folder = str(loop.workdirs / ref.slug)
    assert loop.rig.home.config()["projects"][folder]["hasTrustDialogAccepted"] is True
    assert [e["directory"] for e in world.events.named(Event.SESSION_TRUSTED)] == [folder]
    assert [e["source"] for e in world.events.named(Event.SESSION_READY)] == ["startup"]
    # the module's other tests share this session and may run before this one (workers take tests
    # from each other): only the start's own delivery and prompt are read
    succeeded = [e for e in world.events.named(Event.DISPATCH_SUCCEEDED) if e["delivery_id"].startswith("start-")]
    assert [e["confirmed_by"] for e in succeeded] == ["receipt"]
    prompts = [h["prompt"] for h in loop.hooks(world, ref) if h["hook_event_name"] == "UserPromptSubmit"]
    assert [p for p in prompts if "You are the agent for" in p] == prompts[:1] and f"for {ref}" in prompts[0]
    assert TRUST_QUESTION not in loop.screen(world, ref)


def test_a_first_comment_spawns_claude_in_a_new_folder_and_is_celebrated_once_confirmed(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    world = loop.world()
    ref = world.item(2, author="bob")  # not authorized: no session on first sight
    world.cycle()
    comment = world.comment(ref, "start with this")

    world.cycle()

    assert [e["directory"] for e in world.events.named(Event.SESSION_TRUSTED)] == [str(loop.workdirs / ref.slug)]
    assert comment_events(world, Event.DISPATCH_SUCCEEDED, comment.id)[0]["confirmed_by"] == "receipt"
    assert [r for c, r in world.tracker.reactions if c == comment.id] == [Reaction.STARTED, Reaction.SUCCEEDED]
    loop.end(world, ref)


def test_a_comment_to_a_ready_claude_is_confirmed_and_its_turn_end_is_said_with_what_it_cost(
    loop: ClaudeLoop, agent: tuple[World, WorkItemRef], fresh: AnthropicStandIn
) -> None:
    world, ref = agent
    # a ready Claude: its start's turn ended (a paste during it is queued, and Claude submits a
    # queued prompt again under a new prompt id when its turn comes: another test's case)
    wait_for(lambda: idle(world, ref), timeout=60, what="Claude idle after its start's turn")
    fresh.script(Say("test added", usage=Served(input=9, output=8, cache_write=7, cache_read=6)))
    comment = world.comment(ref, "please add a test")

    world.cycle()

    assert comment_events(world, Event.DISPATCH_SUCCEEDED, comment.id)[0]["confirmed_by"] == "receipt"
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    submitted = [h for h in loop.hooks(world, ref) if "please add a test" in h.get("prompt", "")]
    assert [h["hook_event_name"] for h in submitted] == ["UserPromptSubmit"]
    loop.wait_hook(world, ref, "Stop", where=lambda h: h["prompt_id"] == submitted[0]["prompt_id"])
    world.cycle()
    (finished,) = comment_events(world, Event.SESSION_TURN_FINISHED, comment.id)
    cost = {k: finished.get(k) for k in ("tokens_in", "tokens_out", "cache_write", "cache_read", "model")}
    assert cost == {"tokens_in": 9, "tokens_out": 8, "cache_write": 7, "cache_read": 6, "model": "claude-standin"}, str(
        finished
    )
    assert [r for c, r in world.tracker.reactions if c == comment.id] == [
        Reaction.STARTED,
        Reaction.SUCCEEDED,
        Reaction.TURN_ENDED,
    ]


def test_a_comment_while_claude_is_busy_is_confirmed_as_it_queues(
    loop: ClaudeLoop, agent: tuple[World, WorkItemRef], fresh: AnthropicStandIn
) -> None:
    world, ref = agent
    fresh.script(Busy(60, then=Say("first done")))
    first = world.comment(ref, "keep the model busy")
    world.cycle()
    wait_for(lambda: len(fresh.requests(Kind.TURN)) == 1, what="the model request held")
    second = world.comment(ref, "arrives while busy")

    world.cycle()

    assert comment_events(world, Event.DISPATCH_SUCCEEDED, second.id)[0]["confirmed_by"] == "receipt"
    assert world.ledger(ref).resolved[second.id].kind is Resolution.DELIVERED
    assert len(fresh.requests(Kind.TURN)) == 1  # still held: Claude was busy all along
    wait_for(lambda: "Queued" in loop.screen(world, ref), timeout=5, what="Queued on screen")
    assert comment_events(world, Event.DISPATCH_SUCCEEDED, first.id)
    fresh.release()
    wait_for(lambda: asked_with(fresh, "arrives while busy"), what="the queued comment's own turn")


@pytest.mark.parametrize(
    ("binary", "args", "number"),
    [("false", [], 30), ("", ["--no-such-flag"], 31)],
    ids=["binary-false", "claude-with-a-bad-flag"],
)
def test_a_harness_that_exits_at_once_fails_every_attempt_posts_one_notice_and_never_celebrates(
    loop: ClaudeLoop, fresh: AnthropicStandIn, binary: str, args: list[str], number: int
) -> None:
    world = loop.world(claude_spec(binary or loop.rig.binary, args=args))
    comment = exits_at_once(world, number)
    assert len(comment_events(world, Event.DISPATCH_UNCONFIRMED, comment)) == 3


def test_claude_waiting_on_a_permission_dialog_gets_no_paste_and_one_notice_then_the_comment_after_the_answer(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    fresh.script(UseTool(), Say("tool done"))
    world = loop.world(claude_spec(loop.rig.binary, args=["--permission-mode", "default"]))
    ref = world.item(40)
    world.cycle()  # spawns; the spawn prompt's turn asks to run a tool
    wait_for(lambda: PERMISSION_QUESTION in loop.screen(world, ref), timeout=30, what="the dialog on screen")
    comment = world.comment(ref, "a comment while the dialog waits")

    world.cycle()

    assert comment_events(world, Event.DISPATCH_QUEUED, comment.id) == []  # never an attempt, never a paste
    assert len(world.events.named(Event.SESSION_BLOCKED)) == 1
    assert len(world.tracker.posted) == 1 and "waiting for an answer" in world.tracker.posted[0][1]
    loop.wait_hook(world, ref, "Notification", timeout=NOTIFICATION_LAG)  # the same dialog, said again
    world.cycle()
    assert comment_events(world, Event.DISPATCH_QUEUED, comment.id) == []
    assert len(world.tracker.posted) == 1
    assert PERMISSION_QUESTION in loop.screen(world, ref)  # nothing answered the dialog
    assert not (Path(world.record(ref).cwd) / "x").exists()

    loop.rig.tmux.run("send-keys", "-t", world.record(ref).pane_id, "1")  # the operator answers: Yes
    loop.wait_hook(world, ref, "PostToolUse")
    world.cycle()

    assert comment_events(world, Event.DISPATCH_SUCCEEDED, comment.id)[0]["confirmed_by"] == "receipt"
    assert world.ledger(ref).resolved[comment.id].kind is Resolution.DELIVERED
    prompts = [h["prompt"] for h in loop.hooks(world, ref) if h["hook_event_name"] == "UserPromptSubmit"]
    assert sum("a comment while the dialog waits" in p for p in prompts) == 1
    assert (Path(world.record(ref).cwd) / "x").exists()
    assert (comment.id, Reaction.SUCCEEDED) in world.tracker.reactions
    loop.end(world, ref)
