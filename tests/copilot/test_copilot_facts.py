"""What the-loop would rely on in GitHub Copilot CLI, pinned against the real binary in real tmux,
offline: its custom model provider (BYOK) answered by tests/openai_standin's Chat Completions, its
hooks handed in a plugin folder per spawn (`--plugin-dir`), nothing of the user's configuration
written but the folder's trust."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from adapters.agents.pins import PINNED_COPILOT
from domain.receipts import ReceiptKind
from tests.copilot.rig import CopilotRig, copilot, copilot_binary, copilot_env, copilot_rig, openai
from tests.openai_standin.server import Busy, Call, OpenAIStandIn, Say
from tests.tmux_support import wait_for

__all__ = ["copilot", "copilot_binary", "copilot_rig", "openai"]

pytestmark = pytest.mark.copilot

TRUST_QUESTION = "Do you trust the files in this folder?"
PERMISSION_QUESTION = "Do you want to run this command?"


def asked(openai: OpenAIStandIn, text: str) -> bool:
    """Whether a model request carried `text` as a user message (Copilot puts the date before it)."""
    return any(said.endswith(text) for turn in openai.turns() for said in turn.user_texts())


def test_the_installed_binary_is_the_pinned_version(copilot_binary: Path, tmp_path: Path) -> None:
    env = copilot_env(tmp_path, "http://127.0.0.1:9/v1")
    done = subprocess.run(
        [str(copilot_binary), "--version"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.splitlines()[0] == f"GitHub Copilot CLI {PINNED_COPILOT}."


def test_a_never_seen_git_folder_asks_confirm_folder_trust_before_any_hook_or_model_request(
    copilot: CopilotRig, openai: OpenAIStandIn
) -> None:
    session, _ = copilot.fresh(copilot.git_folder(), "the spawn prompt")
    wait_for(lambda: TRUST_QUESTION in copilot.screen(session), timeout=90, what="the trust dialog")
    assert "Yes, and remember this folder for future sessions" in copilot.screen(session)
    assert copilot.hook_inputs(session) == []  # SessionStart comes after the dialog, and so does the prompt
    assert openai.turns() == []


def test_a_trusted_folder_and_the_plugin_say_ready_prompt_and_turn_end_under_the_chosen_id(
    copilot: CopilotRig, openai: OpenAIStandIn
) -> None:
    openai.script(Say("Hello from the stand-in"))
    folder = copilot.git_folder()
    copilot.trust(folder)
    session, conversation = copilot.fresh(folder, "the spawn prompt")
    (ready,) = copilot.wait(session, ReceiptKind.READY, timeout=90)
    assert (ready.conversation, ready.source) == (conversation, "new")  # not Claude Code's "startup"
    (prompt,) = copilot.wait(session, ReceiptKind.PROMPT)
    assert (prompt.conversation, prompt.prompt) == (conversation, "the spawn prompt")
    (ended,) = copilot.wait(session, ReceiptKind.TURN_ENDED)
    assert ended.conversation == conversation
    assert asked(openai, "the spawn prompt")
    assert TRUST_QUESTION not in copilot.screen(session)


def test_a_paste_is_submitted_and_user_prompt_submit_carries_its_text(copilot: CopilotRig) -> None:
    folder = copilot.git_folder()
    copilot.trust(folder)
    session, conversation = copilot.fresh(folder, "the spawn prompt")
    copilot.wait(session, ReceiptKind.TURN_ENDED, timeout=90)
    copilot.paste(session, "a comment from the item")
    prompts = copilot.wait(session, ReceiptKind.PROMPT, count=2)
    assert (prompts[1].conversation, prompts[1].prompt) == (conversation, "a comment from the item")
    copilot.wait(session, ReceiptKind.TURN_ENDED, count=2)


def test_resume_by_the_chosen_id_continues_the_conversation_after_its_session_was_killed(
    copilot: CopilotRig, openai: OpenAIStandIn
) -> None:
    folder = copilot.git_folder()
    copilot.trust(folder)
    first, conversation = copilot.fresh(folder, "remember the word heron")
    copilot.wait(first, ReceiptKind.TURN_ENDED, timeout=90)
    copilot.kill(first)
    openai.reset()
    second = copilot.spawn(folder, "--resume", conversation, "-i", prompt="which word?")
    (resumed,) = copilot.wait(second, ReceiptKind.READY, timeout=90)
    assert (resumed.conversation, resumed.source) == (conversation, "resume")
    (prompt,) = copilot.wait(second, ReceiptKind.PROMPT)
    assert prompt.prompt == "which word?"
    copilot.wait(second, ReceiptKind.TURN_ENDED)
    assert asked(openai, "remember the word heron") and asked(openai, "which word?")


def test_a_resume_of_an_unknown_id_exits_and_says_nothing(copilot: CopilotRig) -> None:
    folder = copilot.git_folder()
    copilot.trust(folder)
    session = copilot.spawn(folder, "--resume", "00000000-0000-4000-8000-000000000000", "-i", prompt="hello")
    wait_for(
        lambda: (
            copilot.tmux.run("display-message", "-p", "-t", session.pane, "#{pane_dead}", check=False).strip() == "1"
        ),
        timeout=90,
        what=f"Copilot to exit; screen:\n{copilot.screen(session)}",
    )
    assert copilot.receipts(session) == []


def test_a_permission_dialog_is_a_tool_receipt_then_a_permission_prompt_notification(
    copilot: CopilotRig, openai: OpenAIStandIn
) -> None:
    openai.script(Call("bash", json.dumps({"command": "touch made-by-tool", "description": "touch"})), Say("done"))
    folder = copilot.git_folder()
    copilot.trust(folder)
    session, conversation = copilot.fresh(folder, "run a tool")
    (tool,) = copilot.wait(session, ReceiptKind.TOOL, timeout=90)
    assert tool.conversation == conversation
    (blocked,) = copilot.wait(session, ReceiptKind.BLOCKED)
    assert blocked.detail == "Run command: touch made-by-tool"
    assert blocked.conversation == ""  # this notification names its session `sessionId`, not `session_id`
    wait_for(lambda: PERMISSION_QUESTION in copilot.screen(session), timeout=30, what="the permission dialog")
    given = copilot.hook_inputs(session)
    (before,) = [hook for hook in given if hook.get("hook_event_name") == "PreToolUse"]
    assert (before["tool_name"], before["tool_input"]["command"]) == ("Bash", "touch made-by-tool")  # Claude's names
    # its PermissionRequest hook gets Copilot's own camelCase fields, with no hook_event_name: not a receipt
    (request,) = [hook for hook in given if hook.get("hookName") == "permissionRequest"]
    assert (request["sessionId"], request["toolName"], "hook_event_name" in request) == (conversation, "bash", False)


def test_a_paste_while_a_turn_runs_is_taken_into_that_turn_without_a_prompt_hook(
    copilot: CopilotRig, openai: OpenAIStandIn
) -> None:
    """Copilot steers its running turn with a message typed meanwhile: the model gets it in that
    turn's next request (after a tool), and no UserPromptSubmit says so. (Typed during a turn's last
    request, it waits and comes as its own prompt, with the hook.) Such a paste cannot be confirmed,
    so the-loop pastes into a Copilot only when it is ready or idle (its profile's PASTE_WHILE_BUSY)."""
    # the first request held, then a tool needing no permission (reading the folder), then text
    openai.script(Busy(60, then=Call("view", json.dumps({"path": "."}))), Say("done"))
    folder = copilot.git_folder()
    copilot.trust(folder)
    session, _ = copilot.fresh(folder, "the spawn prompt")
    copilot.wait(session, ReceiptKind.PROMPT, timeout=90)
    wait_for(lambda: len(openai.turns()) >= 1, timeout=60, what="the first model request")
    copilot.paste(session, "typed while it works")
    wait_for(lambda: "typed while it works" in copilot.screen(session), timeout=30, what="the paste on screen")
    openai.release()
    wait_for(lambda: asked(openai, "typed while it works"), timeout=60, what="the typed message to reach the model")
    copilot.wait(session, ReceiptKind.TURN_ENDED, timeout=60)
    # the request after the tool carries it, in the same turn: one prompt hook, one turn's end
    assert openai.turns()[1].user_texts()[-1] == "typed while it works"
    said = [hook.get("hook_event_name") for hook in copilot.hook_inputs(session)]
    assert (said.count("UserPromptSubmit"), said.count("Stop")) == (1, 1), said
