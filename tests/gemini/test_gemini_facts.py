"""What the real Gemini CLI 0.61 does, pinned offline in real tmux (the Gemini API stand-in
answers its turns). docs/harnesses.md's gemini section names these tests."""

from __future__ import annotations

import json
import time
import uuid

import pytest

from app.config.settings import Settings
from domain.receipts import ReceiptKind
from tests.gemini.rig import GeminiRig, gemini, gemini_api, gemini_binary, gemini_rig
from tests.gemini_standin.server import Call, GeminiStandIn, Say
from tests.tmux_support import wait_for

__all__ = ["gemini", "gemini_api", "gemini_binary", "gemini_rig"]

pytestmark = pytest.mark.gemini

AUTH_DIALOG = "How would you like to authenticate"


def test_the_extensions_hooks_say_ready_prompt_received_and_turn_ended_under_our_id(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    gemini_api.script(Say("first answer"), Say("second answer"))
    session, conversation = gemini.fresh(gemini.git_folder(), "the first prompt")
    ready = gemini.wait(session, ReceiptKind.READY)[0]
    assert (ready.source, ready.conversation) == ("startup", conversation)
    assert gemini.wait(session, ReceiptKind.PROMPT)[0].prompt == "the first prompt"
    gemini.wait(session, ReceiptKind.TURN_ENDED)
    gemini.paste(session, "Delivery: d-1 (receipt 0123)\n\na pasted comment")
    prompt = gemini.wait(session, ReceiptKind.PROMPT, count=2, timeout=30)[-1]
    assert "Delivery: d-1 (receipt 0123)" in prompt.prompt and "a pasted comment" in prompt.prompt
    gemini.wait(session, ReceiptKind.TURN_ENDED, count=2)
    assert [t.user_texts()[-1] for t in gemini_api.turns()][-1].endswith("a pasted comment")


def test_without_the_receipt_variable_the_extensions_hooks_write_nothing(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    quiet = gemini.spawn(gemini.git_folder(), "--prompt-interactive", prompt="a prompt", hooks=False)
    wait_for(gemini_api.turns, timeout=60, what="the turn reached the stand-in")
    time.sleep(1)
    assert list(quiet.receipts.iterdir()) == []


def test_a_system_settings_file_in_a_folder_root_does_not_own_alone_is_skipped(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    """Why the hooks come from an extension: Gemini reads `GEMINI_CLI_SYSTEM_SETTINGS_PATH` only
    from folders that belong to root and no one else may write (a temp folder is not one)."""
    settings = gemini.root / "system.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"ui": {"hideBanner": True}}), encoding="utf-8")
    gemini.tmux.run("set-environment", "-g", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(settings))
    try:
        session, _ = gemini.fresh(gemini.git_folder(), "hello")
        wait_for(
            lambda: "Skipping system settings file" in gemini.screen(session).replace("\n", ""),
            timeout=60,
            what=f"the warning; screen:\n{gemini.screen(session)}",
        )
    finally:
        gemini.tmux.run("set-environment", "-g", "-u", "GEMINI_CLI_SYSTEM_SETTINGS_PATH")


def test_with_no_sign_in_chosen_gemini_says_ready_while_its_authentication_dialog_waits(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    """So a ready receipt alone does not prove Gemini reads its input: the-loop reads the screen."""
    settings = gemini.gemini_dir / "settings.json"
    kept = settings.read_text(encoding="utf-8")
    settings.unlink()
    try:
        session, _ = gemini.fresh(gemini.git_folder(), "hello")
        gemini.wait(session, ReceiptKind.READY)
        # judged on the look that showed it: Gemini redraws the dialog (erases its lines, writes them
        # again) once its header is drawn, and a second look may fall in between and find it blank
        screen = wait_for(
            lambda: shown if AUTH_DIALOG in (shown := gemini.screen(session)) else "",
            timeout=30,
            what="the authentication dialog",
        )
        assert not gemini_api.turns()
        # what the built-in profile looks for on the screen, to count it blocked
        profile = Settings.model_validate({}).harness_spec("gemini")
        assert any(text in screen for text in profile.blocked_screens)
    finally:
        settings.write_text(kept, encoding="utf-8")


def test_resume_id_continues_the_conversation_after_its_session_was_killed(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    gemini_api.script(Say("the first answer"))
    folder = gemini.git_folder()
    first, conversation = gemini.fresh(folder, "remember the word heron")
    gemini.wait(first, ReceiptKind.TURN_ENDED)
    gemini.kill(first)
    again = gemini.spawn(folder, "--resume", conversation, "--prompt-interactive", prompt="what was the word?")
    ready = gemini.wait(again, ReceiptKind.READY)[0]
    assert (ready.source, ready.conversation) == ("resume", conversation)
    gemini.wait(again, ReceiptKind.TURN_ENDED)
    texts = gemini_api.turns()[-1].user_texts()
    assert "remember the word heron" in texts and texts[-1] == "what was the word?"


def test_resume_of_an_unknown_id_exits(gemini: GeminiRig) -> None:
    session = gemini.spawn(gemini.git_folder(), "--resume", str(uuid.uuid4()), "--prompt-interactive", prompt="hi")
    wait_for(
        lambda: (
            gemini.tmux.run("display-message", "-p", "-t", session.pane, "#{pane_dead}", check=False).strip() == "1"
        ),
        timeout=60,
        what="Gemini exited",
    )
    assert not [r for r in gemini.receipts(session) if r.kind is ReceiptKind.PROMPT]


def test_a_tool_that_asks_first_says_tool_then_blocked_on_its_dialog(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    gemini_api.script(Call("run_shell_command", {"command": "rm -f nothing.txt", "description": "remove"}), Say("done"))
    session, _ = gemini.fresh(gemini.git_folder(), "run a command")
    blocked = gemini.wait(session, ReceiptKind.BLOCKED)[0]
    kinds = [r.kind for r in gemini.receipts(session)]
    assert kinds.index(ReceiptKind.TOOL) < kinds.index(ReceiptKind.BLOCKED) and blocked.detail
    assert ReceiptKind.TURN_ENDED not in kinds  # it waits on the dialog
