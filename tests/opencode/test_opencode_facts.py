"""What the-loop relies on in opencode, pinned against the real binary in real tmux, offline (its
OpenAI-compatible provider answered by tests/openai_standin over Chat Completions)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from adapters.agents.pins import PINNED_OPENCODE
from app.config.settings import Settings
from domain.receipts import HarnessState, ReceiptKind, harness_state
from tests.agent_tmux import AgentSession
from tests.openai_standin.server import Busy, Call, Fail, OpenAIStandIn, Say
from tests.opencode.rig import (
    OpencodeRig,
    openai,
    opencode,
    opencode_binary,
    opencode_env,
    opencode_fresh,
    opencode_rig,
)
from tests.tmux_support import wait_for

__all__ = ["openai", "opencode", "opencode_binary", "opencode_fresh", "opencode_rig"]

ARGV_PROMPT = "the spawn prompt, on the argv"
START_SECONDS = 120.0  # the TUI draws in 4-25 s on this shared machine
QUIET_SECONDS = 8.0


def said(openai: OpenAIStandIn, text: str) -> bool:
    return any(text in " ".join(turn.user_texts()) for turn in openai.turns())


def started(opencode: OpencodeRig, prompt: str = ARGV_PROMPT) -> tuple[AgentSession, str]:
    """A fresh TUI in a never-seen git folder, its first turn over; its conversation id."""
    session = opencode.spawn(opencode.git_folder(), "--prompt", prompt=prompt)
    (ready,) = opencode.wait(session, ReceiptKind.READY, timeout=START_SECONDS)
    opencode.wait(session, ReceiptKind.TURN_ENDED, timeout=START_SECONDS)
    return session, ready.conversation


def test_the_installed_binary_is_the_pinned_version(opencode_binary: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(opencode_binary), "--version"],
        env=opencode_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.split() == [PINNED_OPENCODE]


def test_a_never_seen_git_folder_blocks_nothing_and_the_plugin_says_ready_prompt_and_turn_end(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    openai.script(Say("title"), Say("Hello from the stand-in"))
    session = opencode.spawn(opencode.git_folder(), "--prompt", prompt=ARGV_PROMPT)
    (ready,) = opencode.wait(session, ReceiptKind.READY, timeout=START_SECONDS)
    assert ready.source == "startup" and ready.conversation.startswith("ses_")  # opencode's own id
    (prompt,) = opencode.wait(session, ReceiptKind.PROMPT)
    assert prompt.prompt == ARGV_PROMPT and prompt.conversation == ready.conversation
    (ended,) = opencode.wait(session, ReceiptKind.TURN_ENDED, timeout=START_SECONDS)
    assert ended.conversation == ready.conversation
    assert said(openai, ARGV_PROMPT)
    # the plugin came in the environment: nothing was written to the user's configuration
    assert "the-loop" not in (opencode.config_dir / "opencode.json").read_text(encoding="utf-8")


def test_a_paste_is_submitted_and_chat_message_carries_its_text(opencode: OpencodeRig, openai: OpenAIStandIn) -> None:
    session, conversation = started(opencode)
    opencode.paste(session, "a pasted comment\nDelivery: x (receipt y)")
    prompts = opencode.wait(session, ReceiptKind.PROMPT, count=2)
    assert prompts[1].prompt == "a pasted comment\nDelivery: x (receipt y)"
    assert prompts[1].conversation == conversation
    wait_for(lambda: said(openai, "a pasted comment"), timeout=60, what="the pasted turn")


def test_a_paste_while_busy_is_received_at_once_and_answered_after_the_turn(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, _ = started(opencode)
    openai.script(Busy(120, then=Say("first done")))
    opencode.paste(session, "keep the model busy")
    wait_for(lambda: said(openai, "keep the model busy"), timeout=60, what="the held turn")
    opencode.paste(session, "arrives while busy")
    prompts = opencode.wait(session, ReceiptKind.PROMPT, count=3)  # the TUI queues it with the server
    assert prompts[2].prompt == "arrives while busy"
    assert not said(openai, "arrives while busy")
    openai.release()
    wait_for(lambda: said(openai, "arrives while busy"), timeout=60, what="the queued prompt reaching the model")
    # one idle ends both: the plugin writes a turn end for each prompt taken
    opencode.wait(session, ReceiptKind.TURN_ENDED, count=3, timeout=60)


def test_the_tui_drops_the_prompt_of_a_resume_by_itself(opencode: OpencodeRig, openai: OpenAIStandIn) -> None:
    session, conversation = started(opencode)
    opencode.kill(session)
    resumed = opencode.spawn(session.cwd, "--session", conversation, "--prompt", prompt="dropped", hooks=False)
    wait_for(lambda: ARGV_PROMPT in opencode.screen(resumed), timeout=START_SECONDS, what="the resumed session")
    time.sleep(QUIET_SECONDS)
    assert not said(openai, "dropped") and "dropped" not in opencode.screen(resumed)


def test_with_the_plugin_a_resume_says_ready_in_the_same_conversation_and_submits_the_prompt(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, conversation = started(opencode)
    opencode.kill(session)
    openai.reset()
    resumed = opencode.spawn(session.cwd, "--session", conversation, "--prompt", prompt="carry on")
    (ready,) = opencode.wait(resumed, ReceiptKind.READY, timeout=START_SECONDS)
    assert (ready.source, ready.conversation) == ("resume", conversation)
    (prompt,) = opencode.wait(resumed, ReceiptKind.PROMPT)
    assert (prompt.prompt, prompt.conversation) == ("carry on", conversation)
    wait_for(lambda: said(openai, "carry on"), timeout=60, what="the resumed turn")
    turn = next(t for t in openai.turns() if "carry on" in t.user_texts())
    assert ARGV_PROMPT in turn.user_texts()  # the conversation so far came along


def test_a_resume_of_an_unknown_id_exits_and_says_nothing(opencode: OpencodeRig) -> None:
    session = opencode.spawn(opencode.git_folder(), "--session", "ses_unknown", "--prompt", prompt="lost")
    wait_for(
        lambda: (
            opencode.tmux.run("display-message", "-p", "-t", session.pane, "#{pane_dead}", check=False).strip() == "1"
        ),
        timeout=START_SECONDS,
        what="opencode to exit",
    )
    assert opencode.receipts(session) == []


def test_a_failed_model_request_is_a_turn_failed_receipt(opencode: OpencodeRig, openai: OpenAIStandIn) -> None:
    session, _ = started(opencode)
    openai.script(Fail(400, "scripted failure"))
    opencode.paste(session, "this one fails")
    (failed,) = opencode.wait(session, ReceiptKind.TURN_FAILED, timeout=60)
    assert failed.detail == "unknown" and "scripted failure" in failed.message


def test_a_permission_dialog_is_a_blocked_receipt_and_its_answer_ends_the_block(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, _ = started(opencode)
    openai.script(Call("bash", '{"command": "echo hi", "description": "Says hi"}'))
    opencode.paste(session, "run a command")
    (blocked,) = opencode.wait(session, ReceiptKind.BLOCKED, timeout=60)
    assert blocked.detail == "bash" and blocked.tool == ""  # not asked on the item: answered in the pane
    assert harness_state(opencode.receipts(session)) is HarnessState.BLOCKED
    wait_for(lambda: "echo hi" in opencode.screen(session), timeout=30, what="the permission dialog")
    opencode.tmux.run("send-keys", "-t", session.pane, "Enter")  # its first choice: allow once
    opencode.wait(session, ReceiptKind.WORKING, timeout=60)
    opencode.wait(session, ReceiptKind.TURN_ENDED, count=2, timeout=60)
    assert harness_state(opencode.receipts(session)) is HarnessState.IDLE


def test_a_paste_at_once_on_the_ready_receipt_reaches_the_started_session(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    # the TUI submits --prompt from its home screen: a paste there before it shows the session
    # starts a second session; the plugin holds the ready receipt until the TUI plugin says it
    # shows it (the prompt's receipt comes at once: until ready, the-loop counts it as starting)
    session = opencode.spawn(opencode.git_folder(), "--prompt", prompt=ARGV_PROMPT)
    opencode.wait(session, ReceiptKind.READY, timeout=START_SECONDS)
    (first,) = opencode.wait(session, ReceiptKind.PROMPT)
    opencode.paste(session, "pasted at once")
    prompts = opencode.wait(session, ReceiptKind.PROMPT, count=2)
    assert prompts[1].prompt == "pasted at once" and prompts[1].conversation == first.conversation
    time.sleep(QUIET_SECONDS)
    assert [r.conversation for r in opencode.receipts(session) if r.kind is ReceiptKind.READY] == [first.conversation]


def test_on_a_fresh_home_offline_the_plugin_says_ready_within_the_wait_of_the_loop(
    opencode_fresh: OpencodeRig, openai: OpenAIStandIn
) -> None:
    # naming a plugin makes opencode wait for its npm install of @opencode-ai/plugin into the
    # configuration folder, which a fresh home lacks; offline its retries took ~70 s before it went on
    openai.script(Say("title"), Say("Hello from the stand-in"))
    wait = Settings.model_validate({}).harness_spec("opencode").start_seconds  # then the spawn is failed
    session = opencode_fresh.spawn(opencode_fresh.git_folder(), "--prompt", prompt=ARGV_PROMPT)
    (ready,) = opencode_fresh.wait(session, ReceiptKind.READY, timeout=wait)
    (prompt,) = opencode_fresh.wait(session, ReceiptKind.PROMPT)
    assert prompt.prompt == ARGV_PROMPT and prompt.conversation == ready.conversation
    assert not (opencode_fresh.config_dir / "node_modules").exists()  # nothing was installed offline
