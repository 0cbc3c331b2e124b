"""The built-in profiles build the command lines their CLIs take (docs/harnesses.md says why each)."""

from __future__ import annotations

import os

import pytest

from app.config.harnesses import BUILTIN_HARNESSES
from app.config.settings import Settings
from domain.model import HarnessSpec
from domain.receipts import ReceiptMode

SESSION = "3f1c2a9e-1111-4222-8333-444455556666"
PROMPT = "[the-loop] You are the agent for acme/widgets#12.\nDelivery: d-1\n"


@pytest.fixture(autouse=True)
def _no_loop_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.upper().startswith("THE_LOOP_")]:
        monkeypatch.delenv(name)


def spec(name: str) -> HarnessSpec:
    return Settings().harness_spec(name)


def command_line(harness: HarnessSpec, *, resume: bool) -> tuple[str, ...]:
    """What the pane runs: the spawn wrapper appends the prompt as the last argument (pinned by
    tests/contract/test_tmux_contract.py)."""
    return (*harness.argv(SESSION, resume=resume), PROMPT)


def test_codex_starts_a_fresh_interactive_session_with_the_prompt_as_its_positional_argument() -> None:
    assert command_line(spec("codex"), resume=False) == ("codex", PROMPT)


def test_codex_resumes_by_the_id_its_ready_receipt_named() -> None:
    # Codex names its conversations: the spawner passes the id learned from the last SessionStart
    assert spec("codex").names_its_conversations
    assert command_line(spec("codex"), resume=True) == ("codex", "resume", SESSION, PROMPT)


def test_codex_confirms_by_its_own_hooks_and_its_folder_is_trusted_in_its_configuration() -> None:
    assert (spec("codex").receipts, spec("codex").hooks, spec("codex").trust_workdir) == (
        ReceiptMode.HOOKS,
        "codex",
        True,
    )
    assert spec("codex").unvouched_args is None  # never started in a fork's folder, never trusts it


def test_claude_and_opencode_take_a_rule_for_the_session_with_an_allow_and_codex_does_not() -> None:
    # pinned: tests/claude/test_claude_permission_facts.py, tests/codex/test_codex_permission_facts.py,
    # tests/opencode/test_opencode_permission_facts.py
    assert (spec("claude").session_rules, spec("codex").session_rules, spec("opencode").session_rules) == (
        True,
        False,
        True,
    )
    assert not any(spec(name).session_rules for name in ("gemini", "cursor", "demo"))


def test_a_harness_of_the_operators_own_takes_session_rules_as_its_receipts_hook_does() -> None:
    harnesses = {"opus": {"binary": "claude", "receipts": "claude"}, "mine": {"binary": "mine", "receipts": "codex"}}
    settings = Settings.model_validate({"routing": {"harnesses": harnesses}})
    assert (settings.harness_spec("opus").session_rules, settings.harness_spec("mine").session_rules) == (True, False)


def test_gemini_starts_a_fresh_conversation_under_the_loops_id_with_the_prompt_interactive() -> None:
    expected = ("gemini", "--skip-trust", "--session-id", SESSION, "--prompt-interactive", PROMPT)
    assert command_line(spec("gemini"), resume=False) == expected


def test_gemini_resumes_the_loops_id_with_the_prompt_interactive() -> None:
    expected = ("gemini", "--skip-trust", "--resume", SESSION, "--prompt-interactive", PROMPT)
    assert command_line(spec("gemini"), resume=True) == expected


def test_opencode_starts_fresh_with_the_prompt_given_to_its_prompt_flag() -> None:
    # its positional argument is a project folder: the prompt there would be taken for a path
    assert command_line(spec("opencode"), resume=False) == ("opencode", "--prompt", PROMPT)


def test_opencode_resumes_by_the_id_its_ready_receipt_named() -> None:
    assert spec("opencode").names_its_conversations
    assert command_line(spec("opencode"), resume=True) == ("opencode", "--session", SESSION, "--prompt", PROMPT)


def test_cursor_agent_stays_as_it_was_a_positional_prompt_and_no_resume() -> None:
    assert command_line(spec("cursor"), resume=False) == ("cursor-agent", PROMPT)
    assert not spec("cursor").can_resume


def test_aider_is_not_built_in_since_its_positional_arguments_are_files_to_edit() -> None:
    assert "aider" not in BUILTIN_HARNESSES


@pytest.mark.parametrize("name", ["cursor"])
def test_a_cli_the_loop_reads_no_receipt_from_confirms_by_staying_alive(name: str) -> None:
    harness = spec(name)
    assert (harness.receipts, harness.trust_workdir) == (ReceiptMode.NONE, False)


def test_gemini_confirms_by_the_receipts_of_the_loops_extension_and_needs_no_trust_record() -> None:
    # --skip-trust trusts the folder for its run: nothing of the user's is written for it
    assert (spec("gemini").receipts, spec("gemini").hooks, spec("gemini").trust_workdir) == (
        ReceiptMode.HOOKS,
        "gemini",
        False,
    )


def test_gemini_waits_longer_than_its_failed_resume_takes_to_exit() -> None:
    # `--resume` of an unknown id exited after 4.3 s here: a shorter wait counts it resumed
    assert spec("gemini").ready_seconds >= 10


def test_gemini_pauses_between_paste_and_enter() -> None:
    # under tmux Gemini does not trust pastes: an Enter close behind one becomes a newline
    assert spec("gemini").submit_delay_ms > 0


def test_the_claude_profile_states_its_permission_mode_on_the_command_line() -> None:
    argv = spec("claude").argv(SESSION, resume=False)
    assert argv[argv.index("--permission-mode") + 1] == "auto"


def test_the_operator_chooses_the_permission_mode_that_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("THE_LOOP_ROUTING__HARNESSES__CLAUDE__PERMISSIONMODE", "default")
    argv = Settings().harness_spec("claude").argv(SESSION, resume=True)
    assert argv[argv.index("--permission-mode") + 1] == "default"
    assert argv.count("--permission-mode") == 1


def test_a_permission_mode_claude_code_does_not_know_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("THE_LOOP_ROUTING__HARNESSES__CLAUDE__PERMISSIONMODE", "yolo")
    with pytest.raises(ValueError, match="permissionMode"):
        Settings().harness_spec("claude")


def test_a_harness_without_a_permission_mode_gets_no_flag() -> None:
    assert "--permission-mode" not in spec("codex").argv(SESSION, resume=False)


def test_a_permission_mode_already_in_the_operators_args_is_not_overridden(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A config written before the key gave the mode in `args`: that choice stands."""
    monkeypatch.setenv("THE_LOOP_ROUTING__HARNESSES__CLAUDE__ARGS", '["--permission-mode", "default"]')
    argv = Settings().harness_spec("claude").argv(SESSION, resume=False)
    assert argv.count("--permission-mode") == 1
    assert argv[argv.index("--permission-mode") + 1] == "default"
