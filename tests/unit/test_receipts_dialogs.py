"""Dialogs in the receipts (domain/receipts): what blocks a harness, what lets it go on, and which
receipts name one dialog."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.harnesses.claude.hooks import settings
from adapters.receipts.hook_json import receipt_of
from domain.policy import Ready, readiness
from domain.receipts import (
    TOOL_GRACE_SECONDS,
    HarnessState,
    Receipt,
    ReceiptKind,
    harness_state,
    open_dialog,
)

K = ReceiptKind


def receipts(*kinds: ReceiptKind) -> list[Receipt]:
    return [Receipt(kind, key=f"{n:03d}") for n, kind in enumerate(kinds)]


@pytest.mark.parametrize(
    ("kinds", "state"),
    [
        ((K.READY, K.PROMPT, K.BLOCKED), HarnessState.BLOCKED),  # PermissionRequest
        ((K.READY, K.PROMPT, K.BLOCKED, K.BLOCKED), HarnessState.BLOCKED),  # its late notification
        ((K.READY, K.PROMPT, K.BLOCKED, K.IDLE), HarnessState.BLOCKED),
        ((K.READY, K.PROMPT, K.BLOCKED, K.WORKING), HarnessState.BUSY),  # allowed: PostToolUse
        ((K.READY, K.PROMPT, K.BLOCKED, K.PROMPT), HarnessState.BUSY),  # declined, then typed into
        ((K.READY, K.PROMPT, K.BLOCKED, K.TURN_ENDED), HarnessState.IDLE),
        ((K.READY, K.PROMPT, K.BLOCKED, K.READY), HarnessState.READY),  # the harness restarted
        ((K.READY, K.PROMPT, K.BLOCKED, K.ENDED), HarnessState.ENDED),
    ],
    ids=["asked", "asked-twice", "idle-while-asked", "allowed", "typed-into", "turn-ended", "restarted", "ended"],
)
def test_a_dialog_blocks_until_a_receipt_that_is_not_about_waiting(
    kinds: tuple[ReceiptKind, ...], state: HarnessState
) -> None:
    assert harness_state(receipts(*kinds)) is state


def test_one_dialog_said_twice_is_named_by_its_first_receipt() -> None:
    said = receipts(K.READY, K.PROMPT, K.BLOCKED, K.IDLE, K.BLOCKED)
    assert open_dialog(said) == said[2]


def test_a_dialog_after_the_last_one_was_answered_is_another_dialog() -> None:
    said = receipts(K.READY, K.PROMPT, K.BLOCKED, K.WORKING, K.BLOCKED)
    assert open_dialog(said) == said[4]


@pytest.mark.parametrize("last", [K.WORKING, K.PROMPT, K.TURN_ENDED, K.READY])
def test_no_dialog_is_open_once_the_harness_went_on(last: ReceiptKind) -> None:
    assert open_dialog(receipts(K.READY, K.PROMPT, K.BLOCKED, last)) is None


def test_claude_codes_permission_request_hook_is_a_blocked_receipt_and_the_loop_subscribes_it() -> None:
    text = '{"hook_event_name": "PermissionRequest", "session_id": "s", "tool_name": "Bash"}'
    receipt = receipt_of("1796100000000000000-1", text)
    assert receipt is not None and receipt.kind is ReceiptKind.BLOCKED
    assert "PermissionRequest" in settings(Path("/state/receipts/x/1"))["hooks"]


def test_a_tool_about_to_run_holds_pastes_for_its_grace_then_the_harness_is_busy() -> None:
    at = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
    said = [Receipt(K.READY, "1", at=at), Receipt(K.PROMPT, "2", at=at), Receipt(K.TOOL, "3", at=at)]
    assert harness_state(said, now=at + timedelta(seconds=TOOL_GRACE_SECONDS - 0.1)) is HarnessState.TOOL
    assert harness_state(said, now=at + timedelta(seconds=TOOL_GRACE_SECONDS)) is HarnessState.BUSY
    assert harness_state(said) is HarnessState.BUSY  # read without a clock (sessions list): busy
    assert readiness(HarnessState.TOOL).choice is Ready.WAIT


def test_a_tool_that_asks_first_blocks() -> None:
    assert harness_state(receipts(K.READY, K.PROMPT, K.TOOL, K.BLOCKED)) is HarnessState.BLOCKED


def test_claude_codes_pre_tool_use_hook_is_a_tool_receipt_and_the_loop_subscribes_it() -> None:
    receipt = receipt_of("1796100000000000000-1", '{"hook_event_name": "PreToolUse", "tool_name": "Bash"}')
    assert receipt is not None and receipt.kind is ReceiptKind.TOOL
    assert "PreToolUse" in settings(Path("/state/receipts/x/1"))["hooks"]


@pytest.mark.parametrize(
    ("kinds", "state"),
    [
        ((K.PROMPT,), HarnessState.STARTING),  # opencode took its first prompt; its TUI shows it later
        ((K.PROMPT, K.WORKING, K.TURN_ENDED), HarnessState.STARTING),
        ((K.PROMPT, K.READY), HarnessState.READY),
        ((K.PROMPT, K.TURN_ENDED, K.READY, K.PROMPT), HarnessState.BUSY),
        ((K.PROMPT, K.BLOCKED), HarnessState.BLOCKED),  # a dialog is one, ready or not
        ((K.ENDED,), HarnessState.ENDED),
    ],
    ids=["prompt", "a-whole-turn", "then-ready", "ready-then-prompt", "dialog", "ended"],
)
def test_until_its_ready_receipt_a_harness_is_starting_whatever_it_said_first(
    kinds: tuple[ReceiptKind, ...], state: HarnessState
) -> None:
    assert harness_state(receipts(*kinds)) is state


def test_a_permission_request_with_an_input_too_deep_to_parse_is_still_a_blocked_receipt_naming_its_tool() -> None:
    deep = '{"a": ' * 5000 + "1" + "}" * 5000  # past what the JSON parser takes (RecursionError)
    session = '"s\\"}{,"'  # brackets and a quote inside a string are text
    head = f'"hook_event_name": "PermissionRequest", "session_id": {session}, "tool_name": "Bash"'
    asked = f'{{{head}, "tool_input": {deep}}}'
    ran = f'{{"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash", "tool_input": {deep}}}'
    other = ran.replace('"a": 1', '"a": 2')

    blocked = receipt_of("1796100000000000000-1", asked)
    assert blocked is not None and blocked.kind is ReceiptKind.BLOCKED
    assert blocked.tool == "Bash" and blocked.conversation == 's"}{,'
    working, another = receipt_of("1796100000000000001-1", ran), receipt_of("1796100000000000001-1", other)
    assert working is not None and another is not None
    assert working.tool_input == blocked.tool_input != another.tool_input  # the same input reads the same
