"""What the-loop relies on in opencode's permission requests, pinned against the real binary in real
tmux, offline: the model (tests/openai_standin, Chat Completions) asks to run a shell command, which
the user's configuration asks a person about (`permission: {bash: "ask"}`, tests/opencode/rig.py);
the-loop's plugin (`adapters.harnesses.opencode.plugin`) writes the request's receipt and takes the decision
the daemon would write for an answer from the item (`domain.asks.decision_for`), replying through
opencode's own API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapters.agents.receipt_line import DECISION, EXPIRED, TAKEN
from domain.asks import Answer, AnswerVerb, ask_of, decision_for
from domain.receipts import Receipt, ReceiptKind, open_requests, parsed_input
from domain.refs import RepoRef, WorkItemRef
from tests.agent_tmux import AgentSession
from tests.openai_standin.server import Call, OpenAIStandIn, Say
from tests.opencode.rig import OpencodeRig, openai, opencode, opencode_binary, opencode_rig
from tests.opencode.test_opencode_facts import START_SECONDS
from tests.tmux_support import wait_for

__all__ = ["openai", "opencode", "opencode_binary", "opencode_rig"]

MADE = "made-by-opencode.txt"
COMMAND = f"touch {MADE}"
WHY = "Makes the file the task needs"
ITEM = WorkItemRef(RepoRef.parse("acme/widgets"), 7)
DIALOG = "Permission required"  # opencode's own dialog in the pane


def _asking(opencode: OpencodeRig, openai: OpenAIStandIn, *, wait: float = 120) -> tuple[AgentSession, Path, Receipt]:
    """An opencode whose model asks to run COMMAND, its plugin waiting `wait` s for an answer: the
    session, its folder and the PermissionRequest receipt."""
    openai.script(Say("title"), Call("bash", json.dumps({"command": COMMAND, "description": WHY})), Say("done"))
    folder = opencode.git_folder()
    session = opencode.spawn(folder, "--prompt", prompt="make the file", ask_wait_seconds=wait)
    (asked,) = opencode.wait(session, ReceiptKind.BLOCKED, timeout=START_SECONDS)
    return session, folder, asked


def _answer(session: AgentSession, asked: Receipt, verb: AnswerVerb, text: str = "") -> None:
    """The decision the daemon writes for an answer from the item, beside the request's receipt."""
    decision = decision_for(ask_of(asked, session_rules=True), Answer(verb, text), item=ITEM).choice
    assert decision is not None
    (session.receipts / f"{asked.key}{DECISION}").write_text(decision, encoding="utf-8")


def _raw(session: AgentSession, receipt: Receipt) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((session.receipts / f"{receipt.key}.receipt").read_text(encoding="utf-8"))
    return data


def _tool_results(openai: OpenAIStandIn) -> list[str]:
    body = [turn.body for turn in openai.turns() if isinstance(turn.body, dict)]
    return [str(m.get("content")) for b in body for m in b.get("messages") or [] if m.get("role") == "tool"]


def test_a_permission_request_names_bash_its_command_and_why_and_an_allow_runs_it(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(opencode, openai)
    (ready,) = opencode.wait(session, ReceiptKind.READY)
    raw = _raw(session, asked)
    assert (raw["hook_event_name"], raw["session_id"]) == ("PermissionRequest", ready.conversation)
    assert asked.tool == "bash" and parsed_input(asked.tool_input) == {"command": COMMAND, "description": WHY}
    # opencode draws its own dialog while the plugin waits: someone attached may answer it there
    wait_for(lambda: DIALOG in opencode.screen(session), timeout=30, what="opencode's permission dialog")
    _answer(session, asked, AnswerVerb.ALLOW)
    opencode.wait(session, ReceiptKind.TURN_ENDED, timeout=60)
    assert (session.receipts / f"{asked.key}{TAKEN}").exists() and (folder / MADE).exists()
    assert open_requests(opencode.receipts(session)[:-1]) == []  # answered before the turn's end


def test_a_deny_does_not_run_the_command_and_the_model_reads_its_reason(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(opencode, openai)
    _answer(session, asked, AnswerVerb.DENY, "not on this item")
    wait_for(lambda: any("not on this item" in r for r in _tool_results(openai)), timeout=60, what="the reason")
    assert (session.receipts / f"{asked.key}{TAKEN}").exists() and not (folder / MADE).exists()
    assert any("denied this. Their reason: not on this item" in r for r in _tool_results(openai))


def test_a_plugin_that_gives_up_leaves_opencodes_own_dialog_in_the_pane(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(opencode, openai, wait=1)
    wait_for((session.receipts / f"{asked.key}{EXPIRED}").exists, timeout=30, what="the wait's end")
    wait_for(lambda: DIALOG in opencode.screen(session), timeout=30, what="opencode's permission dialog")
    assert COMMAND in opencode.screen(session) and not (folder / MADE).exists()


def test_an_allow_always_runs_it_and_opencode_asks_no_more_for_that_command(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    session, folder, asked = _asking(opencode, openai)
    _answer(session, asked, AnswerVerb.ALLOW_ALWAYS)
    opencode.wait(session, ReceiptKind.TURN_ENDED, timeout=60)
    assert (folder / MADE).exists()
    (folder / MADE).unlink()
    openai.script(Call("bash", json.dumps({"command": COMMAND, "description": WHY})), Say("again"))
    opencode.paste(session, "make it again")
    opencode.wait(session, ReceiptKind.TURN_ENDED, count=2, timeout=60)
    assert (folder / MADE).exists()
    assert [r.key for r in opencode.receipts(session) if r.kind is ReceiptKind.BLOCKED] == [asked.key]
