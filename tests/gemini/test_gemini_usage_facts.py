"""What one turn cost, as Gemini CLI's own session record says it, pinned against the real binary and
the Gemini API stand-in serving known usage (adapters/harnesses/gemini/usage.py reads it so)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.gemini.usage import usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, UsageUnknown
from tests.agent_tmux import AgentSession
from tests.gemini.rig import GeminiRig, gemini, gemini_api, gemini_binary, gemini_rig
from tests.gemini_standin.server import SIDE_USAGE, Busy, Call, GeminiStandIn, Say, usage_metadata
from tests.gemini_standin.server import Usage as Served
from tests.tmux_support import wait_for

__all__ = ["gemini", "gemini_api", "gemini_binary", "gemini_rig"]

pytestmark = pytest.mark.gemini

CALL = Served(input=500, output=40, cached=300, reasoning=7)  # asks for a tool: the turn's first request
ANSWER = Served(input=900, output=60, cached=800, reasoning=11)
NEXT = Served(input=2000, output=30, cached=1000)
PASTED = "Delivery: d-2 (receipt 0123)\n\nand again"  # the second prompt, pasted as the-loop pastes
TOOL = Call("run_shell_command", {"command": "true", "description": "nothing"}, usage=CALL)


def spent(model: str, *served: Served) -> TurnUsage:
    return TurnUsage(
        input=sum(s.input - s.cached for s in served),
        output=sum(s.output for s in served),
        cache_write=0,
        cache_read=sum(s.cached for s in served),
        model=model,
    )


def lines(path: Path | str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


@dataclass(frozen=True, slots=True)
class Turns:
    """One Gemini's two turns: a tool call then an answer, then a pasted prompt answered at once."""

    session: AgentSession
    conversation: str
    receipts: list[Receipt]
    hooks: list[dict[str, Any]]  # the hooks' own JSON, in the order they ran
    gemini_dir: Path
    models: list[str]  # the model each turn request named
    side_questions: int  # the requests the stand-in answered beside the turns

    def of(self, kind: ReceiptKind) -> list[Receipt]:
        return [r for r in self.receipts if r.kind is kind]

    def turn(self, number: int) -> EndedTurn:
        return EndedTurn(self.of(ReceiptKind.PROMPT)[number], self.of(ReceiptKind.TURN_ENDED)[number])

    @property
    def record(self) -> list[dict[str, Any]]:
        return lines(self.of(ReceiptKind.TURN_ENDED)[-1].transcript)

    def messages(self, kind: str) -> dict[str, dict[str, Any]]:
        """The record's messages of `kind`, each as last written."""
        return {m["id"]: m for m in self.record if m.get("type") == kind}


@pytest.fixture(scope="module")
def turns(gemini_rig: GeminiRig, gemini_api: GeminiStandIn) -> Turns:
    gemini_api.reset()
    gemini_api.script(TOOL, Say("done", usage=ANSWER))
    session, conversation = gemini_rig.fresh(gemini_rig.git_folder(), "run true")
    gemini_rig.wait(session, ReceiptKind.TURN_ENDED, timeout=90)
    gemini_api.script(Say("again", usage=NEXT))
    gemini_rig.paste(session, PASTED)
    gemini_rig.wait(session, ReceiptKind.TURN_ENDED, count=2, timeout=60)
    hooks = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(session.receipts.glob("*.receipt"))]
    return Turns(
        session,
        conversation,
        gemini_rig.receipts(session),
        hooks,
        gemini_rig.gemini_dir,
        [r.model for r in gemini_api.turns()],
        sum(r.is_side_question for r in gemini_api.log),
    )


def test_every_hook_names_the_session_record_under_gemini_home_and_the_prompt_but_no_turn(turns: Turns) -> None:
    record = Path(turns.of(ReceiptKind.READY)[0].transcript)
    assert record.parent.name == "chats" and record.parent.parent.parent == turns.gemini_dir / "tmp"
    assert record.name.startswith("session-") and record.name.endswith(f"-{turns.conversation[:8]}.jsonl")
    assert {r.transcript for r in turns.receipts} == {str(record)}
    prompts, ends = turns.of(ReceiptKind.PROMPT), turns.of(ReceiptKind.TURN_ENDED)
    assert [p.prompt for p in prompts] == [e.prompt for e in ends] == ["run true", PASTED]
    assert not any("prompt_id" in h or "turn_id" in h for h in turns.hooks)


def test_the_record_is_metadata_then_messages_each_written_again_whole_as_it_changes(turns: Turns) -> None:
    record = turns.record
    assert record[0]["sessionId"] == turns.conversation and "projectHash" in record[0]
    shapes = {"message" if "id" in line else "$set" if "$set" in line else "another" for line in record[1:]}
    assert shapes == {"message", "$set"}
    assert "messages" in record[1]["$set"]  # the session's start sets them whole
    ids = [line["id"] for line in record if "id" in line]
    assert len(ids) > len(set(ids))  # the tool call's request, again once its call was added


def test_a_prompt_is_a_user_message_of_its_hooks_text_and_a_tools_result_one_of_function_responses(
    turns: Turns,
) -> None:
    users = list(turns.messages("user").values())
    texts = ["".join(p.get("text", "") for p in m["content"]) for m in users]
    assert texts.count("run true") == 1 and texts.count(PASTED) == 1
    (result,) = [m for m in users if any("functionResponse" in p for p in m["content"])]
    assert result["content"][0]["functionResponse"]["name"] == "run_shell_command"


def test_each_model_request_is_a_gemini_message_holding_what_was_served_and_the_model(turns: Turns) -> None:
    requests = list(turns.messages("gemini").values())
    assert [m["tokens"] for m in requests] == [
        {"input": s.input, "output": s.output - s.reasoning, "cached": s.cached, "thoughts": s.reasoning}
        | {"tool": 0, "total": usage_metadata(s)["totalTokenCount"]}
        for s in (CALL, ANSWER, NEXT)
    ]
    assert [m["model"] for m in requests] == turns.models and len(set(turns.models)) == 1
    assert [bool(m.get("toolCalls")) for m in requests] == [True, False, False]


def test_the_turns_answer_is_in_the_record_before_its_after_agent_hook_runs(turns: Turns) -> None:
    answers = [m for m in turns.messages("gemini").values() if not m.get("toolCalls")]
    ends = [h for h in turns.hooks if h["hook_event_name"] == "AfterAgent"]
    assert [a["timestamp"] <= e["timestamp"] for a, e in zip(answers, ends, strict=True)] == [True, True]


def test_each_turns_usage_is_what_the_stand_in_served_for_it(turns: Turns) -> None:
    model = turns.models[0]
    assert usage(turns.turn(0)) == spent(model, CALL, ANSWER)
    assert usage(turns.turn(1)) == spent(model, NEXT)


def test_the_model_routers_request_before_each_prompt_is_in_no_record(turns: Turns) -> None:
    assert turns.side_questions == 2 and len(turns.models) == 3
    assert not [m for m in turns.messages("gemini").values() if m["tokens"]["input"] == SIDE_USAGE.input]


def test_a_record_of_a_shape_not_pinned_is_unknown_never_a_number(turns: Turns, tmp_path: Path) -> None:
    changed = tmp_path / "session.jsonl"
    renamed = [
        line | {"tokens": {("cachedContent" if k == "cached" else k): v for k, v in line["tokens"].items()}}
        if line.get("type") == "gemini"
        else line
        for line in turns.record
    ]
    changed.write_text("".join(json.dumps(line) + "\n" for line in renamed), encoding="utf-8")
    turn = turns.turn(0)
    found = usage(replace(turn, end=replace(turn.end, transcript=str(changed))))
    assert isinstance(found, UsageUnknown) and not found.pending


def test_a_turn_whose_request_after_its_tool_is_held_is_not_written_whole(
    gemini: GeminiRig, gemini_api: GeminiStandIn
) -> None:
    gemini_api.script(TOOL, Busy(60, then=Say("late", usage=ANSWER)))
    session, _ = gemini.fresh(gemini.git_folder(), "run true")
    wait_for(lambda: len(gemini_api.turns()) == 2, timeout=90, what="the request after the tool, held")
    (prompt,) = gemini.wait(session, ReceiptKind.PROMPT)
    found = usage(EndedTurn(prompt, replace(prompt, kind=ReceiptKind.TURN_ENDED)))
    assert isinstance(found, UsageUnknown) and found.pending, found
    gemini_api.release()
    (end,) = gemini.wait(session, ReceiptKind.TURN_ENDED)
    assert usage(EndedTurn(prompt, end)) == spent(gemini_api.turns()[0].model, CALL, ANSWER)
