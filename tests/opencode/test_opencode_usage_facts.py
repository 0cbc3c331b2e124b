"""What one turn cost, as opencode's own store says it, pinned against the real binary and the OpenAI
stand-in serving known usage over Chat Completions (adapters/harnesses/opencode/usage.py reads it so)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from adapters.harnesses.opencode.usage import usage
from domain.receipts import EndedTurn, Receipt, ReceiptKind
from domain.usage import TurnUsage, Usage, UsageUnknown
from tests.agent_tmux import AgentSession
from tests.openai_standin.server import Busy, Call, OpenAIStandIn, Say
from tests.openai_standin.server import Usage as Served
from tests.opencode.rig import OpencodeRig, opencode, opencode_binary, opencode_env, opencode_rig
from tests.real_agents import standin_fixture
from tests.tmux_support import wait_for

__all__ = ["openai", "opencode", "opencode_binary", "opencode_rig"]

pytestmark = pytest.mark.tmux

CALL = Served(input=500, output=40, cached=300, reasoning=7)  # asks for a tool: the turn's first request
ANSWER = Served(input=900, output=60, cached=800, reasoning=11)
NEXT = Served(input=2000, output=30, cached=1000)
TITLE = Served(input=77, output=5)  # the title opencode asks for beside a session's first prompt
MODEL = "standin-model"  # tests/opencode/rig.py's opencode.json
START_SECONDS = 120.0  # the TUI draws in 4-25 s on this shared machine

openai = standin_fixture("openai", lambda: OpenAIStandIn(side=Say("A title", usage=TITLE)))


def spent(*served: Served) -> TurnUsage:
    return TurnUsage(
        input=sum(s.input - s.cached for s in served),
        output=sum(s.output for s in served),
        cache_write=0,
        cache_read=sum(s.cached for s in served),
        model=MODEL,
    )


def of(receipts: list[Receipt], kind: ReceiptKind) -> list[Receipt]:
    return [r for r in receipts if r.kind is kind]


def rows(store: Path, query: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(store.as_uri() + "?mode=ro", uri=True)) as db:
        return db.execute(query, args).fetchall()


def answers(store: Path, prompt: str) -> list[dict[str, Any]]:
    """The assistant messages naming `prompt`, in order."""
    found = [json.loads(data) | {"id": i} for i, data in rows(store, "SELECT id, data FROM message ORDER BY id")]
    return [m for m in found if m.get("parentID") == prompt]


def read_at_once(rig: OpencodeRig, session: AgentSession, count: int) -> Usage:
    """The `count`th turn's usage, read as soon as its end's receipt is there."""
    ends = rig.wait(session, ReceiptKind.TURN_ENDED, count=count, timeout=START_SECONDS)
    return usage(EndedTurn(of(rig.receipts(session), ReceiptKind.PROMPT)[count - 1], ends[count - 1]))


@dataclass(frozen=True, slots=True)
class Turns:
    """One opencode's two turns: a tool call then an answer, then a pasted prompt answered at once."""

    session: AgentSession
    receipts: list[Receipt]
    store: Path  # what `opencode db path` prints
    served: list[bool]  # each request the stand-in answered: whether it was a side request (no tools)
    at_once: list[Usage]  # each turn read as soon as its end's receipt was there

    def turn(self, number: int) -> EndedTurn:
        return EndedTurn(
            of(self.receipts, ReceiptKind.PROMPT)[number], of(self.receipts, ReceiptKind.TURN_ENDED)[number]
        )


@pytest.fixture(scope="module")
def turns(opencode_rig: OpencodeRig, openai: OpenAIStandIn) -> Turns:
    openai.reset()
    folder = opencode_rig.git_folder()
    (folder / "notes.txt").write_text("a note\n", encoding="utf-8")
    openai.script(
        Call("read", json.dumps({"filePath": str(folder / "notes.txt")}), usage=CALL), Say("done", usage=ANSWER)
    )
    session = opencode_rig.spawn(folder, "--prompt", prompt="read the notes")
    first = read_at_once(opencode_rig, session, 1)
    openai.script(Say("again", usage=NEXT))
    opencode_rig.paste(session, "and again")
    second = read_at_once(opencode_rig, session, 2)
    wait_for(lambda: any(r.is_side for r in openai.turns()), what="the title")
    home = opencode_rig.config_dir.parent.parent
    printed = subprocess.run(
        [str(opencode_rig.binary), "db", "path"],
        env=opencode_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    store = Path(printed.stdout.strip())
    served = [r.is_side for r in openai.turns()]
    return Turns(session, opencode_rig.receipts(session), store, served, [first, second])


def test_the_prompt_and_its_turn_end_name_the_prompts_message_and_the_store_opencode_db_path_prints(
    turns: Turns,
) -> None:
    prompts, ends = of(turns.receipts, ReceiptKind.PROMPT), of(turns.receipts, ReceiptKind.TURN_ENDED)
    assert [p.turn for p in prompts] == [e.turn for e in ends] and len({p.turn for p in prompts}) == 2
    assert {r.transcript for r in [*prompts, *ends]} == {str(turns.store)}
    users = rows(turns.store, "SELECT id, session_id, data FROM message WHERE id IN (?, ?)", *[p.turn for p in prompts])
    assert {(i, s, json.loads(d)["role"]) for i, s, d in users} == {(p.turn, p.conversation, "user") for p in prompts}


def test_each_model_request_is_an_assistant_message_naming_its_prompt_with_that_requests_tokens(turns: Turns) -> None:
    first = answers(turns.store, turns.turn(0).prompt.turn)
    assert [m["tokens"] for m in first] == [
        {
            "total": s.input + s.output,
            "input": s.input - s.cached,
            "output": s.output - s.reasoning,
            "reasoning": s.reasoning,
            "cache": {"write": 0, "read": s.cached},
        }
        for s in (CALL, ANSWER)
    ]
    assert [(m["role"], m["modelID"], m["finish"]) for m in first] == [
        ("assistant", MODEL, "tool-calls"),
        ("assistant", MODEL, "stop"),
    ]
    assert all(m["time"]["completed"] >= m["time"]["created"] for m in first)
    # one request each: the message's one step holds the same tokens
    steps = rows(turns.store, "SELECT message_id, data FROM part ORDER BY id")
    for message in first:
        (step,) = [json.loads(d) for i, d in steps if i == message["id"] and json.loads(d)["type"] == "step-finish"]
        assert step["tokens"] == message["tokens"]


def test_each_turns_usage_is_what_the_stand_in_served_for_it(turns: Turns) -> None:
    assert usage(turns.turn(0)) == spent(CALL, ANSWER)
    assert usage(turns.turn(1)) == spent(NEXT)


def test_the_store_holds_the_turn_whole_when_the_plugin_writes_its_end(turns: Turns) -> None:
    assert turns.at_once == [spent(CALL, ANSWER), spent(NEXT)]


def test_the_title_opencode_asks_for_beside_the_first_prompt_is_in_no_message_so_not_counted(turns: Turns) -> None:
    assert turns.served.count(True) == 1 and len(turns.served) == 4  # the three requests of the turns, the title
    conversation = turns.turn(0).end.conversation
    found = rows(turns.store, "SELECT data FROM message WHERE session_id = ? ORDER BY id", conversation)
    tokens = [json.loads(d).get("tokens") for (d,) in found]
    assert [t["total"] for t in tokens if t] == [s.input + s.output for s in (CALL, ANSWER, NEXT)]
    ((session_input,),) = rows(turns.store, "SELECT tokens_input FROM session WHERE id = ?", conversation)
    # opencode's own total for the session leaves it out too
    assert session_input == sum(s.input - s.cached for s in (CALL, ANSWER, NEXT))


@pytest.fixture
def store_copy(turns: Turns, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "opencode.db"
    with (
        closing(sqlite3.connect(turns.store.as_uri() + "?mode=ro", uri=True)) as db,
        closing(sqlite3.connect(copy)) as target,
    ):
        db.backup(target)
    yield copy


@pytest.mark.parametrize(
    "change",
    [
        "json_remove(data, '$.tokens.cache')",
        "json_set(data, '$.tokens.input', 0)",  # kept 0 for a provider's input under its cached tokens
        "json_set(data, '$.tokens.output', 'many')",
        "json_set(data, '$.error', json_object('name', 'MessageAbortedError'))",
    ],
)
def test_a_message_of_a_shape_not_pinned_makes_its_turn_unknown(turns: Turns, store_copy: Path, change: str) -> None:
    turn = turns.turn(0)
    (first, _) = answers(turns.store, turn.prompt.turn)
    with closing(sqlite3.connect(store_copy)) as db, db:
        db.execute(f"UPDATE message SET data = {change} WHERE id = ?", (first["id"],))
    found = usage(EndedTurn(turn.prompt, dataclasses.replace(turn.end, transcript=str(store_copy))))
    assert isinstance(found, UsageUnknown) and not found.pending, found


def test_a_turn_not_written_whole_yet_is_pending_and_a_prompt_queued_meanwhile_is_read_apart(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    held, queued = Served(input=300, output=20, cached=100), Served(input=400, output=25, cached=200)
    openai.script(Busy(120, then=Say("held", usage=held)), Say("queued", usage=queued))
    session = opencode.spawn(opencode.git_folder(), "--prompt", prompt="hold the model")
    (prompt,) = opencode.wait(session, ReceiptKind.PROMPT, timeout=START_SECONDS)
    wait_for(lambda: any(not r.is_side for r in openai.turns()), timeout=START_SECONDS, what="the held request")
    running = usage(
        EndedTurn(prompt, Receipt(ReceiptKind.TURN_ENDED, "", turn=prompt.turn, transcript=prompt.transcript))
    )
    assert running == UsageUnknown("a request of its turn is not written whole yet", pending=True)
    opencode.paste(session, "queued while it works")
    opencode.wait(session, ReceiptKind.PROMPT, count=2)
    openai.release()
    opencode.wait(session, ReceiptKind.TURN_ENDED, count=2, timeout=START_SECONDS)
    receipts = opencode.receipts(session)
    prompts, ends = of(receipts, ReceiptKind.PROMPT), of(receipts, ReceiptKind.TURN_ENDED)
    # the queued prompt's message is answered by the next request, which names it
    assert [usage(EndedTurn(p, e)) for p, e in zip(prompts, ends, strict=True)] == [spent(held), spent(queued)]


def test_a_subagents_requests_are_the_messages_of_a_session_of_its_own_so_its_turn_is_unknown(
    opencode: OpencodeRig, openai: OpenAIStandIn
) -> None:
    task = {"description": "look", "prompt": "look around", "subagent_type": "general"}
    openai.script(Call("task", json.dumps(task)), Say("looked", usage=NEXT), Say("done"))
    session = opencode.spawn(opencode.git_folder(), "--prompt", prompt="run a subagent")
    (end,) = opencode.wait(session, ReceiptKind.TURN_ENDED, timeout=START_SECONDS)
    (prompt,) = opencode.wait(session, ReceiptKind.PROMPT)
    store = Path(end.transcript)
    ((child,),) = rows(store, "SELECT id FROM session WHERE parent_id = ?", end.conversation)
    messages = [json.loads(d) for (d,) in rows(store, "SELECT data FROM message WHERE session_id = ?", child)]
    (request,) = [m for m in messages if m["role"] == "assistant"]
    assert request["tokens"]["total"] == NEXT.input + NEXT.output  # the subagent's own request
    found = usage(EndedTurn(prompt, end))
    assert isinstance(found, UsageUnknown) and not found.pending, found
