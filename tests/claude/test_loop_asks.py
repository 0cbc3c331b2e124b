"""Permission requests answered from the item, with the real Claude Code in real tmux, offline: the-loop's
PermissionRequest hook waits for an answer beside its receipt, and the poll cycle posts the request and
gives the answer back."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.usecases.cycle.daemon import Daemon
from domain.asks import AnswerState, open_ask, open_asks
from domain.events import Event
from domain.model import Reaction
from domain.receipts import ReceiptKind
from domain.refs import WorkItemRef
from domain.webhook import Pushed
from tests.anthropic_standin.script import Say, UseTool, UseTools
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.loop import ClaudeLoop, answerable, claude_receipts, claude_spec
from tests.claude.rig import ClaudeRig
from tests.claude.test_loop_hooks import ITEM, Spawn
from tests.service.world import World
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

PERMISSION_QUESTION = "Do you want to proceed?"
DIALOG_SETTLE = 1.0
QUESTION = "Which colour should the button be?"
ASK = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Colour",
            "options": [{"label": "Red", "description": "red"}, {"label": "Blue", "description": "blue"}],
            "multiSelect": False,
        }
    ]
}
PASSWD = {"file_path": "/etc/passwd"}
ALLOW = json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}})


def asked(spawn: Spawn) -> str:
    """The key of the request the hook waits on, once its receipt is there."""
    # Claude starts, then asks: as long as `asking_world` gives it on a loaded machine
    found = wait_for(lambda: open_ask(spawn.receipts.read(ITEM, spawn.spawn)), timeout=30, what="the request's receipt")
    return str(found.key)


# --- the hook alone, the daemon's side played through FileReceipts


def test_while_the_hook_waits_the_dialog_is_on_screen_and_a_given_answer_runs_the_tool(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    anthropic.script(UseTool(), Say("tool done"))
    receipts = claude_receipts(tmp_path / "receipts", ask_wait_seconds=60)
    spawn = Spawn(claude, receipts, "--permission-mode", "default", prompt="make x")
    key = asked(spawn)
    wait_for(lambda: PERMISSION_QUESTION in claude.tmux.screen(spawn.session), what="the dialog while the hook waits")
    assert not (spawn.session.cwd / "x").exists()

    receipts.give(ITEM, spawn.spawn, key, ALLOW)

    spawn.wait(ReceiptKind.TURN_ENDED)
    assert (spawn.session.cwd / "x").exists()
    assert receipts.answer_state(ITEM, spawn.spawn, key) is AnswerState.TAKEN


def test_someone_attached_still_answers_in_the_pane_while_the_hook_waits(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    anthropic.script(UseTool(), Say("tool done"))
    receipts = claude_receipts(tmp_path / "receipts", ask_wait_seconds=60)
    spawn = Spawn(claude, receipts, "--permission-mode", "default", prompt="make x")
    key = asked(spawn)
    wait_for(lambda: PERMISSION_QUESTION in claude.tmux.screen(spawn.session), what="the dialog")
    time.sleep(DIALOG_SETTLE)

    claude.tmux.run("send-keys", "-t", spawn.session.pane, "1")

    spawn.wait(ReceiptKind.TURN_ENDED)
    assert (spawn.session.cwd / "x").exists()
    assert receipts.answer_state(ITEM, spawn.spawn, key) is AnswerState.NONE  # nothing was taken from here


def test_when_the_hooks_wait_ends_the_dialog_is_the_panes_as_before(
    claude: ClaudeRig, anthropic: AnthropicStandIn, tmp_path: Path
) -> None:
    anthropic.script(UseTool(), Say("tool done"))
    receipts = claude_receipts(tmp_path / "receipts", ask_wait_seconds=1)
    spawn = Spawn(claude, receipts, "--permission-mode", "default", prompt="make x")
    key = asked(spawn)
    wait_for(lambda: receipts.answer_state(ITEM, spawn.spawn, key) is AnswerState.EXPIRED, what="the wait's end")
    time.sleep(DIALOG_SETTLE)
    assert PERMISSION_QUESTION in claude.tmux.screen(spawn.session)

    claude.tmux.run("send-keys", "-t", spawn.session.pane, "1")

    spawn.wait(ReceiptKind.TURN_ENDED)
    assert (spawn.session.cwd / "x").exists()


# --- through the poll cycle: the request on the item, the answer from a comment


@pytest.fixture(scope="module")
def loop(claude_rig: ClaudeRig, tmp_path_factory: pytest.TempPathFactory) -> ClaudeLoop:
    return ClaudeLoop(claude_rig, tmp_path_factory.mktemp("loop"))


@pytest.fixture
def fresh(anthropic: AnthropicStandIn) -> Iterator[AnthropicStandIn]:
    anthropic.reset()
    try:
        yield anthropic
    finally:
        anthropic.release()


def asking_world(loop: ClaudeLoop, number: int) -> tuple[World, WorkItemRef]:
    """An item whose Claude, in the default mode, asks through the-loop's hook on its first turn;
    one cycle spawned it, the next posted the request."""
    world = loop.world(claude_spec(loop.rig.binary, permissionMode="default"), ask_wait_seconds=120)
    ref = world.item(number)
    world.cycle()
    wait_for(lambda: open_ask(world.watch.receipts(world.record(ref))), timeout=30, what="the request")
    world.cycle()
    return world, ref


def tool_result_text(anthropic: AnthropicStandIn) -> str:
    texts = []
    for request in anthropic.requests(Kind.TURN):
        for message in request.body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    texts.append(json.dumps(inner) if not isinstance(inner, str) else inner)
    return "\n".join(texts)


def test_a_request_is_posted_and_an_allow_comment_runs_the_tool_and_ends_the_turn(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    fresh.script(UseTool(), Say("tool done"))
    world, ref = asking_world(loop, 71)
    posted = [body for _, body in world.tracker.posted if "permission to use `Bash`" in body]
    assert len(posted) == 1 and '"command": "touch x"' in posted[0]
    answerable(world, ref)
    answer = world.comment(ref, "the-loop allow")

    world.cycle()

    loop.wait_hook(world, ref, "Stop")
    assert (Path(world.record(ref).cwd) / "x").exists()
    assert (answer.id, Reaction.CONTROL) in world.tracker.reactions
    assert len(world.events.named(Event.SESSION_ANSWERED)) == 1
    loop.end(world, ref)


def test_a_deny_comment_tells_claude_the_reason_and_it_goes_on(loop: ClaudeLoop, fresh: AnthropicStandIn) -> None:
    fresh.script(UseTool(), Say("understood, no x"))
    world, ref = asking_world(loop, 72)
    answerable(world, ref)
    world.comment(ref, "the-loop deny not in this folder")

    world.cycle()

    stop = loop.wait_hook(world, ref, "Stop")
    assert stop["last_assistant_message"] == "understood, no x"
    assert not (Path(world.record(ref).cwd) / "x").exists()
    assert "not in this folder" in tool_result_text(fresh)
    assert not any("not in this folder" in body for _, body in world.tracker.posted)
    loop.end(world, ref)


def test_a_question_is_posted_and_answered_from_a_comment(loop: ClaudeLoop, fresh: AnthropicStandIn) -> None:
    fresh.script(UseTool(name="AskUserQuestion", input=ASK), Say("blue it is"))
    world, ref = asking_world(loop, 73)
    assert "asks a question" in world.tracker.posted[-1][1]
    answerable(world, ref)
    world.comment(ref, "the-loop answer 2")

    world.cycle()

    stop = loop.wait_hook(world, ref, "Stop")
    assert stop["last_assistant_message"] == "blue it is"
    assert "Blue" in tool_result_text(fresh)
    loop.end(world, ref)


class _Lock:
    def acquire(self, info: dict[str, object]) -> None: ...
    def note(self, info: dict[str, object]) -> None: ...
    def release(self) -> None: ...


def test_an_allow_pushed_by_a_webhook_runs_the_tool_and_the_comments_turn_ends_with_its_reaction(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    fresh.script(Say("ready"), UseTool(), Say("tool done"))
    world = loop.world(claude_spec(loop.rig.binary, permissionMode="default"), ask_wait_seconds=120)
    ref = world.item(74)
    world.cycle()  # spawns; the spawn prompt's turn just says "ready"
    loop.wait_hook(world, ref, "Stop")
    work = world.comment(ref, "make x")
    world.cycle()  # delivered: its turn asks to run a tool
    daemon = Daemon(
        cycle=world.poll,
        uow=world.uow,
        lock=_Lock(),
        interval_seconds=3600,
        version="1.0.0",
        asks=world.asks.sweep,
    )
    intake = world.intake()
    intake.notify = daemon.wake
    runner = threading.Thread(target=daemon.run)
    runner.start()
    try:
        wait_for(lambda: world.events.named(Event.SESSION_ASKED), timeout=60, what="the request posted")
        answerable(world, ref)
        answer = world.comment(ref, "the-loop allow")
        intake.accept(Pushed(answer, frozenset({"loop"})))
        made = Path(world.record(ref).cwd) / "x"
        wait_for(made.exists, timeout=60, what="the tool run")
        loop.wait_hook(world, ref, "Stop", where=lambda h: h.get("last_assistant_message") == "tool done")
    finally:
        daemon.stop()
        runner.join(timeout=60)
    world.poll.stopping = lambda: False  # the stopped daemon's flag: this cycle is ours
    world.cycle()

    assert (answer.id, Reaction.CONTROL) in world.tracker.reactions
    assert (work.id, Reaction.TURN_ENDED) in world.tracker.reactions
    assert len([b for _, b in world.tracker.posted if "permission to use `Bash`" in b]) == 1
    loop.end(world, ref)


def test_two_requests_of_one_message_are_both_posted_and_the_next_comment_waits_until_both_are_answered(
    loop: ClaudeLoop, fresh: AnthropicStandIn
) -> None:
    reads = UseTools((UseTool(name="Read", input={"file_path": "/etc/hosts"}), UseTool(name="Read", input=PASSWD)))
    fresh.script(Say("ready"), reads, Say("both read"), Say("hello back"))
    world = loop.world(claude_spec(loop.rig.binary, permissionMode="default"), ask_wait_seconds=120)
    ref = world.item(75)
    world.cycle()
    loop.wait_hook(world, ref, "Stop")
    world.comment(ref, "read both files")
    world.cycle()
    wait_for(lambda: len(open_asks(world.watch.receipts(world.record(ref)))) == 2, timeout=60, what="both requests")
    world.cycle()
    posted = [body for _, body in world.tracker.posted if "permission to use `Read`" in body]
    assert ["Request 1" in posted[0], "Request 2" in posted[1]] == [True, True]
    answerable(world, ref)
    world.comment(ref, "the-loop allow 1")
    world.cycle()
    loop.wait_hook(world, ref, "PostToolUse")  # the first read ran; the second dialog waits
    held = world.comment(ref, "now say hello")

    world.cycle()

    assert not any("now say hello" in h.get("prompt", "") for h in loop.hooks(world, ref))
    assert world.ledger(ref).pending_entry(held.id) is not None
    answerable(world, ref)
    world.comment(ref, "the-loop allow 2")
    world.cycle()
    loop.wait_hook(world, ref, "Stop", where=lambda h: h.get("last_assistant_message") == "both read")
    world.cycle()
    loop.wait_hook(world, ref, "UserPromptSubmit", where=lambda h: "now say hello" in h.get("prompt", ""))
    assert world.ledger(ref).pending_entry(held.id) is None
    assert len(world.events.named(Event.SESSION_ANSWERED)) == 2
    loop.end(world, ref)
