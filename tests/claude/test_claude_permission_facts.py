"""What the-loop relies on in Claude Code's PermissionRequest hook and its permission
modes, pinned against the real binary in real tmux, offline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.claude.profile import AUTO_MODE_CHECK_DIALOG
from tests.anthropic_standin.script import Say, UseTool, UseTools
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.home import ClaudeHome, claude_env
from tests.claude.rig import ClaudeRig

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

QUESTION = "Which colour should the button be?"
ASK = {
    "questions": [
        {
            "question": QUESTION,
            "header": "Colour",
            "options": [
                {"label": "Red", "description": "a red button"},
                {"label": "Blue", "description": "a blue button"},
            ],
            "multiSelect": False,
        }
    ]
}


def allow(**more: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", **more}}}


def deny(message: str) -> dict[str, Any]:
    decision = {"behavior": "deny", "message": message}
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def tool_results(anthropic: AnthropicStandIn) -> list[dict[str, Any]]:
    """The tool_result blocks Claude sent back to the model, in order."""
    found = []
    for request in anthropic.requests(Kind.TURN):
        for message in request.body.get("messages", []):
            content = message.get("content")
            if isinstance(content, list):
                found += [block for block in content if block.get("type") == "tool_result"]
    unique: dict[str, dict[str, Any]] = {}
    for block in found:
        unique[block["tool_use_id"]] = block
    return list(unique.values())


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


@pytest.fixture(autouse=True)
def no_reply(claude: ClaudeRig) -> Any:
    yield
    claude.hooks.reply("PermissionRequest", None)


def test_the_pinned_binary_accepts_these_permission_modes(claude_binary: Path, tmp_path: Path) -> None:
    env = claude_env(ClaudeHome(tmp_path / "home"), "http://127.0.0.1:9")
    done = subprocess.run(
        [str(claude_binary), "--help"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    flat = " ".join(done.stdout.split())
    choices = flat.split("--permission-mode <mode>", 1)[1].split("(choices:", 1)[1].split(")", 1)[0]
    assert [c.strip(' "') for c in choices.split(",")] == [
        "acceptEdits",
        "auto",
        "bypassPermissions",
        "manual",
        "dontAsk",
        "plan",
    ]


@pytest.mark.parametrize(("given", "reported"), [("default", "default"), ("manual", "default")])
def test_default_and_manual_are_the_same_mode_that_asks(
    claude: ClaudeRig, anthropic: AnthropicStandIn, given: str, reported: str
) -> None:
    anthropic.script(Say("hi"))
    session = claude.spawn(claude.folder(), "--permission-mode", given, prompt="hello")
    claude.hooks.wait("Stop", session.session_id)
    assert claude.hooks.of("UserPromptSubmit", session.session_id)[0]["permission_mode"] == reported


def test_permission_request_names_the_tool_and_its_input(claude: ClaudeRig, anthropic: AnthropicStandIn) -> None:
    anthropic.script(UseTool(), Say("tool done"))
    session = claude.spawn(claude.folder(), "--permission-mode", "default", prompt="make x")
    asked = claude.hooks.wait("PermissionRequest", session.session_id)
    assert asked["tool_name"] == "Bash"
    assert asked["tool_input"] == {"command": "touch x", "description": "Create file x"}
    assert asked["permission_mode"] == "default"
    assert isinstance(asked.data.get("permission_suggestions", []), list)


def test_a_hook_that_allows_runs_the_tool_with_no_answer_in_the_pane(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    folder = claude.folder()
    claude.hooks.reply("PermissionRequest", allow())
    anthropic.script(UseTool(), Say("tool done"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x")
    stop = claude.hooks.wait("Stop", session.session_id)
    assert stop["last_assistant_message"] == "tool done"
    assert (folder / "x").exists()
    assert [h.event for h in claude.hooks.of("PostToolUse", session.session_id)] == ["PostToolUse"]


def test_a_hook_that_denies_tells_the_model_its_message_and_the_turn_goes_on(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    folder = claude.folder()
    claude.hooks.reply("PermissionRequest", deny("not now, use a branch"))
    anthropic.script(UseTool(), Say("understood"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x")
    stop = claude.hooks.wait("Stop", session.session_id)
    assert stop["last_assistant_message"] == "understood"
    assert not (folder / "x").exists()
    (result,) = tool_results(anthropic)
    assert result.get("is_error") is True
    assert "not now, use a branch" in result_text(result)


def test_allow_with_a_session_rule_lets_the_same_tool_run_again_without_asking(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    folder = claude.folder()
    rule = {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}
    claude.hooks.reply("PermissionRequest", allow(updatedPermissions=[rule]))
    second = UseTool(input={"command": "touch y", "description": "Create file y"})
    anthropic.script(UseTool(), second, Say("both done"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x and y")
    claude.hooks.wait("Stop", session.session_id)
    assert (folder / "x").exists() and (folder / "y").exists()
    assert len(claude.hooks.of("PermissionRequest", session.session_id)) == 1


def test_ask_user_question_fires_permission_request_and_allow_with_answers_answers_it(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    claude.hooks.reply("PermissionRequest", allow(updatedInput={**ASK, "answers": {QUESTION: "Blue"}}))
    anthropic.script(UseTool(name="AskUserQuestion", input=ASK), Say("blue it is"))
    session = claude.spawn(claude.folder(), "--permission-mode", "default", prompt="ask me")
    asked = claude.hooks.wait("PermissionRequest", session.session_id)
    assert asked["tool_name"] == "AskUserQuestion"
    assert asked["tool_input"]["questions"][0]["question"] == QUESTION
    claude.hooks.wait("Stop", session.session_id)
    (result,) = tool_results(anthropic)
    assert "Blue" in result_text(result)
    assert not result.get("is_error")


def test_a_questions_run_names_its_input_with_the_answers_given_added_and_nothing_else_changed(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    answers = {QUESTION: "Blue"}
    claude.hooks.reply("PermissionRequest", allow(updatedInput={**ASK, "answers": answers}))
    anthropic.script(UseTool(name="AskUserQuestion", input=ASK), Say("blue it is"))
    session = claude.spawn(claude.folder(), "--permission-mode", "default", prompt="ask me")

    claude.hooks.wait("Stop", session.session_id)

    (ran,) = claude.hooks.of("PostToolUse", session.session_id)
    assert ran["tool_name"] == "AskUserQuestion"
    assert {key: value for key, value in ran["tool_input"].items() if key != "answers"} == ASK
    assert ran["tool_input"]["answers"] == answers


def test_ask_user_question_asks_the_hook_in_auto_mode_too(claude: ClaudeRig, anthropic: AnthropicStandIn) -> None:
    claude.hooks.reply("PermissionRequest", allow(updatedInput={**ASK, "answers": {QUESTION: "Red"}}))
    anthropic.script(UseTool(name="AskUserQuestion", input=ASK), Say("red it is"))
    session = claude.spawn(claude.folder(), prompt="ask me")
    asked = claude.hooks.wait("PermissionRequest", session.session_id)
    assert asked["permission_mode"] == "auto"
    claude.hooks.wait("Stop", session.session_id)
    (result,) = tool_results(anthropic)
    assert "Red" in result_text(result)


TOUCH_X = UseTool(input={"command": "touch x", "description": "Create file x"})
TOUCH_Y = UseTool(input={"command": "touch y", "description": "Create file y"})
# reads outside the working folder ask; reads run side by side, so both ask at once
READ_HOSTS = UseTool(name="Read", input={"file_path": "/etc/hosts"})
READ_PASSWD = UseTool(name="Read", input={"file_path": "/etc/passwd"})


def test_one_message_with_two_reads_asks_for_both_at_once_before_either_is_answered(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    anthropic.script(UseTools((READ_HOSTS, READ_PASSWD)), Say("both read"))
    session = claude.spawn(claude.folder(), "--permission-mode", "default", prompt="read both")

    # each hook is its own process: the two fire milliseconds apart, and either may be recorded first
    for read in (READ_HOSTS, READ_PASSWD):
        claude.hooks.wait("PermissionRequest", session.session_id, where=lambda h, r=read: h["tool_input"] == r.input)

    asked = claude.hooks.of("PermissionRequest", session.session_id)
    assert sorted(h["tool_input"]["file_path"] for h in asked) == ["/etc/hosts", "/etc/passwd"]
    assert claude.hooks.of("PostToolUse", session.session_id) == []  # neither was answered, neither ran


def test_two_commands_of_one_message_ask_one_after_the_other(claude: ClaudeRig, anthropic: AnthropicStandIn) -> None:
    folder = claude.folder()
    anthropic.script(UseTools((TOUCH_X, TOUCH_Y)), Say("both done"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x and y")
    claude.hooks.wait("Notification", session.session_id)  # the first dialog has waited a while

    asked = claude.hooks.of("PermissionRequest", session.session_id)

    assert [h["tool_input"] for h in asked] == [TOUCH_X.input]


def test_each_tools_run_names_the_tool_and_input_its_permission_request_named(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    folder = claude.folder()
    claude.hooks.reply("PermissionRequest", allow())
    anthropic.script(UseTools((TOUCH_X, TOUCH_Y)), Say("both done"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x and y")

    claude.hooks.wait("Stop", session.session_id)

    asked = {json.dumps(h["tool_input"]) for h in claude.hooks.of("PermissionRequest", session.session_id)}
    ran = claude.hooks.of("PostToolUse", session.session_id)
    assert {json.dumps(h["tool_input"]) for h in ran} == asked
    assert [h["tool_name"] for h in ran] == ["Bash", "Bash"]


def test_auto_modes_dialog_when_its_check_cannot_run_says_so_and_notifies_agent_needs_input(
    claude_binary: Path,
) -> None:
    bundle = claude_binary.read_bytes()
    # the dialog's own paragraph: the screen the-loop reads as a dialog (app/config/harnesses.py)
    assert AUTO_MODE_CHECK_DIALOG.encode() in bundle
    notified = b'Auto mode can\'t check actions in this session and needs your choice",type:"agent_needs_input"'
    assert notified in bundle
    assert b'hook_event_name:"Notification",message:y,title:k,notification_type:R' in bundle
