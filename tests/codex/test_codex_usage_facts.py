"""What one turn cost, as Codex's own rollout says it, pinned against the real binary and the OpenAI
stand-in serving known usage (adapters/harnesses/codex/usage.py reads it so)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.codex.usage import usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, Usage, UsageUnknown
from tests.agent_tmux import AgentSession
from tests.codex.rig import CodexRig, codex, codex_binary, codex_rig
from tests.openai_standin.server import Busy, Call, OpenAIStandIn, Say
from tests.openai_standin.server import Usage as Served
from tests.real_agents import standin_fixture
from tests.tmux_support import wait_for

__all__ = ["codex", "codex_binary", "codex_rig", "openai"]

pytestmark = pytest.mark.codex

CALL = Served(input=500, output=40, cached=300, reasoning=7)  # asks for a tool: the turn's first request
ANSWER = Served(input=900, output=60, cached=800, reasoning=11)
NEXT = Served(input=2000, output=30, cached=1000)
TITLE = Served(input=77, output=5)  # the task title Codex asks for beside each prompt
MODEL = "standin-model"  # tests/codex/rig.py's config.toml

openai = standin_fixture("openai", lambda: OpenAIStandIn(side=Say("A task title", usage=TITLE)))


def spent(*served: Served) -> TurnUsage:
    return TurnUsage(
        input=sum(s.input - s.cached for s in served),
        output=sum(s.output for s in served),
        cache_write=0,
        cache_read=sum(s.cached for s in served),
        model=MODEL,
    )


@dataclass(frozen=True, slots=True)
class Turns:
    """One Codex's two turns: a tool call then an answer, then a pasted prompt answered at once."""

    session: AgentSession
    receipts: list[Receipt]
    codex_home: Path
    served: int  # the requests the stand-in answered, the titles among them

    def of(self, kind: ReceiptKind) -> list[Receipt]:
        return [r for r in self.receipts if r.kind is kind]

    def turn(self, number: int) -> EndedTurn:
        """The `number`th prompt and its turn's end (no prompt joined another's turn here)."""
        return EndedTurn(self.of(ReceiptKind.PROMPT)[number], self.of(ReceiptKind.TURN_ENDED)[number])

    @property
    def rollout(self) -> list[dict[str, Any]]:
        text = Path(self.of(ReceiptKind.TURN_ENDED)[0].transcript).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]


def read_whole(turn: EndedTurn) -> Usage:
    """The turn's usage once its rollout holds the turn's end (it may lag the Stop hook)."""
    wait_for(lambda: not isinstance(usage(turn), UsageUnknown), timeout=10, what="the turn in the rollout")
    return usage(turn)


@pytest.fixture(scope="module")
def turns(codex_rig: CodexRig, openai: OpenAIStandIn) -> Turns:
    openai.reset()
    folder = codex_rig.git_folder()
    codex_rig.trust(folder)
    openai.script(Call("shell", json.dumps({"command": ["true"]}), usage=CALL), Say("done", usage=ANSWER))
    session = codex_rig.spawn(folder, prompt="run true")
    (stop,) = codex_rig.wait(session, ReceiptKind.TURN_ENDED)
    # the turn written whole first: a prompt typed while its Stop hook still runs would join it
    read_whole(EndedTurn(codex_rig.wait(session, ReceiptKind.PROMPT)[0], stop))
    openai.script(Say("again", usage=NEXT))
    codex_rig.paste(session, "and again")
    codex_rig.wait(session, ReceiptKind.TURN_ENDED, count=2)
    wait_for(lambda: sum(r.is_side for r in openai.turns()) == 2, what="both titles")
    return Turns(session, codex_rig.receipts(session), codex_rig.codex_dir, len(openai.turns()))


def test_the_hooks_name_the_rollout_under_codex_home_and_the_prompt_and_its_stop_name_the_turn(turns: Turns) -> None:
    (ready,) = turns.of(ReceiptKind.READY)
    rollout = Path(ready.transcript)
    assert rollout.parent.parent.parent.parent == turns.codex_home / "sessions"  # sessions/YYYY/MM/DD/
    assert rollout.name.startswith("rollout-") and rollout.name.endswith(f"-{ready.conversation}.jsonl")
    prompts, stops = turns.of(ReceiptKind.PROMPT), turns.of(ReceiptKind.TURN_ENDED)
    assert {r.transcript for r in [*prompts, *stops]} == {ready.transcript}
    assert [p.turn for p in prompts] == [s.turn for s in stops] and prompts[0].turn != prompts[1].turn


def test_each_model_request_is_a_token_usage_record_naming_its_turn_and_response(turns: Turns) -> None:
    first = turns.of(ReceiptKind.TURN_ENDED)[0]
    read_whole(turns.turn(0))
    records = [e["payload"] for e in turns.rollout if e["type"] == "token_usage_record"]
    mine = [r for r in records if r["turn_id"] == first.turn]
    assert len(mine) == 2 and len({r["response_id"] for r in mine}) == 2
    assert mine[0]["usage"] == {
        "input_tokens": CALL.input,
        "cached_input_tokens": CALL.cached,
        "cache_write_input_tokens": 0,
        "output_tokens": CALL.output,
        "reasoning_output_tokens": CALL.reasoning,
        "total_tokens": CALL.input + CALL.output,
    }
    assert mine[1]["turn_token_usage"]["input_tokens"] == CALL.input + ANSWER.input  # the turn's so far
    counts = [e["payload"] for e in turns.rollout if e["type"] == "event_msg" and e["payload"]["type"] == "token_count"]
    assert counts and all("turn_id" not in c for c in counts)  # the other record names no turn


def test_the_turn_ends_in_the_rollout_with_task_complete_naming_it_and_its_context_names_the_model(
    turns: Turns,
) -> None:
    first = turns.of(ReceiptKind.TURN_ENDED)[0]
    read_whole(turns.turn(0))
    mine = [e for e in turns.rollout if e.get("payload", {}).get("turn_id") == first.turn]
    assert mine[-1]["type"] == "event_msg" and mine[-1]["payload"]["type"] == "task_complete"
    (context,) = [e["payload"] for e in mine if e["type"] == "turn_context"]
    assert context["model"] == MODEL


def test_each_turns_usage_is_what_the_stand_in_served_for_it(turns: Turns) -> None:
    assert read_whole(turns.turn(0)) == spent(CALL, ANSWER)
    assert read_whole(turns.turn(1)) == spent(NEXT)


def test_the_task_titles_codex_asks_for_beside_the_turns_are_in_no_record(turns: Turns) -> None:
    for number in (0, 1):
        read_whole(turns.turn(number))
    assert turns.served == 5  # three of the turns', two titles
    records = [e["payload"]["usage"] for e in turns.rollout if e["type"] == "token_usage_record"]
    assert len(records) == 3 and all(r["input_tokens"] != TITLE.input for r in records)


def test_a_prompt_typed_while_codex_works_joins_the_running_turn(codex: CodexRig, openai: OpenAIStandIn) -> None:
    folder = codex.git_folder()
    codex.trust(folder)
    openai.script(Busy(60, then=Say("held")))
    session = codex.spawn(folder, prompt="hold the model")
    wait_for(lambda: any(not r.is_side for r in openai.turns()), what="the held request")
    codex.paste(session, "typed while it works")
    running, typed = codex.wait(session, ReceiptKind.PROMPT, count=2)
    openai.release()
    (end,) = codex.wait(session, ReceiptKind.TURN_ENDED)
    assert typed.turn == running.turn == end.turn  # its hook names the running turn, whose Stop ends both
    read_whole(EndedTurn(running, end))
    rollout = [json.loads(line) for line in Path(end.transcript).read_text(encoding="utf-8").splitlines()]
    said = [
        e["payload"]
        for e in rollout
        if e["type"] == "response_item" and e["payload"].get("role") == "user"
        and any(c.get("text") == "typed while it works" for c in e["payload"].get("content", []))
    ]  # fmt: skip
    assert [p["internal_chat_message_metadata_passthrough"]["turn_id"] for p in said] == [running.turn]


def test_a_prompt_typed_while_codex_runs_its_stop_hook_joins_the_ending_turn_which_stops_again(
    codex: CodexRig, openai: OpenAIStandIn
) -> None:
    folder = codex.git_folder()
    codex.trust(folder)
    openai.script(Say("done", usage=ANSWER), Say("and the typed one", usage=NEXT))
    session = codex.spawn(folder, prompt="answer once", stop_lingers=3)
    codex.wait(session, ReceiptKind.TURN_ENDED)  # its receipt written, the hook still running
    codex.paste(session, "typed while its Stop hook runs")
    started, typed = codex.wait(session, ReceiptKind.PROMPT, count=2)
    first, second = codex.wait(session, ReceiptKind.TURN_ENDED, count=2)
    assert typed.turn == started.turn == first.turn == second.turn  # the ended turn went on, and ended again
    assert typed.key > first.key  # its hook fired after the turn's first Stop
    assert read_whole(EndedTurn(started, first)) == spent(ANSWER, NEXT)  # read at the first Stop, once whole
    rollout = [json.loads(line) for line in Path(second.transcript).read_text(encoding="utf-8").splitlines()]
    mine = [e for e in rollout if e.get("payload", {}).get("turn_id") == started.turn]
    ends = [n for n, e in enumerate(mine) if e["type"] == "event_msg" and e["payload"]["type"] == "task_complete"]
    records = [n for n, e in enumerate(mine) if e["type"] == "token_usage_record"]
    assert len(ends) == 1 and len(records) == 2 and ends[0] > records[-1]  # written once, after both requests
