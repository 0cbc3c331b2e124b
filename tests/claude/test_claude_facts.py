"""What the-loop relies on in Claude Code, pinned against the real binary in real tmux, offline."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from adapters.agents.pins import PINNED_CLAUDE_CODE
from tests.anthropic_standin.script import Busy, Fail, Say, UseTool
from tests.anthropic_standin.server import AnthropicStandIn, Kind
from tests.claude.fixtures import anthropic, claude, claude_binary, claude_config, claude_rig
from tests.claude.home import API_KEY, ClaudeHome, claude_env
from tests.claude.hooks import Hook
from tests.claude.rig import ClaudeRig, ClaudeSession
from tests.tmux_support import wait_for

__all__ = ["anthropic", "claude", "claude_binary", "claude_config", "claude_rig"]

pytestmark = pytest.mark.claude

ARGV_PROMPT = "the spawn prompt, on the argv"
FIRST_REPLY = "Hello from the stand-in"
TRUST_QUESTION = "Is this a project you created or one you trust?"
PERMISSION_QUESTION = "Do you want to proceed?"
NO_HOOK_WAIT = 5.0
DIALOG_SETTLE = 1.0


@pytest.fixture(scope="module")
def idle(claude_rig: ClaudeRig, anthropic: AnthropicStandIn) -> ClaudeSession:
    """One Claude in a trusted folder, spawned with a prompt whose turn has ended: the tests that
    paste into it leave it idle again."""
    anthropic.reset()
    anthropic.script(Say(FIRST_REPLY))
    session = claude_rig.spawn(claude_rig.folder(), prompt=ARGV_PROMPT)
    claude_rig.hooks.wait("Stop", session.session_id)
    return session


def submit(rig: ClaudeRig, session: ClaudeSession, text: str) -> tuple[Hook, Hook]:
    """Paste `text` as the-loop does; its UserPromptSubmit and the Stop or StopFailure after it."""
    since = time.time_ns()
    rig.paste(session, text)
    received = rig.hooks.wait("UserPromptSubmit", session.session_id, since_ns=since)
    ended = rig.hooks.wait(("Stop", "StopFailure"), session.session_id, since_ns=received.at_ns)
    return received, ended


# the blank lines around the wrapper come and go with how the paste's chunks reach Claude Code's input
# (seen both with and without them): only what is inside is the fact
PASTED = re.compile(r'\s*<pasted_content id="(\w+)">\n(.*)\n</pasted_content id="\1">\s*', re.DOTALL)


def unwrapped(prompt: str) -> str | None:
    """The pasted text inside Claude's `<pasted_content>` wrapper; None when not wrapped."""
    found = PASTED.fullmatch(prompt)
    return found.group(2) if found else None


# --- start-up and the spawn prompt


def test_the_installed_binary_is_the_pinned_version(claude_binary: Path, tmp_path: Path) -> None:
    env = claude_env(ClaudeHome(tmp_path / "home"), "http://127.0.0.1:9")
    done = subprocess.run(
        [str(claude_binary), "--version"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.split()[0] == PINNED_CLAUDE_CODE


def test_a_spawn_fires_session_start_from_startup_with_the_session_id_it_was_given(
    claude: ClaudeRig, idle: ClaudeSession
) -> None:
    started = claude.hooks.of("SessionStart", idle.session_id)
    assert [h["source"] for h in started] == ["startup"]
    assert started[0]["cwd"] == str(idle.cwd.resolve())
    assert started[0]["transcript_path"].endswith(f"{idle.session_id}.jsonl")


def test_the_argv_prompt_fires_user_prompt_submit_with_its_exact_text(claude: ClaudeRig, idle: ClaudeSession) -> None:
    first = claude.hooks.of("UserPromptSubmit", idle.session_id)[0]
    assert first["prompt"] == ARGV_PROMPT
    assert first["prompt_id"]


def test_a_text_reply_ends_the_turn_with_stop_carrying_the_reply(claude: ClaudeRig, idle: ClaudeSession) -> None:
    submitted = claude.hooks.of("UserPromptSubmit", idle.session_id)[0]
    stop = claude.hooks.wait("Stop", idle.session_id)
    assert stop["last_assistant_message"] == FIRST_REPLY
    assert stop["prompt_id"] == submitted["prompt_id"]
    assert stop.at_ns > submitted.at_ns


def test_without_a_permission_mode_claude_runs_in_auto_mode(claude: ClaudeRig, idle: ClaudeSession) -> None:
    assert claude.hooks.of("UserPromptSubmit", idle.session_id)[0]["permission_mode"] == "auto"


def test_claude_asks_the_stand_in_for_its_turns_and_nothing_else(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    session = claude.spawn(claude.folder(), prompt="hello")
    claude.hooks.wait("Stop", session.session_id)
    time.sleep(1)  # anything sent after the turn would show here
    requests = anthropic.requests()
    assert [r.kind for r in requests] == [Kind.TURN]
    assert requests[0].headers["x-api-key"] == API_KEY
    assert requests[0].headers["User-Agent"].startswith(f"claude-cli/{PINNED_CLAUDE_CODE} ")
    assert requests[0].body["stream"] is True


def test_the_tmux_server_carries_claudes_environment_to_its_panes(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    server = claude.tmux.global_env()
    assert server["DISABLE_AUTOUPDATER"] == "1"
    assert server["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert server["CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL"] == "1"
    assert server["ANTHROPIC_BASE_URL"] == anthropic.base_url
    assert server["HOME"] == str(claude.home.path)


# --- pastes, the-loop's way: bracketed text, then an unbracketed carriage return


@pytest.mark.parametrize(
    ("text", "is_wrapped"),
    [
        ("a one-line comment", False),
        ("three\nshort\nlines", False),
        ("x" * 800, False),
        ("four\nshort\nlines\nnow", True),
        ("y" * 801, True),
    ],
    ids=["one-line", "3-lines", "800-chars", "4-lines", "801-chars"],
)
def test_a_paste_while_idle_fires_user_prompt_submit_raw_or_wrapped_in_pasted_content(
    claude: ClaudeRig, idle: ClaudeSession, text: str, is_wrapped: bool
) -> None:
    received, _ = submit(claude, idle, text)
    assert unwrapped(received["prompt"]) == (text if is_wrapped else None)
    if not is_wrapped:
        assert received["prompt"] == text


def test_a_58_kb_paste_arrives_whole_in_user_prompt_submit(claude: ClaudeRig, idle: ClaudeSession) -> None:
    text = "\n".join(f"line {n:05d} of a long comment" for n in range(2100))
    assert len(text) > 58_000
    received, _ = submit(claude, idle, text)
    assert unwrapped(received["prompt"]) == text


def test_a_paste_while_busy_fires_user_prompt_submit_at_once_and_shows_queued(
    claude: ClaudeRig, anthropic: AnthropicStandIn, idle: ClaudeSession
) -> None:
    anthropic.script(Busy(60))
    since = time.time_ns()
    claude.paste(idle, "keeps the model busy")
    running = claude.hooks.wait("UserPromptSubmit", idle.session_id, since_ns=since)
    wait_for(lambda: len(anthropic.requests(Kind.TURN)) == 1, what="the held request")
    claude.paste(idle, "arrives while busy")
    queued = claude.hooks.wait("UserPromptSubmit", idle.session_id, since_ns=running.at_ns + 1, timeout=5)
    assert queued["prompt"] == "arrives while busy"
    assert queued["prompt_id"] == running["prompt_id"]  # the queued prompt gets the running turn's id
    wait_for(lambda: "Queued" in claude.tmux.screen(idle), timeout=5, what="Queued on screen")
    assert claude.hooks.of("Stop", idle.session_id, since_ns=since) == []
    anthropic.release()
    stops = wait_for(lambda: claude.hooks.of("Stop", idle.session_id, since_ns=since)[1:], what="both turns")
    assert stops[0]["prompt_id"] != running["prompt_id"]  # the queued prompt's own turn


# --- tools, permissions, errors


def test_a_tool_use_in_default_mode_blocks_on_a_permission_dialog_until_answered(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    folder = claude.folder()
    anthropic.script(UseTool(), Say("tool done"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x")
    asked = claude.hooks.wait("PermissionRequest", session.session_id)
    notified = claude.hooks.wait("Notification", session.session_id, timeout=20)
    assert notified["notification_type"] == "permission_prompt"
    assert notified["message"] == "Claude needs your permission"
    assert 3.0 < (notified.at_ns - asked.at_ns) / 1e9 < 10.0  # the notification lags ~6 s
    assert PERMISSION_QUESTION in claude.tmux.screen(session)
    assert not (folder / "x").exists()
    claude.paste(session, "1")  # the dialog's first choice: Yes
    stop = claude.hooks.wait("Stop", session.session_id)
    assert stop["last_assistant_message"] == "tool done"
    assert (folder / "x").exists()
    assert [h.event for h in claude.hooks.of("PostToolUse", session.session_id)] == ["PostToolUse"]


def test_a_comment_pasted_into_a_permission_dialog_approves_the_tool_and_is_lost(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    folder = claude.folder()
    anthropic.script(UseTool(), Say("tool done"))
    session = claude.spawn(folder, "--permission-mode", "default", prompt="make x")
    claude.hooks.wait("PermissionRequest", session.session_id)
    wait_for(lambda: PERMISSION_QUESTION in claude.tmux.screen(session), what="the dialog on screen")
    time.sleep(DIALOG_SETTLE)
    claude.paste(session, "a comment that only wanted to say hello")
    claude.hooks.wait("Stop", session.session_id)
    assert (folder / "x").exists()  # its carriage return chose the preselected "1. Yes"
    prompts = [h["prompt"] for h in claude.hooks.of("UserPromptSubmit", session.session_id)]
    assert prompts == ["make x"]


@pytest.mark.parametrize(
    ("status", "kind", "error"),
    [
        (500, "api_error", "server_error"),
        (529, "overloaded_error", "server_error"),
        (429, "rate_limit_error", "rate_limit"),
        (401, "authentication_error", "authentication_failed"),
    ],
)
def test_an_api_error_ends_the_turn_with_stop_failure(
    claude: ClaudeRig, anthropic: AnthropicStandIn, idle: ClaudeSession, status: int, kind: str, error: str
) -> None:
    anthropic.script(Fail(status, kind, "scripted failure"))
    received, ended = submit(claude, idle, f"answered {status}")
    assert ended.event == "StopFailure"
    assert ended["error"] == error
    assert ended["prompt_id"] == received["prompt_id"]


# --- trust


def test_an_untrusted_folder_shows_the_trust_dialog_and_fires_no_hook(
    claude: ClaudeRig, anthropic: AnthropicStandIn
) -> None:
    session = claude.spawn(claude.folder(trusted=False), prompt="never read")
    wait_for(lambda: TRUST_QUESTION in claude.tmux.screen(session), what="the trust dialog")
    assert "❯ No, exit" in claude.tmux.screen(session)
    time.sleep(NO_HOOK_WAIT)
    assert claude.hooks.all(session.session_id) == []
    assert anthropic.requests() == []


def test_a_paste_into_the_trust_dialog_exits_claude_without_a_hook(claude: ClaudeRig) -> None:
    session = claude.spawn(claude.folder(trusted=False), prompt="never read")
    wait_for(lambda: TRUST_QUESTION in claude.tmux.screen(session), what="the trust dialog")
    time.sleep(DIALOG_SETTLE)  # keys that arrive as the dialog is first drawn are dropped
    claude.paste(session, "the first comment")
    wait_for(lambda: claude.pane_dead(session), what="Claude exited")
    assert claude.exit_status(session) == 1
    assert "Claude Code didn't start because this folder isn't trusted." in claude.tmux.screen(session)
    assert claude.hooks.all(session.session_id) == []


def test_a_folder_recorded_as_trusted_shows_no_dialog(claude: ClaudeRig) -> None:
    assert claude.home.config()["projects"][str(claude.trusted_root.resolve())]["hasTrustDialogAccepted"] is True
    session = claude.spawn(claude.trusted_root, prompt="hello")
    claude.hooks.wait("SessionStart", session.session_id)
    claude.hooks.wait("Stop", session.session_id)
    assert TRUST_QUESTION not in claude.tmux.screen(session)


def test_a_folder_inside_a_trusted_one_is_trusted_too(claude: ClaudeRig) -> None:
    inner = claude.folder() / "work" / "item-1"
    inner.mkdir(parents=True)
    assert str(inner.resolve()) not in claude.home.config()["projects"]
    session = claude.spawn(inner, prompt="hello")
    assert claude.hooks.wait("SessionStart", session.session_id)["source"] == "startup"
