"""What the-loop relies on in Codex, pinned against the real binary in real tmux, offline
(the OpenAI Responses API answered by tests/openai_standin)."""

from __future__ import annotations

import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from adapters.agents.pins import PINNED_CODEX
from adapters.harnesses.codex.hooks import arguments
from domain.receipts import ReceiptKind
from tests.codex.rig import (
    CodexRig,
    codex,
    codex_binary,
    codex_env,
    codex_rig,
    openai,
)
from tests.openai_standin.server import OpenAIStandIn, Say
from tests.tmux_support import wait_for

__all__ = ["codex", "codex_binary", "codex_rig", "openai"]

pytestmark = pytest.mark.codex

ARGV_PROMPT = "the spawn prompt, on the argv"
TRUST_QUESTION = "Trust this folder?"
HOOK_REVIEW = "Hooks need review"
QUIET_SECONDS = 4.0


def test_the_installed_binary_is_the_pinned_version(codex_binary: Path, tmp_path: Path) -> None:
    env = codex_env(tmp_path, tmp_path / ".codex")
    done = subprocess.run(
        [str(codex_binary), "--version"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout.split() == ["codex-cli", PINNED_CODEX]


def test_a_never_seen_git_folder_opens_trust_this_folder_and_no_hook_runs(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    session = codex.spawn(codex.git_folder(), prompt=ARGV_PROMPT)
    wait_for(lambda: TRUST_QUESTION in codex.screen(session), timeout=60, what="the trust screen")
    assert "Trust and continue" in codex.screen(session)
    time.sleep(QUIET_SECONDS)
    assert codex.receipts(session) == []  # not even SessionStart: the dialog comes first
    assert openai.turns() == []  # nor was the argv prompt sent


def test_trust_level_trusted_in_config_toml_skips_the_trust_screen_and_the_hooks_run_trusted_from_argv(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    openai.script(Say("Hello from the stand-in"))
    folder = codex.git_folder()
    codex.trust(folder)
    session = codex.spawn(folder, prompt=ARGV_PROMPT)
    (ready,) = codex.wait(session, ReceiptKind.READY)
    assert ready.source == "startup" and ready.conversation  # Codex's own session id
    (prompt,) = codex.wait(session, ReceiptKind.PROMPT)
    assert prompt.prompt == ARGV_PROMPT and prompt.conversation == ready.conversation
    (ended,) = codex.wait(session, ReceiptKind.TURN_ENDED)
    assert ended.conversation == ready.conversation
    assert TRUST_QUESTION not in codex.screen(session) and HOOK_REVIEW not in codex.screen(session)
    assert ARGV_PROMPT in openai.loop_turns()[0].user_texts()
    # the hooks' trust went on the command line: nothing about hooks was written to the user's file
    assert "hooks" not in tomllib.loads(codex.config.read_text(encoding="utf-8"))


def test_hooks_without_their_trusted_hash_stop_codex_on_hooks_need_review(codex: CodexRig, tmp_path: Path) -> None:
    folder = codex.git_folder()
    codex.trust(folder)
    untrusted = arguments(tmp_path)[:-2]  # the hooks, without `-c hooks.state=…`
    session = codex.spawn(folder, *untrusted, prompt=ARGV_PROMPT, hooks=False)
    wait_for(lambda: HOOK_REVIEW in codex.screen(session), timeout=60, what="the hook review screen")
    assert "Trust all and continue" in codex.screen(session)


def test_a_paste_is_submitted_and_user_prompt_submit_carries_its_text(codex: CodexRig, openai: OpenAIStandIn) -> None:
    folder = codex.git_folder()
    codex.trust(folder)
    session = codex.spawn(folder, prompt=ARGV_PROMPT)
    codex.wait(session, ReceiptKind.TURN_ENDED)
    codex.paste(session, "a comment, pasted\nover two lines")
    prompts = codex.wait(session, ReceiptKind.PROMPT, count=2)
    assert prompts[1].prompt == "a comment, pasted\nover two lines"
    codex.wait(session, ReceiptKind.TURN_ENDED, count=2)


def test_codex_resume_id_prompt_continues_the_conversation_after_its_session_was_killed(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    folder = codex.git_folder()
    codex.trust(folder)
    first = codex.spawn(folder, prompt="remember the word heron")
    (ready,) = codex.wait(first, ReceiptKind.READY)
    codex.wait(first, ReceiptKind.TURN_ENDED)
    codex.kill(first)
    openai.reset()
    second = codex.spawn(folder, "resume", ready.conversation, prompt="which word?")
    (resumed,) = codex.wait(second, ReceiptKind.READY)
    assert resumed.source == "resume" and resumed.conversation == ready.conversation
    (prompt,) = codex.wait(second, ReceiptKind.PROMPT)
    assert prompt.prompt == "which word?" and prompt.conversation == ready.conversation
    codex.wait(second, ReceiptKind.TURN_ENDED)
    texts = openai.loop_turns()[0].user_texts()
    assert "remember the word heron" in texts and "which word?" in texts


def test_resume_of_an_unknown_id_exits(codex: CodexRig) -> None:
    folder = codex.git_folder()
    codex.trust(folder)
    session = codex.spawn(folder, "resume", "00000000-0000-7000-8000-000000000000", prompt="hello")
    wait_for(
        lambda: codex.tmux.run("display-message", "-p", "-t", session.pane, "#{pane_dead}", check=False).strip() == "1",
        timeout=60,
        what=f"Codex to exit; screen:\n{codex.screen(session)}",
    )
    assert codex.receipts(session) == []
