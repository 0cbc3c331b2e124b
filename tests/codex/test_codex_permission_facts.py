"""What the-loop relies on in Codex's PermissionRequest hook, pinned against the real binary in
real tmux, offline: the model (tests/openai_standin) asks to run a command outside the sandbox
(`exec_command` with `sandbox_permissions: require_escalated`, under `-a on-request`), which Codex
asks a person about; the-loop's asking hook (`adapters.agents.receipt_line.asking_command`, handed
by `adapters.harnesses.codex.hooks`) writes its receipt and takes the decision the daemon would write for an
answer from the item (`domain.asks.decision_for`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adapters.agents.receipt_line import DECISION, EXPIRED, TAKEN
from domain.asks import Answer, AnswerVerb, ask_of, decision_for
from domain.receipts import Receipt, ReceiptKind, open_requests, parsed_input
from domain.refs import RepoRef, WorkItemRef
from tests.agent_tmux import AgentSession
from tests.codex.rig import CodexRig, codex, codex_binary, codex_rig, openai
from tests.openai_standin.server import Call, OpenAIStandIn, Say
from tests.tmux_support import wait_for

__all__ = ["codex", "codex_binary", "codex_rig", "openai"]

pytestmark = pytest.mark.codex

MADE = "made-by-codex.txt"
COMMAND = f"touch {MADE}"
WHY = "to make the file the task needs"
ITEM = WorkItemRef(RepoRef.parse("acme/widgets"), 7)
APPROVAL = "Would you like to run the following command?"  # Codex's own dialog in the pane
ESCALATED = {"cmd": COMMAND, "sandbox_permissions": "require_escalated", "justification": WHY}


def _asking(codex: CodexRig, openai: OpenAIStandIn, *, wait: float = 120) -> tuple[AgentSession, Path, Receipt]:
    """A Codex whose model asks to run COMMAND unsandboxed, its asking hook waiting `wait` s: the
    session, its folder and the PermissionRequest receipt."""
    openai.script(Call("exec_command", json.dumps(ESCALATED)), Say("done"))
    folder = codex.git_folder()
    codex.trust(folder)
    session = codex.spawn(
        folder, "-a", "on-request", "-s", "workspace-write", prompt="make the file", ask_wait_seconds=wait
    )
    (asked,) = codex.wait(session, ReceiptKind.BLOCKED)
    return session, folder, asked


def _answer(session: AgentSession, asked: Receipt, verb: AnswerVerb, text: str = "") -> None:
    """The decision the daemon writes for an answer from the item, beside the request's receipt."""
    decision = decision_for(ask_of(asked), Answer(verb, text), item=ITEM).choice
    assert decision is not None
    (session.receipts / f"{asked.key}{DECISION}").write_text(decision, encoding="utf-8")


def _raw(session: AgentSession, receipt: Receipt) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((session.receipts / f"{receipt.key}.receipt").read_text(encoding="utf-8"))
    return data


def _ran(codex: CodexRig, session: AgentSession) -> list[Receipt]:
    return [r for r in codex.receipts(session) if r.kind is ReceiptKind.WORKING and r.tool == "Bash"]


def test_permission_request_names_bash_its_command_and_why_and_an_allow_runs_it(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(codex, openai)
    (ready,) = codex.wait(session, ReceiptKind.READY)
    raw = _raw(session, asked)
    assert (raw["hook_event_name"], raw["cwd"], raw["session_id"]) == (
        "PermissionRequest",
        str(folder),
        ready.conversation,
    )
    assert raw["permission_mode"] == "default"
    assert asked.tool == "Bash" and parsed_input(asked.tool_input) == {"command": COMMAND, "description": WHY}
    # while the hook waits Codex draws no dialog: only a hook's answer, or its end, goes on
    wait_for(lambda: "Running hook" in codex.screen(session), timeout=30, what="the hook shown running")
    assert APPROVAL not in codex.screen(session)
    _answer(session, asked, AnswerVerb.ALLOW)
    codex.wait(session, ReceiptKind.TURN_ENDED)
    assert (session.receipts / f"{asked.key}{TAKEN}").exists() and (folder / MADE).exists()
    (ran,) = _ran(codex, session)
    # its run names the command without the request's why: it answers the request all the same
    assert parsed_input(ran.tool_input) == {"command": COMMAND}
    receipts = codex.receipts(session)
    assert open_requests(receipts[: receipts.index(ran) + 1]) == []  # before the turn's end closes it anyway


def test_a_deny_does_not_run_the_command_and_the_model_reads_its_message(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(codex, openai)
    _answer(session, asked, AnswerVerb.DENY, "not on this item")
    codex.wait(session, ReceiptKind.TURN_ENDED)
    assert (session.receipts / f"{asked.key}{TAKEN}").exists()
    assert not (folder / MADE).exists() and _ran(codex, session) == []
    outputs = [
        str(entry.get("output"))
        for turn in openai.turns()
        for entry in (turn.body.get("input") or [])
        if entry.get("type") == "function_call_output"
    ]
    assert any("denied this. Their reason: not on this item" in output for output in outputs), outputs


def test_a_hook_that_gives_up_prints_nothing_and_codex_opens_its_own_dialog_in_the_pane(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(codex, openai, wait=1)
    wait_for(lambda: APPROVAL in codex.screen(session), timeout=60, what="Codex's approval dialog")
    assert (session.receipts / f"{asked.key}{EXPIRED}").exists()
    assert not (folder / MADE).exists() and _ran(codex, session) == []


def test_an_allow_with_a_session_rule_is_refused_and_codex_opens_its_own_dialog(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(codex, openai)
    rule = {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}
    decision = {"behavior": "allow", "updatedPermissions": [rule]}
    output = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    (session.receipts / f"{asked.key}{DECISION}").write_text(json.dumps(output), encoding="utf-8")
    wait_for(lambda: APPROVAL in codex.screen(session), timeout=60, what="Codex's approval dialog")
    assert (session.receipts / f"{asked.key}{TAKEN}").exists()
    assert not (folder / MADE).exists() and _ran(codex, session) == []
